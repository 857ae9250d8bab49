"""A held-out set of (fake) secrets, written before the rules of issue 23 were tuned.

Nothing here was used to write or tune a rule: tests report the catch rate on it (the target
is 95%) and never add rules for a miss found here; a miss is fixed by generalising the family
it belongs to, and the example stays as it is. The phrasing differs on purpose from
tests/support/secret_corpus.py: other names, other tools, other providers, other languages.

Each entry is (family, the secret that must not be stored, the text it appears in).
"""

from __future__ import annotations

import base64
import json

_H = "0123456789abcdef"
_B62 = "Zq7XvB2mN9pL4kR8sT1wY6cH3jF5gD0a"


def _hex(n: int, seed: int = 0) -> str:
    return "".join(_H[(i * 7 + seed) % 16] for i in range(n))


def _b62(n: int, seed: int = 0) -> str:
    return "".join(_B62[(i * 5 + seed) % len(_B62)] for i in range(n))


PW1 = "Tr0ub4dor&3x"
PW2 = "vK9#mW2$qLz"
PW3 = "h8Jd-93kd-PPq"
PW4 = "Qw3rty!Uiop9"
PW5 = "s3cReT_Sauce77"
PW6 = "N0tInTheCorpus"
PW7 = "zx81/Spectrum+48"
TOK = _b62(32, 3)
TOK2 = _b62(40, 11)

HELDOUT: list[tuple[str, str, str]] = [
    # -- assignments across languages and formats ------------------------------------------
    ("assign", PW1, f"define( 'MAIL_PASSWORD', '{PW1}' );"),
    ("assign", PW2, f'os.environ["SMTP_PASSWORD"] = "{PW2}"'),
    ("assign", PW3, f"settings['database']['passwd'] = '{PW3}'"),
    ("assign", PW4, f'cfg.put("ldap.bind.password", "{PW4}");'),
    ("assign", PW5, f'ds.setPassword("{PW5}");'),
    ("assign", PW6, f"session.auth = ('svc-backup', '{PW6}')"),
    ("assign", PW1, f"CREATE USER reporter WITH PASSWORD '{PW1}';"),
    ("assign", PW2, f"GRANT ALL ON shop.* TO 'app'@'%' IDENTIFIED BY '{PW2}';"),
    ("assign", PW3, f"ALTER ROLE etl PASSWORD '{PW3}' VALID UNTIL 'infinity';"),
    ("assign", PW4, f"Driver={{ODBC Driver 18}};Server=sql01;Uid=sa;Pwd={PW4};Encrypt=yes"),
    ("assign", PW5, f"machine ftp.internal.example login deploy password {PW5}"),
    ("assign", PW6, f"db.internal.example:5432:billing:billing_rw:{PW6}"),
    (
        "assign",
        PW1,
        f"<server><id>nexus</id><username>ci</username><password>{PW1}</password></server>",
    ),
    ("assign", PW2, f'<add key="ClearTextPassword" value="{PW2}" />'),
    ("assign", PW3, f"ENV REDIS_PASS {PW3}"),
    ("assign", PW4, f"setenv ORACLE_PWD {PW4}"),
    ("assign", PW5, f'setx SQL_SA_PASSWORD "{PW5}"'),
    ("assign", PW6, f"export RABBIT_PW={PW6}"),
    ("assign", TOK, f"NEXUS_CREDS={TOK}"),
    ("assign", PW7, f'$env:ADMIN_PASSWORD = "{PW7}"'),
    ("assign", PW1, f'let db_pass = "{PW1}";'),
    ("assign", PW2, f'private static final String KEYSTORE_PASS = "{PW2}";'),
    ("assign", TOK2, f'config :app, MyApp.Repo, password: "{TOK2}"'),
    ("assign", PW3, f"[client]\nuser=root\npassword={PW3}\n"),
    ("assign", PW4, f"spring:\n  datasource:\n    password: {PW4}\n"),
    ("assign", TOK, f'{{"clientSecret":"{TOK}","tenant":"x"}}'),
    ("assign", PW5, f"conn = psycopg2.connect(host='db', user='app', password='{PW5}')"),
    ("assign", PW6, f'ConnectionStrings__Main="Server=db;User Id=app;Password={PW6};"'),
    ("assign", TOK2, f"app.config['SECRET_KEY'] = '{TOK2}'"),
    ("assign", PW7, f'smtp_pass := "{PW7}"'),
    # -- CLI password flags and credential pipes -------------------------------------------
    ("cli", PW1, f"openssl rsa -in key.pem -passin pass:{PW1} -out plain.pem"),
    ("cli", PW2, f"openssl pkcs12 -in cert.p12 -passout 'pass:{PW2}' -nodes"),
    (
        "cli",
        PW3,
        f"keytool -importcert -keystore trust.jks -storepass {PW3} -noprompt -file ca.crt",
    ),
    ("cli", PW4, f"keytool -genkey -alias app -keypass {PW4} -keystore app.jks"),
    ("cli", PW5, f"7z a -p{PW5} backup.7z ./data"),
    ("cli", PW6, f"zip -P {PW6} -r secrets.zip conf/"),
    ("cli", PW1, f"smbclient //fs01/share -U 'CORP\\jdoe%{PW1}' -c 'ls'"),
    ("cli", PW2, f"ldapsearch -x -H ldap://dc1 -D 'cn=admin,dc=corp' -w {PW2} -b dc=corp"),
    ("cli", PW3, f"sqlcmd -S tcp:sql01,1433 -U sa -P '{PW3}' -Q 'SELECT 1'"),
    ("cli", PW4, f"echo '{PW4}' | sudo -S systemctl restart nginx"),
    ("cli", PW5, f"echo {PW5} | docker login ghcr.io -u octo --password-stdin"),
    ("cli", PW6, f"printf '%s' '{PW6}' | podman login quay.io --username bot --password-stdin"),
    ("cli", PW7, f"skopeo copy --src-creds ci:{PW7} docker://a/x docker://b/x"),
    ("cli", PW1, f"skopeo inspect --creds robot:{PW1} docker://registry.example/app"),
    ("cli", PW2, f"curl --proxy-user proxyuser:{PW2} -x http://proxy:3128 https://example.com"),
    ("cli", PW3, f"htpasswd -b -c /etc/nginx/.htpasswd admin {PW3}"),
    ("cli", TOK, f"gh secret set NPM_AUTH --body '{TOK}' --repo acme/web"),
    ("cli", PW4, f"aws ssm put-parameter --name /prod/db/pass --type SecureString --value '{PW4}'"),
    ("cli", PW5, f"az keyvault secret set --vault-name kv1 --name dbpw --value {PW5}"),
    ("cli", TOK2, f"echo -n '{TOK2}' | gcloud secrets versions add api-key --data-file=-"),
    ("cli", PW6, f"psql \"postgresql://ops:{PW6}@pg.internal:5432/ops\" -c 'select 1'"),
    ("cli", PW7, f"mongosh --username root --password '{PW7}' mongodb://mongo:27017"),
    ("cli", PW1, f"wget --http-user=ci --http-password={PW1} https://artifacts/x.tgz"),
    ("cli", PW2, f"mysqldump -uroot -p'{PW2}' shop > shop.sql"),
    ("cli", PW3, f"vault kv put secret/app db_password={PW3}"),
    # -- provider tokens beyond the known ones ---------------------------------------------
    ("provider", "dop_v1_" + _hex(64, 1), "export DIGITALOCEAN_TOKEN=dop_v1_" + _hex(64, 1)),
    ("provider", "lin_api_" + _b62(40, 2), "Linear key: lin_api_" + _b62(40, 2)),
    (
        "provider",
        "PMAK-" + _hex(24, 3) + "-" + _hex(34, 4),
        "x-api-key PMAK-" + _hex(24, 3) + "-" + _hex(34, 4),
    ),
    ("provider", "sntryu_" + _hex(64, 5), "sentry-cli uses sntryu_" + _hex(64, 5)),
    ("provider", "pul-" + _hex(40, 6), "pulumi login with pul-" + _hex(40, 6)),
    ("provider", "dapi" + _hex(32, 7), "databricks configure --token dapi" + _hex(32, 7)),
    ("provider", "hvs." + _b62(95, 8), "VAULT_TOKEN set to hvs." + _b62(95, 8)),
    (
        "provider",
        "glsa_" + _b62(32, 9) + "_" + _hex(8, 9),
        "grafana sa glsa_" + _b62(32, 9) + "_" + _hex(8, 9),
    ),
    (
        "provider",
        "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"[:29] * 2,
        "# created: 2024\nAGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"[:29] * 2,
    ),
    (
        "provider",
        "pscale_tkn_" + _b62(43, 10),
        "PLANETSCALE_SERVICE_TOKEN pscale_tkn_" + _b62(43, 10),
    ),
    ("provider", "dp.pt." + _b62(43, 12), "doppler token dp.pt." + _b62(43, 12)),
    ("provider", "rubygems_" + _hex(48, 13), "gem push with rubygems_" + _hex(48, 13)),
    ("provider", "shippo_live_" + _hex(40, 14), "shippo_live_" + _hex(40, 14) + " is the live key"),
    ("provider", "pnu_" + _b62(36, 15), "prefect cloud login -k pnu_" + _b62(36, 15)),
    ("provider", "ntn_" + "12345678901" + _b62(35, 16), "notion ntn_12345678901" + _b62(35, 16)),
    ("provider", "EZAK" + _b62(54, 17), "easypost EZAK" + _b62(54, 17)),
    ("provider", "fo1_" + _b62(43, 18), "fly tokens: fo1_" + _b62(43, 18)),
    (
        "provider",
        "sha256~" + _b62(43, 19),
        "oc login --token=sha256~" + _b62(43, 19) + " --server=https://api.c",
    ),
    ("provider", "ATATT3" + _b62(186, 20), "jira api token ATATT3" + _b62(186, 20)),
    ("provider", "duffel_live_" + _b62(43, 21), "duffel_live_" + _b62(43, 21)),
    ("provider", "HRKU-AA" + _b62(58, 22), "heroku authorizations: HRKU-AA" + _b62(58, 22)),
    ("provider", "tfp_" + _b62(59, 23), "typeform personal token tfp_" + _b62(59, 23)),
    (
        "provider",
        "sk-ant-admin01-" + _b62(93, 24) + "AA",
        "admin key sk-ant-admin01-" + _b62(93, 24) + "AA",
    ),
    ("provider", "CLOJARS_" + _hex(60, 25), "deploy token CLOJARS_" + _hex(60, 25)),
    ("provider", "LTAI" + _b62(20, 26), "alibaba id LTAI" + _b62(20, 26) + " region cn"),
    # -- non-ASCII text ---------------------------------------------------------------------
    ("unicode", "ghp_" + _b62(36, 27), "令牌ghp_" + _b62(36, 27) + "请保管"),
    ("unicode", "sk-proj-" + _b62(48, 28), "密钥是sk-proj-" + _b62(48, 28)),
    ("unicode", _b62(20, 29)[10:], "glpat-" + _b62(10, 29) + "\u200b" + _b62(20, 29)[10:]),
    ("unicode", _b62(36, 30)[18:], "npm_" + _b62(18, 30) + "\u00ad" + _b62(36, 30)[18:]),
    ("unicode", PW1, f"password\uff1a{PW1}"),
    ("unicode", PW2, f"DB_PASSWORD\u00a0=\u00a0{PW2}"),
    ("unicode", PW3, f"p\u0430ssword={PW3}"),
    ("unicode", PW4, f"パスワード password: {PW4}"),
    ("unicode", PW5, f"\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44={PW5}"),
    ("unicode", "xoxb-" + "1234567890-" + _b62(24, 31), "Токен: xoxb-1234567890-" + _b62(24, 31)),
    ("unicode", PW6, f"pass\u200dword = '{PW6}'"),
    ("unicode", PW7, f"mot de passe — password=«{PW7}»"),
    # -- multi-line, encoded, URLs, JWT ------------------------------------------------------
    ("multiline", PW1, f"db:\n  password: |\n    {PW1}\n  user: app\n"),
    ("multiline", PW2, f"secret: >-\n  {PW2}\nnext: 1\n"),
    ("multiline", TOK, f"cat > .env <<'EOF'\nAPI_HOST=x\nAPI_TOKEN={TOK}\nEOF"),
    ("multiline", PW3, f"mysql -h db \\\n  -u admin \\\n  -p'{PW3}' \\\n  shop"),
    ("multiline", PW4, f"connect(\n    user='app',\n    password=(\n        '{PW4}'\n    ),\n)"),
    ("multiline", PW5, f"curl https://api.example \\\n  --user deploy:{PW5}"),
    (
        "encoded",
        base64.b64encode(f"robot:{PW6}".encode()).decode(),
        json.dumps(
            {"auths": {"ghcr.io": {"auth": base64.b64encode(f"robot:{PW6}".encode()).decode()}}}
        ),
    ),
    (
        "encoded",
        base64.b64encode(PW7.encode()).decode(),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: "
        + base64.b64encode(PW7.encode()).decode()
        + "\n",
    ),
    ("encoded", PW1, f"echo -n 'admin:{PW1}' | base64"),
    ("encoded", TOK2, json.dumps({"body": json.dumps({"api_token": TOK2})})),
    ("encoded", PW2, json.dumps({"config": json.dumps({"db": {"password": PW2}})})),
    ("url", "a/b" + PW3, f"postgres://svc:a/b{PW3}@db:5432/app"),
    ("url", "k/" + PW4, f"redis://:k/{PW4}@cache:6379/0"),
    ("url", PW5, f"amqps://guest:{PW5}@mq.internal/vhost"),
    (
        "jwt",
        "eyJzdWIiOiIxMjM0NTY3ODkwIiwicm9sZSI6ImFkbWluIiwiaWF0IjoxNzAwMDAwMDAwfQ.c2lnbmF0dXJlLXBhcnQtb25lLXR3bw",
        'token:\n{\n  "alg": "HS256",\n  "typ": "JWT"\n}.eyJzdWIiOiIxMjM0NTY3ODkwIiwicm9sZSI6ImFkbWluIiwiaWF0IjoxNzAwMDAwMDAwfQ.c2lnbmF0dXJlLXBhcnQtb25lLXR3bw',
    ),
]

# Held-out texts that hold no secret: each must come through redaction unchanged.
HELDOUT_CLEAN: list[str] = [
    "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf",
    "aws secretsmanager get-secret-value --secret-id arn:aws:secretsmanager:us-east-1:1:secret:x",
    "password = getpass.getpass('Password: ')",
    "if (!password) throw new Error('password required');",
    'ds.setPassword(System.getenv("DB_PASSWORD"));',
    "define('DB_PASSWORD', getenv('DB_PASSWORD'));",
    "os.environ['PGPASSWORD'] = args.password",
    'echo "$DOCKER_TOKEN" | docker login -u ci --password-stdin',
    "openssl rsa -in key.pem -passin env:KEY_PASS -out plain.pem",
    "openssl rsa -in key.pem -passin file:/run/secrets/pw -out plain.pem",
    "keytool -list -keystore trust.jks -storepass:env STOREPASS",
    "zip -r archive.zip src/ -x '*.pyc'",
    "7z x backup.7z -o/tmp/restore",
    "SELECT user, password_last_changed FROM mysql.user;",
    "ALTER USER app PASSWORD EXPIRE;",
    "The password policy requires 12 characters and one digit.",
    "Пароль должен содержать не менее 12 символов.",
    "密码长度至少为十二个字符。",
    "<password>${env.NEXUS_PASSWORD}</password>",
    "ENV PATH /usr/local/bin:$PATH",
    "setenv EDITOR vim",
    "ldapsearch -x -H ldap://dc1 -b dc=corp '(uid=jdoe)'",
    "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d",
    "echo aGVsbG8gd29ybGQ= | base64 -d",
    "curl --proxy http://proxy:3128 https://example.com",
    "the token bucket refills at 10 tokens per second",
    "gh secret list --repo acme/web",
    "aws ssm get-parameter --name /prod/db/pass --with-decryption",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "Full-width digits ０１２３ and a no-break\u00a0space in prose.",
]
