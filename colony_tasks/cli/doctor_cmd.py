"""``colony-tasks doctor``: health checks and safe repairs."""

from __future__ import annotations

import click

from ..base import backend, paths
from ..relay import status as relay_status
from .app import cli
from .output import CONTEXT_SETTINGS, emit, json_option


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.option("--fix", is_flag=True, help="Apply the safe repairs (never deletes observations).")
@json_option
def doctor(fix: bool, as_json: bool) -> None:
    """Check the store and the hook log; exit 1 when something needs attention."""
    # Deferred for weight, not for a cycle: the checks import the installers (tomlkit), which
    # every other command, a search included, would otherwise pay for at start-up.
    from ..install import doctor as doctor_mod

    url = backend.store_url()
    if url:
        store, failure = doctor_mod.open_team_for_doctor(url)
    else:
        store, failure = doctor_mod.open_for_doctor(paths.db_path())
    if store is None:
        assert failure is not None
        emit(
            as_json,
            {"ok": False, "checks": [failure], "repairs": []},
            lambda: f"✗ {failure['check']}: {failure['detail']}",
        )
        raise SystemExit(1)
    try:
        repairs = doctor_mod.repair(store) if fix else []
        checks = doctor_mod.diagnose(store)
        checks.extend(relay_status.checks(url))
    finally:
        store.close()
    ok = all(c["ok"] for c in checks)

    def render() -> str:
        lines = []
        for c in checks:
            lines.append(f"{'✓' if c['ok'] else '✗'} {c['check']}: {c['detail']}")
            lines.extend(f"  note: {note}" for note in c.get("notes", []))
        lines.extend(f"fixed: {r}" for r in repairs)
        damaged = any(c["check"] == "integrity" and not c["ok"] for c in checks)
        if not ok and not fix and not damaged and any(c["fixable"] for c in checks):
            lines.append("Run `colony-tasks doctor --fix` to apply the safe repairs.")
        return "\n".join(lines)

    emit(as_json, {"ok": ok, "checks": checks, "repairs": repairs}, render)
    if not ok:
        raise SystemExit(1)
