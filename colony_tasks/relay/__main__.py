"""``python -m colony_tasks.relay``: run this user's relay for the configured store (hooks
start it on demand; see :mod:`colony_tasks.relay.server`)."""

from .server import main

raise SystemExit(main())
