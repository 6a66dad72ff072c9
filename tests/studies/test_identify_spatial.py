"""Identification on spatial models: the sphere's restitution and the box's friction from 30 % off.

Data are simulated by the model itself with plain Moreau–Jean at the model's step (dt = 1 ms, the
scheme of ``fit``'s default; the command's default locates impacts and projects resting contacts, so the
command test names the data's scheme), sampled every 10 steps. Each record is chosen where the misfit is
smooth in the fitted coefficient: a spatial impact's time is quantised to the step, so a record whose
impacts move with the parameter makes the misfit a sawtooth (the tossed box over 0.6 s: local minima
≈ 2e-4 apart in μ around the truth, the same with the cone solve converged to 1e-12, so not solver noise).

* Sphere: dropped 0.2 m (ε = 0.7), recorded 0.35 s. The first impact's step does not depend on ε (the
  fall before it does not), and for every ε inside the bounds (0.4, 0.99) the second impact comes after
  the record (at 0.364 s for ε = 0.4): the misfit is the rebound flight's, smooth in ε.
* Box: launched flat on its face (height = half_z) at 1 m/s and spinning 5 rad/s about the vertical,
  recorded 0.2 s: four vertex contacts on Coulomb cones slide, the direction of each slip turning with
  the spin (the box stops after ≈ 0.2 s at μ = 0.52, later below). No impacts: the misfit is smooth in μ. The model's
  default toss is no use here: its first impact sticks (‖P_T‖ = 0.13 P_N) for every μ ≥ 0.13, so nothing
  before its tumbling impacts depends on μ.

Noise-free data from the fit's own step are reproduced exactly at the truth, so the estimate is the
truth to the optimiser's convergence (1e-6 asked, far below anything physical); with 1 % noise the
Laplace 95 % interval must contain the truth.
"""

import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate_model
from jaxcontact.studies.identify import coordinates, fit

SPHERE = get_model("sphere-on-plane", drop=0.2, restitution=0.7)
SPHERE_T = 0.35
SPHERE_BOUNDS = {"restitution": (0.4, 0.99)}
SPHERE_OBS = (0, 2)  # x and z of the centre: the rebound height and the impact's friction impulse (∝ (1 + ε))

BOX = get_model("box-toss", tilt_deg=0.0, spin_x=0.0, spin_y=0.0, spin_z=5.0, height=0.05, speed=1.0)
BOX_T = 0.2
BOX_BOUNDS = {"friction": (0.05, 1.0)}


def _data(model, t_final, obs=None):
    traj = simulate_model(model, t_final=t_final)
    q = np.asarray(traj.q[::10])
    return np.asarray(traj.t[::10]), q if obs is None else q[:, list(obs)]


def _noisy(y, seed):
    """y plus Gaussian noise of 1 % of its standard deviation; returns (y, the noise sd)."""
    sd = 0.01 * float(np.std(y))
    return y + sd * np.random.default_rng(seed).standard_normal(y.shape), sd


@pytest.mark.slow  # 1–2 min: compiling L-BFGS and its line search through the spatial step with forward derivatives
def test_sphere_restitution_recovered_from_30_percent_below():
    t, y = _data(SPHERE, SPHERE_T, SPHERE_OBS)
    r = fit(
        SPHERE, t, y, ("restitution",), {"restitution": 0.49}, SPHERE_BOUNDS, observe=coordinates(*SPHERE_OBS), steps=15
    )
    assert abs(r.estimates["restitution"] - 0.7) < 1e-6, r.estimates
    assert r.interval_method["restitution"] == "exact fit"


@pytest.mark.slow  # 1–2 min: the fit, then the Laplace interval checked against the loss
def test_sphere_restitution_interval_contains_the_truth_with_1_percent_noise():
    t, y = _data(SPHERE, SPHERE_T, SPHERE_OBS)
    y, sd = _noisy(y, seed=0)
    r = fit(
        SPHERE,
        t,
        y,
        ("restitution",),
        {"restitution": 0.91},
        SPHERE_BOUNDS,
        observe=coordinates(*SPHERE_OBS),
        steps=15,
        noise=sd,
    )
    lo, hi = r.interval95["restitution"]
    assert lo < 0.7 < hi, (r.estimates, (lo, hi))
    assert r.interval_method["restitution"] == "laplace"  # the loss is quadratic along ε: no staircase
    assert hi - lo < 0.01  # informative: the rebound flight pins ε


@pytest.mark.slow  # 2–3 min: forward derivatives through four sliding cone contacts (50 Gauss–Seidel sweeps per step)
def test_box_friction_recovered_from_30_percent_below_while_it_slides_and_spins():
    t, y = _data(BOX, BOX_T)
    r = fit(BOX, t, y, ("friction",), {"friction": 0.28}, BOX_BOUNDS, steps=8)
    assert abs(r.estimates["friction"] - 0.4) < 1e-6, r.estimates
    assert r.interval_method["friction"] == "exact fit"


@pytest.mark.slow  # 3 min: the fit, then the Laplace interval checked against the loss
def test_box_friction_interval_contains_the_truth_with_1_percent_noise():
    t, y = _data(BOX, BOX_T)
    y, sd = _noisy(y, seed=0)
    r = fit(BOX, t, y, ("friction",), {"friction": 0.52}, BOX_BOUNDS, steps=10, noise=sd)
    lo, hi = r.interval95["friction"]
    assert lo < 0.4 < hi, (r.estimates, (lo, hi))
    assert r.interval_method["friction"] == "laplace"  # the loss is quadratic along μ
    assert hi - lo < 0.05 * 0.4  # informative: 0.2 s of sliding pins μ within a few per cent


@pytest.mark.slow  # 2 min: simulate, then the fit through the spatial step
def test_identify_command_recovers_the_sphere_restitution_from_simulate_output(tmp_path, capsys):
    import argparse
    import json

    from jaxcontact.commands import identify, simulate

    def parse(cmd, argv):
        parser = argparse.ArgumentParser()
        cmd.add_arguments(parser)
        return parser.parse_args(argv)

    data = tmp_path / "sphere"
    assert (
        simulate.run(
            parse(
                simulate,
                [
                    "sphere-on-plane",
                    "--set",
                    "drop=0.2",
                    "--set",
                    "restitution=0.7",
                    "--t-final",
                    str(SPHERE_T),
                    "--out",
                    str(data),
                    "--no-plots",
                ],
            )
        )
        == 0
    )
    out = tmp_path / "fit"
    rc = identify.run(
        parse(
            identify,
            [
                "sphere-on-plane",
                "--set",
                "drop=0.2",
                "--data",
                str(data / "trajectory.npz"),
                "--observe",
                "ball.x,ball.z",
                "--fit",
                "restitution=0.49",
                "--bounds",
                "restitution=0.4,0.99",
                "--steps",
                "15",
                "--no-plots",
                "--out",
                str(out),
                "--impact-location",
                "step",
                "--no-projection",
            ],
        )
    )
    assert rc == 0
    res = json.loads((out / "fit.json").read_text())
    assert abs(res["estimates"]["restitution"] - 0.7) < 1e-6, res["estimates"]
    assert res["exact_fit"] == {"restitution": True}  # same scheme and step as simulate: plain Moreau–Jean
    assert "restitution = 0.7 (exact fit" in capsys.readouterr().out
