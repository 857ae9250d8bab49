"""The base: leaves every other layer builds on. Standard library only.

Where files live (:mod:`.paths`), the named errors (:mod:`.errors`), the typed vocabularies
(:mod:`.kinds`), the plain records (:mod:`.models`), the agents' events (:mod:`.agent_events`),
redaction (:mod:`.redact` with its rules), claim globs (:mod:`.globs`), the agent process
(:mod:`.procs`), settings, the store backend's address, session keys, lanes, text formatting and
how a SQLite file is opened. Nothing here imports another layer of colony_tasks.
"""
