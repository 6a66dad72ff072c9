"""Simulation throughput: env-steps/s of batched Moreau–Jean runs vs Siconos and MuJoCo.

    nice -n 10 /work/venv/bin/python bench/perf/simulate.py               # default grid (~10 min on 2 cores)
    /work/venv/bin/python bench/perf/simulate.py --models four-bar --batches-four-bar 1,4096 \
        --dtypes float64 --no-append

What is measured (the throughput targets):

* **env-steps/s** = batch × steps / steady-state wall time of one jitted
  ``simulate`` call (``diagnostics=False``, ``save_every = n_steps`` so only the
  final state is kept — a throughput run, not a trajectory dump). Each call ends
  in ``block_until_ready``; steady state is the median of repeated calls
  (``bench/common.time_call``); **compile s** is the first call minus the
  steady state, reported apart.
* Models: the bouncing ball (1 coordinate, 1 contact, PGS = one exact sweep)
  and the four-bar hitting a wall (9 absolute coordinates, 8 revolute constraint rows
  by Schur complement, 1 frictionless wall contact: ``four_bar.mechanism(False)``).
  Every sample of a batch has its own parameters (restitution, drop height or
  torque spread over a range), so the batch is a real parameter study.
* dtypes float64 and float32; one XLA host device, and the batch sharded over
  2 host devices (``--xla_force_host_platform_device_count=2``, a subprocess,
  since the flag must be set before jax is imported): one XLA CPU device did
  not keep both cores busy.
* **Physics while fast**: the same compiled scheme on a batch of varied
  parameters, checked against the analytic ball (impact series, accumulation
  time t∞ = t₁ + 2 ε v₀ / (g (1 − ε)), energy never increasing) and for the
  four-bar (converged fraction, penetration per step, rest against the wall,
  ‖Φ‖ drift); batched final states against single runs.
* **Profile** of the four-bar step: the step timed with pieces removed
  (kinematics by jacfwd; + Schur complement; full step) and the compiled
  program's op counts.
* Peers: ``siconos_simulate.py`` (Debian's python3-siconos under
  ``/usr/bin/python3``; one simulation after another) and
  ``mujoco_simulate.py`` (``mj_step`` serial and ``mujoco.rollout`` on 2
  threads). MuJoCo's contact is soft and has no restitution coefficient: its
  numbers compare throughput only.

The run appends a section to ``bench/RESULTS.md`` (machine, load average,
tables, targets met or missed by how much) and writes raw JSON to
``bench/out/simulate_results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common.py
import common  # noqa: E402

TARGETS = {  # the throughput targets, 2-core CPU
    ("four-bar", "float64", 4096): 2.5e6,
    ("ball", "float64", 65536): 2e7,
}
COMPILE_TARGET_S = 20.0
MODELS = ("ball", "four-bar")
DEFAULT_BATCHES = {"ball": (1, 16, 256, 4096, 16384, 65536), "four-bar": (1, 16, 256, 4096, 16384)}
# Simulated time per timed call: 1 s of the ball at h = 1e-3 and of the four-bar at h = 1e-2.
DEFAULT_STEPS = {"ball": 1000, "four-bar": 100}
DT = {"ball": 1e-3, "four-bar": 1e-2}


# --------------------------------------------------------------------------- problems (worker side)


def problem(name, batch, dtype):
    """(system, params, q0, u0) with ``batch`` samples whose parameters are spread over a range."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxcontact.models import get_model

    s = (np.arange(batch) % 97) / 96.0 if batch > 1 else np.zeros(1)  # 97 distinct values in [0, 1]
    if name == "ball":
        m = get_model("bouncing-ball")
        system = m.system
        over = {"restitution": 0.5 + 0.4 * s, "height": 0.5 + 1.0 * s[::-1]}
    else:
        from jaxcontact.models import four_bar

        m = get_model("four-bar")
        system, _ = four_bar.mechanism(friction=False).build(four_bar.DEFAULTS)
        over = {"restitution": 0.5 + 0.4 * s, "torque": 8.0 + 4.0 * s[::-1]}
    params = {k: jnp.asarray(over[k] if k in over else np.full(batch, float(v)), dtype) for k, v in m.params.items()}
    q0, u0 = jax.vmap(m.initial_state)(params)
    return system, params, q0.astype(dtype), u0.astype(dtype)


def scheme():
    from jaxcontact.stepping.moreau_jean import MoreauJean

    # Planar bodies in absolute coordinates: M is diagonal.
    return MoreauJean(diagnostics=False, diagonal_mass=True)


def run_fn(system, n_steps, dt, sch):
    """A fresh jitted throughput run: final state only (save_every = n_steps)."""
    import jax

    from jaxcontact.simulate import simulate

    def run(p, q0, u0):
        tr = simulate(system, p, q0, u0, dt=dt, n_steps=n_steps, scheme=sch, save_every=n_steps)
        return tr.q[:, -1], tr.u[:, -1], tr.diagnostics.converged[:, -1]

    return jax.jit(run)


# --------------------------------------------------------------------------- worker: throughput grid


def worker_grid(args) -> dict:
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    jax.config.update("jax_enable_x64", True)
    sharding = None
    if args.devices > 1:
        sharding = NamedSharding(Mesh(np.array(jax.devices()[: args.devices]), ("batch",)), PartitionSpec("batch"))
    rows, skipped = [], []
    sch = scheme()
    for name in args.models:
        n_steps = args.steps.get(name, DEFAULT_STEPS[name])
        for d in args.dtypes:
            per_env_step = None
            for b in args.batches.get(name, DEFAULT_BATCHES[name]):
                if per_env_step is not None and per_env_step * b * n_steps > args.max_call_s:
                    reason = f"predicted {per_env_step * b * n_steps:.1f} s per call > --max-call-s {args.max_call_s:g}"
                    skipped.append({"model": name, "dtype": d, "batch": b, "devices": args.devices, "reason": reason})
                    print(f"skip {name} {d} batch {b}: {reason}", file=sys.stderr)
                    continue
                system, p, q0, u0 = problem(name, b, d)
                if sharding is not None and b % args.devices == 0:
                    p, q0, u0 = jax.device_put((p, q0, u0), sharding)
                fn = run_fn(system, n_steps, DT[name], sch)
                t = common.time_call(fn, p, q0, u0, min_repeats=3, max_repeats=20, min_total_s=1.0)
                q, u, conv = fn(p, q0, u0)
                conv = np.asarray(conv)
                finite = np.isfinite(np.asarray(q)).all(axis=1) & np.isfinite(np.asarray(u)).all(axis=1)
                r = {
                    "model": name,
                    "dtype": d,
                    "batch": b,
                    "devices": args.devices,
                    "n_steps": n_steps,
                    "first_s": t.first_s,
                    "steady_s": t.steady_s,
                    "compile_s": t.compile_s,
                    "repeats": t.repeats,
                    "env_steps_per_s": b * n_steps / t.steady_s,
                    "converged_fraction": float(conv.mean()),
                    "finite_fraction": float(finite.mean()),
                    "load": os.getloadavg()[0],
                }
                rows.append(r)
                per_env_step = t.steady_s / (b * n_steps)
                print(
                    f"{name:8s} {d} dev={args.devices} batch={b:6d}: {r['env_steps_per_s']:.3g} env-steps/s, "
                    f"compile {t.compile_s:.1f} s, converged {r['converged_fraction']:.4f}, "
                    f"load {r['load']:.1f}",
                    file=sys.stderr,
                )
    return {"rows": rows, "skipped": skipped}


# --------------------------------------------------------------------------- worker: physics checks


def ball_analytic(H, e, g):
    """First impact time t₁ and accumulation time t∞ of a point ball dropped from rest at H."""
    import numpy as np

    t1 = np.sqrt(2 * H / g)
    v0 = g * t1
    return t1, t1 + 2 * e * v0 / (g * (1 - e))


def worker_physics(args) -> dict:
    import jax
    import numpy as np

    from jaxcontact.simulate import simulate
    from jaxcontact.stepping.moreau_jean import MoreauJean

    jax.config.update("jax_enable_x64", True)
    out = {}
    B = args.check_batch
    for d in args.dtypes:
        # Ball: 10 s at h = 1e-3 with every state saved and diagnostics on (energy).
        system, p, q0, u0 = problem("ball", B, d)
        h, N = 1e-3, 10_000
        sch = MoreauJean(diagonal_mass=True)
        run = jax.jit(lambda p, q0, u0: simulate(system, p, q0, u0, dt=h, n_steps=N, scheme=sch))
        tr = run(p, q0, u0)
        v = np.asarray(tr.u[..., 0])
        E = np.asarray(tr.diagnostics.energy)
        t = np.asarray(tr.t[0])
        H, e, g = (np.asarray(p[k], np.float64) for k in ("height", "restitution", "gravity"))
        t1, tinf = ball_analytic(H, e, g)
        # First impact: the first step with a normal impulse.
        imp = np.asarray(tr.impulse_normal[..., 0]) > 0
        t_first = t[np.argmax(imp, axis=1)]
        # Rest: from this row on |v| ≤ 2 g h (at most gravity's pull over two steps). The last
        # bounces faster than that end within 2·(2 g h)/(g (1 − ε)) = 4 h/(1 − ε) of t∞ (8–40 steps).
        moving = np.abs(v) > 2 * g[:, None] * h
        last_moving = moving.shape[1] - 1 - np.argmax(moving[:, ::-1], axis=1)
        t_rest = t[np.minimum(last_moving + 1, len(t) - 1)]
        dE = np.diff(E, axis=1) / E[:, :1]
        # Batched vs single runs (same compiled scheme, vmap vs not).
        idx = [0, B // 3, B - 1]
        single = jax.jit(lambda p, q0, u0: simulate(system, p, q0, u0, dt=h, n_steps=N, scheme=sch).q[-1])
        diff = max(
            float(
                np.max(
                    np.abs(np.asarray(single({k: v[i] for k, v in p.items()}, q0[i], u0[i])) - np.asarray(tr.q[i, -1]))
                )
            )
            for i in idx
        )
        out[f"ball {d}"] = {
            "batch": B,
            "steps": N,
            "dt": h,
            "first_impact_err_steps_max": float(np.max(np.abs(t_first - t1)) / h),
            "rest_minus_tinf_steps": [float(x) for x in np.percentile((t_rest - tinf) / h, [0, 50, 100])],
            "max_energy_increase_rel": float(max(dE.max(), 0.0)),
            "final_energy_rel_max": float(np.max(E[:, -1] / E[:, 0])),
            "converged_fraction": float(np.asarray(tr.diagnostics.converged).mean()),
            "batch_vs_single_max_abs": diff,
            "restitution_range": [float(e.min()), float(e.max())],
            "height_range": [float(H.min()), float(H.max())],
        }
        print(f"ball physics {d}: {out[f'ball {d}']}", file=sys.stderr)

        # Four-bar: 2 s at h = 1e-2 (as published) with diagnostics; wall at x = −wall_distance.
        system, p, q0, u0 = problem("four-bar", B, d)
        h, N = 1e-2, 200
        run = jax.jit(lambda p, q0, u0: simulate(system, p, q0, u0, dt=h, n_steps=N, scheme=sch))
        tr = run(p, q0, u0)
        from jaxcontact.models import four_bar

        gap = jax.vmap(jax.vmap(system.gaps, in_axes=(0, 0, None)))(tr.q, tr.t, p)[..., 0]
        gap = np.asarray(gap)
        va = np.asarray(jax.vmap(jax.vmap(four_bar.point_a_velocity, in_axes=(0, 0, None)))(tr.q, tr.u, p))
        pushing = (np.asarray(tr.impulse_normal[..., 0]) > 0).astype(np.int8)
        impacts = (np.diff(pushing, axis=1) == 1).sum(axis=1)  # contact episodes
        phi = np.asarray(tr.diagnostics.phi)
        idx = [0, B // 3, B - 1]
        single = jax.jit(lambda p, q0, u0: simulate(system, p, q0, u0, dt=h, n_steps=N, scheme=sch).q[-1])
        diff = max(
            float(
                np.max(
                    np.abs(np.asarray(single({k: v[i] for k, v in p.items()}, q0[i], u0[i])) - np.asarray(tr.q[i, -1]))
                )
            )
            for i in idx
        )
        out[f"four-bar {d}"] = {
            "batch": B,
            "steps": N,
            "dt": h,
            "converged_fraction": float(np.asarray(tr.diagnostics.converged).mean()),
            "max_penetration_m": float(max(0.0, -gap.min())),
            "impacts_median": float(np.median(impacts)),
            "final_gap_max_m": float(np.abs(gap[:, -1]).max()),
            "final_speed_a_max": float(np.abs(va[:, -1]).max()),
            "phi_final_max": float(phi[:, -1].max()),
            "batch_vs_single_max_abs": diff,
        }
        print(f"four-bar physics {d}: {out[f'four-bar {d}']}", file=sys.stderr)
    return out


# --------------------------------------------------------------------------- worker: profile of the four-bar step


def worker_profile(args) -> dict:
    """Time the four-bar step with pieces removed, at batch ``--profile-batch``, 1 device."""
    import jax
    import jax.numpy as jnp

    from jaxcontact.stepping.moreau_jean import State, spd_solve, step
    from jaxcontact.system import kinematics

    jax.config.update("jax_enable_x64", True)
    sch = scheme()
    B, S = args.profile_batch, 50
    out = {}
    for d in args.dtypes:
        system, p, q0, u0 = problem("four-bar", B, d)
        h = jnp.asarray(1e-2, d)

        # Each piece is iterated S times in a fori_loop whose carry depends on its output
        # (so nothing is dead code), under vmap over the batch.
        def kin_only(p, q, u):
            M = system.mass(q, p)
            f = system.forces(q, u, 0.0, p)
            k = kinematics(system, q, 0.0, p)
            s = jnp.sum(jnp.diagonal(M)) + jnp.sum(f) + jnp.sum(k.phi_q) + jnp.sum(k.phi) + jnp.sum(k.W_N) + k.gap[0]
            return q + 1e-30 * s, u

        def kin_schur(p, q, u):
            M = system.mass(q, p)
            f = system.forces(q, u, 0.0, p)
            k = kinematics(system, q, 0.0, p)
            Minv = 1.0 / jnp.diagonal(M)
            X = jnp.concatenate([(h * f)[:, None], k.phi_q.T, k.W_N], axis=1) * Minv[:, None]
            ut = u + X[:, 0]
            G = k.phi_q @ X[:, 1:9]
            Y = spd_solve(G, jnp.concatenate([(k.phi_q @ ut + k.phi_t)[:, None], k.phi_q @ X[:, 9:]], 1))
            uf = ut - X[:, 1:9] @ Y[:, 0]
            return q + 1e-30 * jnp.sum(uf) + 1e-30 * jnp.sum(Y), u

        def full(p, q, u):
            st = State(
                jnp.zeros((), d),
                q,
                u,
                jnp.zeros((1,), d),
                jnp.zeros((1,), d),
                jnp.zeros((), d),
                jnp.zeros((), jnp.int32),
            )
            s1, _ = step(system, sch, p, st, h)
            return s1.q, s1.u

        res = {}
        for label, piece in (
            ("mass + forces + kinematics (jacfwd)", kin_only),
            ("+ Schur complement (M⁻¹, G, Cholesky of G, solves)", kin_schur),
            ("full step (+ contact LCP, update)", full),
        ):

            def loop(p, q, u, piece=piece):
                return jax.lax.fori_loop(0, S, lambda i, c: piece(p, *c), (q, u))

            fn = jax.jit(jax.vmap(loop))
            t = common.time_call(fn, p, q0, u0, min_repeats=3, max_repeats=10, min_total_s=0.5)
            res[label] = {"us_per_env_step": t.steady_s / (B * S) * 1e6, "compile_s": t.compile_s}
            print(f"profile {d} {label}: {res[label]['us_per_env_step']:.3f} µs/env-step", file=sys.stderr)
        # Op counts of the compiled full step (one vmapped step).
        one = jax.jit(jax.vmap(full))
        hlo = one.lower(p, q0, u0).compile().as_text()
        ops = {
            "fusion kernels": hlo.count(" fusion("),
            "custom-calls (LAPACK etc.)": hlo.count("custom-call("),
            "while loops": hlo.count(" while("),
            "HLO instructions": sum(1 for line in hlo.splitlines() if " = " in line),
        }
        import re

        ops["custom-call targets"] = sorted(set(re.findall(r'custom_call_target="([^"]+)"', hlo)))
        res["ops"] = ops
        out[d] = res
        print(f"profile {d} ops: {ops}", file=sys.stderr)
    return out


def worker(args) -> int:
    result = {"machine": common.machine_info()}
    if "grid" in args.parts:
        result.update(worker_grid(args))
    if "physics" in args.parts:
        result["physics"] = worker_physics(args)
    if "profile" in args.parts:
        result["profile"] = worker_profile(args)
    print(json.dumps(result, default=float))
    return 0


# --------------------------------------------------------------------------- driver and report


def jax_subprocess(args, devices, parts) -> dict:
    env_flag = f"--xla_force_host_platform_device_count={devices}" if devices > 1 else ""
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        "--devices",
        str(devices),
        "--parts",
        ",".join(parts),
        "--models",
        ",".join(args.models),
        "--dtypes",
        ",".join(args.dtypes),
        "--max-call-s",
        str(args.max_call_s),
        "--check-batch",
        str(args.check_batch),
        "--profile-batch",
        str(args.profile_batch),
    ]
    for name, bs in args.batches.items():
        cmd += [f"--batches-{name}", ",".join(map(str, bs))]
    for name, n in args.steps.items():
        cmd += [f"--steps-{name}", str(n)]
    old = os.environ.get("XLA_FLAGS")
    os.environ["XLA_FLAGS"] = ((old or "") + " " + env_flag).strip()
    try:
        return common.run_json_subprocess(cmd, timeout=7200)
    finally:
        if old is None:
            del os.environ["XLA_FLAGS"]
        else:
            os.environ["XLA_FLAGS"] = old


def report(args, info, jx, siconos, mujoco, command) -> str:
    fmt = common.fmt_num
    lines = [
        "## Simulation throughput (bench/perf/simulate.py)",
        "",
        common.machine_markdown(
            info,
            {
                "Command": f"`{command}`",
                "Scheme": "Moreau–Jean θ = ½, `diagonal_mass=True`, `diagnostics=False`, final state only "
                "(`save_every = n_steps`); solver auto (PGS; one exact sweep for one contact)",
                "Steps per timed call": ", ".join(
                    f"{m} {args.steps.get(m, DEFAULT_STEPS[m])} (h = {DT[m]:g})" for m in args.models
                ),
            },
        ),
        "",
    ]
    rows = [r for part in jx for r in part.get("rows", [])]
    best = {}
    for r in rows:
        key = (r["model"], r["dtype"], r["batch"])
        if key not in best or r["env_steps_per_s"] > best[key]["env_steps_per_s"]:
            best[key] = r
    for name in args.models:
        lines += [
            f"### {name}: env-steps/s",
            "",
            "Columns: 1 device / batch sharded over 2 host devices; compile s of the first call "
            "(1 device); converged = fraction of samples whose every step converged; "
            "load = 1-min load average when measured.",
            "",
        ]
        table = []
        for d in args.dtypes:
            for b in args.batches.get(name, DEFAULT_BATCHES[name]):
                r1 = next(
                    (r for r in rows if (r["model"], r["dtype"], r["batch"], r["devices"]) == (name, d, b, 1)), None
                )
                r2 = next(
                    (r for r in rows if (r["model"], r["dtype"], r["batch"], r["devices"]) == (name, d, b, 2)), None
                )
                if r1 is None and r2 is None:
                    continue
                conv = min(r["converged_fraction"] * r["finite_fraction"] for r in (r1, r2) if r)
                table.append(
                    [
                        d,
                        str(b),
                        fmt(r1["env_steps_per_s"]) if r1 else "—",
                        fmt(r2["env_steps_per_s"]) if r2 else "—",
                        fmt(r1["compile_s"]) if r1 else "—",
                        fmt(r2["compile_s"]) if r2 else "—",
                        f"{conv:.4f}",
                        " / ".join(f"{r['load']:.1f}" for r in (r1, r2) if r),
                    ]
                )
        lines += [
            common.markdown_table(
                [
                    "dtype",
                    "batch",
                    "env-steps/s (1 dev)",
                    "env-steps/s (2 dev)",
                    "compile s (1 dev)",
                    "compile s (2 dev)",
                    "converged",
                    "load",
                ],
                table,
            ),
            "",
        ]
    skipped = [s for part in jx for s in part.get("skipped", [])]
    if skipped:
        lines += [
            "Skipped: "
            + "; ".join(
                f"{s['model']} {s['dtype']} batch {s['batch']} ({s['devices']} dev): {s['reason']}" for s in skipped
            ),
            "",
        ]

    # Targets
    lines += ["### Targets", ""]
    trows = []
    for (name, d, b), target in TARGETS.items():
        r = best.get((name, d, b))
        if r is None:
            trows.append([f"{name} {d} batch {b}", fmt(target), "not measured", "—"])
            continue
        v = r["env_steps_per_s"]
        trows.append(
            [
                f"{name} {d} batch {b}",
                fmt(target),
                f"{fmt(v)} ({r['devices']} dev)",
                "met" if v >= target else f"missed: {target / v:.1f}× short",
            ]
        )
    comp = [r["compile_s"] for r in rows]
    if comp:
        cm = max(comp)
        trows.append(
            [
                "compile time (worst in grid)",
                f"≤ {COMPILE_TARGET_S:g} s",
                f"{cm:.1f} s",
                "met" if cm <= COMPILE_TARGET_S else f"missed: {cm / COMPILE_TARGET_S:.1f}× over",
            ]
        )
    lines += [common.markdown_table(["target", "required", "measured (best)", "verdict"], trows), ""]

    # Peers
    peer_rows = []
    if siconos:
        for r in siconos.get("rows", []):
            peer_rows.append(
                [f"Siconos {r['solver']} ({r['model']})", r["model"], fmt(r["steps_per_s"]), r.get("note", "")]
            )
    if mujoco:
        for r in mujoco.get("rows", []):
            peer_rows.append([f"MuJoCo {r['method']}", r["model"], fmt(r["steps_per_s"]), r.get("note", "")])
    for name in args.models:
        for d in args.dtypes:
            cands = [r for r in rows if r["model"] == name and r["dtype"] == d]
            if cands:
                r = max(cands, key=lambda r: r["env_steps_per_s"])
                peer_rows.append(
                    [
                        f"jaxcontact {d}, best (batch {r['batch']}, {r['devices']} dev)",
                        name,
                        fmt(r["env_steps_per_s"]),
                        "",
                    ]
                )
    if peer_rows:
        lines += [
            "### Against Siconos and MuJoCo (steps/s; serial peers run one simulation after another)",
            "",
            common.markdown_table(["code", "model", "(env-)steps/s", "note"], peer_rows),
            "",
        ]
        if mujoco and mujoco.get("notes"):
            lines += ["MuJoCo: " + mujoco["notes"], ""]
        if siconos and siconos.get("notes"):
            lines += ["Siconos: " + siconos["notes"], ""]

    # Physics
    phys = next((part["physics"] for part in jx if "physics" in part), None)
    if phys:
        lines += ["### Physics of the fast batched runs", ""]
        prow = []
        for key, v in phys.items():
            if key.startswith("ball"):
                lo, med, hi = v["rest_minus_tinf_steps"]
                prow.append(
                    [
                        key,
                        f"{v['batch']} × {v['steps']} steps",
                        f"first impact within {v['first_impact_err_steps_max']:.1f} steps of √(2H/g); "
                        f"rest − t∞ (analytic accumulation) = {lo:.0f} / {med:.0f} / {hi:.0f} steps "
                        f"(min/median/max); largest energy increase per step {v['max_energy_increase_rel']:.1e} "
                        f"of E₀; final E/E₀ ≤ {v['final_energy_rel_max']:.1e}; converged "
                        f"{v['converged_fraction']:.4f}; batch vs single runs {v['batch_vs_single_max_abs']:.1e}",
                    ]
                )
            else:
                prow.append(
                    [
                        key,
                        f"{v['batch']} × {v['steps']} steps",
                        f"converged {v['converged_fraction']:.4f}; deepest penetration "
                        f"{v['max_penetration_m']:.1e} m; median impacts {v['impacts_median']:.0f}; final "
                        f"|gap| ≤ {v['final_gap_max_m']:.1e} m, |v_a| ≤ {v['final_speed_a_max']:.1e} m/s; "
                        f"‖Φ‖ at 2 s ≤ {v['phi_final_max']:.1e} (no projection); batch vs single "
                        f"{v['batch_vs_single_max_abs']:.1e}",
                    ]
                )
        lines += [common.markdown_table(["run", "size", "result"], prow), ""]

    prof = next((part["profile"] for part in jx if "profile" in part), None)
    if prof:
        lines += [f"### Where the four-bar step spends its time (batch {args.profile_batch}, 1 device)", ""]
        prow = []
        for d, res in prof.items():
            for label, v in res.items():
                if label != "ops":
                    prow.append([d, label, f"{v['us_per_env_step']:.3f}"])
        lines += [
            "Each row runs only the named part of the step, 50 times in a `fori_loop` under `vmap`. "
            "XLA fuses each variant differently, so the rows are not additive (a truncated step can "
            "cost more than the full one); read them as orders of magnitude.",
            "",
            common.markdown_table(["dtype", "step with", "µs / env-step"], prow),
            "",
        ]
        for d, res in prof.items():
            o = res["ops"]
            lines.append(
                f"- {d}, compiled vmapped step: {o['HLO instructions']} HLO instructions, "
                f"{o['fusion kernels']} fusions, {o['while loops']} while loops, "
                f"{o['custom-calls (LAPACK etc.)']} custom calls ({', '.join(o['custom-call targets']) or 'none'})"
            )
        lines.append("")
    if args.analysis:
        lines += ["### Analysis", "", Path(args.analysis).read_text().strip(), ""]
    return "\n".join(lines)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--dtypes", default="float64,float32")
    for m in MODELS:
        p.add_argument(
            f"--batches-{m}",
            default=None,
            help=f"batch sizes for {m} (default {','.join(map(str, DEFAULT_BATCHES[m]))})",
        )
        p.add_argument(f"--steps-{m}", type=int, default=None, help=f"steps per timed call ({DEFAULT_STEPS[m]})")
    p.add_argument("--devices-list", default="1,2", help="host device counts to measure (default 1,2)")
    p.add_argument("--max-call-s", type=float, default=20.0, help="skip batches predicted to take longer per call")
    p.add_argument("--check-batch", type=int, default=256, help="batch of the physics checks")
    p.add_argument("--profile-batch", type=int, default=4096)
    p.add_argument("--parts", default="grid,physics,profile", help="worker parts: grid, physics, profile")
    p.add_argument("--no-siconos", action="store_true")
    p.add_argument("--no-mujoco", action="store_true")
    p.add_argument("--siconos-python", default="/usr/bin/python3")
    p.add_argument("--analysis", default=None, help="a Markdown file with the analysis paragraph to include")
    p.add_argument("--results", default=str(common.RESULTS_MD))
    p.add_argument("--no-append", action="store_true")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--devices", type=int, default=1, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.models = [m for m in a.models.split(",") if m]
    for m in a.models:
        if m not in MODELS:
            p.error(f"--models: unknown model {m!r}; choose from {MODELS}")
    a.dtypes = [d for d in a.dtypes.split(",") if d]
    for d in a.dtypes:
        if d not in ("float64", "float32"):
            p.error(f"--dtypes: {d!r} must be float64 or float32")
    a.parts = [x for x in a.parts.split(",") if x]
    a.batches, a.steps = {}, {}
    for m in MODELS:
        v = getattr(a, f"batches_{m.replace('-', '_')}")
        if v:
            a.batches[m] = tuple(int(x) for x in v.split(","))
        s = getattr(a, f"steps_{m.replace('-', '_')}")
        if s:
            a.steps[m] = s
    a.devices_list = [int(x) for x in a.devices_list.split(",") if x]
    return a


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    command = "python bench/perf/simulate.py " + " ".join(sys.argv[1:] if argv is None else argv)
    info = common.machine_info()
    t0 = time.perf_counter()
    jx = []
    for i, nd in enumerate(args.devices_list):
        parts = ["grid"] + ([x for x in args.parts if x != "grid"] if i == 0 else [])
        if "grid" not in args.parts:
            parts = parts[1:]
        if parts:
            jx.append(jax_subprocess(args, nd, parts))
    siconos = mujoco = None
    if not args.no_siconos:
        siconos = common.run_json_subprocess(
            [args.siconos_python, str(common.BENCH_DIR / "peers" / "siconos" / "siconos_simulate.py")], timeout=1800
        )
    if not args.no_mujoco:
        mujoco = common.run_json_subprocess(
            [sys.executable, str(common.BENCH_DIR / "peers" / "mujoco" / "mujoco_simulate.py")], timeout=1800
        )
    info["load_average_end"] = tuple(round(x, 2) for x in os.getloadavg())
    text = report(args, info, jx, siconos, mujoco, command)
    text = text.replace(
        "- Load average at start",
        f"- Load average at end: {', '.join(map(str, info['load_average_end']))}\n- Load average at start",
        1,
    )
    common.write_json(
        {"machine": info, "jax": jx, "siconos": siconos, "mujoco": mujoco}, common.OUT_DIR / "simulate_results.json"
    )
    print(text)
    if not args.no_append:
        print(f"appended to {common.append_results(text, Path(args.results))}", file=sys.stderr)
    print(f"total {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
