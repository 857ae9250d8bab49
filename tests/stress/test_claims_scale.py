"""Claims at the sizes of issue 23: a session holding tens of thousands of claims ends within
one statement, claim_file does not scan every claim per path, and the per-path candidate index
finds every kind of claim that covers a path."""

from __future__ import annotations

from pathlib import Path

import pytest

from colony_tasks.domain import claims, sessions
from colony_tasks.store import Store
from tests.support.helpers import fill, join


def live(store: Store, sid: str) -> int:
    return store.conn.execute(
        "SELECT COUNT(*) FROM claims WHERE session_id = ? AND released_at IS NULL", (sid,)
    ).fetchone()[0]


def test_ending_a_session_holding_40k_claims_releases_them_all(tmp_path: Path, repo: Path):
    store = Store(tmp_path / "c.db")
    join(store, "a", "claude", repo)
    fill(store, "a", 40_000)
    assert sessions.end_session(store, store.get_session("a"))["released"] == 40_000
    assert live(store, "a") == 0


@pytest.mark.stress
def test_the_session_end_hook_releases_80k_claims(home: Path, repo: Path):
    from tests.support.hookrun import claude, run_hook

    assert (
        run_hook(
            "session-start", claude("session-start", "s80", repo, source="startup"), home
        ).returncode
        == 0
    )
    store = Store(home / "colony.db")
    fill(store, "s80", 80_000)
    store.close()
    result = run_hook("session-end", claude("session-end", "s80", repo, reason="exit"), home)
    assert result.returncode == 0, result.stderr
    store = Store(home / "colony.db")
    assert live(store, "s80") == 0


def test_every_kind_of_covering_claim_is_found_through_the_index(tmp_path: Path, repo: Path):
    store = Store(tmp_path / "c.db")
    join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    held = ["src/api/", "src/api/*.py", "*.py", "src/**/h.py", "docs/[xy].md", "src/a?i/h.py"]
    claims.claim(store, store.get_session("a"), held, announce=False)
    claims.claim(
        store, store.get_session("a"), ["src/other/x.txt", "lib/*.txt", "*.md"], announce=False
    )
    found = claims.conflicts(
        store, store.get_session("b"), ["src/api/h.py", "docs/x.md", "lib/z.txt", "x/y.rs"]
    )
    by_path = {c.path: sorted(h.pattern for h in c.claims) for c in found}
    assert by_path == {
        "src/api/h.py": sorted(["src/api", "src/api/*.py", "*.py", "src/**/h.py", "src/a?i/h.py"]),
        "docs/x.md": sorted(["docs/[xy].md", "*.md"]),
        "lib/z.txt": ["lib/*.txt"],
    }


def claim_work(tmp_path: Path, repo: Path, n: int) -> int:
    """SQLite virtual-machine steps (in thousands) of claiming 200 paths while the claimer holds
    ``n`` claims: a count, not a time, so the comparison does not depend on the machine's load."""
    store = Store(tmp_path / f"w{n}.db")
    join(store, "a", "claude", repo)
    join(store, "b", "codex", repo)
    fill(store, "b", n)  # the claimer's own claims: each path is looked up among them
    paths = [f"src/n{i}/g.py" for i in range(200)]
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    store.conn.set_progress_handler(tick, 1000)
    claims.claim(store, store.get_session("b"), paths, announce=False)
    store.conn.set_progress_handler(None, 0)
    store.close()
    return steps[0]


@pytest.mark.stress
def test_claim_file_at_100k_claims_does_about_the_work_it_does_at_10k(tmp_path: Path, repo: Path):
    small, large = claim_work(tmp_path, repo, 10_000), claim_work(tmp_path, repo, 100_000)
    assert large < 2 * small + 50  # a scan of the claims per path would be ~10x
