"""The modules the hook path uses import no third-party package."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = [
    "click",
    "pydantic",
    "numpy",
    "mcp",
    "pathspec",
    "tomlkit",
    "model2vec",
    "torch",
    "sentence_transformers",
]


def loaded_after(modules: list[str]) -> set[str]:
    code = (
        "import sys, json\n"
        + "".join(f"import {m}\n" for m in modules)
        + "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def test_core_modules_import_only_the_standard_library():
    loaded = loaded_after(
        [
            "colony_tasks.store",
            "colony_tasks.lanes",
            "colony_tasks.sessions",
            "colony_tasks.search",
            "colony_tasks.redact",
            "colony_tasks.render",
        ]
    )
    assert not {m.split(".")[0] for m in loaded} & set(HEAVY)
