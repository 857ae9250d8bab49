"""Team mode's hook side: hooks never talk to PostgreSQL themselves.

A hook process (new per agent event) cannot afford a database driver's import (pg8000 ~80 ms)
or a connection handshake. In team mode it instead

1. appends the event's plain values to a durable local **outbox** (an SQLite file under the
   data folder: :mod:`.outbox`) — before any delivery attempt, so nothing is lost whatever
   happens next;
2. asks this user's **relay** for the team store (:mod:`colony_tasks.relay.team`, the same
   resident process that serves SQLite mode) over its unix socket to apply the outbox up to
   that event and reply with the result (:mod:`.client`, standard library only);
3. fails open: when the relay cannot answer within its wait, the hook exits 0 with no output
   and the relay delivers the event later.

The relay applies outbox events strictly in order, each in one transaction together with its
idempotency key, so an event is applied exactly once even when the relay is killed between
committing and marking it done. :mod:`.status` reports the outbox and relay for ``doctor``.
"""
