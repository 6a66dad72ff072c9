"""Compile time of the programs users wait for: JAX's trace, lowering and XLA's compile, apart from the run.

    python bench/perf/compile_time.py                      # this checkout
    python bench/perf/compile_time.py --tree /tmp/old      # and another checkout of jaxcontact, side by side

Each case runs in a fresh process (nothing cached in memory, JAX's persistent cache off), once per tree
(``--tree`` adds checkouts whose ``jaxcontact`` is imported instead of this one's, e.g. a ``git worktree`` of
an earlier commit). Per case: the seconds JAX reports for tracing (``jaxpr_trace_duration``), lowering to
MLIR and XLA's backend compile (``jax.monitoring`` events), the first call's wall time and a second call's
(the run alone), and a digest of the result so trees that should agree can be seen to.

Cases:

* ``box-toss-study``: 64 samples of the ``box-toss`` model, 1 000 steps, the scheme a study runs
  (``MoreauJean().for_forward_runs()``, diagnostics off);
* ``box-toss-located``: the same with impacts located inside the step, as measured tosses are fitted and
  predicted (:func:`jaxcontact.prediction.measured_scheme`);
* ``cube-fit-gradient``: the gradient program of :func:`jaxcontact.studies.experiments_fit.fit_experiments`
  (4 measured tosses of ``../shared/data/contactnets``, 20 samples each: reverse mode through 190 located
  steps); skipped where the data is absent;
* ``mjcf-shapes``: ``simulate`` of ``tests/data/mjcf/shapes.xml`` (five bodies, boxes, capsules, a sphere,
  a drum on a hinge), 0.3 s.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "contactnets" / "cube_tosses.npz"
CASES = ("box-toss-study", "box-toss-located", "cube-fit-gradient", "mjcf-shapes")


def _case(name: str):
    """(call, args) of one case: ``call(*args)`` runs the program once."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxcontact.models import get_model
    from jaxcontact.simulate import simulate

    if name.startswith("box-toss"):
        from jaxcontact.prediction import measured_scheme
        from jaxcontact.stepping import MoreauJean

        m = get_model("box-toss")
        scheme = MoreauJean(diagnostics=False).for_forward_runs()
        if name == "box-toss-located":
            scheme = measured_scheme(m).without_diagnostics()
        B = 64
        p = jax.tree.map(lambda x: jnp.broadcast_to(jnp.asarray(x, float), (B,) + jnp.shape(x)), m.params)
        p["friction"] = jnp.linspace(0.1, 0.6, B)
        q0, u0 = (jnp.broadcast_to(jnp.asarray(x), (B,) + jnp.shape(x)) for x in m.initial_state(m.params))
        return (lambda: simulate(m.system, p, q0, u0, dt=m.dt, n_steps=1000, save_every=1000, scheme=scheme)), ()
    if name == "cube-fit-gradient":
        from jaxcontact.experiments import read_experiments
        from jaxcontact.prediction import measured_scheme
        from jaxcontact.studies import experiments_fit as ef

        tosses = read_experiments(str(DATA)).select(np.arange(4))
        cube = get_model("box-toss", half_x=0.0524, half_y=0.0524, half_z=0.0524, mass=0.37)
        seg = ef.segments(cube, tosses, 20)
        names = ("friction", "restitution", "table_offset")
        scheme = measured_scheme(cube).without_diagnostics()
        program = ef._batched_program(cube.system, scheme, names, 10, seg.sample_dt, seg.mask.shape[1], 0.01)
        base = {k: jnp.asarray(v, float) for k, v in cube.params.items()}
        theta = jnp.tile(jnp.array([0.18, 0.125, 0.0]), (4, 1))
        arrays = (seg.q0, seg.u0, seg.position, seg.quaternion, seg.mask)
        return program, (theta, base, 0.0524, *map(jnp.asarray, arrays))
    if name == "mjcf-shapes":
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the file's parts the import leaves out, named in a warning
            m = get_model(str(ROOT / "tests" / "data" / "mjcf" / "shapes.xml"))
        q0, u0 = m.initial_state(m.params)
        return (lambda: simulate(m.system, m.params, q0, u0, dt=m.dt, n_steps=int(round(0.3 / m.dt)))), ()
    raise ValueError(f"unknown case {name!r}; cases: {', '.join(CASES)}")


def run_case(name: str) -> dict:
    """One case in this process: JAX's compile events and the two calls' wall times."""
    import jax
    import jax.monitoring
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    events: dict = {}

    def listen(event, seconds, **_):
        key = event.rsplit("/", 1)[-1].removesuffix("_duration")
        events[key] = events.get(key, 0.0) + seconds

    jax.monitoring.register_event_duration_secs_listener(listen)
    call, args = _case(name)
    t = time.perf_counter()
    first = jax.block_until_ready(call(*args))
    first_s = time.perf_counter() - t
    seen = dict(events)
    t = time.perf_counter()
    jax.block_until_ready(call(*args))
    leaves = [np.asarray(x, float) for x in jax.tree.leaves(first) if np.issubdtype(np.asarray(x).dtype, np.number)]
    return {
        "case": name,
        "trace_s": round(seen.get("jaxpr_trace", 0.0), 2),
        "lower_s": round(seen.get("jaxpr_to_mlir_module", 0.0), 2),
        "compile_s": round(seen.get("backend_compile", 0.0), 2),
        "first_call_s": round(first_s, 2),
        "run_s": round(time.perf_counter() - t, 3),
        "digest": float(sum(np.nansum(np.abs(x)) for x in leaves)),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--tree", action="append", default=[], help="another checkout to time beside this one")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # the worker: one case, one JSON line
    a = ap.parse_args()
    if a.one:
        print(json.dumps(run_case(a.one)), flush=True)
        return
    rows = []
    for tree in [str(ROOT), *a.tree]:
        env = dict(os.environ, PYTHONPATH=tree, JAX_ENABLE_COMPILATION_CACHE="false")
        for name in a.cases.split(","):
            if name == "cube-fit-gradient" and not DATA.exists():
                print(f"{name}: skipped, {DATA} is absent", flush=True)
                continue
            out = subprocess.run(
                [sys.executable, __file__, "--one", name], env=env, capture_output=True, text=True, check=False
            )
            if out.returncode:
                print(f"{name} in {tree}: failed\n{out.stderr[-2000:]}", flush=True)
                continue
            row = json.loads(out.stdout.strip().splitlines()[-1]) | {"tree": tree}
            rows.append(row)
            print(
                f"{name:18s} {tree:28s} trace {row['trace_s']:6.1f} s  lower {row['lower_s']:5.1f} s  "
                f"compile {row['compile_s']:6.1f} s  first call {row['first_call_s']:6.1f} s  "
                f"run {row['run_s']:7.3f} s  digest {row['digest']:.12g}",
                flush=True,
            )
    print(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M"), "load": os.getloadavg()[0], "rows": rows}))


if __name__ == "__main__":
    main()
