"""File plumbing for the installer: reading, JSON with clear errors, diffs, backups, atomic writes.

Nothing here knows about hooks. Every error is an :class:`InstallError` whose message names the
file and says what to fix, so the CLI can print it as one sentence.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base import paths
from ..base.errors import ColonyError

if TYPE_CHECKING:
    from collections.abc import Callable

BACKUP_TAG = "colony-tasks"
#: What every client's MCP server table must be (for :func:`child_object`'s error).
SERVERS = "an object mapping server names to servers"


class InstallError(ColonyError):
    """A configuration file the installer cannot read or change safely."""


class ShapeProblem(Exception):
    """A value inside a configuration file has the wrong type; the caller adds the file name."""

    def __init__(self, where: str, expected: str, value: Any) -> None:
        super().__init__(f"`{where}` should be {expected}, but it is {_describe(value)}")
        self.where = where


def child_object(
    data: dict[str, Any], key: str, expected: str, create: bool
) -> dict[str, Any] | None:
    """``data[key]``, which must be an object (``expected`` says of what, for the error); an
    empty one is added when it is missing and ``create``, else None."""
    child = data.get(key)
    if child is None and create:
        child = data[key] = {}
    if child is not None and not isinstance(child, dict):
        raise ShapeProblem(key, expected, child)
    return child


def remove_entry(data: dict[str, Any], key: str, name: str, expected: str) -> None:
    """Delete ``data[key][name]``, and ``data[key]`` when that emptied it."""
    entries = child_object(data, key, expected, create=False)
    if not entries or name not in entries:
        return
    del entries[name]
    if not entries:
        del data[key]


def _describe(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, int | float) else type(value).__name__


def read_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InstallError(f"{path} is a directory, but a file was expected there.") from None
    except UnicodeDecodeError:
        raise InstallError(f"{path} is not UTF-8 text; fix or move it, then run again.") from None
    except OSError as error:
        raise InstallError(f"Cannot read {path}: {error.strerror}.") from None


def load_json_object(path: Path, text: str | None) -> dict[str, Any]:
    """Parse a JSON settings file whose top level must be an object (missing or blank = {})."""
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InstallError(
            f"{path} is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg}). "
            "Fix that spot (comments and trailing commas are not allowed), then run again; "
            "the file was left unchanged."
        ) from None
    if not isinstance(data, dict):
        raise InstallError(
            f"{path} should contain a JSON object ({{...}}) at the top level, but it holds "
            f"{_describe(data)}. Fix the file, then run again; it was left unchanged."
        )
    return data


def shape_error(path: Path, problem: ShapeProblem) -> InstallError:
    """Turn a :class:`ShapeProblem` into a sentence naming the file."""
    return InstallError(
        f"{path}: {problem}. Fix or remove that entry by hand, then run again; "
        "the file was left unchanged."
    )


def _indent_of(text: str | None) -> str | int:
    """The indent unit of a pretty-printed JSON text (2 spaces when unknown)."""
    if text:
        for line in text.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped:
                unit = line[: len(line) - len(stripped)]
                if unit:
                    return unit if "\t" in unit else len(unit)
                break
    return 2


def dump_json(data: dict[str, Any], like: str | None) -> str:
    """Serialise ``data`` the way ``like`` (the file's previous text) was formatted.

    Keeps the indent unit and whether the file ended with a newline, so a file written with
    ``JSON.stringify(x, null, 2)`` or ``json.dumps(x, indent=2)`` round-trips byte for byte.
    """
    text = json.dumps(data, indent=_indent_of(like), ensure_ascii=False)
    if like is None or like.endswith("\n") or not like.strip():
        text += "\n"
    return text


def same_json(a: Any, b: Any) -> bool:
    """Equal values with equal key order (so a pure reordering still counts as a change)."""
    return json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False)


def unified_diff(path: Path, before: str | None, after: str | None) -> str:
    """A unified diff of one file; a missing side is shown as /dev/null."""
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    for lines in (old, new):
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n\\ No newline at end of file\n"
    return "".join(
        difflib.unified_diff(
            old,
            new,
            fromfile=str(path) if before is not None else "/dev/null",
            tofile=str(path) if after is not None else "/dev/null",
        )
    )


def _write_target(path: Path) -> Path:
    """Write through a symlink (a dotfiles manager's link stays a link)."""
    return path.resolve() if path.is_symlink() else path


def backup_folder(path: Path) -> Path:
    """Backups live in the data folder, never beside the file (it may be in a repository)."""
    parent = str(path.absolute().parent).strip(os.sep).replace(os.sep, "%") or "root"
    return Path(paths.home()) / "backups" / parent


def backup(path: Path, now: float | None = None) -> Path:
    """Copy ``path`` to ``<data>/backups/<its folder>/<name>.colony-tasks-<stamp>.bak``."""
    source = _write_target(path)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(time.time() if now is None else now))
    folder = backup_folder(path)
    target = folder / f"{path.name}.{BACKUP_TAG}-{stamp}.bak"
    counter = 1
    while target.exists():
        target = folder / f"{path.name}.{BACKUP_TAG}-{stamp}-{counter}.bak"
        counter += 1
    try:
        paths.ensure_home()
        folder.mkdir(parents=True, exist_ok=True)
        for part in (folder.parent, folder):  # mkdir's mode is filtered by the umask
            os.chmod(part, 0o700)
        shutil.copy2(source, target)
        os.chmod(target, 0o600)
    except OSError as error:
        raise InstallError(f"Cannot back up {path} to {target}: {error.strerror}.") from None
    return target


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: Path, text: str, private: bool = False) -> None:
    """Replace ``path`` with ``text`` via a temp file + ``os.replace``, keeping its mode.

    A new file gets the umask's default mode, or 0600 when ``private`` (files in the user's
    config folders, such as ``~/.claude.json``, which also hold account state).
    """
    target = _write_target(path)
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o600 if private else _default_mode()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise InstallError(f"Cannot write {path}: {error.strerror}.") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as error:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InstallError(f"Cannot write {path}: {error.strerror}.") from None


def remove(path: Path) -> None:
    """Delete ``path`` (the installer created it and uninstall emptied it)."""
    try:
        _write_target(path).unlink()
    except FileNotFoundError:
        pass
    except OSError as error:
        raise InstallError(f"Cannot remove {path}: {error.strerror}.") from None


def generated(
    marker: str, removing: bool, render: Callable[[], str]
) -> Callable[[Path, str | None], str | None]:
    """The edit of a file colony-tasks writes whole from a template and knows by its first
    line, ``marker`` (the OpenCode plugin, the Copilot CLI extension): installing writes
    ``render()`` over our own copy, removing deletes it, and a file of that name someone
    else wrote is refused either way (it is left as it is)."""

    def edit(path: Path, text: str | None) -> str | None:
        if text is not None and not is_generated(text, marker):
            raise InstallError(
                f"{path} exists and was not written by colony-tasks. Move it away, then run"
                " again; it was left unchanged."
            )
        return None if removing else render()

    return edit


def is_generated(text: str | None, marker: str) -> bool:
    """Whether ``text`` is a file :func:`generated` wrote with ``marker``."""
    return text is not None and text.startswith(marker)
