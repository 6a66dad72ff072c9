"""``bench/perf/gpu.py`` runs end to end on CPU at tiny sizes (a smoke test: its numbers are not checked).

It runs as a GPU host would run it: in a subprocess, with mujoco unimportable (the GPU host installs
jaxcontact alone, and the box and column scenes reuse ``bench/peers/mujoco/mujoco_spatial.py``, whose module
imports mujoco for its MuJoCo side).

A test *of* a bench script, so it runs the script by its path; no test reads its data from ``bench/``
(stored references live in ``tests/data/``). It is here so that a GPU host's run cannot fail at its start
after the minutes it takes to get one: a slow test, run it (``pytest -m slow tests/test_bench_gpu.py``) before
taking a GPU.
"""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "bench", "perf", "gpu.py")
WITHOUT_MUJOCO = (
    "import runpy, sys; sys.modules['mujoco'] = None; sys.argv = sys.argv[1:]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_gpu_bench_smoke_run_writes_a_row_per_cell(tmp_path):
    out = tmp_path / "g.json"
    args = [
        "--batches",
        "2",
        "--dtypes",
        "float64",
        "--scenes",
        "four-bar,box",
        "--steps",
        "5",
        "--no-append",
        "--out",
        str(out),
    ]
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_MUJOCO, SCRIPT, *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(out.read_text())
    assert res["device"] and res["skipped"] == []
    assert [(r["scene"], r["dtype"], r["batch"], r["steps"]) for r in res["rows"]] == [
        ("four-bar", "float64", 2, 5),
        ("box", "float64", 2, 5),
    ]
    for r in res["rows"]:
        assert "error" not in r, r
        assert r["env_steps_per_s"] > 0 and r["compile_s"] >= 0 and 0 <= r["unconverged_fraction"] <= 1, r
    assert "| four-bar | float64 | 2 | 5 |" in proc.stdout
