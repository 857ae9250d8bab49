"""Realistic (fake) secrets embedded in prompts and tool output, for redaction tests.

Each entry is (the secret value that must never be stored, the text it appears in).
Values are assembled from parts so the file itself does not look like a leaked key.
"""

from __future__ import annotations

A = "abcdefghijklmnopqrstuvwxyz"
D = "0123456789"
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
GH = "ghp_" + (A + D)[:36]
GH_PAT = "github_pat_" + "11ABCDEFG0" + (A * 3)[:72]
ANTHROPIC = "sk-ant-api03-" + (A + D + A.upper())[:60]
OPENAI = "sk-proj-" + (A.upper() + D + A)[:48]
OPENAI_OLD = "sk-" + (D + A)[:40]
SLACK_BOT = "xoxb-" + "1234567890-" + "0987654321-" + A[:24]
SLACK_USER = "xoxp-" + "2222222222-" + A[:20]
GOOGLE = "AIza" + "SyA" + (A + D)[:32]
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
BEARER = "tok_" + (A + D)[:30]
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + A
PEM = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + PEM_BODY + "\n-----END RSA PRIVATE KEY-----"
OPENSSH = (
    "-----BEGIN OPENSSH "
    + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"
    + A
    + "\n-----END OPENSSH PRIVATE KEY-----"
)
STRIPE = "sk_" + "live_" + (A + D)[:24]
GITLAB = "glpat-" + (A + D)[:20]
NPM = "npm_" + (A + D)[:36]
DB_PASSWORD = "Pr0d-Passw0rd!x"
SLACK_HOOK = "https://hooks.slack.com/services/" + "T000/B000/" + A[:24]

CORPUS: list[tuple[str, str]] = [
    (AWS_ID, f"export AWS_ACCESS_KEY_ID={AWS_ID}"),
    (AWS_SECRET, f"aws_secret_access_key = {AWS_SECRET}"),
    (AWS_ID, f'{{"AccessKeyId": "{AWS_ID}", "Expiration": "2026"}}'),
    (GH, f"git remote set-url origin https://{GH}@github.com/acme/app.git"),
    (GH, f"GITHUB_TOKEN={GH} gh pr create"),
    (GH_PAT, f"use this token: {GH_PAT}"),
    (ANTHROPIC, f"ANTHROPIC_API_KEY={ANTHROPIC}"),
    (ANTHROPIC, f"client = Anthropic(api_key='{ANTHROPIC}')"),
    (OPENAI, f"OPENAI_API_KEY={OPENAI}"),
    (OPENAI, f'curl -H "Authorization: Bearer {OPENAI}" https://api.openai.com/v1/models'),
    (OPENAI_OLD, f"openai.api_key = '{OPENAI_OLD}'"),
    (SLACK_BOT, f"SLACK_BOT_TOKEN={SLACK_BOT}"),
    (SLACK_USER, f"the user token is {SLACK_USER} keep it safe"),
    (SLACK_HOOK, f"post alerts to {SLACK_HOOK}"),
    (GOOGLE, f"maps key {GOOGLE} in config.js"),
    (GOOGLE, f'const firebaseConfig = {{ apiKey: "{GOOGLE}" }}'),
    (JWT, f"session cookie: {JWT}"),
    (JWT, f"Authorization: Bearer {JWT}"),
    (BEARER, f"curl -H 'Authorization: Bearer {BEARER}' localhost:8080"),
    (BEARER, f"headers = {{'Authorization': 'Token {BEARER}'}}"),
    (PEM_BODY, f"cat id_rsa\n{PEM}\n"),
    ("b3BlbnNzaC1rZXktdjEAAAAA" + A, f"{OPENSSH}"),
    (PEM_BODY[:40], f"key material: {PEM[:80]}"),  # truncated block (no END line)
    (STRIPE, f"STRIPE_SECRET_KEY={STRIPE}"),
    (GITLAB, f"GITLAB_TOKEN: {GITLAB}"),
    (NPM, f"//registry.npmjs.org/:_authToken={NPM}"),
    (DB_PASSWORD, f"DATABASE_URL=postgres://app:{DB_PASSWORD}@db:5432/app"),
    (DB_PASSWORD, f"password={DB_PASSWORD}"),
    (DB_PASSWORD, f'db.connect(user="app", password="{DB_PASSWORD}")'),
    (DB_PASSWORD, f"PGPASSWORD='{DB_PASSWORD}' psql -h db"),
    ("hunter2-secret-value", "secret: hunter2-secret-value"),
    ("s3cr3t-T0ken-value", "token=s3cr3t-T0ken-value&user=bob"),
    ("client-secret-9f8e7d", 'CLIENT_SECRET="client-secret-9f8e7d"'),
    ("api-key-0a1b2c3d4e", "x-api-key: api-key-0a1b2c3d4e"),
    ("mySuperPass123", "mysql -u root --password=mySuperPass123"),
    ("private-thoughts-42", "keep this <private>private-thoughts-42</private> out"),
    ("unclosed-private-99", "before <private>unclosed-private-99 and everything after"),
    ("PRIVATE-upper-77", "mixed <PRIVATE>PRIVATE-upper-77</Private> case tag"),
    (AWS_ID, f"line1\nline2 {AWS_ID}\nline3"),
    (ANTHROPIC, f"error: invalid x-api-key {ANTHROPIC} (401)"),
]
