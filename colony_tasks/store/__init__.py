"""The colony store: the one place that runs SQL.

Data model
----------
A **lane** is a (repository, branch) pair; the repository is identified by its normalised
``origin`` URL, else the real path of its git *common* dir, so clones and linked worktrees
share it (:mod:`colony_tasks.base.lanes`). A **session** is one agent run (Claude Code,
Codex, or a human at the CLI), keyed by the agent's own session id, with a short unique
``handle`` for addressing and the agent process id its hooks run under. A **task** is a shared
objective with a thread; every lane has at most one open *lane task* (a partial unique index
enforces it), and tasks can also be created without a lane. **Participants** join sessions to
tasks and carry each session's delivery ``cursor``: the highest observation id of that task it has
been given.

Everything recorded is an **observation**: prompts, edits, commands, tool uses, lifecycle events
and thread messages (``note``, ``question``, ``answer``, ``handoff``, ``accept``, ``decision``,
``blocker``, ``claim``, ``release``). Messages carry an addressee (``to_target``), a reply link,
an urgency flag and a ``status`` for items that wait on someone (a pending question or handoff,
an open blocker). ``observation_paths`` lists the repo-relative paths an observation touched.
``observations_fts`` is an FTS5 index over the original (redacted) text, kept in sync by
triggers. ``recipients`` records, per addressed session, whether a directed message has been
delivered into its context. ``claims`` are advisory holds on repo-relative paths or globs with
an expiry. ``vectors`` hold embeddings (float32 blobs with model id, dimension and a hash of
the text); ``embed_leases`` keep concurrent backfills from embedding one row twice.
A task's **plan** is its ``work_items`` (title, owned files, state, owner, result) with
``work_deps`` between them; ``regions`` hold, per session and file, what the session changed
as ranges of base lines (the collision forecast's data); ``work_waiters`` lists sessions that asked for work when none was
ready, so they are told directly when some is.
``dep_files``, ``dep_edges`` and ``dep_repos`` hold each indexed work tree's file dependency
graph and public surfaces, kept by the indexer to relay **interface changes**: an
``interface`` observation, addressed (``recipients``) to the sessions whose files import the
changed module.

Every text is redacted in the write path (:mod:`colony_tasks.base.redact`) before it is stored.
Times are Unix seconds (REAL). Connections are in autocommit mode; multi-statement writes run
in ``BEGIN IMMEDIATE`` via :meth:`Store.transaction`. Standard library only: hooks import this.

Team mode runs the same mixins and facets on PostgreSQL (:mod:`.pg`, migrations in
:mod:`.pg_schema`): :func:`open_store` picks the backend from the address, :func:`open_default`
from the configuration (:mod:`colony_tasks.base.backend`). Sessions then also record ``developer``
and ``machine``.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from ..base import backend, paths
from ..base.errors import Misconfigured
from .base import StoreBase
from .claims import ClaimsMixin
from .delivery import DeliveryMixin
from .observations import ObservationsMixin
from .regions import RegionsMixin
from .sessions import SessionsMixin
from .tasks import TasksMixin
from .work import WorkMixin

if TYPE_CHECKING:
    from .depgraph import Graph
    from .maintenance import Admin
    from .overview import Overview
    from .vectors import Vectors


class Store(
    SessionsMixin,
    TasksMixin,
    ObservationsMixin,
    ClaimsMixin,
    RegionsMixin,
    DeliveryMixin,
    WorkMixin,
    StoreBase,
):
    """The SQLite store; see the module docstring for the data model.

    One mixin per file, each named for the tables it holds: ``sessions`` (lanes, sessions),
    ``tasks`` (tasks, participants, cursors), ``observations`` (everything recorded, its FTS
    index and paths), ``claims``, ``delivery`` (recipients), ``work`` (plans: work items,
    dependencies, waiters).

    The parts no hook uses are facets, each a small object made on first use by a cached
    property below: :attr:`vectors` (embeddings), :attr:`admin` (the doctor's checks and
    repairs), :attr:`overview` (the viewer's batched reads), :attr:`graph` (the dependency
    graph of indexed work trees). Each property imports its module when first read: a
    deliberate lazy import, so that a process that never reaches for them (a hook, a relay
    serving hooks) does not load them; there is no import cycle to dodge.
    """

    def data_version(self) -> int | None:
        """A number that changes when another connection commits to the database (SQLite's
        ``PRAGMA data_version``: read from shared memory, no disk access); None where the
        backend has none (the relay then asks the store at a fixed interval)."""
        row = self._one("PRAGMA data_version")
        return int(row[0]) if row else None

    @cached_property
    def vectors(self) -> Vectors:
        """Embeddings and the backfill's leases (:mod:`.vectors`; imported on first use)."""
        from .vectors import Vectors

        return Vectors(self)

    @cached_property
    def admin(self) -> Admin:
        """Health checks and safe repairs (:mod:`.maintenance`; imported on first use)."""
        from .maintenance import Admin

        return Admin(self)

    @cached_property
    def overview(self) -> Overview:
        """Batched reads across tasks for the viewer (:mod:`.overview`; imported on first
        use)."""
        from .overview import Overview

        return Overview(self)

    @cached_property
    def graph(self) -> Graph:
        """The dependency graph of indexed work trees (:mod:`.depgraph`; imported on first
        use)."""
        from .depgraph import Graph

        return Graph(self)


def open_store(address: str, **kwargs) -> Store:
    """The store at ``address``: a SQLite file path, or a ``postgresql://`` URL (team mode)."""
    backend.check_url(address)
    if address.startswith(("postgresql://", "postgres://")):
        # Imported here, not at the top: the driver must never load in a hook process.
        try:
            from .pg import PgStore
        except ModuleNotFoundError as error:
            if (error.name or "").split(".")[0] != "pg8000":
                raise
            from ..base.environment import missing_driver

            raise Misconfigured(missing_driver()) from None
        return PgStore(address, **kwargs)
    return Store(address, **kwargs)


def open_default(**kwargs) -> Store:
    """Open (creating if needed) this user's store: the team store when one is configured
    (:mod:`colony_tasks.base.backend`), else the SQLite file under ``COLONY_TASKS_HOME``."""
    url = backend.store_url()
    if url:
        return open_store(url, **kwargs)
    return open_local(**kwargs)


def open_local(**kwargs) -> Store:
    """This user's SQLite store under ``COLONY_TASKS_HOME`` (created if needed), for a caller
    that has already found no team store configured (a hook, which asks once)."""
    paths.ensure_home()
    return Store(paths.db_path(), **kwargs)


__all__ = ["Store", "open_default", "open_local", "open_store"]
