"""Shared runs of the spatial tests: the box toss is simulated once per session (its compile dominates)."""

import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate_model
from jaxcontact.stepping.moreau_jean import MoreauJean

# The cones' Gauss–Seidel until Siconos' error ≤ 1e-12 (a resting box's four contacts are redundant: slow to
# converge in their null space, so a fixed sweep count would either waste sweeps or stop short).
BOX_TOSS_SCHEME = MoreauJean(differentiation="implicit", iterations=500, tol=1e-12)


@pytest.fixture(scope="session")
def box_toss_run():
    """(model, trajectory) of the box-toss model with its defaults: 2 s at dt = 1e-3.

    The run of bench/references/box_toss.py."""
    m = get_model("box-toss")
    return m, simulate_model(m, scheme=BOX_TOSS_SCHEME)
