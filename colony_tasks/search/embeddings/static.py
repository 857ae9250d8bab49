"""The ``static`` backend: a model2vec-format token table shipped with the package.

A text's vector is the normalised sum of its WordPiece tokens' rows (the same direction as
model2vec's mean). The table is ``static-minilm-256`` (distilled from all-MiniLM-L6-v2) with
its common component removed (``scripts/distill_static.py --post-process``), so unrelated
texts no longer look alike. Inference is a table gather in numpy. The safetensors file is mapped,
not read: a query touches only the pages of its own tokens' rows, so a one-off process (a CLI
search) does not pay for reading the table. Bulk embedding tokenises with the Hugging Face
``tokenizers`` library, loaded on first use; a few ASCII texts (a query) go through the
plain-Python :mod:`.wordpiece`, which gives the same ids without loading it. Neither model2vec, safetensors
nor torch is needed at run time.
"""

from __future__ import annotations

import json
import struct
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import EmbedderUnavailable
from .wordpiece import WordPiece

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MODEL_ID = "static-minilm-256-abtt4"
MODEL_DIR = Path(__file__).resolve().parent / "models" / MODEL_ID
MAX_TOKENS = 512
CHUNK_TEXTS = 256
CHARS_PER_TOKEN = 8
# ASCII batches up to this size are tokenised in plain Python (a query); others by ``tokenizers``.
SMALL_BATCH = 8
SAFETENSORS_DTYPES = {"F16": np.float16, "F32": np.float32, "I8": np.int8, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Map the tensors of a safetensors file as numpy arrays (F16, F32, I8 and I64 only).

    The format is an 8-byte little-endian header length, a JSON header naming each tensor's
    dtype, shape and byte range, then the raw little-endian data. The arrays are copy-on-write
    maps of the file: writing to one changes this process's copy only.
    """
    try:
        with path.open("rb") as handle:
            head = handle.read(8)
            if len(head) < 8:
                raise EmbedderUnavailable(f"{path} is too short to be a safetensors file.")
            (header_len,) = struct.unpack("<Q", head)
            header = json.loads(handle.read(header_len))
    except (OSError, ValueError) as error:
        raise EmbedderUnavailable(f"{path} is not a readable safetensors file: {error}") from error
    base = 8 + header_len
    size = path.stat().st_size
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = SAFETENSORS_DTYPES.get(info["dtype"])
        if dtype is None:
            raise EmbedderUnavailable(f"{path}: tensor {name!r} has unsupported dtype.")
        start, end = info["data_offsets"]
        shape = tuple(info["shape"])
        item = np.dtype(dtype).newbyteorder("<")
        count = int(np.prod(shape, dtype=np.int64))
        if end - start != count * item.itemsize or base + end > size:
            raise EmbedderUnavailable(f"{path}: tensor {name!r} does not fit its byte range.")
        if count == 0:
            tensors[name] = np.zeros(shape, dtype=item)
            continue
        tensors[name] = np.memmap(path, dtype=item, mode="c", offset=base + start, shape=shape)
    return tensors


def load_table(model_dir: Path) -> np.ndarray:
    """The token table in its stored dtype, as a writable (copy-on-write) map of the file.

    An int8 table keeps its integer values: model2vec drops the quantisation scale, which
    cancels when text vectors are normalised.
    """
    path = model_dir / "model.safetensors"
    if not path.is_file():
        raise EmbedderUnavailable(
            f"The static embedding model is missing ({path}); reinstall colony-tasks."
        )
    tensors = read_safetensors(path)
    if "embeddings" not in tensors:
        raise EmbedderUnavailable(f"{path} holds no 'embeddings' tensor.")
    if "weights" in tensors or "mapping" in tensors:
        raise EmbedderUnavailable(f"{path} uses model2vec features this loader does not read.")
    return tensors["embeddings"]


class StaticEmbedder:
    """Embeds texts with the committed ``static-minilm-256-abtt4`` table; no torch involved."""

    def __init__(self, model_dir: Path = MODEL_DIR, *, max_tokens: int = MAX_TOKENS) -> None:
        config_path = model_dir / "config.json"
        if not config_path.is_file():
            raise EmbedderUnavailable(
                f"The static embedding model is missing ({config_path}); reinstall colony-tasks."
            )
        config = json.loads(config_path.read_text(encoding="utf-8"))
        self._table = load_table(model_dir)
        self.model_id: str = config.get("model_id", model_dir.name)
        self.dim: int = int(self._table.shape[1])
        if int(config.get("hidden_dim", self.dim)) != self.dim:
            raise EmbedderUnavailable(f"{model_dir}: config.json and model.safetensors disagree.")
        self._tokenizer_path = model_dir / "tokenizer.json"
        self._max_tokens = max_tokens
        self._max_chars = max_tokens * CHARS_PER_TOKEN
        self._bulk: Tokenizer | None = None
        self._small = WordPiece.from_tokenizer_json(self._tokenizer_path, max_tokens=max_tokens)
        if self._small is None:
            self._load_bulk()  # a tokenizer.json the plain-Python path does not implement
        elif len(self._small.vocab) != self._table.shape[0]:
            raise EmbedderUnavailable(f"{model_dir}: tokenizer and table sizes differ.")
        else:
            self._table[self._small.unk] = 0  # unknown pieces carry no meaning: leave them out

    def _load_bulk(self) -> Tokenizer:
        """The Hugging Face tokenizer, loaded on the first large batch."""
        if self._bulk is not None:
            return self._bulk
        try:
            from tokenizers import Tokenizer
        except ImportError as error:
            raise EmbedderUnavailable(
                "The 'static' embedding backend needs tokenizers: reinstall colony-tasks."
            ) from error
        tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
        tokenizer.no_padding()
        tokenizer.enable_truncation(self._max_tokens)
        if tokenizer.get_vocab_size() != self._table.shape[0]:
            raise EmbedderUnavailable(
                f"{self._tokenizer_path.parent}: tokenizer and table sizes differ."
            )
        unk = tokenizer.token_to_id("[UNK]")
        if unk is not None:
            self._table[unk] = 0  # unknown pieces carry no meaning: leave them out
        self._bulk = tokenizer
        return tokenizer

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """WordPiece ids of each text, without special tokens, at most ``max_tokens`` each."""
        clipped = [text[: self._max_chars] for text in texts]
        small = self._small
        if small is not None and len(clipped) <= SMALL_BATCH and all(t.isascii() for t in clipped):
            return [small.ids(text) for text in clipped]
        tokenizer = self._load_bulk()
        encode = getattr(tokenizer, "encode_batch_fast", None) or tokenizer.encode_batch
        return [encoding.ids for encoding in encode(clipped, add_special_tokens=False)]

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts``: float32 ``(len(texts), dim)``, rows of unit norm (zero if no token)."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of texts, not a single string")
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for first in range(0, len(texts), CHUNK_TEXTS):
            chunk = texts[first : first + CHUNK_TEXTS]
            self._sum_rows(self.token_ids(chunk), out[first : first + len(chunk)])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _sum_rows(self, ids: list[list[int]], out: np.ndarray) -> None:
        """Write into ``out[i]`` the float32 sum of the table rows of ``ids[i]``."""
        lengths = np.fromiter((len(row) for row in ids), dtype=np.int64, count=len(ids))
        total = int(lengths.sum())
        if total == 0:
            return
        flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=total)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        filled = lengths > 0
        # Sum over the non-empty texts only: each one's run ends where the next non-empty starts.
        gathered = self._table[flat]
        out[filled] = np.add.reduceat(gathered, starts[filled], axis=0, dtype=np.float32)
