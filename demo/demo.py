"""``make demo``: two agents on one repository, driven through the real hook processes.

A Claude Code session and a Codex session work in a temporary git repository with a temporary
``COLONY_TASKS_HOME``; every step runs the installed ``colony-tasks hook`` command with the
payload the agent would send, and prints exactly what the agent is shown. Every process runs
inside the temporary repository. The store is kept afterwards (the last lines print the
command that opens the viewer on it); ``--discard`` deletes it instead.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
from contextlib import asynccontextmanager

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import TextContent

from colony_tasks.hooks.payload import EVENT_NAMES

EXE = os.path.join(os.path.dirname(sys.executable), "colony-tasks")


class Agent:
    """One simulated agent session that talks to colony-tasks only through hook processes."""

    def __init__(self, kind: str, session_id: str, cwd: str, home: str) -> None:
        self.kind, self.session_id, self.cwd, self.home = kind, session_id, cwd, home
        self.label = f"{kind} ({session_id})"

    def payload(self, event: str, **fields: object) -> dict[str, object]:
        data: dict[str, object] = {
            "session_id": self.session_id,
            "cwd": self.cwd,
            "hook_event_name": EVENT_NAMES[event],
        }
        if self.kind == "codex":
            data.update(transcript_path=None, model="gpt-5.5-codex", permission_mode="default")
            if event not in ("session-start", "session-end"):
                data["turn_id"] = "turn-1"
        else:
            data["transcript_path"] = f"/tmp/.claude/projects/demo/{self.session_id}.jsonl"
        data.update(fields)
        return data

    def hook(self, event: str, title: str, **fields: object) -> str:
        result = subprocess.run(
            [EXE, "hook", event, "--agent", self.kind],
            input=json.dumps(self.payload(event, **fields)).encode(),
            capture_output=True,
            env={**os.environ, "COLONY_TASKS_HOME": self.home},
            check=False,
            cwd=self.cwd,
        )
        shown = ""
        if result.stdout.strip():
            specific = json.loads(result.stdout)["hookSpecificOutput"]
            shown = specific.get("additionalContext") or specific.get(
                "permissionDecisionReason", ""
            )
        print(f"\n── {self.label} · {EVENT_NAMES[event]} · {title}")
        if shown:
            print(textwrap.indent(shown, "   │ "))
        else:
            print("   (nothing injected — exit 0, empty stdout)")
        return shown


def git(cwd: str, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "demo",
        "GIT_AUTHOR_EMAIL": "demo@example.com",
        "GIT_COMMITTER_NAME": "demo",
        "GIT_COMMITTER_EMAIL": "demo@example.com",
    }
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
    )


def make_repo(root: str) -> str:
    repo = os.path.join(root, "shop")
    os.makedirs(os.path.join(repo, "src"))
    with open(os.path.join(repo, "src", "retry.py"), "w") as handle:
        handle.write("def backoff(attempt):\n    return 2 ** attempt\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def replace(path: str, old: str, new: str) -> None:
    """What the agent's edit tool writes: ``old`` becomes ``new`` in the file."""
    with open(path) as handle:
        text = handle.read()
    with open(path, "w") as handle:
        handle.write(text.replace(old, new, 1))


def collision_scene(claude: Agent, codex: Agent, repo: str) -> None:
    target = os.path.join(repo, "src", "retry.py")
    print("\n=== Scene 1: two agents, one file ===")
    claude.hook("session-start", "Claude starts alone", source="startup")
    codex.hook("session-start", "Codex joins the same lane", source="startup")
    claude.hook(
        "user-prompt-submit",
        "Claude's first prompt (nothing new yet)",
        prompt="Add jitter to the retry backoff",
    )
    edit = {
        "file_path": target,
        "old_string": "2 ** attempt",
        "new_string": "2 ** attempt + jitter()",
    }
    claude.hook(
        "pre-tool-use",
        "Claude edits src/retry.py",
        tool_name="Edit",
        tool_input=edit,
        tool_use_id="toolu_1",
    )
    replace(target, "2 ** attempt", "2 ** attempt + jitter()")
    claude.hook(
        "post-tool-use",
        "edit recorded and auto-claimed",
        tool_name="Edit",
        tool_input=edit,
        tool_response={"filePath": target},
        tool_use_id="toolu_1",
    )
    patch = {
        "command": "*** Begin Patch\n*** Update File: src/retry.py\n@@\n"
        "-    return 2 ** attempt + jitter()\n+    return min(2 ** attempt, 60) + jitter()\n"
        "*** End Patch\n"
    }
    codex.hook(
        "pre-tool-use",
        "Codex is about to patch the same line: git would conflict",
        tool_name="apply_patch",
        tool_input=patch,
        tool_use_id="call_1",
    )
    replace(target, "2 ** attempt + jitter()", "min(2 ** attempt, 60) + jitter()")
    codex.hook(
        "post-tool-use",
        "Codex patched it anyway: already told, nothing more",
        tool_name="apply_patch",
        tool_input=patch,
        tool_response="Success. Updated: src/retry.py",
        tool_use_id="call_1",
    )
    claude.hook("user-prompt-submit", "Claude's next prompt: the delta", prompt="Now add tests")
    claude.hook("user-prompt-submit", "and the prompt after: silence", prompt="Run them")
    claude.hook("session-end", "Claude exits: its claims are released", reason="prompt_input_exit")
    codex.hook(
        "pre-tool-use",
        "Codex edits retry.py again: no warning now",
        tool_name="apply_patch",
        tool_input={
            "command": "*** Begin Patch\n*** Update File: src/retry.py\n@@\n"
            "-    return min(2 ** attempt, 60) + jitter()\n"
            "+    return min(2 ** attempt, 30) + jitter()\n*** End Patch\n"
        },
        tool_use_id="call_2",
    )


class Tools:
    """The real MCP server (``colony-tasks mcp`` over stdio), shared by the demo's agents.

    Both simulated agents are children of this one demo process, so they pass their handle as
    ``session_id``; a real agent's calls are matched to its session by process automatically.
    """

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def call(self, who: Agent, handle: str, tool: str, **args: object) -> dict:
        result = await self.session.call_tool(tool, {**args, "session_id": handle})
        first = result.content[0] if result.content else None
        text = first.text if isinstance(first, TextContent) else ""
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
        print(f"\n── {who.label} · MCP {tool}({shown})")
        print(textwrap.indent(("ERROR: " if result.is_error else "") + text, "   │ "))
        return {} if result.is_error else json.loads(text)


@asynccontextmanager
async def mcp_tools(home: str):
    params = StdioServerParameters(
        command=EXE, args=["mcp"], env={**os.environ, "COLONY_TASKS_HOME": home}, cwd=REPO
    )
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield Tools(session)


# Every process of the demo runs inside its own temporary repository, never in the caller's
# folder (a human's command there would add a lane, and a dependency index, for it).
REPO = ""


def cli(home: str, *args: str, cwd: str | None = None) -> str:
    # The demo plays the agents (their hooks and MCP server are its children) and the human.
    # A CLI inside an agent's process tree acts as that agent, so the human's commands start
    # outside it, as from a terminal of their own: a subshell starts the CLI in the background
    # and exits, leaving it to init; its output still comes back through the pipe.
    result = subprocess.run(
        ["sh", "-c", '("$@" &)', "sh", EXE, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLONY_TASKS_HOME": home},
        check=False,
        cwd=cwd or REPO,
    )
    out = (result.stdout + result.stderr).strip()
    print(f"\n── human (alice) · $ colony-tasks {' '.join(args)}")
    print(textwrap.indent(out, "   │ "))
    return out


def handle_of(home: str, session_id: str) -> str:
    data = json.loads(
        subprocess.run(
            [EXE, "sessions", "--json"],
            capture_output=True,
            text=True,
            env={**os.environ, "COLONY_TASKS_HOME": home},
            cwd=REPO,
        ).stdout
    )
    return next(s["handle"] for s in data if s["id"] == session_id)


async def chain_scene(claude: Agent, codex: Agent, repo: str, home: str) -> None:
    print("\n=== Scene 2: a chain — one speaker at a time, the human coordinates ===")
    claude.hook("session-start", "Claude starts a new session", source="startup")
    cl, cx = handle_of(home, claude.session_id), handle_of(home, codex.session_id)
    created = cli(home, "chain", "create", "Pick the cache eviction policy", "--as", "alice")
    chain_id = int(created.split("Created chain ", 1)[1].split()[0])
    cli(
        home,
        "chain",
        "add",
        str(chain_id),
        cx,
        "Propose an eviction policy for the API cache.",
        "--as",
        "alice",
    )
    async with mcp_tools(home) as tools:
        await tools.call(
            claude, cl, "chain_say", chain_id=chain_id, content="I think LRU is enough."
        )
        codex.hook(
            "post-tool-use",
            "Codex's next tool call: its turn arrives with the history",
            tool_name="Bash",
            tool_input={"command": "ls src"},
            tool_response="retry.py",
            tool_use_id="call_3",
        )
        await tools.call(
            codex,
            cx,
            "chain_say",
            chain_id=chain_id,
            content="LRU with a 10-minute TTL; hot keys are refreshed on read.",
        )
        cli(
            home,
            "chain",
            "add",
            str(chain_id),
            cl,
            "Do you agree with codex's proposal?",
            "--as",
            "alice",
        )
        claude.hook(
            "user-prompt-submit",
            "Claude's next prompt: its turn, with the full history",
            prompt="continue",
        )
        await tools.call(
            claude,
            cl,
            "chain_say",
            chain_id=chain_id,
            content="Agreed; the TTL should be configurable.",
        )
        cli(
            home,
            "chain",
            "pass",
            str(chain_id),
            cx,
            "Make the TTL configurable, then report.",
            "--as",
            "alice",
        )
        codex.hook(
            "user-prompt-submit",
            "Codex's next prompt: what it missed since it spoke",
            prompt="go on",
        )
        await tools.call(
            codex,
            cx,
            "chain_say",
            chain_id=chain_id,
            content="Done: CACHE_TTL_SECONDS, default 600.",
        )
        cli(home, "chain", "close", str(chain_id), "--as", "alice")
        cli(home, "chain", "show", str(chain_id))

        print("\n=== Scene 3: a broadcast question is answered once; a handoff moves claims ===")
        asked = await tools.call(
            claude, cl, "ask_question", question="Who knows why test_retry is flaky?"
        )
        await tools.call(
            codex,
            cx,
            "answer_question",
            question_id=asked["id"],
            answer="It sleeps on wall time; I will switch it to a fake clock.",
        )
        await tools.call(
            claude, cl, "answer_question", question_id=asked["id"], answer="Maybe the network?"
        )
        await tools.call(claude, cl, "claim_file", paths=["src/cache.py"], note="eviction work")
        handoff = await tools.call(
            claude,
            cl,
            "hand_off",
            to=cx,
            files=["src/cache.py"],
            summary="Implement the agreed LRU+TTL cache in src/cache.py.",
        )
        codex.hook(
            "user-prompt-submit",
            "Codex's next prompt: the handoff waits on it",
            prompt="what's next?",
        )
        await tools.call(codex, cx, "accept_handoff", handoff_id=handoff["id"])
        target = os.path.join(repo, "src", "cache.py")
        claude.hook(
            "pre-tool-use",
            "Claude edits src/cache.py after handing it off",
            tool_name="Write",
            tool_input={"file_path": target, "content": "..."},
            tool_use_id="toolu_9",
        )
        await plan_scene(tools, claude, codex, repo, home)


async def plan_scene(tools: Tools, claude: Agent, codex: Agent, repo: str, home: str) -> None:
    print("\n=== Scene 4: a plan — the human divides the work, the agents take and finish it ===")
    cl, cx = handle_of(home, claude.session_id), handle_of(home, codex.session_id)
    cli(home, "plan", "add", "Schema", "--files", "db/**", "--as", "alice", cwd=repo)
    cli(home, "plan", "add", "API", "--files", "src/api/**", "--as", "alice", cwd=repo)
    cli(home, "plan", "add", "Viewer", "--after", "1", "--after", "2", "--as", "alice", cwd=repo)
    first = await tools.call(claude, cl, "take_work")
    second = await tools.call(codex, cx, "take_work")
    await tools.call(claude, cl, "take_work")
    await tools.call(
        claude, cl, "finish_work", item_id=first["item"]["id"], summary="items table + index"
    )
    await tools.call(
        codex, cx, "finish_work", item_id=second["item"]["id"], summary="GET /items, POST /items"
    )
    claude.hook(
        "post-tool-use",
        "Claude asked for work earlier: the ready item reaches it mid-turn",
        tool_name="Bash",
        tool_input={"command": "pytest -q"},
        tool_response="4 passed",
        tool_use_id="toolu_10",
    )
    codex.hook("user-prompt-submit", "Codex's next prompt: the plan's progress", prompt="next?")
    cli(home, "plan", "show", cwd=repo)


def main(argv: list[str]) -> int:
    global REPO
    if not os.path.exists(EXE):
        print(f"{EXE} not found: run `make install` first.", file=sys.stderr)
        return 1
    discard = "--discard" in argv  # default: keep the store to look at afterwards
    root = tempfile.mkdtemp(prefix="colony-demo-")
    kept = False
    try:
        home = os.path.join(root, "home")
        repo = REPO = make_repo(root)
        print(f"colony-tasks demo — repository {repo}, data in {home}")
        claude = Agent("claude", "9f1c2d3e-claude", repo, home)
        codex = Agent("codex", "019a-codex-thread", repo, home)
        collision_scene(claude, codex, repo)
        claude = Agent("claude", "5b7e-claude-2", repo, home)
        anyio.run(chain_scene, claude, codex, repo, home)
        kept = not discard
    finally:
        if not kept:
            shutil.rmtree(root, ignore_errors=True)
    if kept:
        print(
            "\nThe demo's store is kept. Look at it in the viewer (Ctrl+C to stop):\n"
            f"  cd {shlex.quote(repo)} && COLONY_TASKS_HOME={shlex.quote(home)}"
            f" {shlex.quote(EXE)} viewer --open\n"
            f"Remove it with: rm -rf {shlex.quote(root)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
