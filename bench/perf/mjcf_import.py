"""MJCF models against the same models built by hand: time per step, and the same motion.

    python bench/perf/mjcf_import.py                 # B = 256 and 1024, float64; appends to bench/RESULTS.md
    python bench/perf/mjcf_import.py --batches 1 --steps 50 --no-append

Scenes (``--scenes``):

* **box**: the box of the built-in ``box-toss`` model written as an MJCF file (the same half extents, mass,
  friction; restitution set to the model's) against the hand-built ``box-toss``, from the model's start with
  its speed spread over [0.5, 1.5] m/s across the batch;
* **stack**: ``tests/data/mjcf/box_stack.xml`` against the pyramid of three boxes built by hand in
  ``tests/spatial/test_box_box.py`` (floor–box and box–box contacts, 40 points), dropped from its 1 mm gaps.

One jitted ``simulate`` of each over the batch, ``MoreauJean(diagnostics=False, tol=1e-4,
iterations=500).for_forward_runs()`` (the box study's solve), dt 1e-3 s. env-steps/s = B × steps / steady wall
time (``common.time_call``), compile apart; "largest Δq" is the largest difference of the two final states
(the same system: it should be rounding).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common.py
import common  # noqa: E402

BOX = """<mujoco model="box_toss">
  <option timestep="0.001"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1" friction="{friction}"/>
    <body name="box" pos="0 0 0.4">
      <freejoint/>
      <geom name="box" type="box" size="{half_x} {half_y} {half_z}" mass="{mass}" friction="{friction}"/>
    </body>
  </worldbody>
</mujoco>
"""


def scenes(name, batch):
    """(label, system, batched params, q0, u0) of the hand-built model and of the imported one."""
    import jax.numpy as jnp
    import numpy as np

    from jaxcontact.models import get_model

    def batched(model_params):
        return {k: jnp.broadcast_to(jnp.asarray(v), (batch,)) for k, v in model_params.items()}

    if name == "box":
        built = get_model("box-toss")
        p = {k: float(v) for k, v in built.params.items()}
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "box_toss.xml")
            Path(path).write_text(BOX.format(**p))
            imported = get_model(path, restitution=p["restitution"])
        speeds = np.linspace(0.5, 1.5, batch) if batch > 1 else np.array([p["speed"]])
        starts = [built.initial_state({**built.params, "speed": jnp.asarray(s)}) for s in speeds]
        q0, u0 = jnp.stack([s[0] for s in starts]), jnp.stack([s[1] for s in starts])
        return [
            ("hand-built box-toss", built.system, batched(built.params), q0, u0),
            ("imported MJCF", imported.system, batched(imported.params), q0, u0),
        ]
    sys.path.insert(0, str(common.BENCH_DIR.parent))  # the repository, for the hand-built pyramid of the tests
    from tests.spatial.test_box_box import PYRAMID, SIZES

    imported = get_model(str(common.BENCH_DIR.parent / "tests" / "data" / "mjcf" / "box_stack.xml"))
    q0, u0 = imported.initial_state(imported.params)
    q0, u0 = jnp.broadcast_to(q0, (batch, q0.size)), jnp.broadcast_to(u0, (batch, u0.size))
    return [
        ("hand-built box stack", PYRAMID.system(), batched(SIZES), q0, u0),
        ("imported MJCF stack", imported.system, batched(imported.params), q0, u0),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", default="box,stack")
    ap.add_argument("--batches", default="256,1024")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args(argv)

    import jax

    jax.config.update("jax_enable_x64", True)
    import numpy as np

    from jaxcontact.simulate import simulate
    from jaxcontact.stepping.moreau_jean import MoreauJean

    scheme = MoreauJean(diagnostics=False, tol=1e-4, iterations=500).for_forward_runs()
    rows = []
    for name in args.scenes.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            finals = []
            for label, system, params, q0, u0 in scenes(name, batch):

                @jax.jit
                def run(params, q0, u0, system=system):
                    tr = simulate(
                        system, params, q0, u0, dt=1e-3, n_steps=args.steps, scheme=scheme, save_every=args.steps
                    )
                    return tr.q[:, -1]

                timing = common.time_call(run, params, q0, u0, min_repeats=1, max_repeats=3, min_total_s=1.0)
                finals.append(np.asarray(run(params, q0, u0)))
                rows.append(
                    [
                        label,
                        batch,
                        args.steps,
                        batch * args.steps / timing.steady_s,
                        timing.steady_s,
                        timing.compile_s,
                        "",
                    ]
                )
                print(rows[-1], flush=True)
            ratio = rows[-1][4] / rows[-2][4]
            rows[-1][-1] = f"{np.max(np.abs(finals[1] - finals[0])):.2g}; time per step {ratio:.2f}× the hand-built"
    info = common.machine_info()
    text = "\n".join(
        [
            "## MJCF models against the same models built by hand (`bench/perf/mjcf_import.py`)",
            "",
            common.machine_markdown(
                info, {"command": "`python bench/perf/mjcf_import.py " + " ".join(argv or sys.argv[1:]) + "`"}
            ),
            "",
            common.markdown_table(
                ["model", "B", "steps", "env-steps/s", "wall s", "compile s", "largest Δq of the final states"], rows
            ),
            "",
        ]
    )
    print(text)
    if not args.no_append:
        common.append_results(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
