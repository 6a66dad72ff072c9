"""The built-in uncertain-clearance study of the slider–crank (compliant journal, Flores et al.'s geometry).

Checked against the trends of the clearance-joint literature (Flores et al.): the peaks of the
journal force and of the slider acceleration grow with the clearance, and the motion tends to
the ideal joint's as the clearance → 0; the rigid journal (Moreau–Jean impacts) run on the same
samples shows the same trends.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.stepping import MoreauJean, Penalty
from jaxcontact.studies.montecarlo import default_study, make_evaluator
from jaxcontact.studies.outcomes import outcome

DT, T = 5e-6, 0.03  # a crank turn at 200 rad/s is 0.031 s
CLEARANCES = np.array([4e-4, 2e-4, 1e-4])
NAMES = ("peak_force", "peak_accel:slider.x", "impacts", "free_flight", "max:journal_ex", "series:slider.x")


def _study(contact, scheme):
    """The study's per-sample function (derived stiffness and damping included) over the clearances."""
    m = get_model("slider-crank-clearance", contact=contact)
    outs = [
        outcome(k, m.system, dt=DT, observables=m.observables, save_every=600)
        for k in NAMES
        if contact != "ideal" or k in ("peak_accel:slider.x", "series:slider.x")
    ]
    ev = make_evaluator(m, outs, dt=DT, n_steps=int(round(T / DT)), scheme=scheme, save_every=600)
    if contact == "ideal":
        return {k: np.asarray(v) for k, v in jax.jit(ev)({}).items()}
    return {k: np.asarray(v) for k, v in jax.jit(jax.vmap(ev))({"clearance": jnp.asarray(CLEARANCES)}).items()}


@pytest.fixture(scope="module")
def runs():
    return {
        "compliant": _study("compliant", Penalty()),
        "rigid": _study("rigid", MoreauJean()),
        "ideal": _study("ideal", Penalty()),
    }


def test_default_study_is_the_compliant_journal_and_rigid_on_request():
    spec = default_study(get_model("slider-crank-clearance"))
    assert spec.scheme.name == "penalty" and dict(spec.model_options) == {"contact": "compliant"}
    assert set(spec.space.names) == {"clearance", "restitution", "friction", "omega"}
    rigid = default_study(get_model("slider-crank-clearance"), scheme=MoreauJean())
    assert dict(rigid.model_options) == {"contact": "rigid"} and rigid.space == spec.space  # same samples


def test_stiffness_follows_the_sampled_clearance():
    m = get_model("slider-crank-clearance", contact="compliant")
    p = m.derive({**m.params, "clearance": jnp.asarray(1e-4)})
    assert float(p["stiffness"]) == pytest.approx(
        float(get_model("slider-crank-clearance", contact="compliant", clearance=1e-4).params["stiffness"]), rel=1e-12
    )
    assert float(p["stiffness"]) > float(m.params["stiffness"])  # Hertz: a tighter fit is stiffer


@pytest.mark.slow  # three compiled studies of 6 000 steps: ~15 s of CPU
def test_peaks_grow_with_clearance_and_tend_to_the_ideal_joint(runs):
    for contact in ("compliant", "rigid"):
        r = runs[contact]
        assert np.all(r["converged"]) and np.all(r["state_finite"])
        assert np.all(np.diff(r["peak_force"]) < 0), (contact, r["peak_force"])  # clearances decrease
        assert np.all(np.diff(r["peak_accel:slider.x"]) < 0), (contact, r["peak_accel:slider.x"])
        # The journal stays in its hole (the compliant one up to its contact deformation).
        assert np.all(r["max:journal_ex"] < 1.2 * CLEARANCES), r["max:journal_ex"]
        # The slider's path tends to the ideal mechanism's, monotonically.
        dev = np.max(np.abs(r["series:slider.x"] - runs["ideal"]["series:slider.x"][None]), axis=1)
        assert np.all(np.diff(dev) < 0) and np.all(dev < 2.0 * CLEARANCES), (contact, dev)
    # Impacts make the peaks: far above the ideal joint's slider acceleration.
    assert np.all(runs["compliant"]["peak_accel:slider.x"] > 5.0 * runs["ideal"]["peak_accel:slider.x"])


@pytest.mark.slow  # three compiled studies of 6 000 steps: ~15 s of CPU
def test_rigid_and_compliant_journals_agree_on_impacts_in_order_of_magnitude(runs):
    """Both journals hit tens of times per crank turn. The counts agree only within a factor 3.5: the
    compliant journal's Hunt–Crossley restitution is matched at one impact speed (0.5 m/s) and varies
    with it, the rigid journal's Newton restitution does not."""
    c, r = runs["compliant"]["impacts"], runs["rigid"]["impacts"]
    assert np.all(c >= 10) and np.all(r >= 10)
    assert np.all(np.abs(np.log(c / r)) < np.log(3.5)), (c, r)
