"""Secrets in base64 (colony_tasks/base/redact_encoded.py): a run whose decoded text holds a
secret is replaced whole; a run that decodes to harmless text, or to bytes, stays."""

from __future__ import annotations

import base64

import pytest

from colony_tasks.base import redact
from colony_tasks.base.redact_encoded import MARKER, NAMES, forms

ENV = "DB_HOST=db\nDB_PASSWORD=mB4!zR8sKe1x\n"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize("prefix", ["", "A", "AB"])  # each offset of the name in a byte group
def test_a_base64_env_file_is_replaced_whole(prefix):
    blob = b64(prefix + ENV)
    text = f"kubectl get secret db -o yaml\ndata:\n  env: {blob}\n"
    cleaned = redact.redact(text)
    assert blob not in cleaned
    assert f"env: {MARKER}" in cleaned


@pytest.mark.parametrize(
    "plain",
    [
        "TOKEN_LIMIT=5\nMODE=fast\n",
        "the secret of good tests is patience\n",
        "PASSWORD_MIN_LENGTH=12",
    ],
)
def test_base64_of_harmless_text_naming_a_secret_stays(plain):
    blob = b64(plain)
    assert redact.redact(f"value: {blob}") == f"value: {blob}"


def test_base64_of_bytes_stays():
    blob = base64.b64encode(b"\xffPASSWORD\x00\x01\x02" * 3).decode()
    assert redact.redact(blob) == blob


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("offset", range(3))
def test_every_name_encodes_to_one_of_the_forms_at_every_offset(name, offset):
    for spelling in (name, name.lower()):
        encoded = base64.b64encode(b"xyz"[:offset] + spelling.encode() + b"=v").decode()
        assert any(form in encoded for form in forms()), (spelling, offset)


def test_the_written_out_forms_are_those_of_the_names():
    found = set()
    for name in NAMES:
        for spelling in (name, name.lower()):
            raw = spelling.encode()
            for offset in range(3):
                encoded = base64.b64encode(b"\0" * offset + raw + b"\0\0").decode()
                first = -(-8 * offset // 6)  # the first character all inside the name
                found.add(encoded[first : 8 * (offset + len(raw)) // 6])
    assert forms() == tuple(sorted(found))


def test_a_long_text_with_a_base64_secret_is_redacted():
    filler = "ordinary words and code(x) = 1\n" * (redact.LONG_TEXT // 30 + 1)
    blob = b64(ENV)
    assert blob not in redact.redact(filler + blob + "\n" + filler)
