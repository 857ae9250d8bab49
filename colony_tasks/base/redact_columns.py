"""Secrets known by their column: a value is a password because of the name at the top of the
column it is in, which no pattern over the value's own line can see.

- SQL: ``INSERT INTO users (name, password) VALUES ('bob', '…'), ('amy', '…');``
- a table: a header line of names separated by commas, semicolons, tabs or pipes (a Markdown
  table's rule line below it is skipped), then the lines below it with as many fields.

The value in a column whose name ends with a word for a password, secret, token or key
(``password``, ``db_password``, ``api_key``) is replaced by ``[REDACTED:password]``; empty
values, ``NULL`` and placeholders (``?``, ``%s``, ``$1``, ``:name``) stay. Only the lines that
hold such a word are looked at, found by ``str.find``; each line is read once. Standard library
only: every hook process may import this module.
"""

from __future__ import annotations

import re

MARKER = "[REDACTED:password]"
WORDS = ("pass", "pwd", "secret", "token", "key", "credential")
# A column name that ends with a sensitive word (whole, or after "_", "-" or ".").
_NAME = (
    r"[\"'`\[]?+(?:[\w.-]{0,32}[_.-])?"
    r"(?i:password|passwd|passphrase|pass|pwd|secret|token|api_?key|private_?key|credentials?)"
    r"[\"'`\]]?+"
)
_INSERT = (
    r"(?i:insert)[ \t]++(?:(?i:into)[ \t]++)?[^\s(]{1,128}+[ \t]*+"
    r"\(([^()\n]{1,1024}+)\)\s{0,16}+(?i:values)\s{0,16}+\("
)
# One value of a VALUES row, and what follows it: "," (another value) or ")" (the row's end).
_FIELD = r"""\s*+('(?:[^'\\]|\\.|'')*+'|"(?:[^"\\]|\\.)*+"|[^,()'"]*+)\s*+([,)])"""
_NEXT_ROW = r"\s*+,\s*+\("
_PLACEHOLDER = r"(?i:null|default|\?|%s|\$\d{1,3}|:\w{1,64}|\[REDACTED:[\w-]{1,64}\][^\s]*)"
_RULE_LINE = r"[ \t|:+-]*-{3,}[ \t|:+-]*"
_DELIMITERS = ("|", "\t", ",", ";")
SHORT_TEXT = 4096  # (below, the lines with a word are found without compiling a pattern)
# A sensitive word at the end of a header field: a delimiter or the line's end after it.
_HEADER_WORDS = tuple(
    f"{word}[\"'`\\]]?+(?=[,;\t|\r\n]|[ \t]*+\\||\\Z)"
    for word in ("pass(?:word|wd|phrase)?", "pwd", "secret", "token", "key", "credentials?")
)
_compiled: dict[str, re.Pattern[str]] = {}


def _re(source: str) -> re.Pattern[str]:
    found = _compiled.get(source)
    if found is None:
        found = _compiled[source] = re.compile(source)
    return found


def redact_columns(text: str, lowered: str, sql: bool = True) -> str:
    """``text`` with the values in sensitive columns replaced (``lowered``: ``text.lower()``;
    ``sql``: whether the text may hold ``insert`` and ``values``, when the caller knows)."""
    if len(lowered) != len(text):  # (a letter such as "İ" lowers to two): ASCII only, in C
        lowered = text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")
    spans: list[tuple[int, int]] = []
    if sql and "values" in lowered and "insert" in lowered:
        spans += _sql_values(text, lowered)
    spans += _table_values(text, lowered)
    if not spans:
        return text
    out: list[str] = []
    kept_from = 0
    for start, end in sorted(set(spans)):
        if start < kept_from:
            continue
        out += [text[kept_from:start], MARKER]
        kept_from = end
    out.append(text[kept_from:])
    return "".join(out)


def _sensitive(names: list[str]) -> list[int]:
    name = _re(_NAME)
    return [i for i, field in enumerate(names) if name.fullmatch(field.strip())]


def _kept(value: str) -> bool:
    """Whether a value is no secret: empty, NULL or a placeholder."""
    bare = value.strip().strip("'\"")
    return not bare or _re(_PLACEHOLDER).fullmatch(bare) is not None


def _sql_values(text: str, lowered: str) -> list[tuple[int, int]]:
    """The spans of the values under sensitive columns of every ``INSERT … VALUES``."""
    spans: list[tuple[int, int]] = []
    insert, field, next_row = _re(_INSERT), _re(_FIELD), _re(_NEXT_ROW)
    at = lowered.find("insert")
    while at != -1:
        match = insert.match(text, at)
        columns = _sensitive(match.group(1).split(",")) if match else []
        end = match.end() if match else at + 1
        while columns:  # one row per turn
            index = 0
            while (value := field.match(text, end)) is not None:
                end = value.end()
                if index in columns and not _kept(value.group(1)):
                    start, stop = value.span(1)
                    quoted = value.group(1)[:1] in ("'", '"')
                    spans.append((start + quoted, stop - quoted))
                index += 1
                if value.group(2) == ")":
                    break
            more = next_row.match(text, end)
            if value is None or more is None:
                break
            end = more.end()
        at = lowered.find("insert", max(end, at + 1))
    return spans


def _table_values(text: str, lowered: str) -> list[tuple[int, int]]:
    """The spans of the values under sensitive columns of every delimited table."""
    heads: set[int] = set()
    if len(text) <= SHORT_TEXT:  # no pattern to compile: each line with a word and a delimiter
        for word in WORDS:
            at = lowered.find(word)
            while at != -1:
                head = lowered.rfind("\n", 0, at) + 1
                end = lowered.find("\n", at)
                end = len(lowered) if end == -1 else end
                if any(d in lowered[head:end] for d in _DELIMITERS):
                    heads.add(head)
                at = lowered.find(word, end)
        return _tables(text, heads)
    for source in _HEADER_WORDS:  # (each starts with a literal: re jumps between its places)
        pattern = _re(source)
        match = pattern.search(lowered)
        while match is not None:  # the first on each line only
            heads.add(lowered.rfind("\n", 0, match.start()) + 1)
            end = lowered.find("\n", match.end())
            match = None if end == -1 else pattern.search(lowered, end)
    return _tables(text, heads)


def _tables(text: str, heads: set[int]) -> list[tuple[int, int]]:
    """The spans of the sensitive values of the tables whose header may start at ``heads``."""
    spans: list[tuple[int, int]] = []
    done = 0
    for head in sorted(heads):
        if head >= done:
            done = max(done, _table(text, head, spans))
    return spans


def _fields(line: str, delimiter: str) -> list[str]:
    fields = line.split(delimiter)
    if delimiter == "|" and len(fields) > 2 and not fields[0].strip() and not fields[-1].strip():
        fields = fields[1:-1]
    return fields


def _table(text: str, head: int, spans: list[tuple[int, int]]) -> int:
    """Add the spans of the sensitive values of the table whose header starts at ``head``, if
    it is one; the end of what was read."""
    end = text.find("\n", head)
    end = len(text) if end == -1 else end
    line = text[head:end].rstrip("\r")
    if len(line) > 1024:  # (a header is a line of names)
        return end
    piped = "|" in line
    if not piped and " " in line:  # (a header of names separated by commas holds no blank)
        return end
    for delimiter in ("|",) if piped else _DELIMITERS[1:]:
        names = _fields(line, delimiter)
        if len(names) < 2 or not all(_re(r"[\w .\"'`\[\]-]{1,48}").fullmatch(n) for n in names):
            continue
        columns = _sensitive(names)
        if not columns:
            continue
        start = end + 1
        while start < len(text):
            stop = text.find("\n", start)
            stop = len(text) if stop == -1 else stop
            row = text[start:stop].rstrip("\r")
            if start == end + 1 and piped:  # a Markdown table has its rule line
                if not _re(_RULE_LINE).fullmatch(row):
                    return start
                start = stop + 1
                continue
            fields = _fields(row, delimiter)
            if len(fields) != len(names) or not row.strip():
                return start
            offset = start + (
                row.find(delimiter) + 1 if delimiter == "|" and row.lstrip()[:1] == "|" else 0
            )
            for index, value in enumerate(fields):
                if index in columns and not _kept(value):
                    lead = len(value) - len(value.lstrip())
                    spans.append((offset + lead, offset + len(value.rstrip())))
                offset += len(value) + 1
            start = stop + 1
        return start
    return end
