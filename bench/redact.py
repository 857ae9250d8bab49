"""Benchmark of redaction: normal text and adversarial text at 16 KB and 1 MB, import cost.

Figures and same-run ratios, not tests (the tests assert growth, never time):

1. Medians at 16 KB and 1 MB, each against the engine before redaction ran without Python
   (PREVIOUS_COMMIT, imported from git into a temporary package) in the same run,
   interleaved: normal agent traffic (code, git output, logs, prose, the non-secret corpus);
   each adversarial family (the slowest unit the hill climb of
   tests/base/test_redaction_linear.py finds per rule and for redact() as a whole, the known ReDoS
   shapes, units dense with matches or near misses, a soup of every trigger), repeated to
   size, reporting the family's slowest member for each engine; and 1 MB dense with secrets
   (every rule's own example, and the secret corpus, repeated). The target is 1 MB of any of
   them in <= 100 ms. The rule set before the rewrite (OLD_COMMIT) is measured on the 16 KB
   shape that made it quadratic.
2. Import cost on the hook path: ``import colony_tasks.base.redact`` in a fresh interpreter (after
   ``re``, which the hook path imports anyway), against ``import csv``; the first
   ``redact()`` of a typical prompt in that process (it compiles the rules it triggers); and
   compiling every rule.

Run ``python bench/redact.py`` (``--quick`` for fewer samples). Results are also written to
``bench/results/redact.json``.

``--against PATH`` instead compares this checkout's ``redact()`` with the one of another
checkout (say main's), on 1 MB of ordinary text, of non-ASCII text and of text dense with
secrets: each checkout runs in its own interpreter (its package imported from its own
directory, bytecode compiled first), and the two are asked in turn for one timed call at a
time, so both see the same load. It prints each median and the same-run ratio.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from _stats import (
    Stat,
    compare,
    format_table,
    log,
    machine_info,
    machine_line,
    percentile,
    print_stat,
    stat,
    time_calls,
    time_interleaved,
    write_json,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from colony_tasks.base import redact  # noqa: E402
from colony_tasks.base.redact_rules import RULES  # noqa: E402
from tests.base.test_redaction_linear import (  # noqa: E402
    KNOWN_SHAPES,
    PUNCTUATION,
    rule_function,
    slowest_unit,
    vocabulary_of,
)
from tests.base.test_redaction_rules import EXAMPLES  # noqa: E402
from tests.support.nonsecret_corpus import NONSECRETS  # noqa: E402
from tests.support.secret_corpus import CORPUS  # noqa: E402
from tests.support.secret_heldout import HELDOUT  # noqa: E402

RESULTS = HERE / "results" / "redact.json"
MB = 1_000_000

NORMAL_PIECES = [
    *NONSECRETS,
    "def handler(event, context):\n    body = json.loads(event['body'])\n"
    "    return {'statusCode': 200, 'body': json.dumps(process(body))}\n",
    "$ pytest -q\n........................................ [100%]\n40 passed in 1.2s\n",
    "commit 1b2c3d4e5f60718293a4b5c6d7e8f90123456789\nAuthor: Dev <dev@example.com>\n"
    "Date:   Mon Nov 23 03:02:25 2026\n\n    Fix the flaky login test\n",
    "The session token is refreshed by the middleware before it expires; see auth/tokens.py.\n",
    '2026-11-23 03:02:25,123 INFO uvicorn.access 127.0.0.1:51234 - "GET /api/tasks HTTP/1.1" 200\n',
    '  File "/app/src/store.py", line 88, in add_observation\n    raise KeyError(key)\n',
]


def fill(pieces: list[str], size: int) -> str:
    text, i = [], 0
    total = 0
    while total < size:
        piece = pieces[i % len(pieces)] + "\n"
        text.append(piece)
        total += len(piece)
        i += 1
    return "".join(text)[:size]


def repeat_to(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


OLD_COMMIT = "a5652ab"  # main before the rules were rewritten (quadratic on one shape)
PREVIOUS_COMMIT = "c7e5fd0"  # the rules and engine before issue 23 (grammar, folding)


def old_redact():
    """The rule set on main before the rewrite, loaded from git, or None if unavailable."""
    try:
        source = subprocess.run(
            ["git", "show", f"{OLD_COMMIT}:colony_tasks/base/redact.py"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    namespace: dict = {"__name__": "old_redact"}
    exec(compile(source, "old_redact.py", "exec"), namespace)
    return namespace["redact"]


def previous_engine():
    """The redaction engine and rules as of PREVIOUS_COMMIT, imported from a copy, or None."""
    package = Path(tempfile.mkdtemp(prefix="previous-redact-"), "previous_redact")
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in ("redact.py", "redact_rules.py"):
        try:
            source = subprocess.run(
                ["git", "show", f"{PREVIOUS_COMMIT}:colony_tasks/{name}"],
                cwd=ROOT,
                capture_output=True,
                check=True,
            ).stdout
        except (OSError, subprocess.CalledProcessError):
            return None
        (package / name).write_bytes(source)
    sys.path.insert(0, str(package.parent))
    return importlib.import_module("previous_redact.redact")


def uncached(engine, text: str):
    """A call that redacts ``text`` from scratch (``redact()`` remembers recent results)."""

    def call() -> None:
        engine._RECENT.clear()
        engine.redact(text)

    return call


# Ordinary text in other scripts, with full-width forms and invisible characters.
NON_ASCII_PIECES = [
    "修复登录测试中的竞态条件，然后重新运行 CI。\n",
    "Пароль сброшен; токен обновлён, перезапустите сервис.\n",
    "設定ファイルを更新しました（ｐｏｒｔ：８０８０）。\n",
    "café naïve résumé — «citation» ½\u00a0kg\n",
    "zero\u200bwidth and soft\u00adhyphen in prose\n",
    "API 응답 시간이 개선되었습니다 v2.3.1\n",
]

# Texts dense with matches: every few characters a secret to replace, or a near miss.
DENSE = [
    "password=x ",
    "token=abcdefgh ",
    "://a:b@c ",
    "key-",
    'secret: "a"\n',
    "--password x ",
    "Cookie: a\n",
    "\n password: a b\n",
    "ghp_" + "a" * 30 + " ",
]


def every_rule_unit() -> str:
    """One text holding each rule's own example: every rule matches in it."""
    return " \n".join(EXAMPLES[rule.name][0] for rule in RULES) + "\n"


def families() -> dict[str, dict[str, str]]:
    """Adversarial units by family: each is repeated to size and the slowest reported."""
    log("   hill-climbing the slowest units (per rule, and for redact() as a whole)")
    fuzz = {}
    for index, rule in enumerate(RULES):
        vocabulary = vocabulary_of(rule.sources()[0], rule.triggers)
        fuzz[rule.name] = slowest_unit(rule_function(index), vocabulary, seed=index)
        if rule.spellings:
            fuzz[rule.name + " (spelled)"] = slowest_unit(
                rule_function(index, True), vocabulary, seed=index
            )
    vocabulary = [t for rule in RULES for t in rule.triggers] + PUNCTUATION
    fuzz["redact()"] = slowest_unit(redact.redact, vocabulary, seed=-2)
    return {
        "fuzzer's slowest units": fuzz,
        "known ReDoS shapes": {repr(shape[:16]): shape for shape in KNOWN_SHAPES},
        "match-dense units": {repr(unit[:16]): unit for unit in DENSE},
        "trigger soup": {"all triggers": " ".join(t for r in RULES for t in r.triggers) + " = : "},
    }


def sizes(n: int) -> list[Stat]:
    log("1. normal text, adversarial families and secret-dense text at 16 KB and 1 MB")
    previous = previous_engine()
    engines = {"redact": redact} | ({"previous": previous} if previous is not None else {})
    stats: list[Stat] = []

    def measure(label: str, texts: dict[str, str]) -> None:
        """Each engine's median on the family's slowest text: every text is screened (best of
        3 calls per engine), then both engines are timed, interleaved, on each engine's
        slowest; an engine's figure is its slower median of the two."""
        slowest = set()
        for engine in engines.values():
            timed = {name: min(time_calls(uncached(engine, t), 3)) for name, t in texts.items()}
            slowest.add(max(timed, key=timed.__getitem__))
        found: dict[str, tuple[list[float], str]] = {}
        for name in sorted(slowest):
            fns = {key: uncached(engine, texts[name]) for key, engine in engines.items()}
            for key, samples in time_interleaved(fns, n).items():
                if key not in found or percentile(samples, 50) > percentile(found[key][0], 50):
                    found[key] = (samples, name)
        subject = stat(f"{label}: redact()", found["redact"][0], note=found["redact"][1])
        if "previous" in found:
            samples, name = found["previous"]
            base = stat(f"{label}: previous redact()", samples, note=name)
            stats.extend([compare(subject, base, "previous"), base])
        else:
            stats.append(subject)
        for s in stats[-len(engines) :]:
            print_stat(s)

    normal_pieces = NORMAL_PIECES
    secret_pieces = [text for _, text in CORPUS if "private" not in text.lower()]
    for size, label in ((16_000, "16 KB"), (MB, "1 MB")):
        measure(f"{label} normal text", {"normal": fill(normal_pieces, size)})
    # Text that is not plain ASCII goes through folding (see redact.fold).
    for size, label in ((16_000, "16 KB"), (MB, "1 MB")):
        measure(f"{label} non-ASCII text", {"non-ascii": fill(NON_ASCII_PIECES, size)})
    measure(
        "1 MB folded secret-dense",
        {"held-out non-ASCII secrets": fill([t for f, _, t in HELDOUT if f == "unicode"], MB)},
    )
    units = families()
    for family, members in units.items():
        for size, label in ((16_000, "16 KB"), (MB, "1 MB")):
            measure(
                f"{label} {family}", {name: repeat_to(unit, size) for name, unit in members.items()}
            )
    # (the corpus's <private> entries are left out: an unclosed one drops the rest of the text)
    measure(
        "1 MB secret-dense",
        {
            "every rule's example, repeated": repeat_to(every_rule_unit(), MB),
            "the secret corpus, repeated": fill(secret_pieces, MB),
        },
    )
    old = old_redact()
    if old is not None:
        text = repeat_to("a.a.a.", 16_000 - 4) + " key"
        old_samples = time_calls(lambda: old(text), 1)
        new_samples = time_calls(uncached(redact, text), n)
        base = stat(f"16 KB 'a.a.a.… key': redact() of {OLD_COMMIT}", old_samples)
        stats.append(base)
        stats.append(compare(stat("16 KB 'a.a.a.… key': redact()", new_samples), base, "old"))
        print_stat(stats[-2])
        print_stat(stats[-1])
    return stats


# `re` is imported first: the hook path imports it anyway (json, pathlib, sqlite3 need it).
IMPORT_CODE = """
import re, time, json as _j
t0 = time.perf_counter()
import {module} as m
t1 = time.perf_counter()
out = {{"import": t1 - t0}}
if hasattr(m, "redact"):
    t2 = time.perf_counter()
    m.redact({prompt!r})
    out["first_redact"] = time.perf_counter() - t2
print(_j.dumps(out))
"""
PROMPT = (
    "please fix the flaky token refresh test in tests/test_auth.py; the password reset flow"
    " calls api_key = get_secret('x') and --verbose output shows the key: nothing"
)


def import_cost(n: int) -> list[Stat]:
    log("2. import cost on the hook path (fresh interpreters, bytecode compiled as installed)")
    subprocess.run([sys.executable, "-m", "compileall", "-q", "colony_tasks"], cwd=ROOT, check=True)
    modules = {"redact": "colony_tasks.base.redact", "csv": "csv"}
    previous = previous_engine()
    old_dir = str(Path(previous.__file__).parent.parent) if previous is not None else ""
    if previous is not None:
        subprocess.run([sys.executable, "-m", "compileall", "-q", old_dir], check=True)
        modules["old"] = "previous_redact.redact"
    samples: dict[str, list[float]] = {key: [] for key in [*modules, "first", "old first"]}
    for _ in range(n):
        for key, module in modules.items():
            code = IMPORT_CODE.format(module=module, prompt=PROMPT)
            out = subprocess.run(
                [sys.executable, "-c", code],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": old_dir},
            )
            found = json.loads(out.stdout)
            samples[key].append(found["import"])
            if "first_redact" in found:
                samples["first" if key == "redact" else "old first"].append(found["first_redact"])
    base = stat("import csv (stdlib module, baseline)", samples["csv"])
    stats = [
        compare(stat("import colony_tasks.base.redact (+ rules)", samples["redact"]), base, "csv"),
        base,
    ]
    first = stat("first redact() of a prompt naming token/password/key", samples["first"])
    if samples["old first"]:
        old_first = stat(f"  same prompt, redact.py of {PREVIOUS_COMMIT}", samples["old first"])
        stats += [compare(first, old_first, "previous"), old_first]
    else:
        stats.append(first)
    compile_all = []
    for _ in range(n):
        redact._compiled.clear()
        re.purge()
        compile_all += time_calls(lambda: [redact._compile(rule) for rule in RULES], 1)
    stats.append(stat(f"compile all {len(RULES)} rules (short-text patterns)", compile_all))
    for s in stats:
        print_stat(s)
    return stats


# A checkout's redact(), timed one call at a time on request: "load NAME PATH" reads a text,
# "time NAME" answers with the seconds one uncached redact() of it took.
WORKER = """
import sys, time
from colony_tasks.base import redact as engine
texts = {}
for line in sys.stdin:
    verb, name, *rest = line.split()
    if verb == "load":
        texts[name] = open(rest[0], encoding="utf-8").read()
        engine.redact(texts[name])  # compiles the patterns this text needs
        print("ok", flush=True)
    else:
        engine._RECENT.clear()
        t0 = time.perf_counter()
        engine.redact(texts[name])
        print(time.perf_counter() - t0, flush=True)
"""


def against_texts() -> dict[str, str]:
    """The three 1 MB texts of the comparison with another checkout."""
    secret_pieces = [text for _, text in CORPUS if "private" not in text.lower()]
    return {
        "ordinary": fill(NORMAL_PIECES, MB),
        "non-ascii": fill(NON_ASCII_PIECES, MB),
        "secret-dense": fill(secret_pieces, MB),
    }


def against(other: Path, n: int) -> list[Stat]:
    """Medians of this checkout's redact() and ``other``'s on 1 MB texts, interleaved."""
    checkouts = {"this": ROOT, "other": other.resolve()}
    log(f"redact() of this checkout against {checkouts['other']}, 1 MB texts, {n} samples each")
    workers = {}
    for key, path in checkouts.items():
        subprocess.run([sys.executable, "-m", "compileall", "-q", "colony_tasks"], cwd=path)
        workers[key] = subprocess.Popen(
            [sys.executable, "-c", WORKER],
            cwd=path,
            env={**os.environ, "PYTHONPATH": str(path)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ask(key: str, line: str) -> str:
        worker = workers[key]
        assert worker.stdin is not None and worker.stdout is not None
        worker.stdin.write(line + "\n")
        worker.stdin.flush()
        return worker.stdout.readline()

    stats: list[Stat] = []
    with tempfile.TemporaryDirectory() as folder:
        for name, text in against_texts().items():
            path = Path(folder, name)
            path.write_text(text, encoding="utf-8")
            samples: dict[str, list[float]] = {key: [] for key in workers}
            for key in workers:
                ask(key, f"load {name} {path}")
            for i in range(n):
                for key in sorted(workers, reverse=bool(i % 2)):  # alternate who goes first
                    samples[key].append(float(ask(key, f"time {name}")))
            base = stat(f"1 MB {name}: other checkout", samples["other"])
            stats += [
                compare(stat(f"1 MB {name}: this checkout", samples["this"]), base, "other"),
                base,
            ]
            print_stat(stats[-2])
            print_stat(stats[-1])
    for worker in workers.values():
        worker.communicate()
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    args = parser.parse_args()
    n = 5 if args.quick else 15
    info = machine_info()
    log(machine_line(info))
    if args.against is not None:
        print(format_table(against(args.against, n), title="redaction, 1 MB texts"))
        return
    stats = sizes(n) + import_cost(n)
    print()
    print(format_table(stats, title="redaction"))
    for s in stats:
        if s.note:
            print(f"  {s.name}: {s.note}")
    write_json(RESULTS, {"machine": info, "stats": stats})


if __name__ == "__main__":
    main()
