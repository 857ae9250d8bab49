"""The outbox hands rows out session by session in turn, each session's in the order they came:
a row waits for at most one row of each other session, however many they spooled (an agent
firing fast does not hold another session's edit, and its warning, behind its backlog).
Across calls the relay says which sessions it served last (``served``)."""

from __future__ import annotations

from pathlib import Path

from colony_tasks.relay.outbox import Outbox


def test_sessions_take_turns_and_each_keeps_its_order(tmp_path: Path):
    box = Outbox(str(tmp_path / "outbox.db"))
    try:
        spooled = [("busy", i) for i in range(40)] + [("editor", 0), ("busy", 40), ("editor", 1)]
        spooled.insert(3, ("quiet", 0))
        for n, (sid, i) in enumerate(spooled):
            box.put(f"k{n}", "user-prompt-submit", "claude", {"n": i}, session_id=sid)
        order = [
            (r["session_id"], int(r["payload"].split(":")[1].rstrip("}"))) for r in box.pending(6)
        ]
        assert order == [
            ("busy", 0),
            ("quiet", 0),
            ("editor", 0),
            ("busy", 1),
            ("editor", 1),
            ("busy", 2),
        ]
        # across calls, the session served last goes after the others of its turn: the
        # busy one, whose next row was spooled long before the editor's, waits for it
        box.done(box.pending(1)[0]["id"])
        served = {"busy": 1}
        assert [r["session_id"] for r in box.pending(3, served)] == ["quiet", "editor", "busy"]
        assert [r["session_id"] for r in box.pending(3)] == ["busy", "quiet", "editor"]
        # a stuck row is passed over, and the others keep their turns
        quiet = next(r for r in box.pending(3) if r["session_id"] == "quiet")
        for _ in range(3):
            box.failed(quiet["id"], "refused")
        order = [r["session_id"] for r in box.pending(4, served)]
        assert order == ["editor", "busy", "editor", "busy"]
    finally:
        box.close()
