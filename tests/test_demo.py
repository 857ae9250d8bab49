import subprocess
import sys


def test_demo_shows_briefing_warning_delta_and_silence():
    result = subprocess.run(
        [sys.executable, "-m", "colony_tasks.demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out = result.stdout
    assert "Others: claude-" in out
    assert "src/retry.py is held by claude-" in out
    assert "You just edited a file another session is working on" in out
    assert "since your last turn" in out and "(a file you touched)" in out
    silence = out.split("and the prompt after: silence", 1)[1].splitlines()[1]
    assert "nothing injected" in silence
    assert out.rstrip().endswith("(nothing injected — exit 0, empty stdout)")


def test_demo_runs_a_chain_a_broadcast_question_and_a_handoff_through_the_mcp_server():
    result = subprocess.run(
        [sys.executable, "-m", "colony_tasks.demo"],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    out = result.stdout
    scene2 = out.split("=== Scene 2", 1)[1].split("=== Scene 3", 1)[0]
    assert "ERROR: It is codex-" in scene2 and "only the turn holder may post" in scene2
    assert "it is your turn (the full history)" in scene2
    assert "it is your turn (what was said since you last spoke)" in scene2
    assert "Chain 3 is completed." in scene2
    turns = [line for line in scene2.splitlines() if "[turn " in line and "━━" in line]
    assert len(turns) >= 4
    scene3 = out.split("=== Scene 3", 1)[1]
    assert '"ok":true' in scene3 and "already answered by codex-" in scene3
    assert '"pattern":"src/cache.py"' in scene3 and "src/cache.py is held by codex-" in scene3
