"""The secret rules for newer providers' keys and for wallet keys, and the general rule for a
token that carries a short vendor prefix: data only, loaded by
:mod:`colony_tasks.base.redact_rules` (which says what each column means); they run after
:mod:`~colony_tasks.base.redact_rules_formats`.

The prefixes follow each provider's public documentation (the patterns are written here, in
the shapes :mod:`~colony_tasks.base.redact_rules` requires). Most providers that appeared
since gitleaks' list was last measured share one shape, a short lowercase prefix, ``_`` or
``-``, then a long random run: ``vendor-prefixed-token`` catches that shape whatever the
vendor, when the run mixes upper case, lower case and digits (an identifier or a hex digest
does not). Publishable keys (``pk_live_``, ``phc_``, ``sb_publishable_``) are public by design
and left.
"""

from __future__ import annotations

_B58 = "1-9A-HJ-NP-Za-km-z"

# (name, kind, triggers, pattern[, options]); see colony_tasks.base.redact_rules.
KEYS: tuple[tuple, ...] = (
    # -- newer providers whose token is not mixed-case (the general rule below misses it) --
    (
        "supabase-token",
        "supabase-token",
        ("sbp_", "sb_secret_"),
        "sb(?:p_[a-f0-9]{40}|_secret_[A-Za-z0-9_-]{20,}+)",
    ),
    ("firecrawl-key", "firecrawl-token", ("fc-",), "fc-(?<![\\w-]fc-)[a-f0-9]{32}(?![A-Za-z0-9])"),
    (
        "tailscale-key",
        "tailscale-token",
        ("tskey-",),
        "tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9-]{20,}+",
    ),
    (
        "airtable-token",
        "airtable-token",
        ("pat",),
        "pat(?<![A-Za-z0-9]pat)[A-Za-z0-9]{14}\\.[a-f0-9]{64}(?![A-Za-z0-9])",
    ),
    # -- wallet keys ------------------------------------------------------------------------
    # BIP-32 extended private keys (mainnet xprv/yprv/zprv, testnet tprv/uprv/vprv).
    (
        "bip32-private-key",
        "wallet-key",
        ("xprv", "yprv", "zprv", "tprv", "uprv", "vprv"),
        f"[xyztuv]prv(?<![A-Za-z0-9][xyztuv]prv)[{_B58}]{{100,112}}+(?![A-Za-z0-9])",
    ),
    # Wallet import format: 5 then H, J or K and 49 more (uncompressed), K or L and 51 more.
    (
        "wif-private-key",
        "wallet-key",
        ("5h", "5j", "5k", "k", "l"),
        # (the first character as a class, so that re jumps between its occurrences)
        f"[5KL](?<![A-Za-z0-9+/=][5KL])(?:(?<=5)[HJK][{_B58}]{{49}}|(?<=[KL])[{_B58}]{{51}})"
        "(?![A-Za-z0-9+/=])",
        # a digit follows the first character (all but one in 10,000 keys hold one)
        {
            "scan": True,
            "needs": tuple("123456789"),
            "within": 53,
            "shape": f"[5KL][{_B58}]{{50}}",
        },
    ),
    # -- a token with a short vendor prefix -------------------------------------------------
    # A prefix of two to eight letters at a word start (kept), "_" or "-", then 32 or more
    # characters that mix upper case, lower case and digits. Anchored on the separator.
    (
        "vendor-prefixed-token",
        "token",
        ("_", "-"),
        "(?P<keep>[_-](?:"
        + "|".join(f"(?<=[^A-Za-z0-9_.-][A-Za-z]{{{n}}}[_-])" for n in range(2, 9))
        + "))"
        # not a public key by design, nor a digest
        "(?<!pk_)(?<!phc_)(?<!sha1-)(?<!sha256-)(?<!sha384-)(?<!sha512-)(?!publishable_)"
        "(?=[A-Za-z0-9_]{0,64}?[A-Z])(?=[A-Za-z0-9_]{0,64}?[a-z])(?=[A-Za-z0-9_]{0,64}?[0-9])"
        "[A-Za-z0-9_]{32,256}+(?![A-Za-z0-9+/=-])",
        # the run holds a digit in its first 65 characters
        {"scan": True, "needs": tuple("0123456789"), "within": 67, "shape": "[_-][A-Za-z0-9_]{32}"},
    ),
)
