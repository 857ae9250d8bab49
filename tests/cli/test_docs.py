import re
import subprocess
import sys

from tests.support import ROOT

README = (ROOT / "README.md").read_text()


def section(title: str) -> str:
    return README.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_cli_reference_matches_the_commands_help():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cli_reference.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout
    assert "### `colony-tasks install`" in (ROOT / "docs" / "cli.md").read_text()


def test_readme_is_for_users_first():
    order = ["## Quickstart", "make demo", "## Concepts", "## Team mode", "## More"]
    positions = [README.index(title) for title in order]
    assert positions == sorted(positions)
    assert "cli-reference:begin" not in README  # the reference lives in docs/cli.md
    quickstart = section("Quickstart")
    for step in ("pipx install .", "colony-tasks install", "claude", "codex", "viewer"):
        assert step in quickstart, step
    assert "colony-tasks: you are claude-" in quickstart


def test_quickstart_offers_choices_rather_than_installing_both_scopes():
    blocks = re.findall(r"```sh\n(.*?)```", section("Quickstart"), re.S)
    commands = [line for block in blocks for line in block.splitlines()]
    assert sum("colony-tasks install" in line for line in commands) == 1
    assert not any("--scope project" in line for line in commands)


def test_every_linked_doc_exists():
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert links
    for link in links:
        assert (ROOT / link).is_file(), link


def test_nothing_names_a_package_index_entry_we_do_not_publish():
    texts = [README, *(p.read_text() for p in (ROOT / "docs").glob("*.md"))]
    texts += [p.read_text() for p in (ROOT / "colony_tasks").rglob("*.py")]
    for text in texts:
        assert not re.search(r"(pipx|uv tool|pip) install (--\S+ )*'?colony-tasks\b", text)
