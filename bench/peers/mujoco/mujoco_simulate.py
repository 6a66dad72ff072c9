"""MuJoCo throughput on the bench's two problems (PyPI ``mujoco``, the project's ``bench`` extra).

    /work/venv/bin/python bench/peers/mujoco/mujoco_simulate.py [--threads 2] [--batches 1,16,256,4096]
    /work/venv/bin/python bench/peers/mujoco/mujoco_simulate.py --models four-bar \
        --four-bar-dt 1e-3 --four-bar-steps 500

* four-bar: the four-bar linkage as a MuJoCo kinematic tree — bar 1 hinged to
  the ground, bar 2 hinged to bar 1 at point a, bar 3 hinged to bar 2 — with
  the loop closed by a ``connect`` equality constraint (bar 3's lower end to
  the ground point (0.4, 0)); the same lengths, masses and slender-rod
  inertias, gravity 9.81, a motor torque of 10 N·m on bar 1 turning point a
  into the wall plane x = −0.06 (a 5 mm sphere at a, contact with the plane
  only); h = 0.01 s as published. 3 joint coordinates + 3 equality rows (our
  stepper uses 9 absolute coordinates + 8 constraint rows).
* ball: a 5 cm sphere on a vertical slide joint dropped from 1 m onto a
  plane, h = 1e-3 s (MuJoCo needs a radius; ours is a point).

MuJoCo's contacts and equality constraints are soft (a spring–damper
reference acceleration) and it has no restitution coefficient: the
trajectories differ from Moreau–Jean's, so these numbers compare throughput
only. Measured: ``mj_step(m, d, nstep)`` (the C loop, one simulation after
another: steps/s) and ``mujoco.rollout.rollout`` over a batch with 1 and
``--threads`` MjData (its thread pool), env-steps/s = batch × nstep / time
(median of 3). Prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import mujoco
import numpy as np
from mujoco import rollout

FOUR_BAR = """
<mujoco model="four-bar">
  <option timestep="0.01" gravity="0 0 -9.81"/>
  <worldbody>
    <geom name="wall" type="plane" pos="-0.065 0 0" zaxis="1 0 0" size="1 1 0.01" contype="0" conaffinity="1"/>
    <body name="bar1" pos="0 0 0">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 0.1" mass="0.1" diaginertia="3.3333e-4 3.3333e-4 1e-7"/>
      <geom name="a" type="sphere" size="0.005" pos="0 0 0.2" contype="1" conaffinity="0" mass="0"/>
      <body name="bar2" pos="0 0 0.2">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <inertial pos="0.2 0 0" mass="0.2" diaginertia="1e-7 2.6667e-3 2.6667e-3"/>
        <body name="bar3" pos="0.4 0 0">
          <joint name="j3" type="hinge" axis="0 1 0"/>
          <inertial pos="0 0 -0.1" mass="0.1" diaginertia="3.3333e-4 3.3333e-4 1e-7"/>
        </body>
      </body>
    </body>
  </worldbody>
  <equality>
    <connect body1="bar3" body2="world" anchor="0 0 -0.2"/>
  </equality>
  <actuator>
    <motor name="T" joint="j1" gear="1" ctrllimited="false"/>
  </actuator>
</mujoco>
"""

BALL = """
<mujoco model="ball">
  <option timestep="0.001" gravity="0 0 -9.81"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="ball" pos="0 0 0">
      <joint name="y" type="slide" axis="0 0 1"/>
      <geom type="sphere" size="0.05" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""

# Torque about +y: a negative value swings point a (above the pivot) towards −x, into the wall.
TORQUE = -10.0


def setup(name, four_bar_dt=0.01, four_bar_steps=100):
    if name == "four-bar":
        m = mujoco.MjModel.from_xml_string(FOUR_BAR)
        m.opt.timestep = four_bar_dt  # the Monte Carlo comparison runs at the study's dt = 1e-3
        d = mujoco.MjData(m)
        d.ctrl[:] = TORQUE
        return m, d, four_bar_steps
    m = mujoco.MjModel.from_xml_string(BALL)
    d = mujoco.MjData(m)
    d.qpos[0] = 1.0
    return m, d, 1000


def median_time(fn, repeats=3):
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", default="1,16,256,4096")
    ap.add_argument("--models", default="four-bar,ball")
    ap.add_argument("--four-bar-dt", type=float, default=0.01, help="four-bar time step (published: 0.01; study: 1e-3)")
    ap.add_argument("--four-bar-steps", type=int, default=100, help="four-bar steps per simulation")
    a = ap.parse_args()
    models = a.models.split(",")
    rows, checks = [], {}
    for name in models:
        m, d, nstep = setup(name, a.four_bar_dt, a.four_bar_steps)
        spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        mujoco.mj_forward(m, d)
        state0 = np.empty(mujoco.mj_stateSize(m, spec))
        mujoco.mj_getState(m, d, state0, spec)

        # Physics sanity (not a comparison): does the four-bar reach the wall, does the ball bounce?
        contacts, xa_min = 0, np.inf
        for _ in range(nstep):
            mujoco.mj_step(m, d)
            contacts += d.ncon > 0
            if name == "four-bar":
                xa_min = min(xa_min, d.geom("a").xpos[0])
        checks[name] = {"steps_with_contact_in_first_run": int(contacts), "min_x_of_a": float(xa_min)}

        def serial(k=20):
            for _ in range(k):
                mujoco.mj_setState(m, d, state0, spec)
                mujoco.mj_step(m, d, nstep)

        k = 20
        t = median_time(lambda: serial(k))
        rows.append(
            {
                "model": name,
                "method": "mj_step (C loop, serial)",
                "batch": 1,
                "steps_per_s": k * nstep / t,
                "note": f"{k} simulations of {nstep} steps one after another",
            }
        )
        control = np.full((1, nstep, m.nu), TORQUE) if m.nu else None
        for nthreads in sorted({1, a.threads}):
            datas = [mujoco.MjData(m) for _ in range(nthreads)]
            for b in (int(x) for x in a.batches.split(",")):
                init = np.tile(state0, (b, 1))
                rollout.rollout(m, datas, init, control, nstep=nstep)  # warm-up (thread pool, allocation)
                t = median_time(lambda: rollout.rollout(m, datas, init, control, nstep=nstep))
                rows.append(
                    {
                        "model": name,
                        "method": f"rollout, {nthreads} thread{'s' if nthreads > 1 else ''}",
                        "batch": b,
                        "steps_per_s": b * nstep / t,
                        "note": f"batch {b} × {nstep} steps",
                    }
                )
    best = []
    for name in models:
        for meth in sorted({r["method"] for r in rows if r["model"] == name}):
            cands = [r for r in rows if r["model"] == name and r["method"] == meth]
            best.append(max(cands, key=lambda r: r["steps_per_s"]))
    notes = (
        "soft contact and soft equality constraints, no restitution coefficient: throughput only. "
        f"mujoco {mujoco.__version__}; four-bar as a hinge tree (3 coordinates) closed by a `connect` "
        f"equality, h = {a.four_bar_dt:g}, {a.four_bar_steps} steps per simulation; ball on a slide joint, h = 1e-3. "
        "First run check: " + json.dumps(checks)
    )
    print(json.dumps({"rows": best, "all_rows": rows, "checks": checks, "notes": notes}))


if __name__ == "__main__":
    main()
