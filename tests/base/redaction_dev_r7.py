"""The development set of issue 37 (fake secrets): the families its attack found missing,
in phrasings the rules are tuned on. The held-out set (tests/base/redaction_heldout_r7.py) is
separate and was written before any rule of issue 37; the rules are never tuned on it.

Each entry is (family, the secret that must not be stored, the text it appears in).
``DEV_LOOKALIKES`` hold no secret: redaction must leave each unchanged.
"""

from __future__ import annotations

import base64
import json

P1 = "Gx7#pLq2-Vw9"
P2 = "mB4!zR8sKe1"
P3 = "Yt6$hN3wQa0c"
P4 = "uF2%jD9rXp5"
P5 = "Wc8^kS1vLm3n"
P6 = "eH5&qT7bZo4"
TOKEN = "Zq7XvB2mN9pL4kR8sT1wY6cH3jF5gD0aQ7XvB2mN9pL"

MNEMONIC_12 = "legal winner thank year wave sausage worth useful legal winner thank yellow"
MNEMONIC_24 = (
    "letter advice cage absurd amount doctor acoustic avoid letter advice cage absurd"
    " amount doctor acoustic avoid letter advice cage absurd amount doctor acoustic bless"
)
XPRV = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"
WIF = "5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ"

_B64_ENV = base64.b64encode(f"DB_PASSWORD={P5}\n".encode()).decode()

DEV: list[tuple[str, str, str]] = [
    # -- labels in other languages ---------------------------------------------------------
    ("label-i18n", P1, f"Passwort: {P1}"),
    ("label-i18n", P2, f"DB-Passwort = {P2}"),
    ("label-i18n", P3, f"contraseña: {P3}"),
    ("label-i18n", P4, f"La contraseña es {P4}"),
    ("label-i18n", P5, f"пароль: {P5}"),
    ("label-i18n", P6, f"Пароль от базы — {P6}"),
    ("label-i18n", P1, f"비밀번호: {P1}"),
    ("label-i18n", P2, f"パスワード：{P2}"),
    ("label-i18n", P3, f"mot de passe : {P3}"),
    ("label-i18n", P4, f"密码：{P4}"),
    ("label-i18n", P5, f"senha: {P5}"),
    ("label-i18n", P6, f"Kennwort={P6}"),
    ("label-i18n", TOKEN, f"API-Schlüssel: {TOKEN}"),
    ("label-i18n", P1, f"parola d'ordine: {P1}"),
    # -- command-line passwords of common tools --------------------------------------------
    ("cli-tools", P1, f"rabbitmqctl add_user deploy {P1}"),
    ("cli-tools", P2, f"rabbitmqctl change_password admin '{P2}'"),
    ("cli-tools", P3, f"net user svc_backup {P3} /add"),
    ("cli-tools", P4, f"sqlplus system/{P4}@//db01:1521/ORCL"),
    ("cli-tools", P5, f"expdp hr/{P5}@orclpdb schemas=HR directory=DUMP"),
    ("cli-tools", P6, f"lftp -u uploader,{P6} sftp://files.example"),
    ("cli-tools", P1, f"mosquitto_pub -h broker -u iot -P {P1} -t a/b -m 1"),
    ("cli-tools", P2, f"cqlsh -u cassandra -p {P2} 10.0.0.5"),
    ("cli-tools", TOKEN, f"npm config set //registry.npmjs.org/:_authToken {TOKEN}"),
    ("cli-tools", P3, f'ssh-keygen -t ed25519 -N "{P3}" -f ~/.ssh/deploy'),
    ("cli-tools", TOKEN, f"mc alias set minio http://minio:9000 minioadmin {TOKEN}"),
    ("cli-tools", P4, f"mysqladmin -u root password '{P4}'"),
    ("cli-tools", P5, f"redis-cli -h cache --pass {P5} ping"),
    # -- newer providers' keys, bare in prose ----------------------------------------------
    ("provider-new", "tvly-" + TOKEN[:32], f"use tvly-{TOKEN[:32]} for search"),
    ("provider-new", "pcsk_" + TOKEN[:40], f"pinecone key pcsk_{TOKEN[:40]}"),
    (
        "provider-new",
        "sbp_" + "0123456789abcdef" * 2 + "01234567",
        "sbp_" + "0123456789abcdef" * 2 + "01234567",
    ),
    ("provider-new", "tskey-auth-k" + TOKEN[:30], f"join with tskey-auth-k{TOKEN[:30]}"),
    ("provider-new", "figd_" + TOKEN[:40], f"figma figd_{TOKEN[:40]}"),
    ("provider-new", "rnd_" + TOKEN[:32], f"render rnd_{TOKEN[:32]} ok"),
    ("provider-new", "fc-" + "0123456789abcdef" * 2, "firecrawl fc-" + "0123456789abcdef" * 2),
    (
        "provider-new",
        "pat" + TOKEN[:14] + "." + "0123456789abcdef" * 4,
        "airtable pat" + TOKEN[:14] + "." + "0123456789abcdef" * 4,
    ),
    # -- config formats --------------------------------------------------------------------
    ("config", P1, f'network={{\n    ssid="home"\n    psk="{P1}"\n}}'),
    (
        "config",
        "c2VjcmV0LW9ic2N1cmVk",
        "[remote]\ntype = sftp\nhost = h\npass = c2VjcmV0LW9ic2N1cmVk\n",
    ),
    (
        "config",
        P2,
        json.dumps(
            {"outputs": {"db_pw": {"value": P2, "type": "string", "sensitive": True}}}, indent=2
        ),
    ),
    ("config", TOKEN, f"//registry.npmjs.org/:_authToken={TOKEN}"),
    ("config", P3, f"[s3]\ntype = s3\naccess_key_id = AKID\nsecret_access_key = {P3}\n"),
    # -- encoded forms ---------------------------------------------------------------------
    ("encoded", P4, '{"\\u0070assword": "' + P4 + '"}'),
    ("encoded", _B64_ENV, _B64_ENV),
    ("encoded", P6, f"INSERT INTO users (name, password) VALUES ('bob', '{P6}');"),
    ("encoded", P1, '{"\\u0070\\u0061\\u0073\\u0073\\u0077\\u006f\\u0072\\u0064":"' + P1 + '"}'),
    # -- wallet material -------------------------------------------------------------------
    ("wallet", MNEMONIC_12, f"my seed: {MNEMONIC_12}"),
    ("wallet", MNEMONIC_24, MNEMONIC_24),
    ("wallet", XPRV, f"master key {XPRV}"),
    ("wallet", WIF, f"import {WIF} into the wallet"),
    # -- values split across lines ---------------------------------------------------------
    ("split", P2, f"password:\n  {P2}\n"),
    ("split", P3, f'{{\n  "password":\n    "{P3}"\n}}'),
    ("split", TOKEN[20:], f'api_token = (\n    "{TOKEN[:20]}"\n    "{TOKEN[20:]}"\n)'),
    ("split", P4, f"export DB_PASSWORD=\\\n{P4}"),
]

DEV_LOOKALIKES: list[str] = [
    "Idempotency-Token: 9b2f6c1e-4d3a-4b8e-a1f0-2c7d5e9b3a61",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHb6bVq7XvB2mN9pL4kR8sT1wY6cH3jF5gD0aZq7XvB2 dev@laptop",
    "const stripe = Stripe('pk_live_51Hq7XvB2mN9pL4kR8sT1wY6cH3jF5gD0aZq7XvB2mN9pL4kR8s');",
    "password_min_length = 12",
    "deploy_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHb6bVq7XvB2mN9pL4kR8sT1wY6cH3jF5gD0aZq7XvB2",
    "STRIPE_PUBLISHABLE_KEY=pk_live_51Hq7XvB2mN9pL4kR8sT1wY6cH3jF5gD0aZq7XvB2mN9pL4kR8s",
    "curl -H 'Authorization: Bearer <your-token>' https://api.example/v1/me",
    "Passwort vergessen?",
    "Введите пароль, чтобы продолжить.",
    "mkdir -p /tmp/build && ssh -p 2222 deploy@host",
    "rabbitmqctl list_users",
    "sqlplus / as sysdba",
    "ssh-keygen -t ed25519 -N '' -f key",
    "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8",
]
