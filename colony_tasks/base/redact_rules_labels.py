"""The secret rules that know a secret by a label in another language: ``Passwort: …``,
``contraseña = …``, ``пароль — …``, ``비밀번호: …``, ``パスワード：…``. Data only, loaded by
:mod:`colony_tasks.base.redact_rules` (which says what each column means).

A label is a word for a password (or an access token or API key) in one of the languages
listed below, then at most two short words (``Пароль от базы``, ``heslo k databázi``), then a
separator (``:``, ``：``, ``=``, a dash between blanks, or a verb such as ``es``/``ist``/``是``),
then the value: one word, or a quoted phrase. English labels are the assignment rules' work
(:mod:`~colony_tasks.base.redact_rules_context`). The words are the common translations of
"password", "passphrase", "access token" and "API key" (the labels login forms and
configuration guides use), lowercase; a word that is a whole prefix of another is listed once.
Sentences that merely mention a password (``Passwort vergessen?``) hold no separator and are
left as they are.
"""

from __future__ import annotations

# Words that hold only ASCII letters cost a scan of every text for their trigger; the others
# cost nothing on an ASCII text (a search for a wider character in a narrower string is
# refused at once).
ASCII_LABELS: tuple[str, ...] = (
    "passwort",  # de
    "kennwort",  # de
    "contrasena",  # es, without the tilde
    "senha",  # pt
    "palavra-passe",  # pt-PT
    "mot de passe",  # fr
    "parola",  # it, ro, tr
    "parole",  # lv
    "parool",  # et
    "wachtwoord",  # nl
    "losenord",  # sv, without the ring
    "adgangskode",  # da
    "passord",  # no
    "salasana",  # fi
    "haslo",  # pl, without the stroke
    "heslo",  # cs, sk
    "jelszo",  # hu, without the accent
    "sifre",  # tr, without the cedilla
    "lozinka",  # hr, sr, bs
    "geslo",  # sl
    "kata sandi",  # id
    "kata laluan",  # ms
    "mat khau",  # vi, without the marks
    "clave",  # es
)
OTHER_LABELS: tuple[str, ...] = (
    "contraseña",
    "lösenord",
    "hasło",
    "jelszó",
    "şifre",
    "parolă",
    "slaptažodis",
    "mật khẩu",
    "api-schlüssel",
    "schlüssel",
    "clé api",
    "clé d'api",
    "пароль",
    "парола",
    "лозинка",
    "гасло",
    "токен",
    "ключ api",
    "api-ключ",
    "κωδικός",
    "συνθηματικό",
    "סיסמה",
    "סיסמא",
    "كلمة المرور",
    "كلمة السر",
    "رمز عبور",
    "گذرواژه",
    "पासवर्ड",
    "পাসওয়ার্ড",
    "รหัสผ่าน",
    "密码",
    "密碼",
    "口令",
    "密钥",
    "密鑰",
    "令牌",
    "パスワード",
    "暗証番号",
    "トークン",
    "비밀번호",
    "암호",
    "토큰",
)
# Per language, the word "is" between a label and its value (``La contraseña es …``).
_VERBS = "es|ist|est|é|è|is|jest|je|on|är|er|da|là|是|为|為|は|는|은|—|–|-"


def _label_pattern(words: tuple[str, ...]) -> str:
    """The pattern of a label rule over ``words`` (longest first, so a longer label wins)."""
    ordered = sorted(words, key=len, reverse=True)
    alternation = "|".join(w.replace(" ", "[ \\t]").replace("-", "[ \\t-]?") for w in ordered)
    return (
        # the label, not inside a longer word; "=" after it, or up to two short words and
        # ":" or a verb (a word before "=" is a name: 密钥 password=… is an assignment)
        f"(?P<keep>(?<![^\\W\\d_])(?>(?i:{alternation}))(?![^\\W\\d_])(?:[ \\t]{{0,4}}+[=＝](?![=])"
        '|(?:[ \\t]{1,4}+[^\\s:：=＝"「\\[\\]]{1,16}+){0,2}?[ \\t]{0,4}+(?:[:：](?![:=])'
        "|(?<=[ \\t])(?:" + _VERBS + ")(?=[ \\t])))"
        # the value: quoted, or one word that is not a reference nor already replaced
        "[ \\t]{0,4}+[\"'«„“「]?+)(?![$%{<\\[(])[^\\s\"'»“”」,;]{1,128}+"
    )


def _first_words(words: tuple[str, ...]) -> tuple[str, ...]:
    """What a match of a label rule over ``words`` starts with: each label's first word."""
    return tuple(sorted({w.replace("-", " ").split(" ")[0] for w in words}))


# (name, kind, triggers, pattern[, options]); see colony_tasks.base.redact_rules.
LABELS: tuple[tuple, ...] = (
    (
        "label-ascii",
        "password",
        ASCII_LABELS,
        _label_pattern(ASCII_LABELS),
        {"anchors": _first_words(ASCII_LABELS)},
    ),
    (
        "label-other",
        "password",
        OTHER_LABELS,
        _label_pattern(OTHER_LABELS),
        {"anchors": _first_words(OTHER_LABELS)},
    ),
)
