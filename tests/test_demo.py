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
