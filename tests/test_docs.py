import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_cli_reference_matches_the_commands_help():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cli_reference.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout


def test_readme_starts_with_the_two_setup_commands():
    text = (ROOT / "README.md").read_text()
    setup = text.split("## Setup and test", 1)[1].split("##", 1)[0]
    assert "make test" in setup and "make demo" in setup
    assert (
        text.index("## Setup and test")
        < text.index("## What it does")
        < text.index("## CLI reference")
    )
