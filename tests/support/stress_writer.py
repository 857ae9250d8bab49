"""A helper process for the fault-injection suite: a burst of thread writes, until killed.

``python stress_writer.py RUN GIVER TAKER REPO`` opens the store under ``COLONY_TASKS_HOME``,
prints ``ready`` and then loops: the giver claims two files, hands them off, the taker accepts
(the claims move in the same transaction as the accept message), the giver edits a third file
through the PostToolUse handler (the edit and its auto-claim land together) and posts a
directed note; every tenth step a passive WAL checkpoint runs. After each committed write it
prints one line (``handoff ID``, ``accept HANDOFF ACCEPT``, ``edit PATH``, ``post ID``), so the
test can check that everything reported as committed survived the SIGKILL.
"""

from __future__ import annotations

import json
import sys

from colony_tasks.hooks.payload import request
from colony_tasks.relay.apply import apply
from colony_tasks.store import open_default
from colony_tasks.usecases import actions


def say(*parts: object) -> None:
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


def main(run: str, giver_id: str, taker_id: str, repo: str) -> None:
    store = open_default()
    giver, taker = store.get_session(giver_id), store.get_session(taker_id)
    say("ready")
    step = 0
    while True:
        files = [f"w/{run}/{step}/a.py", f"w/{run}/{step}/b.py"]
        actions.claim(store, giver, files, note=f"run {run} step {step}")
        handoff = actions.hand_off(store, giver, f"take {run}/{step}", files=files)
        say("handoff", handoff.id)
        accepted = actions.accept_handoff(store, taker, handoff.id)
        say("accept", accepted.handoff_id, accepted.accept_id)
        edited = f"w/{run}/{step}/c.py"
        payload = {
            "session_id": giver.id,
            "cwd": repo,
            "tool_name": "Write",
            "tool_input": {"file_path": f"{repo}/{edited}"},
        }
        raw = json.dumps(payload).encode()
        apply(store, request("post-tool-use", giver.agent, payload, raw).to_wire())
        say("edit", edited)
        posted = actions.post(store, giver, f"done {run}/{step}", to=taker.handle, urgent=True)
        say("post", posted.id)
        if step % 10 == 9:
            store.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        giver, taker = taker, giver
        step += 1


if __name__ == "__main__":
    main(*sys.argv[1:5])
