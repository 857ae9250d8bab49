"""The secret rules :mod:`colony_tasks.base.redact` applies, as data.

Each :class:`Rule` names the kind of secret (the ``<kind>`` of ``[REDACTED:<kind>]``), the
lowercase substrings that must occur in a text before its pattern is compiled or run, and the
pattern. A group named ``keep`` is a readable prefix kept in the output (``password=``,
``Authorization: Bearer ``); everything else the pattern matches is replaced.

Token formats follow each provider's public documentation and the rule sets of gitleaks and
detect-secrets; the patterns are written anew for Python's ``re`` in a shape that cannot
backtrack (tests/support/redos.py proves it for every rule, tests/base/test_redaction_rules.py holds an
example per rule):

- a rule starts with a literal anchor (or a bounded head) and every quantifier in the head is
  bounded; per start position the matcher does a bounded amount of work;
- an unbounded repeat is either in the *tail* (only optional items follow it, so once reached
  the match succeeds and consumes what it scanned), or possessive over a class that excludes a
  character of every anchor (so scans from different start positions never overlap).

Order matters: provider formats first, then headers, URLs and flags, then generic assignments,
which skip values an earlier rule already replaced.
"""

from __future__ import annotations


class Rule:
    """One rule: ``name`` (unique; tests key their examples on it), ``kind`` (shown in
    ``[REDACTED:<kind>]``), ``triggers`` (lowercase substrings; the rule runs only if one
    occurs), ``pattern`` and ``suffix`` (literal text put back after the marker).

    ``needs`` and ``within``: for a rule whose trigger is common in ordinary text (``token``,
    ``key``, ``--``), lowercase substrings of which one must start less than ``within``
    characters after the start of an occurrence of the trigger — the separator of an
    assignment, the sensitive word of a flag — for a match to be possible at all. ``within``
    follows from the pattern's bounded head (each rule says how). This keeps a hook from
    compiling a pattern for prose that merely mentions a token or a key, and a long text full of
    the word from a pass that cannot match."""

    __slots__ = (
        "name",
        "kind",
        "triggers",
        "pattern",
        "suffix",
        "spellings",
        "skip_code",
        "prefixed",
        "needs",
        "within",
    )

    def __init__(
        self,
        name: str,
        kind: str,
        triggers: tuple[str, ...],
        pattern: str,
        suffix: str = "",
        spellings: tuple[str, ...] = (),
        needs: tuple[str, ...] = (),
        within: int = 0,
        scan: bool = False,
    ) -> None:
        self.name, self.kind, self.triggers = name, kind, triggers
        self.pattern, self.suffix, self.spellings = pattern, suffix, spellings
        self.needs, self.within = needs, within
        self.skip_code = CODE_CHECK in pattern
        # Starts with a literal (or ``scan``: its pattern finds candidates faster than its
        # triggers do): scanning a long text for it costs about what looking for a trigger
        # does, so redact() skips the trigger test on long texts.
        # (A spelled rule runs three patterns: testing its trigger first is cheaper.)
        body = pattern.removeprefix("(?P<keep>")
        special = set("\\()[]{}.^$|?*+@")
        self.prefixed = scan or (len(body) > 1 and not (set(body[:2]) & special))

    def __repr__(self) -> str:
        return f"Rule({self.name!r})"

    def sources(self, spelled: bool = True) -> list[str]:
        """The patterns to run: one per spelling of the anchor word and the code check in the
        pattern (``spelled``: fastest on a long text), or one with the word case-insensitive
        and no code check (fastest to compile)."""
        pattern = self.pattern.replace(CODE_CHECK, f"(?!{CODE})" if spelled else "")
        if not self.spellings:
            return [pattern]
        if not spelled:
            return [pattern.replace(WORD, f"(?i:{self.spellings[0]})")]
        return [pattern.replace(WORD, spelling) for spelling in self.spellings]


# The anchor word in a pattern, written out once per spelling (``spellings``). A pattern that
# starts with a literal lets ``re`` jump from one occurrence to the next, where a
# case-insensitive one tries every position (ten to twenty times slower on a long text). The
# rest of the pattern is case-insensitive: "passWord" is missed; "password", "PASSWORD",
# "Password" (and so "dbPassword", "DB_PASSWORD") are not.
WORD = "@WORD@"


def _spell(word: str) -> tuple[str, str, str]:
    return (word, word.upper(), word.capitalize())


# Building blocks for the assignment rules, which run on the lowercased text. A name holding
# a sensitive word, an optional closing quote, a separator, then the value. Values that are
# code rather than data (booleans, None, type names, calls, references like $VAR or {{ x }})
# are left alone. Every alternative starts with a literal, so `re` can skip ahead.
_SEP = (
    r"""["']?+\]?+[ \t]{0,8}+(?>=(?![=~>])|:=|:(?!:)|=>|\?=|,(?=[ \t]{0,8}+["']))"""
    r"""[ \t]{0,8}+(?:\([ \t]{0,8}+\r?\n[ \t]{0,32}+)?+"""
)
_STRONG = (
    r"(?>(?i:pass(?:w(?:or)?d|phrase)|secret|credentials?|_p(?:ass(?!\w)|wd)|-p(?:ass(?!\w)|wd)))"
)
# A value that is code, not data: a boolean, None, a type name, or a call or subscript
# (get_secret("x"), os.environ["X"]). The rules that assign values (``skip_code``) refuse it
# where the pattern says CODE_CHECK: in the patterns for long texts, in the pattern itself,
# so every match is replaced in C; on short texts, in Python per match, since the check
# doubles the time a pattern takes to compile and a hook compiles the rules it triggers.
# Each word starts with a class, not a case-insensitive literal: `re` then tests the first
# character of every alternative in C, and a value fails the whole list in a few steps.
CODE = (
    r"(?:[tT](?i:rue|his)|[fF](?i:alse)|[nN](?i:one|ull|il)|[uU](?i:ndefined)"
    r"|[sS](?i:tr(?:ing)?|elf|ecretstr)|[iI](?i:nt|nput|nherit)|[bB](?i:ool|ytes)"
    r"|[oO](?i:ptional|s)|[aA](?i:ny)|[eE](?i:nv)|[pP](?i:rocess)|[gG](?i:et(?:env|pass)))"
    r"(?![\w-])|[A-Za-z_][\w.]{0,64}+[(\[]"
    # a name that ends in a sensitive word (args.password, db_password, cfg.api_token)
    r"|[A-Za-z_][\w.]{0,64}+(?:(?<=[._]password)|(?<=[._]passwd)|(?<=[._]pwd)|(?<=[._]secret)"
    r"|(?<=[._]token)|(?<=[._]key)|(?<=[._]PASSWORD)|(?<=[._]SECRET)|(?<=[._]TOKEN)|(?<=[._]KEY))"
    r"(?![^\s,;)\]}])"
)
# Nor are values that start like a reference ($VAR, ${x}, {{ x }}, <x>, /path, ~/x).
CODE_CHECK = "@CODE@"
_NOT_CODE = r"(?!\[REDACTED)(?![$%&*{<@!|>#/\\~`)\],;}])(?!\.\.?+/)" + CODE_CHECK
_UNQUOTED = r"[^\s\"'`,;)}\]]"
# A flag's value: quoted (spaces allowed, quotes replaced too) or one word.
_VALUE = r"(?:\"[^\"\n]*+\"?+|'[^'\n]*+'?+|[^\s\"'`]++)"

_ENDS_SENSITIVE = (
    r"(?>(?i:(?<=pass)|(?<=passwd)|(?<=password)|(?<=passphrase)|(?<=secret)|(?<=credentials)"
    r"|(?<=pwd)|(?<=token)|(?<=key)))"
)
# A sensitive word ends the flag's name: --password, --db-password, --api-key, --token.
_FLAG = (
    r"(?>(?i:(?<=password)|(?<=passwd)|(?<=passphrase)|(?<=secret)|(?<=token)|(?<=api-key)"
    r"|(?<=apikey)|(?<=access-key)|(?<=auth-key)|(?<=cookie)|(?<=pass)))"
)

# Assignments, one rule per sensitive word so each starts with a literal: `re` then jumps
# from one occurrence of the word to the next instead of trying every position. Whatever
# precedes the word (DB_, spring.datasource., "x-api-") stays visible.
_STRING_PREFIX = r"""(?:[bBrRuUfF]{0,2}+["'])?+)"""  # closes the kept group: a quote, b"…"
_STRONG_WORDS = (  # any value, one character or more
    ("pass", r"(?>(?i:w(?:or)?d|phrase|(?<=[_-]pass)(?!\w)))"),
    ("secret", ""),
    ("credential", r"(?i:s?)"),
    ("pwd", r"(?i:(?<![A-Za-z]pwd))"),
    ("pw", r"(?i:(?<=[_.-]pw)(?![A-Za-z]))"),
    ("creds", ""),
)
_SOFT_WORDS = (  # weaker words: the value needs 8 characters and not only digits
    ("token", ""),
    (
        "key",
        r"(?>(?i:(?<=[_.-]key)|(?<=apikey)|(?<=authkey)|(?<=accesskey)|(?<=accountkey)"
        r"|(?<=privatekey)|(?<=signingkey)|(?<=sessionkey)|(?<=secretkey)|(?<=clientkey)"
        r"|(?<=masterkey)|(?<=encryptionkey)))",
    ),
    ("auth", ""),
)
# Every separator holds "=" or ":", at most _ASSIGNMENT_HEAD characters after the start of
# the sensitive word plus the word itself: a suffix of the word (w(or)d, phrase: 6), a name
# part ([A-Za-z0-9]{0,16}), up to three more ([_-][A-Za-z0-9]{1,16}: 51), a quote, eight
# blanks, then "=", ":" or "?=" (the "=" second: 1) — 83, kept at 90.
_SEPARATORS = ("=", ":", ",")
_ASSIGNMENT_HEAD = 90
_ASSIGNMENTS = tuple(
    Rule(
        f"assignment-{word}",
        "secret",
        (word,),
        r"(?P<keep>"
        + WORD
        # not a segment of an ARN (arn:aws:secretsmanager:…:123456789012:secret:name); after
        # the word, so the pattern still starts with a literal `re` can jump between
        + f"(?<!aws:{WORD})(?<!-cn:{WORD})(?<!gov:{WORD})(?<![0-9]:{WORD})"
        + rest
        + r"[A-Za-z0-9]{0,16}+(?:[_-][A-Za-z0-9]{1,16}+){0,3}+"
        + _SEP
        + _STRING_PREFIX
        + _NOT_CODE
        # to the closing quote when quoted (spaces and all), else one word
        + r"""(?:(?<=")[^"\n]++|(?<=')[^'\n]++|(?<!["'])"""
        + _UNQUOTED
        + r"++)",
        spellings=_spell(word),
        needs=_SEPARATORS,
        within=_ASSIGNMENT_HEAD + len(word),
    )
    for word, rest in _STRONG_WORDS
) + tuple(
    Rule(
        f"assignment-{word}",
        "secret",
        (word,),
        r"(?P<keep>"
        + WORD
        + rest
        + r"(?:[_-][A-Za-z0-9]{1,16}+){0,3}+"
        + _SEP
        + _STRING_PREFIX
        # the cheap length test first: most near misses fail it
        + r"""(?:(?<=["'])(?=[^"'\n]{8})|(?<!["'])(?="""
        + _UNQUOTED
        + r"{8}))"
        + _NOT_CODE
        + r"""(?:(?<=["'])[^"'\n]++|(?![0-9]{1,64}+(?![^\s"',;)}\]]))"""
        + _UNQUOTED
        + r"++)",
        spellings=_spell(word),
        needs=_SEPARATORS,
        within=_ASSIGNMENT_HEAD + len(word),
    )
    for word, rest in _SOFT_WORDS
)

# Tools whose password flag is a short one: sqlcmd/bcp/zip -P, 7z -p<pw>, ldap* -w,
# smbclient -U user%pw, htpasswd -b file user pw. One rule per tool, each starting with the
# tool's name (a literal `re` jumps between); the scan to the flag is bounded.
_TOOL_VALUE = r"(?![\s-])(?![\"']?+\$)(?!\[REDACTED)" + _VALUE
_TOOL_FLAGS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("sqlcmd", ("sqlcmd",), r"(?P<keep>sqlcmd[^\n|;&]{0,96}? -P[ \t]{1,8}+)"),
    ("bcp", ("bcp ",), r"(?P<keep>bcp [^\n|;&]{0,96}? -P[ \t]{1,8}+)"),
    ("zip", ("zip",), r"(?P<keep>zip[^\n|;&]{0,96}? -P[ \t]{1,8}+)"),
    ("7z", ("7z",), r"(?P<keep>7z[ar]?+[^\n|;&]{0,96}? -p)"),
    ("ldap", ("ldap",), r"(?P<keep>ldap[a-z]{2,8}+[^\n|;&]{0,96}? -w[ \t]{1,8}+)"),
    (
        "smbclient",
        ("smbclient",),
        r"(?P<keep>smbclient[^\n|;&]{0,96}? (?:-U|--user)(?:=|[ \t]{1,8}+)[\"']?+[^\s%\"']{1,128}+%)",
    ),
    (
        "htpasswd",
        ("htpasswd",),
        r"(?P<keep>htpasswd[ \t]{1,8}+-(?=[a-zA-Z]{0,5}b)[a-zA-Z]{1,6}+(?:[ \t]{1,8}+-[a-zA-Z]{1,6}+){0,3}+"
        r"[ \t]{1,8}+[^\s-][^\s]{0,255}+[ \t]{1,8}+[^\s]{1,128}+[ \t]{1,8}+)",
    ),
)

# Provider token formats with a literal prefix, measured against gitleaks' provider list
# (tests/base/test_redaction_providers.py); each pattern written here from the documented shape.
# A token is followed by no further character of its alphabet.
_PROVIDERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("1password-token", ("ops_eyj",), r"ops_eyJ[A-Za-z0-9+/]{100,}+={0,3}+"),
    (
        "1password-secret-key",
        ("a3-",),
        r"A3-(?<![A-Za-z0-9+/]A3-)[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
    ),
    ("adobe-secret", ("p8e-",), r"p8e-[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
    ("age-secret-key", ("age-secret-key-1",), r"AGE-SECRET-KEY-1[02-9ac-hj-np-zAC-HJ-NP-Z]{58}"),
    ("artifactory-key", ("akcp",), r"AKCp(?<![A-Za-z0-9+/]AKCp)[A-Za-z0-9]{69}(?![A-Za-z0-9])"),
    (
        "artifactory-reference",
        ("cmvmd",),
        r"cmVmd(?<![A-Za-z0-9+/]cmVmd)[A-Za-z0-9]{59}(?![A-Za-z0-9])",
    ),
    ("atlassian-token", ("atatt3",), r"ATATT3(?<![A-Za-z0-9+/]ATATT3)[A-Za-z0-9_=-]{100,}+"),
    ("clickhouse-secret", ("4b1d",), r"4b1d(?<![A-Za-z0-9]4b1d)[A-Za-z0-9]{38}(?![A-Za-z0-9])"),
    ("clojars-token", ("clojars_",), r"CLOJARS_(?<![A-Za-z0-9]CLOJARS_)[A-Za-z0-9]{60}"),
    ("cloudflare-origin-ca", ("v1.0-",), r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    ("databricks-token", ("dapi",), r"dapi[a-f0-9]{32}(?:-[0-9])?+(?![A-Za-z0-9])"),
    ("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"do[opr]_v1_[a-f0-9]{64}"),
    ("doppler-token", ("dp.",), r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_-]{40,}+"),
    ("duffel-token", ("duffel_",), r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}"),
    ("dynatrace-token", ("dt0c01.",), r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    ("easypost-token", ("ezak", "eztk"), r"EZ[AT]K(?<![A-Za-z0-9+/]EZ[AT]K)[A-Za-z0-9]{54}"),
    (
        "facebook-token",
        ("eaam", "eaac", "eaaa"),
        r"EAA[ACM](?<![A-Za-z0-9+/]EAA[ACM])[A-Za-z0-9_-]{30,}+",
    ),
    (
        "flutterwave-key",
        ("flwseck", "flwpubk"),
        r"FLW(?:SECK|PUBK)(?:_TEST)?+-[A-Za-z0-9]{12,}+(?:-X)?+",
    ),
    (
        "flyio-token",
        ("fo1_", "fm1", "fm2_"),
        r"f(?:o1_[A-Za-z0-9_-]{43}|m(?:1[ar]|2)_[A-Za-z0-9+/]{100,}+={0,3}+)",
    ),
    ("frameio-token", ("fio-u-",), r"fio-u-[A-Za-z0-9_=-]{64}"),
    ("gitlab-session", ("_gitlab_session=",), r"(?P<keep>_gitlab_session=)[0-9a-z]{32}"),
    (
        "grafana-token",
        ("glc_", "glsa_", "eyjrijoi"),
        r"(?:glc_[A-Za-z0-9+/]{32,}+={0,3}+|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,}+={0,3}+)",
    ),
    (
        "harness-token",
        ("pat.", "sat."),
        r"[ps]at\.(?<![A-Za-z0-9][ps]at\.)[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
    ),
    ("terraform-token", (".atlasv1.",), r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}+"),
    ("heroku-token", ("hrku-",), r"HRKU-(?<![A-Za-z0-9+/]HRKU-)[A-Za-z0-9_-]{30,}+"),
    ("infracost-token", ("ico-",), r"ico-(?<![A-Za-z0-9]ico-)[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
    ("intra42-secret", ("s-s4t2",), r"s-s4t2(?:ud|af)-[a-f0-9]{64}"),
    ("linear-token", ("lin_api_", "lin_oauth_"), r"lin_(?:api|oauth)_[A-Za-z0-9]{40,}+"),
    ("maxmind-key", ("_mmk",), r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![A-Za-z0-9])"),
    ("newrelic-key", ("nrak-", "nrii-", "nrjs-", "nraa-"), r"NR(?:AK|II|JS|AA)-[A-Za-z0-9-]{19,}+"),
    ("notion-token", ("ntn_",), r"ntn_[0-9]{11}[A-Za-z0-9]{32,}+"),
    ("octopus-key", ("api-",), r"API-(?<![A-Za-z0-9-]API-)[A-Z0-9]{26}(?![A-Za-z0-9])"),
    ("openshift-token", ("sha256~",), r"sha256~[A-Za-z0-9_-]{43}"),
    ("planetscale-token", ("pscale_",), r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}+"),
    ("postman-key", ("pmak-",), r"PMAK-(?<![A-Za-z0-9+/]PMAK-)[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),
    ("prefect-key", ("pnu_",), r"pnu_[A-Za-z0-9]{36}"),
    ("pulumi-token", ("pul-",), r"pul-(?<![A-Za-z0-9]pul-)[a-f0-9]{40}"),
    ("readme-key", ("rdme_",), r"rdme_[a-z0-9]{70}"),
    ("rubygems-key", ("rubygems_",), r"rubygems_[a-f0-9]{48}"),
    ("scalingo-token", ("tk-us-",), r"tk-us-[A-Za-z0-9_-]{48}"),
    ("sentry-token", ("sntryu_", "sntrys_"), r"sntry[us]_[A-Za-z0-9+/=_]{60,}+"),
    ("settlemint-token", ("sm_aat_", "sm_pat_", "sm_sat_"), r"sm_[aps]at_[A-Za-z0-9]{16}"),
    ("shippo-token", ("shippo_",), r"shippo_(?:live|test)_[a-fA-F0-9]{40}"),
    ("sourcegraph-token", ("sgp_",), r"sgp_(?:[a-fA-F0-9]{16}_|local_)?+[a-fA-F0-9]{40}"),
    ("typeform-token", ("tfp_",), r"tfp_[A-Za-z0-9_.=-]{40,}+"),
    ("vault-token", ("hvs.", "hvb.", "hvr."), r"hv[sbr]\.[A-Za-z0-9_-]{90,}+"),
    (
        "yandex-key",
        ("aqvn", "t1."),
        r"(?:AQVN(?<![A-Za-z0-9+/]AQVN)[A-Za-z0-9_-]{35,38}+|t1\.[A-Za-z0-9_-]{20,200}+={0,2}+\.[A-Za-z0-9_-]{86})",
    ),
    ("alibaba-key", ("ltai",), r"LTAI(?<![A-Za-z0-9+/]LTAI)[A-Za-z0-9]{20}(?![A-Za-z0-9])"),
    ("mapbox-secret", ("sk.eyj",), r"sk\.eyJ[A-Za-z0-9_-]{20,}+\.[A-Za-z0-9_-]{20,}+"),
    ("mailgun-pubkey", ("pubkey-",), r"pubkey-[a-f0-9]{32}"),
    (
        "authress-key",
        (".acc_", ".acc-"),
        r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}+\.[A-Za-z0-9]{4,6}+\.acc[_-][A-Za-z0-9-]{10,32}+\.[A-Za-z0-9+/_=-]{30,120}+",
    ),
    ("square-secret", ("sq0csp-", "sq0idp-"), r"sq0(?:csp|idp)-[A-Za-z0-9_-]{22,}+"),
    ("anthropic-admin-key", ("sk-ant-admin",), r"sk-ant-admin[0-9]{2}-[A-Za-z0-9_-]{20,}+"),
)

RULES: tuple[Rule, ...] = (
    # -- private keys (a block with no END drops the rest of the text) --------------------------
    Rule(
        "pem-private-key",
        "private-key",
        ("private key",),
        r"-----BEGIN[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[^-]++|-(?!----END))*+(?:-----END[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----)?",
    ),
    Rule(
        "putty-private-key",
        "private-key",
        ("private-lines:",),
        r"(?P<keep>Private-Lines:[ \t]{0,4}+\d{1,4}+)(?:\r?\n[A-Za-z0-9+/=]++(?![^\r\n]))*+",
    ),
    # -- cloud ----------------------------------------------------------------------------------
    Rule(
        "aws-access-key",
        "aws-access-key",
        ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "apka"),
        r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|APKA)[A-Z2-7]{16}(?![A-Za-z0-9])",
        # eleven trigger scans cost 5 ms per MB of ordinary text, the pattern's own 0.6 ms
        scan=True,
    ),
    Rule(
        "aws-secret-key",
        "aws-secret-key",
        ("secret_access_key", "secretaccesskey", "aws_secret_key", "secret-access-key"),
        r"(?P<keep>"
        + WORD
        + r"(?i:[_-]?access[_-]?key|_key(?<=aws_secret_key))(?:"
        + _SEP
        + r"""|[ \t]{1,8}+)["']?+)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])""",
        spellings=_spell("secret"),
    ),
    Rule(
        "aws-session-token",
        "aws-session-token",
        ("session_token", "sessiontoken", "security-token", "security_token"),
        r"(?P<keep>" + WORD + r"(?i:ssion_?token|curity[-_]token)" + _SEP + r"""["']?+)"""
        r"[A-Za-z0-9/+=]{16,}+",
        spellings=("se", "SE", "Se"),
    ),
    Rule("gcp-api-key", "google-api-key", ("aiza",), r"AIza[0-9A-Za-z_-]{35}"),
    Rule("gcp-oauth-secret", "google-oauth-secret", ("gocspx-",), r"GOCSPX-[A-Za-z0-9_-]{20,}+"),
    Rule("gcp-oauth-token", "google-oauth-token", ("ya29.",), r"ya29\.[A-Za-z0-9_-]{20,}+"),
    Rule("gcp-refresh-token", "google-oauth-token", ("1//0",), r"1//0[A-Za-z0-9_-]{30,}+"),
    Rule(
        "azure-storage-key",
        "azure-key",
        ("accountkey",),
        r"(?P<keep>" + WORD + r"[ \t]{0,4}+=[ \t]{0,4}+)[A-Za-z0-9+/]{20,}+={0,2}+",
        spellings=("AccountKey", "accountkey", "ACCOUNTKEY"),
    ),
    Rule(
        "azure-shared-access-key",
        "azure-key",
        ("sharedaccesskey",),
        r"(?P<keep>" + WORD + r"[ \t]{0,4}+=[ \t]{0,4}+)"
        r"[A-Za-z0-9+/]{20,}+={0,2}+",
        spellings=("SharedAccessKey", "sharedaccesskey", "SHAREDACCESSKEY"),
    ),
    Rule(
        "azure-client-secret",
        "azure-client-secret",
        ("q~",),
        r"Q~(?<=[A-Za-z0-9_~.-]{3}[0-9]Q~)[A-Za-z0-9_~.-]{31,34}+",
    ),
    # -- VCS and package registries -------------------------------------------------------------
    Rule(
        "github-token",
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        r"gh[pousr]_[A-Za-z0-9]{30,}+",
    ),
    Rule("github-fine-grained", "github-token", ("github_pat_",), r"github_pat_[A-Za-z0-9_]{30,}+"),
    Rule(
        "gitlab-token",
        "gitlab-token",
        (
            "glpat-",
            "gldt-",
            "glrt-",
            "glptt-",
            "glcbt-",
            "gloas-",
            "glft-",
            "glsoat-",
            "glffct-",
            "glimt-",
            "glagent-",
        ),
        r"gl(?:pat|dt|rt|ptt|cbt|oas|ft|soat|ffct|imt|agent)-[A-Za-z0-9_.-]{20,}+",
    ),
    Rule("gitlab-runner", "gitlab-token", ("gr1348941",), r"GR1348941[A-Za-z0-9_-]{20,}+"),
    Rule("npm-token", "npm-token", ("npm_",), r"npm_[A-Za-z0-9]{36,}+"),
    Rule("pypi-token", "pypi-token", ("pypi-",), r"pypi-AgE[A-Za-z0-9_-]{50,}+"),
    Rule("huggingface-token", "huggingface-token", ("hf_",), r"hf_[A-Za-z0-9]{30,}+"),
    Rule("huggingface-org", "huggingface-token", ("api_org_",), r"api_org_[A-Za-z0-9]{30,}+"),
    Rule("docker-pat", "docker-token", ("dckr_pat_",), r"dckr_pat_[A-Za-z0-9_-]{20,}+"),
    # -- AI providers ---------------------------------------------------------------------------
    Rule("anthropic-key", "anthropic-key", ("sk-ant-",), r"sk-ant-[A-Za-z0-9_-]{16,}+"),
    Rule(
        "openai-key",
        "openai-key",
        ("sk-",),
        r"sk-(?<![\w-]sk-)(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_-]{20,}+",
    ),
    Rule("groq-key", "groq-key", ("gsk_",), r"gsk_[A-Za-z0-9]{40,}+"),
    Rule("replicate-token", "replicate-token", ("r8_",), r"r8_[A-Za-z0-9]{30,}+"),
    Rule("perplexity-key", "perplexity-key", ("pplx-",), r"pplx-[A-Za-z0-9]{40,}+"),
    Rule("xai-key", "xai-key", ("xai-",), r"xai-[A-Za-z0-9]{60,}+"),
    Rule("langsmith-key", "langsmith-key", ("lsv2_",), r"lsv2_(?:pt|sk)_[A-Za-z0-9_]{30,}+"),
    # -- chat and webhooks ----------------------------------------------------------------------
    Rule("slack-token", "slack-token", ("xox",), r"xox[abposre]-[A-Za-z0-9-]{10,}+"),
    Rule("slack-app-token", "slack-token", ("xapp-",), r"xapp-[0-9]-[A-Za-z0-9-]{10,}+"),
    Rule(
        "slack-webhook",
        "slack-webhook",
        ("hooks.slack.com",),
        r"(?P<keep>hooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9/_-]++",
    ),
    Rule(
        "discord-webhook",
        "discord-webhook",
        ("discord",),
        r"(?P<keep>discord(?:app)?\.com/api/webhooks/)[0-9]{5,}+/[A-Za-z0-9_-]++",
    ),
    Rule(
        "teams-webhook",
        "teams-webhook",
        ("webhook.office.com",),
        r"(?P<keep>webhook\.office\.com/)[A-Za-z0-9/@._-]++",
    ),
    Rule("telegram-bot-token", "telegram-bot-token", (":aa",), r":AA[A-Za-z0-9_-]{33}(?![\w-])"),
    # -- payments -------------------------------------------------------------------------------
    Rule(
        "stripe-key",
        "stripe-key",
        ("sk_live_", "sk_test_", "sk_prod_"),
        r"sk_(?:live|test|prod)_[A-Za-z0-9]{16,}+",
    ),
    Rule(
        "stripe-restricted-key",
        "stripe-key",
        ("rk_live_", "rk_test_", "rk_prod_"),
        r"rk_(?:live|test|prod)_[A-Za-z0-9]{16,}+",
    ),
    Rule(
        "stripe-webhook-secret", "stripe-webhook-secret", ("whsec_",), r"whsec_[A-Za-z0-9+/=]{20,}+"
    ),
    Rule("square-token", "square-token", ("sq0atp-", "sq0csp-"), r"sq0(?:atp|csp)-[\w-]{22,}+"),
    Rule(
        "braintree-token",
        "braintree-token",
        ("access_token$",),
        r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}",
    ),
    Rule(
        "shopify-token",
        "shopify-token",
        ("shpat_", "shpss_", "shpca_", "shppa_"),
        r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
    ),
    # -- email and SMS --------------------------------------------------------------------------
    Rule("sendgrid-key", "sendgrid-key", ("sg.",), r"SG\.[\w-]{20,24}\.[\w-]{40,}+"),
    Rule("twilio-key", "twilio-key", ("sk",), r"SK(?<![\w]SK)[0-9a-f]{32}(?![0-9a-zA-Z])"),
    Rule("mailgun-key", "mailgun-key", ("key-",), r"key-(?<![\w-]key-)[0-9a-f]{32}(?![\w])"),
    Rule(
        "brevo-key",
        "brevo-key",
        ("xkeysib-", "xsmtpsib-"),
        r"x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}",
    ),
    *(
        Rule(name, name.rsplit("-", 1)[0] + "-token", triggers, pattern)
        for name, triggers, pattern in _PROVIDERS
    ),
    Rule(
        "sidekiq-credentials",
        "password",
        ("contribsys__com",),
        r"(?P<keep>CONTRIBSYS__COM[ \t]{0,8}+[=:][ \t]{0,8}+[\"']?+)(?!\[REDACTED)[^\s\"']++",
    ),
    # -- tokens in general ----------------------------------------------------------------------
    Rule(
        "jwt",
        "jwt",
        ("eyj",),
        # Anchored on the '.' before the payload ('.' is not in the run's class), so scans
        # from different start positions never overlap; the header stays (it holds no secret).
        r"\.eyJ[A-Za-z0-9_-]{8,}+\.(?:[A-Za-z0-9_-]++)?+",
    ),
    # -- HTTP -----------------------------------------------------------------------------------
    Rule(
        "authorization-header",
        "bearer-token",
        ("authorization",),
        r"(?P<keep>" + WORD + r"""["']?+[ \t]{0,8}+[:=][ \t]{0,8}+["']?+"""
        r"(?i:(?:bearer|basic|token|digest|bot|apikey|sso-key|negotiate|ntlm)[ \t]{1,8}+)?+)"
        r"""(?!\[REDACTED)[^\s"'`,;]{4,}+""",
        spellings=_spell("authorization"),
    ),
    Rule(
        "bearer-token",
        "bearer-token",
        ("bearer",),
        r"(?P<keep>" + WORD + r"[ \t]{1,8}+)(?!\[REDACTED)[A-Za-z0-9._~+/-]{12,}+=*+",
        spellings=_spell("bearer"),
    ),
    Rule(
        "cookie-header",
        "cookie",
        ("cookie",),
        r"(?P<keep>" + WORD + r"""[ \t]{0,8}+:[ \t]{0,8}+)[^\r\n"']++""",
        spellings=_spell("cookie"),
    ),
    # -- URLs -----------------------------------------------------------------------------------
    Rule(
        "url-credentials",
        "password",
        ("://",),
        # scheme://user:password@host and scheme://:password@host; the password may hold '@'
        # (the last '@' before the host ends it). The unbounded scans exclude '/', part of the
        # anchor; a password holding '/' is read by a bounded scan, unless what follows the
        # user is a port (host:8080/path@x is not a password).
        r"(?P<keep>://[^\s/:@]{0,128}+:)(?:(?:[^\s/@]*+@)++"
        r"|(?![0-9]{1,5}+/)[^\s@]{1,128}+@(?:[^\s/@]*+@)*+)",
        "@",
    ),
    Rule(
        "url-query-secret",
        "secret",
        ("sig=", "signature=", "token=", "secret=", "password=", "key=", "credential=", "auth="),
        # (the lookahead turns away a '?', '&' or ';' not followed by `name=` in one scan)
        r"(?P<keep>[?&;](?=[\w-]{1,24}+=)(?i:x-amz-signature|x-amz-security-token|x-amz-credential"
        r"|x-goog-signature|x-goog-credential|signature|sig|token|access_token|id_token"
        r"|refresh_token|auth|api_key|apikey|key|secret|client_secret|password|passwd|pwd"
        r"|code|credential)=)(?!\[REDACTED)[^&#\s\"'<>]++",
    ),
    # -- command-line flags ---------------------------------------------------------------------
    Rule(
        "cli-password-flag",
        "password",
        ("--",),
        # The flag's name is one to four words ending in a sensitive one (--db-password, not
        # --password-stdin); the name's scan stops at "--", so runs of dashes cost nothing.
        r"(?P<keep>--(?<!---)[A-Za-z0-9]{1,16}+(?:[-_][A-Za-z0-9]{1,16}+){0,3}+"
        + _FLAG
        + r"(?:=|[ \t]{1,8}+))(?!-)(?!\[REDACTED)"
        + _VALUE,
        # The name (at most 16 + 3 * 17 characters after "--") ends in a sensitive word.
        needs=("pass", "secret", "token", "key", "cookie"),
        within=72,
    ),
    Rule(
        "cli-user-password",
        "password",
        ("-u", "--user"),
        r"(?P<keep>-(?<![\w-]-)(?:u|-user)(?:[ \t]{1,8}+|=)[\"']?+[^\s:\"'@]{1,128}+:)"
        r"(?![0-9]{1,16}+(?![^\s\"']))(?!\[REDACTED)[^\s\"'`]++",
        # user:password — the ":" ends the user name: 6 + 8 + 1 + 128 characters on at most.
        needs=(":",),
        within=150,
    ),
    # -p only after a command known to take a password there (mkdir -p, ssh -p are not):
    # sshpass, `<tool> login` (docker, podman, helm registry, az, oc, cf), mysql and mariadb
    # clients, redis-cli -a. One literal anchor per rule; the scan to the flag is bounded.
    Rule(
        "cli-sshpass",
        "password",
        ("sshpass",),
        r"(?P<keep>sshpass[ \t]{1,8}+-p[ \t]{0,8}+)(?![\s-])(?!\[REDACTED)" + _VALUE,
    ),
    Rule(
        "cli-login-p",
        "password",
        ("login",),
        r"(?P<keep>login[^\n|;&]{0,32}? -p[ \t]{0,8}+)(?![\s-])(?!\[REDACTED)" + _VALUE,
    ),
    Rule(
        "cli-mysql-p",
        "password",
        ("mysql", "mariadb"),
        r"(?P<keep>m(?:ysql|ariadb)[^\n|;&]{0,32}? -p)(?![\s-])(?!\[REDACTED)" + _VALUE,
    ),
    Rule(
        "cli-redis-a",
        "password",
        ("redis-cli",),
        r"(?P<keep>redis-cli[^\n|;&]{0,32}? -a[ \t]{1,8}+)(?![\s-])(?!\[REDACTED)" + _VALUE,
    ),
    # -- password flags of common tools and credential pipes: one family ------------------------
    # A single-dash flag that takes a password (openssl -passin pass:…, keytool -storepass …,
    # -keypass, -srcstorepass); `env:`/`file:` sources and `-storepass:env` name no password.
    Rule(
        "cli-dash-pass",
        "password",
        ("-pass", "storepass", "keypass"),
        r"(?P<keep>-(?<![\w-]-)(?:pass(?:in|out)?[ \t]{1,8}+[\"']?+pass:"
        r"|(?:src|dest|new)?(?:store|key)pass[ \t]{1,8}+|password[ \t]{1,8}+))"
        r"(?!-)(?![\"']?+\$)(?!\[REDACTED)" + _VALUE,
    ),
    # Tools whose password flag is a short one: sqlcmd/bcp/zip -P, 7z -p<pw>, ldap* -w,
    # smbclient -U user%pw, htpasswd -b file user pw. The scan to the flag is bounded.
    *(
        Rule(f"cli-{name}-password", "password", triggers, head + _TOOL_VALUE)
        for name, triggers, head in _TOOL_FLAGS
    ),
    # Secret stores written from the command line: gh secret set --body, aws ssm put-parameter
    # --value, az keyvault secret set --value, aws secretsmanager create-secret --secret-string.
    Rule(
        "cli-secret-store",
        "secret",
        ("put-parameter", "secret set", "secrets set", "create-secret", "put-secret-value"),
        r"(?P<keep>(?:put-parameter|secrets? set|create-secret|put-secret-value)[^\n|;&]{0,160}?"
        r" (?:--value|--body|-b|--secret-string)(?:=|[ \t]{1,8}+))"
        r"(?!-)(?![\"']?+\$)(?!\[REDACTED)" + _VALUE,
    ),
    # A password piped into a tool that reads it from stdin: echo pw | sudo -S, … | docker
    # login --password-stdin, … | base64, … | gcloud secrets … --data-file=-, … | chpasswd.
    Rule(
        "cli-stdin-pipe",
        "password",
        ("stdin", "sudo -", "base64", "data-file", "chpasswd"),
        r"(?P<keep>(?:echo|printf)[ \t]{1,8}+(?:-[neE]{1,3}+[ \t]{1,8}+)?+"
        r"(?:['\"]%s[^'\"\n]{0,8}+['\"][ \t]{1,8}+)?+)(?![\"']?+\$)(?!\[REDACTED)"
        r"(?:\"[^\"\n]{1,256}+\"|'[^'\n]{1,256}+'|[^\s\"'|;&$]{1,256}+)"
        r"(?=[ \t]{0,8}+\|[ \t]{0,8}+(?:sudo[ \t]{1,8}+-[a-zA-Z]{0,4}+(?<=S)|chpasswd"
        r"|[^\n|;&]{0,96}?(?:--password-stdin|--pass-stdin|--data-file[= ]-|base64(?![ \t]{1,8}+-d)|--stdin)))",
    ),
    # Flags whose value is user:password (skopeo --creds, curl --proxy-user, wget --http-user…).
    Rule(
        "cli-creds-flag",
        "password",
        ("creds", "proxy-user"),
        r"(?P<keep>--(?:src-|dest-)?(?:creds|proxy-user)(?:[ \t]{1,8}+|=)[\"']?+[^\s:\"'@]{1,128}+:)"
        r"(?![0-9]{1,16}+(?![^\s\"']))(?!\[REDACTED)[^\s\"'`]++",
    ),
    # -- assignments in formats without "=" or ":" ---------------------------------------------
    # SQL: PASSWORD '…', IDENTIFIED BY '…' (or an unquoted word after IDENTIFIED BY).
    Rule(
        "sql-password",
        "password",
        ("password '", 'password "', "identified by"),
        r"(?P<keep>(?i:password|identified[ \t]{1,8}+by)[ \t]{1,8}+)(?!\[REDACTED)"
        r"(?:'[^'\n]{1,256}+'|\"[^\"\n]{1,256}+\"|(?<=[bB][yY] )[^\s;'\"]{1,256}+)",
    ),
    # .netrc: machine h login u password p (one line or several).
    Rule(
        "netrc-password",
        "password",
        ("login",),
        r"(?P<keep>login[ \t]{1,8}+[^\s]{1,128}+\s{1,16}+password[ \t]{1,8}+)(?!\[REDACTED)[^\s]++",
        # "password" starts at most 6 + 8 + 128 + 16 characters after "login"
        needs=("password",),
        within=160,
    ),
    # .pgpass: host:port:database:user:password (PostgreSQL's ports, or *).
    Rule(
        "pgpass-line",
        "password",
        (":5432:", ":5433:", ":6432:", ":*:"),
        r"(?P<keep>:(?<=[\w*]:)(?:5432|5433|6432|\*):[^\s:]{1,63}+:[^\s:]{1,63}+:)"
        r"(?!\[REDACTED)[^\s]++",
    ),
    # XML: <password>…</password>, <db.password>, <add key="…Password" value="…"/>.
    Rule(
        "xml-password",
        "password",
        ("password>", "passwd>", "secret>", "token>", "pass>"),
        r"(?P<keep><[\w.:-]{0,40}+(?:(?<=[Pp]assword)|(?<=PASSWORD)|(?<=[Pp]asswd)|(?<=[Ss]ecret)|(?<=SECRET)"
        r"|(?<=[Tt]oken)|(?<=TOKEN)|(?<=[Pp]ass)|(?<=PASS))>)(?![$%]\{)(?!\[REDACTED)[^<\n]{1,512}+(?=</)",
    ),
    Rule(
        "xml-key-value",
        "password",
        ("value=",),
        r"(?P<keep>key=[\"'][\w.:-]{0,64}+(?:(?<=[Pp]assword)|(?<=PASSWORD)|(?<=[Ss]ecret)|(?<=SECRET)|(?<=[Tt]oken)|(?<=TOKEN))"
        r"[\"'][ \t]{1,8}+value=[\"'])(?![$%]\{)(?!\[REDACTED)[^\"'\n]++",
    ),
    # Dockerfile ENV NAME value, csh setenv NAME value, Windows setx NAME value.
    Rule(
        "env-keyword",
        "secret",
        ("env ", "setenv", "setx"),
        r"(?P<keep>(?:ENV|setenv|setx)[ \t]{1,8}+[\w.-]{0,64}+"
        r"(?i:(?<=pass)|(?<=passwd)|(?<=password)|(?<=pwd)|(?<=_pw)|(?<=secret)|(?<=token)"
        r"|(?<=key)|(?<=creds)|(?<=credentials))[ \t]{1,8}+)"
        r"(?![\"']?+[$%])(?!\[REDACTED)(?:\"[^\"\n]{1,256}+\"|'[^'\n]{1,256}+'|[^\s\"']++)",
    ),
    # Setter calls with a literal: ds.setPassword("…"), user.set_secret('…').
    Rule(
        "setter-call",
        "secret",
        (".set",),
        r"(?P<keep>\.set_?+(?i:pass(?:word|wd|phrase)?|secret|token|api_?key|credentials?|creds)"
        r"[ \t]{0,8}+\([ \t]{0,8}+[\"'])(?!\[REDACTED)[^\"'\n]++",
    ),
    # Tuple auth: auth=('user', 'password'), auth = ("user", "password").
    Rule(
        "tuple-auth",
        "password",
        ("auth",),
        r"(?P<keep>auth[ \t]{0,8}+=[ \t]{0,8}+\([ \t]{0,8}+(?:'[^'\n]{0,128}+'|\"[^\"\n]{0,128}+\")"
        r"[ \t]{0,8}+,[ \t]{0,8}+['\"])(?!\[REDACTED)[^'\"\n]++",
        # "(" starts at most 4 + 8 + 1 + 8 characters after "auth"
        needs=("(",),
        within=24,
    ),
    # YAML block scalars under a sensitive key: `password: |` then indented lines.
    Rule(
        "yaml-block",
        "secret",
        ("pass", "pwd", "secret", "credential", "token"),
        r"(?P<keep>\n[ \t-]{0,32}+(?=[\w.-]{1,80}+:[ \t]{0,8}+[|>])[\w.-]{0,20}?"
        r"(?>(?i:pass(?:w(?:or)?d|phrase)?|secret|credentials?|pwd|token))"
        r"[\w-]{0,40}+:[ \t]{0,8}+[|>][+-]?+[0-9]?+[ \t]{0,8}+)"
        r"(?:\r?\n[ \t]{1,64}+(?![\w.-]{1,80}+:(?![^ \t\n]))[^\n]++)++",
        # the block indicator comes at most 20 + 12 + 40 + 1 + 8 characters after the word
        needs=("|", ">"),
        within=96,
    ),
    # -- assignments: NAME=value, "name": "value", name: value ----------------------------------
    Rule(
        "name-value-pair",
        "secret",
        ("value:",),
        # Kubernetes env lists and the like: `- name: DB_PASSWORD` then `value: …`.
        # The name is read whole, then must end in a sensitive word (DB_PASSWORD, API_TOKEN,
        # STRIPE_SECRET_KEY; not SECRET_KEY_ID).
        r"(?P<keep>name:[ \t]{0,8}+[\"']?+[\w.-]{1,64}+"
        + _ENDS_SENSITIVE
        + r"[\"']?+[ \t]{0,8}+\r?\n[ \t-]{0,32}+value:[ \t]{0,8}+)"
        r"(?!\[REDACTED)[^\n]++",
    ),
    Rule(
        "yaml-password",
        "secret",
        ("pass", "pwd", "secret", "credential"),
        # YAML allows unquoted values with spaces: `password: correct horse battery staple`.
        # Anchored on the newline before the key (redact() puts one before the text). The
        # lookahead reads the key once and looks past it: most lines are not `key: value`,
        # and only those are searched for the sensitive word.
        r"(?P<keep>\n[ \t-]{0,32}+(?=[\w.-]{1,80}+:[ \t]{1,8}+(?![\"']))[\w.-]{0,20}?"
        + _STRONG
        + r"[\w-]{0,40}+:[ \t]{1,8}+)"
        r"(?![\"'])" + _NOT_CODE + r"[^\n]++",
        # The key ends in ":" at most 40 characters after its sensitive word (12 at most).
        needs=(":",),
        within=64,
    ),
    *_ASSIGNMENTS,
)
