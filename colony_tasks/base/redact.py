"""Redaction applied to every text before it is stored.

:func:`redact` caps the text (when given a ``limit``), drops ``<private>…</private>`` spans,
then replaces secrets by ``[REDACTED:<kind>]``, keeping readable prefixes such as
``password=`` or ``Authorization: Bearer``. The rules are data, in
:mod:`colony_tasks.base.redact_rules`.

Time is linear in the length of the text, whatever the text: every rule has a shape that
cannot backtrack (checked rule by rule in tests/support/redos.py, searched for slow inputs in
tests/base/test_redaction_linear.py, measured in bench/redact.py), and ``<private>`` nesting is
counted in one pass.

A rule runs only when one of its lowercase trigger substrings occurs in the text, and its
pattern is compiled the first time it runs: most texts hold no secret, and a hook process
compiles few patterns. Standard library only: every hook process imports this module.
"""

from __future__ import annotations

import re

from .redact_rules import CODE, RULES, Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

# How far back from a cut the cap drops a partial word (a secret cut in half must not stay).
CUT_LOOKBACK = 1024
# Above this length a rule that starts with a literal runs without its trigger test: both
# cost one pass over the text, and most of a long text's triggers are absent (a full pass).
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


def apply_rule(rule: Rule, text: str, spelled: bool | None = None) -> str:
    """``text`` with ``rule`` applied (``spelled``: with the patterns for long texts; by
    default, when ``text`` is longer than :data:`LONG_TEXT`)."""
    if spelled is None:
        spelled = len(text) > LONG_TEXT
    patterns, marker, replace = _compile(rule, spelled)
    for pattern in patterns:
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


_code: list[re.Pattern[str]] = []


def is_code(value: str) -> bool:
    """Whether an assigned value is code rather than data (see :data:`redact_rules.CODE`);
    the assignment rules refuse such values in their patterns."""
    if not _code:
        _code.append(re.compile(CODE))
    return _code[0].match(value) is not None


def utf8_safe(text: str) -> str:
    """``text`` with lone surrogates (half an emoji from a JSON ``\\ud83d`` escape) replaced.

    SQLite stores UTF-8; a lone surrogate cannot be encoded and would make the write fail.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


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
    lowered = text.lower()
    if "private" in lowered and "<" in text:
        text = drop_private(text)
        lowered = text.lower()
    text = _plain(text, lowered)
    if not text.isascii() or "\\" in text:
        text = _redact_windows(text)
    return text


def _plain(text: str, lowered: str | None = None) -> str:
    """``text`` with every rule whose trigger it holds applied (no folding)."""
    lowered = text.lower() if lowered is None else lowered
    if len(text) <= SHORT_TEXT and not _may_trigger(lowered):
        return text
    # A newline in front lets line-anchored rules start with a literal "\n".
    work = "\n" + text
    for rule in _triggered(lowered, len(text) > LONG_TEXT):
        work = apply_rule(rule, work)
    return work[1:]


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
        triggers = sorted({t for rule in RULES for t in rule.triggers}, key=len, reverse=True)
        _any_trigger.append(re.compile("|".join(map(re.escape, triggers))))
    return _any_trigger[0].search(lowered) is not None


def _redact_windows(text: str) -> str:
    """``text`` (after the plain pass) with the secrets folding reveals replaced: the rules run
    on the folded copy of a window around each place folding changes.

    Most windows reveal nothing, so the folded copies of all of them are checked at once, in
    one plain pass over their concatenation (one pass per rule, in C, whatever the number of
    windows); only the windows whose folded copy that pass changes are redacted, chunk by
    chunk, mapping what the rules replace back to the original characters."""
    sites = _fold_sites(text)
    if not sites:
        return text
    windows = _windows(text, sites)
    revealed = windows
    if _SEPARATOR not in text:
        copies = []
        i = 0
        for a, b in windows:
            j = i
            while j < len(sites) and sites[j][0] < b:
                j += 1
            copies.append(_spliced(text, sites[i:j], a, b))
            i = j
        joined = _SEPARATOR.join(copies)
        checked = _plain(joined)
        if checked == joined:
            return text
        pieces = checked.split(_SEPARATOR)
        if len(pieces) == len(copies):
            revealed = [
                w for w, copy, piece in zip(windows, copies, pieces, strict=True) if copy != piece
            ]
    out: list[str] = []
    kept_from = 0
    for a, b in revealed:
        out.append(text[kept_from:a])
        chunks = list(_chunks(text, a, b))
        for start, end in chunks:
            chunk = text[start:end]
            if len(chunks) == 1:  # the check above found something: no second check
                folded = fold(chunk)
                out.append(chunk if folded is None else _redact_folded(chunk, *folded))
            else:
                out.append(_fold_chunk(chunk))
        kept_from = b
    out.append(text[kept_from:])
    return "".join(out)


# Between the folded copies checked at once: a line no rule matches across (a NUL, which
# no value, name or block of lines holds). A text that holds one is checked window by window.
_SEPARATOR = "\n\x00\n"


def _windows(text: str, sites: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """The spans of ``text`` whose folded copy the rules must see: each place folding
    changes, with :data:`FOLD_WINDOW` characters on either side, widened to line ends."""
    spans: list[list[int]] = []
    for at, end, _ in sites:
        a, b = max(at - FOLD_WINDOW, 0), min(end + FOLD_WINDOW, len(text))
        if spans and a <= spans[-1][1]:
            spans[-1][1] = b
        else:
            spans.append([a, b])
    windows: list[tuple[int, int]] = []
    kept_from = 0
    for a, b in spans:
        # widen to line ends: a line-anchored rule sees its whole line
        a = max(text.rfind("\n", 0, a) + 1 if a else 0, kept_from)
        b = text.find("\n", b) if b < len(text) else len(text)
        b = len(text) if b < 0 else b
        if windows and a <= windows[-1][1]:
            windows[-1] = (windows[-1][0], b)
        elif a < b:
            windows.append((a, b))
        kept_from = b
    return windows


def _chunks(text: str, a: int, b: int) -> Iterator[tuple[int, int]]:
    """text[a:b] cut at line ends into chunks of about :data:`FOLD_CHUNK` characters (a line
    is never cut): the mapped pass costs Python per match."""
    while a < b:
        cut = b if b - a <= FOLD_CHUNK else text.rfind("\n", a + FOLD_CHUNK // 2, a + FOLD_CHUNK)
        if cut < 0:  # a long line: the chunk ends at its end
            cut = text.find("\n", a + FOLD_CHUNK, b)
            cut = b if cut < 0 else cut
        cut = min(cut + 1, b) if cut < b else b
        yield a, cut
        a = cut


def _fold_sites(text: str) -> list[tuple[int, int, str]]:
    """The places where folding changes ``text``, each with what it folds to (see
    :data:`_FOLDABLE`). What a place folds to depends on it and the characters either side
    only, and is remembered: prose repeats its words, and a site costs a lookup."""
    if text.isascii() and "\\" not in text:
        return []
    if not _fold_re:
        _fold_re.append(re.compile(_FOLDABLE))
    sites: list[tuple[int, int, str]] = []
    remembered = _SITES
    for match in _fold_re[0].finditer(text):
        at, end = match.span()
        key = (text[at - 1 : at], match.group(), text[end : end + 1])
        found = remembered.get(key)
        if found is None:
            found = _site_folded(*key)
            if len(remembered) >= 4096:
                remembered.clear()
            remembered[key] = found
        if found != key[1]:
            sites.append((at, end, found))
    return sites


_SITES: dict[tuple[str, str, str], str] = {}


def _site_folded(before: str, run: str, after: str) -> str:
    """What ``run``, a match of :data:`_FOLDABLE` between ``before`` and ``after`` (a character
    each, or empty at an end), folds to: as :func:`fold` folds it."""
    import unicodedata

    if len(_fold_re) == 1:
        _fold_re.append(re.compile(f"[{_INVISIBLE}]++"))
        _fold_re.append(re.compile(f"[{_COMPAT}]++"))
    if run[0] == "\\":
        return " " if run.endswith("\n") else ""
    if _fold_re[1].fullmatch(run):
        return ""
    if _fold_re[2].fullmatch(run) and len(nfkc := unicodedata.normalize("NFKC", run)) == len(run):
        return nfkc
    context = before + run + after
    pieces = _fold_run(context, len(before), len(before) + len(run), unicodedata)
    return "".join(piece for piece, _, _ in pieces)


def folded_text(text: str) -> str | None:
    """The folded copy of ``text`` alone, without the map back to the original (see
    :func:`fold`); None when folding changes nothing."""
    sites = _fold_sites(text)
    return _spliced(text, sites, 0, len(text)) if sites else None


def _spliced(text: str, sites: list[tuple[int, int, str]], a: int, b: int) -> str:
    """text[a:b] with the sites (all inside it) replaced by what they fold to."""
    pieces: list[str] = []
    last = a
    for at, end, folded in sites:
        pieces.append(text[last:at])
        pieces.append(folded)
        last = end
    pieces.append(text[last:b])
    return "".join(pieces)


def _fold_chunk(chunk: str) -> str:
    """``chunk`` with the secrets its folded copy reveals replaced. The plain pass over the
    folded copy (in C) tells whether there is any: most chunks have none, and skip the mapped
    pass (Python per match) that replaces them in the original characters."""
    folded = fold(chunk)
    if folded is None or _plain(folded[0]) == folded[0]:
        return chunk
    return _redact_folded(chunk, *folded)


def _triggered(lowered: str, long_text: bool) -> Iterator[Rule]:
    """The rules to run on a text whose lowercase form is ``lowered``, in order: those with a
    trigger in the text (and, for gated rules, a need near it)."""
    present: dict[str, bool] = {}
    for rule in RULES:
        for trigger in ("",) if long_text and rule.prefixed else rule.triggers:
            hit = present.get(trigger)
            if hit is None:
                hit = present[trigger] = trigger in lowered
            if hit and (not (trigger and rule.needs) or near(lowered, trigger, rule)):
                yield rule
                break


# -- normalisation ------------------------------------------------------------------------------
# Secrets are matched on a folded copy of the text: compatibility forms (full-width letters and
# colons, no-break spaces) as NFKC writes them, invisible characters (zero-width, soft hyphen,
# bidi controls: Unicode category Cf) removed, Cyrillic letters that look like Latin ones in a
# word that holds Latin letters read as Latin, a space between a letter of another script and
# an ASCII letter or digit (a CJK word glued to a token), line continuations joined and the
# backslashes that escape quotes (JSON inside a JSON string) dropped. Each folded character
# remembers the span of the original it came from, and what the rules replace in the folded
# copy is replaced in the original: the stored text keeps its own characters.

_CONFUSABLE = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u04cf\u0501"
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0406\u0408\u0405",
    "aeopcyxijslgABEKMHOPCTXIJS",
)
# What may change, found in one pass: format characters (Cf: zero-width, soft hyphen, bidi
# controls), compatibility forms that fold to ASCII (full-width forms, no-break and other
# spaces, ligatures, mathematical letters and digits), escapes, and non-ASCII letters touching
# an ASCII letter or digit (glued to a token, or Cyrillic look-alikes). Other non-ASCII text
# (…, —, é, CJK prose) is left to the plain pass: folding it could not make a secret appear.
_ESCAPES = r"\\++(?=[\"'])|\\\r?\n[ \t]{0,64}+"
_INVISIBLE = (
    "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
)
_COMPAT = "\u00a0\u2000-\u200a\u202f\u205f\u3000\ufb00-\ufb06\uff01-\uff5e\U0001d400-\U0001d7ff"
_LOOKALIKE = (
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u04cf\u0501"
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0406\u0408\u0405"
)
_FOLDABLE = (
    # the first character, a backslash or not ASCII, is a class: `re` skips ASCII text in C
    "[\\\\\x80-\U0010ffff]"
    f"(?:(?<=[{_INVISIBLE}{_COMPAT}])[{_INVISIBLE}{_COMPAT}]*+"
    "|(?<=\\\\)\\\\*+(?=[\"'])|(?<=\\\\)\\r?\\n[ \\t]{0,64}+"
    # non-ASCII letters touching an ASCII letter or digit: folding may leave them as they are
    "|(?P<letters>(?<=[A-Za-z0-9][^\\x00-\\x7f])[^\\x00-\\x7f]{0,62}+"
    f"|(?<=[{_LOOKALIKE}])[{_LOOKALIKE}]{{0,15}}+(?=[A-Za-z0-9])"
    "|(?<=[^\\x00-\\x7f])(?=[A-Za-z0-9])))"
)
_fold_re: list[re.Pattern[str]] = []
# Around each place folding changes, the rules run on the folded copy of this many characters
# on either side (the rest of the text had the plain pass): a secret and its name fit in it.
FOLD_WINDOW = 1024
FOLD_CHUNK = 8192  # the most the rules see of folded text at once (cut at a line end)


def fold(text: str) -> tuple[str, list[int], list[int]] | None:
    """The folded copy of ``text`` (see above) and, per folded character, the start and end of
    the original span it stands for; None when folding changes nothing. Linear: one pass."""
    import unicodedata

    if not _fold_re:
        _fold_re.append(re.compile(_FOLDABLE))
    if len(_fold_re) == 1:
        _fold_re.append(re.compile(f"[{_INVISIBLE}]++"))
        _fold_re.append(re.compile(f"[{_COMPAT}]++"))
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    last = 0
    changed = False
    for match in _fold_re[0].finditer(text):
        at, end = match.span()
        run = match.group()
        if run[0] == "\\":
            if run.endswith("\n"):  # a line continuation: one blank
                folded_run = [(" ", at, end)]
            else:  # escaping backslashes before a quote: gone
                folded_run = []
        elif _fold_re[1].fullmatch(run):  # invisible characters only: gone, no Python per char
            folded_run = []
        elif _fold_re[2].fullmatch(run) and len(nfkc := unicodedata.normalize("NFKC", run)) == len(
            run
        ):  # compatibility forms, one character each: folded as a whole
            if at > last:
                pieces.append(text[last:at])
                starts.extend(range(last, at))
                ends.extend(range(last + 1, at + 1))
            pieces.append(nfkc)
            starts.extend(range(at, end))
            ends.extend(range(at + 1, end + 1))
            last = end
            changed = True
            continue
        else:
            folded_run = _fold_run(text, at, end, unicodedata)
            if "".join(piece for piece, _, _ in folded_run) == run:
                continue
        if at > last:
            pieces.append(text[last:at])
            starts.extend(range(last, at))
            ends.extend(range(last + 1, at + 1))
        for piece, s_at, s_end in folded_run:
            pieces.append(piece)
            starts.extend([s_at] * len(piece))
            ends.extend([s_end] * len(piece))
        last = end
        changed = True
    if not changed:
        return None
    pieces.append(text[last:])
    starts.extend(range(last, len(text)))
    ends.extend(range(last + 1, len(text) + 1))
    return "".join(pieces), starts, ends


def _ascii_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _mixed(text: str, at: int, end: int) -> bool:
    """Whether the non-ASCII run text[at:end] holds a Cyrillic look-alike next to Latin."""
    run = text[at:end]
    if run.translate(_CONFUSABLE) == run:
        return False
    return (at > 0 and _ascii_alnum(text[at - 1])) or (end < len(text) and _ascii_alnum(text[end]))


def _glued(text: str, at: int, end: int) -> bool:
    """Whether a letter of another script touches an ASCII letter or digit (a token glued to a
    CJK word)."""
    return (at > 0 and _ascii_alnum(text[at - 1]) and _foreign_letter(text[at])) or (
        end < len(text) and _ascii_alnum(text[end]) and _foreign_letter(text[end - 1])
    )


def _foreign_letter(char: str) -> bool:
    """A letter that does not fold to ASCII (一, 密, Ж; not ｐ or é's base)."""
    import unicodedata

    return (
        char.isalpha() and not unicodedata.normalize("NFKC", char.translate(_CONFUSABLE)).isascii()
    )


def _fold_run(text: str, at: int, end: int, unicodedata: Any) -> list[tuple[str, int, int]]:
    """The folded pieces of the non-ASCII run text[at:end], each with its original span."""
    out: list[tuple[str, int, int]] = []
    mixed = _mixed(text, at, end)
    if at > 0 and _ascii_alnum(text[at - 1]) and _foreign_letter(text[at]):
        out.append((" ", at, at))
    for i in range(at, end):
        char = text[i]
        if unicodedata.category(char) == "Cf":
            continue
        if mixed:
            char = char.translate(_CONFUSABLE)
        folded = unicodedata.normalize("NFKC", char)
        out.append((folded, i, i + 1))
    if end < len(text) and _ascii_alnum(text[end]) and _foreign_letter(text[end - 1]):
        out.append((" ", end, end))
    return out


def _redact_folded(text: str, folded: str, starts: list[int], ends: list[int]) -> str:
    """``text`` with what the rules replace in its folded copy replaced in it."""
    work = "\n" + folded
    starts = [0, *starts]
    ends = [0, *ends]
    marks = "0" * len(work)  # "1" under a character a rule put there
    for rule in _triggered(work.lower(), len(work) > LONG_TEXT):
        work, starts, ends, marks = _apply_mapped(rule, work, starts, ends, marks)
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


def _apply_mapped(
    rule: Rule, work: str, starts: list[int], ends: list[int], marks: str
) -> tuple[str, list[int], list[int], str]:
    """:func:`apply_rule` on a folded text, carrying each character's original span along."""
    patterns, marker, replace = _compile(rule, len(work) > LONG_TEXT)
    for pattern in patterns:
        pieces: list[str] = []
        new_starts: list[int] = []
        new_ends: list[int] = []
        new_marks: list[str] = []
        last = 0
        for match in pattern.finditer(work):
            a, b = match.span()
            keep = match.group(1) if pattern.groups else ""
            if replace is not None and replace(match) == match.group():
                continue
            cut = a + len(keep)
            if cut >= b:
                continue
            pieces.append(work[last:cut])
            new_starts.extend(starts[last:cut])
            new_ends.extend(ends[last:cut])
            new_marks.append(marks[last:cut])
            pieces.append(marker)
            new_starts.extend([starts[cut]] * len(marker))
            new_ends.extend([ends[b - 1]] * len(marker))
            new_marks.append("1" * len(marker))
            last = b
        if pieces:
            pieces.append(work[last:])
            new_starts.extend(starts[last:])
            new_ends.extend(ends[last:])
            new_marks.append(marks[last:])
            work, starts, ends, marks = "".join(pieces), new_starts, new_ends, "".join(new_marks)
    return work, starts, ends, marks


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
