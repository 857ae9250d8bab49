"""The dependency graph: imports resolved to files, public surfaces and their diffs, the walker's
skips, incremental updates, and the rows the store will keep. Real files in tmp folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from colony_tasks.depgraph import Graph, build, surface_diff, update
from colony_tasks.depgraph import rows as graph_rows
from colony_tasks.depgraph.query import dependents
from colony_tasks.store import Store


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def imports(graph: Graph, path: str) -> list[str]:
    return [e.path for e in graph.files[path].imports]


def names(graph: Graph, src: str, dst: str) -> tuple[str, ...]:
    return next(e.names for e in graph.files[src].imports if e.path == dst)


def described(old: str, new: str, path: str = "m.py") -> list[str]:
    result = surface_diff(old, new, path)
    assert result.status == "ok"
    return [c.describe() for c in result.changes]


# -- Python ---------------------------------------------------------------------------------


@pytest.fixture
def py_repo(tmp_path: Path) -> Path:
    root = tmp_path / "py"
    write(
        root,
        {
            "pyproject.toml": "[project]\nname = 'app'\n",
            "src/app/__init__.py": "from .api import get_user\n",
            "src/app/api.py": "from app.models import User\n\ndef get_user(user_id):\n    return User()\n",
            "src/app/models.py": "class User:\n    pass\n",
            "src/app/viewer.py": "import app.api\nfrom app import models\nfrom . import api\n",
            "src/app/sub/__init__.py": "",
            "src/app/sub/deep.py": "from ..models import User\nfrom .. import api, viewer\nfrom ...elsewhere import x\n",
            "src/app/sub/lazy.py": "def f():\n    import app.models\n    from app.api import get_user as g\n",
            "src/app/ext.py": "import os\nimport json\nimport requests\nfrom typing import Any\n",
            "tests/test_api.py": "from app.api import get_user\nimport helpers\n",
            "tests/helpers.py": "",
            "scripts/tool.py": "from src.app import models\n",
        },
    )
    return root


def test_python_absolute_imports_resolve_through_the_src_layout_root(py_repo: Path):
    graph = build(str(py_repo))
    assert graph.config.python_roots == ("", "src")
    assert imports(graph, "src/app/api.py") == ["src/app/models.py"]
    assert imports(graph, "tests/test_api.py") == ["src/app/api.py", "tests/helpers.py"]
    assert imports(graph, "scripts/tool.py") == ["src/app/models.py"]


def test_python_from_package_import_module_resolves_to_the_submodule(py_repo: Path):
    graph = build(str(py_repo))
    assert imports(graph, "src/app/viewer.py") == ["src/app/api.py", "src/app/models.py"]
    assert names(graph, "src/app/viewer.py", "src/app/api.py") == ()  # whole module


def test_python_relative_imports_climb_packages(py_repo: Path):
    graph = build(str(py_repo))
    assert imports(graph, "src/app/sub/deep.py") == [
        "src/app/api.py",
        "src/app/models.py",
        "src/app/viewer.py",
    ]
    assert names(graph, "src/app/sub/deep.py", "src/app/models.py") == ("User",)
    assert imports(graph, "src/app/__init__.py") == ["src/app/api.py"]


def test_python_imports_inside_functions_count_and_external_ones_are_dropped(py_repo: Path):
    graph = build(str(py_repo))
    assert imports(graph, "src/app/sub/lazy.py") == ["src/app/api.py", "src/app/models.py"]
    assert names(graph, "src/app/sub/lazy.py", "src/app/api.py") == ("get_user",)
    assert imports(graph, "src/app/ext.py") == []


def test_importers_answers_who_imports_a_module(py_repo: Path):
    graph = build(str(py_repo))
    assert graph.importers("src/app/api.py") == [
        "src/app/__init__.py",
        "src/app/sub/deep.py",
        "src/app/sub/lazy.py",
        "src/app/viewer.py",
        "tests/test_api.py",
    ]


def test_python_surface_lists_public_defs_classes_methods_and_all(tmp_path: Path):
    source = (
        "__all__ = ['helper', 'CONST']\n"
        "CONST = 1\n"
        "def get_user(user_id, *, org=None) -> dict:\n    pass\n"
        "async def fetch(url):\n    pass\n"
        "def _private():\n    pass\n"
        "class Store(Base, metaclass=Meta):\n"
        "    def __init__(self, path): pass\n"
        "    def get(self, key): pass\n"
        "    def _hidden(self): pass\n"
    )
    write(tmp_path, {"m.py": source})
    surface = {s.name: s.signature for s in build(str(tmp_path)).files["m.py"].surface}
    assert surface == {
        "CONST": "CONST",
        "helper": "helper",
        "get_user": "get_user(user_id, *, org=None) -> dict",
        "fetch": "async fetch(url)",
        "Store": "class Store(Base, metaclass=Meta)",
        "Store.__init__": "Store.__init__(self, path)",
        "Store.get": "Store.get(self, key)",
    }


# -- surface diff -----------------------------------------------------------------------------


def test_a_signature_change_is_reported_old_to_new():
    old = "def get_user(user_id):\n    return 1\n"
    new = "def get_user(user_id, *, org):\n    return 1\n"
    assert described(old, new) == ["get_user(user_id) → get_user(user_id, *, org)"]


def test_a_change_inside_a_body_reports_nothing():
    old = "def get_user(user_id):\n    return 1\n\nclass C:\n    def m(self):\n        pass\n"
    new = "def get_user(user_id):\n    x = 2\n    return x\n\nclass C:\n    def m(self):\n        return 3\n"
    assert described(old, new) == []


def test_added_and_removed_defs_are_reported():
    old = "def a():\n    pass\n\ndef b(x):\n    pass\n"
    new = "def b(x):\n    pass\n\nclass D:\n    pass\n"
    assert described(old, new) == ["removed a()", "added class D"]


def test_private_defs_and_comments_are_not_the_surface():
    old = "def a():\n    pass\n"
    new = "# a comment\ndef a():\n    '''Docs.'''\n    pass\n\ndef _b(y):\n    pass\n"
    assert described(old, new) == []


def test_a_method_signature_change_is_reported():
    old = "class C:\n    def m(self, a):\n        pass\n"
    new = "class C:\n    def m(self, a, b=2):\n        pass\n"
    assert described(old, new) == ["C.m(self, a) → C.m(self, a, b=2)"]


def test_unparseable_source_gives_an_unparseable_result_not_an_exception():
    assert surface_diff("def f(:\n", "def f(x):\n    pass\n", "m.py").status == "unparseable"
    assert surface_diff("def f(x): pass\n", b"\x00\xff\xfe", "m.py").status == "unparseable"
    assert surface_diff("export function f(", "export function f() {}", "m.ts").status == (
        "unparseable"
    )
    assert surface_diff("a", "b", "notes.txt").status == "unsupported"


def test_typescript_exported_signature_change_is_reported():
    old = "export function getUser(id: string): User { return db(id) }\n"
    new = "export function getUser(id: string, org: Org): User { return db(id) }\n"
    assert described(old, new, "api.ts") == [
        "getUser(id: string): User → getUser(id: string, org: Org): User"
    ]


def test_typescript_body_change_and_unexported_code_report_nothing():
    old = "export const f = (a: number) => a + 1;\nfunction g() {}\n"
    new = "export const f = (a: number) => a + 2;\nfunction g(x: number) { return x }\n"
    assert described(old, new, "m.ts") == []


def test_typescript_exports_of_every_kind_are_the_surface():
    old = "export interface I { a: number }\nexport type T = string;\nexport class C { m(a: string) {} }\n"
    new = (
        "export interface I { a: number; b?: string }\nexport type T = string;\n"
        "export class C { m(a: string, b: number) {} private p() {} }\n"
        "export default function main() {}\nexport { x as y } from './x';\n"
    )
    assert described(old, new, "m.tsx") == [
        "C.m(a: string) → C.m(a: string, b: number)",
        "interface I { a: number } → interface I { a: number; b?: string }",
        "added main()",
        "added export x from ./x",
    ]


def test_javascript_exports_are_the_surface():
    old = "export function f(a) { return a }\nexport const K = 1;\n"
    new = "export function f(a, b) { return a }\n"
    assert described(old, new, "m.mjs") == ["removed K", "f(a) → f(a, b)"]


# -- TypeScript / JavaScript ------------------------------------------------------------------


@pytest.fixture
def ts_repo(tmp_path: Path) -> Path:
    root = tmp_path / "ts"
    write(
        root,
        {
            "tsconfig.json": '{\n  // comment\n  "compilerOptions": {"baseUrl": ".", "paths": {"@lib/*": ["src/lib/*"]},},\n}\n',
            "src/api.ts": "import { User } from './models';\nexport function getUser(id: string): User { return {} as User }\n",
            "src/models/index.ts": "export interface User { id: string }\n",
            "src/viewer.tsx": (
                "import { getUser } from './api.js';\n"
                "import type { User } from './models';\n"
                "import React from 'react';\n"
                "import { fmt } from '@lib/fmt';\n"
                "import { cfg } from 'src/config';\n"
            ),
            "src/lib/fmt.ts": "export const fmt = (s: string): string => s;\n",
            "src/config.ts": "export const cfg = {};\n",
            "src/types.d.ts": "export declare type Id = string;\n",
            "src/barrel.ts": "export * from './api';\nexport { fmt } from './lib/fmt';\nimport './types';\n",
            "src/lazy.js": "const m = import('./legacy');\nconst c = require('../tools/cli.cjs');\nmodule.exports = {};\n",
            "src/legacy.jsx": "export default function Legacy() { return <div/> }\n",
            "tools/cli.cjs": "const path = require('path');\n",
            "src/broken.ts": "import { getUser } from './api';\nexport function (\n",
        },
    )
    return root


def test_typescript_relative_imports_resolve_extensions_and_index_files(ts_repo: Path):
    graph = build(str(ts_repo))
    assert imports(graph, "src/api.ts") == ["src/models/index.ts"]
    assert imports(graph, "src/viewer.tsx") == [
        "src/api.ts",  # './api.js' names the .ts source
        "src/config.ts",  # baseUrl
        "src/lib/fmt.ts",  # paths
        "src/models/index.ts",
    ]
    assert names(graph, "src/viewer.tsx", "src/api.ts") == ("getUser",)


def test_typescript_reexports_dynamic_imports_and_require_are_edges(ts_repo: Path):
    graph = build(str(ts_repo))
    assert imports(graph, "src/barrel.ts") == ["src/api.ts", "src/lib/fmt.ts", "src/types.d.ts"]
    assert imports(graph, "src/lazy.js") == ["src/legacy.jsx", "tools/cli.cjs"]
    assert imports(graph, "tools/cli.cjs") == []


def test_a_typescript_file_with_syntax_errors_keeps_its_imports_and_is_counted(ts_repo: Path):
    graph = build(str(ts_repo))
    row = graph.files["src/broken.ts"]
    assert row.error == "unparseable"
    assert imports(graph, "src/broken.ts") == ["src/api.ts"]
    assert graph.skipped["unparseable"] == 1


# -- walker: bad input ------------------------------------------------------------------------


def test_bad_files_are_skipped_and_counted_never_raised(tmp_path: Path):
    write(
        tmp_path,
        {
            ".gitignore": "generated/\n*.gen.py\n",
            "ok.py": "import sub.mod\n",
            "sub/mod.py": "def f(x): pass\n",
            "syntax.py": "def broken(:\n",
            "blob.py": b"\x00\x01\x02binary\x00",
            "huge.ts": "export const x = 1;\n" + "// pad\n" * 200,
            "generated/out.py": "x = 1\n",
            "thing.gen.py": "x = 1\n",
            "node_modules/pkg/index.js": "module.exports = 1\n",
            ".venv/lib/site.py": "x = 1\n",
            "sub/.gitignore": "local.py\n",
            "sub/local.py": "x = 1\n",
            "notes.txt": "not code\n",
        },
    )
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "sub" / "alias.py").symlink_to(tmp_path / "sub" / "mod.py")
    outside = tmp_path.parent / "outside-target"
    outside.mkdir(exist_ok=True)
    (tmp_path / "escape").symlink_to(outside, target_is_directory=True)
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    os.close(os.open(os.fsencode(tmp_path) + b"/latin1-\xe9.py", os.O_CREAT | os.O_WRONLY))
    unreadable = tmp_path / "secret.py"
    unreadable.write_text("x = 1\n")
    unreadable.chmod(0)

    graph = build(str(tmp_path), max_bytes=1000)

    expected = {"ok.py", "sub/mod.py", "syntax.py"}
    if os.access(unreadable, os.R_OK):  # root reads anything
        expected.add("secret.py")
    assert set(graph.files) == expected
    assert imports(graph, "ok.py") == ["sub/mod.py"]
    skipped = dict(graph.skipped)
    skipped.pop("unreadable", None)
    assert skipped == {
        "binary": 1,
        "bad_name": 1,
        "broken_symlink": 1,
        "gitignored": 3,  # generated/, thing.gen.py, sub/local.py
        "symlink_alias": 1,
        "symlink_loop": 1,
        "symlink_outside": 1,
        "too_large": 1,
        "unparseable": 1,
        "vendored": 2,
    }
    assert graph.skipped.get("unreadable", 0) == (0 if "secret.py" in expected else 1)


def test_a_symlink_cycle_is_counted_as_a_loop(tmp_path: Path):
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    graph = build(str(tmp_path))
    assert graph.files == {}
    assert graph.skipped == {"symlink_loop": 2}


def test_an_unreadable_tsconfig_or_git_info_exclude_is_not_an_error(tmp_path: Path):
    write(tmp_path, {"tsconfig.json": "{ nope", ".git/info/exclude": "skip.ts\n"})
    write(tmp_path, {"a.ts": "import './skip';\n", "skip.ts": ""})
    graph = build(str(tmp_path))
    assert set(graph.files) == {"a.ts"}
    assert graph.config.ts_base_url is None


# -- incremental update -----------------------------------------------------------------------


def test_update_reparses_only_the_changed_file_and_reports_its_surface_change(py_repo: Path):
    graph = build(str(py_repo))
    untouched = graph.files["src/app/models.py"]
    write(py_repo, {"src/app/api.py": "def get_user(user_id, *, org):\n    return None\n"})

    result = update(graph, ["src/app/api.py"])

    assert result.reparsed == ["src/app/api.py"]
    assert [c.describe() for c in result.changes["src/app/api.py"]] == [
        "get_user(user_id) → get_user(user_id, *, org)"
    ]
    assert imports(graph, "src/app/api.py") == []  # the import of models is gone
    assert graph.files["src/app/models.py"] is untouched


def test_update_with_a_body_only_edit_reports_no_change(py_repo: Path):
    graph = build(str(py_repo))
    write(
        py_repo,
        {
            "src/app/api.py": "from app.models import User\n\ndef get_user(user_id):\n    return 42\n"
        },
    )
    result = update(graph, [str(py_repo / "src/app/api.py")])  # absolute paths work too
    assert result.reparsed == ["src/app/api.py"]
    assert result.changes == {}


def test_update_sees_new_and_deleted_files_and_re_resolves_importers(py_repo: Path):
    graph = build(str(py_repo))
    write(py_repo, {"tests/test_new.py": "from app import extra\n"})
    assert update(graph, ["tests/test_new.py"]).added == ["tests/test_new.py"]
    assert imports(graph, "tests/test_new.py") == ["src/app/__init__.py"]

    write(py_repo, {"src/app/extra.py": "def e(): pass\n"})
    assert update(graph, ["src/app/extra.py"]).added == ["src/app/extra.py"]
    assert imports(graph, "tests/test_new.py") == ["src/app/extra.py"]

    (py_repo / "src/app/extra.py").unlink()
    assert update(graph, ["src/app/extra.py"]).removed == ["src/app/extra.py"]
    assert imports(graph, "tests/test_new.py") == ["src/app/__init__.py"]


def test_incremental_updates_end_where_a_fresh_build_does(tmp_path: Path):
    write(
        tmp_path,
        {
            "app/main.py": "import app.util\nfrom app import extra\nfrom . import late\nimport helpers\n",
            "app/util.py": "",
            "web/a.ts": "import { b } from './b.js';\nimport c from './c';\nimport d from '..';\n",
            "web/b.tsx": "",
        },
    )
    graph = build(str(tmp_path))
    steps: list[tuple[str, str | None]] = [
        ("app/extra.py", "x = 1\n"),  # from app import extra: now a submodule
        ("app/late.py", ""),  # from . import late
        ("app/helpers.py", ""),  # import helpers: the importing file's own folder
        ("web/b.ts", ""),  # './b.js' now prefers b.ts over b.tsx
        ("web/c/index.ts", ""),  # './c' → c/index.ts
        ("index.ts", ""),  # '..' from web/ → index.ts at the root
        ("src/app/util.py", ""),  # a new src/ root
        ("app/extra.py", None),
        ("web/b.ts", None),
        ("web/c/index.ts", None),
    ]
    for rel, content in steps:
        if content is None:
            (tmp_path / rel).unlink()
        else:
            write(tmp_path, {rel: content})
        update(graph, [rel])
        fresh = build(str(tmp_path))
        assert graph.config == fresh.config, rel
        assert graph.edges() == fresh.edges(), rel


def test_a_moved_folder_updates_every_file_in_it(py_repo: Path):
    graph = build(str(py_repo))
    (py_repo / "src/app/sub").rename(py_repo / "src/app/moved")
    result = update(graph, ["src/app/sub", "src/app/moved"])
    assert result.removed == [
        "src/app/sub/__init__.py",
        "src/app/sub/deep.py",
        "src/app/sub/lazy.py",
    ]
    assert result.added == [
        "src/app/moved/__init__.py",
        "src/app/moved/deep.py",
        "src/app/moved/lazy.py",
    ]
    assert imports(graph, "src/app/moved/deep.py") == [
        "src/app/api.py",
        "src/app/models.py",
        "src/app/viewer.py",
    ]


def test_a_file_that_never_parsed_reports_no_changes_once_it_does(tmp_path: Path):
    write(tmp_path, {"m.py": "def f(:\n"})
    graph = build(str(tmp_path))
    write(tmp_path, {"m.py": "def f(x):\n    pass\n"})
    result = update(graph, ["m.py"])
    assert result.reparsed == ["m.py"] and result.changes == {}
    assert [s.signature for s in graph.files["m.py"].surface] == ["f(x)"]


def test_a_file_broken_mid_edit_keeps_its_last_good_surface_and_edges(py_repo: Path):
    graph = build(str(py_repo))
    write(py_repo, {"src/app/api.py": "from app.models import User\n\ndef get_user(user_id,\n"})
    result = update(graph, ["src/app/api.py"])
    assert result.changes == {}
    assert graph.files["src/app/api.py"].error == "unparseable"
    assert imports(graph, "src/app/api.py") == ["src/app/models.py"]
    assert graph.skipped["unparseable"] == 1

    write(py_repo, {"src/app/api.py": "def get_user(user_id, org):\n    pass\n"})
    result = update(graph, ["src/app/api.py"])
    assert [c.describe() for c in result.changes["src/app/api.py"]] == [
        "get_user(user_id) → get_user(user_id, org)"
    ]
    assert "unparseable" not in graph.skipped


def test_update_ignores_gitignored_vendored_and_outside_paths(tmp_path: Path):
    write(tmp_path, {".gitignore": "gen/\n", "a.py": "x = 1\n"})
    graph = build(str(tmp_path))
    write(tmp_path, {"gen/b.py": "", "node_modules/c.js": "", "notes.md": ""})
    result = update(
        graph, ["gen/b.py", "node_modules/c.js", "notes.md", "../elsewhere.py", "/etc/passwd"]
    )
    assert (result.added, result.removed, result.reparsed) == ([], [], [])
    assert set(graph.files) == {"a.py"}


def test_a_changed_tsconfig_rebuilds_the_resolution(ts_repo: Path):
    graph = build(str(ts_repo))
    write(ts_repo, {"tsconfig.json": '{"compilerOptions": {}}'})
    result = update(graph, ["tsconfig.json"])
    assert result.rebuilt
    assert imports(graph, "src/viewer.tsx") == ["src/api.ts", "src/models/index.ts"]


def test_a_rebuild_reuses_rows_whose_size_and_mtime_did_not_change(py_repo: Path):
    first = build(str(py_repo))
    second = build(str(py_repo), previous=first)
    assert all(second.files[p] is first.files[p] for p in first.files)


# -- who is affected ---------------------------------------------------------------------------


def test_dependents_reach_importers_through_a_reexporting_package_init(py_repo: Path):
    write(py_repo, {"tests/test_pkg.py": "from app import get_user\n"})
    graph = build(str(py_repo))
    affected = dict(dependents(graph, "src/app/api.py", ["get_user"]))
    assert affected["tests/test_pkg.py"] == "src/app/__init__.py"
    assert affected["src/app/viewer.py"] == "src/app/api.py"
    assert "src/app/models.py" not in affected


def test_dependents_leave_out_importers_of_other_names_only(tmp_path: Path):
    write(
        tmp_path,
        {
            "api.py": "def get_user(): pass\ndef fmt(): pass\n",
            "uses_fmt.py": "from api import fmt\n",
            "uses_all.py": "import api\n",
            "uses_user.py": "from api import get_user\n",
        },
    )
    graph = build(str(tmp_path))
    assert [p for p, _ in dependents(graph, "api.py", ["get_user"])] == [
        "uses_all.py",
        "uses_user.py",
    ]
    assert len(dependents(graph, "api.py")) == 3


def test_dependents_follow_typescript_index_barrels(ts_repo: Path):
    write(ts_repo, {"src/app.ts": "import { getUser } from './barrel';\n"})
    graph = build(str(ts_repo))
    affected = dict(dependents(graph, "src/api.ts", ["getUser"]))
    assert affected == {
        "src/app.ts": "src/barrel.ts",
        "src/barrel.ts": "src/api.ts",
        "src/broken.ts": "src/api.ts",
        "src/viewer.tsx": "src/api.ts",
    }


# -- rows for the store -----------------------------------------------------------------------


def test_rows_round_trip_through_the_stores_own_tables(py_repo: Path, store: Store):
    graph = build(str(py_repo))
    files, edges = graph_rows.file_rows(graph), graph_rows.edge_rows(graph)
    loaded = graph_rows.load(graph.root, graph_rows.config_json(graph.config), files, edges)
    assert loaded.files == graph.files
    assert loaded.config == graph.config

    config = graph_rows.config_json(graph.config)
    store.graph.save("r", root=graph.root, config_json=config, skipped={}, files=files, edges=edges)
    stored = graph_rows.load(graph.root, config, *store.graph.rows("r"))
    assert stored.files == graph.files


# -- the hook path stays lean ------------------------------------------------------------------


def test_the_hook_path_modules_do_not_load_the_graph_or_its_parsers():
    code = (
        "import sys, json\n"
        "import colony_tasks.hooks.runner, colony_tasks.store, colony_tasks.domain.sessions\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert not {m for m in loaded if m.startswith(("tree_sitter", "colony_tasks.depgraph"))}
