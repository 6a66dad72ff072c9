"""Projection as a part any scheme holds: one function after Moreau–Jean's, penalty's or event-driven's step."""

import json
import os

import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate_model
from jaxcontact.stepping import EventDriven, MoreauJean, Penalty
from jaxcontact.stepping.projection import Projection

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "user_model.py")
RIGID = get_model(f"{EXAMPLE}:pendulum")  # a bar on a revolute joint whose tip strikes the floor
SOFT = get_model(f"{EXAMPLE}:soft_pendulum")


def test_moreau_jean_projects_with_the_part_only():  # its projection=True flag and three options are gone
    part = simulate_model(RIGID, dt=1e-3, t_final=0.4, scheme=MoreauJean(projection=Projection()))
    plain = simulate_model(RIGID, dt=1e-3, t_final=0.4, scheme=MoreauJean())
    with pytest.raises(ValueError, match="projection = True must be None or a Projection"):
        MoreauJean(projection=True)
    assert float(np.max(part.diagnostics.phi)) < 1e-13 < float(np.max(plain.diagnostics.phi))


@pytest.mark.parametrize(
    "model, scheme, dt", [(SOFT, Penalty(), 1e-4), (RIGID, EventDriven(), 1e-3)], ids=["penalty", "event-driven"]
)
@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_projection_puts_a_baumgarte_scheme_on_the_constraints_without_changing_its_motion(model, scheme, dt):
    plain = simulate_model(model, dt=dt, t_final=0.3, scheme=scheme)
    proj = simulate_model(model, dt=dt, t_final=0.3, scheme=scheme.__class__(projection=Projection()))
    drift = float(np.max(plain.diagnostics.phi))
    assert float(np.max(proj.diagnostics.phi)) < 1e-13 < drift  # Baumgarte keeps it small, projection zero
    assert float(np.max(proj.diagnostics.phi_dot)) < 1e-12
    # The motion (the angle, through the impact at 0.228 s) moves by the phase the drift had cost.
    assert float(np.max(np.abs(np.asarray(proj.q[:, 2]) - np.asarray(plain.q[:, 2])))) < 1e-6


def test_the_part_is_in_the_scheme_config_and_bad_values_are_refused_by_name():
    config = Penalty(projection=Projection(rest_speed=0.1)).config()
    assert json.loads(json.dumps(config))["projection"] == {
        "part": "Projection",
        "position_iterations": 3,
        "resting_contacts": True,
        "rest_speed": 0.1,
    }
    with pytest.raises(ValueError, match="projection = True must be None or a Projection"):
        EventDriven(projection=True)
    with pytest.raises(ValueError, match="rest_speed = 0"):
        Projection(rest_speed=0)
    with pytest.raises(ValueError, match="position_iterations"):
        Projection(position_iterations=0)
    with pytest.raises(ValueError, match="projection = 'yes' must be None or a Projection"):
        MoreauJean(projection="yes")
