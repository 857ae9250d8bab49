"""A file's content where its session's branch forked: the base of the session's regions.

A session's base of a file is the file's blob at the merge base of the session's ``HEAD`` and
the branch it will merge into — the repository's default branch: ``origin/HEAD``, else
``main`` or ``master``, else ``HEAD`` itself (the base is then ``HEAD``'s blob). Its regions
then hold what its branch already committed and what a shell command changed, exactly
(:mod:`colony_tasks.domain.regions`). Detached or unborn ``HEAD``, no git, a git call that
fails or times out, a file git does not track: no base here (the caller keeps the content at
the session's first edit).

Objects are read through ``git cat-file --batch``. The relay holds one long-lived process per
working tree (:class:`Pool`: reused across events, restarted when it dies, closed when the
relay exits) and caches merge bases and blobs; a hook applying its event itself runs a
one-shot process (:class:`OneShot`). Which one the core uses is :func:`current`, set by the
relay (:func:`install`). Standard library only; ``subprocess`` is imported on first use.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Sequence

TIMEOUT = 5.0  # seconds for one git call
#: The most working trees with a live ``cat-file`` process in one relay.
MAX_TREES = 16
MAX_BLOB_BYTES = 4 * 1024 * 1024  # a larger file is not diffed (see domain.regions)
TARGETS = ("refs/remotes/origin/HEAD", "refs/heads/main", "refs/heads/master")
CACHED = 512  # merge bases and blobs the relay keeps
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}

Object = tuple[str, str, bytes] | None  # (sha, type, content); None: missing


class Base(NamedTuple):
    """The file's content at the fork point (None: the file did not exist there) and the
    commit it was read at."""

    text: str | None
    commit: str


def _env() -> dict[str, str]:
    return {**os.environ, **_ENV}


KINDS = (b"blob", b"tree", b"commit", b"tag")


def _header(line: bytes) -> tuple[bytes, bytes, int] | None:
    """An answer's ``<sha> <type> <size>``; None for ``<spec> missing`` (and the like)."""
    head = line.split(b" ")
    if len(head) != 3 or head[1] not in KINDS or not head[2].isdigit():
        return None
    return head[0], head[1], int(head[2])


def _parse(out: bytes, count: int) -> list[Object]:
    """``count`` answers of ``git cat-file --batch`` in ``out``."""
    found: list[Object] = []
    pos = 0
    for _ in range(count):
        end = out.index(b"\n", pos)
        head = _header(out[pos:end])
        pos = end + 1
        if head is None:
            found.append(None)
            continue
        size = head[2]
        found.append((head[0].decode(), head[1].decode(), out[pos : pos + size]))
        pos += size + 1
    return found


def _merge_base(root: str, a: str, b: str) -> str | None:
    import subprocess

    try:
        done = subprocess.run(
            ["git", "merge-base", a, b],
            cwd=root,
            capture_output=True,
            timeout=TIMEOUT,
            env=_env(),
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.decode("ascii", "replace").strip()
    return sha if done.returncode == 0 and sha else None


class Reader:
    """Where bases are read: the resolution every reader shares, over its own ``objects``."""

    def objects(self, root: str, specs: Sequence[str]) -> list[Object]:
        raise NotImplementedError

    def fork_point(self, root: str, head: str, target: str) -> str | None:
        return head if head == target else _merge_base(root, head, target)

    def bases(
        self, root: str, rels: Sequence[str], decode: Callable[[bytes], str]
    ) -> dict[str, Base]:
        """The files' bases for a session in the working tree at ``root`` on a branch, their
        content turned to text by ``decode``: the fork point is found once, the blobs read
        together. A file left out has none here: one git does not track (not in ``HEAD``
        either) keeps the content the session first saw."""
        found = self.fork(root)
        if found is None:
            return {}
        head, commit = found
        out = self.read(root, commit, rels, decode)
        absent = [rel for rel, base in out.items() if base.text is None]
        if absent:
            at_head = self.read(root, head, absent, decode) if head != commit else {}
            for rel in absent:
                if at_head.get(rel, Base(None, head)).text is None:
                    del out[rel]
        return out

    def fork(self, root: str) -> tuple[str, str] | None:
        """``HEAD`` and the commit where it forked from the branch it will merge into."""
        try:
            head, *targets = self.objects(root, ["HEAD", *TARGETS])
        except (OSError, ValueError):
            return None
        if head is None or head[1] != "commit":
            return None
        target = next((t[0] for t in targets if t is not None and t[1] == "commit"), head[0])
        commit = self.fork_point(root, head[0], target)
        return None if commit is None else (head[0], commit)

    def read(
        self, root: str, commit: str, rels: Sequence[str], decode: Callable[[bytes], str]
    ) -> dict[str, Base]:
        """The files at ``commit`` (None for one that is not there); a file that is not a
        readable text blob is left out."""
        wanted = [r for r in dict.fromkeys(rels) if r and "\n" not in r and not r.startswith("/")]
        try:
            found = self.objects(root, [f"{commit}:{r}" for r in wanted]) if wanted else []
        except (OSError, ValueError):
            return {}
        out: dict[str, Base] = {}
        for rel, item in zip(wanted, found, strict=True):
            if item is None:
                out[rel] = Base(None, commit)
            elif item[1] == "blob" and len(item[2]) <= MAX_BLOB_BYTES:
                out[rel] = Base(decode(item[2]), commit)
        return out

    def close(self) -> None:
        """Let go of what the reader holds."""


class OneShot(Reader):
    """A git process per question: a hook applying its event itself, once."""

    def objects(self, root: str, specs: Sequence[str]) -> list[Object]:
        import subprocess

        try:
            done = subprocess.run(
                ["git", "cat-file", "--batch"],
                cwd=root,
                input="".join(s + "\n" for s in specs).encode(),
                capture_output=True,
                timeout=TIMEOUT,
                env=_env(),
                check=False,
            )
        except subprocess.SubprocessError as error:
            raise OSError(str(error)) from error
        if done.returncode != 0:
            raise OSError("git cat-file failed")
        return _parse(done.stdout, len(specs))


class CatFile:
    """One long-lived ``git cat-file --batch`` in a working tree; one question at a time."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = 0  # processes started (a dead one is restarted)
        self.pending = b""

    def _process(self) -> subprocess.Popen[bytes]:
        import subprocess

        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                ["git", "cat-file", "--batch"],
                cwd=self.root,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=_env(),
                bufsize=0,
            )
            self.started += 1
            self.pending = b""
        return self.proc

    def objects(self, specs: Sequence[str]) -> list[Object]:
        with self.lock:
            try:
                return [self._ask(spec) for spec in specs]
            except (OSError, ValueError):
                self._stop()  # a dead, stuck or confused process: the next question restarts
                raise

    def _ask(self, spec: str) -> Object:
        """One question, answered before the next is written (a pipe holds only so much)."""
        import time

        proc = self._process()
        assert proc.stdin is not None
        proc.stdin.write(spec.encode() + b"\n")
        deadline = time.monotonic() + TIMEOUT
        head = _header(self._line(proc, deadline))
        if head is None:
            return None
        body = self._take(proc, head[2] + 1, deadline)[: head[2]]
        return head[0].decode(), head[1].decode(), body

    def _fill(self, proc: subprocess.Popen[bytes], deadline: float) -> None:
        import select
        import time

        assert proc.stdout is not None
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            raise OSError("git cat-file timed out")
        chunk = os.read(proc.stdout.fileno(), 1 << 16)
        if not chunk:
            raise OSError("git cat-file ended")
        self.pending += chunk

    def _line(self, proc: subprocess.Popen[bytes], deadline: float) -> bytes:
        while b"\n" not in self.pending:
            self._fill(proc, deadline)
        line, _, self.pending = self.pending.partition(b"\n")
        return line

    def _take(self, proc: subprocess.Popen[bytes], size: int, deadline: float) -> bytes:
        while len(self.pending) < size:
            self._fill(proc, deadline)
        out, self.pending = self.pending[:size], self.pending[size:]
        return out

    def _stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
        try:
            proc.wait(timeout=1)
        except Exception:  # noqa: BLE001 - a process that will not end is killed
            proc.kill()
            proc.wait()

    def close(self) -> None:
        with self.lock:
            self._stop()


class Pool(Reader):
    """The relay's reader: a :class:`CatFile` per working tree, merge bases and blobs cached
    (a commit's blob never changes)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.processes: OrderedDict[str, CatFile] = OrderedDict()
        self.cache: OrderedDict[tuple[str, ...], object] = OrderedDict()

    def _cat(self, root: str) -> CatFile:
        """The working tree's process; past :data:`MAX_TREES` trees the least recently asked
        one is ended (any local process can make a relay look at many trees)."""
        with self.lock:
            cat = self.processes.get(root)
            if cat is None:
                cat = self.processes[root] = CatFile(root)
                while len(self.processes) > MAX_TREES:
                    _, oldest = self.processes.popitem(last=False)
                    oldest.close()
            else:
                self.processes.move_to_end(root)
            return cat

    def objects(self, root: str, specs: Sequence[str]) -> list[Object]:
        return self._cat(root).objects(specs)

    def _cached(self, key: tuple[str, ...]) -> tuple[bool, object]:
        with self.lock:
            if key not in self.cache:
                return False, None
            self.cache.move_to_end(key)
            return True, self.cache[key]

    def _keep(self, key: tuple[str, ...], value: object) -> None:
        with self.lock:
            self.cache[key] = value
            while len(self.cache) > CACHED:
                self.cache.popitem(last=False)

    def fork_point(self, root: str, head: str, target: str) -> str | None:
        key = ("fork", root, head, target)
        hit, value = self._cached(key)
        if hit:
            return value if isinstance(value, str) else None
        commit = super().fork_point(root, head, target)
        if commit is not None:
            self._keep(key, commit)
        return commit

    def read(
        self, root: str, commit: str, rels: Sequence[str], decode: Callable[[bytes], str]
    ) -> dict[str, Base]:
        out: dict[str, Base] = {}
        missed = []
        for rel in rels:
            hit, value = self._cached(("blob", root, commit, rel))
            if hit and isinstance(value, Base):
                out[rel] = value
            else:
                missed.append(rel)
        if missed:
            found = super().read(root, commit, missed, decode)
            for rel, base in found.items():
                self._keep(("blob", root, commit, rel), base)
            out.update(found)
        return out

    def started(self) -> int:
        """The cat-file processes started so far (each working tree's first, and restarts)."""
        with self.lock:
            return sum(cat.started for cat in self.processes.values())

    def close(self) -> None:
        with self.lock:
            cats, self.processes = list(self.processes.values()), OrderedDict()
            self.cache.clear()
        for cat in cats:
            cat.close()


_current: list[Reader] = [OneShot()]


def current() -> Reader:
    """The reader the core uses in this process (a one-shot one unless the relay installed
    its pool)."""
    return _current[0]


def install(reader: Reader) -> Reader:
    """Use ``reader`` in this process (the relay's :class:`Pool`); the previous one."""
    previous, _current[0] = _current[0], reader
    return previous
