"""Lemke's complementary pivoting method for LCP(M, q), jit- and vmap-compatible.

The augmented problem  w = M z + q + d z₀,  w, z, z₀ ≥ 0,  wᵀz = 0  is kept as
a tableau ``T = B⁻¹ [I, −M, −d, q]`` over the 2n + 1 variables (w, z, z₀).
Starting from the basis w, z₀ enters and the most negative q_i leaves; from
then on the complement of the variable that just left enters, the minimum-
ratio test picks the leaving row, and the method stops when z₀ leaves (a
solution), when the entering column has no positive entry (a secondary ray:
no solution is found — for copositive-plus M this proves infeasibility, for
other classes Lemke may simply fail), or at the pivot limit.

Choices and why:

* Covering vector d = (1, …, 1), the textbook choice (Siconos uses it too):
  every q_i < 0 is covered, no scaling decisions are needed, and with it the
  lexicographic first pivot reduces to "smallest index among the most
  negative q_i".
* Lexicographic minimum-ratio rule: among rows tied on ``rhs_i / T_ie``, the
  ties are broken by the rows of ``B⁻¹ / T_ie`` (the w-columns of the
  tableau, which start as I), lexicographically. The rows of B⁻¹ are
  independent, so the minimum is unique and, in exact arithmetic, the
  method cannot cycle on degenerate problems. If z₀'s row attains the
  minimum ratio it leaves at once (any minimum-ratio row keeps the basis
  feasible, and this one ends the method).
* Ties in floating point. The data are first scaled by powers of two
  (exact) to max|M|, max|q| in [1/2, 1). Ratios tie within
  ``eps^0.75·|m| + 16 eps·max ratio`` of the minimum m, after right-hand
  sides at round-off level (≤ 16 eps·max|rhs|) are snapped to 0 — purely
  relative, because legitimate ratios can be tiny (mmc: z ~ 1e-4; a coarser
  rule picks infeasible rows in float32). The B⁻¹ columns tie within
  ``eps^0.75·max(1, |m|)``: their exact ties come out of the updates with
  accumulated round-off, and breaking them by noise voids the anti-cycling
  rule (with a finer rule, tobenna — n = 40, cond ≈ 2e6 — cycles to the
  pivot limit; with this one it is solved in 127 pivots in float64; in
  float32 it still cycles and is reported unconverged).
* Pivot entries must exceed ``eps^0.75 · max|column|``; smaller entries are
  round-off and pivoting on them produces garbage.
* Polishing: the pivots determine the complementary basis; the final z is
  also recomputed by one direct (LU) solve of ``M_AA z_A = −q_A`` on that
  basis (:func:`~jaxcontact.lcp.enumeration.basis_solve`; M_AA is
  nonsingular for a complementary basis), which removes the
  round-off accumulated by Gauss–Jordan updates. Of the tableau z and the
  polished z, the one with the smaller natural residual is returned.
* ``converged`` is never taken from the pivoting status: it is the residual
  check of :func:`~jaxcontact.lcp.solution.make_solution` on the returned z,
  so a ray, a pivot limit or round-off trouble shows up as converged=False,
  never as a wrong answer flagged converged.

Pivot limit. ``lax.while_loop`` stops as soon as every problem (under vmap:
every problem of the batch) has finished, so the bound costs nothing for
problems that terminate; it only stops pathological runs. Lemke can need
exponentially many pivots: on Murty's example (M_ii = 1, M_ij = 2 for
j > i, q_i = −(2^{n+1} − 2^i); the collection's exp_murty2 in Siconos'
column-major reading) it takes 2ⁿ pivots here (64 for n = 6).
The default ``max(2^min(n, 12), 20 n) + n`` covers that worst case up to
n = 12 (the enumeration range) and is far above the ~n–3n pivots typical
problems need for larger n.

Differentiation: pivoting is a ``while_loop`` (no reverse mode, and its
derivative would be that of a piecewise-constant basis choice anyway), so
the gradient of z is the implicit one at the solution
(:mod:`jaxcontact.lcp.implicit`) — exact for the solution Lemke found.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from jaxcontact.lcp.enumeration import basis_solve
from jaxcontact.lcp.implicit import implicit_solution
from jaxcontact.lcp.solution import LCPSolution, check_problem, default_tol, natural_residual

PIVOT_TOL_EXPONENT = 0.75
TIE_TOL_EXPONENT = 0.75


def default_max_pivots(n: int) -> int:
    """``max(2^min(n, 12), 20 n) + n`` — see the module docstring."""
    return max(2 ** min(n, 12), 20 * n) + n


def _pow2_scale(x):
    """2^-k with max|x|·2^-k in (1/2, 1] (1 for zero or non-finite x); exact in floating point."""
    m = jnp.max(jnp.abs(x))
    ok = jnp.isfinite(m) & (m > 0)
    _, e = jnp.frexp(jnp.where(ok, m, 1.0))
    return jnp.where(ok, jnp.ldexp(jnp.ones((), x.dtype), -e), 1.0).astype(x.dtype)


def _pivot(T, r, c):
    """Gauss–Jordan pivot of tableau T on row r, column c."""
    row = T[r] / T[r, c]
    T = T - jnp.outer(T[:, c], row)
    return T.at[r].set(row)


def _tie_margin(m, values, active, tie_tol):
    """How far above the minimum m a value still ties: relative to m, plus round-off of the column.

    Purely relative to the data (no absolute floor), so problems with tiny
    solutions (mmc: z ~ 1e-4) are not flattened into false ties in float32.
    """
    eps = jnp.finfo(values.dtype).eps
    col = jnp.max(jnp.where(active, jnp.abs(values), 0.0))
    return tie_tol * jnp.abs(m) + 16 * eps * col


def _lexmin_row(R, cand, tie_tol):
    """First row of the lexicographic minimum of R's rows among ``cand``."""

    def narrow(k, active):
        # Columns of B⁻¹/T_ie: entries equal in exact arithmetic differ by the
        # round-off accumulated over the pivots, and breaking such a tie by
        # noise voids the anti-cycling guarantee (tobenna then cycles). The
        # data are normalized (max|M| ~ 1), so an absolute floor of 1 is the
        # scale of B⁻¹'s entries; finer ties made tobenna cycle.
        v = jnp.where(active, R[:, k], jnp.inf)
        m = jnp.min(v)
        return active & (v <= m + tie_tol * jnp.maximum(1.0, jnp.abs(m)))

    # Column 0 (the ratios rhs/T_ie) needs finer ties: legitimate ratios can
    # differ far below the column's scale (mmc: z ~ 1e-4 beside q ~ 4).
    v0 = jnp.where(cand, R[:, 0], jnp.inf)
    m0 = jnp.min(v0)
    first = cand & (v0 <= m0 + _tie_margin(m0, R[:, 0], cand, tie_tol))
    active = lax.fori_loop(1, R.shape[1], narrow, first)
    return jnp.argmax(active)


def _lemke_z(M, q, *, max_pivots):
    n = q.shape[0]
    dtype = q.dtype
    eps = float(jnp.finfo(dtype).eps)
    piv_tol = eps**PIVOT_TOL_EXPONENT
    tie_tol = eps**TIE_TOL_EXPONENT
    z0_var = 2 * n
    d = jnp.ones((n,), dtype)
    # Normalize by powers of two (exact): max|M|, max|q| in (1/2, 1]. LCP(sM·M, sq·q)
    # has the solution (sq/sM)·z, so the tie tolerances see data of unit scale.
    sM, sq = _pow2_scale(M), _pow2_scale(q)
    Mn, qn = sM * M, sq * q
    T = jnp.concatenate([jnp.eye(n, dtype=dtype), -Mn, -d[:, None], qn[:, None]], axis=1)
    basis = jnp.arange(n)

    trivial = jnp.all(q >= 0)
    # First pivot: z₀ enters at the most negative q_i (smallest index on ties —
    # the lexicographic rule for d = 1). Skipped when q ≥ 0 (z = 0 solves it).
    r0 = jnp.argmin(qn)
    T = jnp.where(trivial, T, _pivot(T, r0, z0_var))
    leaving0 = basis[r0]
    basis = jnp.where(trivial, basis, basis.at[r0].set(z0_var))
    state = (T, basis, leaving0 + n, trivial, jnp.where(trivial, 0, 1).astype(jnp.int32))

    def cond(state):
        _, _, _, done, pivots = state
        return (~done) & (pivots < max_pivots)

    def body(state):
        T, basis, enter, _, pivots = state
        col = T[:, enter]
        rhs = T[:, -1]
        # Degenerate rows (rhs exactly 0 in exact arithmetic) come out of the
        # updates as ±round-off; snap them to 0 so that their ties are exact.
        rhs = jnp.where(jnp.abs(rhs) <= 16 * eps * jnp.max(jnp.abs(rhs)), 0.0, rhs)
        scale = jnp.max(jnp.abs(col))
        cand = col > piv_tol * scale
        ray = ~jnp.any(cand)
        safe_col = jnp.where(cand, col, 1.0)
        ratio = rhs / safe_col
        best = jnp.min(jnp.where(cand, ratio, jnp.inf))
        z0_row = jnp.argmax(basis == z0_var)
        z0_ties = cand[z0_row] & (ratio[z0_row] <= best + _tie_margin(best, ratio, cand, tie_tol))
        R = jnp.concatenate([ratio[:, None], T[:, :n] / safe_col[:, None]], axis=1)
        r = jnp.where(z0_ties, z0_row, _lexmin_row(R, cand, tie_tol))
        leaving = basis[r]
        T_new = _pivot(T, r, enter)
        basis_new = basis.at[r].set(enter)
        complement = jnp.where(leaving < n, leaving + n, leaving - n)
        T = jnp.where(ray, T, T_new)
        basis = jnp.where(ray, basis, basis_new)
        done = ray | (leaving == z0_var)
        return T, basis, complement, done, pivots + jnp.where(ray, 0, 1).astype(jnp.int32)

    T, basis, _, _, pivots = lax.while_loop(cond, body, state)

    values = jnp.zeros((2 * n + 1,), dtype).at[basis].set(T[:, -1])
    z_tab = jnp.maximum(values[n : 2 * n] * (sM / sq), 0.0)
    z_basic = jnp.zeros((2 * n + 1,), bool).at[basis].set(True)[n : 2 * n]
    z_pol = jnp.maximum(basis_solve(M, q, z_basic, pseudo_inverse=False), 0.0)

    def score(z):
        res = natural_residual(z, M @ z + q, q)
        return jnp.where(jnp.isfinite(res), res, jnp.inf)

    z = jnp.where(score(z_pol) <= score(z_tab), z_pol, z_tab)
    return z, pivots


def lemke(M, q, *, max_pivots: int | None = None, tol=None, differentiation: str = "implicit") -> LCPSolution:
    """Solve LCP(M, q) by Lemke's method (covering vector 1, lexicographic ratio test).

    Args:
      M: (n, n) matrix. Lemke terminates with a solution for P-matrices,
        positive semidefinite and, more generally, copositive-plus M when a
        solution exists; for other classes it may end on a ray
        (converged=False).
      q: (n,) vector.
      max_pivots: static bound on the pivots; default
        :func:`default_max_pivots` (module docstring).
      tol: ``converged`` threshold on the natural residual; default
        :func:`~jaxcontact.lcp.solution.default_tol` of the dtype.
      differentiation: only ``"implicit"`` (the implicit function theorem at
        the solution; pivoting is not differentiable).

    Returns:
      :class:`LCPSolution`; ``iterations`` = pivots performed (0 when q ≥ 0).
    """
    check_problem(M, q, name="lemke")
    if differentiation != "implicit":
        raise ValueError(
            "lemke: differentiation must be 'implicit' (pivoting has no useful "
            f"unrolled derivative); got {differentiation!r}"
        )
    n = jnp.shape(q)[0]
    if max_pivots is None:
        max_pivots = default_max_pivots(n)
    if isinstance(max_pivots, bool) or not isinstance(max_pivots, int) or max_pivots < 1:
        raise ValueError(f"lemke: max_pivots must be a static int >= 1; got {max_pivots!r}")
    dtype = jnp.result_type(M, q, 1.0)
    M = jnp.asarray(M, dtype)
    q = jnp.asarray(q, dtype)
    tol = default_tol(dtype) if tol is None else tol

    def solve(M, q):
        return _lemke_z(M, q, max_pivots=max_pivots)

    return implicit_solution(solve, M, q, tol=tol)
