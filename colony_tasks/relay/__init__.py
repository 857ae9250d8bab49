"""The relay: one resident process per user and store that applies every hook's event.

A hook is a small client (:mod:`colony_tasks.hooks`): it turns the agent's payload into plain
event values and sends them here over a unix socket (:mod:`.wire`). The relay holds the store
(the SQLite file, or the team's PostgreSQL database), has the core imported once, applies the
event through :mod:`colony_tasks.events` (:mod:`.apply`) and answers with what the agent should
see (:mod:`.server`). When no relay answers in time, the hook applies the event itself with the
same :mod:`.apply` (or, in team mode, leaves it spooled), so a relay is never required.

This package sits below the hook front end: it never imports :mod:`colony_tasks.hooks`.
"""
