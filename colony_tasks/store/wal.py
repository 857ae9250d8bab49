"""A damaged write-ahead log, found before SQLite silently drops what followed the damage.

SQLite replays the WAL at the first open after a crash by walking its frames while their
salts match the header and their running checksum holds; everything from the first frame that
fails is ignored, including transactions that had committed and been acknowledged (a flipped
byte, a torn write on a disk that lied about its flush). SQLite says nothing: the store simply
opens without them. :func:`scan` walks the same chain and also counts the committed frames of
the current generation *after* the break — what the replay will drop — and :func:`preserve`
keeps a copy of that WAL and a record of the loss in the data folder, where ``doctor`` reports
it. Who looks, before they open the store: a relay's start, ``doctor``, and a hook that
found no relay running and applies its event itself (after a crash, the first hook is such a
one; a relay is started for the next). A WAL is a few megabytes between checkpoints: the scan
costs about 85 µs a frame of the current log, at most some 80 ms for 4 MB, paid by those
rare opens only. (Comparing the shared index before and after an open would be cheaper, but
reading the ``-shm`` file means closing a descriptor of it, which drops every lock this
process holds on the store.) A concurrent writer never looks like damage: it only appends
after the chain's end, and damage needs a committed frame of this generation *past* a broken
one.

The format (https://www.sqlite.org/fileformat.html#the_write_ahead_log): a 32-byte header
(magic, version, page size, checkpoint sequence, two salts, two checksums), then frames of a
24-byte header (page number, database size in pages for a commit frame else 0, the two salts,
the running checksum) and one page. Standard library only.
"""

from __future__ import annotations

import json
import os
import struct
import time
from typing import Any

from ..base import paths
from ..base.models import Record

MAGIC_LITTLE, MAGIC_BIG = 0x377F0682, 0x377F0683
HEADER, FRAME_HEADER = 32, 24
#: The record of damage found, for ``doctor`` (a JSON list, newest last).
DAMAGE_FILE = "wal-damage.json"
MASK = 0xFFFFFFFF


class Scan(Record):
    """What one WAL holds: frames SQLite will replay, and committed frames it will drop."""

    frames: int  # whole frames in the file
    replayed_commits: int  # committed transactions in the valid chain
    broken_at: int | None  # 1-based frame where the chain breaks while this generation goes on
    lost_frames: int  # frames of this generation after the break
    lost_commits: int  # committed transactions among them (each about one event)
    generation: str = ""  # the header's salts: one log between two restarts

    @property
    def damaged(self) -> bool:
        return self.lost_commits > 0


def _checksum(data: bytes, s0: int, s1: int, big: bool) -> tuple[int, int]:
    words = struct.unpack(f"{'>' if big else '<'}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & MASK
        s1 = (s1 + words[i + 1] + s0) & MASK
    return s0, s1


def scan(wal_path: str) -> Scan | None:
    """The WAL at ``wal_path`` walked as SQLite's replay walks it; None when there is none
    (or only a header: nothing to replay)."""
    try:
        with open(wal_path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if len(data) < HEADER:
        return None
    magic, _version, page_size, _seq, salt1, salt2, c0, c1 = struct.unpack(">8I", data[:HEADER])
    if magic not in (MAGIC_LITTLE, MAGIC_BIG) or page_size < 512 or page_size & (page_size - 1):
        return None
    big = magic == MAGIC_BIG
    if _checksum(data[:24], 0, 0, big) != (c0, c1):
        return None  # a header SQLite rejects: it starts a new log and nothing was replayable
    size = FRAME_HEADER + page_size
    frames = (len(data) - HEADER) // size
    s0, s1 = c0, c1
    replayed = lost_frames = lost_commits = 0
    broken_at: int | None = None
    for n in range(frames):
        at = HEADER + n * size
        page_no, commit, f_salt1, f_salt2, f0, f1 = struct.unpack(">6I", data[at : at + 24])
        ours = (f_salt1, f_salt2) == (salt1, salt2)
        if broken_at is None:
            if ours and page_no:
                s0, s1 = _checksum(data[at : at + 8], s0, s1, big)
                s0, s1 = _checksum(data[at + 24 : at + size], s0, s1, big)
            if not ours or not page_no or (s0, s1) != (f0, f1):
                broken_at = n + 1
            elif commit:
                replayed += 1
                continue
            else:
                continue
        if ours:
            lost_frames += 1
            lost_commits += 1 if commit else 0
    if not lost_commits:
        broken_at = None  # an unfinished last transaction or an older generation: nothing lost
    lost_frames = lost_frames if lost_commits else 0
    return Scan(frames, replayed, broken_at, lost_frames, lost_commits, f"{salt1:08x}{salt2:08x}")


def damage_path() -> str:
    return os.path.join(paths.home(), DAMAGE_FILE)


def preserve(db_path: str) -> Scan | None:
    """Scan ``db_path``'s WAL before anything opens the store; when committed transactions
    would be dropped, copy the WAL aside and record the loss for ``doctor``. The scan."""
    wal_path = db_path + "-wal"
    found = scan(wal_path)
    if found is None or not found.damaged:
        return found
    incidents = damage_records()
    if any(r.get("generation") == found.generation for r in incidents + _records(seen=True)):
        return found  # recorded by an earlier relay start: the same log, not a new loss
    stamp = time.strftime("%Y%m%dT%H%M%S")
    copy = f"{wal_path}.damaged-{stamp}"
    try:
        fd = paths.open_private(copy, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        import shutil  # only when there is a damaged log to keep

        with os.fdopen(fd, "wb") as out, open(wal_path, "rb") as source:
            shutil.copyfileobj(source, out)
    except OSError as error:
        paths.log(f"store: could not keep a copy of the damaged WAL: {error}")
        copy = ""
    record = {
        "found_at": time.time(),
        "broken_at_frame": found.broken_at,
        "lost_frames": found.lost_frames,
        "lost_commits": found.lost_commits,
        "replayed_commits": found.replayed_commits,
        "copy": copy,
        "generation": found.generation,
    }
    incidents.append(record)
    _write_records(incidents)
    paths.log(
        f"store: the WAL is damaged at frame {found.broken_at}: {found.lost_commits} committed"
        f" transactions after it cannot be replayed{f'; kept a copy at {copy}' if copy else ''}"
    )
    return found


def damage_records() -> list[dict[str, Any]]:
    """The losses recorded and not yet seen (oldest first); [] when none or unreadable."""
    return _records(seen=False)


def _records(*, seen: bool) -> list[dict[str, Any]]:
    try:
        with open(damage_path() + (".seen" if seen else ""), encoding="utf-8") as handle:
            records = json.load(handle)
    except (OSError, ValueError):
        return []
    return [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []


def acknowledge() -> int:
    """Mark the recorded losses as seen (``doctor --fix``): the record moves aside, the WAL
    copies stay. How many there were."""
    records = damage_records()
    if records:
        _write_records(_records(seen=True) + records, seen=True)
        os.unlink(damage_path())
    return len(records)


def _write_records(records: list[dict[str, Any]], *, seen: bool = False) -> None:
    target = damage_path() + (".seen" if seen else "")
    temp = f"{target}.{os.getpid()}.tmp"
    fd = paths.open_private(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(records, handle)
    os.replace(temp, target)


def loss_sentence(record: dict[str, Any]) -> str:
    """One recorded loss in a sentence for ``doctor``."""
    found = record.get("found_at")
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(found)) if found else "at some point"
    copy = record.get("copy") or ""
    return (
        f"damaged, found {when}: {record.get('lost_commits')} committed"
        f" transactions (about one event each) after frame {record.get('broken_at_frame')}"
        f" could not be replayed and are lost"
        + (f"; the damaged log is kept at {copy}" if copy else "")
    )
