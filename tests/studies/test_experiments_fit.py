"""A fit over many experiments: its pose error and robust loss, the intervals from the scatter between
experiments on a problem with a known answer, and the command's refusals (no simulation in these tests; the
fit itself runs in the cube-toss tutorial and in the slow recovery test)."""

import contextlib
import io
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special

from jaxcontact import cli
from jaxcontact.spatial import rotations
from jaxcontact.studies.experiments_fit import (
    _conclude,
    _intervals,
    _jackknife,
    _profile,
    _refine,
    _resolution,
    _secant,
    _step_left,
    _trust_step,
    pose_error2,
    pseudo_huber,
)

CUBES = Path(__file__).resolve().parents[3] / "shared" / "data" / "contactnets" / "cube_tosses.npz"
CUBE = ["--set", "half_x=0.0524", "--set", "half_y=0.0524", "--set", "half_z=0.0524", "--set", "mass=0.37"]


def test_pose_error_is_distance_and_turn_of_a_vertex():
    jax.config.update("jax_enable_x64", True)
    half = 0.05
    q_meas = jnp.asarray(rotations.exp(jnp.array([0.3, -0.2, 0.5])))
    turn = 0.02  # rad about z, on top of the measured orientation
    q_sim = rotations.multiply(q_meas, rotations.exp(jnp.array([0.0, 0.0, turn])))
    p = jnp.array([0.1, 0.2, 0.3])
    sim = jnp.concatenate([p + jnp.array([0.003, 0.0, -0.004]), q_sim])[None]
    e2 = pose_error2(sim, p[None], q_meas[None], 0.0, half)
    expected = 0.005**2 + (2 * half * np.sin(turn / 2)) ** 2
    np.testing.assert_allclose(float(e2[0]), expected, rtol=1e-12)
    # the same orientation written as -q; and the table offset lifts the simulated pose
    flipped = sim.at[:, 3:].multiply(-1.0)
    np.testing.assert_allclose(float(pose_error2(flipped, p[None], q_meas[None], 0.0, half)[0]), expected, rtol=1e-12)
    lifted = pose_error2(sim, p[None] + jnp.array([0.003, 0.0, 0.0]), q_meas[None], -0.004, half)
    np.testing.assert_allclose(float(lifted[0]), (0.008) ** 2 + (2 * half * np.sin(turn / 2)) ** 2, rtol=1e-12)


def test_pseudo_huber_is_quadratic_then_linear():
    s = 0.01
    small, large = 1e-5, 1.0
    np.testing.assert_allclose(float(pseudo_huber(small**2, s)), small**2 / 2, rtol=1e-6)
    np.testing.assert_allclose(float(pseudo_huber(large**2, s)), s * large - s**2, rtol=1e-3)


def test_intervals_of_quadratic_experiments_are_the_mean_and_its_standard_error():
    # Experiment i alone prefers θ_i; its loss is ½ (θ − θ_i)ᵀ A (θ − θ_i). The shared estimate is the mean
    # of the θ_i, its covariance cov(θ_i) / N (whatever A), and one Newton step recovers every θ_i.
    rng = np.random.default_rng(3)
    n, p = 200, 2
    own = np.array([0.3, 0.6]) + rng.normal(size=(n, p)) * [0.05, 0.1]
    a = np.array([[2.0, 0.5], [0.5, 1.0]])
    theta = own.mean(axis=0)
    g = (theta - own) @ a
    hess = np.broadcast_to(a, (n, p, p)).copy()
    cov, interval, population, estimates, notes = _intervals(("mu", "e"), theta, g, hess, np.zeros(p), np.ones(p))
    assert notes == {}
    sem = own.std(axis=0, ddof=1) / np.sqrt(n)
    np.testing.assert_allclose(cov, np.cov(own.T) / n, rtol=1e-10)
    np.testing.assert_allclose(np.sqrt(np.diag(cov)), sem, rtol=1e-10)
    t = special.stdtrit(n - 1, 0.975)
    np.testing.assert_allclose(interval["mu"], (theta[0] - t * sem[0], theta[0] + t * sem[0]), rtol=1e-10)
    np.testing.assert_allclose(estimates, own, rtol=1e-10)
    assert population["e"]["experiments"] == n and population["e"]["not_estimable"] == 0
    np.testing.assert_allclose(population["mu"]["median"], np.median(own[:, 0]), rtol=1e-12)


def test_an_estimate_on_its_bound_gets_an_interval_within_the_bounds():
    # The real cube tosses' restitution lands on its lower bound 0: the symmetric interval would reach below.
    rng = np.random.default_rng(1)
    n, p = 100, 2
    own = np.array([0.2, 0.0]) + rng.normal(size=(n, p)) * 0.05
    theta = np.array([own[:, 0].mean(), 0.0])
    g, hess = theta - own, np.broadcast_to(np.eye(p), (n, p, p)).copy()
    cov, interval, _, _, _ = _intervals(("mu", "e"), theta, g, hess, np.zeros(p), np.ones(p))
    half = special.stdtrit(n - 1, 0.975) * np.sqrt(np.diag(cov))
    assert interval["e"][0] == 0.0 and interval["e"][1] == pytest.approx(half[1], rel=1e-12)
    assert interval["mu"] == pytest.approx((theta[0] - half[0], theta[0] + half[0]), rel=1e-12)


def test_jackknife_is_the_scatter_of_the_estimates_without_each_experiment():
    # Quadratic experiments of different weights: the shared estimate is their weighted mean, and leaving one
    # out is refitting the weighted mean of the others — by brute force here, against the one-step formula.
    rng = np.random.default_rng(4)
    n, p = 15, 2
    own = rng.normal(size=(n, p))
    hess = np.array([w * np.array([[2.0, 0.5], [0.5, 1.0]]) for w in np.exp(rng.normal(size=n))])

    def weighted_mean(idx):
        return np.linalg.solve(hess[idx].sum(axis=0), np.einsum("nij,nj->i", hess[idx], own[idx]))

    theta = weighted_mean(np.arange(n))
    g = np.einsum("nij,nj->ni", hess, theta - own)
    left_out = np.array([weighted_mean(np.delete(np.arange(n), i)) for i in range(n)])
    spread = left_out - left_out.mean(axis=0)
    np.testing.assert_allclose(_jackknife(hess, g), (n - 1) / n * spread.T @ spread, rtol=1e-10)


def test_intervals_of_few_unequal_experiments_cover_the_truth():
    # Twelve experiments whose information differs tenfold (the tosses whose impacts tell ε carry most of
    # it): a 95 % interval must hold the truth about 95 % of the time. The sandwich with the normal quantile
    # holds it 90 % of the time here; the jackknife with Student's t 94 %.
    rng = np.random.default_rng(0)
    n, runs, inside = 12, 4000, 0
    for _ in range(runs):
        w = np.exp(rng.normal(size=n))
        own = 1.0 + rng.normal(size=n) / np.sqrt(w)
        theta = np.array([(w * own).sum() / w.sum()])
        g, hess = (w * (theta - own))[:, None], w[:, None, None]
        _, interval, _, _, _ = _intervals(("e",), theta, g, hess, np.array([-10.0]), np.array([10.0]))
        inside += interval["e"][0] <= 1.0 <= interval["e"][1]
    assert 0.93 <= inside / runs <= 0.97


def test_intervals_count_experiments_that_say_nothing():
    # Half of the experiments do not depend on the second parameter (a toss that never slides says nothing
    # about μ): their Hessian is singular, they are counted apart, the shared interval still exists.
    n = 40
    hess = np.zeros((n, 2, 2))
    hess[:, 0, 0] = 1.0
    hess[: n // 2, 1, 1] = 1.0
    g = np.random.default_rng(0).normal(size=(n, 2)) * 0.01
    g[n // 2 :, 1] = 0.0
    cov, _, population, estimates, notes = _intervals(
        ("e", "mu"), np.array([0.5, 0.5]), g, hess, np.zeros(2), np.ones(2)
    )
    assert notes == {}  # twenty experiments carry μ's curvature: leaving one out leaves nineteen
    assert np.isfinite(cov).all() and population["mu"]["not_estimable"] == n // 2
    assert np.isnan(estimates[n // 2 :]).all()


def test_trust_step_minimises_the_quadratic_model_within_its_radius():
    # Against the model's values at many points of the ball: convex and not, inside and on the radius.
    rng = np.random.default_rng(5)
    ball = rng.normal(size=(20000, 2))
    ball *= (rng.uniform(size=(20000, 1)) ** 0.5) / np.linalg.norm(ball, axis=1, keepdims=True)
    for h, g, radius in (
        (np.array([[2.0, 0.3], [0.3, 1.0]]), np.array([0.1, -0.2]), 1.0),  # Newton step inside: taken as is
        (np.array([[2.0, 0.3], [0.3, 1.0]]), np.array([3.0, -2.0]), 0.5),  # Newton step outside: to the radius
        (np.array([[1.0, 0.0], [0.0, -0.5]]), np.array([0.2, 0.1]), 0.4),  # indefinite
        (np.array([[1.0, 0.0], [0.0, -0.5]]), np.array([0.2, 0.0]), 0.4),  # indefinite, g ⟂ the falling side
        (np.array([[1e-9, 0.0], [0.0, 4.0]]), np.array([1e-3, 1.0]), 0.25),  # flat along one axis
    ):
        s = _trust_step(h, g, radius)

        def model(x):
            return x @ g + 0.5 * np.einsum("...i,ij,...j->...", x, h, x)

        assert np.linalg.norm(s) <= radius * (1 + 1e-9)
        assert model(s) <= model(radius * ball).min() + 1e-9
        if np.all(np.linalg.eigvalsh(h) > 0) and np.linalg.norm(np.linalg.solve(h, g)) < radius:
            np.testing.assert_allclose(s, -np.linalg.solve(h, g), rtol=1e-9)


def test_newton_steps_stop_at_a_tenth_of_the_standard_error():
    # the quadratic experiments above: the step that ends the fit is a tenth of the sandwich's standard error,
    # over the free parameters only (a held one keeps the fallback, a thousandth of its width)
    rng = np.random.default_rng(3)
    n = 200
    own = np.array([0.3, 0.6]) + rng.normal(size=(n, 2)) * [0.05, 0.1]
    a = np.array([[2.0, 0.5], [0.5, 1.0]])
    g = (own.mean(axis=0) - own) @ a
    cov, _, _, _, _ = _intervals(
        ("mu", "e"), own.mean(axis=0), g, np.broadcast_to(a, (n, 2, 2)), np.zeros(2), np.ones(2)
    )
    np.testing.assert_allclose(_resolution(a, g, np.array([True, True])), 0.1 * np.sqrt(np.diag(cov)), rtol=1e-10)
    held = _resolution(a, g, np.array([True, False]))
    assert held[1] == 1e-3 and held[0] == pytest.approx(0.1 * np.std(g[:, 0], ddof=1) / a[0, 0] / np.sqrt(n))
    assert (_resolution(-a, g, np.array([True, True])) == 1e-3).all()


def test_secant_update_meets_the_measured_slope_and_stays_symmetric():
    rng = np.random.default_rng(2)
    h = np.array([[2.0, 0.5], [0.5, 1.0]])
    s, y = rng.normal(size=2), rng.normal(size=2)
    new = _secant(h, s, y)
    np.testing.assert_allclose(new @ s, y, rtol=1e-12)
    np.testing.assert_allclose(new, new.T, rtol=0, atol=1e-15)
    # along a direction orthogonal to the step the curvature is kept
    t = np.array([-s[1], s[0]])
    np.testing.assert_allclose(t @ new @ t, t @ h @ t, rtol=1e-12)


def _rough_experiments(n=40, seed=6):
    """Experiments whose misfit falls linearly along ε to its bound 0 (slope b) with a ripple in ε too short for
    a span-wide Hessian to see past (its curvature over a span is many times the slope's over the whole
    range, of either sign), and is quadratic in μ around a value that moves with ε: the cube tosses' shape."""
    rng = np.random.default_rng(seed)
    a, own, b = np.exp(rng.normal(size=n)), 0.2 + 0.02 * rng.normal(size=n), 1e-3
    wave = 2 * np.pi / 0.013

    def full_pass(theta, which=None):
        idx = np.arange(n) if which is None else which
        mu, e = theta
        d = mu - own[idx] - 0.03 * e
        ripple = 0.5 * b / wave * np.sin(wave * e + idx)
        loss = 0.5 * a[idx] * d**2 + b * e + ripple
        grad = np.stack([a[idx] * d, -0.03 * a[idx] * d + b + 0.5 * b * np.cos(wave * e + idx)], axis=1)
        return loss, None, None, grad

    optimum = np.array([(a * own).sum() / a.sum(), 0.0])
    return full_pass, optimum


def test_refine_reaches_a_bound_the_rough_model_does_not_see():
    # From μ near its optimum and ε = 0.35 (where Adam left the real cube fit), with the model's ε curvature
    # the ripple's: ε's gradient keeps its sign over the span, so sign steps carry ε to its bound, where it is
    # held, then Newton steps finish μ.
    full_pass, optimum = _rough_experiments()
    lo, hi = np.array([0.1, 0.0]), np.array([1.6, 1.0])
    theta = np.array([0.21, 0.35])
    lines = []
    got, (_, _, _, g), hess, status, trials = _refine(
        full_pass, theta, full_pass(theta), ("mu", "e"), lo, hi, np.arange(40), 8, lines.append
    )
    assert status in ("converged", "every parameter held on its bound"), lines
    assert trials <= 8 and any(line.startswith("sign steps for e") for line in lines), lines
    np.testing.assert_allclose(got, optimum, atol=2e-4)
    assert hess is None  # held ε was not differenced: the intervals take every Hessian afresh


def test_refine_brackets_a_coordinate_whose_refused_sign_step_overshot():
    # μ in an asymmetric valley (twenty times steeper beyond its minimum), started 1.2 spans short of it, so the
    # model's span does not bracket it, and ε's loss falling linearly to its bound: the first sign step (both
    # coordinates) overshoots μ and raises the loss. Its gradients say μ turned and ε did not: μ is left to the
    # Newton steps, ε goes on to its bound alone, then Newton finds μ's minimum.
    n = 40
    rng = np.random.default_rng(6)
    a, own, b, steep = np.exp(rng.normal(size=n)), 0.2 + 0.002 * rng.normal(size=n), 1e-3, 20.0

    def full_pass(theta, which=None):
        idx = np.arange(n) if which is None else which
        d = theta[0] - own[idx]
        k = np.where(d < 0, 1.0, steep) * a[idx]
        return 0.5 * k * d**2 + b * theta[1], None, None, np.stack([k * d, np.full(d.shape, b)], axis=1)

    grid = np.linspace(0.19, 0.21, 20001)
    best = grid[np.argmin([np.mean(full_pass(np.array([m, 0.0]))[0]) for m in grid])]
    start, lines = np.array([0.2 - 1.2 * 0.03, 0.35]), []
    got, _, _, status, trials = _refine(
        full_pass,
        start,
        full_pass(start),
        ("mu", "e"),
        np.array([0.1, 0.0]),
        np.array([1.6, 1.0]),
        np.arange(n),
        10,
        lines.append,
    )
    assert "sign steps for mu, e (not bracketed by the span)" in lines
    signs = [line for line in lines if line.startswith(("sign step:", "sign step refused"))]
    assert signs[0].startswith("sign step refused (the loss rose): mu=0.224"), lines
    assert all("mu=0.164" in line for line in signs[1:]) and "e=0 " in signs[-1], lines
    assert status == "converged" and trials <= 10, lines
    np.testing.assert_allclose(got, [best, 0.0], atol=5e-5)


def test_refine_leaves_a_bracketed_quadratic_to_newton():
    # Quadratic experiments with the start within a span of the optimum: no sign step, one Newton step.
    rng = np.random.default_rng(3)
    n = 50
    own = np.array([0.3, 0.6]) + rng.normal(size=(n, 2)) * [0.05, 0.1]
    a = np.array([[2.0, 0.5], [0.5, 1.0]])

    def full_pass(theta, which=None):
        d = theta - own[np.arange(n) if which is None else which]
        return 0.5 * np.einsum("ni,ij,nj->n", d, a, d), None, None, d @ a

    theta, lines = own.mean(axis=0) + [0.01, -0.01], []
    got, _, _, status, trials = _refine(
        full_pass, theta, full_pass(theta), ("mu", "e"), np.zeros(2), np.ones(2), np.arange(n), 8, lines.append
    )
    assert status == "converged" and trials == 1 and not any("sign step" in line for line in lines), lines
    np.testing.assert_allclose(got, own.mean(axis=0), atol=1e-10)


def test_newton_steps_hold_a_parameter_the_model_has_no_curvature_along():
    # Quadratic experiments with a saddle: the model falls along a direction that is mostly ε. A trust-region step
    # would follow it to the radius at every trial; held, ε stays where the start put it and μ's Newton step goes
    # to μ's minimum given ε, where the fit has converged.
    rng = np.random.default_rng(5)
    n = 30
    own = np.array([0.3, 0.5]) + 0.01 * rng.normal(size=(n, 2))
    a = np.array([[4.0, 1.0], [1.0, 0.2]])  # eigenvalues 4.25 and -0.047, the falling one along (0.24, -0.97)

    def full_pass(theta, which=None):
        d = theta - own[np.arange(n) if which is None else which]
        return 0.5 * np.einsum("ni,ij,nj->n", d, a, d), None, None, d @ a

    mean = own.mean(axis=0)
    start, lines = mean + [0.005, -0.024], []  # within a span of turning both gradients: no sign step
    got, _, _, status, trials = _refine(
        full_pass, start, full_pass(start), ("mu", "e"), np.zeros(2), np.ones(2), np.arange(n), 8, lines.append
    )
    assert "Newton steps hold e (no curvature along it)" in lines and not any("sign step" in x for x in lines)
    assert status == "converged" and trials == 1, lines
    np.testing.assert_allclose(got, [mean[0] + 0.024 / 4, start[1]], atol=1e-12)


def _weighted_experiments(seed, n, centre, sd):
    """n experiments that each prefer their own μ (``own``), weighed ``w``: the shared μ is their weighted mean,
    and the jackknife's variance of it is refitted by brute force, each experiment left out in turn."""
    rng = np.random.default_rng(seed)
    w = np.exp(rng.normal(size=n))
    own = centre + sd * rng.normal(size=n)
    left_out = np.array([np.delete(w * own, i).sum() / np.delete(w, i).sum() for i in range(n)])
    return w, own, (w * own).sum() / w.sum(), (n - 1) / n * np.sum((left_out - left_out.mean()) ** 2)


def test_a_parameter_held_on_its_bound_leaves_the_others_an_interval():
    # ε held at 0 by a gradient that points out of the bounds, with a curvature there that makes the summed
    # Hessians indefinite: μ's interval is the jackknife with ε fixed (a brute-force refit of μ with each
    # experiment left out), and ε's runs from its bound, undefined at its far end.
    n = 30
    w, own, mu, spread = _weighted_experiments(7, n, 0.2, 0.03)
    theta = np.array([mu, 0.0])
    hess = np.zeros((n, 2, 2))
    hess[:, 0, 0], hess[:, 0, 1], hess[:, 1, 0], hess[:, 1, 1] = w, 0.1 * w, 0.1 * w, -0.05
    g = np.stack([w * (theta[0] - own), np.full(n, 1e-3)], axis=1)
    cov, interval, _, _, notes = _intervals(
        ("mu", "e"), theta, g, hess, np.zeros(2), np.ones(2), held=np.array([False, True])
    )
    assert notes == {}  # held, not undetermined
    np.testing.assert_allclose(cov[0, 0], spread, rtol=1e-10)
    t = special.stdtrit(n - 1, 0.975)
    np.testing.assert_allclose(interval["mu"], theta[0] + np.array([-1, 1]) * t * np.sqrt(spread), rtol=1e-10)
    assert interval["e"][0] == 0.0 and np.isnan(interval["e"][1])
    # Not held, ε is undetermined (the summed Hessian falls along it): μ keeps the same interval, ε has none
    cov2, interval2, _, _, notes2 = _intervals(("mu", "e"), theta, g, hess, np.zeros(2), np.ones(2))
    np.testing.assert_allclose(cov2[0, 0], spread, rtol=1e-10)
    assert np.isnan(cov2[1]).all() and np.isnan(cov2[:, 1]).all() and np.isnan(interval2["e"]).all()
    assert list(notes2) == ["e"] and "summed Hessian of all 30 experiments is not positive definite" in notes2["e"]


def test_a_parameter_whose_curvature_one_experiment_carries_has_no_interval_and_the_note_names_it():
    # ε is told by experiment 11 alone (the others' losses are flat along ε): left out, the others have no
    # minimum in ε, so no jackknife interval exists for it. μ, which every experiment tells, keeps its
    # interval: the brute-force refit of μ with ε fixed, each experiment left out in turn.
    n = 25
    w, own, mu, spread = _weighted_experiments(2, n, 0.3, 0.05)
    theta = np.array([mu, 0.2])
    hess = np.zeros((n, 2, 2))
    hess[:, 0, 0] = w
    hess[11, 1, 1] = 4.0
    g = np.stack([w * (theta[0] - own), np.zeros(n)], axis=1)
    cov, interval, _, _, notes = _intervals(("mu", "e"), theta, g, hess, np.zeros(2), np.ones(2))
    assert (
        list(notes) == ["e"]
        and "without experiment 11 of those fitted the others'" in notes["e"]
        and "that experiment" in notes["e"]
    )
    assert np.isnan(interval["e"]).all() and np.isnan(cov[1, 1])
    np.testing.assert_allclose(cov[0, 0], spread, rtol=1e-10)
    # 0.01 above the shared μ, the step left is back to it; over μ and ε only while experiment 11 curves ε
    off = np.stack([w * (theta[0] + 0.01 - own), np.zeros(n)], axis=1)
    np.testing.assert_allclose(_step_left(hess, off, np.array([True, True])), [-0.01, 0.0], rtol=1e-12, atol=1e-15)
    flat = hess.copy()
    flat[11, 1, 1] = 0.0
    assert np.isnan(_step_left(flat, off, np.array([True, True]))).all()
    step = _step_left(flat, off, np.array([True, False]))
    np.testing.assert_allclose(step[0], -0.01, rtol=1e-12)
    assert np.isnan(step[1])
    # a second experiment that also tells ε makes every leave-one-out sum curved: ε gets its interval back
    hess[3, 1, 1] = 4.0
    g[3, 1], g[11, 1] = 0.1, -0.1
    cov, interval, _, _, notes = _intervals(("mu", "e"), theta, g, hess, np.zeros(2), np.ones(2))
    assert notes == {} and np.isfinite(cov).all() and interval["e"][0] < 0.2 < interval["e"][1]


def _identify(*extra):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = cli.main(["identify", "box-toss", "--data", str(CUBES), *CUBE, *extra])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.skipif(not CUBES.exists(), reason="the shared cube tosses are not beside the repository")
@pytest.mark.parametrize(
    "extra, message",
    [
        (["--fit", "friction", "--windows", "2"], "--windows: single-trajectory option"),
        (["--fit", "friction", "--optimizer", "lbfgs"], "--optimizer lbfgs: single-trajectory option"),
        (["--fit", "width"], "'width' is neither a parameter of box-toss"),
        (["--fit", "friction", "--tosses", "3:999"], "--tosses '3:999'"),
        (["--fit", "friction", "--bounds", "restitution=0,1"], "--bounds for ['restitution']: not fitted"),
    ],
)
def test_experiments_fit_refusals(extra, message, tmp_path):
    code, _, err = _identify(*extra, "--out", str(tmp_path / "fit"), "--check")
    assert code == 2 and message in err, err


@pytest.mark.skipif(not CUBES.exists(), reason="the shared cube tosses are not beside the repository")
def test_experiments_fit_check_names_the_plan(tmp_path):
    code, out, err = _identify("--fit", "friction", "--fit", "table_offset", "--tosses", "0:10", "--check")
    assert code == 0, err
    assert "fitting friction, table_offset to 10 of 470 experiments, their first 100 samples" in out


def test_experiment_options_refused_with_one_trajectory(tmp_path):
    data = tmp_path / "one.npz"
    np.savez(data, t=np.linspace(0, 1, 11), y=np.zeros(11))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["identify", "bouncing-ball", "--data", str(data), "--fit", "restitution", "--horizon", "5"])
    assert code == 2 and "--horizon: options of a fit over many experiments" in err.getvalue()


def test_models_without_state_map_are_refused(tmp_path):
    data = tmp_path / "many.npz"
    pos = np.zeros((2, 4, 3))
    quat = np.tile([1.0, 0, 0, 0], (2, 4, 1))
    np.savez(data, length=np.array([4, 4]), dt=np.array(0.01), position=pos, quaternion_wxyz=quat)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["identify", "bouncing-ball", "--data", str(data), "--fit", "restitution"])
    assert code == 2 and "'bouncing-ball' has no state map from measured poses" in err.getvalue()


def test_residual_check_tells_noise_from_a_systematic_misfit():
    from jaxcontact.studies.identify import residual_check

    rng = np.random.default_rng(5)
    m = 400
    est, interval = {"e": 0.5}, {"e": (0.49, 0.52)}
    white = residual_check(rng.normal(size=m), est, interval, noise=1.0)
    assert white["white"] and white["widening"] == 1.0
    assert white["interval95_correlated"]["e"] == [0.49, 0.52]
    assert abs(white["rms_over_noise"] - 1.0) < 0.1
    # a slow drift (a model's error) plus noise: strongly correlated from sample to sample
    drift = np.sin(np.linspace(0, 6, m)) + 0.1 * rng.normal(size=m)
    tilted = residual_check(np.stack([drift, rng.normal(size=m)], axis=1), est, interval)
    assert not tilted["white"] and tilted["lag1_autocorrelation"] > 0.9
    lo, hi = tilted["interval95_correlated"]["e"]
    rho = tilted["lag1_autocorrelation"]
    factor = np.sqrt((1 + rho) / (1 - rho))
    np.testing.assert_allclose([lo, hi], [0.5 - factor * 0.01, 0.5 + factor * 0.02], rtol=1e-12)


@pytest.mark.slow  # compiles the fit's program (reverse mode through the box's contacts): minutes on 2 cores
@pytest.mark.skipif(not CUBES.exists(), reason="the shared cube tosses are not beside the repository")
def test_fit_recovers_friction_and_restitution_of_noiseless_tosses():
    """Eight tosses simulated from real starts with known μ, ε and table height, measured exactly: the fit
    from guesses far off returns them, and its intervals hold them."""
    from jaxcontact.experiments import check_experiments, read_experiments
    from jaxcontact.models import get_model
    from jaxcontact.prediction import measured_scheme, starts
    from jaxcontact.simulate import simulate
    from jaxcontact.studies.experiments_fit import fit_experiments

    jax.config.update("jax_enable_x64", True)
    size = {"half_x": 0.0524, "half_y": 0.0524, "half_z": 0.0524, "mass": 0.37}
    truth = {"friction": 0.3, "restitution": 0.4, "table_offset": -0.002}
    model = get_model("box-toss", **size, friction=0.3, restitution=0.4)
    real = read_experiments(str(CUBES)).select(np.arange(8) * 7)
    q0, u0, _ = starts(model, real)
    q0[:, 2] += 0.004  # above the table wherever it is
    params = jax.tree.map(lambda x: jnp.broadcast_to(x, (8,)), model.params)
    traj = simulate(
        model.system, params, q0, u0, dt=1 / 1480, n_steps=290, save_every=10, scheme=measured_scheme(model)
    )
    q = np.asarray(traj.q) + np.array([0, 0, truth["table_offset"], 0, 0, 0, 0])
    measured = check_experiments(
        {"length": np.full(8, 30), "dt": np.asarray(1 / 148), "position": q[..., :3], "quaternion_wxyz": q[..., 3:]}
    )
    names = ("friction", "restitution", "table_offset")
    bounds = {"friction": (0.02, 1.0), "restitution": (0.0, 1.0), "table_offset": (-0.01, 0.01)}
    res = fit_experiments(
        get_model("box-toss", **size),
        measured,
        names,
        {"friction": 0.5, "restitution": 0.2, "table_offset": 0.0},
        bounds,
        steps=30,
        batch=8,
    )
    for name in names:
        assert abs(res.estimates[name] - truth[name]) < 0.02 * (bounds[name][1] - bounds[name][0]), res.estimates
    assert res.loss == res.loss_first_batch < 1e-3 * res.loss_at_guess  # one minibatch holds all eight


def test_the_printed_fit_gives_each_interval_or_why_there_is_none_and_the_step_left():
    from jaxcontact.commands.identify_experiments import estimate_lines
    from jaxcontact.studies.experiments_fit import ExperimentsFit

    spread = {"median": 0.18, "p10": 0.1, "p90": 0.2, "experiments": 192}
    res = ExperimentsFit._make([None] * len(ExperimentsFit._fields))._replace(
        estimates={"friction": 0.1812, "restitution": 0.07},
        std={"friction": 0.002, "restitution": float("nan")},
        interval95={"friction": (0.1773, 0.1851), "restitution": (float("nan"), float("nan"))},
        population={"friction": spread, "restitution": spread},
        interval_notes={"restitution": "the summed Hessian of all 470 experiments is not positive definite along it"},
        settings={"newton_status": "not converged: the trials ran out", "newton_step_left": {"friction": -0.0054}},
    )
    lines = estimate_lines(res)
    assert "friction = 0.1812 (95 %: [0.1773, 0.1851], from the scatter between experiments)" in lines[0]
    assert "restitution = 0.07 (no interval: the summed Hessian of all 470" in lines[1]
    assert lines[2] == (
        "  not converged: the trials ran out: one more Newton step on every experiment's Hessians would move "
        "friction by -0.0054 (its standard error 0.002)"
    )
    converged = res._replace(settings={**res.settings, "newton_status": "converged"})
    assert len(estimate_lines(converged)) == 2


def test_profile_interval_is_the_bootstrap_of_the_weighted_mean_at_the_grid_s_resolution():
    # Quadratic experiments along ε of unequal weight: the shared ε is their weighted mean, and a resample's
    # lowest grid point is the grid point nearest its weighted mean. The spread (about 0.05) reaches past the
    # first grid (5 spans of 0.02 either side of a start 0.06 off), so the grid is extended.
    rng = np.random.default_rng(4)
    n = 60
    w, own = np.exp(rng.normal(size=n)), 0.4 + 0.3 * rng.normal(size=n)
    mean = (w * own).sum() / w.sum()

    def losses_at(theta):
        return 0.5 * w * (theta[1] - own) ** 2

    theta, lines = np.array([0.2, mean + 0.06]), []
    got = _profile(
        losses_at, theta, 1, losses_at(theta), np.zeros(2), np.ones(2), np.random.default_rng(0), lines.append
    )
    span = 0.02
    assert abs(got["estimate"] - mean) <= span / 2 + 1e-12
    assert any("extending it below" in line for line in lines), lines
    counts = np.random.default_rng(1).multinomial(n, np.full(n, 1 / n), size=4000)
    brute = (counts * w * own).sum(axis=1) / (counts * w).sum(axis=1)
    lo, hi = np.quantile(brute, [0.025, 0.975])
    np.testing.assert_allclose(got["interval95"], [lo, hi], atol=1.5 * span)
    np.testing.assert_allclose(got["std"], np.std(brute), rtol=0.15)
    assert got["population"]["experiments"] == n and np.isclose(got["grid"][1] - got["grid"][0], span)


def _rippled_experiments(n=40, seed=8):
    """Experiments quadratic in μ and in ε about their own values, plus a ripple along ε shared by all, too short
    for a span: the Hessians differenced over a span see the ripple's curvature, negative where the fit ends."""
    rng = np.random.default_rng(seed)
    a, own = np.exp(rng.normal(size=n)), np.array([0.2, 0.3]) + [0.02, 0.05] * rng.normal(size=(n, 2))
    k, wave, span = 1.0, 2 * np.pi / 0.013, 0.02
    amp = 0.04 * k / wave  # the gradient's ripple over a span: up to 2 amp wave / span = 4 k

    def full_pass(theta, which=None, gradients=True):
        idx = np.arange(n) if which is None else which
        d = theta - own[idx]
        loss = 0.5 * a[idx] * d[:, 0] ** 2 + 0.5 * k * d[:, 1] ** 2 + amp * np.sin(wave * theta[1])
        if not gradients:
            return (loss,)
        grad = np.stack([a[idx] * d[:, 0], k * d[:, 1] + amp * wave * np.cos(wave * theta[1])], axis=1)
        return loss, None, None, grad

    # where the ripple's difference over the next span is most negative: −2 amp wave sin(x + d/2) sin(d/2)
    half = wave * span / 2
    x = (np.pi / 2 if np.sin(half) > 0 else -np.pi / 2) - half
    start = own[:, 1].mean() + 0.03  # three spans above the experiments' mean ε
    e = start + ((x / wave - start) % (2 * np.pi / wave))
    return full_pass, a, own, e


def test_conclude_profiles_a_parameter_the_hessians_cannot_determine():
    # The fit ends near μ's optimum and at an ε three spans off its own, where the differenced Hessians curve
    # down along ε: no jackknife interval exists for it, so it is profiled: its estimate moves to the profile's
    # lowest mean loss (the experiments' mean ε, to the grid's resolution; the ripple is small there), its
    # interval is the bootstrap's, and μ takes Newton steps from there with ε held, to its optimum, where its
    # jackknife interval is taken.
    full_pass, a, own, e = _rippled_experiments()
    names, lo, hi = ("mu", "e"), np.zeros(2), np.ones(2)
    mu = (a * own[:, 0]).sum() / a.sum()
    theta, lines = np.array([mu + 0.004, e]), []
    out = _conclude(
        full_pass, theta, full_pass(theta), None, names, lo, hi, "stalled", np.random.default_rng(0), lines.append
    )
    got, _, cov, interval, _, _, notes, profiles, left, status = out
    assert notes == {} and list(profiles) == ["e"], lines
    assert any(line.startswith("e: the summed Hessian of all 40 experiments") for line in lines), lines
    assert abs(got[1] - own[:, 1].mean()) <= 0.01 + 1e-12 and abs(got[1] - e) > 0.02
    assert abs(got[0] - mu) < 1e-12 and "pass at the profiles' estimate" in " ".join(lines)
    assert any(line.startswith("Newton step: mu=") for line in lines), lines
    se = own[:, 1].std(ddof=1) / np.sqrt(len(own))
    lo_e, hi_e = interval["e"]
    assert lo_e < own[:, 1].mean() < hi_e and 2 * 1.96 * se - 0.04 < hi_e - lo_e < 2 * 1.96 * se + 0.04
    assert np.isfinite(cov).all() and cov[0, 1] == 0.0 and interval["mu"][0] < mu < interval["mu"][1]
    assert status == "converged (e from its profile)" and abs(left[0]) < 1e-12, (status, left)


def test_profile_refines_its_grid_where_the_experiments_agree_within_a_span():
    # The weighted mean's spread (about 0.002) is a tenth of a span: on the first grid every resample picks the
    # same point, a zero-width interval. The grid is refined about it (spans of 0.005, then 0.00125) until the
    # bootstrap's interval holds five points, and then matches the brute-force bootstrap at that resolution.
    rng = np.random.default_rng(9)
    n = 60
    w, own = np.exp(rng.normal(size=n)), 0.4 + 0.012 * rng.normal(size=n)

    def losses_at(theta):
        return 0.5 * w * (theta[0] - own) ** 2

    theta, lines = np.array([0.4]), []
    got = _profile(
        losses_at, theta, 0, losses_at(theta), np.zeros(1), np.ones(1), np.random.default_rng(0), lines.append
    )
    assert sum("a grid of" in line for line in lines) == 2, lines
    counts = np.random.default_rng(1).multinomial(n, np.full(n, 1 / n), size=4000)
    brute = (counts * w * own).sum(axis=1) / (counts * w).sum(axis=1)
    np.testing.assert_allclose(got["interval95"], np.quantile(brute, [0.025, 0.975]), atol=1.5 * 0.00125)
    assert got["interval95"][1] - got["interval95"][0] >= 4 * 0.00125
