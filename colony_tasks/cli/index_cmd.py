"""``colony-tasks index``: build or update the dependency graph and relay interface changes."""

from __future__ import annotations

import os
import sys

import click

from ..base import lanes
from ..store import Store
from .app import cli
from .output import CONTEXT_SETTINGS, emit, json_option, with_store


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.option(
    "--repo",
    "repo",
    type=click.Path(exists=True, file_okay=False),
    help="A folder of the repository to index. Default: every git work tree with a live "
    "session (or the current folder's, when none is live).",
)
@click.option("--full", is_flag=True, help="Re-read every file whose size or time changed.")
@json_option
@with_store
def index(store: Store, repo: str | None, full: bool, as_json: bool) -> None:
    """Build or update the dependency graph; relay interface changes to importers' sessions.

    The MCP server does this in the background while agents run; this command does one pass
    now. The first pass over a work tree builds its graph; later passes apply the edits agents
    recorded since, and each change to a module's public surface is sent to the other live
    sessions working on files that import it.
    """
    from ..depgraph import (
        interface_changes as interfaces,  # loads the tree-sitter parsers: only for this command
    )

    if repo is not None:
        roots = [lanes.resolve(os.path.abspath(repo)).root]
    else:
        roots = interfaces.live_roots(store) or [lanes.resolve(os.getcwd()).root]
    results = []
    with click.progressbar(
        roots,
        label="Indexing",
        item_show_func=lambda r: r and os.path.basename(r),
        file=sys.stderr,  # stdout is for the result (--json)
    ) as bar:
        for root in bar:
            results.append(interfaces.index_repo(store, root, full=full).to_dict())

    def render() -> str:
        lines = []
        for r in results:
            what = "built" if r["built"] else f"applied {r['edits']} edits"
            skipped = ", ".join(f"{k} {v}" for k, v in r["skipped"].items()) or "none"
            lines.append(
                f"{r['repo']}: {what}; {r['files']} files indexed, "
                f"{len(r['notices'])} interface changes relayed, skipped: {skipped} "
                f"({r['seconds']:.2f} s)"
            )
        return "\n".join(lines)

    emit(as_json, results, render)
