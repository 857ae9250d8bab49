import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT


@pytest.fixture(scope="module")
def caller(tmp_path_factory) -> Path:
    """The folder `make demo` is started from: a checkout of the user's own."""
    from tests.support.gitutil import make_repo

    return make_repo(tmp_path_factory.mktemp("caller") / "mine")


@pytest.fixture(scope="module")
def demo(caller: Path, tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("demo-tmp")
    result = subprocess.run(
        [sys.executable, str(ROOT / "demo" / "demo.py")],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
        cwd=caller,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    return result.stdout


def test_demo_keeps_its_store_and_prints_the_command_that_opens_the_viewer(demo: str):
    last = demo.rstrip().splitlines()[-3:]
    assert last[0] == "The demo's store is kept. Look at it in the viewer (Ctrl+C to stop):"
    command = shlex.split(last[1])
    assert command[0] == "cd" and command[2] == "&&" and command[-2:] == ["viewer", "--open"]
    home = command[3].split("=", 1)[1]
    listed = subprocess.run(
        [command[4], "tasks", "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=command[1],
        env={**os.environ, "COLONY_TASKS_HOME": home},
    )
    titles = [t["title"] for t in json.loads(listed.stdout)]
    assert titles == ["shop@main"]  # the open lane task (the chain is closed); no lane of ours


def test_demo_runs_entirely_inside_its_own_repositories(demo: str, caller: Path):
    command = shlex.split(demo.rstrip().splitlines()[-2])
    home, exe = command[3].split("=", 1)[1], command[4]
    sessions = subprocess.run(
        [exe, "sessions", "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=command[1],
        env={**os.environ, "COLONY_TASKS_HOME": home},
    )
    folders = {s["cwd"] for s in json.loads(sessions.stdout)}
    assert folders and all(f.startswith(str(Path(home).parent)) for f in folders), folders
    assert (
        subprocess.run(
            ["git", "status", "--porcelain"], cwd=caller, capture_output=True, text=True
        ).stdout
        == ""
    )


def test_demo_shows_briefing_warning_delta_and_silence(demo: str):
    scene1 = demo.split("=== Scene 2", 1)[0]
    assert "Others: claude-" in scene1
    warned = scene1.split("git would conflict", 1)[1].split("──", 1)[0]
    assert "colony-tasks: retry.py L2 (in def backoff) meets claude-" in warned
    assert "'s change (main): git will conflict; ask_question(to=\"claude-" in warned
    told = scene1.split("already told, nothing more", 1)[1].splitlines()[1]
    assert "nothing injected" in told
    again = demo.split("no warning now", 1)[1].splitlines()[1]
    assert "nothing injected" in again
    assert "since your last turn" in scene1 and "(a file you touched)" in scene1
    silence = scene1.split("and the prompt after: silence", 1)[1].splitlines()[1]
    assert "nothing injected" in silence
    assert scene1.rstrip().endswith("(nothing injected — exit 0, empty stdout)")


def test_demo_runs_a_chain_a_broadcast_question_and_a_handoff_through_the_mcp_server(demo: str):
    scene2 = demo.split("=== Scene 2", 1)[1].split("=== Scene 3", 1)[0]
    assert "ERROR: It is codex-" in scene2 and "only the turn holder may post" in scene2
    assert "it is your turn (the full history)" in scene2
    assert "it is your turn (what was said since you last spoke)" in scene2
    assert "Chain 2 is done." in scene2  # task 1 is the lane; no lane of the caller
    turns = [line for line in scene2.splitlines() if "[turn " in line and "━━" in line]
    assert len(turns) >= 4
    scene3 = demo.split("=== Scene 3", 1)[1].split("=== Scene 4", 1)[0]
    assert '"ok":true' in scene3 and "already answered by codex-" in scene3
    assert '"pattern":"src/cache.py"' in scene3 and "src/cache.py is held by codex-" in scene3


def test_demo_plans_three_items_two_agents_take_and_finish_and_the_third_becomes_ready(
    demo: str,
):
    scene4 = demo.split("=== Scene 4", 1)[1]
    assert scene4.count("Added item #") == 3
    assert '"title":"Schema","state":"taken","owner":"claude-' in scene4
    assert '"title":"API","state":"taken","owner":"codex-' in scene4
    assert "You will be told when an item is ready." in scene4
    assert '"released":["src/api/**"],"ready":[3]' in scene4
    mid_turn = scene4.split("the ready item reaches it mid-turn", 1)[1].split("──", 1)[0]
    assert "plan → you" in mid_turn and "take_work(item_id=3)" in mid_turn
    assert "#3    Viewer  ready" in scene4
