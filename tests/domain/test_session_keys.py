"""Session keys: derived from a secret of the session's machine, stored only as a hash."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

import pytest

from colony_tasks.base import keys
from colony_tasks.base.errors import NotAllowed
from colony_tasks.domain import identity, sessions
from colony_tasks.store import Store
from colony_tasks.store.schema import MIGRATIONS


def test_the_store_keeps_only_the_hash_of_the_key_the_briefing_shows(home: Path, repo: Path):
    db = Store(str(home.parent / "keys.db"))
    me = sessions.register(db, "s-1", agent="codex", cwd=str(repo)).session
    credential = identity.credential(db, me)
    assert credential is not None
    key = credential.split(":")[1]
    stored = [tuple(r) for r in db._all("SELECT * FROM session_keys")]
    assert stored == [("s-1", hashlib.sha256(key.encode()).hexdigest())]
    assert key not in repr(stored)
    # The key confirms the session; a wrong one, or the stored hash itself, does not.
    assert identity.agent_caller(db, credential, pids=[]).id == "s-1"
    for forged in (f"{me.handle}:{'0' * len(key)}", f"{me.handle}:{stored[0][1]}"):
        with pytest.raises(NotAllowed, match="Cannot confirm"):
            identity.agent_caller(db, forged, pids=[])
    db.close()


def test_a_key_is_stable_on_its_machine_and_another_machine_derives_another(
    home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    first = keys.key_for("s-1")
    assert keys.key_for("s-1") == first != keys.key_for("s-2")
    secret = home / keys.SECRET_NAME
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    monkeypatch.setenv("COLONY_TASKS_HOME", str(tmp_path / "other-machine"))
    assert keys.key_for("s-1") != first


def test_migration_16_drops_the_raw_keys_of_older_versions(tmp_path: Path):
    path = str(tmp_path / "old.db")
    old = Store(path, migrations=[m for m in MIGRATIONS if m.version <= 14])
    old._run("INSERT INTO sessions(id, handle, agent, started_at, last_seen_at) VALUES ('s', 'h',"
             " 'codex', 0, 0)")  # fmt: skip
    old._run("INSERT INTO session_keys(session_id, key) VALUES ('s', 'raw-key-of-old')")
    old.close()
    new = Store(path)
    assert [r[1] for r in new._all("PRAGMA table_info(session_keys)")] == [
        "session_id",
        "key_hash",
    ]
    assert new._all("SELECT * FROM session_keys") == []
    new.close()
