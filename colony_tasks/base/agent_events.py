"""The agents' events: one row per event colony-tasks handles, read by every layer that needs
to know an event.

- the hook client (:mod:`colony_tasks.hooks.payload`): which payload fields to pass on, whether
  the event carries a tool call, which tools edit, read, patch or run commands;
- the relay's apply (:mod:`colony_tasks.relay.apply`) and the use cases
  (:data:`colony_tasks.usecases.events.USE_CASES`, one use case per row): the fields and their
  defaults, and which events are applied exactly once;
- the hook's reply, the renderer and the team relay: which events never give the agent text;
- the installer (:mod:`colony_tasks.install.hookblock`): which agents have the event, under
  which name, and which tool names and notification types its matchers select.

Adding an event: a row here and its use case (with its entry in ``USE_CASES``).

No imports, not even ``typing`` (~1.5 ms): the hook client reads this module on every event.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Literal, TypeGuard

    #: What a tool call does, in the core's terms.
    ToolAction = Literal["edit", "read", "shell", "other"]

EDIT: Final = "edit"
READ: Final = "read"
SHELL: Final = "shell"
OTHER: Final = "other"
TOOL_ACTIONS = (EDIT, READ, SHELL, OTHER)


def is_tool_action(value: object) -> TypeGuard[ToolAction]:
    return value in TOOL_ACTIONS


#: The tools whose calls colony-tasks reads, by what they do (a payload's ``tool_name``), in
#: the order the installer's matchers name them. Claude Code's file tools name their file
#: (``file_path``, ``notebook_path``)...
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
#: ... Codex's ``apply_patch`` names its files in the patch body ...
PATCH_TOOLS = ("apply_patch",)
READ_TOOLS = ("Read",)
#: ... and a shell tool's files are found from what the command changed.
SHELL_TOOLS = ("Bash", "PowerShell", "shell", "exec_command")

#: Our own MCP tools, also when a plugin provides the server (mcp__plugin_<plugin>_<server>__...):
#: a call of one delivers what is addressed to the session mid-turn, like any tool call.
OUR_MCP_TOOLS = "mcp__(?:plugin_[A-Za-z0-9_-]*_)?colony-tasks__.+"

#: The notification types that mean a session waits on its human (Claude Code's idle or
#: permission prompt); other notifications are not installed for and never open the store.
WAITING_NOTIFICATIONS = ("idle_prompt", "permission_prompt")

CLAUDE, CODEX = "claude", "codex"
GEMINI, QWEN = "gemini", "qwen"


class ToolNames:
    """One agent's tool names by what they do (a payload's ``tool_name``): ``edit`` tools name
    their file, ``patch`` tools name theirs in the patch body, ``read`` and ``shell`` as said.
    Of the edit tools, ``writes`` write a whole file's ``content`` and ``replaces`` swap
    ``old_string`` for ``new_string``."""

    __slots__ = ("edit", "patch", "read", "shell", "writes", "replaces")

    def __init__(
        self,
        edit: tuple[str, ...],
        read: tuple[str, ...],
        shell: tuple[str, ...],
        *,
        patch: tuple[str, ...] = (),
        writes: tuple[str, ...] = (),
        replaces: tuple[str, ...] = (),
    ) -> None:
        self.edit = edit
        self.patch = patch
        self.read = read
        self.shell = shell
        self.writes = writes
        self.replaces = replaces


_CLAUDE_TOOLS = ToolNames(
    EDIT_TOOLS,
    READ_TOOLS,
    SHELL_TOOLS,
    patch=PATCH_TOOLS,
    writes=("Write",),
    replaces=("Edit", "MultiEdit"),
)
#: Per agent, its tools (an agent not listed: Claude Code's, which Codex shares). Gemini CLI
#: and Qwen Code name the file ``file_path`` (Gemini as the model wrote it, often relative to
#: the session's folder; the core resolves it against the event's ``cwd``).
AGENT_TOOLS = {
    CLAUDE: _CLAUDE_TOOLS,
    CODEX: _CLAUDE_TOOLS,
    GEMINI: ToolNames(
        ("write_file", "replace"),
        ("read_file",),
        ("run_shell_command",),
        writes=("write_file",),
        replaces=("replace",),
    ),
    QWEN: ToolNames(
        ("write_file", "edit", "notebook_edit"),
        ("read_file",),
        ("run_shell_command",),
        writes=("write_file",),
        replaces=("edit",),
    ),
}


def tools_of(agent: str) -> ToolNames:
    return AGENT_TOOLS.get(agent, _CLAUDE_TOOLS)


#: GitHub Copilot CLI (native camelCase hook files) and OpenCode (our generated JS plugin,
#: which sends Claude-like payloads): adapters at the edge, in :mod:`colony_tasks.hooks.dialects`.
COPILOT, OPENCODE = "copilot", "opencode"
#: Every agent a hook may name with ``--agent``.
AGENTS = (CLAUDE, CODEX, GEMINI, QWEN, COPILOT, OPENCODE)


class AgentEvent:
    """One agent event.

    ``slug`` is our name (the argument of ``colony-tasks hook``); ``names`` the name each agent
    that has the event gives it (its settings key and payload ``hook_event_name``); ``fields``
    the payload values the event passes on besides the session's, each ``(name, payload key,
    default)`` — a ``False`` default marks a flag (true only when the payload says ``true``);
    ``tool``: the event is about one tool call; ``quiet``: it never gives the agent text (so it
    is idempotent, and applied without an idempotency key). For the installer: ``matchers``, per
    agent, what the agent's matcher selects (tool names, notification types; none: everything),
    and ``timeout``, the seconds the agent allows the hook. ``owner``: the event establishes or
    checks which agent process owns the session, so the hook finds that process exactly (which
    may cost a ``ps`` call off Linux) rather than cheaply. ``keys``: per agent, a field read
    from another payload key than ``fields`` says (``{agent: {name: key}}``)."""

    __slots__ = (
        "slug",
        "names",
        "fields",
        "tool",
        "quiet",
        "matchers",
        "timeout",
        "owner",
        "keys",
    )

    def __init__(
        self,
        slug: str,
        names: dict[str, str],
        *,
        fields: tuple[tuple[str, str, str | bool], ...] = (),
        tool: bool = False,
        quiet: bool = False,
        matchers: dict[str, str] | None = None,
        timeout: int = 10,
        owner: bool = False,
        keys: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.slug = slug
        self.names = names
        self.fields = fields
        self.tool = tool
        self.quiet = quiet
        self.matchers = matchers or {}
        self.timeout = timeout
        self.owner = owner
        self.keys = keys or {}

    @property
    def agents(self) -> tuple[str, ...]:
        return tuple(self.names)

    def __repr__(self) -> str:
        return f"AgentEvent({self.slug!r})"


def _both(name: str) -> dict[str, str]:
    return {CLAUDE: name, CODEX: name}


def _alike(name: str, gemini: str) -> dict[str, str]:
    """Claude's and Codex's name for an event, Qwen Code's (the same) and Gemini CLI's."""
    return {**_both(name), QWEN: name, GEMINI: gemini}


def _tools_matcher(agent: str, *more: str) -> str:
    """An anchored matcher of the agent's edit, read and shell tools (and ``more``)."""
    tools = tools_of(agent)
    return f"^({'|'.join((*tools.edit, *tools.read, *tools.shell, *more))})$"


_EDITS = "|".join(EDIT_TOOLS)
#: Our MCP tools as Gemini CLI names them (``mcp_<server>_<tool>``); Qwen Code names them as
#: Claude Code does.
GEMINI_OUR_MCP_TOOLS = "mcp_colony-tasks_.+"

#: Every agent event, by our name, in the order the installer writes them. 10 s is above the
#: store's 5 s busy timeout, so a briefly locked database still answers.
EVENTS = {
    e.slug: e
    for e in (
        # No SessionStart matcher: every source (startup, resume, clear, compact, fork) counts.
        # Gemini CLI compares a lifecycle matcher by equality: none matches every source.
        AgentEvent(
            "session-start",
            {
                **_alike("SessionStart", "SessionStart"),
                COPILOT: "sessionStart",
                OPENCODE: "session.created",
            },
            fields=(("source", "source", "startup"),),
            owner=True,
        ),
        # Qwen Code fires it before every model call of a turn (after each tool batch too), the
        # user's own words only in ``submitted_prompt``: the others record no prompt.
        AgentEvent(
            "user-prompt-submit",
            {
                **_alike("UserPromptSubmit", "BeforeAgent"),
                COPILOT: "userPromptSubmitted",
                OPENCODE: "chat.message",
            },
            fields=(("prompt", "prompt", ""),),
            keys={QWEN: {"prompt": "submitted_prompt"}},
        ),
        # Before edits, and before shell commands: the hook notes the state of the files that
        # matter so the PostToolUse can tell which ones the command changed (shell_edits.py).
        # And before Claude's Read: one line when another session holds the file.
        AgentEvent(
            "pre-tool-use",
            {
                **_alike("PreToolUse", "BeforeTool"),
                COPILOT: "preToolUse",
                OPENCODE: "tool.execute.before",
            },
            tool=True,
            matchers={
                CLAUDE: f"{_EDITS}|Bash|Read",
                CODEX: "^(apply_patch|Bash)$",
                GEMINI: _tools_matcher(GEMINI),
                QWEN: _tools_matcher(QWEN),
            },
        ),
        # After edits and shell commands, and after our own MCP tools. Gemini CLI and Qwen Code
        # show the model nothing said before a tool: what was, is said after it (after reads
        # too, so a read's note is not held back to the next edit).
        AgentEvent(
            "post-tool-use",
            {
                **_alike("PostToolUse", "AfterTool"),
                COPILOT: "postToolUse",
                OPENCODE: "tool.execute.after",
            },
            tool=True,
            matchers={
                CLAUDE: f"^({_EDITS}|Bash|{OUR_MCP_TOOLS})$",
                CODEX: f"^(apply_patch|Bash|{OUR_MCP_TOOLS})$",
                GEMINI: _tools_matcher(GEMINI, GEMINI_OUR_MCP_TOOLS),
                QWEN: _tools_matcher(QWEN, OUR_MCP_TOOLS),
            },
        ),
        # Claude Code fires it instead of PostToolUse when a tool fails (a shell command that
        # exits non-zero may still have edited files); Codex fires PostToolUse.
        AgentEvent(
            "post-tool-use-failure",
            {
                CLAUDE: "PostToolUseFailure",
                QWEN: "PostToolUseFailure",
                COPILOT: "postToolUseFailure",
            },
            tool=True,
            matchers={CLAUDE: "^Bash$", QWEN: "^run_shell_command$"},
        ),
        # A subagent (Claude's Task/Agent tool, Codex's spawned agents) gets a brief of its own.
        AgentEvent(
            "subagent-start",
            {**_both("SubagentStart"), COPILOT: "subagentStart"},
            fields=(("agent_type", "agent_type", ""),),
        ),
        AgentEvent(
            "stop",
            {**_alike("Stop", "AfterAgent"), COPILOT: "agentStop", OPENCODE: "session.idle"},
            fields=(("active", "stop_hook_active", False),),
            quiet=True,
        ),
        # Claude Code: a turn cut off by the model API (rate limit, overloaded, ...), and the
        # session waiting on its human (idle or permission prompt); nothing reaches the model.
        AgentEvent(
            "stop-failure", {CLAUDE: "StopFailure"}, fields=(("error", "error", ""),), quiet=True
        ),
        AgentEvent(
            "notification",
            {CLAUDE: "Notification"},
            fields=(("notification_type", "notification_type", ""),),
            quiet=True,
            matchers={CLAUDE: f"^({'|'.join(WAITING_NOTIFICATIONS)})$"},
        ),
        # Claude allows SessionEnd hooks 1.5 s unless a settings file asks for more; Codex
        # caps at 3. Gemini CLI does not wait for it; Qwen Code's -p never fires it.
        AgentEvent(
            "session-end",
            {
                **_alike("SessionEnd", "SessionEnd"),
                COPILOT: "sessionEnd",
                OPENCODE: "session.deleted",
            },
            quiet=True,
            timeout=3,
            owner=True,
        ),
    )
}

#: Our event name -> Claude Code's and Codex's (``hookEventName``), which name each event alike;
#: :func:`event_name` gives any agent's.
AGENT_EVENTS = {slug: next(iter(e.names.values())) for slug, e in EVENTS.items()}


def event_name(slug: str, agent: str) -> str:
    """The agent's name for our event ``slug`` (Claude Code's for an agent without one)."""
    names = EVENTS[slug].names
    return names.get(agent) or AGENT_EVENTS[slug]
