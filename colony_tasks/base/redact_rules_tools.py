"""The secret rules for passwords on the command lines of common tools, as one family: data
only, loaded by :mod:`colony_tasks.base.redact_rules` (which says what each column means).

A tool takes a password in one of a few shapes, and each shape is one rule over a table of
the tools that use it (adding a tool is a row, not a rule):

- a password-named flag in any prefix style: ``-pw x``, ``-pass x``, ``-password=x``,
  ``-passphrase x``, ``/p:x``, ``/pass:x`` (``--password`` is
  :mod:`~colony_tasks.base.redact_rules_context`'s);
- a short flag that is a password only for certain tools (``-p`` is a port for ssh and a
  parent for mkdir): :data:`SHORT_FLAGS` names the tools per letter;
- a positional password after a subcommand and a fixed number of words: :data:`POSITIONAL`;
- user and password in one argument: ``user/pw@db`` (Oracle's tools), ``-u user,pw`` (lftp),
  ``-U user%pw`` (Samba's tools).

Every rule starts with the tool's name or the flag's literal, and the scan from the name to the
flag stays on one command (no newline, ``|``, ``;`` or ``&``) and is bounded.
"""

from __future__ import annotations

# letter -> the tools that read a password after that short flag (mysql, redis-cli, sshpass,
# sqlcmd, bcp, zip, 7z, ldap* are in redact_rules_context, as before this table).
SHORT_FLAGS: dict[str, tuple[str, ...]] = {
    "p": (
        "cqlsh",
        "mongo",
        "mongosh",
        "mongodump",
        "mongorestore",
        "mongoexport",
        "mongoimport",
        "rabbitmqadmin",
        "psexec",
        "paexec",
        "hdbsql",
        "rdesktop",
        "smbmap",
        "crackmapexec",
        "netexec",
        "nxc",
        "evil-winrm",
        "hydra",
        "medusa",
        "useradd",
        "usermod",
    ),
    "P": (
        "mosquitto_pub",
        "mosquitto_sub",
        "mosquitto_rr",
        "ipmitool",
        "mssql-cli",
        "osql",
        "ssh-keygen",
    ),
    "N": ("ssh-keygen",),
    "a": ("redis-benchmark", "keydb-cli"),
    "w": ("vsql",),
    "k": ("openssl",),
}

# Tools whose password may come glued to the flag (-pSECRET): the flag stays, the rest goes.
GLUED: dict[str, tuple[str, ...]] = {"p": ("unrar", "rar")}

# A positional password: the tool and subcommand, then how many words come before it.
POSITIONAL: tuple[tuple[str, int], ...] = (
    ("rabbitmqctl add_user", 1),
    ("rabbitmqctl change_password", 1),
    ("rabbitmqctl authenticate_user", 1),
    ("net user", 1),
    ("mc alias set", 3),
    ("mc config host add", 3),
    ("mysqladmin password", 0),
    ("nmcli password", 0),
    ("db2 using", 0),
    ("redis-cli auth", 0),
)

# A tool's value: quoted, or one word; not a reference ($VAR, %VAR%), not already replaced.
_VALUE = r"""(?![\s-])(?![\"']?+[$%])(?!\[REDACTED)(?:\"[^\"\n]++\"?+|'[^'\n]++'?+|[^\s\"'`]++)"""
_ON_COMMAND = r"[^\n|;&]{0,160}?"
_WORD = r"""(?:\"[^\"\n]{0,32}+\"|'[^'\n]{0,32}+'|[^\s\"']{1,64}+)"""


def _shortest(words: tuple[str, ...]) -> tuple[str, ...]:
    """``words`` without those that start with another of them (found where it is)."""
    return tuple(
        sorted(w for w in set(words) if not any(w != v and w.startswith(v) for v in words))
    )


def _short_flag_rule(letter: str, tools: tuple[str, ...], glued: bool = False) -> tuple:
    names = "|".join(sorted(tools, key=len, reverse=True))
    flag = f"-{letter}(?:[ \\t]{{1,8}}+|=)" + ("?+" if glued else "")
    return (
        f"cli-short-{'upper-' if letter.isupper() else ''}{letter.lower()}{'-glued' if glued else ''}",
        "password",
        tuple(sorted({t.lower() for t in tools})),
        f"(?P<keep>(?<![\\w-])(?:{names})(?![\\w-]){_ON_COMMAND}[ \\t]{flag})" + _VALUE,
        {"anchors": _shortest(tools), "cased": True},
    )


def _positional_pattern() -> str:
    forms = []
    for command, skip in POSITIONAL:
        tool, sub = command.split(" ", 1)
        sub = sub.replace(" ", "[ \\t]{1,8}+")
        head = f"{tool}(?![\\w-])[^\\n|;&]{{0,32}}?[ \\t](?i:{sub})"
        forms.append(head + f"(?:[ \\t]{{1,8}}+{_WORD}){{{skip}}}")
    return f"(?P<keep>(?<![\\w-])(?>{'|'.join(forms)})[ \\t]{{1,8}}+)(?![/*])" + _VALUE


# (name, kind, triggers, pattern[, options]); see colony_tasks.base.redact_rules.
TOOLS: tuple[tuple, ...] = (
    # -pw, -pass, -passwd, -password, -passphrase (and = or a blank); /p:, /pw:, /pass:,
    # /password: (Windows tools). `env:`, `file:`, `fd:` and `stdin` name no password.
    (
        "cli-password-option",
        "password",
        ("-pw", "-pass", "/p:", "/pw", "/pass"),
        r"(?P<keep>(?:-(?<![\w-]-)(?:pw|pwd|pass|passwd|password|passphrase)(?:[ \t]{1,8}+|=)"
        r"|/(?<![\w/:.]/)(?:p|pw|pwd|pass|password):))"
        r"(?!(?:env|file|fd|pass):|stdin(?!\S))" + _VALUE,
        {"anchors": ("-pw", "-pass", "/p:", "/pw", "/pass"), "cased": True},
    ),
    *(_short_flag_rule(letter, tools) for letter, tools in SHORT_FLAGS.items()),
    *(_short_flag_rule(letter, tools, glued=True) for letter, tools in GLUED.items()),
    (
        "cli-positional-password",
        "password",
        (
            "rabbitmqctl",
            "net user",
            "mc alias",
            "mc config",
            "mysqladmin",
            "nmcli",
            "db2",
            "redis-cli",
        ),
        _positional_pattern(),
        {
            "anchors": tuple(sorted({command.split(" ")[0] for command, _ in POSITIONAL})),
            "cased": True,
        },
    ),
    # user/password@db after Oracle's tools and CONNECT; `/ as sysdba` has no user.
    (
        "cli-oracle-login",
        "password",
        ("sqlplus", "expdp", "impdp", "sqlldr", "rman", "dgmgrl", "exp ", "imp "),
        r"(?P<keep>(?<![\w-])(?i:sqlplus|expdp|impdp|sqlldr|rman|dgmgrl|exp|imp)"
        r"(?:[ \t]{1,8}+-[A-Za-z]{1,16}+){0,3}+[ \t]{1,8}+(?:(?i:target|auxiliary)=)?+"
        r"[\"']?+[A-Za-z][\w$#.]{0,63}+/)(?!\[REDACTED)[^\s/@\"']{1,128}+",
        {"anchors": ("sqlplus", "sqlldr", "rman", "dgmgrl", "exp", "imp")},
    ),
    # user and password in one argument: lftp -u user,pw; smbclient/rpcclient/net -U user%pw.
    (
        "cli-user-comma-password",
        "password",
        ("lftp",),
        r"(?P<keep>(?<![\w-])lftp(?![\w-])" + _ON_COMMAND + r"[ \t]-u[ \t]{1,8}+[\"']?+"
        r"[^\s,\"']{1,128}+,)" + _VALUE,
        {"anchors": ("lftp",), "cased": True},
    ),
    # npm/yarn/pnpm/git/poetry config set KEY VALUE, where KEY names a token or password.
    (
        "cli-config-set",
        "secret",
        ("config",),
        r"(?P<keep>(?<![\w-])config(?:[ \t]{1,8}+-{1,2}[\w-]{1,20}+){0,3}+(?:[ \t]{1,8}+set)?+"
        r"[ \t]{1,8}+[\"']?+[^\s=\"']{0,96}?(?i:token|_auth|password|passwd|secret|api[-_]?key)"
        r"[\"']?+[ \t]{1,8}+)(?!-)" + _VALUE,
        {
            "needs": ("token", "auth", "pass", "secret", "key"),
            "within": 200,
            "anchors": ("config",),
            "cased": True,
        },
    ),
)
