"""Re-brief after compaction for the clients beside Claude Code, with their real CLIs, offline.

Qwen Code fires SessionStart with ``source: compact`` after it compresses a session's history
and puts the hook's context into the session's system prompt: colony-tasks re-briefs there.
Copilot CLI compacts (``/compact``) without a session-start event after it (its sessionStart
sources are startup, resume and new; preCompact only runs before): the next request carries no
re-brief. OpenCode has no hook event either, but our plugin sees the compaction
(``experimental.compaction.autocontinue``, ``session.compacted``) and puts a re-brief into the
system text of the session's next request.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from colony_tasks.store import Store
from colony_tasks.usecases import actions

from .capabilities import record
from .model_server import ChatCompletionsServer, Step, call, context, say
from .test_lifecycle import held_by_another

pytestmark = pytest.mark.agents

DECISION = "Prices stay in cents from now on."
REBRIEF = "colony-tasks (re-brief: your context was reset)"
# What the scripted model reports as the history's size: past any context window Qwen Code
# assumes, so it compresses before its next request; the compression request reports nearly
# as much (Qwen Code keeps a summary only when the usage says it shrank the history).
HUGE = 2_000_000


class Compressing(ChatCompletionsServer):
    """Answers Qwen Code's compression request (it carries no tools) with a summary."""

    def side_reply(self, path, body):
        summary = "<state_snapshot>Looked at prices.py.</state_snapshot>"
        return self.stream(Step(text=summary, tokens=HUGE - 1000), body)


def decide(sandbox) -> str:
    holder = held_by_another(sandbox, "prices.py")
    store = Store(sandbox.data / "colony.db")
    actions.record_decision(store, "codex-holder", DECISION)
    store.close()
    return holder


def test_qwen_compressed_session_is_rebriefed_with_what_is_new(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("qwen")
    release = threading.Event()
    target = str(sandbox.repo / "prices.py")
    big = Step(tool="read_file", args={"file_path": target}, tokens=HUGE, gate=release)
    model = Compressing([big, call("read_file", file_path=target), say("Done.")])
    with model:
        run = sandbox.qwen(model, "Look around")
        big.wait_reached("Qwen Code's first request")
        holder = decide(sandbox)  # what happens while the session works: the re-brief tells it
        release.set()
        run.finish()

    assert any("<state_snapshot>" in str(e.body) for e in model.exchanges if e.step is None)
    me = sandbox.session("qwen")["handle"]
    first = context(model.main_requests()[0])
    assert f"colony-tasks: you are {me}" in first and REBRIEF not in first
    last = context(model.main_requests()[-1])
    assert f"{REBRIEF}: you are {me}" in last, run.output[-2000:]
    # Qwen Code's UserPromptSubmit before each model call already told it the decision.
    assert DECISION in last
    assert f"{holder} holds prices.py" in last
    version = sandbox.toolchain.version("qwen")
    record("qwen", version, "rebrief_compaction", "yes: SessionStart source=compact")


def _copilot_session_start_sources(sandbox) -> set[str]:
    """The ``source`` values of Copilot's session-start hook input, from the SDK types its
    package ships."""
    version = sandbox.toolchain.version("copilot")
    pkg = Path(sandbox.toolchain.bin_dir).parent.parent / "xdg-cache" / "copilot" / "pkg"
    (types,) = pkg.glob(f"*/{version}/copilot-sdk/types.d.ts")
    found = re.search(
        r"interface SessionStartHookInput extends BaseHookInput \{\s*source: ([^;]+);",
        types.read_text(),
    )
    assert found, "Copilot's SessionStartHookInput no longer names its sources"
    return set(re.findall(r'"(\w+)"', found.group(1)))


def test_copilot_compacted_session_is_not_rebriefed(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("copilot")
    first = ChatCompletionsServer([Step(text="Looked around. " * 3000, tokens=50_000)])
    with first:
        sandbox.copilot(first, "Look around").finish()
    decide(sandbox)
    compacting = ChatCompletionsServer([say("<summary>Looked around.</summary>")])
    with compacting:
        compacted = sandbox.copilot(compacting, "/compact", resume=True).finish()
    assert "Compacted conversation history" in compacted.output
    after = ChatCompletionsServer([say("Done.")])
    with after:
        sandbox.copilot(after, "What now?", resume=True).finish()

    request = context(after.main_requests()[0])
    assert REBRIEF not in request
    assert request.count(DECISION) == 1  # only as the next prompt's news
    assert "colony-tasks — since your last turn" in request
    sources = _copilot_session_start_sources(sandbox)
    assert "compact" not in sources and "startup" in sources
    record(
        "copilot",
        sandbox.toolchain.version("copilot"),
        "rebrief_compaction",
        f"no: no event after compaction (sessionStart sources: {', '.join(sorted(sources))})",
    )


def test_opencode_compacted_session_is_rebriefed_with_what_is_new(sandbox):
    sandbox.write("prices.py", "TAX = 0.19\n")
    sandbox.commit()
    sandbox.install("opencode")
    target = str(sandbox.repo / "prices.py")
    # Past the model's context limit (200k in the sandbox's config): OpenCode summarizes the
    # session (a request without tools) and goes on from the summary.
    gate = threading.Event()
    big = Step(tool="read", args={"filePath": target}, tokens=HUGE, gate=gate)
    model = ChatCompletionsServer([big, say("Done.")])
    with model:
        run = sandbox.opencode(model, "Look around")
        big.wait_reached("the first request")
        holder = decide(sandbox)
        gate.set()
        run.finish()

    me = sandbox.session("opencode")["handle"]
    first, after = model.main_requests()
    assert f"colony-tasks: you are {me}" in context(first)
    assert DECISION not in context(first)
    summaries = [e for e in model.exchanges if e.step is None and "<conversation>" in str(e.body)]
    assert len(summaries) == 1, "OpenCode did not compact"
    assert REBRIEF not in str(summaries[0].body)
    rebrief = context(after)
    assert rebrief.count(REBRIEF) == 1
    assert f"{holder} holds prices.py" in rebrief and DECISION in rebrief
    version = sandbox.toolchain.version("opencode")
    record(
        "opencode",
        version,
        "rebrief_compaction",
        "yes: our plugin re-briefs the next request after compaction (system text)",
    )


def _gemini_enum(sandbox, name: str) -> list[str]:
    """The values of one of Gemini CLI's enums (``var NAME = ... NAME2["X"] = "x" ...``), from
    its bundle."""
    bundle = Path(sandbox.toolchain.gemini).resolve().parent
    for chunk in sorted(bundle.glob("*.js")):
        found = re.search(
            rf"var {name} = .*?return {name}2;", chunk.read_text(errors="replace"), re.S
        )
        if found:
            return re.findall(rf'{name}2\["\w+"\] = "(\w+)"', found.group(0))
    raise AssertionError(f"Gemini CLI's bundle no longer defines {name}")


def test_gemini_has_no_event_after_compression(sandbox):
    """Gemini CLI's own code: PreCompress fires before a compression and its output is dropped
    (the call's value is not used); SessionStart has no source for a compression. So nothing
    can tell the session what it lost."""
    sources = _gemini_enum(sandbox, "SessionStartSource")
    assert "startup" in sources and "compact" not in sources
    assert "PreCompress" in _gemini_enum(sandbox, "HookEventName")
    bundle = Path(sandbox.toolchain.gemini).resolve().parent
    callers = [  # the hook system's own wrapper passes the value on; its callers drop it
        m.group(0)
        for chunk in bundle.glob("*.js")
        for m in re.finditer(
            r".{0,40}getHookSystem\(\)\?\.firePreCompressEvent\(", chunk.read_text()
        )
    ]
    assert callers
    assert all(
        re.fullmatch(r"\s*await \w+\.getHookSystem\(\)\?\.firePreCompressEvent\(", c)
        for c in callers
    )
    record(
        "gemini",
        sandbox.toolchain.version("gemini"),
        "rebrief_compaction",
        f"no: no event after compression (SessionStart sources: {', '.join(sorted(sources))})",
    )
