"""``colony-tasks conflicts``: whose work overlaps whose, per repository, across branches,
before anyone merges (:mod:`colony_tasks.domain.conflict_map`)."""

from __future__ import annotations

import click

from ..base.text import one_line
from ..domain import conflict_map
from ..domain.conflict_map import Pair, RepoMap, Side
from ..render.conflicts import spans_text
from ..render.lines import named
from ..store import Store
from .app import cli
from .output import CONTEXT_SETTINGS, emit, json_option, with_store


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.option("--repo", default=None, help="Only this repository (its name or id).")
@json_option
@with_store
def conflicts(store: Store, repo: str | None, as_json: bool) -> None:
    """Whose live changes will conflict at merge, per repository, on any branch.

    Each overlap names the file and each side's session, branch, worktree and lines; files
    two sessions changed without meeting are listed as "same file, no overlap"."""
    found = conflict_map.repositories(store, repo)
    emit(as_json, found, lambda: render(found))


def render(found: list[RepoMap]) -> str:
    if not found:
        return "No two live sessions changed the same file: nothing to merge together yet."
    out: list[str] = []
    for repo in found:
        apart = len(repo.pairs) - repo.overlapping
        out.append(
            f"{one_line(repo.repo_name)}: {repo.overlapping} overlapping,"
            f" {apart} same file with no overlap"
        )
        for pair in repo.pairs:
            out.extend(_pair(pair))
        if repo.more:
            out.append(f"  … and {repo.more} more pairs not weighed.")
    return "\n".join(out)


def _pair(pair: Pair) -> list[str]:
    verdict = "overlap: git will conflict" if pair.meets else "same file, no overlap"
    lines = [f"  {one_line(pair.path)}  {verdict}"]
    show_who = pair.sides[0].who != pair.sides[1].who
    labels = [_label(side, show_who) for side in pair.sides]
    width = max(len(label) for label in labels)
    for label, side in zip(labels, pair.sides, strict=True):
        where = f"  [{one_line(side.root)}]" if side.root else ""
        lines.append(f"    {label.ljust(width)}  {spans_text(side.spans)}{where}")
    return lines


def _label(side: Side, show_who: bool) -> str:
    name = named(one_line(side.handle), side.who if show_who else "")
    return f"{name} on {one_line(side.branch)}" if side.branch else name
