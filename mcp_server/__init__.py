"""The colony-tasks MCP server: intent-named tools over the ``colony_tasks`` core, on stdio.

``colony-tasks mcp`` runs it (see :func:`mcp_server.server.serve`). The tools only translate
arguments and results; every rule lives in the core.
"""
