"""The use cases: one function per agent event (:mod:`.events`) and per action a session or
a human takes (:mod:`.actions`, :mod:`.commit_guard`). Every front end calls these; none
reimplements a rule. Standard library only.
"""
