"""Small helpers shared by the benchmarks in ``bench/``: timing, percentiles, machine, tables.

Benchmarks run on shared, noisy machines, so they report the median (p50) and p90 side by side
and compare candidates by interleaving their samples rather than running them one after the
other. Standard library only.
"""

from __future__ import annotations

import json
import math
import os
import platform
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

Sample = float  # seconds


# -- percentiles ------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100), linear between closest ranks (numpy's default)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * (q / 100.0)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass
class Stat:
    """One measured figure (times in milliseconds)."""

    name: str
    n: int
    p50_ms: float
    p90_ms: float
    min_ms: float
    max_ms: float
    mean_ms: float
    ratio: float | None = None  # p50 / p50 of ``baseline``
    baseline: str | None = None  # short label of what ``ratio`` compares against
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def stat(name: str, samples: Sequence[Sample], *, note: str = "") -> Stat:
    """Summarize samples given in seconds."""
    ms = [s * 1000.0 for s in samples]
    return Stat(
        name=name,
        n=len(ms),
        p50_ms=percentile(ms, 50),
        p90_ms=percentile(ms, 90),
        min_ms=min(ms) if ms else math.nan,
        max_ms=max(ms) if ms else math.nan,
        mean_ms=sum(ms) / len(ms) if ms else math.nan,
        note=note,
    )


def compare(subject: Stat, baseline: Stat, label: str) -> Stat:
    """Set ``subject.ratio`` to its p50 over the baseline's p50; returns ``subject``."""
    if baseline.p50_ms > 0:
        subject.ratio = subject.p50_ms / baseline.p50_ms
        subject.baseline = label
    return subject


# -- timing -----------------------------------------------------------------------------------


def time_calls(
    fn: Callable[[], object],
    n: int,
    *,
    setup: Callable[[], object] | None = None,
    warmup: int = 0,
) -> list[Sample]:
    """Time ``n`` calls of ``fn`` (seconds each); ``setup`` runs untimed before every call."""
    for _ in range(warmup):
        if setup is not None:
            setup()
        fn()
    samples = []
    clock = time.perf_counter
    for _ in range(n):
        if setup is not None:
            setup()
        start = clock()
        fn()
        samples.append(clock() - start)
    return samples


def time_interleaved(
    fns: Mapping[str, Callable[[], object]],
    n: int,
    *,
    warmup: int = 0,
    between: Callable[[], object] | None = None,
) -> dict[str, list[Sample]]:
    """Time several candidates round-robin so machine noise hits them alike.

    The starting candidate rotates every round to avoid an order bias; ``between`` runs
    untimed after every round.
    """
    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    samples: dict[str, list[Sample]] = {name: [] for name in names}
    clock = time.perf_counter
    for i in range(n):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            fn = fns[name]
            start = clock()
            fn()
            samples[name].append(clock() - start)
        if between is not None:
            between()
    return samples


class Timer:
    """``with Timer() as t: ...`` then ``t.seconds``."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        self.seconds = math.nan
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


# -- machine ----------------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    """What the figures were measured on."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = None
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        load = None
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "sqlite": sqlite3.sqlite_version,
        "loadavg": load,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def machine_line(info: Mapping[str, Any]) -> str:
    cpus = info["cpu_count"]
    if info.get("cpus_usable") not in (None, cpus):
        cpus = f"{info['cpus_usable']}/{cpus}"
    load = info.get("loadavg")
    return (
        f"{info['platform']} | {info['implementation']} {info['python']} | cpus {cpus}"
        f" | sqlite {info['sqlite']}" + (f" | load {' '.join(map(str, load))}" if load else "")
    )


# -- output -----------------------------------------------------------------------------------


def fmt_ms(value: float | None) -> str:
    """Milliseconds with about three significant digits."""
    if value is None or math.isnan(value):
        return "-"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def fmt_ratio(stat_: Stat) -> str:
    if stat_.ratio is None:
        return ""
    r = stat_.ratio
    text = f"{r:.0f}x" if r >= 100 else f"{r:.1f}x" if r >= 10 else f"{r:.2f}x"
    return f"{text} {stat_.baseline}" if stat_.baseline else text


def format_table(stats: Iterable[Stat], *, title: str | None = None) -> str:
    """One compact fixed-width table: name | n | p50 ms | p90 ms | ratio."""
    header = ("name", "n", "p50 ms", "p90 ms", "ratio")
    rows = [(s.name, str(s.n), fmt_ms(s.p50_ms), fmt_ms(s.p90_ms), fmt_ratio(s)) for s in stats]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    right = (False, True, True, True, False)

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ]
        return " | ".join(parts).rstrip()

    out = [title] if title else []
    out.append(line(header))
    out.append("-+-".join("-" * w for w in widths))
    out.extend(line(r) for r in rows)
    return "\n".join(out)


def print_stat(stat_: Stat) -> None:
    """One progress line for a figure as soon as it is measured."""
    ratio = fmt_ratio(stat_)
    print(
        f"  {stat_.name}: n={stat_.n} p50={fmt_ms(stat_.p50_ms)} ms"
        f" p90={fmt_ms(stat_.p90_ms)} ms" + (f" ({ratio})" if ratio else ""),
        flush=True,
    )


def write_json(path: str | Path, payload: Mapping[str, Any]) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, default=_json_default) + "\n", encoding="utf-8")
    os.replace(tmp, target)
    return target


def _json_default(value: Any) -> Any:
    if isinstance(value, Stat):
        return value.to_dict()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float) and math.isnan(value):
        return None
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def log(message: str) -> None:
    print(message, flush=True)
