"""Team mode's hook path: hooks never talk to PostgreSQL themselves.

A hook process (new per agent event, ~27 ms budget) cannot afford a database driver's import
(pg8000 ~80 ms) or a connection handshake. In team mode it instead

1. appends the event to a durable local **outbox** (an SQLite file under the data folder:
   :mod:`.outbox`) — before any delivery attempt, so nothing is lost whatever happens next;
2. asks the local **relay** (:mod:`.daemon`, one long-lived process per user and store, started
   on demand) over a unix socket to apply the outbox up to that event and reply with the
   rendered result (:mod:`.client`, standard library only);
3. fails open: when the relay cannot answer within its wait, the hook exits 0 with no output
   and the relay delivers the event later.

The relay holds the PostgreSQL connection and runs the same core use cases
(:mod:`colony_tasks.events` through :mod:`colony_tasks.hooks.handlers`). It applies outbox
events strictly in order, each in one transaction together with its idempotency key
(``applied_events``), so an event is applied exactly once even when the relay is killed
between committing and marking it done.
"""
