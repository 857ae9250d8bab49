"""The colony-tasks MCP server: intent-named tools over the ``colony_tasks`` core, on stdio.

``colony-tasks mcp`` runs it (see :func:`colony_tasks.mcp_server.server.serve`). It is a front
end like the CLI and the viewer: the tools only translate arguments and results; every rule
lives in the core.
"""
