"""Benchmark of redaction: throughput on normal text, worst case on adversarial text, import cost.

Figures and same-run ratios, not tests (the tests assert growth, never time):

1. Throughput on ~1 MB of ordinary agent traffic (code, git output, logs, prose, the
   non-secret corpus) and on ~1 MB dense with secrets (the secret corpus), against one
   ``str.lower()`` pass and one ``re.search`` of an absent literal over the same text.
2. The worst case on adversarial text at 16 KB and 1 MB: every known ReDoS shape and, per
   rule, the slowest unit the hill climb of tests/test_redaction_linear.py finds, repeated to
   size; plus a "trigger soup" that makes every rule run. The target is 1 MB in <= 100 ms.
   The previous rule set (main before this change) is measured on the 16 KB shape that made
   it quadratic, as the baseline.
3. Import cost on the hook path: ``import colony_tasks.redact`` in a fresh interpreter (after
   ``re``, which the hook path imports anyway), against ``import json``; the first
   ``redact()`` of a typical prompt in that process (it compiles the rules it triggers); and
   compiling every rule.

Run ``python bench/redact.py`` (``--quick`` for fewer samples). Results are also written to
``bench/results/redact.json``.
"""

from __future__ import annotations

import argparse
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
    print_stat,
    stat,
    time_calls,
    time_interleaved,
    write_json,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from colony_tasks import redact  # noqa: E402
from colony_tasks.redact_rules import RULES  # noqa: E402
from tests.nonsecret_corpus import NONSECRETS  # noqa: E402
from tests.secret_corpus import CORPUS  # noqa: E402
from tests.test_redaction_linear import (  # noqa: E402
    KNOWN_SHAPES,
    PUNCTUATION,
    rule_function,
    slowest_unit,
    vocabulary_of,
)

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


OLD_COMMIT = "a5652ab"  # main before this change


def old_redact():
    """The rule set on main before this change, loaded from git, or None if unavailable."""
    try:
        source = subprocess.run(
            ["git", "show", f"{OLD_COMMIT}:colony_tasks/redact.py"],
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


def throughput(n: int) -> list[Stat]:
    log("1. throughput (1 MB texts)")
    normal = fill(NORMAL_PIECES, MB)
    # (the corpus's <private> entries are left out: an unclosed one drops the rest of the text)
    secrets = fill([text for _, text in CORPUS if "private" not in text.lower()], MB)
    absent = re.compile("zq-absent-literal")
    old = old_redact()
    stats = []
    for label, text in (("normal", normal), ("secret-dense", secrets)):
        fns = {
            "redact": lambda text=text: redact.redact(text),
            "lower": lambda text=text: text.lower(),
            "re.search": lambda text=text: absent.search(text),
        }
        if old is not None:
            fns["old redact"] = lambda text=text: old(text)
        samples = time_interleaved(fns, n, warmup=1)
        base_lower = stat(f"{label}: str.lower()", samples["lower"])
        base_search = stat(f"{label}: re.search(literal)", samples["re.search"])
        subject = compare(stat(f"{label}: redact()", samples["redact"]), base_lower, "lower()")
        mb_s = 1000 / subject.p50_ms
        subject.note = f"{mb_s:.0f} MB/s; {subject.p50_ms / base_search.p50_ms:.1f}x re.search"
        stats += [subject, base_lower, base_search]
        if old is not None:
            stats.append(
                compare(
                    stat(f"{label}: old redact()", samples["old redact"]), base_lower, "lower()"
                )
            )
    for s in stats:
        print_stat(s)
    log(f"   normal text: {stats[0].note}; secret-dense: {stats[3 if old is None else 4].note}")
    return stats


# Texts dense with matches: every few characters a secret to replace.
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


def adversarial_units() -> dict[str, str]:
    units = {f"shape {shape[:16]!r}": shape for shape in KNOWN_SHAPES}
    units |= {f"dense {unit[:16]!r}": unit for unit in DENSE}
    units["trigger soup"] = " ".join(t for rule in RULES for t in rule.triggers) + " = : "
    for index, rule in enumerate(RULES):
        vocabulary = vocabulary_of(rule.sources()[0], rule.triggers)
        units[f"rule {rule.name}"] = slowest_unit(rule_function(index), vocabulary, seed=index)
        if rule.spellings:
            units[f"rule {rule.name} (spelled)"] = slowest_unit(
                rule_function(index, True), vocabulary, seed=index
            )
    vocabulary = [t for rule in RULES for t in rule.triggers] + PUNCTUATION
    units["redact() hill climb"] = slowest_unit(redact.redact, vocabulary, seed=-2)
    return units


def worst_case(n: int) -> list[Stat]:
    log("2. adversarial text: the slowest of every shape and hill-climbed unit")
    units = adversarial_units()
    stats = []
    for size, label in ((16_000, "16 KB"), (MB, "1 MB")):
        timed = {}
        for name, unit in units.items():
            text = repeat_to(unit, size)
            timed[name] = min(time_calls(lambda text=text: redact.redact(text), 2))
        worst = sorted(timed, key=timed.__getitem__)[-3:]
        for name in reversed(worst):
            text = repeat_to(units[name], size)
            samples = time_calls(lambda text=text: redact.redact(text), n)
            lower = time_calls(lambda text=text: text.lower(), n)
            subject = compare(
                stat(f"{label} adversarial: {name}", samples),
                stat("lower", lower),
                "lower()",
            )
            subject.note = f"unit {units[name][:40]!r}"
            stats.append(subject)
            print_stat(subject)
    old = old_redact()
    if old is not None:
        text = repeat_to("a.a.a.", 16_000 - 4) + " key"
        old_samples = time_calls(lambda: old(text), 1)
        new_samples = time_calls(lambda: redact.redact(text), n)
        base = stat("16 KB 'a.a.a.… key': old redact()", old_samples)
        stats.append(base)
        stats.append(
            compare(stat("16 KB 'a.a.a.… key': redact()", new_samples), base, "old redact()")
        )
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
    log("3. import cost on the hook path (fresh interpreters, bytecode compiled as installed)")
    subprocess.run([sys.executable, "-m", "compileall", "-q", "colony_tasks"], cwd=ROOT, check=True)
    modules = {"redact": "colony_tasks.redact", "csv": "csv"}
    old_dir = tempfile.mkdtemp(prefix="old-redact-")
    source = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:colony_tasks/redact.py"], cwd=ROOT, capture_output=True
    ).stdout
    if source:
        Path(old_dir, "old_redact.py").write_bytes(source)
        subprocess.run([sys.executable, "-m", "compileall", "-q", old_dir], check=True)
        modules["old"] = "old_redact"
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
        compare(stat("import colony_tasks.redact (+ rules)", samples["redact"]), base, "csv"),
        base,
    ]
    first = stat("first redact() of a prompt naming token/password/key", samples["first"])
    if samples["old first"]:
        old_first = stat("  same prompt, previous redact.py", samples["old first"])
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    n = 5 if args.quick else 15
    info = machine_info()
    log(machine_line(info))
    stats = throughput(n) + worst_case(n) + import_cost(n)
    print()
    print(format_table(stats, title="redaction"))
    for s in stats:
        if s.note:
            print(f"  {s.name}: {s.note}")
    write_json(RESULTS, {"machine": info, "stats": stats})


if __name__ == "__main__":
    main()
