"""Commands over search: search (keyword, semantic, hybrid) and embed (backfill)."""

from __future__ import annotations

import click

from .. import search as search_mod
from ..base import backend
from ..base.text import ago, one_line
from ..relay import wire
from ..search.embeddings import BACKENDS
from ..search.hits import Hit
from ..store import Store, open_default
from ..usecases import actions
from .app import cli
from .output import CONTEXT_SETTINGS, emit, json_option, with_store


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.argument("query")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000))
@click.option("--task", "task_id", type=int, help="Only this task.")
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (repeatable).")
@click.option(
    "--semantic/--no-semantic",
    default=None,
    help="Force hybrid (keywords + embeddings) or keywords only. Default: hybrid when "
    "vectors exist.",
)
@json_option
def search(
    query: str,
    limit: int,
    task_id: int | None,
    kinds: tuple[str, ...],
    semantic: bool | None,
    as_json: bool,
) -> None:
    """Search everything agents did and said.

    Answered by the relay's warm index when one runs (one is started for the next search
    otherwise), so a search does not load the model and every vector each time."""
    url = backend.store_url()
    options = {"query": query, "limit": limit, "task_id": task_id, "kinds": list(kinds)}
    found = wire.search(wire.relay_key(url), options | {"semantic": semantic})
    if found is not None:
        hits = [Hit(**hit) for hit in found["hits"]]
        unavailable = found.get("unavailable")
    else:
        store = open_default()
        try:
            searcher = search_mod.Searcher(store)
            hits = actions.search(
                searcher,
                query,
                limit=limit,
                task_id=task_id,
                kinds=list(kinds) or None,
                semantic=semantic,
            )
            unavailable = searcher.unavailable
        finally:
            store.close()
    if unavailable:
        click.echo(unavailable, err=True)

    def render() -> str:
        if not hits:
            return f"No matches for {query!r}."
        return "\n".join(
            f"#{h.id} {h.kind} {one_line(h.author) or '?'} task {h.task_id or '-'}"
            f" {ago(h.created_at)}: {one_line(h.snippet)}"
            for h in hits
        )

    emit(as_json, hits, render)


@cli.command(context_settings=CONTEXT_SETTINGS)
@click.option(
    "--model",
    type=click.Choice([b for b in BACKENDS if b != "none"]),
    default=None,
    help="Embedding backend (default: the search.embedder setting, minilm).",
)
@click.option("--batch", default=256, show_default=True, type=click.IntRange(1, 10_000))
@json_option
@with_store
def embed(store: Store, model: str | None, batch: int, as_json: bool) -> None:
    """Embed every observation that has no vector for the model yet."""
    from ..search import semantic as semantic_mod  # heavy (numpy, model): only for this command

    embedder = semantic_mod.configured_embedder(model)
    if embedder is None:
        raise click.ClickException("The embedder is set to none; pass --model static.")
    missing = store.vectors.count_unembedded(embedder.model_id)
    with click.progressbar(
        length=missing,
        label=f"Embedding with {embedder.model_id}",
        file=click.get_text_stream("stderr"),  # type: ignore[operator]  # click stub overloads
    ) as bar:
        done = semantic_mod.backfill(store, embedder, batch=batch, progress=bar.update)
    data = {
        "model": embedder.model_id,
        "embedded": done,
        "vectors": store.vectors.counts().get(embedder.model_id, 0),
    }
    emit(
        as_json,
        data,
        lambda: (
            f"Embedded {done} observations with {embedder.model_id}; "
            f"{data['vectors']} vectors in total."
        ),
    )
