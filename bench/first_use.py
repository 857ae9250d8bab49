"""What a plugin install costs: the first hook builds the plugin's environment, later hooks pay
nothing for it.

    python bench/first_use.py [--n 30]

A copy of the checkout's tracked files stands for the installed plugin; its launcher
(bin/colony-tasks) runs as Claude Code runs it (``CLAUDE_PLUGIN_ROOT``, ``CLAUDE_PLUGIN_DATA``).
The build uses pip (``uv`` is kept off PATH unless ``--uv``) on a wheelhouse packed from this
checkout's environment, so nothing is downloaded and the figure is the build itself, not the
network.

- **first use**: the first SessionStart after the install, build included, once; then the
  same hook again with the environment built, for comparison.
- **later hooks**: interleaved rounds of the launcher's hook (``bin/colony-tasks hook ...``,
  which checks the stamp and execs the environment's console script) against a same-run
  baseline, that console script run directly, on the same store with the relay running.

Results go to bench/results/first_use.json.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import _stats  # noqa: E402

import hooks as hook_bench  # noqa: E402
from tests.agents.wheelhouse import build as build_wheelhouse  # noqa: E402

EVENTS = ("user-prompt-submit", "pre-tool-use (read)", "post-tool-use")


def plugin_copy(target: Path) -> Path:
    """The checkout's tracked files, as a plugin install would hold them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_symlink() or source.exists():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name, follow_symlinks=False)
    return target


def run(args: list[str], payload: bytes, env: dict[str, str]) -> None:
    result = subprocess.run(args, input=payload, capture_output=True, env=env, cwd="/")
    if result.returncode != 0 or b"not built yet" in result.stderr:
        raise SystemExit(f"{args} failed ({result.returncode}): {result.stderr[-800:]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--uv", action="store_true", help="let the launcher use uv if on PATH")
    args = parser.parse_args()
    info = _stats.machine_info()
    print(_stats.machine_line(info))
    root = Path(tempfile.mkdtemp(prefix="colony-bench-first-use-"))
    try:
        plugin = plugin_copy(root / "plugin")
        wheels = root / "wheels"
        _stats.log("packing the wheelhouse from this environment")
        build_wheelhouse(wheels)
        home = root / "home"
        home.mkdir()
        repo = hook_bench.git_repo(root)
        hook_bench.seed(home, repo, 1000)
        data = root / "data"
        path = os.environ["PATH"] if args.uv else "/usr/local/bin:/usr/bin:/bin"
        if not args.uv and shutil.which("uv", path=path):
            raise SystemExit("uv is on /usr/bin: pass --uv to measure it")
        env = {
            "HOME": str(home),
            "PATH": path,
            "LANG": "C.UTF-8",
            "COLONY_TASKS_HOME": str(home),
            "CLAUDE_PLUGIN_ROOT": str(plugin),
            "CLAUDE_PLUGIN_DATA": str(data),
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(wheels),
            "UV_OFFLINE": "1",
            "UV_FIND_LINKS": str(wheels),
        }
        launcher = str(plugin / "bin" / "colony-tasks")
        payloads = hook_bench.payloads(repo)
        ids = iter(range(10**9))
        start = hook_bench.fresh("session-start", payloads["session-start"], ids)

        _stats.log("first SessionStart after the install (builds the environment)")
        with _stats.Timer() as first:
            run([launcher, "hook", "session-start"], start(), env)
        exe = data / "venv" / "bin" / "colony-tasks"
        assert (data / "venv" / ".built-from").read_text().strip() == str(plugin)
        later_start = _stats.time_calls(
            lambda: run([launcher, "hook", "session-start"], start(), env), 5
        )
        results = [
            _stats.stat("first session-start (build included)", [first.seconds]),
            _stats.compare(
                _stats.stat("session-start, environment built", later_start),
                _stats.stat("first", [first.seconds]),
                "first use",
            ),
        ]

        fns = {}
        for name in EVENTS:
            event = hook_bench.event_of(name)
            fns[f"{name} via launcher"] = _launch(
                [launcher, "hook", event], hook_bench.fresh(name, payloads[name], ids), env
            )
            fns[f"{name} direct"] = _launch(
                [str(exe), "hook", event, "--agent", "claude"],
                hook_bench.fresh(name, payloads[name], ids),
                env,
            )
        _stats.log(f"timing {args.n} interleaved rounds")
        samples = _stats.time_interleaved(fns, args.n, warmup=2)
        hook_bench.stop_relay(env)
        for name in EVENTS:
            direct = _stats.stat(f"{name} direct (baseline)", samples[f"{name} direct"])
            via = _stats.stat(f"{name} via launcher", samples[f"{name} via launcher"])
            results += [direct, _stats.compare(via, direct, "direct")]
        print(_stats.format_table(results, title="plugin first use and later hooks"))
        _stats.write_json(
            HERE / "results" / "first_use.json",
            {
                "machine": info,
                "n": args.n,
                "installer": "uv" if args.uv and shutil.which("uv", path=path) else "pip",
                "results": [s.to_dict() for s in results],
            },
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def _launch(args: list[str], payload, env: dict[str, str]):
    return lambda: run(args, payload(), env)


if __name__ == "__main__":
    sys.exit(main())
