"""Monte Carlo runs every scheme through the one time loop: a study equals single ``simulate`` runs."""

import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate_model
from jaxcontact.stepping import EventDriven, MoreauJean, Penalty
from jaxcontact.studies.distributions import ParamSpace
from jaxcontact.studies.montecarlo import StudySpec, run_study
from jaxcontact.studies.outcomes import outcome

SLIDER_OUTCOMES = ("final:slider.x", "max:slider.x", "peak_impulse", "impacts", "max_phi", "series:slider.x")
CASES = {
    "moreau-jean": ("bouncing-ball", MoreauJean(), ("restitution=uniform(0.5,0.9)", "height=uniform(0.5,1.0)"),
                    ("peak_impulse", "impacts", "rest_time", "rebound:y", "max_penetration", "series:y"), 0.6),
    "penalty": ("slider-bar", Penalty(), ("omega=uniform(10,14)", "friction=uniform(0.1,0.2)"),
                SLIDER_OUTCOMES, 0.1),
    "event-driven": ("slider-bar", EventDriven(), ("omega=uniform(10,14)", "friction=uniform(0.1,0.2)"),
                     SLIDER_OUTCOMES, 0.02),
}


@pytest.mark.parametrize("name", [n if n != "event-driven" else pytest.param(n, marks=pytest.mark.slow)
                                  for n in CASES])  # event-driven: ~45 s of compile and Lemke solves
def test_study_equals_a_loop_of_single_simulate_runs(name, tmp_path):
    model, scheme, params, outcomes, t_final = CASES[name]
    spec = StudySpec(model, ParamSpace.parse(params), n=4, outcomes=outcomes, sensitivity=False, t_final=t_final,
                     save_every=4, scheme=scheme, chunk_size=4)
    summary = run_study(spec, str(tmp_path), progress=False, plot=False)
    assert summary["failures"]["n_failed"] == 0
    assert summary["study"]["scheme"]["scheme"] == name
    data = np.load(tmp_path / "samples.npz")
    m0 = get_model(model)
    for i in range(4):
        sample = {k.split(":", 1)[1]: float(data[k][i]) for k in data.files if k.startswith("param:")}
        m = get_model(model, **sample)
        traj = simulate_model(m, t_final=t_final, scheme=scheme)
        for o in outcomes:
            single = np.asarray(outcome(o, m0.system, save_every=4).fn(traj, m.system, m.params))
            np.testing.assert_allclose(data[f"out:{o}"][i], single, rtol=1e-12, atol=1e-14, err_msg=f"{name} {o}")
    if model == "slider-bar":  # compliant contacts are simulated, not dropped: the outcomes vary with the samples
        for o in ("final:slider.x", "peak_impulse"):
            assert np.std(data[f"out:{o}"]) > 1e-3 * np.mean(np.abs(data[f"out:{o}"]))
        assert np.all(data["out:peak_impulse"] > 0)
