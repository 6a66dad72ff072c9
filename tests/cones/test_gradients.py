"""Gradients of the cone solution in (W, q, μ) against central finite differences, in each contact regime.

Problems are built around a known solution with chosen states (separated,
sticking, sliding) and margins, so the finite-difference steps stay inside
one regime; at regime boundaries (a grazing contact, a stick–slip
transition) the gradient must be finite.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.cones import newton, nsgs

H = 1e-6


def problem(states, seed=0, mu=0.6, grazing=False, at_cone_edge=False):
    rng = np.random.default_rng(seed)
    nc = len(states)
    n = 3 * nc
    A = rng.normal(size=(n, n)) / np.sqrt(n)
    W = A @ A.T + 0.5 * np.eye(n)
    r, u = np.zeros(n), np.zeros(n)
    for i, s in enumerate(states):
        e = rng.normal(size=2)
        e /= np.linalg.norm(e)
        rn = rng.uniform(0.8, 1.5)
        if s == "separate":
            u[3 * i] = 0.0 if grazing else rng.uniform(0.3, 1.0)
            u[3 * i + 1 : 3 * i + 3] = rng.normal(size=2)
        elif s == "stick":
            r[3 * i : 3 * i + 3] = [rn, *(mu * rn * (1.0 if at_cone_edge else 0.5) * e)]
        else:
            r[3 * i : 3 * i + 3] = [rn, *(mu * rn * e)]
            u[3 * i + 1 : 3 * i + 3] = -rng.uniform(0.3, 1.0) * e
    return W, u - W @ r, np.full(nc, mu)


SOLVE_N = jax.jit(lambda W, q, mu: newton(W, q, mu, tol=1e-15, iterations=60).r)
SOLVE_G = jax.jit(lambda W, q, mu: nsgs(W, q, mu, tol=1e-15, iterations=3000).r)
SOLVE_U = jax.jit(lambda W, q, mu: nsgs(W, q, mu, iterations=80, differentiation="unroll").r)


def fd_check(solve, W, q, mu, seed=1):
    """Gradient of L = cᵀ r in q, μ and along a symmetric direction of W, against central differences."""
    rng = np.random.default_rng(seed)
    c = rng.normal(size=q.size)
    dW = rng.normal(size=W.shape)
    dW = dW + dW.T
    L = lambda W, q, mu: jnp.dot(c, solve(W, q, mu))
    gW, gq, gmu = jax.grad(L, argnums=(0, 1, 2))(W, q, mu)
    for g, x, name in ((gq, q, "q"), (gmu, mu, "mu")):
        fd = np.zeros_like(x)
        for k in range(x.size):
            e = np.zeros_like(x)
            e[k] = H
            args_p = (W, x + e, mu) if name == "q" else (W, q, x + e)
            args_m = (W, x - e, mu) if name == "q" else (W, q, x - e)
            fd[k] = (float(L(*args_p)) - float(L(*args_m))) / (2 * H)
        np.testing.assert_allclose(
            np.asarray(g), fd, rtol=0, atol=1e-6 * max(1.0, np.abs(fd).max()), err_msg=f"gradient in {name}"
        )
    fdW = (float(L(W + H * dW, q, mu)) - float(L(W - H * dW, q, mu))) / (2 * H)
    assert float(jnp.sum(gW * dW)) == pytest.approx(fdW, abs=1e-6 * max(1.0, abs(fdW)))


@pytest.mark.parametrize(
    "states", [("stick", "stick"), ("slide", "slide"), ("separate", "slide"), ("stick", "slide", "separate")]
)
def test_newton_implicit_gradient_matches_finite_differences(states):
    fd_check(SOLVE_N, *problem(states))


@pytest.mark.parametrize("states", [("stick", "slide"), ("slide", "separate")])
def test_nsgs_implicit_gradient_matches_finite_differences(states):
    fd_check(SOLVE_G, *problem(states, seed=3))


@pytest.mark.slow  # reverse mode through 80 unrolled sweeps compiles for about a minute on 2 cores
def test_nsgs_unrolled_gradient_matches_finite_differences():
    fd_check(SOLVE_U, *problem(("stick", "slide"), seed=3))


@pytest.mark.parametrize("kind", ["grazing", "stick_slip"])
def test_gradient_is_finite_at_regime_boundaries(kind):
    if kind == "grazing":  # r = 0 and u_N = 0 on the first contact
        W, q, mu = problem(("separate", "slide"), grazing=True)
    else:  # sticking exactly on the cone's boundary
        W, q, mu = problem(("stick", "slide"), at_cone_edge=True)
    for solve in (SOLVE_N, SOLVE_G):
        g = jax.grad(lambda W, q, mu: jnp.sum(solve(W, q, mu)), argnums=(0, 1, 2))(W, q, mu)
        assert all(bool(jnp.all(jnp.isfinite(x))) for x in g)


def test_gradient_through_redundant_sticking_contacts_is_the_momentum_it_stops():
    """A box landing flat on its four bottom corners with high friction: all four stick, twelve rows of W of rank
    six, so r is not unique (J singular) — but the impulse on the box, Hᵀ r = −M v, is. Its gradient in the
    box's free velocity v is −M, whatever solution the solver picked."""
    a, b, c = 0.05, 0.03, 0.02
    mass, inertia = 0.37, np.array([1.5e-4, 2.5e-4, 3.0e-4])
    rows = []
    for x in (-a, a):
        for y in (-b, b):
            p = np.array([x, y, -c])
            for d in np.eye(3)[[2, 0, 1]]:  # normal, then the two tangents
                rows.append(np.concatenate([d, np.cross(p, d)]))
    H = np.array(rows)
    M = np.diag([mass] * 3 + list(inertia))
    W = H @ np.linalg.solve(M, H.T)
    assert np.linalg.matrix_rank(W) == 6
    mu = np.full(4, 2.0)
    v = jnp.array([0.1, 0.05, -1.0, 0.2, -0.1, 0.05])
    weights = jnp.array([1.0, -2.0, 0.5, 3.0, 1.0, -1.0])
    for solve in (SOLVE_N, SOLVE_G):

        def loss(v):
            return jnp.dot(weights, H.T @ solve(W, H @ v, mu))

        assert float(loss(v)) == pytest.approx(-float(weights @ (M @ v)), rel=1e-9)
        np.testing.assert_allclose(np.asarray(jax.grad(loss)(v)), -M @ np.asarray(weights), rtol=1e-9, atol=0)
