"""``identify`` fits the same parameter with every scheme through one code path (no per-scheme branch)."""

import os

import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate_model
from jaxcontact.stepping import SCHEMES, EventDriven, MoreauJean, Penalty
from jaxcontact.studies.identify import coordinates, fit

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "user_model.py")
# The user-model pendulum released from horizontal: its swing to the floor and the impact (at 0.228 s,
# data to 0.25 s) set the bar length. Data are made by the scheme that fits them. The event-driven
# scheme locates the impact inside its step, so its misfit is smooth in l (treated at the next step
# start, the impact time was quantised to the step and L-BFGS stopped at a spurious minimum, l = 0.402).
CASES = {
    "moreau-jean": ("pendulum", MoreauJean(), 1e-3),
    "penalty": ("soft_pendulum", Penalty(), 1e-4),
    "event-driven": ("pendulum", EventDriven(), 1e-3),
}
L_TRUE, L_GUESS, T_FINAL = 0.4, 0.3, 0.25


def test_every_registered_scheme_is_covered():
    assert set(CASES) == set(SCHEMES)


@pytest.mark.slow  # compile-bound: ~45 s each (event-driven: ~3 min, reverse mode through its Lemke solves)
@pytest.mark.parametrize("name", list(CASES))
def test_each_scheme_recovers_the_bar_length(name):
    fn, scheme, dt = CASES[name]
    model = get_model(f"{EXAMPLE}:{fn}")
    traj = simulate_model(model, dt=dt, t_final=T_FINAL, scheme=scheme)
    every = int(round(0.01 / dt))
    t, y = np.asarray(traj.t[::every]), np.asarray(traj.q[::every, 2])
    r = fit(
        model, t, y, ("l",), {"l": L_GUESS}, {"l": (0.2, 0.6)}, observe=coordinates(2), steps=10, dt=dt, scheme=scheme
    )
    assert abs(r.estimates["l"] - L_TRUE) < 1e-4 * L_TRUE, r.estimates
    assert r.loss < 1e-6 * r.loss_history[0]
    assert np.isfinite(r.std["l"])  # Laplace interval by the scheme's declared differentiation mode
