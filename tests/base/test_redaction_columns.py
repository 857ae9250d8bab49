"""Secrets known by their column (colony_tasks/base/redact_columns.py): SQL INSERT … VALUES
and delimited tables whose header names a password, secret, token or key column."""

from __future__ import annotations

import pytest

from colony_tasks.base import redact

M = "[REDACTED:password]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "INSERT INTO accounts (login, passwd, active) VALUES ('ann', 'Qz8#wLp2', 1);",
            f"INSERT INTO accounts (login, passwd, active) VALUES ('ann', '{M}', 1);",
        ),
        (
            'insert into "t" ("id", "api_key") values (1, "k3yA"), (2, "k3yB");',
            f'insert into "t" ("id", "api_key") values (1, "{M}"), (2, "{M}");',
        ),
        (
            "INSERT INTO u (name, secret) VALUES ('it''s', 'x''y z')",
            f"INSERT INTO u (name, secret) VALUES ('it''s', '{M}')",
        ),
        (
            "host,port,db_password\ndb1,5432,Hn7!pQ2x\ndb2,5432,Zr4$kL9m\n",
            f"host,port,db_password\ndb1,5432,{M}\ndb2,5432,{M}\n",
        ),
        (
            "name\tTOKEN\nci\tT0k3n-Abc\n",
            f"name\tTOKEN\nci\t{M}\n",
        ),
        (
            "| service | secret |\n| :--- | :---: |\n| mail | m41l-S3cret |\n",
            f"| service | secret |\n| :--- | :---: |\n| mail | {M} |\n",
        ),
    ],
)
def test_a_value_under_a_sensitive_column_is_replaced(text, expected):
    assert redact.redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "INSERT INTO users (name, password) VALUES (?, ?)",
        "INSERT INTO users (name, password) VALUES ($1, $2), (:n, :p), (%s, NULL)",
        "INSERT INTO users (name, password_changed) VALUES ('bob', '2024-01-01')",
        "The password, token and key are rotated.\nfoo, bar baz\n",
        "token_count,model\n120,small\n",
        "bypass,mode\nyes,fast\n",
        "| user | password |\n| bob | hunter |\n",  # no rule line: not a Markdown table
        "user,password\nbob,\n",
        "user,password\n\nbob,Kp9!xQ2w\n",  # a blank line ends the table
    ],
)
def test_no_secret_column_or_no_value_stays(text):
    assert redact.redact(text) == text


def test_a_letter_that_lowers_to_two_does_not_shift_the_columns():
    head = "İ" * 20 + " offices\n"
    text = head + "user,password\nİpek,Zq8#mWx3\n"
    assert redact.redact(text) == head + f"user,password\nİpek,{M}\n"


def test_a_long_table_is_read_once_and_every_row_replaced():
    rows = "".join(f"user{i},Pw{i:06d}x!\n" for i in range(20_000))
    cleaned = redact.redact("name,password\n" + rows)
    assert "Pw0" not in cleaned
    assert cleaned.count(M) == 20_000


@pytest.mark.parametrize(
    "table",
    [
        "host,port,db_password\ndb1,5432,Hn7!pQ2x\n",
        "| service   |   secret            |\n|---|---|\n| mail | m41l-S3cret |\n",
        "name\tTOKEN\r\nci\tT0k3n-Abc\r\n",
    ],
)
def test_a_table_in_a_long_text_is_found_as_in_a_short_one(table):
    # (a short text's header lines are found in Python, a long text's by patterns)
    filler = "ordinary words, and code(x) = key\n" * (redact.LONG_TEXT // 30 + 1)
    short = redact.redact(table)
    assert short != table
    assert redact.redact(filler + table + filler) == filler + short + filler
