"""Step cost of the flexible arm (``flexible-arm-N``) against the number of links N.

    OPENBLAS_NUM_THREADS=1 nice python bench/perf/flexible_arm.py [--links 6,12,24,60] [--steps 200]

The rigid clearance joints by Moreau–Jean with the projection onto the joints (the model's default
step), float64, one arm (no batch). For each N: the compile time (the first call minus a steady call)
and the cost of one step (the median of repeated calls of ``--steps`` steps, divided by the steps),
with the coordinates n, the joints (contacts) and the constraint rows. Only the last state is kept.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import jax

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for common.py
import common  # noqa: E402

jax.config.update("jax_enable_x64", True)

from jaxcontact.models import flexible_arm  # noqa: E402
from jaxcontact.simulate import simulate  # noqa: E402
from jaxcontact.stepping import MoreauJean  # noqa: E402
from jaxcontact.stepping.projection import Projection  # noqa: E402


def measure(
    n_links: int, n_steps: int, contact: str = "rigid", dense_mass: bool = False, dense_rows: bool = False
) -> dict:
    """Compile time and per-step cost of ``n_steps`` steps of the ``n_links`` arm (``dense_mass``: its mass matrix
    factorised whole, as if it declared no blocks; ``dense_rows``: the step's contact rows and Delassus matrix
    dense, as if it declared no slip pattern, the projections' rows still by their pattern)."""
    m = flexible_arm.model(contact, n_links)
    if dense_mass:
        m = m._replace(system=dataclasses.replace(m.system, mass_blocks=None))
    if dense_rows:
        m = m._replace(system=dataclasses.replace(m.system, slip_columns=None))
    q0, u0 = m.initial_state(m.params)
    scheme = MoreauJean(projection=Projection())

    def run():
        tr = simulate(m.system, m.params, q0, u0, dt=m.dt, n_steps=n_steps, scheme=scheme, save_every=n_steps)
        return jax.block_until_ready(tr.q)

    timing = common.time_call(run, min_repeats=3, max_repeats=10, min_total_s=1.0)
    step = timing.steady_s / n_steps
    n_rows = int(m.system.constraints(q0, 0.0, m.params).shape[0])
    n_contacts = 0 if m.system.gaps is None else int(m.system.gaps(q0, 0.0, m.params).shape[0])
    return dict(
        links=n_links, n=m.system.n_dof, rows=n_rows, contacts=n_contacts, compile_s=timing.compile_s, step_s=step
    )


def main(argv=None) -> int:
    """Print the table of step costs against N."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links", default="6,12,24,60", help="comma-separated N")
    ap.add_argument("--steps", type=int, default=200, help="steps per timed call")
    ap.add_argument("--contact", default="rigid", choices=("rigid", "ideal"))
    ap.add_argument("--dense-mass", action="store_true", help="factorise the whole mass matrix (no blocks)")
    ap.add_argument("--dense-rows", action="store_true", help="the step's contact rows dense (no slip pattern)")
    args = ap.parse_args(argv)
    rows = []
    for n in (int(x) for x in args.links.split(",")):
        r = measure(n, args.steps, args.contact, args.dense_mass, args.dense_rows)
        rows.append(r)
        print(
            f"N={r['links']:3d}  n={r['n']:4d}  rows={r['rows']:3d}  contacts={r['contacts']:3d}  "
            f"compile {r['compile_s']:7.1f} s  step {r['step_s'] * 1e6:9.1f} µs  "
            f"per link {r['step_s'] * 1e6 / r['links']:7.1f} µs",
            flush=True,
        )
    base = rows[0]
    for r in rows[1:]:
        ratio, grown = r["step_s"] / base["step_s"], r["links"] / base["links"]
        print(f"N {base['links']} → {r['links']}: step × {ratio:.2f} (N × {grown:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
