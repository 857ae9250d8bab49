"""The ``static`` backend: a model2vec-format token table shipped with the package.

A text's vector is the normalised sum of its WordPiece tokens' rows (the same direction as
model2vec's mean). The table is ``static-minilm-256`` (distilled from all-MiniLM-L6-v2) with
its common component removed (``scripts/distill_static.py --post-process``), so unrelated
texts no longer look alike. Inference is a table gather in numpy; tokenising uses the Hugging Face
``tokenizers`` library. The safetensors file is read directly, so neither model2vec, safetensors
nor torch is needed at run time.
"""

from __future__ import annotations

import json
import struct
from itertools import chain
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from . import EmbedderUnavailable

MODEL_ID = "static-minilm-256-abtt4"
MODEL_DIR = Path(__file__).resolve().parent / "models" / MODEL_ID
MAX_TOKENS = 512
CHUNK_TEXTS = 256
CHARS_PER_TOKEN = 8
SAFETENSORS_DTYPES = {"F16": np.float16, "F32": np.float32, "I8": np.int8}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Read the tensors of a safetensors file into numpy arrays (F16, F32 and I8 only).

    The format is an 8-byte little-endian header length, a JSON header naming each tensor's
    dtype, shape and byte range, then the raw little-endian data.
    """
    blob = path.read_bytes()
    if len(blob) < 8:
        raise EmbedderUnavailable(f"{path} is too short to be a safetensors file.")
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + header_len])
    base = 8 + header_len
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = SAFETENSORS_DTYPES.get(info["dtype"])
        if dtype is None:
            raise EmbedderUnavailable(f"{path}: tensor {name!r} has unsupported dtype.")
        start, end = info["data_offsets"]
        array = np.frombuffer(
            blob,
            dtype=np.dtype(dtype).newbyteorder("<"),
            offset=base + start,
            count=(end - start) // np.dtype(dtype).itemsize,
        )
        tensors[name] = array.reshape(info["shape"])
    return tensors


def load_table(model_dir: Path) -> np.ndarray:
    """The token table in its stored dtype, as a writable array.

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
    return np.array(tensors["embeddings"], copy=True)


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
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_tokens)
        if self._tokenizer.get_vocab_size() != self._table.shape[0]:
            raise EmbedderUnavailable(f"{model_dir}: tokenizer and table sizes differ.")
        self._max_chars = max_tokens * CHARS_PER_TOKEN
        unk = self._tokenizer.token_to_id("[UNK]")
        if unk is not None:
            self._table[unk] = 0.0  # unknown pieces carry no meaning: leave them out
        encode = getattr(self._tokenizer, "encode_batch_fast", None)
        self._encode_batch = encode or self._tokenizer.encode_batch

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """WordPiece ids of each text, without special tokens, at most ``max_tokens`` each."""
        clipped = [text[: self._max_chars] for text in texts]
        encodings = self._encode_batch(clipped, add_special_tokens=False)
        return [encoding.ids for encoding in encodings]

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
