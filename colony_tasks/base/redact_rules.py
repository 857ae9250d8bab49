"""The secret rules :mod:`colony_tasks.base.redact` applies, built from the rule table.

Each :class:`Rule` names the kind of secret (the ``<kind>`` of ``[REDACTED:<kind>]``), the
lowercase substrings that must occur in a text before its pattern is compiled or run, and the
pattern. A group named ``keep`` is a readable prefix kept in the output (``password=``,
``Authorization: Bearer ``); everything else the pattern matches is replaced.

The table is data, in modules that import nothing, applied in this order: the secrets known by
their own shape (:mod:`~colony_tasks.base.redact_rules_formats`: private keys, provider tokens;
:mod:`~colony_tasks.base.redact_rules_keys`: newer providers, wallet keys, vendor-prefixed
tokens), then those known by what surrounds them: tools' password arguments
(:mod:`~colony_tasks.base.redact_rules_tools`), labels in other languages
(:mod:`~colony_tasks.base.redact_rules_labels`), then headers, URLs, flags and assignments
(:mod:`~colony_tasks.base.redact_rules_context`, with the building blocks the patterns share). A row is ``(name,
kind, triggers, pattern)``, then optionally a dict of :class:`Rule`'s other arguments. In a
pattern, ``@NAME@`` stands for the fragment NAME, written out here once, at import; two
placeholders stay, filled in when a rule is compiled: :data:`WORD` (each of the rule's
spellings) and :data:`CODE_CHECK` (the code check).

The table is Python literals rather than JSON for the hook path: a hook that applies its event
itself imports it, and the same table parsed from JSON cost that hook about 0.4 ms more than
unmarshalling the compiled rows (bench/redact.py measures the import).

Token formats follow each provider's public documentation and the rule sets of gitleaks and
detect-secrets; the patterns are written anew for Python's ``re`` in a shape that cannot
backtrack (tests/support/redos.py proves it for every rule, tests/base/test_redaction_rules.py
holds an example per rule):

- a rule starts with a literal anchor (or a bounded head) and every quantifier in the head is
  bounded; per start position the matcher does a bounded amount of work;
- an unbounded repeat is either in the *tail* (only optional items follow it, so once reached
  the match succeeds and consumes what it scanned), or possessive over a class that excludes a
  character of every anchor (so scans from different start positions never overlap).

Order matters: provider formats first, then headers, URLs and flags, then generic assignments,
which skip values an earlier rule already replaced.
"""

from __future__ import annotations

from .redact_rules_context import CODE, CONTEXT, FRAGMENTS
from .redact_rules_formats import FORMATS
from .redact_rules_keys import KEYS
from .redact_rules_labels import LABELS
from .redact_rules_tools import TOOLS
from .redact_words import lower

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


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
    the word from a pass that cannot match.

    ``anchors``: lowercase substrings of which one starts every match, where the pattern
    itself cannot tell ``re`` so (it starts with a lookbehind or an alternation, and ``re``
    then tries every position of the text). Such a rule is tried only
    where an anchor occurs (see :func:`colony_tasks.base.redact.apply_rule`). ``cased``: the
    anchors start every match as written (the pattern's start is case-sensitive): they are
    looked for in the text itself, not in its lowercase form (fewer places to try: "ENV",
    not every "environment"; and no lowering of the text after each rule that replaced).

    ``shape``: a pattern that every match holds (as written: case counts), and that holds no
    blank: a long text is asked for it among its distinct words (a much shorter string, see
    :mod:`colony_tasks.base.redact_words`) before the rule scans the whole text, for rules whose
    start ``re`` finds slowly (a class of common characters)."""

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
        "anchors",
        "cased",
        "shape",
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
        anchors: tuple[str, ...] = (),
        cased: bool = False,
        shape: str = "",
    ) -> None:
        # The words are looked for in the text lowered as the patterns read it (lower()).
        self.name, self.kind, self.triggers = name, kind, tuple(map(lower, triggers))
        self.pattern, self.suffix, self.spellings = pattern, suffix, spellings
        self.needs, self.within = tuple(map(lower, needs)), within
        self.anchors = anchors if cased else tuple(map(lower, anchors))
        self.cased = cased
        self.shape = shape
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


# What a pattern's head may hold to count as literal text: no blank, nothing special to re.
_SPECIAL = frozenset("\\.^$*+?{}[]|()")


def literal_head(source: str) -> str:
    """The text, as written, that every match of the pattern ``source`` starts with (its
    ``keep`` group opened first): the characters before the first special one, less the last
    if a quantifier follows it; "" when there is none of two characters or more, or when an
    alternation at the head's level (or outside it) lets a match start otherwise. A long
    text's distinct words are asked for it before the pattern scans the text (a spelling such
    as PASSWORD is often absent where password is not)."""
    body = source.removeprefix("(?P<keep>")
    end = 0
    while end < len(body) and body[end] not in _SPECIAL and not body[end].isspace():
        end += 1
    if end < len(body) and body[end] in "?*+{":
        end -= 1
    if end < 2 or _alternates(body[end:]):
        return ""
    return body[:end]


def _alternates(rest: str) -> bool:
    """Whether ``rest`` holds a ``|`` in no group it opens itself (at the level of what came
    before it, or of a group that encloses that and closes in ``rest``)."""
    depth = lowest = 0
    i = 0
    while i < len(rest):
        char = rest[i]
        if char == "\\":
            i += 1
        elif char == "[":  # a class: up to its closing "]" (a "]" first, or escaped, is in it)
            i += 2 if rest[i + 1 : i + 2] == "^" else 1
            i += 1 if rest[i : i + 1] == "]" else 0
            while i < len(rest) and rest[i] != "]":
                i += 2 if rest[i] == "\\" else 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            lowest = min(lowest, depth)
        elif char == "|" and depth <= lowest:
            return True
        i += 1
    return False


# The anchor word in a pattern, written out once per spelling (``spellings``). A pattern that
# starts with a literal lets ``re`` jump from one occurrence to the next, where a
# case-insensitive one tries every position (ten to twenty times slower on a long text). The
# rest of the pattern is case-insensitive: "passWord" is missed; "password", "PASSWORD",
# "Password" (and so "dbPassword", "DB_PASSWORD") are not.
WORD = "@WORD@"


# Where an assignment rule's pattern refuses a value that is code (:data:`CODE`; such rules
# have ``skip_code``): in the patterns for long texts, in the pattern itself, so every match is
# replaced in C; on short texts, in Python per match, since the check doubles the time a pattern
# takes to compile and a hook compiles the rules it triggers.
CODE_CHECK = "@CODE@"


def _expanded(pattern: str, fragments: list[tuple[str, str]]) -> str:
    """``pattern`` with every fragment it names written out."""
    if "@" in pattern:
        for marker, text in fragments:
            if marker in pattern:
                pattern = pattern.replace(marker, text)
    return pattern


def _rule(row: tuple[Any, ...], fragments: list[tuple[str, str]]) -> Rule:
    name, kind, triggers, pattern, *options = row
    return Rule(
        name, kind, triggers, _expanded(pattern, fragments), **(options[0] if options else {})
    )


def build() -> tuple[Rule, ...]:
    """The rules of the table, in order, their fragments written out."""
    fragments: list[tuple[str, str]] = []
    for name, text in FRAGMENTS.items():
        fragments.append((f"@{name}@", _expanded(text, fragments)))
    return tuple(_rule(row, fragments) for row in FORMATS + KEYS + TOOLS + LABELS + CONTEXT)


RULES = build()
