"""The box-toss model's trajectory summary, stored for comparison with other codes (Siconos, MuJoCo).

    python bench/references/box_toss.py        # writes tests/data/box_toss_summary.json

Moreau–Jean at the model's dt = 1e-3 s for 2 s, the cones' Gauss–Seidel to Siconos' error 1e-12.
The summary: the model's parameters, the time the box comes to rest (every velocity ≤ 1e-9),
its final coordinates, the number of steps with a normal impulse > 0.05 N·s (impacts), the
largest penetration and the energy at 0, 0.25, 0.5 and 2 s.
"""

import json
from pathlib import Path

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

from jaxcontact.models import get_model  # noqa: E402
from jaxcontact.simulate import simulate_model  # noqa: E402
from jaxcontact.stepping.moreau_jean import MoreauJean  # noqa: E402


def main():
    m = get_model("box-toss")
    traj = simulate_model(m, scheme=MoreauJean(differentiation="implicit", iterations=500, tol=1e-12))
    u = np.asarray(traj.u)
    moving = np.flatnonzero(np.max(np.abs(u), axis=1) > 1e-9)
    gaps = np.asarray(jax.vmap(lambda q: m.system.gaps(q, 0.0, m.params))(traj.q))
    e = np.asarray(traj.diagnostics.energy)
    rows = [int(round(s / m.dt)) for s in (0.0, 0.25, 0.5, 2.0)]
    summary = {
        "model": "box-toss",
        "dt": m.dt,
        "t_final": m.t_final,
        "params": {k: float(v) for k, v in m.params.items()},
        "rest_time": float(traj.t[moving[-1] + 1]),
        "final_q": np.asarray(traj.q[-1]).tolist(),
        "impact_steps": int(np.sum(np.asarray(traj.impulse_normal).sum(axis=1) > 0.05)),
        "max_penetration": float(-gaps.min()),
        "energy": {f"{r * m.dt:g}": float(e[r]) for r in rows},
    }
    out = Path(__file__).resolve().parents[2] / "tests" / "data" / "box_toss_summary.json"
    out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
