"""The domain: the concepts of the task thread, each with its rules. Standard library only.

Sessions and tasks, thread messages and posts, chains, claims, handoffs, plans (work items),
delivery (what a session has not seen), wake, who may act as whom (identity, authority),
presence, and which files a shell command changed. Each module owns its rule and its
transactions; it builds on the store and the base, never on a use case or a front end.
"""
