"""Restricting a linear system or an LCP to some of its rows at a fixed shape (decouple_rows)."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.lcp import lemke, pgs
from jaxcontact.lcp.rows import decouple_rows
from jaxcontact.stepping.contact_solve import mask_problem

RNG = np.random.default_rng(7)
B = RNG.normal(size=(5, 5))
A = jnp.asarray(B @ B.T + 5 * np.eye(5))  # SPD: a P-matrix, so the LCP has one solution
b = jnp.asarray(RNG.normal(size=5))
ROWS = jnp.asarray([True, False, True, True, False])
KEEP = np.flatnonzero(np.asarray(ROWS))


def test_linear_system_on_the_rows_is_the_sub_system_and_zero_elsewhere():
    K, rhs = decouple_rows(A, b, ROWS, diagonal=3.0, outside=0.0)
    x = np.linalg.solve(np.asarray(K), np.asarray(rhs))
    sub = np.linalg.solve(np.asarray(A)[np.ix_(KEEP, KEEP)], np.asarray(b)[KEEP])
    np.testing.assert_allclose(x[KEEP], sub, rtol=1e-12)
    assert np.all(x[~np.asarray(ROWS)] == 0.0)
    np.testing.assert_array_equal(np.diag(np.asarray(K))[~np.asarray(ROWS)], 3.0)


def test_lcp_on_the_rows_is_the_sub_problem_and_z_zero_elsewhere_for_pivoting_and_iterative_solvers():
    M, q = decouple_rows(A, -jnp.abs(b), ROWS)  # q < 0 on the kept rows: some z > 0 there
    sub = lemke(A[jnp.ix_(KEEP, KEEP)], -jnp.abs(b)[KEEP]).z
    for z in (lemke(M, q).z, pgs(M, q, iterations=500).z):
        np.testing.assert_allclose(np.asarray(z)[KEEP], np.asarray(sub), atol=1e-10)
        assert np.all(np.asarray(z)[~np.asarray(ROWS)] == 0.0)
    assert np.any(np.asarray(sub) > 0)  # a non-trivial solution


def test_moreau_jean_contact_problem_decouples_normal_rows_to_one_and_tangent_rows_to_zero():
    k, active = 2, jnp.asarray([False, True])
    D, c = mask_problem(A[:4, :4], b[:4], active, k, friction=True)
    np.testing.assert_array_equal(np.asarray(c), [1.0, b[1], 0.0, b[3]])
    np.testing.assert_array_equal(np.asarray(D)[0], [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(D)[:, 2], [0.0, 0.0, 1.0, 0.0])


def test_vmap_over_masks_matches_single_calls():
    masks = jnp.asarray([[True] * 5, [False] * 5, list(np.asarray(ROWS))])
    batched = jax.vmap(lambda r: decouple_rows(A, b, r, diagonal=2.0, outside=0.5))(masks)
    for i, r in enumerate(masks):
        single = decouple_rows(A, b, r, diagonal=2.0, outside=0.5)
        for x, y in zip(batched, single):
            np.testing.assert_array_equal(np.asarray(x[i]), np.asarray(y))
