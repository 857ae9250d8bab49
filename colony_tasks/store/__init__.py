"""The colony store: the one place that runs SQL.

Data model
----------
A **lane** is a (repository, branch) pair; the repository is identified by the real path of its
git *common* dir so linked worktrees share it. A **session** is one agent run (Claude Code,
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
``work_deps`` between them; ``work_waiters`` lists sessions that asked for work when none was
ready, so they are told directly when some is.
``dep_files``, ``dep_edges`` and ``dep_repos`` hold each indexed work tree's file dependency
graph and public surfaces, kept by the indexer to relay **interface changes**: an
``interface`` observation, addressed (``recipients``) to the sessions whose files import the
changed module.

Every text is redacted in the write path (:mod:`colony_tasks.redact`) before it is stored.
Times are Unix seconds (REAL). Connections are in autocommit mode; multi-statement writes run
in ``BEGIN IMMEDIATE`` via :meth:`Store.transaction`. Standard library only: hooks import this.

Team mode runs the same mixins on PostgreSQL (:mod:`.pg`, migrations in :mod:`.pg_schema`):
:func:`open_store` picks the backend from the address, :func:`open_default` from the
configuration (:mod:`colony_tasks.backend`). Sessions then also record ``developer`` and
``machine``, and lanes are keyed by the repository's normalised remote URL.
"""

from __future__ import annotations

from .. import backend, paths
from ..errors import Misconfigured
from .base import StoreBase
from .claims import ClaimsMixin
from .delivery import DeliveryMixin
from .observations import ObservationsMixin
from .sessions import SessionsMixin
from .tasks import TasksMixin
from .work import WorkMixin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .depgraph import DepGraphMixin
    from .maintenance import MaintenanceMixin
    from .overview import OverviewMixin
    from .vectors import VectorsMixin

    class _OnFirstUse(VectorsMixin, MaintenanceMixin, OverviewMixin, DepGraphMixin):
        pass

else:

    class _OnFirstUse(StoreBase):
        """The mixins a hook never touches (embeddings, the viewer's and doctor's bulk reads,
        the dependency graph), loaded the first time one of their attributes is asked
        for: importing them costs every hook process ~2 M instructions. On that first miss they
        become this class's bases, so the whole store (and :class:`.pg.PgStore`) then resolves
        them as ordinary inherited methods. The type checker sees them as plain bases."""

        def __getattr__(self, name: str):
            if _OnFirstUse.__bases__ == (StoreBase,):
                from .depgraph import DepGraphMixin
                from .maintenance import MaintenanceMixin
                from .overview import OverviewMixin
                from .vectors import VectorsMixin

                _OnFirstUse.__bases__ = (
                    VectorsMixin,
                    MaintenanceMixin,
                    OverviewMixin,
                    DepGraphMixin,
                )
                return getattr(self, name)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class Store(
    SessionsMixin,
    TasksMixin,
    ObservationsMixin,
    ClaimsMixin,
    DeliveryMixin,
    WorkMixin,
    _OnFirstUse,
):
    """The SQLite store; see the module docstring for the data model.

    One mixin per file, each named for the tables it holds: ``sessions`` (lanes, sessions),
    ``tasks`` (tasks, participants, cursors), ``observations`` (everything recorded, its FTS
    index and paths), ``claims``, ``delivery`` (recipients), ``vectors`` (embeddings),
    ``work`` (plans: work items, dependencies, waiters), ``maintenance`` and ``overview``
    (the viewer's and doctor's bulk reads), ``depgraph`` (the dependency graph of indexed work
    trees, written and read by the indexer only).
    """


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
            from ..environment import missing_driver

            raise Misconfigured(missing_driver()) from None
        return PgStore(address, **kwargs)
    return Store(address, **kwargs)


def open_default(**kwargs) -> Store:
    """Open (creating if needed) this user's store: the team store when one is configured
    (:mod:`colony_tasks.backend`), else the SQLite file under ``COLONY_TASKS_HOME``."""
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
