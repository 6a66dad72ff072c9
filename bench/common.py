"""Shared benchmark plumbing: machine description, timing of jitted calls,
Markdown tables, appending to ``bench/RESULTS.md``, and JSON subprocesses.

Every benchmark under ``bench/`` (LCP throughput, simulation, Monte Carlo)
uses these so that their numbers are measured and reported the same way:

* a jitted call is timed as *first call* (trace + compile + one run) and
  *steady state* (the median of several further calls, each ending in
  ``jax.block_until_ready``); compile time is reported apart as their
  difference, never mixed into a throughput;
* each results section in ``RESULTS.md`` starts with the machine (CPU model,
  cores, library versions) and the UTC date, so numbers from different
  machines or days are never compared by accident.

Nothing here imports jax at module import time, so a benchmark can set
``XLA_FLAGS`` (e.g. host device count) before jax is loaded.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_MD = BENCH_DIR / "RESULTS.md"
# Scratch output (generated problems, raw JSON); "out/" is git-ignored.
OUT_DIR = BENCH_DIR / "out"


# --------------------------------------------------------------------------- machine


def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo (falls back to platform.processor())."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def utc_date() -> str:
    """The date as ``date -u`` prints it (the UTC wall clock of the run)."""
    try:
        return subprocess.run(["date", "-u"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime())


def git_revision(paths=("jaxcontact",)) -> str:
    """Commit of the working tree, with a note when ``paths`` have uncommitted changes."""
    root = BENCH_DIR.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", *paths], cwd=root, capture_output=True, text=True, check=True
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    changed = [line[3:] for line in dirty if line.strip()]
    return head + (f" + uncommitted: {', '.join(changed)}" if changed else "")


def machine_info() -> dict:
    """CPU, cores, OS, Python and (if importable) jax/jaxlib/numpy versions and devices."""
    info = {
        "cpu": cpu_model(),
        "logical_cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "date_utc": utc_date(),
    }
    try:
        import numpy

        info["numpy"] = numpy.__version__
    except ImportError:
        pass
    try:
        import jax
        import jaxlib

        info["jax"] = jax.__version__
        info["jaxlib"] = jaxlib.__version__
        devs = jax.devices()
        info["jax_devices"] = f"{len(devs)} × {devs[0].platform}"
    except ImportError:
        pass
    info["xla_flags"] = os.environ.get("XLA_FLAGS", "")
    info["blas_threads"] = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    info["git"] = git_revision()
    if hasattr(os, "getloadavg"):
        # Other users of a shared machine slow a benchmark down; record it.
        info["load_average"] = tuple(round(x, 2) for x in os.getloadavg())
    return info


def machine_markdown(info: dict, extra: dict | None = None) -> str:
    """A Markdown bullet list describing the machine (plus any extra key/values)."""
    lines = [
        f"- Date: {info['date_utc']}",
        f"- CPU: {info['cpu']}, {info['logical_cores']} logical cores ({info['usable_cores']} usable)",
        f"- OS: {info['os']}; Python {info['python']}",
    ]
    if "jax" in info:
        lines.append(
            f"- jax {info['jax']}, jaxlib {info['jaxlib']}, numpy {info['numpy']}; "
            f"devices: {info['jax_devices']}" + (f"; XLA_FLAGS=`{info['xla_flags']}`" if info.get("xla_flags") else "")
        )
    lines.append(f"- OPENBLAS_NUM_THREADS={info.get('blas_threads', 'unset')}; code: git {info.get('git', '?')}")
    if "load_average" in info:
        lines.append(f"- Load average at start (1, 5, 15 min): {', '.join(map(str, info['load_average']))}")
    for k, v in (extra or {}).items():
        lines.append(f"- {k}: {v}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- timing


@dataclass(frozen=True)
class Timing:
    """Wall-clock timing of one jitted call on fixed arguments.

    first_s: the first call (trace + compile + one run), in seconds.
    steady_s: median of ``repeats`` further calls, in seconds.
    compile_s: ``first_s - steady_s`` — the one-off cost a user pays per shape.
    """

    first_s: float
    steady_s: float
    repeats: int
    samples: tuple[float, ...]

    @property
    def compile_s(self) -> float:
        return max(0.0, self.first_s - self.steady_s)


def time_call(fn, *args, min_repeats: int = 5, max_repeats: int = 50, min_total_s: float = 0.3) -> Timing:
    """Time ``fn(*args)`` (a fresh ``jax.jit``-ed function): first call, then steady state.

    Steady state is the median over at least ``min_repeats`` calls, and more
    (up to ``max_repeats``) until ``min_total_s`` has been spent, so that
    microsecond calls are not dominated by timer noise. Every call ends in
    ``jax.block_until_ready`` so asynchronous dispatch is not mistaken for speed.
    """
    import jax

    t0 = time.perf_counter()
    jax.block_until_ready(fn(*args))
    first = time.perf_counter() - t0
    samples = []
    spent = 0.0
    while len(samples) < min_repeats or (spent < min_total_s and len(samples) < max_repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        dt = time.perf_counter() - t0
        samples.append(dt)
        spent += dt
    return Timing(first, statistics.median(samples), len(samples), tuple(samples))


# --------------------------------------------------------------------------- reporting


def fmt_num(x, digits: int = 3) -> str:
    """Compact number for tables: 3 significant digits, scientific when large/small."""
    if x is None:
        return "—"
    if isinstance(x, str):
        return x
    x = float(x)
    if x != x:
        return "nan"
    if x == 0:
        return "0"
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"


def markdown_table(headers: list[str], rows: list[list]) -> str:
    """A GitHub-flavoured Markdown table; numbers are formatted with :func:`fmt_num`."""
    cells = [[c if isinstance(c, str) else fmt_num(c) for c in row] for row in rows]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(out)


def append_results(section: str, path: Path = RESULTS_MD) -> Path:
    """Append a Markdown section to the results file (created with a title if missing)."""
    path = Path(path)
    if not path.exists():
        path.write_text(
            "# jaxcontact benchmark results\n\n"
            "Each section is appended by a script under `bench/` "
            "(see `bench/README.md`); newest last.\n"
        )
    with path.open("a") as f:
        f.write("\n" + section.rstrip() + "\n")
    return path


def write_json(obj, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=1, default=float))
    return path


# --------------------------------------------------------------------------- subprocesses


def run_json_subprocess(cmd: list[str], *, timeout: float, nice: int | None = None) -> dict:
    """Run ``cmd`` (a script printing one JSON document on stdout) and parse its output.

    Stderr is passed through so progress and warnings stay visible. A clear
    error names the command when it fails or prints something that is not JSON.
    """
    if nice:
        cmd = ["nice", "-n", str(nice), *cmd]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=sys.stderr, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with status {proc.returncode}")
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise RuntimeError(f"{' '.join(cmd)} did not print JSON: {proc.stdout[:500]!r}") from e
