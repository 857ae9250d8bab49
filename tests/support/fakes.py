"""A fake deterministic embedder: bag of hashed words, so equal words mean close vectors."""

from __future__ import annotations

import zlib

import numpy as np


class FakeEmbedder:
    def __init__(self, model_id: str = "fake-64", dim: int = 64, log: str | None = None) -> None:
        self.model_id, self.dim, self.log = model_id, dim, log
        self.calls: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.extend(texts)
        if self.log:
            with open(self.log, "a") as handle:
                handle.writelines(t.replace("\n", " ") + "\n" for t in texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, zlib.crc32(word.encode()) % self.dim] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out
