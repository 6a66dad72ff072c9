"""Parameter identification on spatial models: a box's friction from its slide, from a guess 30 % off."""

import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate_model
from jaxcontact.stepping.moreau_jean import MoreauJean
from jaxcontact.studies.identify import coordinates, fit


@pytest.mark.slow  # reverse mode through 8 cone contacts per step: minutes of compilation on 2 cores
def test_box_friction_is_recovered_from_its_slide():
    flat = dict(tilt_deg=0.0, spin_x=0.0, spin_y=0.0, spin_z=0.0, height=0.05, speed=1.0)
    # Gradients through each step's cone problem by the implicit function theorem (no sweeps stored).
    scheme = MoreauJean(differentiation="implicit", iterations=200, tol=1e-12)
    m = get_model("box-toss", friction=0.4, **flat)
    data = simulate_model(m, dt=5e-3, t_final=0.3, scheme=scheme)
    guess = get_model("box-toss", friction=0.28, **flat)
    res = fit(guess, np.asarray(data.t), np.asarray(data.q[:, 0]), ["friction"], {"friction": 0.28},
              {"friction": (0.05, 0.9)}, observe=coordinates(0), steps=10, scheme=scheme, dt=5e-3)
    assert res.estimates["friction"] == pytest.approx(0.4, rel=1e-4)
