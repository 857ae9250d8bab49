"""Which files a shell command changed, found without walking the repository.

Before a shell command (PreToolUse) the hook notes the state — modification time, size, inode —
of the files that matter: those other live sessions claim, this session's own claims and
recent edits, and the files the command names. After it (PostToolUse) it looks again; a file
whose state moved, or that appeared, was changed by the command. Only ``stat`` calls: dozens
of files cost well under a millisecond, whatever the size of the repository.

The note is a small JSON file per in-flight tool call under the data folder (``shell/``), so
the PreToolUse hook writes nothing to the database. When no note exists (the PreToolUse hook
did not run: an older install, a shell call the agent does not report before running), the
files the command names count as changed when they were modified during the call.

Naming is a cheap, forgiving parse of the command line (:func:`named_paths`): every argument
that looks like a path, redirection targets, simple ``cd`` prefixes and one-folder globs. It
over-collects on purpose — a named file only counts when its state actually changed.

The policy (:func:`note_before`, :func:`changed_by`) decides which files matter to a lane and
which of those a command changed, rather than another session's recorded edit. Standard
library only.
"""

from __future__ import annotations

import json
import os
import time

from ..base import paths
from ..base.globs import is_glob
from ..base.models import Lane, Session
from ..store import Store
from . import claims, delivery

FOLDER = "shell"
MAX_NAMED = 200  # paths taken from one command line
MAX_WATCHED = 500  # files noted before one command
STALE_NOTE = 24 * 3600  # notes of calls whose PostToolUse never came are removed after this
MAX_UNFINISHED = 8  # notes of earlier calls without a PostToolUse, read at the next one
UNNOTED_WINDOW = 5.0  # without a note: seconds before the call that still count as "during"
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", "{", "}", "\n"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "1>", "2>", "1>>", "2>>", "<", "<<<"})
_SPECIAL = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "-"})

State = tuple[int, int, int] | None  # (mtime_ns, size, inode) of a regular file, or None


def _tokens(command: str) -> list[str]:
    import shlex  # here: only shell commands need it, and every other hook would pay ~0.8 M

    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    out = []
    try:
        for token in lexer:
            out.append(token)
            if len(out) > 4 * MAX_NAMED:
                break
    except ValueError:  # an unbalanced quote: keep what was read
        pass
    return out


def _pathlike(token: str) -> bool:
    if not token or token.startswith("-") or token in _SPECIAL or "\x00" in token:
        return False
    if token.startswith(("$", "s/", "y/")) or "=" in token.split("/", 1)[0]:
        return False  # a variable, a sed script, an assignment (VAR=x, --opt=x)
    return "/" in token or "." in token.lstrip(".") or token.startswith(".")


def named_paths(command: str, cwd: str) -> list[str]:
    """Absolute paths of the files ``command`` names (existing or not), at most ``MAX_NAMED``.

    Arguments are taken relative to ``cwd``, following simple ``cd DIR &&`` prefixes; an
    argument with ``*``/``?``/``[`` is expanded in its one folder (never recursively).
    """
    base = cwd
    found: dict[str, None] = {}
    words = _tokens(command)
    # A word that holds a secret (a URL with a password, pass:…, a token) names no file we
    # watch, and must not be written to a note: words redaction changes are left out.
    from ..base.redact import redact

    clean = redact(command)
    if clean != command:
        words = [word for word in words if word in clean]
    at_start = True
    i = 0
    while i < len(words) and len(found) < MAX_NAMED:
        word = words[i]
        if word in _SEPARATORS or set(word) <= set(";&|()"):
            at_start = True
            i += 1
            continue
        if word in _REDIRECTS or (set(word) <= set("<>&12") and set(word) & set("<>")):
            i += 1
            target = words[i] if i < len(words) else ""
            if target and target not in _SEPARATORS and not (target.isdigit() or target == "-"):
                _add(found, target, base)  # not a descriptor duplication (2>&1, >&-)
            i += 1
            continue
        if at_start and word == "cd" and i + 1 < len(words):
            target = os.path.expanduser(words[i + 1])
            base = os.path.normpath(os.path.join(base, target))
            i += 2
            at_start = False
            continue
        at_start = False
        if _pathlike(word):
            _add(found, word, base)
        i += 1
    return list(found)[:MAX_NAMED]


def _add(found: dict[str, None], word: str, base: str) -> None:
    if word in _SPECIAL or not word or "\x00" in word:
        return
    word = os.path.expanduser(word)
    full = os.path.normpath(os.path.join(base, word))
    if any(c in word for c in "*?["):
        # Expanded in its one folder only: a wildcard above the last part (ls /*/*/*/*) would
        # walk level by level, so such a word names nothing. At most MAX_NAMED matches are
        # read. Imported here, not at the top: glob (with fnmatch) would cost every hook
        # process ~1 ms, and only a command with a wildcard needs it.
        import glob
        import itertools

        folder = os.path.dirname(full)
        if glob.has_magic(folder) or "**" in word:
            return
        room = MAX_NAMED - len(found)
        try:
            matches = list(itertools.islice(glob.iglob(full), max(room, 0)))
        except (OSError, ValueError, RecursionError):
            return
        found.update(dict.fromkeys(matches))
        return
    found[full] = None


def stat(path: str) -> State:
    """The state of a regular file (symlinks followed), or None when there is none."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if (st.st_mode & 0o170000) != 0o100000:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def snapshot(files: list[str]) -> dict[str, State]:
    return {f: stat(f) for f in dict.fromkeys(files)}


def changed(before: dict[str, State], named_now: list[str], since: float) -> list[str]:
    """Files whose state differs from ``before``, plus newly named files written after
    ``since`` (a path the command names that was not noted before it ran)."""
    out = [f for f, old in before.items() if stat(f) != old]
    floor = int((since - 1.0) * 1e9)
    for f in named_now:
        if f not in before:
            now = stat(f)
            if now is not None and now[0] >= floor:
                out.append(f)
    return list(dict.fromkeys(out))


def recently_written(files: list[str], since: float) -> list[str]:
    """Without a note: the files modified at or after ``since``."""
    floor = int(since * 1e9)
    out = []
    for f in files:
        now = stat(f)
        if now is not None and now[0] >= floor:
            out.append(f)
    return out


# -- the note between PreToolUse and PostToolUse ------------------------------------------


_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _note_path(session_id: str, use_id: str) -> str:
    # Plain characters of the ids, not a hash: hashlib would cost every hook ~3 ms to import
    # (and a compiled regex ~1 M instructions).
    raw = f"{session_id[:80]}--{use_id[:80]}"
    key = "".join(c if c in _SAFE else "_" for c in raw).lstrip(".")
    return os.path.join(paths.home(), FOLDER, key + ".json")


def save_note(session_id: str, use_id: str, files: dict[str, State], *, at: float) -> None:
    """Write the note for one tool call (0600, in the 0700 data folder)."""
    path = _note_path(session_id, use_id)
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        paths.ensure_home()
        os.makedirs(folder, mode=0o700, exist_ok=True)
    elif int(at * 1000) % 16 == 0:  # one call in 16 or so tidies up
        _sweep(folder)
    data = json.dumps({"at": at, "files": files}, separators=(",", ":"))
    # Written in place: the PostToolUse that reads it starts only after this hook exited.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data.encode())
    finally:
        os.close(fd)


def take_note(session_id: str, use_id: str) -> tuple[float, dict[str, State]] | None:
    """Read and remove the note of one tool call; None when there is none (or it is bad)."""
    return _take(_note_path(session_id, use_id))


def _take(path: str) -> tuple[float, dict[str, State]] | None:
    try:
        with open(path, "rb") as f:
            raw = json.loads(f.read())
        os.unlink(path)
        files = {
            str(k): (tuple(v) if isinstance(v, list) else None) for k, v in raw["files"].items()
        }
        return float(raw["at"]), files
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def take_unfinished(session_id: str, use_id: str) -> list[tuple[float, dict[str, State]]]:
    """Read and remove the session's other notes: calls whose PostToolUse never came (Claude
    sends PostToolUseFailure instead when a command exits non-zero, and a failing command
    may still have changed files). Their changes are then found one command late."""
    own = os.path.basename(_note_path(session_id, use_id))
    prefix = own[: own.index("--") + 2] if "--" in own else own
    folder = os.path.join(paths.home(), FOLDER)
    found = []
    try:
        with os.scandir(folder) as entries:
            names = [e.name for e in entries if e.name.startswith(prefix) and e.name != own]
    except OSError:
        return []
    for name in names[:MAX_UNFINISHED]:
        note = _take(os.path.join(folder, name))
        if note is not None:
            found.append(note)
    return found


def _sweep(folder: str) -> None:
    """Remove notes whose PostToolUse never came (the call was denied or failed)."""
    cutoff = time.time() - STALE_NOTE
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
    except OSError:
        pass


# -- the policy: which files matter to the lane, and which ones a command changed -----------


def _watched(store: Store, session: Session, lane: Lane) -> list[str]:
    """The files a shell command could change that matter to the lane: literal paths claimed
    by any live session of the repository (others' and its own) and the files the session
    edited lately. Absolute, under the lane's root; at most ``MAX_WATCHED``."""
    rel = [c["pattern"] for c in store.list_claims(repo_id=lane.repo_id)]
    since = store.now() - delivery.TOUCHED_WINDOW
    rel += sorted(store.touched_paths(session.id, lane.repo_id, since))
    found = [os.path.join(lane.root, p) for p in dict.fromkeys(rel) if p and not is_glob(p)]
    return found[:MAX_WATCHED]


def note_before(
    store: Store, session: Session, lane: Lane, cwd: str, command: str, use_id: str
) -> None:
    """Before a shell command: note the state of the files that matter and the ones it names
    (``use_id`` pairs the note with the command's PostToolUse)."""
    at = store.now()
    files = _watched(store, session, lane) + named_paths(command, cwd)
    save_note(session.id, use_id, snapshot(files), at=at)


def changed_by(
    store: Store, session: Session, lane: Lane, cwd: str, command: str, use_id: str
) -> list[str]:
    """The files the shell command changed (absolute), like the paths of an Edit. A file
    another session recorded an edit of while the command ran is theirs, not this command's."""
    named = named_paths(command, cwd)
    note = take_note(session.id, use_id)
    if note is not None:
        since, before = note
        found = changed(before, named, since)
    else:
        since = store.now() - UNNOTED_WINDOW
        found = recently_written(named, since)
    for at, earlier in take_unfinished(session.id, use_id):
        since = min(since, at)
        found += changed(earlier, [], at)
    by_rel: dict[str, str] = {}
    for path in found:
        if _inside(path, lane.root):
            for rel in claims.relative_paths([path], lane=lane, cwd=cwd):
                by_rel.setdefault(rel, path)
    if not by_rel:
        return []
    # Another session's edit recorded after the file was last written is the one that wrote
    # it (a hook records an edit after making it), not this command.
    edits = store.recent_edits(lane.repo_id, list(by_rel), since, exclude_session=session.id)
    last_theirs: dict[str, float] = {}
    for e in edits:
        last_theirs[e["path"]] = max(last_theirs.get(e["path"], 0.0), e["created_at"])
    out = []
    for rel, path in by_rel.items():
        state = stat(path)
        written = state[0] / 1e9 if state else store.now()
        if last_theirs.get(rel, -1.0) < written:
            out.append(path)
    return out


def _inside(path: str, root: str) -> bool:
    real = os.path.realpath(path)
    top = os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)
