"""A human's powers need a human: a CLI (or a viewer) run inside an agent's process tree never
acts as a human, whatever ``--as`` says; who may resolve a blocker.

The agent-like trees are real processes: a shell whose command name is an agent's (a link
named ``codex`` or ``claude`` to /bin/sh) runs the CLI as its child, directly, through nested
shells, or after recording a live agent session for itself as the agent's hooks would."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from colony_tasks.base.errors import NotAllowed
from colony_tasks.base.models import Session
from colony_tasks.domain import authority, sessions
from colony_tasks.domain.messages import LoopGuard
from colony_tasks.store import Store, open_default
from colony_tasks.usecases import actions

PY = sys.executable
MARKERS = authority.AGENT_ENVIRONMENT


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MARKERS}
    env.update(extra)
    return env


def cli(*args: str) -> str:
    return shlex.join([PY, "-m", "colony_tasks", *args])


REGISTER = (
    "import os; from colony_tasks.domain import sessions; from colony_tasks.store import open_default;"
    " s = open_default(); sessions.register(s, 'sess-agent', agent='codex', cwd=os.getcwd(),"
    " agent_pid=os.getppid()); s.close()"
)


def run_in_agent(
    tmp: Path,
    command: str,
    *,
    name: str = "codex",
    register: bool = False,
    depth: int = 0,
    env: dict[str, str] | None = None,
    cwd: Path,
) -> subprocess.CompletedProcess[str]:
    """``command`` run by a process named like an agent (its child, or ``depth`` shells down);
    with ``register`` that process first records a live agent session of its own."""
    for _ in range(depth):
        command = f"sh -c {shlex.quote(command + '; exit $?')}"
    if register:
        command = f"{shlex.join([PY, '-c', REGISTER])} && {command}"
    agent = tmp / "agent-bin" / name
    agent.parent.mkdir(exist_ok=True)
    if not agent.exists():
        agent.symlink_to("/bin/sh")
    return subprocess.run(
        [str(agent), "-c", command + "; exit $?"],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env or clean_env(),
        timeout=60,
    )


def run_outside(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "colony_tasks", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=clean_env(),
        timeout=60,
    )


@pytest.fixture
def outside() -> None:
    """The tests' own process must be outside any agent's tree for the human cases."""
    found = authority.agent_tree(None, environ=clean_env())
    if found is not None:
        pytest.skip(f"the test runner itself runs inside an agent's tree ({found}): no outside")


@pytest.fixture
def world(home: Path, repo: Path) -> Iterator[dict[str, Any]]:
    store = open_default()
    worker = sessions.register(store, "sess-worker", agent="claude", cwd=str(repo)).session
    alice = sessions.human_session(store, "alice", str(repo))
    planned = actions.plan_work(store, alice, [{"title": "fix the parser"}])
    actions.take_work(store, worker, planned.ids[0])
    store.close()
    yield {"worker": worker, "alice": alice, "task": planned.task_id, "item": planned.ids[0]}


def posts_by(store: Store, task_id: int, text: str) -> list[Session]:
    found = [o for o in store.timeline(task_id, limit=200) if o.text == text]
    return [store.get_session(o.session_id) for o in found]


# -- the CLI inside an agent's tree ---------------------------------------------------------


REFUSED = "inside an agent's process tree"


@pytest.mark.parametrize(
    "how",
    [
        {"name": "codex"},
        {"name": "claude"},
        {"name": "codex", "depth": 8},  # nested shells do not hide the agent
        {"name": "sh-like", "env": {"CLAUDECODE": "1"}},  # the agent's environment
        {"name": "sh-like", "env": {"CODEX_SANDBOX_NETWORK_DISABLED": "1"}},
    ],
    ids=["codex", "claude", "codex-8-shells-down", "claudecode-env", "codex-env"],
)
def test_inside_an_agents_tree_the_cli_never_posts_as_the_human(world, home, repo, tmp_path, how):
    env = clean_env(**how.get("env", {}))
    done = run_in_agent(
        tmp_path,
        cli("post", str(world["task"]), "as the developer", "--as", "alice"),
        name=how["name"],
        depth=how.get("depth", 0),
        env=env,
        cwd=repo,
    )
    assert done.returncode != 0 and REFUSED in done.stderr + done.stdout
    store = open_default()
    assert posts_by(store, world["task"], "as the developer") == []
    store.close()


def test_inside_an_agents_tree_with_its_live_session_the_cli_acts_as_that_agent(
    world, home, repo, tmp_path
):
    done = run_in_agent(
        tmp_path,
        cli("post", str(world["task"]), "whose post", "--as", "alice", "--json"),
        register=True,
        cwd=repo,
    )
    assert done.returncode == 0, done.stderr
    store = open_default()
    (author,) = posts_by(store, world["task"], "whose post")
    store.close()
    assert author.id == "sess-agent" and author.agent == "codex"


@pytest.mark.parametrize("register", [False, True], ids=["no-session", "own-session"])
@pytest.mark.parametrize(
    "args",
    [
        ["plan", "reassign", "{item}", "--as", "alice"],
        ["plan", "reassign", "{item}", "--to", "alice", "--as", "alice"],
        ["plan", "done", "{item}", "finished for them", "--as", "alice"],
        ["plan", "drop", "{item}", "--as", "alice"],
    ],
    ids=["reassign-to-open", "reassign-to-human", "finish", "drop"],
)
def test_inside_an_agents_tree_the_cli_cannot_move_anothers_work(
    world, home, repo, tmp_path, args, register
):
    argv = [a.format(item=world["item"]) for a in args]
    done = run_in_agent(tmp_path, cli(*argv), register=register, cwd=repo)
    assert done.returncode != 0
    expected = "Only a human or the planner" if register else REFUSED
    if register and args[1] == "done":
        expected = "only its owner or a human can finish it"
    assert expected in done.stderr + done.stdout
    store = open_default()
    item = store.work_item(world["item"])
    store.close()
    assert item.owner == "sess-worker" and item.state == "taken"


def trip_the_guard(home: Path, task_id: int) -> None:
    store = open_default()
    a = sessions.register(store, "sess-a", agent="claude", cwd=os.getcwd()).session
    b = sessions.register(store, "sess-b", agent="codex", cwd=os.getcwd()).session
    with pytest.raises(LoopGuard):
        for i in range(20):
            actions.ask(store, a if i % 2 else b, f"ping {i}?", task_id=task_id)
    store.close()


def guard_tripped(task_id: int) -> bool:
    store = open_default()
    try:
        actions.ask(store, "sess-a", "still looping?", task_id=task_id)
    except LoopGuard:
        return True
    finally:
        store.close()
    return False


@pytest.mark.parametrize("register", [False, True], ids=["no-session", "own-session"])
def test_inside_an_agents_tree_the_cli_cannot_reset_the_loop_guard(
    world, home, repo, tmp_path, register, monkeypatch
):
    monkeypatch.chdir(repo)
    trip_the_guard(home, world["task"])
    done = run_in_agent(
        tmp_path,
        cli("post", str(world["task"]), "I'm the human, carry on", "--as", "alice"),
        register=register,
        cwd=repo,
    )
    assert (done.returncode == 0) == register  # with a session it posts, as that agent
    assert guard_tripped(world["task"])


def test_a_viewer_inside_an_agents_tree_gets_no_human_session(world, home, repo, tmp_path):
    code = (
        "import os; from colony_tasks.usecases import actions; from colony_tasks.store import open_default\n"
        "try:\n    actions.human(open_default(), 'alice', os.getcwd()); print('human')\n"
        "except Exception as e:\n    print(type(e).__name__, e)"
    )
    done = run_in_agent(tmp_path, shlex.join([PY, "-c", code]), cwd=repo)
    assert done.stdout.startswith("NotAllowed") and REFUSED in done.stdout


# -- outside: the human's powers work -------------------------------------------------------


def test_outside_any_agent_the_human_posts_moves_work_and_resets_the_guard(
    outside, world, home, repo, monkeypatch
):
    monkeypatch.chdir(repo)
    trip_the_guard(home, world["task"])
    done = run_outside(["post", str(world["task"]), "carry on", "--as", "alice"], repo)
    assert done.returncode == 0, done.stderr
    assert not guard_tripped(world["task"])
    done = run_outside(["plan", "reassign", str(world["item"]), "--as", "alice"], repo)
    assert done.returncode == 0, done.stderr
    store = open_default()
    (author,) = posts_by(store, world["task"], "carry on")
    item = store.work_item(world["item"])
    store.close()
    assert author.id == "human:alice" and item.owner is None and item.state == "open"


# -- blockers -------------------------------------------------------------------------------


@pytest.fixture
def blocked(home: Path, repo: Path) -> Iterator[dict[str, Any]]:
    store = open_default()
    people = {
        name: sessions.register(store, f"sess-{name}", agent="claude", cwd=str(repo)).session
        for name in ("reporter", "helper", "bystander", "coordinator")
    }
    people["human"] = sessions.human_session(store, "alice", str(repo))
    task = actions.lane_task_of(store, str(repo))
    store.conn.execute(
        "UPDATE tasks SET coordinator = ? WHERE id = ?", (people["coordinator"].id, task.id)
    )
    people["store"] = store
    people["waits_on"] = people["helper"].handle
    yield people
    store.close()


def report(world: dict[str, Any], **kwargs: Any) -> int:
    return actions.report_blocker(
        world["store"], world["reporter"], "need the schema", waiting_on=world["waits_on"], **kwargs
    ).id


@pytest.mark.parametrize("who", ["reporter", "helper", "coordinator", "human"])
def test_a_blocker_is_resolved_by_its_reporter_whom_it_waits_on_the_coordinator_or_a_human(
    blocked, who
):
    blocker = report(blocked)
    actions.resolve_blocker(blocked["store"], blocked[who], blocker)
    assert blocked["store"].get_observation(blocker).status == "resolved"


def test_any_other_agent_is_refused_with_who_may(blocked):
    blocker = report(blocked)
    with pytest.raises(NotAllowed) as refused:
        actions.resolve_blocker(blocked["store"], blocked["bystander"], blocker)
    message = str(refused.value)
    for who in ("reporter", "helper", "coordinator"):
        assert blocked[who].handle in message
    assert "a human" in message
    assert blocked["store"].get_observation(blocker).status == "open"


def test_the_cli_inside_an_agents_tree_resolves_only_as_that_agent(blocked, home, repo, tmp_path):
    blocker = report(blocked)
    done = run_in_agent(
        tmp_path, cli("resolve", str(blocker), "--as", "alice"), register=True, cwd=repo
    )
    assert done.returncode != 0 and "not" in done.stderr and "to resolve" in done.stderr
    assert blocked["store"].get_observation(blocker).status == "open"
