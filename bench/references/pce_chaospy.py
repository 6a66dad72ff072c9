"""chaospy's Sobol indices of the Ishigami function, stored for the cross-check in tests/studies/test_pce.py.

    python bench/references/pce_chaospy.py   # ~1 min (chaospy's Sens_m/Sens_t are slow)

Writes tests/data/pce_chaospy_ishigami.json.

chaospy (an established polynomial chaos library) fits a least-squares PCE on its normed total-degree
Legendre basis of ``--order`` to ``--n`` LHS samples (``jaxcontact.studies.sampling.unit_points``, seed 0)
of the Ishigami function (a = 7, b = 0.1, U(−π, π)³) and gives first-order and total indices from it.
Our code on the same basis and samples must give the same numbers (the basis' normalisation and the
indices-from-coefficients formulas are then checked against an independent implementation).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "pce_chaospy_ishigami.json"


def main():
    import chaospy

    from jaxcontact.studies.sampling import unit_points
    from jaxcontact.studies.sensitivity import ishigami

    ap = argparse.ArgumentParser()
    ap.add_argument("--order", type=int, default=6)
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args()
    x = -np.pi + 2 * np.pi * unit_points(args.n, 3, "lhs", 0)
    joint = chaospy.J(*[chaospy.Uniform(-np.pi, np.pi) for _ in range(3)])
    t = time.perf_counter()
    model = chaospy.fit_regression(chaospy.generate_expansion(args.order, joint, normed=True), x.T, ishigami(x))
    S1, ST = chaospy.Sens_m(model, joint), chaospy.Sens_t(model, joint)
    data = {
        "chaospy": chaospy.__version__,
        "order": args.order,
        "n_samples": args.n,
        "sampler": "lhs",
        "seed": 0,
        "S1": np.asarray(S1).tolist(),
        "ST": np.asarray(ST).tolist(),
        "seconds": time.perf_counter() - t,
    }
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(data, indent=1))
    print(json.dumps(data))


if __name__ == "__main__":
    main()
