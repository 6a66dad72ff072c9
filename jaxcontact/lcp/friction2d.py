"""Planar frictional contact: block nonsmooth Gauss–Seidel, and Moreau–Jean's planar friction LCP for Lemke.

The problem (one per Moreau–Jean step). With nc contacts, impulses
r = [r_N; r_T] and local velocities u = W r + q, both of length 2 nc in
**block order** [N₁ … N_nc, T₁ … T_nc] (Siconos files are per-contact
interleaved; :mod:`jaxcontact.lcp.fc2d_io` permutes them), find r with, per
contact i,

    0 ≤ u_N ⟂ r_N ≥ 0,   |r_T| ≤ μ r_N,   u_T ≠ 0 ⇒ r_T = −μ r_N sgn(u_T).

(For Newton restitution the stepper folds ε_N γ_N⁻ into q.)

Residual (reported as ``FrictionSolution.residual``). Per active contact the
natural-map residuals of the two laws,

    e_N = r_N − max(0, r_N − u_N)                 (= min(r_N, u_N)),
    e_T = r_T − clip(r_T − u_T, −μ r_N⁺, μ r_N⁺)   (r_N⁺ = max(r_N, 0)),

e = 0 exactly at a solution (e_T = 0 says r_T is the projection of r_T − u_T
on [−μ r_N, μ r_N]: strictly inside ⇒ u_T = 0; on the bound ⇒ u_T opposes
r_T). ``residual = ‖e‖∞ / max(1, ‖q‖∞)`` over active contacts, the same
scaling as the LCP solvers' ``natural_residual``. :func:`fc2d_error` gives
Siconos' own measure (De Saxcé's modified velocity projected on the cone,
‖·‖₂ / ‖q‖₂) for side-by-side comparison with Siconos.

Local solver: exact. Siconos' fc2d_nsgs and most engines sweep the contacts
and solve each contact's 2 × 2 problem with the others frozen. We solve it
exactly by enumerating its four cases — take-off (r = 0 if q̂_N ≥ 0), stick
(u = 0, accepted if r_N ≥ 0 and |r_T| ≤ μ r_N), slide with r_T = −μ r_N
(accepted if u_T ≥ 0) or r_T = +μ r_N (accepted if u_T ≤ 0) — rather than
projecting normal and tangent separately: the exact solve takes the
normal–tangent coupling W_NT of the contact's own block into account, which
the split projection iterates on (slowly when the coupling is strong, as in
the slider–crank data). The first valid case in that order is taken; it is
the unique solution when the 2 × 2 block is positive definite and μ is not
huge. If none is valid (round-off exactly at a stick/slip boundary, or a
non-P block), the slide in the direction the stick solution pushes is used.
Unlike Siconos (which assumes a symmetric block) the block may be
non-symmetric (the slider–crank Delassus matrices are, slightly).

Relaxation: r_i ← r_i + ω (r_i^local − r_i), then clamped back into the
friction cone (only needed for ω > 1). Fixed points do not depend on ω.

Shapes are fixed: contacts with ``active`` False get r = 0 and are ignored
by the residual (their u is still W r + q). The sweep count is static and
there is no residual inside the sweeps; the result is differentiable by
unrolling (``lax.scan``) and batches under ``vmap``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxcontact.lcp.pgs import prepare

# Contact loop: unrolled scalar code up to this many contacts, a fori_loop
# beyond. Under vmap the unrolled sweep is the faster one, but its compile
# time grows with nc² while the loop's stays flat; the stepper's compile
# budget sets the threshold (the timings: bench/RESULTS.md, "Figures moved out
# of the code").
UNROLL_MAX_CONTACTS = 4


class FrictionSolution(NamedTuple):
    """Solution of the planar frictional contact problem (a pytree; batched under vmap).

    Attributes:
      r: impulses [r_N; r_T], shape (2 nc,).
      u: local velocities ``W r + q``, shape (2 nc,).
      residual: ``‖e‖∞ / max(1, ‖q‖∞)`` over active contacts (module docstring).
      iterations: sweeps performed (int32 scalar).
      converged: ``residual <= tol`` and everything finite (bool scalar).
    """

    r: jax.Array
    u: jax.Array
    residual: jax.Array
    iterations: jax.Array
    converged: jax.Array


def _split(x, nc):
    return x[..., :nc], x[..., nc:]


def coulomb_residual(r, u, mu, q, active=None):
    """``‖e‖∞ / max(1, ‖q‖∞)`` with e the natural-map residual of the normal and Coulomb laws."""
    nc = mu.shape[-1]
    rN, rT = _split(r, nc)
    uN, uT = _split(u, nc)
    rNp = jnp.maximum(rN, 0.0)
    eN = rN - jnp.maximum(0.0, rN - uN)
    eT = rT - jnp.clip(rT - uT, -mu * rNp, mu * rNp)
    e = jnp.maximum(jnp.abs(eN), jnp.abs(eT))
    qmag = jnp.maximum(jnp.abs(q[:nc]), jnp.abs(q[nc:]))
    if active is not None:
        e = jnp.where(active, e, 0.0)
        qmag = jnp.where(active, qmag, 0.0)
    return jnp.max(e, initial=0.0) / jnp.maximum(1.0, jnp.max(qmag, initial=0.0))


def fc2d_error(r, u, mu, q, active=None):
    """Siconos numerics' ``fc2d_compute_error``: ‖r − proj_K(r − ũ)‖₂ / ‖q‖₂.

    ũ = (u_N + μ|u_T|, u_T) is De Saxcé's modified velocity and K the cone
    |r_T| ≤ μ r_N; division by ‖q‖₂ only if it exceeds machine epsilon
    (as Siconos does). Inactive contacts are left out.
    """
    nc = mu.shape[-1]
    rN, rT = _split(r, nc)
    uN, uT = _split(u, nc)
    t0 = rN - (uN + mu * jnp.abs(uT))
    t1 = rT - uT
    at1 = jnp.abs(t1)
    n_cone = (mu * at1 + t0) / (mu * mu + 1.0)
    pN = jnp.where(mu * at1 <= -t0, 0.0, jnp.where(at1 > mu * t0, n_cone, t0))
    pT = jnp.where(mu * at1 <= -t0, 0.0, jnp.where(at1 > mu * t0, mu * n_cone * jnp.sign(t1), t1))
    e2 = (rN - pN) ** 2 + (rT - pT) ** 2
    qq = q
    if active is not None:
        e2 = jnp.where(active, e2, 0.0)
        qq = jnp.where(jnp.concatenate([active, active]), q, 0.0)
    nq = jnp.linalg.norm(qq)
    err = jnp.sqrt(jnp.sum(e2))
    return jnp.where(nq > jnp.finfo(q.dtype).eps, err / jnp.where(nq > 0, nq, 1.0), err)


def friction_lcp(W, q, mu):
    """Moreau–Jean's planar friction LCP ``y = A x + b`` (size 3 nc) for the planar frictional problem.

    x = [P_N; P_R; ξ_L], y = [ξ_N; ξ_R; P_L] with P_R = μ P_N + P_T,
    P_L = μ P_N − P_T and ξ_T = ξ_R − ξ_L. From ξ = W P + q (blocks N, T):

        ξ_N = (W_NN − W_NT μ) P_N + W_NT P_R            + q_N
        ξ_R = (W_TN − W_TT μ) P_N + W_TT P_R + I ξ_L     + q_T
        P_L =            2 μ P_N −      P_R

    (μ = diag(mu)). The ξ_L column has zero diagonal, so PGS cannot solve
    this LCP; Lemke can. Recover r with :func:`from_lcp_solution`.
    """
    _check_friction(W, q, mu, None, "friction_lcp")
    W, q, mu = (jnp.asarray(x, jnp.result_type(W, q, 1.0)) for x in (W, q, mu))
    nc = mu.shape[-1]
    WNN, WNT = W[:nc, :nc], W[:nc, nc:]
    WTN, WTT = W[nc:, :nc], W[nc:, nc:]
    eye = jnp.eye(nc, dtype=W.dtype)
    zero = jnp.zeros((nc, nc), W.dtype)
    A = jnp.block(
        [
            [WNN - WNT * mu[None, :], WNT, zero],
            [WTN - WTT * mu[None, :], WTT, eye],
            [2.0 * jnp.diag(mu), -eye, zero],
        ]
    )
    b = jnp.concatenate([q[:nc], q[nc:], jnp.zeros((nc,), q.dtype)])
    return A, b


def from_lcp_solution(x, mu):
    """Impulses r = [P_N; P_T] from the solution x = [P_N; P_R; ξ_L] of :func:`friction_lcp`.

    P_T = P_R − μ P_N, so the friction coefficients are needed (nc = mu.shape[-1]).
    """
    nc = mu.shape[-1]
    PN, PR = x[..., :nc], x[..., nc : 2 * nc]
    return jnp.concatenate([PN, PR - mu * PN], axis=-1)


# Columns of the per-contact table of the exact local solve (computed once per
# call, so a sweep reads one row per contact). Contact block [[a, b], [c, d]].
_I00, _I01, _I10, _I11 = 0, 1, 2, 3  # inverse of the block (zero if singular)
_IGP, _IGM = 4, 5  # 1 / (a − μ b), 1 / (a + μ b): slide with r_T = ∓μ r_N (zero if ≤ 0)
_CP, _CM = 6, 7  # c − μ d, c + μ d: u_T slope along those slides
_MU = 8
_STICK_OK, _GP_OK, _GM_OK, _ACTIVE = 9, 10, 11, 12  # flags as 0/1


def _local_table(W, mu, active):
    """(nc, 13) table of the constants each contact's local solve needs."""
    nc = mu.shape[0]
    idx = jnp.arange(nc)
    a, b = W[idx, idx], W[idx, nc + idx]
    c, d = W[nc + idx, idx], W[nc + idx, nc + idx]
    det = a * d - b * c
    eps = jnp.finfo(W.dtype).eps
    det_ok = jnp.abs(det) > 64 * eps * (jnp.abs(a * d) + jnp.abs(b * c))
    idet = jnp.where(det_ok, 1.0 / jnp.where(det_ok, det, 1.0), 0.0)
    gp, gm = a - mu * b, a + mu * b
    gp_ok, gm_ok = gp > 64 * eps * jnp.abs(a), gm > 64 * eps * jnp.abs(a)
    igp = jnp.where(gp_ok, 1.0 / jnp.where(gp_ok, gp, 1.0), 0.0)
    igm = jnp.where(gm_ok, 1.0 / jnp.where(gm_ok, gm, 1.0), 0.0)
    flag = lambda x: x.astype(W.dtype)
    return jnp.stack(
        [
            d * idet,
            -b * idet,
            -c * idet,
            a * idet,
            igp,
            igm,
            c - mu * d,
            c + mu * d,
            mu,
            flag(det_ok),
            flag(gp_ok),
            flag(gm_ok),
            flag(active),
        ],
        axis=-1,
    )


def _local_solve(qN, qT, t):
    """Exact (r_N, r_T) of one contact's problem u = B r + (qN, qT); t its table row."""
    mu = t[_MU]
    stick_ok, gp_ok, gm_ok = t[_STICK_OK] > 0.5, t[_GP_OK] > 0.5, t[_GM_OK] > 0.5
    rN_s = -(t[_I00] * qN + t[_I01] * qT)
    rT_s = -(t[_I10] * qN + t[_I11] * qT)
    stick = stick_ok & (rN_s >= 0) & (jnp.abs(rT_s) <= mu * rN_s)
    rN_p = -qN * t[_IGP]  # r_T = −μ r_N, needs u_T ≥ 0
    rN_m = -qN * t[_IGM]  # r_T = +μ r_N, needs u_T ≤ 0
    p_ok = gp_ok & (t[_CP] * rN_p + qT >= 0)
    m_ok = gm_ok & (t[_CM] * rN_m + qT <= 0)
    want_neg = jnp.where(stick_ok, rT_s <= 0, qT >= 0)  # fallback: where stick pushes r_T
    plus = p_ok | (~m_ok & want_neg)
    rN_sl = jnp.where(plus, rN_p, rN_m)
    rT_sl = jnp.where(plus, -mu, mu) * rN_sl
    take_off = qN >= 0
    rN = jnp.where(take_off, 0.0, jnp.where(stick, rN_s, rN_sl))
    rT = jnp.where(take_off, 0.0, jnp.where(stick, rT_s, rT_sl))
    return rN, rT


def _update(rN_old, rT_old, qN, qT, t, omega):
    """One contact's Gauss–Seidel update: exact local solve, relaxation, cone clamp, mask."""
    rN, rT = _local_solve(qN, qT, t)
    # The clamp back into the cone only matters for ω > 1.
    rN = jnp.maximum(rN_old + omega * (rN - rN_old), 0.0)
    rT = jnp.clip(rT_old + omega * (rT - rT_old), -t[_MU] * rN, t[_MU] * rN)
    act = t[_ACTIVE] > 0.5
    return jnp.where(act, rN, 0.0), jnp.where(act, rT, 0.0)


def _sweeps_unrolled(W, q, r, table, omega, iterations):
    """Contacts unrolled into per-sample scalar code (few contacts).

    Every quantity is a scalar, so under vmap every operation is elementwise
    over the batch. The optimization barrier makes XLA materialize the
    scalars of W, q and the table once, instead of re-reading strided slices
    of the batched arrays inside the sweep loop (bench/RESULTS.md has the gain).
    """
    nc = table.shape[0]
    n = 2 * nc
    w = [[W[i, j] for j in range(n)] for i in range(n)]
    qs = [q[i] for i in range(n)]
    tab = [[table[i, k] for k in range(table.shape[1])] for i in range(nc)]
    w, qs, tab = lax.optimization_barrier((w, qs, tab))

    def sweep(rs, _):
        rs = list(rs)
        for i in range(nc):
            iN, iT = i, nc + i
            qN, qT = qs[iN], qs[iT]
            for j in range(n):
                if j != iN and j != iT:
                    qN = qN + w[iN][j] * rs[j]
                    qT = qT + w[iT][j] * rs[j]
            rs[iN], rs[iT] = _update(rs[iN], rs[iT], qN, qT, tab[i], omega)
        return tuple(rs), None

    rs, _ = lax.scan(sweep, tuple(r[j] for j in range(n)), None, length=iterations)
    return jnp.stack(rs)


def _sweeps_loop(W, q, r, table, omega, iterations):
    """Contacts in a fori_loop (many contacts): compile time independent of nc."""
    nc = table.shape[0]
    idx = jnp.arange(nc)
    # Zero each contact's own block, so a row product gives its local free velocity.
    W0 = W.at[idx, idx].set(0.0).at[idx, nc + idx].set(0.0)
    W0 = W0.at[nc + idx, idx].set(0.0).at[nc + idx, nc + idx].set(0.0)
    rows = jnp.stack([W0[:nc], W0[nc:]], axis=1)  # (nc, 2, 2 nc)
    qs = jnp.stack([q[:nc], q[nc:]], axis=1)  # (nc, 2)

    def contact(i, r):
        qN, qT = rows[i] @ r + qs[i]
        rN, rT = _update(r[i], r[nc + i], qN, qT, table[i], omega)
        return r.at[i].set(rN).at[nc + i].set(rT)

    def sweep(r, _):
        return lax.fori_loop(0, nc, contact, r), None

    r, _ = lax.scan(sweep, r, None, length=iterations)
    return r


def _check_friction(W, q, mu, active, name):
    n = jnp.shape(q)[0] if jnp.ndim(q) == 1 else None
    if n is None or n % 2:
        raise ValueError(f"{name}: q must have shape (2 nc,) (normal block then tangent block); got {jnp.shape(q)}")
    nc = n // 2
    if jnp.shape(W) != (n, n):
        raise ValueError(f"{name}: W must have shape (2 nc, 2 nc) = ({n}, {n}) to match q; got {jnp.shape(W)}")
    if jnp.shape(mu) != (nc,):
        raise ValueError(f"{name}: mu must have shape (nc,) = ({nc},) to match q {jnp.shape(q)}; got {jnp.shape(mu)}")
    if active is not None and jnp.shape(active) != (nc,):
        raise ValueError(f"{name}: active must have shape (nc,) = ({nc},); got {jnp.shape(active)}")
    if not isinstance(mu, jax.core.Tracer):
        m = np.asarray(mu)
        if not np.all(np.isfinite(m)) or np.any(m < 0):
            i = int(np.argwhere(~(np.isfinite(m) & (m >= 0)))[0, 0])
            raise ValueError(f"{name}: friction coefficients must be finite and >= 0; mu[{i}] = {m[i]}")


def nsgs(W, q, mu, *, iterations: int = 50, omega=1.0, r0=None, tol=None, active=None) -> FrictionSolution:
    """Block nonsmooth Gauss–Seidel for the planar frictional contact problem.

    Args:
      W: (2 nc, 2 nc) Delassus matrix in block order [normal; tangent].
      q: (2 nc,) free local velocity, same order.
      mu: (nc,) friction coefficients ≥ 0 (0 gives a frictionless contact).
      iterations: sweeps over all contacts (static int); all are performed,
        except with a single contact and ω = 1 given as a Python number:
        one exact local solve is then the solution, so one sweep is run
        (and reported in ``iterations``).
      omega: relaxation in (0, 2) (float or scalar array; checked outside jit).
      r0: warm start (2 nc,), clamped into the friction cone; zeros by default.
      tol: ``converged`` threshold on ``residual``; default
        :func:`~jaxcontact.lcp.solution.default_tol` of the dtype.
      active: (nc,) bool; inactive contacts get r = 0 and are left out of the
        residual. All active by default.

    Returns:
      :class:`FrictionSolution` (see the module docstring for the residual).
    """
    _check_friction(W, q, mu, active, "nsgs")
    W, q, r0, tol = prepare(
        W, q, r0, iterations=iterations, omega=omega, tol=tol, differentiation="unroll", name="nsgs"
    )
    nc = q.shape[0] // 2
    if nc == 1 and isinstance(omega, (int, float)) and omega == 1:
        iterations = min(iterations, 1)
    mu = jnp.asarray(mu, W.dtype)
    omega = jnp.asarray(omega, W.dtype)
    act = jnp.ones((nc,), bool) if active is None else jnp.asarray(active, bool)
    rN0, rT0 = _split(r0, nc)
    rN0 = jnp.where(act, jnp.maximum(rN0, 0.0), 0.0)
    rT0 = jnp.where(act, jnp.clip(rT0, -mu * rN0, mu * rN0), 0.0)
    r = jnp.concatenate([rN0, rT0])
    if nc:  # a system with no contacts has nothing to sweep
        sweeps = _sweeps_unrolled if nc <= UNROLL_MAX_CONTACTS else _sweeps_loop
        r = sweeps(W, q, r, _local_table(W, mu, act), omega, iterations)
    u = W @ r + q
    res = coulomb_residual(r, u, mu, q, act)
    finite = jnp.all(jnp.isfinite(r)) & jnp.all(jnp.isfinite(u))
    res = jnp.where(finite, res, jnp.inf)
    return FrictionSolution(r, u, res, jnp.asarray(iterations, jnp.int32), finite & (res <= tol))
