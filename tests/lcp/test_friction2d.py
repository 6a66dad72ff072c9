"""Planar frictional contact: NSGS, the planar friction LCP, and the Siconos fc2d reader.

Independent references (numpy, nothing shared with the solver):
* ``coulomb_enumeration`` — every solution of the frictional problem, by
  enumerating each contact's state (take-off, stick, slide ±) and solving the
  resulting linear system; a candidate is kept when ``coulomb_violation`` says
  it satisfies the laws.
* ``lcp_enumeration`` — every solution of an LCP by enumerating complementary
  bases (2^n linear solves; n = 3 nc ≤ 9 here). Applied to ``friction_lcp`` it
  stands in for Lemke until ``jaxcontact.lcp.lemke`` lands; the Lemke test
  below runs as soon as it does.
* ``coulomb_violation`` — the laws checked directly: r_N ≥ 0, u_N ≥ 0,
  r_N u_N = 0, |r_T| ≤ μ r_N, and u_T ≠ 0 ⇒ r_T = −μ r_N sgn(u_T).
"""

import functools
import itertools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.lcp.fc2d_io import block_permutation, bundled_dir, load_bundled, read_fc2d
from jaxcontact.lcp.friction2d import coulomb_residual, fc2d_error, friction_lcp, from_lcp_solution, nsgs

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "fc2d_siconos"
GRANULAR = SHARED / "fc2d_granularflowonwall_00667_00000.dat"
SLIDER = {p.name: p for p in load_bundled()}

# Sweeps used by the converging solves (one compilation per problem size and dtype):
# ≥ the 400 random problems need (cond(W) ≤ 100, μ ≤ 1) and the 475–492 of the slider–crank at ω = 1.
N = 500


def _nsgs(W, q, mu, active, r0, omega, *, iterations):
    return nsgs(W, q, mu, iterations=iterations, omega=omega, active=active, r0=r0)


_solve = jax.jit(_nsgs, static_argnames=("iterations",))
_solve_batch = jax.jit(jax.vmap(functools.partial(_nsgs, iterations=N)))


def _defaults(W, q, mu, omega, active, r0):
    """Mask, warm start and ω always passed as arrays, so that calls share compilations."""
    nc = jnp.shape(mu)[-1]
    lead = jnp.shape(mu)[:-1]
    dtype = jnp.result_type(W, q, 1.0)
    active = jnp.ones(lead + (nc,), bool) if active is None else active
    r0 = jnp.zeros(lead + (2 * nc,), dtype) if r0 is None else r0
    return W, q, mu, active, r0, jnp.full(lead, omega, dtype)


def nsgs_jit(W, q, mu, *, iterations, omega=1.0, active=None, r0=None):
    return _solve(*_defaults(W, q, mu, omega, active, r0), iterations=iterations)


def nsgs_batch(W, q, mu, *, active=None, r0=None):
    """N sweeps on a batch of problems (leading axis)."""
    return _solve_batch(*_defaults(W, q, mu, 1.0, active, r0))


# ---------------------------------------------------------------- references


def coulomb_violation(W, q, mu, r):
    """Largest violation of the planar Coulomb–Signorini laws, relative to max(1, |q|, |r|)."""
    nc = len(mu)
    u = W @ r + q
    rN, rT, uN, uT = r[:nc], r[nc:], u[:nc], u[nc:]
    s = max(1.0, np.abs(q).max(), np.abs(r).max())
    v = [
        np.maximum(-rN, 0),
        np.maximum(-uN, 0),
        np.abs(rN * uN) / s,
        np.maximum(np.abs(rT) - mu * rN, 0),
        np.abs(uT) * np.abs(rT + mu * rN * np.sign(uT)) / s,
    ]
    return max(x.max() for x in v) / s


def coulomb_enumeration(W, q, mu, tol=1e-9):
    """All solutions r, from the 4^nc per-contact states (0 take-off, 1 stick, 2/3 slide ∓)."""
    nc = len(mu)
    n = 2 * nc
    sols = []
    for states in itertools.product(range(4), repeat=nc):
        A, b = np.zeros((n, n)), np.zeros(n)
        for i, s in enumerate(states):
            iN, iT = i, nc + i
            if s == 0:
                A[iN, iN] = A[iT, iT] = 1.0
            elif s == 1:
                A[iN], b[iN], A[iT], b[iT] = W[iN], -q[iN], W[iT], -q[iT]
            else:
                A[iN], b[iN] = W[iN], -q[iN]
                A[iT, iT], A[iT, iN] = 1.0, mu[i] if s == 2 else -mu[i]
        try:
            r = np.linalg.solve(A, b)
        except np.linalg.LinAlgError:
            continue
        if np.all(np.isfinite(r)) and coulomb_violation(W, q, mu, r) < tol:
            sols.append(r)
    return sols


def lcp_enumeration(M, q, tol=1e-9):
    """All solutions z of LCP(M, q) over the 2^n complementary bases."""
    n = len(q)
    sols = []
    for mask in itertools.product((False, True), repeat=n):
        B = np.array(mask)
        z = np.zeros(n)
        if B.any():
            try:
                z[B] = np.linalg.solve(M[np.ix_(B, B)], -q[B])
            except np.linalg.LinAlgError:
                continue
        w = M @ z + q
        scale = max(1.0, np.abs(z).max())
        if z.min() >= -tol * scale and w.min() >= -tol * scale:
            sols.append(z)
    return sols


def distinct(rs, tol=1e-7):
    out = []
    for r in rs:
        if all(np.abs(r - o).max() > tol * max(1.0, np.abs(o).max()) for o in out):
            out.append(r)
    return out


def delassus(seed, nc, *, max_cond=100.0):
    """W = J M⁻¹ Jᵀ of a random system (SPD mass M, full-row-rank J with 2 more columns than rows),
    redrawn until cond(W) ≤ max_cond; q ~ N(0, 1); μ ~ U(0, 1)."""
    rng = np.random.default_rng(seed)
    n = 2 * nc
    m = n + 2
    while True:
        J = rng.standard_normal((n, m))
        L = rng.standard_normal((m, m))
        M = L @ L.T + m * np.eye(m)
        W = J @ np.linalg.solve(M, J.T)
        if np.linalg.cond(W) <= max_cond:
            break
    return W, rng.standard_normal(n), rng.uniform(0.0, 1.0, nc)


# ---------------------------------------------------------------- reader


def test_slider_crank_files_parse_in_block_order():
    assert sorted(SLIDER) == ["FC2D_SliderCrankLagrangian00000", "FC2D_SliderCrankLagrangian00001"]
    for p in SLIDER.values():
        assert p.W.shape == (4, 4) and p.q.shape == (4,) and p.mu.shape == (2,)
        np.testing.assert_array_equal(p.mu, [0.01, 0.01])
        # The file is per-contact interleaved (N1, T1, N2, T2), one column of W per text line
        # (Siconos' column-major storage): check the permutation on raw tokens.
        tokens = (bundled_dir() / f"{p.name}.dat").read_text().split()
        raw = np.array(tokens[7 : 7 + 16], float).reshape(4, 4).T
        raw_q = np.array(tokens[23:27], float)
        perm = block_permutation(2)
        np.testing.assert_array_equal(perm, [0, 2, 1, 3])
        np.testing.assert_array_equal(p.W, raw[np.ix_(perm, perm)])
        np.testing.assert_array_equal(p.q, raw_q[perm])
        assert p.W[0, 0] == raw[0, 0] and p.W[2, 2] == raw[1, 1]  # N1 and T1 diagonals
    # Siconos 4.5's reader (NM_get_value) on file 00000: W(N1, T1) = −464.2662921766746, the first
    # value of the second line; W(T1, N1) = −464.2665883420583, the second value of the first line.
    p = SLIDER["FC2D_SliderCrankLagrangian00000"]
    assert p.W[0, 2] == -464.2662921766745967 and p.W[2, 0] == -464.2665883420582986


def test_reader_rejects_bad_files(tmp_path):
    good = (bundled_dir() / "FC2D_SliderCrankLagrangian00000.dat").read_text().split("\n")
    bad_storage = tmp_path / "storage.dat"
    bad_storage.write_text("\n".join(good[:2] + ["1"] + good[3:]))
    with pytest.raises(ValueError, match="storage type 1"):
        read_fc2d(bad_storage)
    truncated = tmp_path / "short.dat"
    truncated.write_text("\n".join(good[:9]))
    with pytest.raises(ValueError, match="expected 22 numbers"):
        read_fc2d(truncated)
    wrong_dim = tmp_path / "dim.dat"
    wrong_dim.write_text("\n".join(["3"] + good[1:]))
    with pytest.raises(ValueError, match="dimension must be 2"):
        read_fc2d(wrong_dim)


@pytest.mark.skipif(not GRANULAR.exists(), reason="shared fc2d data not present")
def test_granular_csparse_file_parses():
    p = read_fc2d(GRANULAR)
    assert p.W.shape == (1334, 1334) and p.q.shape == (1334,) and p.mu.shape == (667,)
    assert np.count_nonzero(p.W) == 3822  # the header's nnz
    np.testing.assert_array_equal(p.W, p.W.T)
    assert np.all(p.mu == 0.5) and np.abs(p.q).max() < 1e-18  # a resting pile: q ≈ 0
    assert np.all(np.diag(p.W) > 0)


# ---------------------------------------------------------------- planar friction LCP


@pytest.mark.parametrize("nc,seed", [(1, 0), (1, 1), (2, 2), (2, 3), (3, 4), (3, 5)])
def test_friction_lcp_solutions_are_exactly_the_coulomb_solutions(nc, seed):
    W, q, mu = delassus(seed, nc)
    A, b = (np.asarray(x) for x in friction_lcp(jnp.asarray(W), jnp.asarray(q), jnp.asarray(mu)))
    assert A.shape == (3 * nc, 3 * nc) and np.all(np.diag(A)[2 * nc :] == 0)
    from_lcp = distinct([np.asarray(from_lcp_solution(z, mu)) for z in lcp_enumeration(A, b)])
    direct = distinct(coulomb_enumeration(W, q, mu))
    assert len(direct) >= 1 and len(from_lcp) == len(direct)
    for r in from_lcp:
        assert coulomb_violation(W, q, mu, r) < 1e-9
        assert min(np.abs(r - d).max() for d in direct) < 1e-8 * max(1.0, np.abs(r).max())


def test_friction_lcp_is_pure_and_batches():
    W, q, mu = (np.stack(x) for x in zip(*[delassus(s, 2) for s in range(4)]))
    A, b = jax.jit(jax.vmap(friction_lcp))(W, q, mu)
    for k in range(4):
        Ak, bk = friction_lcp(jnp.asarray(W[k]), jnp.asarray(q[k]), jnp.asarray(mu[k]))
        np.testing.assert_allclose(A[k], Ak, rtol=1e-15, atol=1e-15)
        np.testing.assert_allclose(b[k], bk, rtol=1e-15, atol=1e-15)


# ---------------------------------------------------------------- NSGS on Siconos data


@pytest.mark.parametrize("name", sorted(SLIDER))
def test_nsgs_solves_slider_crank_and_agrees_with_f1_lcp(name):
    p = SLIDER[name]
    W, q, mu = (jnp.asarray(x) for x in (p.W, p.q, p.mu))
    ref = distinct(
        [
            np.asarray(from_lcp_solution(z, p.mu))
            for z in lcp_enumeration(*(np.asarray(x) for x in friction_lcp(W, q, mu)))
        ]
    )
    assert len(ref) == 1  # unique, although W is singular (rank 3: the two tangents coincide)
    ref = ref[0]
    assert coulomb_violation(p.W, p.q, p.mu, ref) < 1e-12
    # Both contacts slide (|r_T| = μ r_N, opposing u_T < 0).
    np.testing.assert_allclose(ref[2:], p.mu * ref[:2], rtol=1e-9)
    for omega in (1.0, 1.7):
        sol = nsgs_jit(W, q, mu, iterations=N, omega=omega)
        assert sol.converged and sol.residual < 1e-10, (omega, sol.residual)
        assert fc2d_error(sol.r, sol.u, mu, q) < 1e-10
        np.testing.assert_allclose(sol.r, ref, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(sol.u, p.W @ np.asarray(sol.r) + p.q, rtol=1e-12, atol=1e-12)
    # Siconos' default (tol 1e-4 on its own error) is far from solved: 200 plain sweeps leave ~2e-5.
    short = nsgs_jit(W, q, mu, iterations=1)
    for _ in range(199):  # 200 sweeps in all (a warm start continues the sweeps exactly)
        short = nsgs_jit(W, q, mu, iterations=1, r0=short.r)
    assert 1e-6 < fc2d_error(short.r, short.u, mu, q) < 1e-4 and not short.converged


# Siconos 4.5 numerics, fc2d_driver with SICONOS_FRICTION_2D_ENUM (its enumerative solver) on the
# two bundled files, reactions as returned (per-contact order N1, T1, N2, T2). Its Lemke agrees on
# 00000 but returns error 1e-5 on 00001 (r_T1 off the cone boundary) with info = 0; its NSGS
# (tol 1e-4) stops after 168 / 169 sweeps.
SICONOS_ENUM = {
    "FC2D_SliderCrankLagrangian00000": [
        0.05577941765543285,
        0.0005577941765544,
        0.05522439857428437,
        0.00055224398574259,
    ],
    "FC2D_SliderCrankLagrangian00001": [
        0.04452520862608488,
        0.00044525208626081,
        0.04408217172450819,
        0.00044082171724512,
    ],
}


@pytest.mark.parametrize("name", sorted(SLIDER))
def test_nsgs_matches_siconos_enumerative_solver(name):
    p = SLIDER[name]
    sol = nsgs_jit(*(jnp.asarray(x) for x in (p.W, p.q, p.mu)), iterations=N, omega=1.7)
    ref = np.asarray(SICONOS_ENUM[name])[block_permutation(2)]
    np.testing.assert_allclose(sol.r, ref, rtol=1e-11)


@pytest.mark.slow
@pytest.mark.skipif(not GRANULAR.exists(), reason="shared fc2d data not present")
def test_nsgs_on_granular_delassus_matrix():
    """667 contacts: Siconos' W with a compressive q (the file's own q ≈ 0 gives r = 0)."""
    p = read_fc2d(GRANULAR)
    rng = np.random.default_rng(0)
    nc = p.mu.size
    q = np.concatenate([-rng.uniform(0.0, 1.0, nc), rng.uniform(-1.0, 1.0, nc)])
    trivial = nsgs_jit(jnp.asarray(p.W), jnp.asarray(p.q), jnp.asarray(p.mu), iterations=1)
    assert trivial.converged and np.abs(trivial.r).max() < 1e-18
    sol = nsgs_jit(jnp.asarray(p.W), jnp.asarray(q), jnp.asarray(p.mu), iterations=300)
    assert sol.converged, sol.residual
    assert coulomb_violation(p.W, q, p.mu, np.asarray(sol.r)) < 1e-9


# ---------------------------------------------------------------- random problems

RANDOM = {nc: [delassus(1000 * nc + s, nc) for s in range(24)] for nc in (1, 2, 3)}


@pytest.mark.parametrize("nc", [1, 2, 3])
def test_nsgs_random_delassus_problems_against_enumeration(nc):
    W, q, mu = (np.stack(x) for x in zip(*RANDOM[nc]))
    sol = nsgs_batch(W, q, mu)
    assert np.all(sol.converged), sol.residual
    rN, rT = np.asarray(sol.r[:, :nc]), np.asarray(sol.r[:, nc:])
    off, slide = rN == 0, (rN > 0) & (np.abs(np.abs(rT) - mu * rN) < 1e-9)
    stick = ~off & ~slide
    if nc > 1:  # the set exercises every contact state
        assert off.any() and slide.any() and stick.any()
    for k in range(len(W)):
        r = np.asarray(sol.r[k])
        assert coulomb_violation(W[k], q[k], mu[k], r) < 1e-10
        ref = distinct(coulomb_enumeration(W[k], q[k], mu[k]))
        assert len(ref) >= 1
        if len(ref) == 1:
            np.testing.assert_allclose(r, ref[0], rtol=1e-8, atol=1e-10)
        else:  # a non-unique problem: NSGS found one of them
            assert min(np.abs(r - d).max() for d in ref) < 1e-8


def test_nsgs_cycling_is_reported_not_hidden():
    """NSGS has no convergence guarantee for Coulomb friction. On this 2-contact problem
    (cond(W) ≈ 50, μ ≈ 0.8, strong normal–tangent coupling) plain sweeps (ω = 1) cycle with
    period 4 around the unique solution: converged must say so. Under-relaxation (ω = 0.7)
    reaches the solution."""
    W = np.array(
        [
            [2.1627, 0.7311, 0.1339, -1.4563],
            [0.7311, 0.5781, -0.1518, -0.9326],
            [0.1339, -0.1518, 0.4649, 0.1096],
            [-1.4563, -0.9326, 0.1096, 1.9232],
        ]
    )
    q = np.array([0.4795, -0.0753, -0.2941, -0.9148])
    mu = np.array([0.7906, 0.6051])
    ref = distinct(coulomb_enumeration(W, q, mu))
    assert len(ref) == 1  # both contacts slide with r_T = +μ r_N
    args = [jnp.asarray(x) for x in (W, q, mu)]
    cyc = nsgs_jit(*args, iterations=N)
    for _ in range(4):  # every phase of the cycle
        assert not cyc.converged and cyc.residual > 1e-2
        assert np.abs(np.asarray(cyc.r) - ref[0]).max() > 0.1  # really not the solution
        cyc = nsgs_jit(*args, iterations=1, r0=cyc.r)
    relaxed = nsgs_jit(*args, iterations=N, omega=0.7)
    assert relaxed.converged
    np.testing.assert_allclose(relaxed.r, ref[0], rtol=1e-8)


# ---------------------------------------------------------------- analytic and special cases


@pytest.mark.parametrize("vT", [0.0, 0.3, -0.49, 0.51, -2.0, 5.0])
def test_block_on_plane_sticks_or_slides(vT):
    """A point mass m on a plane, approaching with normal velocity vN < 0 and tangential vT:
    W = I/m. It sticks (u = 0, r = −m v) iff |vT| ≤ μ|vN|; otherwise it slides with
    r_T = −μ r_N sgn(vT) and u_T = vT − μ|vN| sgn(vT)."""
    m, mu, vN = 2.0, 0.5, -1.0
    W = jnp.eye(2) / m
    q = jnp.array([vN, vT])
    sol = nsgs_jit(W, q, jnp.array([mu]), iterations=1)
    rN = -m * vN
    if abs(vT) <= mu * abs(vN):
        np.testing.assert_allclose(sol.r, [rN, -m * vT], rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(sol.u, [0.0, 0.0], atol=1e-15)
    else:
        np.testing.assert_allclose(sol.r, [rN, -mu * rN * np.sign(vT)], rtol=1e-14)
        np.testing.assert_allclose(sol.u, [0.0, vT - mu * abs(vN) * np.sign(vT)], rtol=1e-14, atol=1e-15)
    assert sol.converged and sol.residual == 0.0


def test_no_contacts():
    sol = nsgs(jnp.zeros((0, 0)), jnp.zeros(0), jnp.zeros(0), iterations=5)
    assert sol.r.shape == (0,) and sol.converged and sol.residual == 0.0


def test_separating_contact_gets_no_impulse():
    sol = nsgs_jit(jnp.eye(2), jnp.array([0.3, -4.0]), jnp.array([0.5]), iterations=1)
    np.testing.assert_array_equal(sol.r, [0.0, 0.0])
    assert sol.converged


def test_box_corner_with_rotation_single_contact():
    """One corner of a rotating box on the ground: the 2×2 Delassus block is coupled (W_NT ≠ 0),
    and one exact local solve must give the enumerated solution."""
    m, J, (px, py) = 1.0, 1.0 / 6.0, (0.5, -0.5)  # corner offset from the centre
    Jc = np.array([[0.0, 1.0, px], [1.0, 0.0, -py]])  # rows: normal (y), tangent (x) velocity
    W = Jc @ np.diag([1 / m, 1 / m, 1 / J]) @ Jc.T
    assert abs(W[0, 1]) > 0.1
    for q in ([-1.0, 0.2], [-1.0, 2.0], [-1.0, -2.0], [-0.1, 0.05]):
        q = np.array(q)
        ref = distinct(coulomb_enumeration(W, q, np.array([0.6])))
        sol = nsgs_jit(jnp.asarray(W), jnp.asarray(q), jnp.array([0.6]), iterations=1)
        assert len(ref) == 1 and sol.converged
        np.testing.assert_allclose(sol.r, ref[0], rtol=1e-12, atol=1e-14)


def test_frictionless_contacts_give_the_normal_lcp_solution():
    W, q, _ = delassus(7, 3)
    mu = np.zeros(3)
    sol = nsgs_jit(*(jnp.asarray(x) for x in (W, q, mu)), iterations=N)
    np.testing.assert_array_equal(sol.r[3:], 0.0)
    # Frictionless: r_T = 0 and the normal part is LCP(W_NN, q_N), enumerated independently.
    ref = distinct(lcp_enumeration(W[:3, :3], q[:3]))
    assert len(ref) == 1 and sol.converged
    np.testing.assert_allclose(sol.r[:3], ref[0], rtol=1e-9, atol=1e-12)


def test_mixed_frictionless_and_frictional_contacts():
    W, q, mu = delassus(8, 3)
    mu[1] = 0.0
    sol = nsgs_jit(*(jnp.asarray(x) for x in (W, q, mu)), iterations=N)
    ref = distinct(coulomb_enumeration(W, q, mu))
    assert len(ref) == 1 and sol.converged
    assert sol.r[4] == 0.0
    np.testing.assert_allclose(sol.r, ref[0], rtol=1e-9, atol=1e-12)


def test_inactive_contacts_get_zero_impulse_and_do_not_disturb_the_rest():
    W, q, mu = delassus(9, 3)
    active = np.array([True, False, True])
    sol = nsgs_jit(*(jnp.asarray(x) for x in (W, q, mu)), iterations=N, active=jnp.asarray(active))
    assert sol.r[1] == 0.0 and sol.r[4] == 0.0
    keep = np.array([0, 2, 3, 5])
    ref = distinct(coulomb_enumeration(W[np.ix_(keep, keep)], q[keep], mu[[0, 2]]))
    assert len(ref) == 1 and sol.converged
    np.testing.assert_allclose(sol.r[keep], ref[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sol.u, W @ np.asarray(sol.r) + q, rtol=1e-12, atol=1e-12)
    # The residual ignores the inactive contact (its u_N may well be negative).
    assert float(coulomb_residual(sol.r, sol.u, jnp.asarray(mu), jnp.asarray(q))) >= float(sol.residual)
    none = nsgs_jit(*(jnp.asarray(x) for x in (W, q, mu)), iterations=1, active=jnp.zeros(3, bool))
    np.testing.assert_array_equal(none.r, 0.0)
    assert none.converged and none.residual == 0.0


def test_vmap_equals_single_runs_with_masks_and_warm_starts():
    probs = RANDOM[3][:8]
    W, q, mu = (np.stack(x) for x in zip(*probs))
    rng = np.random.default_rng(3)
    active = rng.random((8, 3)) < 0.7
    r0 = np.abs(rng.standard_normal((8, 6)))
    out = nsgs_batch(W, q, mu, active=active, r0=r0)
    for k in range(8):
        one = nsgs_jit(
            jnp.asarray(W[k]),
            jnp.asarray(q[k]),
            jnp.asarray(mu[k]),
            iterations=N,
            active=jnp.asarray(active[k]),
            r0=jnp.asarray(r0[k]),
        )
        for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(jax.tree.map(lambda x: x[k], out))):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_warm_start_at_the_solution_stays_there():
    W, q, mu = (jnp.asarray(x) for x in RANDOM[2][4])  # one contact sticks, one slides
    sol = nsgs_jit(W, q, mu, iterations=N)
    again = nsgs_jit(W, q, mu, iterations=1, r0=sol.r)
    assert again.converged
    np.testing.assert_allclose(again.r, sol.r, rtol=1e-12, atol=1e-14)
    cold = nsgs_jit(W, q, mu, iterations=1)
    assert cold.residual > again.residual


@pytest.mark.parametrize("name", sorted(SLIDER))
def test_float32(name):
    p = SLIDER[name]
    args = [jnp.asarray(x, jnp.float32) for x in (p.W, p.q, p.mu)]
    sol = nsgs_jit(*args, iterations=N, omega=1.7)
    assert sol.r.dtype == jnp.float32 and sol.u.dtype == jnp.float32 and sol.residual.dtype == jnp.float32
    assert sol.converged and sol.residual <= 1e-4  # default float32 tolerance
    ref = nsgs_jit(*(jnp.asarray(x) for x in (p.W, p.q, p.mu)), iterations=N, omega=1.7)
    np.testing.assert_allclose(sol.r, ref.r, rtol=2e-3)


def test_float32_random_batch():
    W, q, mu = (np.stack(x).astype(np.float32) for x in zip(*RANDOM[2]))
    out = nsgs_batch(W, q, mu)
    assert out.r.dtype == jnp.float32
    assert np.all(out.converged), out.residual
    ref = nsgs_batch(*(x.astype(np.float64) for x in (W, q, mu)))
    np.testing.assert_allclose(out.r, ref.r, rtol=1e-3, atol=1e-4)


def _weighted_r(W, q, mu):
    return jnp.dot(jnp.arange(1.0, 5.0), nsgs(W, q, mu, iterations=N).r)


_grad = jax.jit(jax.grad(_weighted_r, argnums=(0, 1, 2)))


def test_gradient_through_unrolled_sweeps_matches_finite_differences():
    """d(r)/d(W, q, μ) at a non-degenerate point (one contact sticks, one slides) by reverse mode
    through the sweeps vs central differences of the converged solution."""
    W, q, mu = RANDOM[2][4]
    sol = nsgs_jit(*(jnp.asarray(x) for x in (W, q, mu)), iterations=N)
    assert sol.converged
    rN, rT = np.asarray(sol.r[:2]), np.asarray(sol.r[2:])
    assert np.all(rN > 0.1)
    assert abs(rT[0]) < mu[0] * rN[0] - 0.1 and abs(abs(rT[1]) - mu[1] * rN[1]) < 1e-9
    grads = _grad(*(jnp.asarray(x) for x in (W, q, mu)))

    def f(args):
        return float(jnp.dot(jnp.arange(1.0, 5.0), nsgs_jit(*map(jnp.asarray, args), iterations=N).r))

    h = 1e-6
    for which, g in enumerate(grads):
        x = (W, q, mu)[which]
        for i in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[i] = h
            plus, minus = [W, q, mu], [W, q, mu]
            plus[which], minus[which] = x + e, x - e
            fd = (f(plus) - f(minus)) / (2 * h)
            np.testing.assert_allclose(g[i], fd, rtol=1e-5, atol=1e-7)


def test_gradients_are_finite_in_every_contact_state():
    """Take-off, stick, slide, frictionless and exactly-degenerate data: no NaN from the local solve."""
    cases = list(RANDOM[2]) + [
        (np.eye(4), np.zeros(4), np.zeros(2)),  # q = 0: r = 0 at the kink
        (np.eye(4), np.array([-1.0, 0.0, 0.0, 0.0]), np.array([0.5, 0.0])),
    ]
    for W, q, mu in cases:
        for g in _grad(*(jnp.asarray(x) for x in (W, q, mu))):
            assert np.all(np.isfinite(g))


def test_input_errors_name_the_value_and_rule():
    W, q, mu = (jnp.asarray(x) for x in RANDOM[2][0])
    with pytest.raises(ValueError, match=r"mu\[1\] = -0.1"):
        nsgs(W, q, jnp.array([0.2, -0.1]), iterations=5)
    with pytest.raises(ValueError, match="q must have shape"):
        nsgs(W, q[:3], mu, iterations=5)
    with pytest.raises(ValueError, match="mu must have shape"):
        nsgs(W, q, mu[:1], iterations=5)
    with pytest.raises(ValueError, match="active must have shape"):
        nsgs(W, q, mu, iterations=5, active=jnp.ones(3, bool))
    with pytest.raises(ValueError, match="omega"):
        nsgs(W, q, mu, iterations=5, omega=2.5)
    with pytest.raises(ValueError, match="iterations"):
        nsgs(W, q, mu, iterations=-1)
    with pytest.raises(ValueError, match="finite"):
        nsgs(W.at[0, 0].set(jnp.nan), q, mu, iterations=5)
    with pytest.raises(ValueError, match=r"W must have shape \(2 nc, 2 nc\) = \(4, 4\)"):
        nsgs(W[:3, :3], q, mu, iterations=5)
    with pytest.raises(ValueError, match="friction_lcp: mu must have shape"):
        friction_lcp(W, q, mu[:1])


# ---------------------------------------------------------------- Lemke (engineer H1's solver)


@pytest.mark.parametrize("nc", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_lemke_on_friction_lcp_agrees_with_nsgs(nc):
    """Lemke (one compilation per LCP size, ~10 s) on the planar friction LCP vs NSGS, slider–crank included."""
    lemke = pytest.importorskip("jaxcontact.lcp.lemke").lemke
    lemke_batch = jax.jit(jax.vmap(lambda W, q, mu: lemke(*friction_lcp(W, q, mu))))
    group = RANDOM[nc] + ([(p.W, p.q, p.mu) for p in SLIDER.values()] if nc == 2 else [])
    W, q, mu = (np.stack(x) for x in zip(*group))
    lem = lemke_batch(W, q, mu)
    assert np.all(lem.converged)
    r_lemke = np.asarray(jax.vmap(from_lcp_solution)(lem.z, mu))
    omega = np.where(mu[:, 0] == 0.01, 1.7, 1.0)  # the slider–crank converges faster with ω = 1.7
    sol = _solve_batch(*_defaults(W, q, mu, 1.0, None, None)[:5], omega)
    assert np.all(sol.converged)
    for k in range(len(W)):
        assert coulomb_violation(W[k], q[k], mu[k], r_lemke[k]) < 1e-9
        np.testing.assert_allclose(sol.r[k], r_lemke[k], rtol=1e-8, atol=1e-10)


def test_residual_definitions_on_a_hand_computed_case():
    """One contact, μ = 0.5, r = (1, 0), u = (0, 1): normal law holds, but r_T = 0 inside the cone
    with u_T ≠ 0 breaks Coulomb. Natural map: e_T = 0 − clip(−1, −0.5, 0.5) = 0.5. Siconos:
    r − ũ = (0.5, −1) projects onto the cone at n' = (0.5·1 + 0.5)/1.25 = 0.8, t' = −0.4,
    error ‖(0.2, 0.4)‖ = √0.2 (‖q‖ = 1)."""
    r, u, mu, q = jnp.array([1.0, 0.0]), jnp.array([0.0, 1.0]), jnp.array([0.5]), jnp.array([-1.0, 0.0])
    assert float(coulomb_residual(r, u, mu, q)) == pytest.approx(0.5, rel=1e-15)
    assert float(fc2d_error(r, u, mu, q)) == pytest.approx(np.sqrt(0.2), rel=1e-14)
    # At a solution both vanish: sliding r_T = −μ r_N with u_T > 0.
    assert float(coulomb_residual(r.at[1].set(-0.5), u, mu, q)) == 0.0
    assert float(fc2d_error(r.at[1].set(-0.5), u, mu, q)) < 1e-15


def test_single_contact_runs_one_exact_sweep():
    W, q, mu = (jnp.asarray(x) for x in RANDOM[1][0])
    sol = jax.jit(functools.partial(nsgs, iterations=50))(W, q, mu)
    assert int(sol.iterations) == 1 and sol.converged
    relaxed = nsgs_jit(W, q, mu, iterations=N, omega=0.8)  # ω ≠ 1: all sweeps, same solution
    assert int(relaxed.iterations) == N
    np.testing.assert_allclose(relaxed.r, sol.r, rtol=1e-12, atol=1e-14)


def test_loop_and_unrolled_contact_sweeps_agree():
    """The two contact-loop implementations (chosen by nc) compute the same sweeps."""
    from jaxcontact.lcp import friction2d as f2

    W, q, mu = (jnp.asarray(x) for x in RANDOM[3][10])  # slide, stick, stick
    active = jnp.array([True, True, True])
    table = f2._local_table(W, mu, active)
    loop = jax.jit(f2._sweeps_loop, static_argnames=("iterations",))(
        W, q, jnp.zeros(6), table, jnp.asarray(1.0), iterations=N
    )
    np.testing.assert_allclose(loop, nsgs_jit(W, q, mu, iterations=N).r, rtol=1e-12, atol=1e-14)


def test_more_contacts_than_the_unroll_limit():
    from jaxcontact.lcp.friction2d import UNROLL_MAX_CONTACTS

    nc = UNROLL_MAX_CONTACTS + 1
    probs = [delassus(77 + s, nc) for s in range(4)]
    W, q, mu = (np.stack(x) for x in zip(*probs))
    sol = jax.jit(jax.vmap(functools.partial(nsgs, iterations=N)))(W, q, mu)
    assert np.all(sol.converged), sol.residual
    for k in range(4):
        ref = distinct(coulomb_enumeration(W[k], q[k], mu[k]))
        assert len(ref) == 1
        np.testing.assert_allclose(sol.r[k], ref[0], rtol=1e-8, atol=1e-10)
