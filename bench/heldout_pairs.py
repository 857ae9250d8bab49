"""Synthetic pairs of two sessions' edits on real source files of other projects, with git's
verdict as truth: the stand-in for the held-out feature pairs (TypeScript, Rust, Go) that the
collision forecast was never tuned on (issue 34).

These are *synthetic edits on real code*, not real feature pairs. Each pair takes one real
file as its base and gives each side 1-3 edits of the kinds agents make — change lines of a
function body, add a function after a closing brace, rename an identifier everywhere in the
file, add or change an import — most of the time (70%) the second side's first edit lands within a
few lines of one of the first side's, so that touching, adjacent and one-line-apart cases are
common. The truth is ``git merge-tree --write-tree`` (merge-ort) of the two sides' commits on
the base commit. Deterministic for a seed; the source folders are given on the command line
(published sources: an npm package's ``src``, a Debian ``librust-*-dev`` crate, a Go module).

    python bench/heldout_pairs.py --lang ts DIR --lang rust DIR --lang go DIR [--n 150] [--seed 11]
        --out pairs.json

The stand-in measured for issue 34 used, with the defaults: TypeScript, the ``src``
folders of the npm packages ``zod`` and ``effect``; Rust, the crates of the Debian packages
``librust-regex-dev`` (1.7.1) and ``librust-serde-json-dev`` (1.0.87); Go,
``golang-github-spf13-cobra-dev`` (1.6.1) — each ``.deb`` fetched with ``apt-get download``
and unpacked with ``dpkg-deb -x`` (crates under ``usr/share/cargo/registry``, Go under
``usr/share/gocode``).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import tempfile
from pathlib import Path

SUFFIX = {"ts": (".ts",), "rust": (".rs",), "go": (".go",)}
SKIP = re.compile(r"(^|/)(tests?|testdata|benches|examples)/|_test\.go$|\.test\.ts$|\.d\.ts$")
IDENT = re.compile(r"\b[a-z_][A-Za-z0-9_]{3,}\b")
KEYWORDS = set(
    "self this super return const function async await export import from type interface"
    " struct impl enum match where true false None Some func package defer range string"
    " error interface switch case break continue default else while for loop unsafe static"
    " string number boolean undefined null void never unknown readonly private public".split()
)
NEW_FN = {
    "ts": ["", "export function {name}(value: number): number {{", "  return value + 1;", "}}"],
    "rust": ["", "pub fn {name}(value: usize) -> usize {{", "    value + 1", "}}"],
    "go": ["", "func {name}(value int) int {{", "\treturn value + 1", "}}"],
}
NEW_STMT = {
    "ts": "{ind}const {name} = 0;",
    "rust": "{ind}let {name} = 0;",
    "go": "{ind}{name} := 0",
}
NEW_IMPORT = {
    "ts": 'import {{ {name} }} from "./{name}";',
    "rust": "use crate::{name};",
    "go": '\t"example.com/{name}"',
}
IMPORT_LINE = {"ts": re.compile(r"^import "), "rust": re.compile(r"^use "), "go": None}


def sources(lang: str, folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.suffix not in SUFFIX[lang] or SKIP.search(rel) or not path.is_file():
            continue
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError):
            continue
        if "\r" not in text and text.endswith("\n") and 150 <= text.count("\n") <= 3000:
            found.append(path)
    return found


class Side:
    """One session's edits of a base file, made in order on its own copy."""

    def __init__(self, lang: str, base: list[str], rnd: random.Random, tag: str):
        self.lang, self.lines, self.rnd, self.tag = lang, list(base), rnd, tag
        self.count = 0
        self.places: list[int] = []

    def name(self, stem: str) -> str:
        self.count += 1
        return (
            f"{stem}{self.tag.upper()}{self.count}"
            if self.lang != "rust"
            else f"{stem}_{self.tag}{self.count}"
        )

    def code_line(self, at: int) -> int:
        for i in range(max(at, 0), len(self.lines)):
            text = self.lines[i].strip()
            if (
                text
                and not text.startswith(("//", "/*", "*"))
                and text not in ("}", "{", ")", "});")
            ):
                return i
        return -1

    def modify(self, at: int) -> None:
        i = self.code_line(at)
        if i < 0:
            return
        kind = self.rnd.choice(("change", "change", "insert", "delete"))
        ind = re.match(r"\s*", self.lines[i]).group(0)
        if kind == "insert":
            self.lines.insert(i + 1, NEW_STMT[self.lang].format(ind=ind, name=self.name("extra")))
        elif kind == "delete" and self.lines[i].rstrip().endswith(";"):
            del self.lines[i]
        else:
            span = self.rnd.randint(1, 3)
            for j in range(i, min(i + span, len(self.lines))):
                words = IDENT.findall(self.lines[j])
                if words:
                    word = self.rnd.choice(words)
                    self.lines[j] = re.sub(rf"\b{word}\b", word + "Next", self.lines[j], count=1)
        self.places.append(i)

    def add_function(self, at: int) -> None:
        for i in range(max(at, 0), len(self.lines)):
            if self.lines[i] == "}":
                block = [line.format(name=self.name("helper")) for line in NEW_FN[self.lang]]
                self.lines[i + 1 : i + 1] = block
                self.places.append(i + 1)
                return

    def rename(self, at: int) -> None:
        counts: dict[str, int] = {}
        for line in self.lines:
            for word in IDENT.findall(line):
                counts[word] = counts.get(word, 0) + 1
        near = [w for line in self.lines[max(at, 0) : at + 10] for w in IDENT.findall(line)]
        words = sorted({w for w in near if 2 <= counts[w] <= 6 and w not in KEYWORDS})
        if not words:
            return self.modify(at)
        word = self.rnd.choice(words)
        new = word + ("_renamed" if self.lang == "rust" else "Renamed") + self.tag
        for i, line in enumerate(self.lines):
            if re.search(rf"\b{word}\b", line):
                self.lines[i] = re.sub(rf"\b{word}\b", new, line)
                self.places.append(i)

    def edit_import(self, at: int) -> None:
        if self.lang == "go":
            lines = [i for i, line in enumerate(self.lines) if line.startswith("import (")]
            spot = lines[0] + 1 if lines else -1
        else:
            pattern = IMPORT_LINE[self.lang]
            found = [i for i, line in enumerate(self.lines) if pattern.match(line)]
            spot = found[-1] + 1 if found else -1
        if spot < 0:
            return self.modify(at)
        if self.rnd.random() < 0.5:
            self.lines.insert(spot, NEW_IMPORT[self.lang].format(name=self.name("dep")))
        else:
            self.lines[spot - 1] = (
                self.lines[spot - 1].replace(";", "; // used", 1)
                if (self.lang != "go")
                else self.lines[spot - 1] + " // used"
            )
        self.places.append(spot)

    def edit(self, at: int) -> None:
        kind = self.rnd.choice(("modify", "modify", "modify", "add", "rename", "import"))
        {
            "modify": self.modify,
            "add": self.add_function,
            "rename": self.rename,
            "import": self.edit_import,
        }[kind](at)


def git(cwd: Path, *args: str, data: str | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, input=data, capture_output=True, text=True, check=False
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stderr)
    return done.stdout.strip()


def commit(scratch: Path, name: str, text: str, parent: str | None) -> str:
    blob = git(scratch, "hash-object", "-w", "--stdin", data=text)
    tree = git(scratch, "mktree", data=f"100644 blob {blob}\t{name}\n")
    return git(scratch, "commit-tree", tree, "-m", "x", *(["-p", parent] if parent else []))


def conflicts(scratch: Path, name: str, base: str, a: str, b: str) -> bool:
    """git's verdict: merge-ort of the two sides' commits on the base commit."""
    root = commit(scratch, name, base, None)
    left, right = commit(scratch, name, a, root), commit(scratch, name, b, root)
    done = subprocess.run(
        ["git", "merge-tree", "--write-tree", left, right], cwd=scratch, capture_output=True
    )
    return done.returncode == 1


def pairs_for(lang: str, files: list[Path], n: int, rnd: random.Random, scratch: Path) -> list:
    out = []
    while len(out) < n:
        path = rnd.choice(files)
        base = path.read_text().split("\n")[:-1]
        a, b = Side(lang, base, rnd, "a"), Side(lang, base, rnd, "b")
        for _ in range(rnd.randint(1, 3)):
            a.edit(rnd.randrange(len(base)))
        for k in range(rnd.randint(1, 3)):
            near = k == 0 and a.places and rnd.random() < 0.7
            at = rnd.choice(a.places) + rnd.randint(-6, 6) if near else rnd.randrange(len(base))
            b.edit(max(at, 0))
        if a.lines == base or b.lines == base or a.lines == b.lines:
            continue
        text = {k: "\n".join(v) + "\n" for k, v in (("base", base), ("a", a.lines), ("b", b.lines))}
        out.append(
            {
                "lang": lang,
                "name": path.name,
                **text,
                "has_conflict": conflicts(scratch, path.name, text["base"], text["a"], text["b"]),
            }
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lang", nargs=2, action="append", metavar=("LANG", "DIR"), required=True)
    parser.add_argument("--n", type=int, default=150, help="pairs per language")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rnd = random.Random(args.seed)
    pairs = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        git(scratch, "init", "-q")
        git(scratch, "config", "user.email", "bench@example.com")
        git(scratch, "config", "user.name", "bench")
        for lang, folder in args.lang:
            files = sources(lang, Path(folder))
            pairs += pairs_for(lang, files, args.n, rnd, scratch)
            print(
                f"{lang}: {len(files)} files, {sum(p['has_conflict'] for p in pairs if p['lang'] == lang)}"
                f" of {args.n} pairs conflict"
            )
    args.out.write_text(json.dumps({"seed": args.seed, "pairs": pairs}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
