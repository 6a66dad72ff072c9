"""Projected Gauss–Seidel (PGS) with relaxation for LCP(M, q).

One sweep updates the rows in order, each with the newest values:

    z_i ← max(0, z_i − ω (M_i· z + q_i) / M_ii),   i = 1 … n.

It converges for symmetric positive definite M and 0 < ω < 2 (and for
symmetric positive semidefinite M when the LCP is solvable, to some
solution); ω = 1 is plain projected Gauss–Seidel, ω > 1 over-relaxes.

Rows with M_ii ≤ 0 have no Gauss–Seidel step. They are held at z_i = 0
(their projection with no information) and never produce NaN: if the
problem needs z_i > 0 there, the residual stays large and ``converged`` is
False.

The sweep count is a fixed, static number (``lax.scan`` over sweeps,
``lax.fori_loop`` over rows, or the rows written out on scalars for n ≤ 4,
which is faster under ``vmap``): reverse-mode differentiable, and under ``vmap``
every problem of the batch costs the same. No residual is computed inside
the sweeps; it is computed once at the end, so ``iterations`` always equals
the requested sweep count and ``tol`` only sets the ``converged`` flag.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxcontact.lcp.implicit import check_differentiation, implicit_solution
from jaxcontact.lcp.solution import LCPSolution, check_problem, default_tol, make_solution


def _is_concrete(x) -> bool:
    return not any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(x))


def prepare(M, q, z0, *, iterations, omega, tol, differentiation, name):
    """Shared argument handling of the iterative solvers (outside jit where possible).

    Returns ``(M, q, z0, tol)`` in a common floating dtype (integers promote to
    the default float). Raises on bad shapes, non-finite concrete data, a
    non-integer or negative sweep count, a concrete ω outside (0, 2), or an
    unknown differentiation mode.
    """
    check_problem(M, q, z0, name=name)
    check_differentiation(differentiation, name)
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0:
        raise ValueError(f"{name}: iterations must be a static int >= 0; got {iterations!r}")
    if omega is not None and _is_concrete(omega):
        o = np.asarray(omega)
        if o.shape != () or not (0 < o < 2):
            raise ValueError(f"{name}: omega must be a scalar in (0, 2); got {omega!r}")
    dtype = jnp.result_type(M, q, 1.0)
    M = jnp.asarray(M, dtype)
    q = jnp.asarray(q, dtype)
    z0 = jnp.zeros_like(q) if z0 is None else jnp.asarray(z0, dtype)
    tol = default_tol(dtype) if tol is None else tol
    return M, q, z0, tol


def scaled_rows(M, q, omega):
    """``(ω D⁻¹ M, ω D⁻¹ q, ok)`` with rows of M_ii ≤ 0 zeroed and ``ok`` False there.

    The double ``where`` keeps 1/M_ii out of the gradient for bad rows.
    """
    d = jnp.diagonal(M)
    ok = d > 0
    inv = jnp.where(ok, omega / jnp.where(ok, d, 1.0), 0.0)
    return M * inv[:, None], q * inv, ok


# Up to this size a sweep is written out on scalars (n² multiply–adds, no
# dynamic indexing): under vmap every operation is then elementwise over the
# batch, which beats the row loop for a few rows; the advantage shrinks as n
# grows while the written-out graph grows as n², hence a small threshold (the
# timings: bench/RESULTS.md, "Figures moved out of the code").
SCALAR_SWEEP_MAX_N = 4


def _pgs_z(M, q, z0, omega, *, iterations):
    Ms, qs, ok = scaled_rows(M, q, omega)
    z = jnp.where(ok, jnp.maximum(z0, 0.0), 0.0)
    n = z.shape[0]

    if n == 0:  # no contacts: nothing to sweep (the row loop cannot be traced at size 0)
        return z
    if n <= SCALAR_SWEEP_MAX_N:

        def sweep(z, _):
            zs = [z[i] for i in range(n)]
            for i in range(n):
                r = qs[i]
                for j in range(n):
                    r = r + Ms[i, j] * zs[j]
                zs[i] = jnp.maximum(0.0, zs[i] - r)
            return jnp.stack(zs), None
    else:

        def row(i, z):
            return z.at[i].set(jnp.maximum(0.0, z[i] - (Ms[i] @ z + qs[i])))

        def sweep(z, _):
            return lax.fori_loop(0, n, row, z), None

    z, _ = lax.scan(sweep, z, None, length=iterations)
    return z


def pgs(M, q, *, iterations: int = 100, omega=1.0, z0=None, tol=None, differentiation: str = "unroll") -> LCPSolution:
    """Solve LCP(M, q) by projected Gauss–Seidel with relaxation ω.

    Args:
      M: (n, n) matrix; convergence is guaranteed for symmetric positive
        (semi)definite M (see the module docstring for M_ii ≤ 0 rows).
      q: (n,) vector.
      iterations: number of sweeps (static int); all are performed.
      omega: relaxation in (0, 2) (a float or a scalar array leaf; checked
        outside jit only).
      z0: warm start (projected onto z ≥ 0); zeros by default.
      tol: ``converged`` threshold on the natural residual; default
        :func:`~jaxcontact.lcp.solution.default_tol` of the dtype.
      differentiation: ``"unroll"`` (through the sweeps) or ``"implicit"``
        (implicit function theorem at the solution); see
        :mod:`jaxcontact.lcp.implicit`.

    Returns:
      :class:`LCPSolution` with ``iterations`` = sweeps performed.
    """
    M, q, z0, tol = prepare(
        M, q, z0, iterations=iterations, omega=omega, tol=tol, differentiation=differentiation, name="pgs"
    )
    omega = jnp.asarray(omega, M.dtype)
    if differentiation == "implicit":

        def solve(M, q, z0, omega):
            return _pgs_z(M, q, z0, omega, iterations=iterations), jnp.int32(iterations)

        return implicit_solution(solve, M, q, z0, omega, tol=tol)
    z = _pgs_z(M, q, z0, omega, iterations=iterations)
    return make_solution(M, q, z, iterations, tol)
