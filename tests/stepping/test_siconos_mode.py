"""``MoreauJean(force_rule="siconos")``: Siconos 4.4's MoreauJeanOSI step, number for number.

The references in tests/data/siconos/ were written by bench/references/siconos_moreau_jean.py, which runs
Siconos 4.4 (python3-siconos) on the models stored beside them: Siconos' bouncing ball
(LagrangianLinearTIDS + LagrangianLinearTIR + NewtonImpactNSL, LCP by Lemke) and its Woodpecker
tutorial (three NewtonImpactFrictionNSL contacts, FrictionContact(2) with its default NSGS),
both with MoreauJeanOSI(θ = ½) and TimeStepping.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.linear import linear_system
from jaxcontact.simulate import simulate
from jaxcontact.stepping import MoreauJean

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "siconos")


def _load(name):
    with np.load(os.path.join(DATA, name)) as f:
        return {k: f[k] for k in f.files}


def _relative_distance(a, b):
    """Per row: ‖a − b‖∞ / max(1, ‖b‖∞)."""
    return np.max(np.abs(a - b), axis=1) / np.maximum(1.0, np.max(np.abs(b), axis=1))


def _ball(ref, **laws):
    system, params = linear_system(
        ref["M"], F=ref["F"], H_N=ref["H_N"], b_N=ref["b_N"], restitution=laws.get("restitution", ref["restitution"])
    )
    return system, params


def _woodpecker(ref):
    keys = ("K", "F", "H_N", "b_N", "H_T", "restitution", "tangential_restitution", "friction")
    return linear_system(ref["M"], **{k: ref[k] for k in keys})


SICONOS = MoreauJean(force_rule="siconos")


def test_ball_equals_siconos_every_step():
    """ε = 0.9 from 1 m, r = 0.05, h = 0.005, 10 s: bounces, then rests slightly inside the
    ground (t > 8.2 s); every row of q and u equals Siconos' to 1e-12."""
    ref = _load("ball_moreau_jean.npz")
    system, params = _ball(ref)
    n = len(ref["t"]) - 1
    tr = simulate(
        system,
        params,
        jnp.asarray(ref["q"][0]),
        jnp.asarray(ref["v"][0]),
        dt=float(ref["h"]),
        n_steps=n,
        scheme=SICONOS,
    )
    q, u = np.asarray(tr.q), np.asarray(tr.u)
    assert _relative_distance(q, ref["q"]).max() < 1e-12
    assert _relative_distance(u, ref["v"]).max() < 1e-12
    np.testing.assert_allclose(np.asarray(tr.impulse_normal[:, 0]), ref["impulse"][:, 0], rtol=0, atol=1e-12)
    # the run covers the settling: in the last second the ball rests 1.2e-5 m inside the ground,
    # its velocity flipping sign and shrinking by ε each step (Newton's law taken literally)
    rest = np.asarray(tr.t) > 9.0
    assert np.all(np.abs(u[rest, 0]) < 2e-9) and np.all(q[rest, 0] < 0.05)
    # jaxcontact's own rule differs (forces at the θ-point, conservative separating law): the option matters
    default = simulate(
        system, params, jnp.asarray(ref["q"][0]), jnp.asarray(ref["v"][0]), dt=float(ref["h"]), n_steps=n
    )
    assert _relative_distance(np.asarray(default.q), ref["q"]).max() > 1e-6


def _woodpecker_distance(n_steps):
    """Run Siconos' Woodpecker tutorial with the Siconos rule for ``n_steps`` steps; the largest
    relative distance of q and of u to Siconos' over the stored rows up to there."""
    ref = _load("woodpecker_moreau_jean.npz")
    system, params = _woodpecker(ref)
    tr = simulate(
        system,
        params,
        jnp.asarray(ref["q"][0]),
        jnp.asarray(ref["v"][0]),
        dt=float(ref["h"]),
        n_steps=n_steps,
        scheme=MoreauJean(force_rule="siconos", diagnostics=False),
    )
    assert bool(np.all(tr.diagnostics.converged))
    rows = ref["rows"] <= n_steps
    r = ref["rows"][rows]
    active = np.asarray(tr.active)
    return (
        _relative_distance(np.asarray(tr.q)[r], ref["q"][rows]).max(),
        _relative_distance(np.asarray(tr.u)[r], ref["v"][rows]).max(),
        active,
    )


def test_woodpecker_equals_siconos_through_its_first_impacts():
    """Siconos' Woodpecker tutorial (frictional contacts, K implicit, h = 2e-5), first 4 500 steps:
    sliding down the pole, then the first impacts and stick–slip switches (from step 3 385 on).
    q equals Siconos' to 1e-12 at every stored row (every 10th step); u to 1e-11 (the sleeve's tiny
    inertia J_M = 5e-9 makes the iteration matrix's condition number 1.6e5)."""
    dq, du, active = _woodpecker_distance(4500)
    assert dq < 1e-12 and du < 1e-11
    assert len(np.unique(active, axis=0)) >= 3  # several active sets, not just one sliding contact


@pytest.mark.slow
def test_woodpecker_equals_siconos_over_the_whole_run():
    """The tutorial's whole run (0.3 s, 14 999 steps, every contact impacting): q to 1e-12 at every
    stored row (every 10th step and the last)."""
    ref = _load("woodpecker_moreau_jean.npz")
    n = int(ref["n_steps"])
    assert ref["rows"][-1] == n
    dq, du, active = _woodpecker_distance(n)
    assert dq < 1e-12 and du < 1e-11
    assert np.all(active.any(axis=0))


def test_trapezoidal_rule_conserves_the_oscillator_energy():
    """θ = ½ with K implicit is the trapezoidal rule: ½ uᵀMu + ½ qᵀKq is conserved to rounding
    for any h (here h ω = 0.8); the θ-point rule (Störmer–Verlet) only keeps it bounded."""
    M = np.array([[2.0, 0.3], [0.3, 1.0]])
    K = np.array([[5.0, -2.0], [-2.0, 3.0]])
    system, params = linear_system(M, K=K)
    w_max = np.sqrt(np.max(np.linalg.eigvals(np.linalg.solve(M, K)).real))
    dt = 0.8 / w_max
    q0, u0 = jnp.array([0.3, -0.1]), jnp.array([0.0, 0.5])
    tr = simulate(system, params, q0, u0, dt=dt, n_steps=500, scheme=SICONOS)
    e = np.asarray(tr.diagnostics.energy)
    assert np.max(np.abs(e / e[0] - 1.0)) < 1e-13
    e_sv = np.asarray(simulate(system, params, q0, u0, dt=dt, n_steps=500).diagnostics.energy)
    assert np.max(np.abs(e_sv / e_sv[0] - 1.0)) > 1e-3


def test_damped_oscillator_is_the_exact_theta_recurrence():
    """m ü + c u̇ + k q = F: each step of the Siconos rule solves the θ-method's 2 × 2 linear
    system for (u_E, q_E) exactly (damping and stiffness implicit), checked against that
    recurrence written out by hand with θ = 0.7."""
    m, c, k, F, h, th = 1.5, 0.4, 9.0, 2.0, 0.05, 0.7
    system, params = linear_system([[m]], K=[[k]], C=[[c]], F=[F])
    q, u = 0.2, -1.0
    tr = simulate(
        system,
        params,
        jnp.array([q]),
        jnp.array([u]),
        dt=h,
        n_steps=40,
        scheme=MoreauJean(theta=th, force_rule="siconos"),
    )
    # m (u' − u) = h[(1−θ)(F − k q − c u) + θ(F − k q' − c u')],  q' = q + h((1−θ)u + θu')
    A = np.array([[m + h * th * c, h * th * k], [-h * th, 1.0]])
    for i in range(40):
        b = np.array([m * u + h * ((1 - th) * (F - k * q - c * u) + th * F), q + h * (1 - th) * u])
        u, q = np.linalg.solve(A, b)
        np.testing.assert_allclose([float(tr.q[i + 1, 0]), float(tr.u[i + 1, 0])], [q, u], rtol=1e-12, atol=1e-14)


def test_batched_runs_equal_single_runs_and_gradient_matches_finite_differences():
    """A batch over the restitution equals single runs; d z(T)/d ε through the Siconos rule
    (across the first impact) equals central finite differences."""
    ref = _load("ball_moreau_jean.npz")
    system, params = _ball(ref)
    q0, u0 = jnp.asarray(ref["q"][0]), jnp.asarray(ref["v"][0])
    n, dt = 150, float(ref["h"])  # the first impact at step 91, then flight

    def final_height(e):
        p = dict(params, restitution=jnp.reshape(e, (1,)))
        return simulate(system, p, q0, u0, dt=dt, n_steps=n, scheme=SICONOS).q[-1, 0]

    es = jnp.array([0.5, 0.9])
    batch = {k: jnp.broadcast_to(v, (2,) + v.shape) for k, v in params.items()}
    batch["restitution"] = es[:, None]
    tb = simulate(system, batch, jnp.tile(q0, (2, 1)), jnp.tile(u0, (2, 1)), dt=dt, n_steps=n, scheme=SICONOS)
    for i, e in enumerate(es):
        np.testing.assert_allclose(float(tb.q[i, -1, 0]), float(final_height(e)), rtol=0, atol=1e-14)
    g = float(jax.grad(final_height)(jnp.asarray(0.7)))
    d = 1e-6
    fd = (float(final_height(jnp.asarray(0.7 + d))) - float(final_height(jnp.asarray(0.7 - d)))) / (2 * d)
    assert abs(g) > 0.1
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_force_rule_options_are_checked_and_resolve_the_separating_law():
    with pytest.raises(ValueError, match=r"force_rule = 'Siconos' must be one of \('theta-point', 'siconos'\)"):
        MoreauJean(force_rule="Siconos")
    with pytest.raises(ValueError, match="separating = 'x'"):
        MoreauJean(separating="x")
    assert MoreauJean().separating_law == "conservative"
    assert MoreauJean(force_rule="siconos").separating_law == "newton"
    assert MoreauJean(force_rule="siconos", separating="conservative").separating_law == "conservative"


def test_cli_scheme_moreau_jean_siconos(tmp_path):
    """``jaxcontact simulate --scheme moreau-jean-siconos`` runs the Siconos rule; it differs from the
    default once the ball rests on the ground (penetrated contact, Newton's law taken literally)."""
    from jaxcontact.cli import main
    from jaxcontact.models import get_model
    from jaxcontact.simulate import simulate_model

    out = tmp_path / "ball"
    assert (
        main(
            [
                "simulate",
                "bouncing-ball",
                "--scheme",
                "moreau-jean-siconos",
                "--dt",
                "0.005",
                "--t-final",
                "10",
                "--no-plots",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    q = np.load(out / "trajectory.npz")["q"]
    model = get_model("bouncing-ball")
    np.testing.assert_array_equal(q, np.asarray(simulate_model(model, dt=0.005, t_final=10.0, scheme=SICONOS).q))
    assert np.abs(q - np.asarray(simulate_model(model, dt=0.005, t_final=10.0).q)).max() > 1e-9
