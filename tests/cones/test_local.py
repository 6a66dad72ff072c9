"""One contact's exact solve: the fast slide (Newton on the slide angle) and the tabulated search behind it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.cones import local
from jaxcontact.cones.local import local_error, local_solve, local_solve_all
from tests.cones.test_properties import known_solution_problem


def sliding_contacts(n=40, seed=7):
    """Anisotropic, non-symmetric blocks whose one-contact solution slides."""
    rng = np.random.default_rng(seed)
    Bs, cs, rs, mus = [], [], [], []
    for _ in range(n):
        mu = rng.uniform(0.2, 1.2)
        W, q, r = known_solution_problem(rng, ["slide"], np.array([mu]))
        W = W + 0.2 * rng.normal(size=(3, 3)) * np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]])
        q = np.zeros(3)
        q[1:] = -rng.uniform(0.1, 1.0) * r[1:] / np.linalg.norm(r[1:])  # slip opposite the friction
        q -= W @ r
        Bs.append(W), cs.append(q), rs.append(r), mus.append(mu)
    return (jnp.asarray(np.array(x)) for x in (Bs, cs, rs, mus))


def candidates(B, C, mu, R_old=None):
    """The take-off / stick / fast-slide candidate of each contact, the contacts as lanes (the fast slide from
    ``R_old``'s tangential direction, by default none)."""
    R_old = jnp.zeros_like(C) if R_old is None else R_old
    # A new function each call: traced with the module's step counts of the moment.
    R, exact = jax.jit(lambda *a: local._candidate_lanes(*a))(jnp.moveaxis(B, 0, -1), C.T, mu, R_old.T)
    return R.T, exact


def turned(R, angle):
    """R with its tangential part turned by ``angle``."""
    c, s = np.cos(angle), np.sin(angle)
    return jnp.stack([R[:, 0], c * R[:, 1] - s * R[:, 2], s * R[:, 1] + c * R[:, 2]], axis=1)


def check(R, B, C, mu):
    """Every r solves its contact's problem (a non-symmetric block may have more than one solution)."""
    err = jax.vmap(lambda r, b, c, m: local_error(r, b @ r + c, m))(R, B, C, mu)
    assert float(jnp.max(err)) <= 1e-12 * max(1.0, float(jnp.max(jnp.abs(C))))


def test_fast_slide_is_exact_and_single_equals_batched():
    B, C, _, mu = sliding_contacts()
    R, exact = candidates(B, C, mu)
    assert bool(jnp.all(exact))
    check(R, B, C, mu)
    zeros = jnp.zeros_like(C)
    R_all = jax.jit(lambda B, C, mu: local_solve_all(B, C, mu, zeros))(B, C, mu)
    np.testing.assert_allclose(R_all, R, atol=1e-13)


def test_fast_slide_from_a_warm_start_needs_only_its_few_steps_and_falls_back_from_a_bad_one(monkeypatch):
    """From a sweep's previous iterate, whose slip has turned little, ``WARM_SLIDE`` steps reach the slide: with
    the cold steps from the stick's direction disabled every lane is still exact. From a start turned far away,
    the lanes it leaves inexact get the cold steps, and every candidate is exact again."""
    B, C, R, mu = sliding_contacts()
    cold_steps = local.SLIDE_NEWTON
    Rs, exact = candidates(B, C, mu, turned(R, 0.01))
    assert bool(jnp.all(exact))
    check(Rs, B, C, mu)
    monkeypatch.setattr(local, "SLIDE_NEWTON", 0)
    Rs, exact = candidates(B, C, mu, turned(R, 0.01))
    assert bool(jnp.all(exact))
    check(Rs, B, C, mu)
    assert int(jnp.sum(~candidates(B, C, mu, turned(R, 2.5))[1])) >= 1  # far starts: the warm steps alone miss
    monkeypatch.setattr(local, "SLIDE_NEWTON", cold_steps)
    Rs, exact = candidates(B, C, mu, turned(R, 2.5))
    assert bool(jnp.all(exact))
    check(Rs, B, C, mu)


@pytest.mark.slow  # compiles the tabulated search three ways
def test_tabulated_search_takes_over_when_the_fast_slide_misses(monkeypatch):
    """Without Newton steps the fast slide is the stick direction: inexact on these blocks, the search must answer."""
    monkeypatch.setattr(local, "SLIDE_NEWTON", 0)
    monkeypatch.setattr(local, "WARM_SLIDE", 0)
    B, C, _, mu = sliding_contacts()
    _, exact = candidates(B, C, mu)
    assert int(jnp.sum(~exact)) >= len(mu) // 2
    zeros = jnp.zeros_like(C)
    R = jax.jit(jax.vmap(lambda b, c, m, z: local_solve(b, c, m, z)))(B, C, mu, zeros)
    check(R, B, C, mu)
    R = jax.jit(lambda B, C, mu: local_solve_all(B, C, mu, zeros))(B, C, mu)
    check(R, B, C, mu)


@pytest.mark.slow  # minutes of compile on a 2-core machine: outside the default run (CI)
def test_reverse_gradient_of_a_head_on_stick_is_the_inverse_block():
    """A head-on impact on an isotropic block (a sphere dropped on a plane): c_T = 0, so the stick solution
    r = −B⁻¹c has no tangential part and the fast slide starts from an undefined angle. The slide is
    discarded, and its start must not poison the reverse pass: ∂r/∂c = −B⁻¹ in both modes."""
    B = jnp.diag(jnp.asarray([1.0, 3.5, 3.5]))  # a unit-mass solid sphere: 1/m normal, 1/m + r²/I tangential
    c, mu, zero = jnp.asarray([-1.0, 0.0, 0.0]), jnp.asarray(0.2), jnp.zeros(3)
    solve = lambda c: local_solve(B, c, mu, zero)
    exact = -np.linalg.inv(np.asarray(B))
    np.testing.assert_allclose(jax.jit(jax.jacrev(solve))(c), exact, rtol=1e-14, atol=0)
    np.testing.assert_allclose(jax.jit(jax.jacfwd(solve))(c), exact, rtol=1e-14, atol=0)
