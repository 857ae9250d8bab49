"""The colony-tasks MCP server: intent-named tools over the ``colony_tasks`` core, on stdio.

``colony-tasks mcp`` runs it (see :func:`colony_tasks.mcp_server.server.serve`). It installs
as ``colony_tasks.mcp_server``; the repository keeps it at the top level. The tools only translate
arguments and results; every rule lives in the core.
"""
