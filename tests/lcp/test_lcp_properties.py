"""Property tests (hypothesis) of Lemke on random P-matrix and SPD problems, sizes 1–12.

Families (each a P-matrix, so every q gives exactly one solution):

* ``sdd`` — non-symmetric, strictly row diagonally dominant with positive
  diagonal. Every principal submatrix is again such a matrix, whose
  eigenvalues lie in Gershgorin discs in the open right half-plane, so every
  principal minor (the product of the eigenvalues) is positive: a P-matrix.
* ``pd_skew`` — B Bᵀ + δI + (C − Cᵀ): xᵀMx = xᵀ(B Bᵀ + δI)x > 0, positive
  definite but not symmetric, hence a P-matrix.
* ``spd`` — B Bᵀ + δI, symmetric positive definite.

The truth is the independent numpy check of z ≥ 0, w ≥ 0 and
complementarity (the solution is unique, so a verified one is *the* one).
Every problem is padded to n = 12 with inert rows (M = I, q = 1) so that one
compiled function serves every size.
"""

import jax
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxcontact.commands.lcp_demo import pad_lcp
from jaxcontact.lcp.lemke import lemke

NMAX = 12
BATCH = 6
FAMILIES = ("sdd", "pd_skew", "spd")
# float32 tolerance: ‖z32 − z64‖∞ ≤ F32_FACTOR · cond₂(M) · eps32 · max(1, ‖z64‖∞).
# Measured on 400 seeded problems of these families: the factor reached 0.8
# (relative errors ≤ 8e-7 at cond ≤ 280); 10 leaves room without hiding a bug.
F32_FACTOR = 10.0

_lemke = jax.jit(lemke)
_lemke_batch = jax.jit(jax.vmap(lemke))


def make_problem(family, n, seed):
    rng = np.random.default_rng(seed)
    if family == "sdd":
        M = rng.normal(size=(n, n))
        np.fill_diagonal(M, 0.0)
        M += np.diag(np.sum(np.abs(M), axis=1) + rng.uniform(0.1, 1.0, size=n))
    else:
        B = rng.normal(size=(n, n))
        M = B @ B.T + rng.uniform(0.1, 1.0) * np.eye(n)
        if family == "pd_skew":
            C = rng.normal(size=(n, n))
            M += C - C.T
    q = rng.normal(size=n) * 10.0 ** rng.uniform(-2, 2)
    return M, q


def assert_solution(M, q, z, tol):
    z = np.asarray(z, np.float64)
    w = M @ z + q
    s = tol * max(1.0, np.max(np.abs(q)))
    assert np.all(z >= -s), z.min()
    assert np.all(w >= -s), w.min()
    assert np.all(np.minimum(np.abs(z), np.abs(w)) <= s)


problem = st.tuples(st.sampled_from(FAMILIES), st.integers(1, NMAX), st.integers(0, 2**32 - 1))


@settings(max_examples=60, deadline=None)
@given(problem)
def test_lemke_solves_p_and_spd_matrices(p):
    M, q = make_problem(*p)
    n = len(q)
    sol = _lemke(*pad_lcp(M, q, NMAX))
    assert bool(sol.converged)
    assert_solution(M, q, np.asarray(sol.z)[:n], 1e-10)
    assert np.all(np.asarray(sol.z)[n:] == 0)


@settings(max_examples=15, deadline=None)
@given(st.lists(problem, min_size=2, max_size=BATCH))
def test_vmap_equals_single_solves(ps):
    padded = [pad_lcp(*make_problem(*p), NMAX) for p in ps]
    padded += padded[-1:] * (BATCH - len(padded))  # one batch shape: one compilation
    Ms = np.stack([m for m, _ in padded])
    qs = np.stack([q for _, q in padded])
    batch = _lemke_batch(Ms, qs)
    for k, (M, q) in enumerate(padded):
        one = _lemke(M, q)
        assert bool(batch.converged[k]) and bool(one.converged)
        assert int(batch.iterations[k]) == int(one.iterations)
        scale = max(1.0, float(np.max(np.abs(one.z))))
        np.testing.assert_allclose(batch.z[k], one.z, rtol=0, atol=1e-12 * scale)


@settings(max_examples=40, deadline=None)
@given(problem)
def test_float32_close_to_float64(p):
    M, q = make_problem(*p)
    Mp, qp = pad_lcp(M, q, NMAX)
    s64 = _lemke(Mp, qp)
    s32 = _lemke(Mp.astype(np.float32), qp.astype(np.float32))
    assert s32.z.dtype == np.float32
    assert bool(s32.converged)  # float32 default tol: residual ≤ 1e-4
    z64 = np.asarray(s64.z)
    err = np.max(np.abs(np.asarray(s32.z, np.float64) - z64))
    bound = F32_FACTOR * np.linalg.cond(M) * np.finfo(np.float32).eps * max(1.0, np.max(np.abs(z64)))
    assert err <= bound, (err, bound)
