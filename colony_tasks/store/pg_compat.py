"""The SQLite surface of the PostgreSQL store: the dialect the mixins speak, translated, and
rows and cursors that read like sqlite3's.

The mixins speak a small SQLite dialect. :func:`translate` rewrites it once per statement text
(cached): ``?`` placeholders as ``$n``, ``INSERT OR IGNORE`` → ``ON CONFLICT DO NOTHING``, two-argument
``MAX``/``MIN`` → ``GREATEST``/``LEAST``, SQLite's unary-plus planner hints dropped,
``CROSS JOIN ... ON`` → ``JOIN``, and ``RETURNING id`` on inserts into tables with an identity
column so ``cursor.lastrowid`` works as on SQLite. :class:`colony_tasks.store.pg.Connection`
runs the result through the driver and hands back :class:`Cursor` and :class:`Row`. No driver
here: this module is plain text and tuples.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


# -- the dialect ---------------------------------------------------------------------------

_INSERT_OR_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO", re.IGNORECASE)
_INSERT_INTO = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)", re.IGNORECASE)
_SCALAR_MAX_MIN = re.compile(r"\b(MAX|MIN)\(([^(),]+),([^(),]+)\)", re.IGNORECASE)
_PLUS_HINT = re.compile(r"(?<=[\s(])\+(?=[A-Za-z_])")
_CROSS_JOIN_ON = re.compile(r"\bCROSS\s+JOIN\s+(\w+(?:\s+\w+)?)\s+ON\b", re.IGNORECASE)


def _placeholders(sql: str) -> str:
    """``?`` → ``$1``, ``$2``, ... (PostgreSQL's own placeholders, which a prepared statement
    takes) outside quoted strings."""
    out = []
    quote = ""
    count = 0
    for char in sql:
        if quote:
            out.append(char)
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
            out.append(char)
        elif char == "?":
            count += 1
            out.append(f"${count}")
        else:
            out.append(char)
    return "".join(out)


@lru_cache(maxsize=1024)
def translate(
    sql: str, id_tables: frozenset[str] = frozenset(), bind: bool = True
) -> tuple[str, bool]:
    """The PostgreSQL text of a store statement, and whether it returns the new row's id.

    ``bind``: the statement gets parameters (it is then prepared, with ``$n`` placeholders; a
    statement without parameters goes through the simple query protocol verbatim)."""
    ignore = bool(_INSERT_OR_IGNORE.match(sql))
    if ignore:
        sql = _INSERT_OR_IGNORE.sub("INSERT INTO", sql, count=1)
    sql = _SCALAR_MAX_MIN.sub(
        lambda m: (
            f"{'GREATEST' if m.group(1).upper() == 'MAX' else 'LEAST'}({m.group(2)},{m.group(3)})"
        ),
        sql,
    )
    sql = _PLUS_HINT.sub("", sql)
    sql = _CROSS_JOIN_ON.sub(r"JOIN \1 ON", sql)
    sql = sql.rstrip().rstrip(";")
    if ignore:
        sql += " ON CONFLICT DO NOTHING"
    insert = _INSERT_INTO.match(sql)
    returns_id = bool(insert and insert.group(1).lower() in id_tables and "RETURNING" not in sql)
    if returns_id:
        sql += " RETURNING id"
    return (_placeholders(sql) if bind else sql), returns_id


# -- rows and cursors ----------------------------------------------------------------------


class Row:
    """A result row read by position, by column name, or as ``dict(row)`` (like sqlite3.Row)."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: dict[str, int], values: Sequence[Any]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            return self._values[self._index[key]]
        return self._values[key]

    def keys(self) -> list[str]:
        return list(self._index)

    def __iter__(self) -> Iterable[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Row({dict(zip(self._index, self._values, strict=False))!r})"


class Cursor:
    """What :meth:`Connection.execute` returns: the fetched rows, ``rowcount``, ``lastrowid``."""

    __slots__ = ("_rows", "lastrowid", "rowcount")

    def __init__(self, rows: list[Row], rowcount: int, lastrowid: int | None) -> None:
        self._rows = rows
        self.rowcount = rowcount
        self.lastrowid = lastrowid

    def fetchall(self) -> list[Row]:
        return self._rows

    def fetchone(self) -> Row | None:
        return self._rows[0] if self._rows else None

    def __iter__(self) -> Iterable[Row]:
        return iter(self._rows)


def rows_of(cursor: Any) -> list[Row]:
    """The rows a driver cursor fetched, as :class:`Row` (none for a statement without)."""
    if cursor.description is None:
        return []
    index = {column[0]: i for i, column in enumerate(cursor.description)}
    return [Row(index, values) for values in cursor.fetchall()]
