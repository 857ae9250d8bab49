"""The plain-Python WordPiece gives the ids ``tokenizers`` gives for the shipped static model."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

np = pytest.importorskip("numpy", reason="the static backend needs numpy (a core dependency)")
tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is a core dependency")

from colony_tasks.search.embeddings.static import MODEL_DIR, StaticEmbedder  # noqa: E402
from colony_tasks.search.embeddings.wordpiece import WordPiece  # noqa: E402

TOKENIZER = MODEL_DIR / "tokenizer.json"
SAMPLES = [
    "where do we cap upload sizes",
    "nginx client_max_body_size is now 20m in deploy/nginx.conf; the 413s are gone",
    "exp/nbf checks get a 30 s leeway in verify_token(); 5 min was too long",
    "Retry-After and X-RateLimit-Remaining on 429",
    "don't stop-gap e.g. foo_bar.baz() -> {a: 1} [x] <y> `z` ~w | q ^ p",
    "UPPER lower MiXeD CamelCaseIdentifier snake_case_name kebab-case-name",
    "tab\tnew\nline\rcr\x00nul\x01soh\x0bvt\x0cff\x1cfs\x1fus\x7fdel end",
    "[CLS] hello [SEP] [MASK][UNK][PAD]x and [cls] lower-case is text",
    "a" * 99,
    "a" * 100,
    "a" * 101 + " tail",
    "unaffable unbelievably xyzzyqwrt zzzzzzzzzz",
    "",
    "   ",
    "!!!",
    "3.14159 1,000,000 0x1F 1e-9 #123 @handle $HOME %d &amp;",
    "word " * 600,
]
ASCII = string.printable + "".join(chr(c) for c in range(0x20)) + "\x7f"


@pytest.fixture(scope="module")
def reference():
    tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_padding()
    tokenizer.enable_truncation(512)
    return tokenizer


@pytest.fixture(scope="module")
def plain() -> WordPiece:
    wordpiece = WordPiece.from_tokenizer_json(TOKENIZER, max_tokens=512)
    assert wordpiece is not None
    return wordpiece


@pytest.mark.parametrize("text", SAMPLES)
def test_same_ids_as_tokenizers(reference, plain, text):
    assert plain.ids(text) == reference.encode(text, add_special_tokens=False).ids


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ASCII, max_size=80))
def test_same_ids_on_any_ascii_text(reference, plain, text):
    assert plain.ids(text) == reference.encode(text, add_special_tokens=False).ids


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["retry", "##ing", "token", "_", ".", "x", "[SEP]", "un", "aff", " "]),
        max_size=20,
    ).map("".join)
)
def test_same_ids_on_subword_soup(reference, plain, text):
    assert plain.ids(text) == reference.encode(text, add_special_tokens=False).ids


def test_refuses_text_beyond_ascii(plain):
    with pytest.raises(ValueError, match="ASCII"):
        plain.ids("café")


def test_refuses_a_configuration_it_does_not_implement(tmp_path: Path):
    spec = json.loads(TOKENIZER.read_text(encoding="utf-8"))
    spec["normalizer"]["lowercase"] = False
    other = tmp_path / "tokenizer.json"
    other.write_text(json.dumps(spec), encoding="utf-8")
    assert WordPiece.from_tokenizer_json(other, max_tokens=512) is None
    assert WordPiece.from_tokenizer_json(tmp_path / "missing.json", max_tokens=512) is None


def test_a_query_and_a_bulk_batch_embed_alike():
    embedder = StaticEmbedder()
    texts = [s for s in SAMPLES if s.strip()] + ["café crème brûlée", "中文 query"]
    one_by_one = np.vstack([embedder.embed([t]) for t in texts])  # the plain-Python path
    bulk = embedder.embed(texts * 2)[: len(texts)]  # more than a small batch: tokenizers
    assert np.array_equal(one_by_one, bulk)
    assert embedder._bulk is not None  # the bulk batch did load tokenizers


def test_a_query_does_not_load_tokenizers():
    embedder = StaticEmbedder()
    vector = embedder.embed(["how long before the cached overview goes stale"])
    assert embedder._bulk is None
    assert vector.shape == (1, embedder.dim) and np.isclose(np.linalg.norm(vector), 1.0)


def test_the_table_is_mapped_and_writes_stay_private():
    embedder = StaticEmbedder()
    table = embedder._table
    assert isinstance(table, np.memmap)
    before = (MODEL_DIR / "model.safetensors").read_bytes()
    table[5] = 7  # a private copy of that page only
    assert (MODEL_DIR / "model.safetensors").read_bytes() == before
