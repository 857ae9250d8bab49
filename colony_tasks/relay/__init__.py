"""The relay: one resident process per user and store that applies every hook's event.

A hook is a small client (:mod:`colony_tasks.hooks`): it turns the agent's payload into plain
event values and sends them here over a unix socket (:mod:`.wire`). The relay holds the store
(the SQLite file, or the team's PostgreSQL database), has the core imported once, applies the
event through :mod:`colony_tasks.usecases.events` (:mod:`.apply`) and answers with what the
agent should see (:mod:`.server`). When no relay answers in time, the hook applies the event
itself with the same :mod:`.apply` (or, in team mode, leaves it spooled), so a relay is never
required.

In team mode a hook never talks to PostgreSQL itself (a driver's import costs ~80 ms, a
handshake more). It appends the event's plain values to a durable local **outbox** (an SQLite
file under the data folder: :mod:`.outbox`) before any delivery attempt, then asks the team
relay (:mod:`.team`) to apply the outbox up to that event and reply
(:mod:`colony_tasks.hooks.spool`); when the relay cannot answer in time the hook exits 0 and
the relay delivers the event later. The relay applies outbox events strictly in order, each in
one transaction together with its idempotency key, so an event is applied exactly once even
when the relay is killed between committing and marking it done. :mod:`.status` reports the
outbox and relay for ``doctor``.

This package sits below the hook front end: it never imports :mod:`colony_tasks.hooks`.
"""
