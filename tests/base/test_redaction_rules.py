"""One example per redaction rule: the rule alone removes the secret and names its kind."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colony_tasks.base import redact, redact_rules
from colony_tasks.base.redact_rules import RULES
from tests.support import secret_corpus as s
from tests.support.nonsecret_corpus import NONSECRETS
from tests.support.provider_tokens import PREFIXED

_MIXED = "Zq7XvB2mN9pL4kR8sT1wY6cH3jF5gD0aQ7Xv"
# issue 37's rules: tools' password arguments, labels, newer providers, wallet keys
ISSUE_37: dict[str, tuple[str, str, str]] = {
    "cli-password-option": ("plink -pw s3cr3t-pw host", "s3cr3t-pw", "-pw "),
    "cli-short-p": ("cqlsh -u admin -p s3cr3t-pw db1", "s3cr3t-pw", "cqlsh -u admin -p "),
    "cli-short-upper-p": ("mosquitto_sub -u a -P s3cr3t-pw -t x", "s3cr3t-pw", " -P "),
    "cli-short-upper-n": ("ssh-keygen -N s3cr3t-pw -f k", "s3cr3t-pw", "ssh-keygen -N "),
    "cli-short-a": ("redis-benchmark -a s3cr3t-pw -q", "s3cr3t-pw", "redis-benchmark -a "),
    "cli-short-w": ("vsql -U dbadmin -w s3cr3t-pw", "s3cr3t-pw", "vsql -U dbadmin -w "),
    "cli-short-k": ("openssl enc -aes256 -k s3cr3t-pw -in f", "s3cr3t-pw", "openssl enc"),
    "cli-short-p-glued": ("rar a -ps3cr3t-pw out.rar f", "s3cr3t-pw", "rar a -p"),
    "cli-positional-password": ("rabbitmqctl add_user bob s3cr3t-pw", "s3cr3t-pw", "add_user bob "),
    "cli-oracle-login": ("sqlplus -s app/s3cr3t-pw@db", "s3cr3t-pw", "sqlplus -s app/"),
    "cli-user-comma-password": ("lftp -u bob,s3cr3t-pw ftp://h", "s3cr3t-pw", "-u bob,"),
    "cli-config-set": ("yarn config set npmAuthToken s3cr3t-pw", "s3cr3t-pw", "npmAuthToken "),
    "label-ascii": ("Kennwort: s3cr3t-pw", "s3cr3t-pw", "Kennwort: "),
    "label-other": ("пароль = s3cr3t-pw", "s3cr3t-pw", "пароль = "),
    "supabase-token": ("use sbp_" + "a1" * 20, "sbp_" + "a1" * 20, "use "),
    "firecrawl-key": ("key fc-" + "a1" * 16, "fc-" + "a1" * 16, "key "),
    "tailscale-key": ("tskey-api-" + _MIXED, "tskey-api-" + _MIXED, ""),
    "airtable-token": ("pat" + _MIXED[:14] + "." + "a1" * 32, "pat" + _MIXED[:14], ""),
    "bip32-private-key": ("k xprv9s21" + "A1b2C3d4" * 13, "xprv9s21" + "A1b2C3d4" * 13, "k "),
    "wif-private-key": (
        "w 5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ",
        "5HueCGU8rMjx",
        "w ",
    ),
    "vendor-prefixed-token": ("use acme_" + _MIXED + " now", _MIXED, "use acme_"),
    "assignment-psk": ('psk="s3cr3t-pw"', "s3cr3t-pw", 'psk="'),
    "terraform-sensitive": (
        '{"value": "s3cr3t-pw", "sensitive": true}',
        "s3cr3t-pw",
        '{"value": "',
    ),
}

# rule name -> (text, the secret in it, the prefix the rule keeps visible)
EXAMPLES: dict[str, tuple[str, str, str]] = {
    "pem-private-key": (f"cat key\n{s.EC_PEM}\ndone", s.EC_BODY, "cat key\n"),
    "putty-private-key": (
        "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\nAAAAIBx9pZ0example0key0data=\n"
        "Private-MAC: 00",
        "AAAAIBx9pZ0example0key0data=",
        "Private-Lines: 1",
    ),
    "aws-access-key": (f"id {s.AWS_ID2} ok", s.AWS_ID2, "id "),
    "aws-secret-key": (f"aws_secret_access_key={s.AWS_SECRET2}", s.AWS_SECRET2, "access_key="),
    "aws-session-token": (f"aws_session_token = {s.AWS_SESSION}", s.AWS_SESSION, "token = "),
    "gcp-api-key": (f"key {s.GCP_KEY}", s.GCP_KEY, "key "),
    "gcp-oauth-secret": (f"secret {s.GCP_OAUTH_SECRET}", s.GCP_OAUTH_SECRET, ""),
    "gcp-oauth-token": (f"token {s.GCP_ACCESS}", s.GCP_ACCESS, ""),
    "gcp-refresh-token": ("refresh 1//0" + s.OPAQUE, "1//0" + s.OPAQUE, "refresh "),
    "azure-storage-key": (f"AccountName=x;AccountKey={s.AZURE_KEY};", s.AZURE_KEY, "AccountKey="),
    "azure-shared-access-key": (
        f"Endpoint=sb://x/;SharedAccessKey={s.AZURE_KEY}",
        s.AZURE_KEY,
        "SharedAccessKey=",
    ),
    "azure-client-secret": (f"secret {s.AZURE_CLIENT_SECRET}", s.AZURE_CLIENT_SECRET[4:], ""),
    "github-token": (f"use {s.GHS}", s.GHS, "use "),
    "github-fine-grained": (f"use {s.GH_PAT2}", s.GH_PAT2, "use "),
    "gitlab-token": (f"use {s.GLDT}", s.GLDT, "use "),
    "gitlab-runner": (f"use {s.GL_RUNNER}", s.GL_RUNNER, "use "),
    "npm-token": (f"use {s.NPM2}", s.NPM2, "use "),
    "pypi-token": (f"use {s.PYPI}", s.PYPI, "use "),
    "huggingface-token": (f"use {s.HF}", s.HF, "use "),
    "huggingface-org": ("use api_org_" + s.HF[3:], "api_org_" + s.HF[3:], "use "),
    "docker-pat": ("use dckr_pat_" + s.OPAQUE, "dckr_pat_" + s.OPAQUE, "use "),
    "anthropic-key": (f"use {s.ANTHROPIC2}", s.ANTHROPIC2, "use "),
    "openai-key": (f"use {s.OPENAI_SVC}", s.OPENAI_SVC, "use "),
    "groq-key": (f"use {s.GROQ}", s.GROQ, "use "),
    "replicate-token": (f"use {s.REPLICATE}", s.REPLICATE, "use "),
    "perplexity-key": (f"use {s.PPLX}", s.PPLX, "use "),
    "xai-key": (f"use {s.XAI}", s.XAI, "use "),
    "langsmith-key": ("use lsv2_pt_" + s.GROQ[4:], "lsv2_pt_" + s.GROQ[4:], "use "),
    "slack-token": (f"use {s.SLACK_BOT2}", s.SLACK_BOT2, "use "),
    "slack-app-token": (f"use {s.SLACK_APP}", s.SLACK_APP, "use "),
    "slack-webhook": (f"post {s.SLACK_HOOK2}", s.SLACK_HOOK_PATH, "https://hooks.slack.com/"),
    "discord-webhook": (
        f"https://discord.com/api/webhooks/{s.DISCORD_TAIL}",
        s.DISCORD_TAIL,
        "https://discord.com/api/webhooks/",
    ),
    "teams-webhook": (
        f"https://acme.webhook.office.com/{s.TEAMS_TAIL}",
        s.TEAMS_TAIL,
        "https://acme.webhook.office.com/",
    ),
    "telegram-bot-token": (f"bot{s.TELEGRAM}/getMe", s.TELEGRAM, "bot"),
    "stripe-key": (f"use {s.STRIPE_TEST}", s.STRIPE_TEST, "use "),
    "stripe-restricted-key": (f"use {s.STRIPE_RK}", s.STRIPE_RK, "use "),
    "stripe-webhook-secret": (f"use {s.STRIPE_WHSEC}", s.STRIPE_WHSEC, "use "),
    "square-token": (f"use {s.SQUARE}", s.SQUARE, "use "),
    "braintree-token": (
        "use access_token$production$" + s.HEX[:16] + "$" + s.TWILIO_AUTH,
        s.TWILIO_AUTH,
        "use ",
    ),
    "shopify-token": (f"use {s.SHOPIFY}", s.SHOPIFY, "use "),
    "sendgrid-key": (f"use {s.SENDGRID}", s.SENDGRID, "use "),
    "twilio-key": (f"use {s.TWILIO_SK}", s.TWILIO_SK, "use "),
    "mailgun-key": (f"use {s.MAILGUN}", s.MAILGUN, "use "),
    "brevo-key": (f"use {s.BREVO}", s.BREVO, "use "),
    "jwt": (f"id {s.JWT2}", s.JWT2, "id eyJ"),
    "authorization-header": (f"Authorization: Basic {s.BASIC}", s.BASIC, "Authorization: Basic "),
    "bearer-token": (f"-H 'Bearer {s.OPAQUE}'", s.OPAQUE, "-H 'Bearer "),
    "cookie-header": (f"Cookie: sid={s.SESSION_COOKIE}; a=b", s.SESSION_COOKIE, "Cookie: "),
    "url-credentials": (f"redis://:{s.PW_AT}@cache:6379", s.PW_AT, "redis://:"),
    "url-query-secret": (f"https://x/y?a=1&sig={s.S3_SIG}&b=2", s.S3_SIG, "https://x/y?a=1&sig="),
    "cli-password-flag": (f"tool --db-password {s.PW[0]} -v", s.PW[0], "tool --db-password "),
    "cli-user-password": (f"curl -u admin:{s.PW[1]} x", s.PW[1], "curl -u admin:"),
    "cli-sshpass": (f"sshpass -p {s.PW[2]} ssh h", s.PW[2], "sshpass -p "),
    "cli-login-p": (f"oc login -u dev -p {s.PW[0]} https://x", s.PW[0], "oc login -u dev -p "),
    "cli-mysql-p": (f"mysql -u root -p{s.PW[1]} app", s.PW[1], "mysql -u root -p"),
    "cli-redis-a": (f"redis-cli -h c -a {s.PW[3]} ping", s.PW[3], "redis-cli -h c -a "),
    "name-value-pair": (
        f"- name: WEBHOOK_SECRET\n  value: {s.PW[3]}",
        s.PW[3],
        "- name: WEBHOOK_SECRET\n  value: ",
    ),
    "yaml-password": (f"db:\n  password: {s.PHRASE}\n", s.PHRASE, "db:\n  password: "),
    "assignment-pass": (f'{{"db_password": "{s.PHRASE2}"}}', s.PHRASE2, '{"db_password": "'),
    "assignment-secret": (f"APP_SECRET_KEY='{s.PW[0]}'", s.PW[0], "SECRET_KEY='"),
    "assignment-credential": (f"credentials: {s.PW[1]}", s.PW[1], "credentials: "),
    "assignment-pwd": (f"MYSQL_PWD={s.PW[2]} mysql", s.PW[2], "MYSQL_PWD="),
    "assignment-token": (f'auth_token: "{s.OPAQUE}"', s.OPAQUE, 'auth_token: "'),
    "assignment-key": (f"SIGNING_KEY={s.OPAQUE}", s.OPAQUE, "SIGNING_KEY="),
    "assignment-auth": (f"auth = {s.OPAQUE}", s.OPAQUE, "auth = "),
    "assignment-pw": (f"LDAP_BIND_PW={s.PW[3]}", s.PW[3], "LDAP_BIND_PW="),
    "assignment-creds": (f"registry_creds: '{s.OPAQUE}'", s.OPAQUE, "registry_creds: '"),
    "cli-dash-pass": (f"keytool -list -storepass {s.PW[0]} -v", s.PW[0], "-storepass "),
    "cli-zip-password": (f"unzip -P {s.PW[1]} dump.zip", s.PW[1], "unzip -P "),
    "cli-sqlcmd-password": (f"sqlcmd -S db -U sa -P {s.PW[2]} -Q x", s.PW[2], "-P "),
    "cli-bcp-password": (f"bcp t out f -U sa -P {s.PW[3]}", s.PW[3], "-P "),
    "cli-7z-password": (f"7z x -p{s.PW[0]} a.7z", s.PW[0], "7z x -p"),
    "cli-ldap-password": (f"ldapadd -D cn=x -w {s.PW[1]} -f a", s.PW[1], "-w "),
    "cli-smbclient-password": (f"smbclient //h/s -U me%{s.PW[2]}", s.PW[2], "-U me%"),
    "cli-htpasswd-password": (f"htpasswd -b .pw bob {s.PW[3]}", s.PW[3], "bob "),
    "cli-secret-store": (
        f"gh secret set TOKEN -b {s.OPAQUE} -R acme/x",
        s.OPAQUE,
        "gh secret set TOKEN -b ",
    ),
    "cli-stdin-pipe": (
        f"echo {s.PW[2]} | helm registry login r.example -u a --password-stdin",
        s.PW[2],
        "echo ",
    ),
    "cli-creds-flag": (f"skopeo sync --dest-creds bot:{s.PW[3]} a b", s.PW[3], "--dest-creds bot:"),
    "sql-password": (f"CREATE ROLE ro LOGIN PASSWORD '{s.PW[0]}';", s.PW[0], "PASSWORD "),
    "netrc-password": (
        f"machine api.example\n  login me\n  password {s.PW[1]}",
        s.PW[1],
        "login me",
    ),
    "pgpass-line": (f"cat ~/.pgpass\npg1:5432:*:etl:{s.PW[2]}", s.PW[2], "pg1:5432:*:etl:"),
    "xml-password": (f"<jdbc.password>{s.PW[3]}</jdbc.password>", s.PW[3], "<jdbc.password>"),
    "xml-key-value": (
        f'<add key="SmtpPassword" value="{s.PW[0]}"/>',
        s.PW[0],
        '<add key="SmtpPassword" value="',
    ),
    "env-keyword": (f"ENV STRIPE_SECRET {s.OPAQUE}", s.OPAQUE, "ENV STRIPE_SECRET "),
    "setter-call": (f"props.setSecret('{s.PW[1]}')", s.PW[1], "props.setSecret('"),
    "tuple-auth": (f"r = get(u, auth=('ops', '{s.PW[2]}'))", s.PW[2], "auth=('ops', '"),
    **{name: (f"use {token} now", token, "use ") for name, token in PREFIXED.items()},
    "sidekiq-credentials": (
        "BUNDLE_GEMS__CONTRIBSYS__COM=ab12cd34:ef56ab78",
        "ab12cd34:ef56ab78",
        "CONTRIBSYS__COM=",
    ),
    "yaml-block": (f"app:\n  api_token: >\n    {s.OPAQUE}\n  port: 1", s.OPAQUE, "api_token: >"),
    **ISSUE_37,
}


def test_every_rule_has_an_example_and_names_are_unique():
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    assert sorted(EXAMPLES) == sorted(names)


def test_every_rule_has_triggers_in_lowercase():
    assert all(rule.triggers and all(t == t.lower() for t in rule.triggers) for rule in RULES)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.name)
def test_the_rule_alone_removes_its_example_secret_and_keeps_the_prefix(rule):
    text, secret, prefix = EXAMPLES[rule.name]
    assert secret in text
    assert any(trigger in text.lower() for trigger in rule.triggers)
    cleaned = redact.apply_rule(rule, text)
    assert secret not in cleaned
    assert f"[REDACTED:{rule.kind}]" in cleaned
    assert prefix in cleaned
    assert secret not in redact.redact(text)


def test_no_rule_is_case_insensitive_as_a_whole():
    # (?i) on the whole pattern would make re try every position instead of skipping ahead
    for rule in RULES:
        for source in rule.sources(True) + rule.sources(False):
            assert re.compile(source).flags & re.IGNORECASE == 0, rule.name
            assert redact_rules.WORD not in source


def test_spelled_rules_catch_each_spelling_of_their_word():
    padding = "x " * redact.LONG_TEXT  # a long text runs the spelled patterns
    for name in ("password", "PASSWORD", "Password", "dbPassword", "DB_PASSWORD"):
        assert redact.redact(f"{name} = hunter2-x {padding}").startswith(
            f"{name} = [REDACTED:secret] x"
        )
    for name in ("password", "PASSWORD", "Password", "dbPassword", "DB_PASSWORD", "Db_Password"):
        assert redact.redact(f"{name} = hunter2-x") == f"{name} = [REDACTED:secret]"
    for name in ("authorization", "AUTHORIZATION", "Authorization"):
        assert redact.redact(f"{name}: Basic dXNlcjpwYXNz") == (
            f"{name}: Basic [REDACTED:bearer-token]"
        )


def test_the_kept_prefix_is_the_only_group():
    # redact() splits the text on a rule's matches: every capturing group would come back
    # from split(), so a rule has the kept prefix as its one group, or no group
    for rule in RULES:
        for source in rule.sources(True) + rule.sources(False):
            compiled = re.compile(source)
            assert compiled.groups == len(compiled.groupindex), rule.name
            assert compiled.groups == 0 or compiled.groupindex == {"keep": 1}, rule.name


GATED = [rule for rule in RULES if rule.needs]
# Shapes near each gate's bound: names and blanks as long as the patterns allow, every
# separator and flag word, in the spellings the rules read.
_NAMES = st.text(alphabet="abcXYZ019_-.", max_size=90)
_FRAGMENTS = st.sampled_from(
    [
        *{t for rule in GATED for t in rule.triggers},
        *{n for rule in GATED for n in rule.needs},
        "PASSWORD",
        "Token",
        "_KEY",
        "--db-",
        "-u ",
        ":=",
        "=>",
        "?=",
        '"',
        "'",
        " " * 8,
        "\t",
        "\n",
        "value1234567890",
        "https://u:p@h/",
    ]
)


def _matches(rule, text: str) -> bool:
    return any(re.compile(p).search("\n" + text) for p in rule.sources(False))


def _corpus() -> list[str]:
    texts = [example[0] for example in EXAMPLES.values()]
    texts += [text for _secret, text in s.CORPUS]
    texts += NONSECRETS
    return texts


@pytest.mark.parametrize("rule", GATED, ids=lambda r: r.name)
def test_a_gate_never_skips_a_text_its_rule_would_match(rule):
    for text in _corpus():
        lowered = text.lower()
        if _matches(rule, text):
            assert any(t in lowered and redact.near(lowered, t, rule) for t in rule.triggers), text


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.one_of(_FRAGMENTS, _NAMES), max_size=12))
def test_gates_hold_for_generated_near_misses(parts):
    text = "".join(parts)
    lowered = text.lower()
    for rule in GATED:
        if _matches(rule, text):
            assert any(t in lowered and redact.near(lowered, t, rule) for t in rule.triggers), (
                rule.name,
                text,
            )


def test_prose_that_mentions_a_token_or_a_flag_compiles_no_pattern():
    redact._compiled.clear()
    text = "please fix the token refresh in auth.py; the api key rotation and sort -u --verbose"
    assert redact.redact(text) == text
    assert not [name for name, _ in redact._compiled]
    assert redact.redact("api_key = 'Zq8mN3pLx7Rt'") == "api_key = '[REDACTED:secret]'"


# The longest heads the gated patterns allow: the needed text as far from the trigger as a
# match can put it.
BOUNDARY = {
    "assignment-pass": "passphrase" + "X" * 16 + ("_" + "Y" * 16) * 3 + '"' + " " * 8 + '?= "pw"',
    "assignment-key": "x_key" + ("_" + "K" * 16) * 3 + '"' + " " * 8 + '?= "Zq8mN3pLx7Rt"',
    "assignment-token": "token" + ("-" + "t" * 16) * 3 + "'" + "\t" * 8 + ":= 'Zq8mN3pLx7Rt'",
    "cli-password-flag": "run --"
    + "a" * 16
    + "-"
    + "b" * 16
    + "-"
    + "c" * 16
    + "-password hunter2",
    "cli-user-password": "curl -u" + " " * 8 + "'" + "u" * 128 + ":hunter2hunter2' https://x",
    "yaml-password": "cfg:\n  db_password" + "x" * 40 + ": correct horse battery",
}


@pytest.mark.parametrize("name", sorted(BOUNDARY))
def test_a_gate_lets_through_a_match_at_its_patterns_bound(name):
    rule = next(r for r in RULES if r.name == name)
    text = BOUNDARY[name]
    lowered = text.lower()
    assert _matches(rule, text)
    assert any(t in lowered and redact.near(lowered, t, rule) for t in rule.triggers)
    assert "[REDACTED:" in redact.redact(text)


@pytest.mark.parametrize("name", sorted(BOUNDARY))
def test_a_gate_lets_a_long_text_through_too(name):
    filler = "ordinary words and code(x) = 1\n" * (redact.LONG_TEXT // 30 + 1)
    text = filler + BOUNDARY[name] + "\n" + filler
    assert len(text) > redact.LONG_TEXT
    assert "[REDACTED:" in redact.redact(text)
