"""``identify`` fits the same parameter with every scheme through one code path (no per-scheme branch)."""

import os

import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate_model
from jaxcontact.stepping import MoreauJean, Penalty
from jaxcontact.studies.identify import coordinates, fit

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "user_model.py")
# The user-model pendulum released from horizontal: its swing to the floor (0.25 s) sets the bar length.
# (The event-driven scheme runs through the same code path but reached only l = 0.4021 in these 10
# L-BFGS steps, in minutes of reverse mode through its Lemke solves: not part of this fast test.)
CASES = {"moreau-jean": ("pendulum", MoreauJean(), 1e-3), "penalty": ("soft_pendulum", Penalty(), 1e-4)}
L_TRUE, L_GUESS, T_FINAL = 0.4, 0.3, 0.25


@pytest.mark.slow  # 10 L-BFGS steps through 250–2 500 steps: ~45 s on the loaded 2-core machine
@pytest.mark.parametrize("name", list(CASES))
def test_each_scheme_recovers_the_bar_length(name):
    fn, scheme, dt = CASES[name]
    model = get_model(f"{EXAMPLE}:{fn}")
    traj = simulate_model(model, dt=dt, t_final=T_FINAL, scheme=scheme)
    every = int(round(0.01 / dt))
    t, y = np.asarray(traj.t[::every]), np.asarray(traj.q[::every, 2])
    r = fit(model, t, y, ("l",), {"l": L_GUESS}, {"l": (0.2, 0.6)}, observe=coordinates(2), steps=10, dt=dt,
            scheme=scheme)
    assert abs(r.estimates["l"] - L_TRUE) < 1e-4 * L_TRUE, r.estimates
    assert r.loss < 1e-6 * r.loss_history[0]
    assert np.isfinite(r.std["l"])  # Laplace interval by the scheme's declared differentiation mode
