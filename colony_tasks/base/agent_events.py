"""The agents' lifecycle events colony-tasks handles: our name for each (the argument of
``colony-tasks hook``) and the name Claude Code and Codex give it in their settings and
payloads (``hookEventName``). The one table the hook client, the installer and the core read.

No imports: the hook client reads it on every event.
"""

AGENT_EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "pre-tool-use": "PreToolUse",
    "post-tool-use": "PostToolUse",
    "post-tool-use-failure": "PostToolUseFailure",
    "subagent-start": "SubagentStart",
    "stop": "Stop",
    "stop-failure": "StopFailure",
    "notification": "Notification",
    "session-end": "SessionEnd",
}
