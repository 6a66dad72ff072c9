"""The user's view of the box: `jaxcontact mc box-toss` at two study sizes against MuJoCo's rollout, in one run.

    nice -n 10 /work/venv/bin/python bench/peers/mujoco/mc_box_toss.py                # --n 64 and 4096
    /work/venv/bin/python bench/peers/mujoco/mc_box_toss.py --sizes 64,1024 --no-append

What is measured:

* jaxcontact: the command line exactly as a user runs it, ``jaxcontact mc box-toss --n N`` (the model's default
  study: friction, restitution and tilt uncertain, 2 000 steps of 1 ms, NSGS until Siconos' error ≤ 1e-4, at
  most 500 sweeps; one XLA device per core), in a subprocess with a fresh compile cache; env-steps/s are the
  study's own (``summary.json``: computed samples × steps / run seconds, compile apart), and the samples whose
  contact solve did not converge at some step are counted from its ``failures``.
* MuJoCo: ``mujoco.rollout`` with ``--threads`` MjData of the same box (``mujoco_spatial.mjcf("box")``: size,
  mass, inertia, μ, elliptic cone) for the same 2 000 steps, on a batch of the largest study size whose starts
  spread the toss speed (``mujoco_spatial.mj_initial_states``). MuJoCo has no restitution coefficient and its
  contacts are soft: this compares throughput, not trajectories.

Appends a section to ``bench/RESULTS.md`` (``--no-append`` to skip) and writes JSON to
``bench/out/mc_box_toss.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # bench/, for common.py
sys.path.insert(0, str(HERE))
import common  # noqa: E402

STEPS = 2000


def study_rate(n: int, extra: list[str]) -> dict:
    """Run ``jaxcontact mc box-toss --n n`` in a subprocess; its timing and failure counts from summary.json."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "study")
        env = dict(os.environ, JAXCONTACT_CACHE_DIR=os.path.join(tmp, "cache"))
        cmd = ["jaxcontact", "mc", "box-toss", "--n", str(n), "--out", out, "--no-plots", *extra]
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
    tm, fail = summary["timing"], summary["failures"]
    return {
        "method": "jaxcontact mc box-toss",
        "n": n,
        "samples": fail["n_samples"],
        "env_steps_per_s": tm["env_steps_per_second"],
        "run_s": tm["run_seconds"],
        "compile_s": tm["compile_seconds"],
        "devices": tm["n_devices"],
        "chunk": tm["chunk_size"],
        "unconverged": fail.get("not_converged", 0),
        "command": " ".join(cmd[:5] + ["--no-plots", *extra]),
    }


def mujoco_rate(batch: int, threads: int) -> dict:
    import mujoco
    import mujoco_spatial
    from mujoco import rollout
    from mujoco_simulate import median_time

    m = mujoco.MjModel.from_xml_string(mujoco_spatial.mjcf("box"))
    datas = [mujoco.MjData(m) for _ in range(threads)]
    init = mujoco_spatial.mj_initial_states(m, "box", batch)
    rollout.rollout(m, datas, init[:1], nstep=2)  # warm-up
    t = median_time(lambda: rollout.rollout(m, datas, init, nstep=STEPS), repeats=3)
    return {
        "method": f"MuJoCo rollout, {threads} threads",
        "n": batch,
        "samples": batch,
        "env_steps_per_s": batch * STEPS / t,
        "run_s": t,
        "compile_s": None,
        "devices": None,
        "chunk": None,
        "unconverged": None,
        "command": "mujoco.rollout.rollout",
    }


def report(info, rows, args, command):
    table = [
        [
            r["method"],
            r["n"],
            r["env_steps_per_s"],
            r["run_s"],
            r["compile_s"] if r["compile_s"] is not None else "—",
            r["devices"] if r["devices"] is not None else "—",
            f"{r['unconverged']} of {r['samples']}" if r["unconverged"] is not None else "—",
        ]
        for r in rows
    ]
    ours = {r["n"]: r["env_steps_per_s"] for r in rows if r["method"].startswith("jaxcontact")}
    mj = next(r["env_steps_per_s"] for r in rows if r["method"].startswith("MuJoCo"))
    big, small = max(ours), min(ours)
    lines = [
        "## `jaxcontact mc box-toss` against MuJoCo's rollout (`bench/peers/mujoco/mc_box_toss.py`) — "
        + info["date_utc"],
        "",
        common.machine_markdown(info, {"mujoco": args.mujoco_version, "command": f"`{command}`"}),
        "",
        common.markdown_table(
            ["method", "samples", "env-steps/s", "run s", "compile s", "devices", "unconverged samples"], table
        ),
        "",
        f"- ours at n = {big} over MuJoCo's rollout: {ours[big] / mj:.2f}× (target ≥ 1)",
        f"- ours at n = {big} over ours at n = {small}: {ours[big] / ours[small]:.2f}× (target ≥ 2)",
        "",
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="64,4096", help="study sizes --n")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--extra", default="", help="more options for jaxcontact mc, e.g. '--devices 1'")
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    extra = args.extra.split()
    import mujoco

    args.mujoco_version = mujoco.__version__
    info = common.machine_info()
    rows = [study_rate(n, extra) for n in sizes]
    rows.append(mujoco_rate(max(sizes), args.threads))
    for r in rows:
        print(json.dumps(r))
    command = "python bench/peers/mujoco/mc_box_toss.py " + " ".join(sys.argv[1:])
    text = report(info, rows, args, command.strip())
    print(text)
    common.OUT_DIR.mkdir(exist_ok=True)
    (common.OUT_DIR / "mc_box_toss.json").write_text(json.dumps({"machine": info, "rows": rows}, indent=1))
    if not args.no_append:
        common.append_results(text)


if __name__ == "__main__":
    main()
