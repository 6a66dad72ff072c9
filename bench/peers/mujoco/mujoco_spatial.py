"""Spatial throughput against MuJoCo: a tossed box, columns of 1, 10 and 50 spheres and a stack of boxes, batched.

    nice -n 10 /work/venv/bin/python bench/peers/mujoco/mujoco_spatial.py   # full grid, appends to RESULTS.md
    /work/venv/bin/python bench/peers/mujoco/mujoco_spatial.py --scenes box --batches 1,256 --dtypes float64 --no-append

Scenes (h = 1e-3 s on both sides):

* **box**: jaxcontact's ``box-toss`` model (a 0.2 × 0.15 × 0.1 m box of 1 kg, 8 vertex contacts
  on Coulomb cones, ε = 0.3, μ = 0.4, tossed from 0.4 m, turned and spinning), 1000 steps
  (1 s: it bounces, slides and comes to rest). MuJoCo: the same box, inertia, pose, velocity
  (a free joint: world-frame linear and body-frame angular velocity, as ours) and μ on an
  elliptic cone, on a plane; its box–plane collider gives up to 4 contacts.
* **column-N** (N = 1, 10, 50): N spheres of radius 5 cm and 1 kg stacked on the plane z = 0,
  each ``gap`` above the one below (and the lowest ``gap`` above the plane), dropped:
  they land, the column compresses and rests with sphere i at z = r (2 i + 1). ε = 0, μ = 0.5;
  jaxcontact: an ``Assembly`` of N spatial bodies with one ``SpherePlane`` and N − 1
  ``SphereSphere`` contacts (3 N cone rows), 500 steps. MuJoCo: N free bodies, sphere geoms.
* **stack**: ``tests/data/mjcf/box_stack.xml`` on both sides (jaxcontact imports it: three boxes of 1 kg, each
  smaller than the one under it, a ``BoxPlane`` of 8 vertices under the lowest and a ``BoxBox`` of 25 points,
  vertices and crossing edges, between each pair, 58 contact points for 18 velocities; ε = 0, μ = 0.5), dropped
  from its 1 mm gaps, each gap widened by up to 2 mm over the batch: the boxes land and settle, 500 steps.
  MuJoCo: the same file with an elliptic cone (its box–box collider gives up to 8 contacts a pair).

Every sample of a batch has its own state: the box's speed and the column's or stack's gaps spread over
a range (97 values). MuJoCo's contacts are soft (a spring–damper reference acceleration,
penetration under load) and it has no restitution coefficient: the trajectories differ from
Moreau–Jean's, so this compares throughput, and checks only that both come to rest where
they should (the box on a face with its lowest vertices on the plane; the spheres at
r (2 i + 1); each box of the stack on the one below).

Measured (env-steps/s = batch × ``--window`` / wall time of ``--window`` steps of the whole batch from the
initial state; where the scenes end is checked over their whole horizon, box 1 s, columns and stack 0.5 s: MuJoCo's
largest batch, jaxcontact's first sample by chaining the compiled window):

* jaxcontact: one jitted ``simulate`` of a chunk of the batch (vmap; split over ``--devices`` XLA host devices,
  each running its own share as a study does, by default as many as MuJoCo's ``--threads``; final state only, no
  diagnostics; ``MoreauJean(tol=--tol, iterations=--iterations).for_forward_runs()``, what a study runs:
  Gauss–Seidel sweeps on the cones until Siconos' error ≤ 1e-4, at most 500 per step, the box study's
  setting; ``--solver newton``: the cones' semismooth Newton), with the fraction of samples that had a step
  whose solve did not reach the tolerance ("unconverged"),
  chunks run one after another so memory stays bounded (``--chunk``); float64 and float32;
  compile s = first call − steady state (``common.time_call``), apart;
* MuJoCo: ``mujoco.rollout.rollout`` with ``--threads`` MjData (its thread pool), float64
  (MuJoCo's only precision);
* MJX (``mujoco-mjx``, jax on CPU): ``jax.vmap(mjx.step)`` in a ``lax.scan``, float32, when it
  imports and runs (``--no-mjx`` to skip).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/, for common.py
import common  # noqa: E402

DT = 1e-3
STEPS = {"box": 1000, "column": 500, "stack": 500}
STACK_FILE = Path(__file__).resolve().parents[3] / "tests" / "data" / "mjcf" / "box_stack.xml"
STACK_GAP_RANGE = (0.0, 0.002)  # how much each gap of the stack is widened over a batch (m)
COLUMN = {"radius": 0.05, "mass": 1.0, "restitution": 0.0, "friction": 0.5, "gravity": 9.81, "gap": 0.01}
SPEED_RANGE = (0.5, 1.5)  # the box's horizontal speed over a batch (m/s)
GAP_RANGE = (0.002, 0.01)  # the column's drop gap over a batch (m)
TARGET_RATIO = 1.0  # the target: ≥ 1× MuJoCo's env-steps/s for the box in float64 at B = 4096
# The box-toss model's default study asks Siconos' error ≤ 1e-4 of each step's cone problem, at most 500 sweeps.
STUDY_TOL = 1e-4
STUDY_ITERATIONS = 500
COMPILE_TARGET_S = 30.0


def spread(batch):
    """97 distinct values in [0, 1] repeated over the batch (0 for a batch of one)."""
    import numpy as np

    return (np.arange(batch) % 97) / 96.0 if batch > 1 else np.zeros(1)


def n_spheres(scene):
    return int(scene.split("-")[1])


def kind(scene):
    return scene if scene in ("box", "stack") else "column"


# --------------------------------------------------------------------------- jaxcontact side


def column_assembly(n):
    """N spheres on the plane z = 0: sphere 0 on the plane, sphere i on sphere i − 1."""
    from jaxcontact.spatial import Assembly, SpherePlane, SphereSphere

    asm = Assembly(gravity="gravity")
    balls = [asm.add_body(f"ball{i}", mass="mass", inertia=("0.4*mass*radius**2",) * 3) for i in range(n)]
    asm.add_contact(
        SpherePlane("plane", restitution="restitution", friction="friction", body=balls[0], radius="radius")
    )
    for i in range(n - 1):
        asm.add_contact(
            SphereSphere(
                f"contact{i}",
                restitution="restitution",
                friction="friction",
                a=balls[i],
                b=balls[i + 1],
                radius_a="radius",
                radius_b="radius",
            )
        )
    return asm


def column_state(p, n):
    """(q0, u0): sphere i at z = r (2 i + 1) + (i + 1) gap, identity orientation, at rest."""
    import jax.numpy as jnp

    i = jnp.arange(n, dtype=jnp.result_type(p["radius"]))
    z = p["radius"] * (2 * i + 1) + (i + 1) * p["gap"]
    zero = jnp.zeros_like(z)
    one = jnp.ones_like(z)
    q = jnp.stack([zero, zero, z, one, zero, zero, zero], axis=1).reshape(-1)
    return q, jnp.zeros(6 * n, q.dtype)


def jax_problem(scene, batch, dtype):
    """(system, batched params, q0, u0) of a scene."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    s = spread(batch)
    if scene == "box":
        from jaxcontact.models import get_model

        m = get_model("box-toss")
        over = {"speed": SPEED_RANGE[0] + (SPEED_RANGE[1] - SPEED_RANGE[0]) * s}
        params = {k: jnp.asarray(over.get(k, np.full(batch, float(v))), dtype) for k, v in m.params.items()}
        q0, u0 = jax.vmap(m.initial_state)(params)
        return m.system, params, q0.astype(dtype), u0.astype(dtype)
    if scene == "stack":
        from jaxcontact.models import get_model

        m = get_model(str(STACK_FILE))
        params = {k: jnp.full(batch, float(v), dtype) for k, v in m.params.items()}
        q0, u0 = (np.asarray(x, float) for x in m.initial_state(m.params))
        wider = STACK_GAP_RANGE[0] + (STACK_GAP_RANGE[1] - STACK_GAP_RANGE[0]) * s
        z = 2 + 7 * np.arange(len(q0) // 7)  # each body's height in q (position, then quaternion)
        q = np.repeat(q0[None], batch, axis=0)
        q[:, z] += wider[:, None] * (1 + np.arange(len(z)))  # box i's gap widened: it and those above rise
        return m.system, params, jnp.asarray(q, dtype), jnp.asarray(np.repeat(u0[None], batch, axis=0), dtype)
    n = n_spheres(scene)
    asm = column_assembly(n)
    over = {"gap": GAP_RANGE[0] + (GAP_RANGE[1] - GAP_RANGE[0]) * s}
    params = {k: jnp.asarray(over.get(k, np.full(batch, float(v))), dtype) for k, v in COLUMN.items()}
    asm.validate(jax.tree.map(lambda x: x[0], params))
    q0, u0 = jax.vmap(lambda p: column_state(p, n))(params)
    return asm.system(), params, q0, u0


def jax_rates(
    scene, batches, dtype_name, chunk, window, solver="nsgs", tol=STUDY_TOL, iterations=STUDY_ITERATIONS, devices=1
):
    """Rows of env-steps/s for each batch (chunks of at most ``chunk`` samples, ``window`` steps from the initial
    state), and the rest check: sample 0 over the scene's whole horizon, by chaining the B = 1 program.

    ``devices`` > 1: each chunk is split over that many XLA devices, each running vmap on its own share in the
    scheme's sub-batches (``jaxcontact.studies.runner.compile_batched``, what a study runs); a chunk is then
    rounded up to a multiple of ``devices``. float32 runs with x64 off, so that no constant promotes the scheme's
    state to float64."""
    import jax

    with jax.enable_x64(dtype_name == "float64"):
        return _jax_rates(scene, batches, dtype_name, chunk, window, solver, tol, iterations, devices)


def _jax_rates(scene, batches, dtype_name, chunk, window, solver, tol, iterations, devices):
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxcontact.simulate import simulate
    from jaxcontact.stepping.moreau_jean import MoreauJean

    dtype = jnp.dtype(dtype_name)
    scheme = MoreauJean(diagnostics=False, solver=solver, tol=tol, iterations=iterations).for_forward_runs()
    label = f"jaxcontact {dtype_name}" + ("" if solver == "nsgs" else f" {solver}")
    programs = {}  # one compiled program per chunk shape
    devices = min(devices, len(jax.devices()))  # the devices there are (XLA_FLAGS may have set fewer)

    one_device = {}  # chunk size -> 1 where the split program calls LAPACK and runs on one device instead

    def program(system, size):
        @jax.jit
        def run(p, q, u):
            tr = simulate(system, p, q, u, dt=DT, n_steps=window, scheme=scheme, save_every=window)
            return tr.q[:, -1], tr.u[:, -1], tr.diagnostics.converged[..., -1]

        if size == 1 or devices == 1:
            return run
        from jaxcontact.studies.runner import batch_mesh, batch_sharding, calls_lapack, compile_batched

        sharding = batch_sharding(batch_mesh(jax.devices()[:devices]))

        def one(x):
            tr = simulate(system, *x, dt=DT, n_steps=window, scheme=scheme, save_every=window)
            return tr.q[-1], tr.u[-1], tr.diagnostics.converged[-1]

        compiled = []  # compiled on the first call, which common.time_call counts as compile

        def run_sharded(p, q, u):
            x = jax.device_put((p, q, u), sharding)
            if not compiled:
                split = compile_batched(one, x, sharding, scheme.samples_per_call(system))[0]
                # LAPACK custom calls can hang on several CPU host devices: one device, as a study runs it.
                compiled.append(None if calls_lapack(split) else split)
                if compiled[0] is None:
                    one_device[size] = 1
                    print(f"{scene}: the program calls LAPACK; run on one device", file=sys.stderr, flush=True)
            return run(p, q, u) if compiled[0] is None else compiled[0](x)

        return run_sharded

    rows = []
    for batch in batches:
        size = min(batch, chunk)
        if size > 1 and devices > 1:
            size = -(-size // devices) * devices
        system, params, q0, u0 = jax_problem(scene, batch, dtype)
        fresh = size not in programs
        if fresh:
            programs[size] = program(system, size)
        run = programs[size]
        pieces = [
            (jax.tree.map(lambda x: x[i : i + size], params), q0[i : i + size], u0[i : i + size])
            for i in range(0, batch, size)
        ]
        if len(pieces[-1][1]) < size:  # pad the last chunk to the compiled shape
            k = size - len(pieces[-1][1])
            pieces[-1] = jax.tree.map(lambda x: jnp.concatenate([x, x[:k]]), pieces[-1])

        last = []  # the outputs of the last timed call, for the convergence count (no extra run)

        def whole(pieces=pieces, run=run, last=last):
            last[:] = [run(*piece) for piece in pieces]
            return last

        # first call: trace + compile on a new chunk shape, plus the batch; then the steady state (one call, two
        # when that took under a second)
        timing = common.time_call(whole, min_repeats=1, max_repeats=2, min_total_s=1.0)
        converged = np.concatenate([np.asarray(out[2]) for out in last])[:batch]
        rows.append(
            {
                "scene": scene,
                "method": label,
                "batch": batch,
                "chunk": size,
                "env_steps_per_s": batch * window / timing.steady_s,
                "wall_s": timing.steady_s,
                "compile_s": timing.compile_s if fresh else None,
                "steps": window,
                "unconverged": float(np.mean(~converged)),
                "devices": one_device.get(size, devices) if size > 1 else 1,
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    check = None
    if 1 in programs:
        system, params, q, u = jax_problem(scene, 1, dtype)
        for _ in range(-(-STEPS[kind(scene)] // window)):
            q, u, _ = programs[1](params, q, u)
        check = rest_check(scene, np.asarray(q), np.asarray(u), window * -(-STEPS[kind(scene)] // window))
    return rows, check


def rest_check(scene, q, u, n_steps):
    """Where the batch ended: the box's lowest four vertex heights and face; the spheres' heights against r (2i+1)."""
    import numpy as np

    if scene == "box":
        import jax

        from jaxcontact.models import box_toss

        p = {k: float(v) for k, v in box_toss.DEFAULTS.items()}
        g = np.sort(np.asarray(jax.vmap(lambda qq: box_toss.SYSTEM.gaps(qq, 0.0, p))(q)), axis=1)
        return {
            "max_speed": float(np.abs(u).max()),
            "lowest4_gap_range": [float(g[:, :4].min()), float(g[:, :4].max())],
            "upper4_gap_range": [float(g[:, 4:].min()), float(g[:, 4:].max())],
            "after_s": n_steps * DT,
        }
    if scene == "stack":
        from jaxcontact.models import get_model

        p = get_model(str(STACK_FILE)).params
        half = np.array([float(p[f"box{i + 1}_half_z"]) for i in range(3)])
        rest = np.cumsum(2 * half) - half  # each box on the one below, the lowest on the floor
        z = q.reshape(len(q), 3, 7)[:, :, 2]
        return {
            "max_speed": float(np.abs(u).max()),
            "height_error_range": [float((z - rest).min()), float((z - rest).max())],
            "after_s": n_steps * DT,
        }
    n = n_spheres(scene)
    z = q.reshape(len(q), n, 7)[:, :, 2]
    r = COLUMN["radius"]
    err = z - r * (2 * np.arange(n) + 1)
    return {
        "max_speed": float(np.abs(u).max()),
        "height_error_range": [float(err.min()), float(err.max())],
        "max_horizontal_drift": float(np.abs(q.reshape(len(q), n, 7)[:, :, :2]).max()),
        "after_s": n_steps * DT,
    }


# --------------------------------------------------------------------------- MuJoCo side


def mjcf(scene):
    """The scene as MJCF (timestep DT, elliptic cones, friction μ, no restitution)."""
    if scene == "stack":  # the file jaxcontact imports, on an elliptic cone
        text = STACK_FILE.read_text()
        assert '<option timestep="0.001"/>' in text and DT == 1e-3
        return text.replace('<option timestep="0.001"/>', '<option timestep="0.001" cone="elliptic"/>')
    if scene == "box":
        from jaxcontact.models import box_toss

        p = box_toss.DEFAULTS
        m, a, b, c = p["mass"], p["half_x"], p["half_y"], p["half_z"]
        inertia = f"{m * (b * b + c * c) / 3} {m * (a * a + c * c) / 3} {m * (a * a + b * b) / 3}"
        mu = p["friction"]
        body = (
            f'<body name="box" pos="0 0 {p["height"]}"><freejoint/>'
            f'<inertial pos="0 0 0" mass="{m}" diaginertia="{inertia}"/>'
            f'<geom type="box" size="{a} {b} {c}" mass="0" friction="{mu} 0 0"/></body>'
        )
    else:
        mu, r, m = COLUMN["friction"], COLUMN["radius"], COLUMN["mass"]
        body = "".join(
            f'<body name="ball{i}" pos="0 0 {r * (2 * i + 1) + (i + 1) * COLUMN["gap"]}"><freejoint/>'
            f'<geom type="sphere" size="{r}" mass="{m}" friction="{mu} 0 0"/></body>'
            for i in range(n_spheres(scene))
        )
    g = COLUMN["gravity"]
    return (
        f'<mujoco><option timestep="{DT}" gravity="0 0 -{g}" cone="elliptic"/>'
        f'<worldbody><geom name="floor" type="plane" size="5 5 0.1" friction="{mu} 0 0"/>{body}</worldbody>'
        f"</mujoco>"
    )


def mj_initial_states(m, scene, batch):
    """(batch, state size) full-physics states: the box's speed or the column's gap spread as on our side."""
    import jax
    import mujoco
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    s = spread(batch)
    _, params, q0, u0 = jax_problem(scene, batch, "float64")
    q0, u0 = np.asarray(q0), np.asarray(u0)
    d = mujoco.MjData(m)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    states = np.empty((batch, mujoco.mj_stateSize(m, spec)))
    for i in range(batch):  # our q = (x, quaternion w x y z) per body, u = (v world, ω body): MuJoCo's free joint
        d.qpos[:] = q0[i]
        d.qvel[:] = u0[i]
        d.time = 0.0
        mujoco.mj_forward(m, d)
        mujoco.mj_getState(m, d, states[i], spec)
    del s, params
    return states


def mujoco_rates(scene, batches, threads, window):
    """Rows of MuJoCo rollout env-steps/s per batch (``window`` steps from the initial state), and the rest check
    of the largest batch over the scene's whole horizon."""
    import mujoco
    from mujoco import rollout
    from mujoco_simulate import median_time  # imports mujoco: the jax side of this module needs none

    m = mujoco.MjModel.from_xml_string(mjcf(scene))
    n_steps = STEPS[kind(scene)]
    datas = [mujoco.MjData(m) for _ in range(threads)]
    rows, check = [], None
    for batch in batches:
        init = mj_initial_states(m, scene, batch)
        rollout.rollout(m, datas, init[:1], nstep=2)  # warm-up (thread pool, allocation)
        t = median_time(lambda: rollout.rollout(m, datas, init, nstep=window), repeats=3)
        rows.append(
            {
                "scene": scene,
                "method": f"MuJoCo rollout, {threads} threads",
                "batch": batch,
                "env_steps_per_s": batch * window / t,
                "wall_s": t,
                "compile_s": None,
                "steps": window,
            }
        )
        state, _ = rollout.rollout(m, datas, init, nstep=n_steps)
        nq, nv = m.nq, m.nv
        final = state[:, -1, 1:]  # full-physics state: time, qpos, qvel, …
        check = rest_check(scene, final[:, :nq], final[:, nq : nq + nv], n_steps)
    return rows, check


def mjx_rates(scene, batches, window):
    """Rows of MJX env-steps/s (float32, jax on CPU: x64 off while MJX traces and runs)."""
    import jax
    import mujoco

    m = mujoco.MjModel.from_xml_string(mjcf(scene))
    inits = {b: mj_initial_states(m, scene, b) for b in batches}
    with jax.enable_x64(False):
        return _mjx_rates(scene, m, inits, window)


def _mjx_rates(scene, m, inits, window):
    import jax
    import jax.numpy as jnp
    from mujoco import mjx

    n_steps = window
    mx = mjx.put_model(m)
    rows = []
    for batch, init in inits.items():
        qpos = jnp.asarray(init[:, 1 : 1 + m.nq], jnp.float32)  # noqa: E501
        qvel = jnp.asarray(init[:, 1 + m.nq : 1 + m.nq + m.nv], jnp.float32)

        @jax.jit
        def run(qpos, qvel):
            def one(qp, qv):
                d = mjx.make_data(mx).replace(qpos=qp, qvel=qv)
                d = jax.lax.fori_loop(0, n_steps, lambda _, d: mjx.step(mx, d), d)
                return d.qpos, d.qvel

            return jax.vmap(one)(qpos, qvel)

        timing = common.time_call(run, qpos, qvel, min_repeats=1, max_repeats=3, min_total_s=1.0)
        rows.append(
            {
                "scene": scene,
                "method": "MJX float32 (CPU)",
                "batch": batch,
                "env_steps_per_s": batch * n_steps / timing.steady_s,
                "wall_s": timing.steady_s,
                "compile_s": timing.compile_s,
                "steps": n_steps,
            }
        )
    return rows


# --------------------------------------------------------------------------- report


def report(info, rows, checks, args, errors, command):
    lines = [
        "## Spatial scenes against MuJoCo: box toss, sphere columns, a box stack (`mujoco_spatial.py`)",
        "",
        common.machine_markdown(info, {"mujoco": args.mujoco_version, "command": f"`{command}`"}),
        "",
    ]
    table = []
    for r in rows:
        table.append(
            [
                r["scene"],
                r["method"],
                r["batch"],
                r.get("chunk", "—"),
                r.get("devices", "—"),
                r["steps"],
                r["env_steps_per_s"],
                r["wall_s"],
                r["compile_s"] if r["compile_s"] is not None else "—",
                r["unconverged"] if "unconverged" in r else "—",
            ]
        )
    lines += [
        common.markdown_table(
            ["scene", "method", "B", "chunk", "devices", "steps", "env-steps/s", "wall s", "compile s", "unconverged"],
            table,
        ),
        "",
    ]
    ratio = []
    for scene in args.scenes:
        mj = {
            r["batch"]: r["env_steps_per_s"] for r in rows if r["scene"] == scene and r["method"].startswith("MuJoCo")
        }
        for dt in args.dtypes:
            ours = {
                r["batch"]: r["env_steps_per_s"]
                for r in rows
                if r["scene"] == scene and r["method"].startswith(f"jaxcontact {dt}")
            }
            for b in sorted(set(mj) & set(ours)):
                ratio.append([scene, dt, b, ours[b] / mj[b]])
    lines += [
        f"jaxcontact's env-steps/s over MuJoCo rollout's (box target ≥ {TARGET_RATIO:g} in float64 at B = 4096):",
        "",
        common.markdown_table(["scene", "dtype", "B", "ours / MuJoCo"], ratio),
        "",
        "Where the batch ended (rest check, largest batch):",
        "",
        "```",
        json.dumps(checks, indent=1),
        "```",
        "",
    ]
    if errors:
        lines += ["Not measured: " + "; ".join(errors), ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenes", default="box,column-1,column-10,column-50,stack")
    ap.add_argument("--batches", default="1,16,256,4096", help="MuJoCo rollout batches")
    ap.add_argument("--batches-ours", default="1,16,256", help="jaxcontact batches")
    ap.add_argument("--batches-mjx", default="1,16,256", help="MJX batches")
    ap.add_argument("--dtypes", default="float64,float32")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--devices",
        type=int,
        default=None,
        help="XLA host devices for jaxcontact's batches, each running its own share (default: --threads)",
    )
    ap.add_argument("--chunk", type=int, default=256, help="largest chunk of a batch run in one call (memory)")
    ap.add_argument("--window", type=int, default=50, help="steps per timed call, from the initial state")
    ap.add_argument(
        "--solver",
        choices=("nsgs", "newton"),
        default="nsgs",
        help="jaxcontact's cone solver (newton: for the columns' chains of contacts)",
    )
    ap.add_argument("--tol", type=float, default=STUDY_TOL, help="Siconos error of each step's cone solve")
    ap.add_argument("--iterations", type=int, default=STUDY_ITERATIONS, help="at most this many sweeps a step")
    ap.add_argument("--no-mjx", action="store_true")
    ap.add_argument("--no-append", action="store_true")
    args = ap.parse_args()
    args.scenes = args.scenes.split(",")
    args.dtypes = args.dtypes.split(",")
    batches = [int(b) for b in args.batches.split(",")]
    batches_ours = [int(b) for b in args.batches_ours.split(",")]
    batches_mjx = [int(b) for b in args.batches_mjx.split(",")]

    args.devices = args.threads if args.devices is None else args.devices
    from jaxcontact.commands.devices import host_devices

    host_devices(args.devices)  # the host device count in XLA_FLAGS, as `jaxcontact mc --devices` sets it

    import jax
    import mujoco

    jax.config.update("jax_enable_x64", True)
    args.mujoco_version = mujoco.__version__
    info = common.machine_info()
    rows, checks, errors = [], {}, []
    for scene in args.scenes:
        mj_rows, checks[f"{scene} MuJoCo"] = mujoco_rates(scene, batches, args.threads, args.window)
        rows += mj_rows
        print(json.dumps(mj_rows), file=sys.stderr, flush=True)
        for dt in args.dtypes:
            ours, checks[f"{scene} jaxcontact {dt}"] = jax_rates(
                scene, batches_ours, dt, args.chunk, args.window, args.solver, args.tol, args.iterations, args.devices
            )
            rows += ours
        if not args.no_mjx:
            try:
                mjx_rows = mjx_rates(scene, batches_mjx, args.window)
                rows += mjx_rows
                print(json.dumps(mjx_rows), file=sys.stderr, flush=True)
            except Exception as e:  # noqa: BLE001 — MJX is optional; say why it is missing
                errors.append(f"MJX on {scene}: {type(e).__name__}: {str(e)[:200]}")
    command = "python bench/peers/mujoco/mujoco_spatial.py " + " ".join(sys.argv[1:])
    text = report(info, rows, checks, args, errors, command)
    print(text)
    common.write_json(
        {"machine": info, "rows": rows, "checks": checks, "errors": errors},
        common.OUT_DIR / "mujoco_spatial_results.json",
    )
    if not args.no_append:
        common.append_results(text)


if __name__ == "__main__":
    main()
