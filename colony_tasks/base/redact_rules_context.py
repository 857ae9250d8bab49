"""The secret rules that know a secret by what surrounds it: an HTTP header, a URL, a
command-line flag, an assignment to a sensitive name in any of the formats agents read and
write. Data only, loaded by :mod:`colony_tasks.base.redact_rules` (which says what each column
means); they run after :mod:`colony_tasks.base.redact_rules_formats`, in this order: the generic
assignments last, skipping values an earlier rule already replaced.
"""

from __future__ import annotations

# A value that is code, not data: a boolean, None, a type name, a call or subscript
# (get_secret("x"), os.environ["X"]), or a name that ends in a sensitive word
# (args.password, db_password, cfg.api_token). Each word starts with a class, not a
# case-insensitive literal: `re` then tests the first character of every alternative in C,
# and a value fails the whole list in a few steps. Where a pattern says @CODE@ (see
# colony_tasks.base.redact_rules.CODE_CHECK), an assigned value must not be code.
CODE = (
    "(?:[tT](?i:rue|his)|[fF](?i:alse)|[nN](?i:one|ull|il)|[uU](?i:ndefined)"
    "|[sS](?i:tr(?:ing)?|elf|ecretstr)|[iI](?i:nt|nput|nherit)|[bB](?i:ool|ytes)"
    "|[oO](?i:ptional|s)|[aA](?i:ny)|[eE](?i:nv)|[pP](?i:rocess)|[gG](?i:et(?:env"
    r"|pass)))(?![\w-])|[A-Za-z_][\w.]{0,64}+[(\[]|[A-Za-z_][\w.]{0,64}+(?:"
    "(?<=[._]password)|(?<=[._]passwd)|(?<=[._]pwd)|(?<=[._]secret)|(?<=[._]token)"
    "|(?<=[._]key)|(?<=[._]PASSWORD)|(?<=[._]SECRET)|(?<=[._]TOKEN)"
    r"|(?<=[._]KEY))(?![^\s,;)\]}])"
)

# Building blocks of the rules (here and in redact_rules_formats): ``@NAME@`` in a pattern
# stands for FRAGMENTS[NAME], written out when the rules are loaded; a fragment may name an
# earlier one.
FRAGMENTS: dict[str, str] = {
    # A flag's value: quoted (spaces allowed, quotes replaced too) or one word.
    "VALUE": r"""(?:\"[^\"\n]*+\"?+|'[^'\n]*+'?+|[^\s\"'`]++)""",
    # A character of an unquoted value.
    "UNQUOTED": r"""[^\s\"'`,;)}\]]""",
    # Not a value already replaced, nor one that starts like a reference ($VAR, ${x},
    # {{ x }}, <x>, /path, ~/x), nor code (CODE, where @CODE@ stands).
    "NOT_CODE": r"(?!\[REDACTED)(?![$%&*{<@!|>#/\\~`)\],;}])(?!\.\.?+/)@NOT_PUBLIC@@CODE@",
    # Public by design, or a placeholder: a publishable key, an SSH public key, YOUR_TOKEN.
    "NOT_PUBLIC": (
        r"(?!pk_(?:live|test)_|pk\.eyJ|phc_|sb_publishable_|ssh-(?:ed25519|rsa|dss) "
        r"|ecdsa-sha2-|sk-ssh-|(?i:your)[_-]|xxxx|\*\*\*|\.\.\.)"
    ),
    # Building blocks for the assignment rules, which run on the lowercased text: a name
    # holding a sensitive word, an optional closing quote, a separator, then the value.
    # Every alternative starts with a literal, so `re` can skip ahead.
    "SEP": (
        r"""["']?+\]?+[ \t]{0,8}+(?>=(?![=~>])|:=|:(?!:)|=>|\?="""
        r"""|,(?=[ \t]{0,8}+["']))[ \t]{0,8}+(?:\(?+[ \t]{0,8}+\r?\n[ \t]{0,32}+"""
        r"""(?![\w.-]{1,80}+:(?![^ \t\n])))?+"""
    ),
    # Closes the kept group: a quote, b"…".
    "STRING_PREFIX": "(?:[bBrRuUfF]{0,2}+[\"'])?+)",
    # A strongly sensitive word (any value counts as a secret).
    "STRONG": (
        r"(?>(?i:pass(?:w(?:or)?d|phrase)|secret|credentials?|_p(?:ass(?!\w)|wd)"
        r"|-p(?:ass(?!\w)|wd)))"
    ),
    # The name just read ends in a sensitive word.
    "ENDS_SENSITIVE": (
        "(?>(?i:(?<=pass)|(?<=passwd)|(?<=password)|(?<=passphrase)|(?<=secret)"
        "|(?<=credentials)|(?<=pwd)|(?<=token)|(?<=key)))"
    ),
    # A sensitive word ends the flag's name: --password, --db-password, --api-key, --token.
    "FLAG": (
        "(?>(?i:(?<=password)|(?<=passwd)|(?<=passphrase)|(?<=secret)|(?<=token)|(?<=api-key)"
        "|(?<=apikey)|(?<=access-key)|(?<=auth-key)|(?<=cookie)|(?<=pass)))"
    ),
    # The value after a tool's short password flag.
    "TOOL_VALUE": r"""(?![\s-])(?![\"']?+\$)(?!\[REDACTED)@VALUE@""",
    # Not a segment of an ARN (arn:aws:secretsmanager:…:123456789012:secret:name); after
    # the word, so the pattern still starts with a literal `re` can jump between.
    "NOT_ARN": "(?<!aws:@WORD@)(?<!-cn:@WORD@)(?<!gov:@WORD@)(?<![0-9]:@WORD@)",
    # Not a policy number: password_min_length = 12, PASSWORD_MAX_AGE_DAYS=90. First the
    # cheap test that a separator follows the name (the rules that use this need one; the
    # name, at most 73 characters of [\w-], is read whole): most words are not assigned to,
    # and the policy test tries twenty words at each of forty places.
    "NOT_POLICY": (
        r"""(?=[\w-]{0,80}+["']?+\]?+[ \t]{0,8}+[=:?,])"""
        r"""(?![\w-]{0,40}?(?i:min|max|len|age|days|count|expir|histor|rounds|attempts|retries"""
        r"""|timeout|ttl|lifetime|complexity|policy|chars|digits|reuse|interval)[\w-]{0,40}+"""
        r"""["']?+[ \t]{0,8}+[=:][ \t]{0,8}+["']?+[0-9]{1,6}+(?![^\s"',;)}\]]))"""
    ),
    # The same for a YAML key read from its start: min_password_length: 10.
    "YAML_POLICY": (
        r"[\w.-]{0,40}?(?i:min|max|len|age|days|count|expir|histor|rounds|attempts|retries"
        r"|timeout|ttl|lifetime|complexity|policy|chars|digits|reuse|interval)[\w.-]{0,40}+"
        r":[ \t]{1,8}+[0-9]{1,6}+(?![^\s])"
    ),
    # Not an idempotency key (a request id, not a credential); after the word, like NOT_ARN.
    "NOT_ID": "(?<!dempotency-@WORD@)(?<!dempotency_@WORD@)(?<!DEMPOTENCY_@WORD@)",
    # The separator and a value of any length: to the closing quote when quoted (spaces
    # and all), else one word.
    "ANY_VALUE": (
        r"""@SEP@@STRING_PREFIX@@NOT_CODE@(?:(?<=")[^"\n]++|(?<=')[^'\n]++"""
        "|(?<![\"'])@UNQUOTED@++)"
    ),
    # The separator and a value of 8 characters or more, not only digits (the cheap
    # length test first: most near misses fail it).
    "LONG_VALUE": (
        r"""@SEP@@STRING_PREFIX@(?:(?<=["'])(?=[^"'\n]{8})|(?<!["'])(?=@UNQUOTED@{8}))"""
        r"""@NOT_CODE@(?:(?<=["'])[^"'\n]++|(?![0-9]{1,64}+(?![^\s"',;)}\]]))@UNQUOTED@++)"""
    ),
}

# (name, kind, triggers, pattern[, options]); see colony_tasks.base.redact_rules.
CONTEXT: tuple[tuple, ...] = (
    # -- HTTP -------------------------------------------------------------------------------
    (
        "authorization-header",
        "bearer-token",
        ("authorization",),
        r"""(?P<keep>@WORD@["']?+[ \t]{0,8}+[:=][ \t]{0,8}+["']?+(?i:(?:bearer|basic|token"""
        r"|digest|bot|apikey|sso-key|negotiate|ntlm)[ \t]{1,8}+)?+)"
        r"""(?!\[REDACTED)(?![<{$])(?!(?i:your)[_-])[^\s"'`,;]{4,}+""",
        {"spellings": ("authorization", "AUTHORIZATION", "Authorization")},
    ),
    (
        "bearer-token",
        "bearer-token",
        ("bearer",),
        r"(?P<keep>@WORD@[ \t]{1,8}+)(?!\[REDACTED)(?!(?i:your)[_-])[A-Za-z0-9._~+/-]{12,}+=*+",
        {"spellings": ("bearer", "BEARER", "Bearer")},
    ),
    (
        "cookie-header",
        "cookie",
        ("cookie",),
        r"""(?P<keep>@WORD@[ \t]{0,8}+:[ \t]{0,8}+)[^\r\n"']++""",
        {"spellings": ("cookie", "COOKIE", "Cookie")},
    ),
    # -- URLs -------------------------------------------------------------------------------
    # scheme://user:password@host and scheme://:password@host; the password may hold
    # '@' (the last '@' before the host ends it). The unbounded scans exclude '/', part of the
    # anchor; a password holding '/' is read by a bounded scan, unless what follows the user is
    # a port (host:8080/path@x is not a password).
    (
        "url-credentials",
        "password",
        ("://",),
        r"(?P<keep>://[^\s/:@]{0,128}+:)(?:(?:[^\s/@]*+@)++"
        r"|(?![0-9]{1,5}+/)[^\s@]{1,128}+@(?:[^\s/@]*+@)*+)",
        {"suffix": "@"},
    ),
    # The lookahead turns away a '?', '&' or ';' not followed by `name=` in one scan.
    (
        "url-query-secret",
        "secret",
        ("sig=", "signature=", "token=", "secret=", "password=", "key=", "credential=", "auth="),
        r"(?P<keep>[?&;](?=[\w-]{1,24}+=)(?i:x-amz-signature|x-amz-security-token"
        "|x-amz-credential|x-goog-signature|x-goog-credential|signature|sig|token"
        "|access_token|id_token|refresh_token|auth|api_key|apikey|key|secret|client_secret"
        r"""|password|passwd|pwd|code|credential)=)(?!\[REDACTED)[^&#\s\"'<>]++""",
    ),
    # -- command-line flags -----------------------------------------------------------------
    # The flag's name is one to four words ending in a sensitive one (--db-password,
    # not --password-stdin); the name's scan stops at "--", so runs of dashes cost nothing. The
    # name (at most 16 + 3 * 17 characters after "--") ends in a sensitive word (`within`).
    (
        "cli-password-flag",
        "password",
        ("--",),
        "(?P<keep>--(?<!---)[A-Za-z0-9]{1,16}+(?:[-_][A-Za-z0-9]{1,16}+){0,3}+@FLAG@(?:="
        r"|[ \t]{1,8}+))(?!-)(?!\[REDACTED)@VALUE@",
        {"needs": ("pass", "secret", "token", "key", "cookie"), "within": 72},
    ),
    # user:password — the ":" ends the user name: 6 + 8 + 1 + 128 characters on at most.
    (
        "cli-user-password",
        "password",
        ("-u", "--user"),
        r"""(?P<keep>-(?<![\w-]-)(?:u|-user)(?:[ \t]{1,8}+|=)[\"']?+[^\s:\"'@]{1,128}+:)"""
        r"""(?![0-9]{1,16}+(?![^\s\"']))(?!\[REDACTED)[^\s\"'`]++""",
        {"needs": (":",), "within": 150},
    ),
    # -- -p after a command known to take a password there ----------------------------------
    # mkdir -p, ssh -p are not: sshpass, `<tool> login` (docker, podman, helm registry, az, oc,
    # cf), mysql and mariadb clients, redis-cli -a. One literal anchor per rule; the scan to the
    # flag is bounded.
    (
        "cli-sshpass",
        "password",
        ("sshpass",),
        r"(?P<keep>sshpass[ \t]{1,8}+-p[ \t]{0,8}+)(?![\s-])(?!\[REDACTED)@VALUE@",
    ),
    (
        "cli-login-p",
        "password",
        ("login",),
        r"(?P<keep>login[^\n|;&]{0,32}? -p[ \t]{0,8}+)(?![\s-])(?!\[REDACTED)@VALUE@",
    ),
    (
        "cli-mysql-p",
        "password",
        ("mysql", "mariadb"),
        r"(?P<keep>m(?:ysql|ariadb)[^\n|;&]{0,32}? -p)(?![\s-])(?!\[REDACTED)@VALUE@",
        {"anchors": ("mariadb", "mysql"), "cased": True},
    ),
    (
        "cli-redis-a",
        "password",
        ("redis-cli",),
        r"(?P<keep>redis-cli[^\n|;&]{0,32}? -a[ \t]{1,8}+)(?![\s-])(?!\[REDACTED)@VALUE@",
    ),
    # -- password flags of common tools and credential pipes --------------------------------
    # A single-dash flag that takes a password (openssl -passin pass:…, keytool
    # -storepass …, -keypass, -srcstorepass); `env:`/`file:` sources and `-storepass:env` name
    # no password.
    (
        "cli-dash-pass",
        "password",
        ("-pass", "storepass", "keypass"),
        r"""(?P<keep>-(?<![\w-]-)(?:pass(?:in|out)?[ \t]{1,8}+[\"']?+pass:|(?:src|dest"""
        r"""|new)?(?:store|key)pass[ \t]{1,8}+|password[ \t]{1,8}+))(?!-)(?![\"']?+\$)"""
        r"(?!\[REDACTED)@VALUE@",
    ),
    # Tools whose password flag is a short one: sqlcmd/bcp/zip -P, 7z -p<pw>,
    # ldap* -w, smbclient -U user%pw, htpasswd -b file user pw. One rule per tool, each starting
    # with the tool's name (a literal `re` jumps between); the scan to the flag is bounded.
    (
        "cli-sqlcmd-password",
        "password",
        ("sqlcmd",),
        r"(?P<keep>sqlcmd[^\n|;&]{0,96}? -P[ \t]{1,8}+)@TOOL_VALUE@",
    ),
    (
        "cli-bcp-password",
        "password",
        ("bcp ",),
        r"(?P<keep>bcp [^\n|;&]{0,96}? -P[ \t]{1,8}+)@TOOL_VALUE@",
    ),
    (
        "cli-zip-password",
        "password",
        ("zip",),
        r"(?P<keep>zip[^\n|;&]{0,96}? -P[ \t]{1,8}+)@TOOL_VALUE@",
    ),
    ("cli-7z-password", "password", ("7z",), r"(?P<keep>7z[ar]?+[^\n|;&]{0,96}? -p)@TOOL_VALUE@"),
    (
        "cli-ldap-password",
        "password",
        ("ldap",),
        r"(?P<keep>ldap[a-z]{2,8}+[^\n|;&]{0,96}? -w[ \t]{1,8}+)@TOOL_VALUE@",
    ),
    (
        "cli-smbclient-password",
        "password",
        ("smbclient",),
        r"(?P<keep>smbclient[^\n|;&]{0,96}? (?:-U|--user)(?:="
        r"""|[ \t]{1,8}+)[\"']?+[^\s%\"']{1,128}+%)@TOOL_VALUE@""",
    ),
    (
        "cli-htpasswd-password",
        "password",
        ("htpasswd",),
        r"(?P<keep>htpasswd[ \t]{1,8}+-(?=[a-zA-Z]{0,5}b)[a-zA-Z]{1,6}+"
        r"(?:[ \t]{1,8}+-[a-zA-Z]{1,6}+){0,3}+[ \t]{1,8}+[^\s-][^\s]{0,255}+[ \t]{1,8}+[^\s]{1,128}+[ \t]{1,8}+)"
        "@TOOL_VALUE@",
    ),
    # Secret stores written from the command line: gh secret set --body, aws ssm
    # put-parameter --value, az keyvault secret set --value, aws secretsmanager create-secret
    # --secret-string.
    (
        "cli-secret-store",
        "secret",
        ("put-parameter", "secret set", "secrets set", "create-secret", "put-secret-value"),
        "(?P<keep>(?:put-parameter|secrets? set|create-secret"
        r"|put-secret-value)[^\n|;&]{0,160}? (?:--value|--body|-b|--secret-string)(?:="
        r"""|[ \t]{1,8}+))(?!-)(?![\"']?+\$)(?!\[REDACTED)@VALUE@""",
        {"anchors": ("create-secret", "put-", "secret"), "cased": True},
    ),
    # A password piped into a tool that reads it from stdin: echo pw | sudo -S, … |
    # docker login --password-stdin, … | base64, … | gcloud secrets … --data-file=-, … | chpasswd.
    (
        "cli-stdin-pipe",
        "password",
        ("stdin", "sudo -", "base64", "data-file", "chpasswd"),
        r"(?P<keep>(?:echo|printf)[ \t]{1,8}+(?:-[neE]{1,3}+[ \t]{1,8}+)?+"
        r"""(?:['\"]%s[^'\"\n]{0,8}+['\"][ \t]{1,8}+)?+)(?![\"']?+\$)(?!\[REDACTED)"""
        r"""(?:\"[^\"\n]{1,256}+\"|'[^'\n]{1,256}+'|[^\s\"'|;&$]{1,256}+)"""
        r"(?=[ \t]{0,8}+\|[ \t]{0,8}+(?:sudo[ \t]{1,8}+-[a-zA-Z]{0,4}+(?<=S)|chpasswd"
        r"|[^\n|;&]{0,96}?(?:--password-stdin|--pass-stdin|--data-file[= ]-"
        r"|base64(?![ \t]{1,8}+-d)|--stdin)))",
        {"anchors": ("echo", "printf"), "cased": True},
    ),
    # Flags whose value is user:password (skopeo --creds, curl --proxy-user, wget --http-user…).
    (
        "cli-creds-flag",
        "password",
        ("creds", "proxy-user"),
        r"(?P<keep>--(?:src-|dest-)?(?:creds|proxy-user)(?:[ \t]{1,8}+"
        r"""|=)[\"']?+[^\s:\"'@]{1,128}+:)(?![0-9]{1,16}+(?![^\s\"']))"""
        r"""(?!\[REDACTED)[^\s\"'`]++""",
    ),
    # -- assignments in formats without "=" or ":" ------------------------------------------
    # SQL: PASSWORD '…', IDENTIFIED BY '…' (or an unquoted word after IDENTIFIED BY).
    (
        "sql-password",
        "password",
        ("password '", 'password "', "identified by"),
        r"(?P<keep>(?i:password|identified[ \t]{1,8}+by)[ \t]{1,8}+)(?!\[REDACTED)"
        r"""(?:'[^'\n]{1,256}+'|\"[^\"\n]{1,256}+\"|(?<=[bB][yY] )[^\s;'\"]{1,256}+)""",
        {"anchors": ("identified", "password")},
    ),
    # .netrc: machine h login u password p (one line or several); "password" starts
    # at most 6 + 8 + 128 + 16 characters after "login" (`within`).
    (
        "netrc-password",
        "password",
        ("login",),
        r"(?P<keep>login[ \t]{1,8}+[^\s]{1,128}+\s{1,16}+password[ \t]{1,8}+)"
        r"(?!\[REDACTED)[^\s]++",
        {"needs": ("password",), "within": 160},
    ),
    # .pgpass: host:port:database:user:password (PostgreSQL's ports, or *).
    (
        "pgpass-line",
        "password",
        (":5432:", ":5433:", ":6432:", ":*:"),
        r"(?P<keep>:(?<=[\w*]:)(?:5432|5433|6432|\*):[^\s:]{1,63}+:[^\s:]{1,63}+:)"
        r"(?!\[REDACTED)[^\s]++",
    ),
    # XML: <password>…</password>, <db.password>.
    (
        "xml-password",
        "password",
        ("password>", "passwd>", "secret>", "token>", "pass>"),
        r"(?P<keep><[\w.:-]{0,40}+(?:(?<=[Pp]assword)|(?<=PASSWORD)|(?<=[Pp]asswd)"
        "|(?<=[Ss]ecret)|(?<=SECRET)|(?<=[Tt]oken)|(?<=TOKEN)|(?<=[Pp]ass)"
        r"|(?<=PASS))>)(?![$%]\{)(?!\[REDACTED)[^<\n]{1,512}+(?=</)",
    ),
    # XML: <add key="…Password" value="…"/>.
    (
        "xml-key-value",
        "password",
        ("value=",),
        r"""(?P<keep>key=[\"'][\w.:-]{0,64}+(?:(?<=[Pp]assword)|(?<=PASSWORD)|(?<=[Ss]ecret)"""
        r"""|(?<=SECRET)|(?<=[Tt]oken)|(?<=TOKEN))[\"'][ \t]{1,8}+value=[\"'])(?![$%]\{)"""
        r"""(?!\[REDACTED)[^\"'\n]++""",
    ),
    # Dockerfile ENV NAME value, csh setenv NAME value, Windows setx NAME value.
    (
        "env-keyword",
        "secret",
        ("env ", "setenv", "setx"),
        r"(?P<keep>(?:ENV|setenv|setx)[ \t]{1,8}+[\w.-]{0,64}+(?i:(?<=pass)|(?<=passwd)"
        "|(?<=password)|(?<=pwd)|(?<=_pw)|(?<=secret)|(?<=token)|(?<=key)|(?<=creds)"
        r"""|(?<=credentials))[ \t]{1,8}+)(?![\"']?+[$%])(?!\[REDACTED)"""
        r"""(?:\"[^\"\n]{1,256}+\"|'[^'\n]{1,256}+'|[^\s\"']++)""",
        {"anchors": ("ENV", "setenv", "setx"), "cased": True},
    ),
    # Setter calls with a literal: ds.setPassword("…"), user.set_secret('…').
    (
        "setter-call",
        "secret",
        (".set",),
        r"(?P<keep>\.set_?+(?i:pass(?:word|wd|phrase)?|secret|token|api_?key|credentials?"
        r"""|creds)[ \t]{0,8}+\([ \t]{0,8}+[\"'])(?!\[REDACTED)[^\"'\n]++""",
    ),
    # Tuple auth: auth=('user', 'password'), auth = ("user", "password"); "(" starts
    # at most 4 + 8 + 1 + 8 characters after "auth" (`within`).
    (
        "tuple-auth",
        "password",
        ("auth",),
        r"(?P<keep>auth[ \t]{0,8}+=[ \t]{0,8}+\([ \t]{0,8}+(?:'[^'\n]{0,128}+'"
        r"""|\"[^\"\n]{0,128}+\")[ \t]{0,8}+,[ \t]{0,8}+['\"])"""
        r"""(?!\[REDACTED)[^'\"\n]++""",
        {"needs": ("(",), "within": 24},
    ),
    # YAML block scalars under a sensitive key: `password: |` then indented lines; the
    # block indicator comes at most 20 + 12 + 40 + 1 + 8 characters after the word (`within`).
    (
        "yaml-block",
        "secret",
        ("pass", "pwd", "secret", "credential", "token"),
        r"(?P<keep>\n[ \t-]{0,32}+(?=[\w.-]{1,80}+:[ \t]{0,8}+[|>])[\w.-]{0,20}?(?>"
        "(?i:pass(?:w(?:or)?d|phrase)?|secret|credentials?|pwd"
        r"|token))[\w-]{0,40}+:[ \t]{0,8}+[|>][+-]?+[0-9]?+[ \t]{0,8}+)"
        r"(?:\r?\n[ \t]{1,64}+(?![\w.-]{1,80}+:(?![^ \t\n]))[^\n]++)++",
        {"needs": ("|", ">"), "within": 96},
    ),
    # -- assignments: NAME=value, "name": "value", name: value ------------------------------
    # One rule per sensitive word so each starts with a literal: `re` then jumps from one
    # occurrence of the word to the next instead of trying every position. Whatever precedes
    # the word (DB_, spring.datasource., "x-api-") stays visible. Strong words (pass, secret,
    # credential, pwd, pw, creds) take any value, one character or more; weaker words (token,
    # key, auth) a value of 8 characters or more, not only digits. Every separator holds "=",
    # ":" or "," at most 90 characters after the start of the sensitive word plus the word
    # itself (`within`): a suffix of the word (w(or)d, phrase: 6), a name part
    # ([A-Za-z0-9]{0,16}), up to three more ([_-][A-Za-z0-9]{1,16}: 51), a quote, eight blanks,
    # then "=", ":" or "?=" (the "=" second: 1) — 83, kept at 90.
    # Kubernetes env lists and the like: `- name: DB_PASSWORD` then `value: …`. The
    # name is read whole, then must end in a sensitive word (DB_PASSWORD, API_TOKEN,
    # STRIPE_SECRET_KEY; not SECRET_KEY_ID).
    (
        "name-value-pair",
        "secret",
        ("value:",),
        r"""(?P<keep>name:[ \t]{0,8}+[\"']?+[\w.-]{1,64}+"""
        r"""@ENDS_SENSITIVE@[\"']?+[ \t]{0,8}+\r?\n[ \t-]{0,32}+value:[ \t]{0,8}+)"""
        r"(?!\[REDACTED)[^\n]++",
    ),
    # YAML allows unquoted values with spaces: `password: correct horse battery staple`.
    # Anchored on the newline before the key (redact() puts one before the text). The lookahead
    # reads the key once and looks past it: most lines are not `key: value`, and only those are
    # searched for the start of the sensitive word (cheap), and only those holding it for a
    # policy word. The key ends in ":" at most 40 characters after its
    # sensitive word (12 at most; `within`).
    (
        "yaml-password",
        "secret",
        ("pass", "pwd", "secret", "credential"),
        r"""(?P<keep>\n[ \t-]{0,32}+(?=[\w.-]{1,80}+:[ \t]{1,8}+(?![\"']))"""
        r"""(?=[\w.-]{0,20}?(?i:pass|secret|credential|[_-]p))(?!@YAML_POLICY@)[\w.-]{0,20}?"""
        r"""@STRONG@[\w-]{0,40}+:[ \t]{1,8}+)(?![\"'])@NOT_CODE@[^\n]++""",
        {"needs": (":",), "within": 64},
    ),
    # Wi-Fi pre-shared keys: wpa_supplicant psk="…", NetworkManager psk=…, wpa_psk=…
    (
        "assignment-psk",
        "secret",
        ("psk",),
        "(?P<keep>@WORD@(?<![A-Za-z0-9]@WORD@)@ANY_VALUE@",
        {"spellings": ("psk", "PSK", "Psk"), "needs": ("=", ":"), "within": 24},
    ),
    # Terraform state and plan JSON: an output's "value" in the object that says
    # "sensitive": true (after the value, at most 256 characters on, in the same object).
    (
        "terraform-sensitive",
        "secret",
        ("sensitive",),
        r"""(?P<keep>"value":[ \t]{0,8}+")(?!\[REDACTED)[^"\n]{1,512}+"""
        r"""(?="[^{}]{0,256}?"sensitive":[ \t]{0,8}+true)""",
    ),
    (
        "assignment-pass",
        "secret",
        ("pass",),
        "(?P<keep>@WORD@@NOT_ARN@@NOT_POLICY@(?>(?i:w(?:or)?d|phrase|(?<=[_-]pass)"
        r"(?!\w)|(?<=[\n\t ]pass)(?=[ \t]{0,8}+=)))[A-Za-z0-9]{0,16}+(?:[_-][A-Za-z0-9]{1,16}+){0,3}+@ANY_VALUE@",
        {"spellings": ("pass", "PASS", "Pass"), "needs": ("=", ":", ","), "within": 94},
    ),
    (
        "assignment-secret",
        "secret",
        ("secret",),
        "(?P<keep>@WORD@@NOT_ARN@@NOT_POLICY@[A-Za-z0-9]{0,16}+(?:[_-][A-Za-z0-9]{1,16}+){0,3}+"
        "@ANY_VALUE@",
        {"spellings": ("secret", "SECRET", "Secret"), "needs": ("=", ":", ","), "within": 96},
    ),
    (
        "assignment-credential",
        "secret",
        ("credential",),
        "(?P<keep>@WORD@@NOT_ARN@(?i:s?)[A-Za-z0-9]{0,16}+(?:[_-][A-Za-z0-9]{1,16}+){0,3}+"
        "@ANY_VALUE@",
        {
            "spellings": ("credential", "CREDENTIAL", "Credential"),
            "needs": ("=", ":", ","),
            "within": 100,
        },
    ),
    (
        "assignment-pwd",
        "secret",
        ("pwd",),
        "(?P<keep>@WORD@@NOT_ARN@@NOT_POLICY@(?i:(?<![A-Za-z]pwd))[A-Za-z0-9]{0,16}+"
        "(?:[_-][A-Za-z0-9]{1,16}+){0,3}+@ANY_VALUE@",
        {"spellings": ("pwd", "PWD", "Pwd"), "needs": ("=", ":", ","), "within": 93},
    ),
    (
        "assignment-pw",
        "secret",
        ("pw",),
        "(?P<keep>@WORD@@NOT_ARN@(?i:(?<=[_.-]pw)(?![A-Za-z]))[A-Za-z0-9]{0,16}+"
        "(?:[_-][A-Za-z0-9]{1,16}+){0,3}+@ANY_VALUE@",
        {"spellings": ("pw", "PW", "Pw"), "needs": ("=", ":", ","), "within": 92},
    ),
    (
        "assignment-creds",
        "secret",
        ("creds",),
        "(?P<keep>@WORD@@NOT_ARN@[A-Za-z0-9]{0,16}+(?:[_-][A-Za-z0-9]{1,16}+){0,3}+@ANY_VALUE@",
        {"spellings": ("creds", "CREDS", "Creds"), "needs": ("=", ":", ","), "within": 95},
    ),
    (
        "assignment-token",
        "secret",
        ("token",),
        "(?P<keep>@WORD@@NOT_ID@(?:[_-][A-Za-z0-9]{1,16}+){0,3}+@LONG_VALUE@",
        {"spellings": ("token", "TOKEN", "Token"), "needs": ("=", ":", ","), "within": 95},
    ),
    (
        "assignment-key",
        "secret",
        ("key",),
        "(?P<keep>@WORD@@NOT_ID@(?>(?i:(?<=[_.-]key)|(?<=apikey)|(?<=authkey)|(?<=accesskey)"
        "|(?<=accountkey)|(?<=privatekey)|(?<=signingkey)|(?<=sessionkey)|(?<=secretkey)"
        "|(?<=clientkey)|(?<=masterkey)|(?<=encryptionkey)))(?:[_-][A-Za-z0-9]{1,16}+){0,3}+"
        "@LONG_VALUE@",
        {"spellings": ("key", "KEY", "Key"), "needs": ("=", ":", ","), "within": 93},
    ),
    (
        "assignment-auth",
        "secret",
        ("auth",),
        "(?P<keep>@WORD@(?:[_-][A-Za-z0-9]{1,16}+){0,3}+@LONG_VALUE@",
        {"spellings": ("auth", "AUTH", "Auth"), "needs": ("=", ":", ","), "within": 94},
    ),
)
