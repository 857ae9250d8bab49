"""The ``colony-tasks`` command line (click). Human-facing; never on the hook path.

Each module below registers its commands on the group defined in :mod:`.app`.
"""

from . import (  # noqa: F401
    chain_cmds,
    core_cmds,
    doctor_cmd,
    index_cmd,
    install_cmds,
    mcp_cmd,
    plan_cmds,
    search_cmds,
    team_cmds,
    thread_cmds,
    viewer_cmd,
)
from .app import cli

__all__ = ["cli"]
