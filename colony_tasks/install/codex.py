"""Codex CLI: hooks.json and the ``[mcp_servers.colony-tasks]`` table of config.toml.

Codex hook commands are shell strings, so the executable path is quoted with ``shlex.quote``
and timeouts are whole seconds. The MCP server always goes into the user's
``$CODEX_HOME/config.toml`` (Codex reads project config only for trusted projects).

config.toml is edited as text where possible and checked with tomlkit: install appends one
blank line and our table at the end; uninstall cuts exactly that table again, so the user's
comments and layout come back byte for byte. When the file has an unusual layout (an inline
``mcp_servers = {...}`` table, dotted keys) tomlkit edits the document structurally instead.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import InlineTable, Table

from . import hookblock
from .files import InstallError
from .locate import codex_home

SERVER_NAME = "colony-tasks"
#: What Codex must pass our MCP server from its environment (it passes stdio servers only a
#: safe subset): the store's folder, so the server opens the same store as the hooks.
FORWARDED_ENV = ("COLONY_TASKS_HOME",)
_OUR_HEADER = re.compile(
    r"""^\s*\[\s*mcp_servers\s*\.\s*(?:colony-tasks|"colony-tasks"|'colony-tasks')\s*[\].]"""
)
_ANY_HEADER = re.compile(r"^\s*\[")


def handler(command: str, slug: str, timeout: int) -> dict[str, Any]:
    """One command handler: ``'<command>' hook <slug> --agent codex`` as a shell string."""
    return {
        "type": "command",
        "command": f"{shlex.quote(command)} hook {slug} --agent codex",
        "timeout": timeout,
    }


def hooks_block(command: str) -> hookblock.Block:
    """Event → our matcher group, for every event colony-tasks listens to."""
    return {
        event.name: hookblock.group(
            event.codex_matcher, handler(command, event.slug, event.timeout)
        )
        for event in hookblock.events_for("codex")
    }


def hooks_path(scope: str, root: Path | None) -> Path:
    """``$CODEX_HOME/hooks.json`` or ``<repo>/.codex/hooks.json``."""
    if scope == "project":
        assert root is not None
        return root / ".codex" / "hooks.json"
    return codex_home() / "hooks.json"


def config_path() -> Path:
    """``$CODEX_HOME/config.toml`` (for both scopes)."""
    return codex_home() / "config.toml"


def install_hooks(data: dict[str, Any], command: str) -> None:
    """Merge our hooks into a hooks.json object in place."""
    hookblock.install_block(data, hooks_block(command))


def uninstall_hooks(data: dict[str, Any]) -> None:
    """Take our hooks out of a hooks.json object in place."""
    hookblock.uninstall_block(data)


# --- config.toml ------------------------------------------------------------------------------


def _parse(path: Path, text: str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except TOMLKitError as error:
        raise InstallError(
            f"{path} is not valid TOML ({error}). Fix that line, then run again; "
            "the file was left unchanged."
        ) from None


def _plain(text: str) -> dict[str, Any] | None:
    """The document as plain data with an empty ``mcp_servers`` dropped; None if invalid."""
    try:
        data = tomlkit.parse(text).unwrap()
    except TOMLKitError:
        return None
    if data.get("mcp_servers") == {}:
        del data["mcp_servers"]
    return data


def _servers(path: Path, doc: tomlkit.TOMLDocument) -> dict[str, Any] | None:
    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise InstallError(
            f"{path}: `mcp_servers` should be a table of servers. Fix it by hand, then run again; "
            "the file was left unchanged."
        )
    return servers


def server_block(command: str) -> str:
    """Our table as TOML text (values escaped by tomlkit).

    ``env_vars`` forwards ``COLONY_TASKS_HOME`` from Codex's environment: Codex passes stdio
    servers only a safe subset of it, and the server must open the same store as the hooks.
    """
    return (
        f"[mcp_servers.{SERVER_NAME}]\n"
        f"command = {tomlkit.item(command).as_string()}\n"
        f"args = {tomlkit.item(['mcp']).as_string()}\n"
        f"env_vars = {tomlkit.item(list(FORWARDED_ENV)).as_string()}\n"
    )


def _has_our_server(text: str, command: str) -> bool:
    data = _plain(text) or {}
    entry = data.get("mcp_servers", {}).get(SERVER_NAME)
    return (
        isinstance(entry, dict) and entry.get("command") == command and entry.get("args") == ["mcp"]
    )


def install_mcp(path: Path, text: str | None, command: str) -> str:
    """config.toml text with ``[mcp_servers.colony-tasks]`` present and pointing at ``command``."""
    text = text or ""
    doc = _parse(path, text)
    servers = _servers(path, doc)
    if servers is not None and SERVER_NAME in servers:
        entry = servers[SERVER_NAME]
        if not isinstance(entry, dict):
            raise InstallError(
                f"{path}: `mcp_servers.{SERVER_NAME}` should be a table. Fix or remove it by hand, "
                "then run again; the file was left unchanged."
            )
        if entry.get("command") == command and entry.get("args") == ["mcp"]:
            return text
        entry["command"] = command
        entry["args"] = ["mcp"]
        if "env_vars" not in entry and "env" not in entry:
            entry["env_vars"] = list(FORWARDED_ENV)
        return _checked(path, doc.as_string(), command)
    prefix = text if not text or text.endswith("\n") else text + "\n"
    candidate = prefix + ("\n" if prefix.strip() else "") + server_block(command)
    if _has_our_server(candidate, command):
        return candidate
    # Unusual layout (inline table, dotted keys): let tomlkit place the entry.
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc.append("mcp_servers", servers)
    entry = tomlkit.inline_table() if isinstance(servers, InlineTable) else tomlkit.table()
    entry.update({"command": command, "args": ["mcp"], "env_vars": list(FORWARDED_ENV)})
    servers[SERVER_NAME] = entry
    return _checked(path, doc.as_string(), command)


def _checked(path: Path, text: str, command: str) -> str:
    if not _has_our_server(text, command):
        raise InstallError(
            f"Could not add the colony-tasks MCP server to {path} automatically. Add this "
            f"table by hand:\n{server_block(command)}"
        )
    return text


def _is_blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _cut_table(text: str) -> str | None:
    """``text`` without the ``[mcp_servers.colony-tasks]`` table (and its sub-tables).

    Comments and blank lines just before the next table stay (they belong to it), and one
    blank separator line before our table goes with it. None when there is no such header.
    """
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _OUR_HEADER.match(line)), None)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and not (
        _ANY_HEADER.match(lines[end]) and not _OUR_HEADER.match(lines[end])
    ):
        end += 1
    stop = end
    while stop > start + 1 and _is_blank_or_comment(lines[stop - 1]):
        stop -= 1
    before, after = lines[:start], lines[stop:]
    if before and not before[-1].strip() and (not after or not after[0].strip()):
        before = before[:-1]
    return "".join(before + after)


def uninstall_mcp(path: Path, text: str | None) -> str | None:
    """config.toml text without our server; None when nothing else is left (delete the file)."""
    if text is None:
        return None
    doc = _parse(path, text)
    servers = _servers(path, doc)
    if servers is None or SERVER_NAME not in servers:
        return text
    expected = doc.unwrap()
    del expected["mcp_servers"][SERVER_NAME]
    if not expected["mcp_servers"]:
        del expected["mcp_servers"]
    result = _cut_table(text)
    if result is None or _plain(result) != expected:
        del servers[SERVER_NAME]
        if not servers and isinstance(servers, Table) and servers.is_super_table():
            del doc["mcp_servers"]
        result = doc.as_string()
        if _plain(result) != expected:
            raise InstallError(
                f"Could not remove [mcp_servers.{SERVER_NAME}] from {path} automatically. "
                "Delete that table by hand."
            )
    return result if result.strip() else None
