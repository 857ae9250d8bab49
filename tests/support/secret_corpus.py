"""Realistic (fake) secrets embedded in prompts and tool output, for redaction tests.

Each entry is (the secret value that must never be stored, the text it appears in).
Values are synthetic, assembled from parts (or drawn from a seeded generator) in each
provider's documented format, so the file itself does not look like a leaked key. The first
40 entries are the original corpus; the rest cover every class issue 14 lists, in shell, env
files, JSON, YAML, TOML, URLs, HTTP headers and CLI flags.
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


def fake(alphabet: str, n: int, seed: int) -> str:
    """``n`` characters of ``alphabet``, deterministic and random-looking (an LCG)."""
    state = seed * 2654435761 + 97
    out = []
    for _ in range(n):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        out.append(alphabet[(state >> 33) % len(alphabet)])
    return "".join(out)


ALNUM = A + A.upper() + D
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = D + "abcdef"
AWS_ID2 = "AKIA" + fake(A.upper() + "234567", 16, 1)
AWS_STS_ID = "ASIA" + fake(A.upper() + "234567", 16, 2)
AWS_SECRET2 = fake(B64, 40, 3)
AWS_SESSION = "IQoJb3JpZ2luX2Vj" + fake(B64, 120, 4)
GCP_KEY = "AIza" + "Sy" + fake(URLSAFE, 33, 5)
GCP_PEM_BODY = fake(B64, 64, 6)
GCP_SA = (
    '{"type": "service_account", "project_id": "demo-project", "private_key_id": "'
    + fake(HEX, 40, 7)
    + '", "private_key": "-----BEGIN '
    + "PRIVATE KEY-----\\n"
    + GCP_PEM_BODY
    + "\\n-----END PRIVATE KEY-----\\n"
    + '", "client_email": "ci@demo-project.iam.gserviceaccount.com"}'
)
GCP_OAUTH_SECRET = "GOCSPX-" + fake(URLSAFE, 28, 8)
GCP_ACCESS = "ya29." + fake(URLSAFE, 60, 9)
AZURE_KEY = fake(B64, 86, 10) + "=="
AZURE_CLIENT_SECRET = "aB3" + "8Q~" + fake(URLSAFE + ".~", 31, 11)
AZURE_SAS_SIG = fake(ALNUM, 43, 12) + "%3D"
GHS = "ghs_" + fake(ALNUM, 36, 13)
GHO = "gho_" + fake(ALNUM, 36, 14)
GH_PAT2 = "github_pat_" + fake(ALNUM, 22, 15) + "_" + fake(ALNUM, 59, 16)
GLPAT2 = "glpat-" + fake(URLSAFE, 20, 17)
GLDT = "gldt-" + fake(URLSAFE, 20, 18)
GL_RUNNER = "GR1348941" + fake(URLSAFE, 20, 19)
NPM2 = "npm_" + fake(ALNUM, 36, 20)
PYPI = "pypi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 70, 21)
HF = "hf_" + fake(A + A.upper(), 34, 22)
ANTHROPIC2 = "sk-ant-api03-" + fake(URLSAFE, 93, 23) + "AA"
OPENAI_SVC = "sk-svcacct-" + fake(URLSAFE, 74, 24)
OPENROUTER = "sk-or-v1-" + fake(HEX, 64, 25)
GROQ = "gsk_" + fake(ALNUM, 52, 26)
REPLICATE = "r8_" + fake(ALNUM, 37, 27)
PPLX = "pplx-" + fake(ALNUM, 48, 28)
XAI = "xai-" + fake(ALNUM, 80, 29)
COHERE = fake(ALNUM, 40, 30)
SLACK_BOT2 = "xoxb-" + fake(D, 12, 31) + "-" + fake(D, 13, 32) + "-" + fake(ALNUM, 24, 33)
SLACK_APP = (
    "xapp-1-" + fake(A.upper() + D, 11, 34) + "-" + fake(D, 13, 35) + "-" + fake(HEX, 64, 36)
)
SLACK_REFRESH = "xoxe-1-" + fake(ALNUM, 60, 37)
SLACK_HOOK2 = (
    "https://hooks.slack.com/services/T"
    + fake(A.upper() + D, 10, 38)
    + "/B"
    + (fake(A.upper() + D, 10, 39) + "/" + fake(ALNUM, 24, 40))
)
SLACK_HOOK_PATH = SLACK_HOOK2.split("hooks.slack.com/")[1]
DISCORD_TAIL = fake(D, 18, 41) + "/" + fake(URLSAFE, 68, 42)
TEAMS_TAIL = "webhookb2/" + fake(HEX, 32, 43) + "@" + fake(HEX, 32, 44) + "/IncomingWebhook/x"
TELEGRAM = fake(D, 10, 45) + ":AA" + fake(URLSAFE, 33, 46)
STRIPE_RK = "rk_" + "live_" + fake(ALNUM, 99, 47)
STRIPE_TEST = "sk_" + "test_" + fake(ALNUM, 99, 48)
STRIPE_WHSEC = "whsec_" + fake(ALNUM, 32, 49)
SQUARE = "sq0atp-" + fake(URLSAFE, 22, 50)
SHOPIFY = "shpat_" + fake(HEX, 32, 51)
SENDGRID = "SG." + fake(URLSAFE, 22, 52) + "." + fake(URLSAFE, 43, 53)
TWILIO_SK = "SK" + fake(HEX, 32, 54)
TWILIO_AUTH = fake(HEX, 32, 55)
MAILGUN = "key-" + fake(HEX, 32, 56)
BREVO = "xkeysib-" + fake(HEX, 64, 57) + "-" + fake(ALNUM, 16, 58)
POSTMARK = (
    fake(HEX, 8, 59)
    + "-"
    + fake(HEX, 4, 60)
    + "-"
    + fake(HEX, 4, 61)
    + "-1a2b-"
    + (fake(HEX, 12, 62))
)
EC_BODY = fake(B64, 64, 63)
EC_PEM = "-----BEGIN EC " + "PRIVATE KEY-----\n" + EC_BODY + "\n-----END EC PRIVATE KEY-----"
PKCS8_BODY = fake(B64, 64, 64)
ENCRYPTED_PEM = (
    "-----BEGIN ENCRYPTED "
    + "PRIVATE KEY-----\n"
    + PKCS8_BODY
    + "\n"
    + fake(B64, 64, 65)
    + "\n-----END ENCRYPTED PRIVATE KEY-----"
)
PGP_BODY = fake(B64, 64, 66)
PGP = (
    "-----BEGIN PGP "
    + "PRIVATE KEY BLOCK-----\n\n"
    + PGP_BODY
    + "\n-----END PGP PRIVATE KEY BLOCK-----"
)
OPENSSH_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" + fake(B64, 40, 67)
JWT2 = (
    "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ."
    + "eyJ"
    + fake(URLSAFE, 80, 68)
    + "."
    + fake(URLSAFE, 86, 69)
)
BASIC = fake(B64, 28, 70) + "=="
OPAQUE = fake(URLSAFE, 40, 71)
SESSION_COOKIE = fake(URLSAFE, 32, 72)
CSRF = fake(ALNUM, 32, 73)
S3_SIG = fake(HEX, 64, 74)
GCS_SIG = fake(HEX, 128, 75)
CF_SIG = fake(URLSAFE, 60, 76) + "__"
PW = ["Tr0ub4dor&3x", "n0t-In-The-Dict!", "9q8w7e6r5t", "S3cure#Pass2026", "zX9!kq2@Lm"]
PW_AT = "p@ss@w0rd!"
PHRASE = "correct horse battery staple"
PHRASE2 = "my long pass phrase 42"

CORPUS += [
    # cloud: AWS
    (AWS_ID2, f"[default]\naws_access_key_id = {AWS_ID2}\naws_secret_access_key = {AWS_SECRET2}"),
    (
        AWS_SECRET2,
        f"[default]\naws_access_key_id = {AWS_ID2}\naws_secret_access_key = {AWS_SECRET2}",
    ),
    (AWS_SECRET2, f"aws configure set aws_secret_access_key {AWS_SECRET2}"),
    (
        AWS_SECRET2,
        f'{{"Credentials": {{"AccessKeyId": "{AWS_STS_ID}", "SecretAccessKey": "{AWS_SECRET2}"}}}}',
    ),
    (AWS_SESSION, f'{{"AccessKeyId": "{AWS_STS_ID}", "SessionToken": "{AWS_SESSION}"}}'),
    (AWS_SESSION, f"export AWS_SESSION_TOKEN={AWS_SESSION}"),
    (AWS_STS_ID, f"AWS_ACCESS_KEY_ID={AWS_STS_ID} aws s3 ls"),
    # cloud: GCP
    (GCP_KEY, f"curl 'https://maps.googleapis.com/maps/api/geocode/json?address=x&key={GCP_KEY}'"),
    (GCP_PEM_BODY, f"cat sa.json\n{GCP_SA}"),
    (
        GCP_OAUTH_SECRET,
        f'{{"installed": {{"client_id": "1-x.apps.googleusercontent.com", "client_secret": "{GCP_OAUTH_SECRET}"}}}}',
    ),
    (GCP_ACCESS, f"gcloud auth print-access-token\n{GCP_ACCESS}"),
    # cloud: Azure
    (
        AZURE_KEY,
        f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=demo;AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
    ),
    (
        AZURE_KEY,
        f'"ServiceBus": "Endpoint=sb://demo.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={AZURE_KEY}"',
    ),
    (
        AZURE_CLIENT_SECRET,
        f"az login --service-principal -u app-id -p {AZURE_CLIENT_SECRET} --tenant t",
    ),
    (AZURE_CLIENT_SECRET, f"AZURE_CLIENT_SECRET: {AZURE_CLIENT_SECRET}"),
    (
        AZURE_SAS_SIG,
        f"https://demo.blob.core.windows.net/c/file.txt?sv=2022-11-02&se=2026-01-01&sr=b&sp=r&sig={AZURE_SAS_SIG}",
    ),
    # VCS and registries
    (GHS, f"git clone https://x-access-token:{GHS}@github.com/acme/app.git"),
    (GHO, f'curl -H "Authorization: token {GHO}" https://api.github.com/user'),
    (GH_PAT2, f"echo {GH_PAT2} | gh auth login --with-token"),
    (GLPAT2, f'curl --header "PRIVATE-TOKEN: {GLPAT2}" https://gitlab.example.com/api/v4/projects'),
    (GLDT, f"docker login registry.gitlab.com -u deploy -p {GLDT}"),
    (GL_RUNNER, f"gitlab-runner register --registration-token {GL_RUNNER}"),
    (NPM2, f"//registry.npmjs.org/:_authToken={NPM2}\nalways-auth=true"),
    (NPM2, f"NPM_TOKEN={NPM2} npm publish"),
    (PYPI, f"[pypi]\nusername = __token__\npassword = {PYPI}"),
    (PYPI, f"uv publish --token {PYPI}"),
    (HF, f"huggingface-cli login --token {HF}"),
    (HF, f"HF_TOKEN={HF} python train.py"),
    # AI providers
    (ANTHROPIC2, f'curl https://api.anthropic.com/v1/messages -H "x-api-key: {ANTHROPIC2}"'),
    (OPENAI_SVC, f'[openai]\napi_key = "{OPENAI_SVC}"'),
    (OPENROUTER, f"OPENROUTER_API_KEY={OPENROUTER}"),
    (GROQ, f'client = Groq(api_key="{GROQ}")'),
    (REPLICATE, f"export REPLICATE_API_TOKEN={REPLICATE}"),
    (PPLX, f"Authorization: Bearer {PPLX}"),
    (XAI, f"XAI_API_KEY: {XAI}"),
    (COHERE, f"COHERE_API_KEY={COHERE}"),
    # chat and webhooks
    (SLACK_BOT2, f'{{"ok": true, "access_token": "{SLACK_BOT2}", "token_type": "bot"}}'),
    (SLACK_APP, f"SLACK_APP_TOKEN={SLACK_APP}"),
    (SLACK_REFRESH, f"refresh with {SLACK_REFRESH}"),
    (SLACK_HOOK_PATH, f'curl -X POST -d \'{{"text":"hi"}}\' {SLACK_HOOK2}'),
    (DISCORD_TAIL, f"webhook_url: https://discord.com/api/webhooks/{DISCORD_TAIL}"),
    (TEAMS_TAIL, f"TEAMS_WEBHOOK=https://acme.webhook.office.com/{TEAMS_TAIL}"),
    (TELEGRAM, f"curl https://api.telegram.org/bot{TELEGRAM}/getMe"),
    # payments
    (STRIPE_RK, f"stripe listen --api-key {STRIPE_RK}"),
    (STRIPE_TEST, f"curl https://api.stripe.com/v1/charges -u {STRIPE_TEST}:"),
    (STRIPE_WHSEC, f"STRIPE_WEBHOOK_SECRET={STRIPE_WHSEC}"),
    (SQUARE, f"SQUARE_ACCESS_TOKEN={SQUARE}"),
    (SHOPIFY, f'headers = {{"X-Shopify-Access-Token": "{SHOPIFY}"}}'),
    # email and SMS
    (SENDGRID, f"SENDGRID_API_KEY='{SENDGRID}'"),
    (TWILIO_SK, f"client = Client('{TWILIO_SK}', api_secret, account_sid)"),
    (TWILIO_AUTH, f"TWILIO_AUTH_TOKEN={TWILIO_AUTH}"),
    (MAILGUN, f"curl -s --user 'api:{MAILGUN}' https://api.mailgun.net/v3/x/messages"),
    (BREVO, f"api-key: {BREVO}"),
    (POSTMARK, f"X-Postmark-Server-Token: {POSTMARK}"),
    # private keys
    (EC_BODY, f"$ cat key.pem\n{EC_PEM}"),
    (PKCS8_BODY, f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{PKCS8_BODY}"[:0] + ENCRYPTED_PEM),
    (PGP_BODY, f"gpg --export-secret-keys --armor\n{PGP}"),
    (
        OPENSSH_BODY,
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{OPENSSH_BODY}\n-----END OPENSSH PRIVATE KEY-----",
    ),
    # JWTs
    (JWT2, f'{{"id_token": "{JWT2}"}}'),
    (JWT2, f"https://app.example.com/callback#access_token={JWT2}&token_type=Bearer"),
    (JWT2, f"Cookie: session={JWT2}; theme=dark"),
    # passwords in assignments, whatever the name's shape
    (PW[0], f"DB_PASS={PW[0]}"),
    (PW[1], f"REDIS_PASSWORD_PROD='{PW[1]}'"),
    (PW[2], f"SMTP_PASSWD={PW[2]}"),
    (PW[3], f"APP_SECRET_KEY={PW[3]}"),
    (PW[4], f'export GPG_PASSPHRASE="{PW[4]}"'),
    (PW[0], f"KEYSTORE_PASSPHRASE_FILE_CONTENT={PW[0]}"),
    (PW[1], f"MYSQL_PWD={PW[1]} mysqldump app"),
    (PHRASE, f"database:\n  user: app\n  password: {PHRASE}\n  host: db"),
    (PHRASE2, f'{{"db_password": "{PHRASE2}"}}'),
    (PHRASE2, f'[database]\npassword = "{PHRASE2}"'),
    (PW[2], f"Server=db;Database=app;User Id=sa;Password={PW[2]};"),
    (PW[3], f"jdbc:mysql://db:3306/app?user=root&password={PW[3]}"),
    (PW[4], f"  - name: SIGNING_SECRET\n    value: {PW[4]}"),
    (PW[0], f"spring.datasource.password={PW[0]}"),
    # connection URLs
    (PW_AT, f"MONGO_URL=mongodb+srv://app:{PW_AT}@cluster0.example.net/db"),
    (PW[1], f"redis-cli -u redis://:{PW[1]}@cache:6379/0 ping"),
    (PW[2], f"amqp://guest:{PW[2]}@rabbit:5672/vhost"),
    (PW[3], f"pip install --index-url https://ci:{PW[3]}@pypi.example.com/simple pkg"),
    # CLI flags
    (PW[4], f"mysql -h db -u root -p{PW[4]} app"),
    (PW[0], f"mysql --user=root --password={PW[0]} app"),
    (PW[1], f"curl -u admin:{PW[1]} https://ci.example.com/api"),
    (PW[2], f"curl --user 'deploy:{PW[2]}' https://repo.example.com"),
    (PW[3], f"docker login -u bob -p {PW[3]} registry.example.com"),
    (PW[4], f"sshpass -p '{PW[4]}' ssh admin@10.0.0.5"),
    (PW[0], f"redis-cli -h cache -a {PW[0]} info"),
    (PHRASE2, f'vault login -method=userpass username=bob password="{PHRASE2}"'),
    (PW[1], f'openssl pkcs12 -export -passout pass:x --passphrase "{PW[1]}"'),
    (OPAQUE, f"terraform apply -var token={OPAQUE}"),
    (OPAQUE, f"deploy --api-key={OPAQUE} --env prod"),
    # HTTP headers
    (BASIC, f"Authorization: Basic {BASIC}"),
    (OPAQUE, f"curl -H 'Authorization: Bearer {OPAQUE}' https://api.example.com"),
    (BASIC, f"Proxy-Authorization: Basic {BASIC}"),
    (SESSION_COOKIE, f"Cookie: sessionid={SESSION_COOKIE}; csrftoken={CSRF}"),
    (CSRF, f"Cookie: sessionid={SESSION_COOKIE}; csrftoken={CSRF}"),
    (SESSION_COOKIE, f"Set-Cookie: sid={SESSION_COOKIE}; Path=/; HttpOnly"),
    (OPAQUE, f"curl --cookie 'auth={OPAQUE}' https://app.example.com"),
    (OPAQUE, f"X-API-Key: {OPAQUE}"),
    # signed URLs
    (
        S3_SIG,
        f"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=x&X-Amz-Signature={S3_SIG}",
    ),
    (
        AWS_SESSION[:60],
        f"https://b.s3.amazonaws.com/k?X-Amz-Security-Token={AWS_SESSION[:60]}&X-Amz-Expires=60",
    ),
    (
        GCS_SIG,
        f"https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature={GCS_SIG}",
    ),
    (
        CF_SIG,
        f"https://d1.cloudfront.net/v.mp4?Expires=1700000000&Signature={CF_SIG}&Key-Pair-Id=K2",
    ),
    (OPAQUE, f"wss://stream.example.com/feed?token={OPAQUE}"),
    # <private> spans
    ("attr-private-11", 'a <private reason="pii">attr-private-11</private> b'),
    ("spaced-private-12", "a < private >spaced-private-12</ private > b"),
    ("nested-private-13", "a <private>x <private>y</private> nested-private-13</private> b"),
    ("multi-line-private-14", "a <private>\nline one\nmulti-line-private-14\n</private> b"),
    ("unclosed-attr-15", "a <private note='x'>\nunclosed-attr-15\nand more"),
]

# -- issue 23: families that leaked to an outside test (new examples, not the held-out set) ----
P23 = ["Gr33n-Lant3rn!", "m0untain:Dew7", "Y3ll0w_Subm4rine", "qAz2#wSx3$eDc", "Ch4ngeMeN0w.9"]
T23 = "Rk2" + "Xb9Vm4Lq7Tz1Wp8Hs5Jd3Nf6Gc0"

CORPUS_23: dict[str, list[tuple[str, str]]] = {
    "assign": [
        (P23[0], f'define("AUTH_PASSWORD", "{P23[0]}");'),
        (P23[1], f"os.environ['REDIS_PASSWORD'] = '{P23[1]}'"),
        (P23[2], f'conf["smtp"]["password"] = "{P23[2]}"'),
        (P23[3], f'props.put("mail.smtp.password", "{P23[3]}");'),
        (P23[4], f'dataSource.setPassword("{P23[4]}");'),
        (P23[0], f"requests.post(url, auth=('bot', '{P23[0]}'))"),
        (P23[1], f"CREATE LOGIN svc WITH PASSWORD = '{P23[1]}';"),
        (P23[2], f"CREATE USER 'ro'@'%' IDENTIFIED BY '{P23[2]}';"),
        (P23[3], f"Server=db1;Database=crm;UID=crm;PWD={P23[3]};"),
        (P23[4], f"machine git.example.org login ci-bot password {P23[4]}"),
        (P23[0], f"pg-replica:5432:*:replicator:{P23[0]}"),
        (P23[1], f"<properties><db.password>{P23[1]}</db.password></properties>"),
        (P23[2], f"ENV MINIO_SECRET_KEY {P23[2]}"),
        (P23[3], f"setenv DB_PASS {P23[3]}"),
        (T23, f"setx API_TOKEN {T23}"),
        (P23[0], f"KAFKA_SASL_PW={P23[0]}"),
        (T23, f"DOCKERHUB_CREDS={T23}"),
        (P23[1], f"settings.DATABASES['default']['PASSWORD'] = '{P23[1]}'"),
    ],
    "cli": [
        (P23[2], f"openssl enc -aes-256-cbc -in a -out b -pass pass:{P23[2]}"),
        (P23[3], f"keytool -importkeystore -srcstorepass {P23[3]} -deststorepass x1y2z3w4"),
        (P23[4], f"7za x -p{P23[4]} dump.7z"),
        (P23[0], f"zip -e -P '{P23[0]}' keys.zip id_rsa"),
        (P23[1], f"smbclient -L //nas -U admin%{P23[1]}"),
        (P23[2], f"ldapmodify -H ldaps://ds -D cn=root -w '{P23[2]}' -f change.ldif"),
        (P23[3], f"bcp dbo.t out t.dat -S db -U sa -P {P23[3]} -c"),
        (P23[4], f'echo "{P23[4]}" | sudo -kS apt-get update'),
        (T23, f"echo {T23} | oras login reg.example -u x --password-stdin"),
        (P23[0], f"skopeo login --creds admin:{P23[0]} quay.example"),
        (P23[1], f"curl -x proxy:8080 --proxy-user 'me:{P23[1]}' https://x.example"),
        (P23[2], f"htpasswd -bc users.htpasswd alice {P23[2]}"),
        (T23, f"gh secret set DEPLOY_KEY --body={T23}"),
        (P23[3], f"aws ssm put-parameter --name db --value {P23[3]} --overwrite"),
        (P23[4], f"printf '%s\\n' '{P23[4]}' | docker login -u me --password-stdin"),
    ],
    "unicode": [
        (P23[0], f"ＤＢ＿ＰＡＳＳＷＯＲＤ＝{P23[0]}"),
        (P23[1], f"раssword: {P23[1]}"),  # Cyrillic р and а
        (P23[2], f"token\u00a0=\u00a0'{P23[2]}'"),
        ("sk-proj-" + T23 + T23, f"鍵はsk-proj-{T23}{T23}です"),
        (T23[8:], f"GITHUB_TOKEN=ghp_{T23[:8]}\u200c{T23[8:]}xxxxxxxx"),
        (P23[3], f"secret\uff1a {P23[3]}"),
        (P23[4], f"pass\u00adword={P23[4]}"),
    ],
    "multiline": [
        (P23[0], f"auth:\n  password: |-\n    {P23[0]}\n  user: x\n"),
        (P23[1], f"psql \\\n  -h db \\\n  'postgresql://app:{P23[1]}@db/app'"),
        (T23, f"tee token.env <<EOF\nSLACK_TOKEN={T23}\nEOF"),
        (P23[2], f"client = Client(\n    password=(\n        '{P23[2]}'\n    )\n)"),
    ],
    "encoded": [
        (P23[3], '{"inner": "{\\"password\\": \\"' + P23[3] + '\\"}"}'),
        (T23, '"payload": "{\\\\\\"api_key\\\\\\": \\\\\\"' + T23 + '\\\\\\"}"'),
        (P23[4], f"echo -n 'svc:{P23[4]}' | base64 -w0"),
    ],
    "url": [
        (P23[0], f"mongodb+srv://root:{P23[0]}/x@cluster0.example.net/db"),
        # (a password of digits then '/' reads as host:port/path and is left: see nonsecrets)
        ("x9/" + P23[1], f"ftp://ops:x9/{P23[1]}@ftp.example/pub"),
    ],
}
CORPUS += [pair for pairs in CORPUS_23.values() for pair in pairs]
