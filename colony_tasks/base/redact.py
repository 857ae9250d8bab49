"""Redaction applied to every text before it is stored.

:func:`redact` caps the text (when given a ``limit``), drops ``<private>…</private>`` spans,
then replaces secrets by ``[REDACTED:<kind>]``, keeping readable prefixes such as
``password=`` or ``Authorization: Bearer``. The rules are data, in
:mod:`colony_tasks.base.redact_rules`. Text that is not plain ASCII is also redacted through its
folded copy (:mod:`colony_tasks.base.redact_fold`: full-width letters, invisible characters,
look-alikes), and what the rules replace there is replaced in the original characters.

Time is linear in the length of the text, whatever the text: every rule has a shape that
cannot backtrack (checked rule by rule in tests/support/redos.py, searched for slow inputs in
tests/base/test_redaction_linear.py, measured in bench/redact.py), and ``<private>`` nesting is
counted in one pass.

A rule runs only when one of its lowercase trigger substrings occurs in the text, and its
pattern is compiled the first time it runs: most texts hold no secret, and a hook process
compiles few patterns. A rule with anchors (the words its matches start with) is tried only
where one occurs, found by ``str.find`` in C rather than by ``re`` at every position. Standard library only: every hook process imports this module.
"""

from __future__ import annotations

import re

from .redact_columns import WORDS as COLUMN_WORDS
from .redact_columns import redact_columns
from .redact_encoded import redact_encoded
from .redact_encoded import triggers as encoded_triggers
from .redact_fold import fold, fold_windows, folded_sites, line_chunks, window_copies
from .redact_mapped import apply_mapped, tried_at
from .redact_phrases import redact_mnemonics
from .redact_rules import CODE, RULES, Rule, literal_head
from .redact_words import Asked, Words, lower, lowering
from .text import utf8_safe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

# How far back from a cut the cap drops a partial word (a secret cut in half must not stay).
CUT_LOOKBACK = 1024
# Above this length a rule that starts with a literal, or that has anchors, runs without its
# trigger test: looking for its start costs about what looking for a trigger does (a full
# pass when absent, as most of a long text's triggers are).
LONG_TEXT = 65_536
ELLIPSIS = "…"

# A <private> tag: optional whitespace inside, attributes, '>' optional (an open tag that never
# closes still hides the rest). A self-closing <private/> hides nothing.
_TAG = r"<[ \t\r\n]{0,16}+(/?+)[ \t\r\n]{0,16}+(?i:private)(?![\w-])[^<>]{0,256}+>?+"
_WHITESPACE = " \t\r\n"

# A rule's patterns and how a match is replaced: by a literal marker (run in C), by the kept
# prefix and the marker (``split`` in C, see apply_rule), or by a function that leaves code
# alone (short texts only). Compiled on first use, once per process.
_compiled: dict[tuple[str, bool], tuple[list[re.Pattern[str]], str, Callable[..., str] | None]] = {}
_tag: list[re.Pattern[str]] = []


def _compile(
    rule: Rule, spelled: bool = False
) -> tuple[list[re.Pattern[str]], str, Callable[[re.Match[str]], str] | None]:
    """The rule's patterns, its marker and, for a short text's patterns of a rule that leaves
    code alone, the function that replaces a match. ``spelled``: the patterns for long texts
    (see :meth:`Rule.sources`)."""
    found = _compiled.get((rule.name, spelled))
    if found is None:
        patterns = [re.compile(source) for source in rule.sources(spelled)]
        marker = f"[REDACTED:{rule.kind}]{rule.suffix}"
        replace = None
        if rule.skip_code and not spelled:

            def replace(match: re.Match[str], marker: str = marker) -> str:
                keep, whole = match.group(1, 0)
                first = whole[len(keep) : len(keep) + 1]
                # code starts with a letter or '_'; anything else is data
                if (first.isalpha() or first == "_") and is_code(whole[len(keep) :]):
                    return whole
                return keep + marker

        found = _compiled[rule.name, spelled] = (patterns, marker, replace)
    return found


def apply_rule(
    rule: Rule,
    text: str,
    spelled: bool | None = None,
    lowered: str | None = None,
    anchors: tuple[str, ...] | None = None,
    words: Words | None = None,
) -> str:
    """``text`` with ``rule`` applied (``spelled``: with the patterns for long texts; by
    default, when ``text`` is longer than :data:`LONG_TEXT`). ``lowered``: ``lower(text)``,
    when the caller has it (a rule with anchors finds them there). ``anchors``: those of the
    rule's anchors the text may hold, when the caller knows (the others are not looked for).
    ``words``: the text's words, when the caller has them: a pattern whose matches start with
    a literal (:func:`literal_head`) the words do not hold, as written, is not run."""
    if spelled is None:
        spelled = len(text) > LONG_TEXT
    patterns, marker, replace = _compile(rule, spelled)
    if rule.anchors and replace is None and len(patterns) == 1:
        if rule.cased:
            lowered = text
        elif lowered is None:
            lowered = lower(text)
        anchors = rule.anchors if anchors is None else anchors
        return _apply_anchored(patterns[0], marker, text, lowered, anchors)
    for pattern in patterns:
        if words is not None and not words.cased(_head(pattern)):
            continue
        if replace is not None:
            text = pattern.sub(replace, text)
        elif not pattern.groups:
            text = pattern.sub(marker, text)  # a literal replacement runs in C
        else:
            # No Python per match: split() hands back, in C, the text between matches and
            # each match's kept prefix, and the marker goes after every prefix. (A function,
            # or a "\\g<keep>" template, which Python 3.11 expands in Python, is several
            # times slower on a text full of matches.)
            parts = pattern.split(text)
            if len(parts) > 1:
                parts[1::2] = map(str.__add__, parts[1::2], [marker] * (len(parts) // 2))
                text = "".join(parts)
    return text


_heads: dict[str, str] = {}


def _head(pattern: re.Pattern[str]) -> str:
    """:func:`literal_head` of ``pattern``, worked out once per pattern."""
    head = _heads.get(pattern.pattern)
    if head is None:
        head = _heads[pattern.pattern] = literal_head(pattern.pattern)
    return head


def _apply_anchored(
    pattern: re.Pattern[str], marker: str, text: str, lowered: str, anchors: tuple[str, ...]
) -> str:
    """``pattern.sub`` of the kept prefix and ``marker``, tried only where an anchor starts:
    the same matches (every match starts at an anchor, and a match tried at a position sees
    the text before it), found in C by ``str.find`` instead of a try at every position."""
    keeps = "keep" in pattern.groupindex
    out: list[str] = []
    kept_from = 0
    for match in tried_at(pattern, text, lowered, anchors):
        out.append(text[kept_from : match.start()])
        if keeps:
            out.append(match.group("keep"))
        out.append(marker)
        kept_from = match.end()
    if not out:
        return text
    out.append(text[kept_from:])
    return "".join(out)


_code: list[re.Pattern[str]] = []


def is_code(value: str) -> bool:
    """Whether an assigned value is code rather than data (see :data:`redact_rules.CODE`);
    the assignment rules refuse such values in their patterns."""
    if not _code:
        _code.append(re.compile(CODE))
    return _code[0].match(value) is not None


def cap(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending with ``…`` when cut.

    A word cut in half is dropped whole (up to :data:`CUT_LOOKBACK` characters back), so a
    secret straddling the cut leaves no prefix that its rule would no longer recognise.
    """
    if len(text) <= limit:
        return text
    keep = max(limit - len(ELLIPSIS), 0)
    head = text[:keep]
    if head and head[-1] not in _WHITESPACE and text[keep] not in _WHITESPACE:
        floor = max(keep - CUT_LOOKBACK, 0)
        cut = max(head.rfind(c, floor) for c in _WHITESPACE)
        head = head[: cut + 1] if cut >= 0 else head[:floor]
    return head + ELLIPSIS


def drop_private(text: str) -> str:
    """``text`` without its ``<private>`` spans (nested spans count; an unclosed one hides the
    rest of the text). Stray closing tags are left as they are."""
    if not _tag:
        _tag.append(re.compile(_TAG))
    pieces: list[str] = []
    depth = 0
    kept_from = 0
    for match in _tag[0].finditer(text):
        if match.group(1):
            if depth:
                depth -= 1
                if not depth:
                    kept_from = match.end()
        elif not match.group().endswith("/>"):
            if not depth:
                pieces.append(text[kept_from : match.start()])
            depth += 1
    if not depth:
        pieces.append(text[kept_from:])
    return "".join(pieces)


_RECENT: dict[tuple[str, int | None], str] = {}
RECENT_MAX = 64


def redact(text: str, limit: int | None = None) -> str:
    """``text`` capped to ``limit`` characters (see :func:`cap`), made UTF-8 safe, without its
    ``<private>`` spans and with every secret replaced by ``[REDACTED:<kind>]``.

    The cap comes first, so the work done is bounded by ``limit`` whatever the input's size.
    Recent results are remembered (their inputs and outputs both), so a use case that
    redacts a text before it takes the write lock makes the store's own redaction of it, under
    the lock, a dictionary lookup.
    """
    if not text:
        return text
    remembered = _RECENT.get((text, limit))
    if remembered is not None:
        return remembered
    clean = _redact(text, limit)
    if len(_RECENT) >= RECENT_MAX:
        _RECENT.clear()
    _RECENT[(text, limit)] = clean
    _RECENT[(clean, limit)] = clean
    return clean


def _redact(text: str, limit: int | None) -> str:
    if limit is not None:
        text = cap(text, limit)
    text = utf8_safe(text)
    lowers = lowering(text)
    lowered = lowers(text)
    if "private" in lowered and "<" in text:
        text = drop_private(text)
        lowered = lowers(text)
    text = _plain(text, lowered, lowers=lowers)
    if not text.isascii() or "\\" in text:
        text = _redact_windows(text)
    return text


def _plain(
    text: str,
    lowered: str | None = None,
    asked: Asked | None = None,
    lowers: Callable[[str], str] | None = None,
) -> str:
    """``text`` with every rule whose trigger it holds applied (no folding). ``asked``: the
    rules' words it may hold, when the caller knows (by default, every one); ``lowered`` and
    ``lowers``: its lowering (:func:`lowering`), when the caller has them."""
    lowers = lowering(text) if lowers is None else lowers
    lowered = lowers(text) if lowered is None else lowered
    if len(text) <= SHORT_TEXT and not _may_trigger(lowered):
        return redact_mnemonics(text)
    long_text = len(text) > LONG_TEXT
    words = Words(
        lowered, distinct=long_text, asked=asked or _triggers(), text=text if long_text else None
    )
    # A newline in front lets line-anchored rules start with a literal "\n".
    work = "\n" + text
    low: str | None = "\n" + lowered
    for rule in _triggered(words, long_text):
        if rule.shape and long_text and not words.holds(rule.shape):
            continue
        anchors = rule.anchors
        if anchors and long_text:
            anchors = tuple(a for a in anchors if (words.cased(a) if rule.cased else a in words))
            if not anchors:  # every match starts at an anchor
                continue
        if anchors and low is None and not rule.cased:
            low = lowers(work)
        # (a short text is not asked: working out each pattern's head costs a hook more)
        applied = apply_rule(
            rule, work, lowered=low, anchors=anchors, words=words if long_text else None
        )
        if applied is not work:
            work, low = applied, None
            words.add(_compile(rule, long_text)[1])
    if not words.present.isdisjoint(COLUMN_WORDS):
        sql = "insert" in words and "values" in words
        work = redact_columns(work, lowers(work) if low is None else low, sql)
    if not words.present.isdisjoint(encoded_triggers()):
        work = redact_encoded(work, _plain)
    return redact_mnemonics(work[1:])


# A process that redacts many short texts (an edit naming 20,000 files redacts each path)
# first asks one pattern holding every trigger whether any is there: one search in C instead
# of a Python loop over the rules. Compiled after SHORT_CALLS short texts (it costs ~2 ms to
# compile, more than a hook that redacts a few texts saves).
SHORT_TEXT = 1024
SHORT_CALLS = 64
_short: list[int] = [0]
_any_trigger: list[re.Pattern[str]] = []


def _may_trigger(lowered: str) -> bool:
    """False when no rule's trigger occurs in ``lowered`` (then no rule can run on it)."""
    if not _any_trigger:
        _short[0] += 1
        if _short[0] < SHORT_CALLS:
            return True
        words = {t for rule in RULES for t in rule.triggers}.union(encoded_triggers())
        triggers = sorted(words, key=len, reverse=True)
        _any_trigger.append(re.compile("|".join(map(re.escape, triggers))))
    return _any_trigger[0].search(lowered) is not None


def _redact_windows(text: str) -> str:
    """``text`` (after the plain pass) with the secrets folding reveals replaced: the rules run
    on the folded copy of a window around each place folding changes.

    Most windows reveal nothing, so the folded copies of all of them are checked at once, in
    one plain pass over their concatenation (one pass per rule, in C, whatever the number of
    windows); only the windows whose folded copy that pass changes are redacted, chunk by
    chunk, mapping what the rules replace back to the original characters."""
    sites, folded_all = folded_sites(text)
    if not sites:
        return text
    windows = fold_windows(text, sites)
    revealed = windows
    if _SEPARATOR not in text:
        # (one window over the whole text, as in non-Latin prose: its copy is the folded text)
        whole = windows == [(0, len(text))]
        copies = [folded_all] if whole else window_copies(sites, folded_all, windows)
        joined = _SEPARATOR.join(copies)
        checked = _plain(joined)
        if checked == joined:
            return text
        pieces = checked.split(_SEPARATOR)
        if len(pieces) == len(copies):
            revealed = [
                w for w, copy, piece in zip(windows, copies, pieces, strict=True) if copy != piece
            ]
    spans = [list(line_chunks(text, a, b)) for a, b in revealed]
    # (folded twice: kept, each folded character's span would cost memory for every window;
    # the first time without the spans, each site looked up as fold_sites remembers it)
    asked = _asked_of([f for c in spans for s in c if (f := folded_text(text[s[0] : s[1]]))])
    out: list[str] = []
    kept_from = 0
    for (a, b), chunks in zip(revealed, spans, strict=True):
        out.append(text[kept_from:a])
        for start, end in chunks:
            chunk = text[start:end]
            folded = fold(chunk)
            # (one chunk: the check above found something in it, no second check)
            if folded is None or (len(chunks) > 1 and _plain(folded[0], asked=asked) == folded[0]):
                out.append(chunk)
            else:
                out.append(_redact_folded(chunk, *folded, asked=asked))
        kept_from = b
    out.append(text[kept_from:])
    return "".join(out)


def _asked_of(texts: list[str]) -> Asked:
    """The rules' words that ``texts`` may hold, asked of each of them (rather than all of
    them, a pass over the text each): those any of them holds (asked of them at once, as a
    long text is), and those a rule's marker holds (a rule puts them in)."""
    if not _markers:
        markers = "\n".join(f"[REDACTED:{rule.kind}]{rule.suffix}".lower() for rule in RULES)
        _markers.append(frozenset(word for word in _triggers().words if word in markers))
    words = Words("\n" + lower("\n".join(texts)), distinct=True, asked=_triggers())
    return Asked(tuple(words.present.union(_markers[0])))


_markers: list[frozenset[str]] = []  # the rules' words that the rules' markers hold


# Between the folded copies checked at once: a line no rule matches across (a NUL, which
# no value, name or block of lines holds). A text that holds one is checked window by window.
_SEPARATOR = "\n\x00\n"


def folded_text(text: str) -> str | None:
    """The folded copy of ``text`` alone, without the map back to the original (see
    :func:`fold`); None when folding changes nothing."""
    sites, folded = folded_sites(text)
    return folded if sites else None


def _triggered(words: Words, long_text: bool) -> Iterator[Rule]:
    """The rules to run on a text whose words are ``words`` (asked :func:`_triggers`), in
    order: those with a trigger in the text (and, for gated rules, a need near it; on a long
    text a rule that starts with a literal or has anchors finds its own places about as fast as
    :func:`near` would)."""
    present = words.present  # (grows as rules put markers in the text)
    for rule in RULES:
        if present.isdisjoint(rule.triggers):
            continue
        if not rule.needs or (long_text and (rule.prefixed or rule.anchors)):
            yield rule
            continue
        for trigger in rule.triggers:
            if trigger in present and near(words.lowered, trigger, rule):
                yield rule
                break


_asked: list[Asked] = []


def _triggers() -> Asked:
    """Every rule's triggers, asked of each text at once."""
    if not _asked:
        triggers = {t for rule in RULES for t in rule.triggers}
        _asked.append(Asked(tuple(triggers.union(encoded_triggers()))))
    return _asked[0]


def _redact_folded(
    text: str, folded: str, starts: list[int], ends: list[int], asked: Asked | None = None
) -> str:
    """``text`` with what the rules replace in its folded copy replaced in it (``asked``: as
    for :func:`_plain`)."""
    work = "\n" + folded
    starts = [0, *starts]
    ends = [0, *ends]
    marks = "0" * len(work)  # "1" under a character a rule put there
    long_text = len(work) > LONG_TEXT
    low = lower(work)
    words = Words(low, distinct=False, asked=asked or _triggers())
    for rule in _triggered(words, long_text):
        compiled = _compile(rule, len(work) > LONG_TEXT)  # (markers change the length)
        applied, starts, ends, marks = apply_mapped(rule, compiled, work, starts, ends, marks, low)
        if applied is not work:
            work, low = applied, lower(applied)
    if "1" not in marks:
        return text
    out: list[str] = []
    kept_from = 0
    for run in re.finditer("1+", marks):
        a, b = run.span()
        out.append(text[kept_from : starts[a]])
        out.append(work[a:b])
        kept_from = ends[b - 1]
    out.append(text[kept_from:])
    return "".join(out)


def near(lowered: str, trigger: str, rule: Rule) -> bool:
    """Whether one of ``rule.needs`` starts less than ``rule.within`` characters after the
    start of an occurrence of ``trigger`` (see :class:`Rule`). Linear: the trigger's and
    each need's next occurrences are searched forward only, never twice over one stretch."""
    ahead = {need: lowered.find(need) for need in rule.needs}  # next occurrence of each
    at = lowered.find(trigger)
    while at != -1:
        nearest = -1
        for need, found in ahead.items():
            if 0 <= found < at:
                found = ahead[need] = lowered.find(need, at)
            if found >= 0 and (nearest < 0 or found < nearest):
                nearest = found
        if nearest < 0:
            return False
        if nearest < at + rule.within:
            return True
        at = lowered.find(trigger, nearest - rule.within + 1)
    return False


def redact_value(value: Any, limit: int | None = None) -> Any:
    """Redact every string inside a JSON-like value (dicts, lists, strings), the keys of its
    objects included; ``limit`` caps each string."""
    if isinstance(value, str):
        return redact(value, limit)
    if isinstance(value, dict):
        return {redact_value(key, limit): redact_value(item, limit) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item, limit) for item in value]
    return value
