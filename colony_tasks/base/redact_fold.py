"""Folding: the copy of a text the secret rules also see, and the map back to its characters.

Secrets are matched on a folded copy of the text as well as on the text itself, so that a
secret written with full-width letters, zero-width characters, Cyrillic look-alikes, a line
continuation or escaped quotes is still found; what the rules replace in the folded copy is
replaced in the original (:mod:`colony_tasks.base.redact` does that). This module only folds:
it knows no rule. Linear in the length of the text; standard library only (every hook process
may import it).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from itertools import accumulate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

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
_INVISIBLE = (
    "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
)
_COMPAT = "\u00a0\u2000-\u200a\u202f\u205f\u3000\ufb00-\ufb06\uff01-\uff5e\U0001d400-\U0001d7ff"
_LOOKALIKE = (
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u04cf\u0501"
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0406\u0408\u0405"
)
# the first character, a backslash or not ASCII, is a class: `re` skips ASCII text in C
_FIRST = "[\\\\\x80-\U0010ffff]"
# what every branch of _BRANCHES needs, tested at once: a special character, or an ASCII
# letter or digit next to it (most characters of non-Latin prose fail here, cheaply)
_GUARD = f"(?=[A-Za-z0-9]|(?<=[\\\\{_INVISIBLE}{_COMPAT}{_LOOKALIKE}])|(?<=[A-Za-z0-9].))"
_BRANCHES = (
    # after a backslash: escaping backslashes before a quote, a line continuation, an escaped
    # ASCII character: \u0070, \x70 (JSON, JavaScript and Python string escapes)
    "(?:(?<=\\\\)(?:\\\\*+(?=[\"'])|\\r?\\n[ \\t]{0,64}+|u00[2-7][0-9a-fA-F]|x[2-7][0-9a-fA-F])"
    f"|(?<=[{_INVISIBLE}{_COMPAT}])[{_INVISIBLE}{_COMPAT}]*+"
    # non-ASCII letters touching an ASCII letter or digit: folding may leave them as they are
    "|(?P<letters>(?<=[A-Za-z0-9][^\\x00-\\x7f])[^\\x00-\\x7f]{0,62}+"
    f"|(?<=[{_LOOKALIKE}])[{_LOOKALIKE}]{{0,15}}+(?=[A-Za-z0-9])"
    "|(?<=[^\\x00-\\x7f])(?=[A-Za-z0-9])))"
)
_FOLDABLE = _FIRST + _GUARD + _BRANCHES
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
            if run[1:2] in ("u", "x") and len(run) > 2:  # an escaped character: itself
                folded_run = [(_unescaped(run), at, end)]
            elif run.endswith("\n"):  # a line continuation: one blank
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


def _unescaped(run: str) -> str:
    """The character an escape such as ``\\u0070`` or ``\\x70`` stands for (printable ASCII)."""
    return chr(int(run[2:], 16))


def _ascii_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _mixed(text: str, at: int, end: int) -> bool:
    """Whether the non-ASCII run text[at:end] holds a Cyrillic look-alike next to Latin."""
    run = text[at:end]
    if run.translate(_CONFUSABLE) == run:
        return False
    return (at > 0 and _ascii_alnum(text[at - 1])) or (end < len(text) and _ascii_alnum(text[end]))


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


def fold_windows(text: str, sites: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """The spans of ``text`` whose folded copy the rules must see: each place folding
    changes, with :data:`FOLD_WINDOW` characters on either side, widened to line ends."""
    if not sites:
        return []
    # sites whose windows meet share one span (a comprehension: a site every few characters)
    gap = 2 * FOLD_WINDOW
    breaks = [i for i, (at, _, _) in enumerate(sites) if i and at - sites[i - 1][1] > gap]
    firsts = [0, *breaks]
    lasts = [i - 1 for i in breaks] + [len(sites) - 1]
    spans = [
        (max(sites[i][0] - FOLD_WINDOW, 0), min(sites[j][1] + FOLD_WINDOW, len(text)))
        for i, j in zip(firsts, lasts, strict=True)
    ]
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


def line_chunks(text: str, a: int, b: int) -> Iterator[tuple[int, int]]:
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


def fold_sites(text: str) -> list[tuple[int, int, str]]:
    """The places where folding changes ``text``, each with what it folds to (see
    :data:`_FOLDABLE`)."""
    return folded_sites(text)[0]


def folded_sites(text: str) -> tuple[list[tuple[int, int, str]], str]:
    """The places where folding changes ``text``, each with what it folds to (see
    :data:`_FOLDABLE`), and ``text`` with each place folded, made in the same pass (non-Latin
    prose has a place every few characters, and splicing them in afterwards cost a slice per
    place; :func:`fold` makes the same text). What a place folds to depends on it and on
    whether the characters either side are ASCII letters or digits, and is remembered: prose
    repeats its words, and a site costs a lookup (most by the run alone, see :func:`_run_folded`)."""
    if text.isascii() and "\\" not in text:
        return [], text
    if not _fold_re:
        _fold_re.append(re.compile(_FOLDABLE))
    sites: list[tuple[int, int, str]] = []
    remembered = _SITES
    runs = _RUNS

    def folded(match: re.Match[str]) -> str:
        run = match[0]
        found = runs[run] if run in runs else _run_folded(run)
        if found is None:  # what it folds to depends on the characters either side
            at, end = match.span()
            key = (text[at - 1 : at], run, text[end : end + 1])
            found = remembered.get(key)
            if found is None:
                found = _site_folded(*key)
                if len(remembered) >= 4096:
                    remembered.clear()
                remembered[key] = found
            if found != run:
                sites.append((at, end, found))
        elif found != run:
            sites.append((*match.span(), found))
        return found

    copy = _fold_re[0].sub(folded, text)
    return sites, copy


_RUNS: dict[str, str | None] = {}


def _run_folded(run: str) -> str | None:
    """What ``run`` folds to wherever it is, or None when that depends on the characters
    either side; remembered. :func:`_site_folded` asks of those only whether each is an ASCII
    letter or digit (none at an end counts as neither), so two neighbours of each kind tell."""
    folds = {_site_folded(before, run, after) for before in ("", "a") for after in ("", "a")}
    found = folds.pop() if len(folds) == 1 else None
    if len(_RUNS) >= 4096:
        _RUNS.clear()
    _RUNS[run] = found
    return found


_SITES: dict[tuple[str, str, str], str] = {}


def _site_folded(before: str, run: str, after: str) -> str:
    """What ``run``, a match of :data:`_FOLDABLE` between ``before`` and ``after`` (a character
    each, or empty at an end), folds to: as :func:`fold` folds it."""
    import unicodedata

    if len(_fold_re) == 1:
        _fold_re.append(re.compile(f"[{_INVISIBLE}]++"))
        _fold_re.append(re.compile(f"[{_COMPAT}]++"))
    if run[0] == "\\":
        if run[1:2] in ("u", "x") and len(run) > 2:
            return _unescaped(run)
        return " " if run.endswith("\n") else ""
    if _fold_re[1].fullmatch(run):
        return ""
    if _fold_re[2].fullmatch(run) and len(nfkc := unicodedata.normalize("NFKC", run)) == len(run):
        return nfkc
    context = before + run + after
    pieces = _fold_run(context, len(before), len(before) + len(run), unicodedata)
    return "".join(piece for piece, _, _ in pieces)


def window_copies(
    sites: list[tuple[int, int, str]], folded: str, windows: list[tuple[int, int]]
) -> list[str]:
    """The folded copy of each window (spans of the text, in order, each site inside one):
    its span of ``folded`` (the text with every site folded, see :func:`folded_sites`),
    shifted by how much the sites before it changed the length."""
    starts = [at for at, _, _ in sites]
    shifts = [0, *accumulate(len(f) - (end - at) for at, end, f in sites)]
    copies = []
    i = 0
    for a, b in windows:
        i = bisect_left(starts, a, i)
        j = bisect_left(starts, b, i)
        copies.append(folded[a + shifts[i] : b + shifts[j]])
        i = j
    return copies
