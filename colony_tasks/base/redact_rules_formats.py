"""The secret rules that know a secret by its own shape: private keys and the token formats of
providers (cloud, source hosting and package registries, AI providers, chat, payments, mail, and
the long tail gitleaks lists), and tokens in general (a JWT). Data only, loaded by
:mod:`colony_tasks.base.redact_rules` (which says what each column means); they run first, in
this order, before :mod:`colony_tasks.base.redact_rules_context`.
"""

from __future__ import annotations

# (name, kind, triggers, pattern[, options]); see colony_tasks.base.redact_rules.
FORMATS: tuple[tuple, ...] = (
    # -- private keys -----------------------------------------------------------------------
    # A block with no END drops the rest of the text.
    (
        "pem-private-key",
        "private-key",
        ("private key",),
        "-----BEGIN[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----(?:[^-]++"
        "|-(?!----END))*+(?:-----END[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----)?",
    ),
    (
        "putty-private-key",
        "private-key",
        ("private-lines:",),
        r"(?P<keep>Private-Lines:[ \t]{0,4}+\d{1,4}+)(?:\r?\n[A-Za-z0-9+/=]++"
        r"(?![^\r\n]))*+",
    ),
    # -- cloud ------------------------------------------------------------------------------
    # Eleven trigger scans cost 5 ms per MB of ordinary text, the pattern's own 0.6 ms (`scan`).
    (
        "aws-access-key",
        "aws-access-key",
        ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "apka"),
        "(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|APKA)[A-Z2-7]{16}(?![A-Za-z0-9])",
        {"scan": True},
    ),
    (
        "aws-secret-key",
        "aws-secret-key",
        ("secret_access_key", "secretaccesskey", "aws_secret_key", "secret-access-key"),
        "(?P<keep>@WORD@(?i:[_-]?access[_-]?key|_key(?<=aws_secret_key))(?:@SEP@"
        r"""|[ \t]{1,8}+)["']?+)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])""",
        {"spellings": ("secret", "SECRET", "Secret")},
    ),
    (
        "aws-session-token",
        "aws-session-token",
        ("session_token", "sessiontoken", "security-token", "security_token"),
        "(?P<keep>@WORD@(?i:ssion_?token|curity[-_]token)@SEP@[\"']?+)[A-Za-z0-9/+=]{16,}+",
        {"spellings": ("se", "SE", "Se")},
    ),
    ("gcp-api-key", "google-api-key", ("aiza",), "AIza[0-9A-Za-z_-]{35}"),
    ("gcp-oauth-secret", "google-oauth-secret", ("gocspx-",), "GOCSPX-[A-Za-z0-9_-]{20,}+"),
    ("gcp-oauth-token", "google-oauth-token", ("ya29.",), r"ya29\.[A-Za-z0-9_-]{20,}+"),
    ("gcp-refresh-token", "google-oauth-token", ("1//0",), "1//0[A-Za-z0-9_-]{30,}+"),
    (
        "azure-storage-key",
        "azure-key",
        ("accountkey",),
        r"(?P<keep>@WORD@[ \t]{0,4}+=[ \t]{0,4}+)[A-Za-z0-9+/]{20,}+={0,2}+",
        {"spellings": ("AccountKey", "accountkey", "ACCOUNTKEY")},
    ),
    (
        "azure-shared-access-key",
        "azure-key",
        ("sharedaccesskey",),
        r"(?P<keep>@WORD@[ \t]{0,4}+=[ \t]{0,4}+)[A-Za-z0-9+/]{20,}+={0,2}+",
        {"spellings": ("SharedAccessKey", "sharedaccesskey", "SHAREDACCESSKEY")},
    ),
    (
        "azure-client-secret",
        "azure-client-secret",
        ("q~",),
        "Q~(?<=[A-Za-z0-9_~.-]{3}[0-9]Q~)[A-Za-z0-9_~.-]{31,34}+",
    ),
    # -- VCS and package registries ---------------------------------------------------------
    (
        "github-token",
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        "gh[pousr]_[A-Za-z0-9]{30,}+",
    ),
    ("github-fine-grained", "github-token", ("github_pat_",), "github_pat_[A-Za-z0-9_]{30,}+"),
    (
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
        "gl(?:pat|dt|rt|ptt|cbt|oas|ft|soat|ffct|imt|agent)-[A-Za-z0-9_.-]{20,}+",
    ),
    ("gitlab-runner", "gitlab-token", ("gr1348941",), "GR1348941[A-Za-z0-9_-]{20,}+"),
    ("npm-token", "npm-token", ("npm_",), "npm_[A-Za-z0-9]{36,}+"),
    ("pypi-token", "pypi-token", ("pypi-",), "pypi-AgE[A-Za-z0-9_-]{50,}+"),
    ("huggingface-token", "huggingface-token", ("hf_",), "hf_[A-Za-z0-9]{30,}+"),
    ("huggingface-org", "huggingface-token", ("api_org_",), "api_org_[A-Za-z0-9]{30,}+"),
    ("docker-pat", "docker-token", ("dckr_pat_",), "dckr_pat_[A-Za-z0-9_-]{20,}+"),
    # -- AI providers -----------------------------------------------------------------------
    ("anthropic-key", "anthropic-key", ("sk-ant-",), "sk-ant-[A-Za-z0-9_-]{16,}+"),
    (
        "openai-key",
        "openai-key",
        ("sk-",),
        r"sk-(?<![\w-]sk-)(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_-]{20,}+",
    ),
    ("groq-key", "groq-key", ("gsk_",), "gsk_[A-Za-z0-9]{40,}+"),
    ("replicate-token", "replicate-token", ("r8_",), "r8_[A-Za-z0-9]{30,}+"),
    ("perplexity-key", "perplexity-key", ("pplx-",), "pplx-[A-Za-z0-9]{40,}+"),
    ("xai-key", "xai-key", ("xai-",), "xai-[A-Za-z0-9]{60,}+"),
    ("langsmith-key", "langsmith-key", ("lsv2_",), "lsv2_(?:pt|sk)_[A-Za-z0-9_]{30,}+"),
    # -- chat and webhooks ------------------------------------------------------------------
    ("slack-token", "slack-token", ("xox",), "xox[abposre]-[A-Za-z0-9-]{10,}+"),
    ("slack-app-token", "slack-token", ("xapp-",), "xapp-[0-9]-[A-Za-z0-9-]{10,}+"),
    (
        "slack-webhook",
        "slack-webhook",
        ("hooks.slack.com",),
        r"(?P<keep>hooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9/_-]++",
    ),
    (
        "discord-webhook",
        "discord-webhook",
        ("discord",),
        r"(?P<keep>discord(?:app)?\.com/api/webhooks/)[0-9]{5,}+/[A-Za-z0-9_-]++",
    ),
    (
        "teams-webhook",
        "teams-webhook",
        ("webhook.office.com",),
        r"(?P<keep>webhook\.office\.com/)[A-Za-z0-9/@._-]++",
    ),
    ("telegram-bot-token", "telegram-bot-token", (":aa",), r":AA[A-Za-z0-9_-]{33}(?![\w-])"),
    # -- payments ---------------------------------------------------------------------------
    (
        "stripe-key",
        "stripe-key",
        ("sk_live_", "sk_test_", "sk_prod_"),
        "sk_(?:live|test|prod)_[A-Za-z0-9]{16,}+",
    ),
    (
        "stripe-restricted-key",
        "stripe-key",
        ("rk_live_", "rk_test_", "rk_prod_"),
        "rk_(?:live|test|prod)_[A-Za-z0-9]{16,}+",
    ),
    ("stripe-webhook-secret", "stripe-webhook-secret", ("whsec_",), "whsec_[A-Za-z0-9+/=]{20,}+"),
    ("square-token", "square-token", ("sq0atp-", "sq0csp-"), r"sq0(?:atp|csp)-[\w-]{22,}+"),
    (
        "braintree-token",
        "braintree-token",
        ("access_token$",),
        r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}",
    ),
    (
        "shopify-token",
        "shopify-token",
        ("shpat_", "shpss_", "shpca_", "shppa_"),
        "shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
    ),
    # -- email and SMS ----------------------------------------------------------------------
    ("sendgrid-key", "sendgrid-key", ("sg.",), r"SG\.[\w-]{20,24}\.[\w-]{40,}+"),
    ("twilio-key", "twilio-key", ("sk",), r"SK(?<![\w]SK)[0-9a-f]{32}(?![0-9a-zA-Z])"),
    ("mailgun-key", "mailgun-key", ("key-",), r"key-(?<![\w-]key-)[0-9a-f]{32}(?![\w])"),
    (
        "brevo-key",
        "brevo-key",
        ("xkeysib-", "xsmtpsib-"),
        "x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}",
    ),
    # -- provider token formats -------------------------------------------------------------
    # Provider token formats with a literal prefix, measured against gitleaks' provider list
    # (tests/base/test_redaction_providers.py); each pattern written here from the documented
    # shape. A token is followed by no further character of its alphabet.
    ("1password-token", "1password-token", ("ops_eyj",), "ops_eyJ[A-Za-z0-9+/]{100,}+={0,3}+"),
    (
        "1password-secret-key",
        "1password-secret-token",
        ("a3-",),
        "A3-(?<![A-Za-z0-9+/]A3-)[A-Z0-9]{6}-(?:[A-Z0-9]{11}"
        "|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
    ),
    ("adobe-secret", "adobe-token", ("p8e-",), "p8e-[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
    (
        "age-secret-key",
        "age-secret-token",
        ("age-secret-key-1",),
        "AGE-SECRET-KEY-1[02-9ac-hj-np-zAC-HJ-NP-Z]{58}",
    ),
    (
        "artifactory-key",
        "artifactory-token",
        ("akcp",),
        "AKCp(?<![A-Za-z0-9+/]AKCp)[A-Za-z0-9]{69}(?![A-Za-z0-9])",
    ),
    (
        "artifactory-reference",
        "artifactory-token",
        ("cmvmd",),
        "cmVmd(?<![A-Za-z0-9+/]cmVmd)[A-Za-z0-9]{59}(?![A-Za-z0-9])",
    ),
    (
        "atlassian-token",
        "atlassian-token",
        ("atatt3",),
        "ATATT3(?<![A-Za-z0-9+/]ATATT3)[A-Za-z0-9_=-]{100,}+",
    ),
    (
        "clickhouse-secret",
        "clickhouse-token",
        ("4b1d",),
        "4b1d(?<![A-Za-z0-9]4b1d)[A-Za-z0-9]{38}(?![A-Za-z0-9])",
    ),
    (
        "clojars-token",
        "clojars-token",
        ("clojars_",),
        "CLOJARS_(?<![A-Za-z0-9]CLOJARS_)[A-Za-z0-9]{60}",
    ),
    (
        "cloudflare-origin-ca",
        "cloudflare-origin-token",
        ("v1.0-",),
        r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}",
    ),
    (
        "databricks-token",
        "databricks-token",
        ("dapi",),
        "dapi[a-f0-9]{32}(?:-[0-9])?+(?![A-Za-z0-9])",
    ),
    (
        "digitalocean-token",
        "digitalocean-token",
        ("dop_v1_", "doo_v1_", "dor_v1_"),
        "do[opr]_v1_[a-f0-9]{64}",
    ),
    (
        "doppler-token",
        "doppler-token",
        ("dp.",),
        r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_-]{40,}+",
    ),
    ("duffel-token", "duffel-token", ("duffel_",), "duffel_(?:test|live)_[A-Za-z0-9_=-]{43}"),
    (
        "dynatrace-token",
        "dynatrace-token",
        ("dt0c01.",),
        r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}",
    ),
    (
        "easypost-token",
        "easypost-token",
        ("ezak", "eztk"),
        "EZ[AT]K(?<![A-Za-z0-9+/]EZ[AT]K)[A-Za-z0-9]{54}",
    ),
    (
        "facebook-token",
        "facebook-token",
        ("eaam", "eaac", "eaaa"),
        "EAA[ACM](?<![A-Za-z0-9+/]EAA[ACM])[A-Za-z0-9_-]{30,}+",
    ),
    (
        "flutterwave-key",
        "flutterwave-token",
        ("flwseck", "flwpubk"),
        "FLW(?:SECK|PUBK)(?:_TEST)?+-[A-Za-z0-9]{12,}+(?:-X)?+",
    ),
    (
        "flyio-token",
        "flyio-token",
        ("fo1_", "fm1", "fm2_"),
        "f(?:o1_[A-Za-z0-9_-]{43}|m(?:1[ar]|2)_[A-Za-z0-9+/]{100,}+={0,3}+)",
    ),
    ("frameio-token", "frameio-token", ("fio-u-",), "fio-u-[A-Za-z0-9_=-]{64}"),
    (
        "gitlab-session",
        "gitlab-token",
        ("_gitlab_session=",),
        "(?P<keep>_gitlab_session=)[0-9a-z]{32}",
    ),
    (
        "grafana-token",
        "grafana-token",
        ("glc_", "glsa_", "eyjrijoi"),
        "(?:glc_[A-Za-z0-9+/]{32,}+={0,3}+|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"
        "|eyJrIjoi[A-Za-z0-9]{70,}+={0,3}+)",
    ),
    (
        "harness-token",
        "harness-token",
        ("pat.", "sat."),
        r"[ps]at\."
        r"(?<![A-Za-z0-9][ps]at\.)[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
    ),
    (
        "terraform-token",
        "terraform-token",
        (".atlasv1.",),
        r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}+",
    ),
    ("heroku-token", "heroku-token", ("hrku-",), "HRKU-(?<![A-Za-z0-9+/]HRKU-)[A-Za-z0-9_-]{30,}+"),
    (
        "infracost-token",
        "infracost-token",
        ("ico-",),
        "ico-(?<![A-Za-z0-9]ico-)[A-Za-z0-9]{32}(?![A-Za-z0-9])",
    ),
    ("intra42-secret", "intra42-token", ("s-s4t2",), "s-s4t2(?:ud|af)-[a-f0-9]{64}"),
    (
        "linear-token",
        "linear-token",
        ("lin_api_", "lin_oauth_"),
        "lin_(?:api|oauth)_[A-Za-z0-9]{40,}+",
    ),
    (
        "maxmind-key",
        "maxmind-token",
        ("_mmk",),
        "[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![A-Za-z0-9])",
    ),
    (
        "newrelic-key",
        "newrelic-token",
        ("nrak-", "nrii-", "nrjs-", "nraa-"),
        "NR(?:AK|II|JS|AA)-[A-Za-z0-9-]{19,}+",
    ),
    ("notion-token", "notion-token", ("ntn_",), "ntn_[0-9]{11}[A-Za-z0-9]{32,}+"),
    (
        "octopus-key",
        "octopus-token",
        ("api-",),
        "API-(?<![A-Za-z0-9-]API-)[A-Z0-9]{26}(?![A-Za-z0-9])",
    ),
    ("openshift-token", "openshift-token", ("sha256~",), "sha256~[A-Za-z0-9_-]{43}"),
    (
        "planetscale-token",
        "planetscale-token",
        ("pscale_",),
        "pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}+",
    ),
    (
        "postman-key",
        "postman-token",
        ("pmak-",),
        "PMAK-(?<![A-Za-z0-9+/]PMAK-)[a-fA-F0-9]{24}-[a-fA-F0-9]{34}",
    ),
    ("prefect-key", "prefect-token", ("pnu_",), "pnu_[A-Za-z0-9]{36}"),
    ("pulumi-token", "pulumi-token", ("pul-",), "pul-(?<![A-Za-z0-9]pul-)[a-f0-9]{40}"),
    ("readme-key", "readme-token", ("rdme_",), "rdme_[a-z0-9]{70}"),
    ("rubygems-key", "rubygems-token", ("rubygems_",), "rubygems_[a-f0-9]{48}"),
    ("scalingo-token", "scalingo-token", ("tk-us-",), "tk-us-[A-Za-z0-9_-]{48}"),
    ("sentry-token", "sentry-token", ("sntryu_", "sntrys_"), "sntry[us]_[A-Za-z0-9+/=_]{60,}+"),
    (
        "settlemint-token",
        "settlemint-token",
        ("sm_aat_", "sm_pat_", "sm_sat_"),
        "sm_[aps]at_[A-Za-z0-9]{16}",
    ),
    ("shippo-token", "shippo-token", ("shippo_",), "shippo_(?:live|test)_[a-fA-F0-9]{40}"),
    (
        "sourcegraph-token",
        "sourcegraph-token",
        ("sgp_",),
        "sgp_(?:[a-fA-F0-9]{16}_|local_)?+[a-fA-F0-9]{40}",
    ),
    ("typeform-token", "typeform-token", ("tfp_",), "tfp_[A-Za-z0-9_.=-]{40,}+"),
    ("vault-token", "vault-token", ("hvs.", "hvb.", "hvr."), r"hv[sbr]\.[A-Za-z0-9_-]{90,}+"),
    (
        "yandex-key",
        "yandex-token",
        ("aqvn", "t1."),
        "(?:AQVN(?<![A-Za-z0-9+/]AQVN)[A-Za-z0-9_-]{35,38}+"
        r"|t1\.[A-Za-z0-9_-]{20,200}+={0,2}+\.[A-Za-z0-9_-]{86})",
    ),
    (
        "alibaba-key",
        "alibaba-token",
        ("ltai",),
        "LTAI(?<![A-Za-z0-9+/]LTAI)[A-Za-z0-9]{20}(?![A-Za-z0-9])",
    ),
    (
        "mapbox-secret",
        "mapbox-token",
        ("sk.eyj",),
        r"sk\.eyJ[A-Za-z0-9_-]{20,}+\.[A-Za-z0-9_-]{20,}+",
    ),
    ("mailgun-pubkey", "mailgun-token", ("pubkey-",), "pubkey-[a-f0-9]{32}"),
    (
        "authress-key",
        "authress-token",
        (".acc_", ".acc-"),
        "(?:sc|ext|scauth"
        r"|authress)_[A-Za-z0-9]{5,30}+\.[A-Za-z0-9]{4,6}+\.acc[_-][A-Za-z0-9-]{10,32}+\.[A-Za-z0-9+/_=-]{30,120}+",
    ),
    ("square-secret", "square-token", ("sq0csp-", "sq0idp-"), "sq0(?:csp|idp)-[A-Za-z0-9_-]{22,}+"),
    (
        "anthropic-admin-key",
        "anthropic-admin-token",
        ("sk-ant-admin",),
        "sk-ant-admin[0-9]{2}-[A-Za-z0-9_-]{20,}+",
    ),
    (
        "sidekiq-credentials",
        "password",
        ("contribsys__com",),
        r"""(?P<keep>CONTRIBSYS__COM[ \t]{0,8}+[=:][ \t]{0,8}+[\"']?+)"""
        r"""(?!\[REDACTED)[^\s\"']++""",
    ),
    # -- tokens in general ------------------------------------------------------------------
    # Anchored on the '.' before the payload ('.' is not in the run's class), so scans from
    # different start positions never overlap; the header stays (it holds no secret).
    ("jwt", "jwt", ("eyj",), r"\.eyJ[A-Za-z0-9_-]{8,}+\.(?:[A-Za-z0-9_-]++)?+"),
)
