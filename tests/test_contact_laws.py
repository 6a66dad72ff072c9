"""Continuous contact laws: values, continuity, gradients against finite differences, restitution matching."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.contact_laws import compliant_normal_force, regularized_friction, restitution_damping
from jaxcontact.simulate import simulate
from jaxcontact.stepping.penalty import Penalty
from jaxcontact.system import CompliantLaws, LagrangianSystem


def fd(f, x, h=1e-7):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("model", ["hunt_crossley", "paper"])
def test_normal_force_values_and_clip(model):
    K, n, c = 1e5, 1.5, 50.0
    delta = jnp.array([-1e-3, 0.0, 1e-3, 1e-3, 1e-3])
    ddot = jnp.array([0.0, 1.0, 0.0, 0.5, -1e4])
    F = compliant_normal_force(delta, ddot, K, n, c, model)
    D = 1e-3**n if model == "hunt_crossley" else 1e-3
    expect = [0.0, 0.0, K * 1e-3**n, K * 1e-3**n + c * D * 0.5, 0.0]  # last: damping would pull → clipped
    np.testing.assert_allclose(F, expect, rtol=1e-12, atol=0)
    assert K * 1e-3**n + c * D * -1e4 < 0  # the clip really acted


def test_normal_force_n1_models_coincide_and_unknown_model():
    d, v = jnp.linspace(-1e-3, 2e-3, 7), jnp.linspace(-0.5, 0.5, 7)
    np.testing.assert_allclose(
        compliant_normal_force(d, v, 1e4, 1.0, 30.0, "hunt_crossley"),
        compliant_normal_force(d, v, 1e4, 1.0, 30.0, "paper"),
        rtol=1e-14,
    )
    with pytest.raises(ValueError, match="damping model 'kelvin'"):
        compliant_normal_force(d, v, 1e4, 1.0, 30.0, "kelvin")


@pytest.mark.parametrize("model", ["hunt_crossley", "paper"])
def test_normal_force_gradients_match_fd_and_are_finite_at_touch(model):
    args = dict(delta=2e-3, delta_dot=0.3, stiffness=1e5, exponent=1.5, damping=40.0)
    names = list(args)
    for name in names:

        def f(x, name=name):
            a = dict(args, **{name: x})
            return compliant_normal_force(
                a["delta"], a["delta_dot"], a["stiffness"], a["exponent"], a["damping"], model
            )

        g = jax.grad(f)(args[name])
        np.testing.assert_allclose(g, fd(f, args[name], 1e-6 * max(1.0, abs(args[name]))), rtol=1e-5)
    # At and below first touch every gradient (also w.r.t. the exponent: δ^n log δ) is finite.
    for d in (0.0, -1e-3):
        gs = jax.grad(lambda *a: compliant_normal_force(*a, model), argnums=(0, 1, 2, 3, 4))(d, 0.3, 1e5, 1.5, 40.0)
        assert all(np.isfinite(x) for x in gs)
        assert all(x == 0 for x in gs[1:])


@pytest.mark.parametrize("model,width0", [("exponential", None), ("linear", None), ("linear", 2e-4)])
def test_regularized_friction_values_odd_bounded(model, width0):
    mu, FN, w = 0.4, 10.0, 1e-3
    v = jnp.linspace(-5e-3, 5e-3, 201)
    F = regularized_friction(v, FN, mu, model, w, width0)
    np.testing.assert_allclose(F, -regularized_friction(-v, FN, mu, model, w, width0), atol=1e-14)  # odd
    assert np.all(np.abs(F) <= mu * FN + 1e-12) and np.all(F * v <= 0)  # bounded, dissipative
    assert float(regularized_friction(0.0, FN, mu, model, w, width0)) == 0.0
    if model == "exponential":
        np.testing.assert_allclose(regularized_friction(w, FN, mu, model, w), -mu * FN * (1 - np.exp(-1)), rtol=1e-12)
    else:
        v0 = 0.0 if width0 is None else width0
        np.testing.assert_allclose(regularized_friction(w, FN, mu, model, w, width0), -mu * FN, rtol=1e-12)
        np.testing.assert_allclose(
            regularized_friction((v0 + w) / 2, FN, mu, model, w, width0), -mu * FN / 2, rtol=1e-12
        )
        assert float(regularized_friction(0.9 * v0, FN, mu, model, w, width0)) == 0.0


@pytest.mark.parametrize("model", ["exponential", "linear"])
def test_regularized_friction_gradients(model):
    mu, FN, w = 0.4, 10.0, 1e-3
    for v in (-2e-3, -3e-4, 4e-4, 3e-3):
        f = lambda x: regularized_friction(x, FN, mu, model, w)  # noqa: E731
        np.testing.assert_allclose(jax.grad(f)(v), fd(f, v, 1e-9), rtol=1e-5, atol=1e-9)
        for argnum, x0 in ((1, FN), (2, mu)):
            g = jax.grad(lambda a: regularized_friction(v, *((a, mu) if argnum == 1 else (FN, a)), model, w))(x0)
            np.testing.assert_allclose(g, float(regularized_friction(v, FN, mu, model, w)) / x0, rtol=1e-12)
    # At v = 0 the slope is the regularization's, not 0 or NaN.
    np.testing.assert_allclose(
        jax.grad(lambda x: regularized_friction(x, FN, mu, model, w))(0.0), -mu * FN / w, rtol=1e-12
    )


def test_unknown_friction_model():
    with pytest.raises(ValueError, match="regularization 'tanh'"):
        regularized_friction(0.1, 1.0, 0.3, "tanh", 1e-3)


def _impact_system(n_exp):
    """A unit mass hitting a compliant wall at x = 0 with no other force (an isolated impact)."""

    def laws(p):
        return CompliantLaws(*(jnp.reshape(x, (1,)) for x in (p["K"], n_exp, p["c"], 0.0, 0.0, 1.0, 0.0)))

    return LagrangianSystem(
        n_dof=1,
        mass=lambda q, p: jnp.eye(1, dtype=q.dtype),
        forces=lambda q, u, t, p: jnp.zeros(1, q.dtype),
        compliant_gaps=lambda q, t, p: q,
        compliant_laws=laws,
    )


@pytest.mark.parametrize("relation,tol", [("exact", 2e-5), ("flores", 0.05), ("lankarani_nikravesh", 0.4)])
def test_restitution_damping_achieves_restitution(relation, tol):
    """Integrate single impacts (v⁻ = 1 m/s, K = 1e7, Hertz n = 1.5) and read ε = v⁺/|v⁻|.

    "exact" is the separated-variables solution (error only from RK4); the two
    published closed forms are approximations. Measured for ε = 0.3, 0.6, 0.9,
    0.99: Flores 0.256, 0.577, 0.894, 0.989 (within 0.044); Lankarani–Nikravesh
    0.684, 0.756, 0.913, 0.990 (good near ε = 1 only, far too bouncy at 0.3).
    """
    eps = jnp.array([0.3, 0.6, 0.9, 0.99])
    K, v = 1e7, 1.0
    c = restitution_damping(K, eps, v, relation)
    B = eps.shape[0]
    q0, u0 = jnp.full((B, 1), 1e-4), jnp.full((B, 1), -v)
    tr = simulate(
        _impact_system(1.5),
        {"K": jnp.full(B, K), "c": c},
        q0,
        u0,
        dt=5e-6,
        n_steps=3000,
        scheme=Penalty(),
        save_every=3000,
    )
    achieved = tr.u[:, -1, 0] / v
    assert np.all(tr.q[:, -1, 0] > 0)  # separated again
    err = np.abs(np.asarray(achieved) - np.asarray(eps))
    assert np.max(err) < tol, (relation, achieved)
    if relation == "lankarani_nikravesh":
        assert err[-1] < 2e-3 and achieved[0] > eps[0]  # fine near 1, too bouncy at 0.3


def test_restitution_damping_independent_of_exponent_and_limits():
    """The exact relation does not depend on n (check n = 1 by simulation) and gives c = 0 at ε = 1."""
    K, v = 2e4, 0.5
    c = restitution_damping(K, 0.5, v)
    tr = simulate(
        _impact_system(1.0),
        {"K": jnp.asarray(K), "c": c},
        jnp.array([1e-4]),
        jnp.array([-v]),
        dt=5e-6,
        n_steps=8000,
        scheme=Penalty(),
        save_every=8000,
    )
    assert float(tr.q[-1, 0]) > 0
    np.testing.assert_allclose(tr.u[-1, 0] / v, 0.5, atol=2e-5)
    assert float(restitution_damping(K, 1.0, v)) < 1e-12
    with pytest.raises(ValueError, match="relation 'bogus'"):
        restitution_damping(K, 0.5, v, "bogus")


def test_vector_friction_opposes_the_slip_direction_with_the_scalar_magnitude():
    """Isotropic regularized Coulomb on a tangent plane: −μ F_N s(|v|) v/|v|; finite value and gradient at rest."""
    from jaxcontact.contact_laws import regularized_friction, regularized_friction_vector

    v = jnp.asarray([[3e-4, -4e-4], [0.3, 0.4], [0.0, 0.0]])
    F = regularized_friction_vector(v, 2.0, 0.25, "exponential", 1e-3)
    speed = jnp.linalg.norm(v, axis=1)
    mag = -regularized_friction(speed, 2.0, 0.25, "exponential", 1e-3)
    np.testing.assert_allclose(np.linalg.norm(F, axis=1), mag, rtol=1e-13)
    np.testing.assert_allclose(np.sum(F[:2] * v[:2], axis=1), -mag[:2] * speed[:2], rtol=1e-13)  # along −v
    assert np.all(np.linalg.norm(F, axis=1) <= 0.25 * 2.0 + 1e-15)
    J = jax.jacfwd(lambda w: regularized_friction_vector(w, 2.0, 0.25, "exponential", 1e-3))(jnp.zeros(2))
    np.testing.assert_allclose(J, -0.5 / 1e-3 * np.eye(2), rtol=1e-12)  # the slope μ F_N / v_r, isotropic
    lin = jax.jacfwd(lambda w: regularized_friction_vector(w, 1.0, 1.0, "linear", 2e-3))(jnp.zeros(2))
    np.testing.assert_allclose(lin, -500.0 * np.eye(2), rtol=1e-12)
    # the scalar laws agree with the vector one on a line
    np.testing.assert_allclose(
        regularized_friction_vector(jnp.asarray([[0.002, 0.0]]), 1.0, 0.3, "linear", 1e-3)[0, 0],
        regularized_friction(0.002, 1.0, 0.3, "linear", 1e-3),
        rtol=1e-14,
    )
