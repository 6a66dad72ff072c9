"""Projected Jacobi for LCP(M, q): every row updated at once from the old iterate.

    z ← max(0, z − ω D⁻¹ (M z + q)),   D = diag(M).

One sweep is a matrix–vector product, so it vectorizes fully (no row loop);
it usually needs more sweeps than projected Gauss–Seidel.

When it converges. For symmetric positive definite M the sweep is projected
gradient descent on ½ zᵀMz + qᵀz over z ≥ 0 in the metric D (the
D-weighted projection onto z ≥ 0 is componentwise clipping), so it converges
for every start iff 0 < ω < 2 / λmax(D⁻¹M) (λmax(D⁻¹M) = λmax of the
symmetric D^{-1/2} M D^{-1/2}; it is ≥ 1 because the trace of D⁻¹M is n, so
ω < 2 is necessary). Symmetric positive semidefinite M with a solvable LCP:
the same range gives convergence to a solution. Unlike Gauss–Seidel, ω = 1 is
*not* always safe (deudeu-like coupling with λmax(D⁻¹M) ≥ 2 diverges).

Default ω (``omega=None``), computed inside jit from M in O(n²):

    ω = 1 / max(λ̂, G / 1.9),

with G = max_i Σ_j |M_ij| / M_ii the Gershgorin bound (G ≥ λmax(D⁻¹M), so
1.9/G < 2/λmax: *always* convergent for symmetric positive definite M) and
λ̂ the Rayleigh quotient after 8 power iterations on D^{-1/2} M D^{-1/2}
(λ̂ ≤ λmax, usually very close). So ω ≈ 1/λmax whenever that is safe, which
balances the error modes of the iteration matrix I − ωD⁻¹M
(|1 − ωλ| over the spectrum), and never less than the plain Gershgorin choice
1/G. Gershgorin alone is safe but can be conservative by a factor up to n on
dense coupling; power iteration alone is fast but only a lower estimate of
λmax. On mmc (λmax(D⁻¹M) = 1.83, G = 2.09, condition number 1e3) the default
needs about 1600 sweeps to reach residual 1e-10 (Gershgorin's ω: 1800;
the optimal unconstrained 2/(λmin + λmax): 800). The default ω is treated
as a constant under differentiation (``stop_gradient``): it is a numerical
setting, and the converged fixed point does not depend on it.

For non-symmetric M there is no such guarantee; give ω explicitly or use
:func:`~jaxcontact.lcp.pgs.pgs` or Lemke. Rows with M_ii ≤ 0 are handled as in
PGS: held at z_i = 0 (no NaN), reported through the residual.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from jaxcontact.lcp.implicit import implicit_solution
from jaxcontact.lcp.pgs import prepare, scaled_rows
from jaxcontact.lcp.solution import LCPSolution, make_solution

POWER_ITERATIONS = 8
GERSHGORIN_SAFETY = 1.9


def default_omega(M):
    """``1 / max(λ̂, G/1.9)`` — see the module docstring. Rows with M_ii ≤ 0 are left out."""
    d = jnp.diagonal(M)
    ok = d > 0
    s = jnp.where(ok, 1.0 / jnp.sqrt(jnp.where(ok, d, 1.0)), 0.0)
    A = M * s[:, None] * s[None, :]
    # Gershgorin on D⁻¹M (similar to A, same eigenvalues): max_i Σ_j |M_ij| / M_ii.
    gershgorin = jnp.max(jnp.where(ok, jnp.sum(jnp.abs(M), axis=1) / jnp.where(ok, d, 1.0), 0.0), initial=0.0)
    n = M.shape[0]
    x = jnp.where(ok, 1.0 + jnp.arange(n, dtype=M.dtype) / max(n, 1), 0.0)
    tiny = jnp.finfo(M.dtype).tiny

    def power(_, x):
        y = A @ x
        return y / jnp.maximum(jnp.linalg.norm(y), tiny)

    x = lax.fori_loop(0, POWER_ITERATIONS, power, x / jnp.maximum(jnp.linalg.norm(x), tiny))
    rayleigh = x @ (A @ x)
    lam = jnp.maximum(jnp.maximum(rayleigh, gershgorin / GERSHGORIN_SAFETY), tiny)
    # No usable row at all: ω is irrelevant (every z_i is held at 0); keep it finite.
    return lax.stop_gradient(jnp.where(jnp.any(ok), 1.0 / lam, 1.0))


def _jacobi_z(M, q, z0, omega, *, iterations):
    Ms, qs, ok = scaled_rows(M, q, omega)
    z = jnp.where(ok, jnp.maximum(z0, 0.0), 0.0)

    def sweep(z, _):
        return jnp.maximum(0.0, z - (Ms @ z + qs)), None

    z, _ = lax.scan(sweep, z, None, length=iterations)
    return z


def projected_jacobi(
    M, q, *, iterations: int = 300, omega=None, z0=None, tol=None, differentiation: str = "unroll"
) -> LCPSolution:
    """Solve LCP(M, q) by projected Jacobi with relaxation ω.

    Args:
      M: (n, n) matrix; convergence is guaranteed for symmetric positive
        (semi)definite M with ω < 2/λmax(D⁻¹M) (module docstring).
      q: (n,) vector.
      iterations: number of sweeps (static int); all are performed.
      omega: relaxation; ``None`` (default) picks a safe ω inside jit (module
        docstring); a float or scalar array leaf in (0, 2) otherwise (checked
        outside jit only; values in (0, 2) can still diverge if ω ≥ 2/λmax).
      z0: warm start (projected onto z ≥ 0); zeros by default.
      tol: ``converged`` threshold on the natural residual; default
        :func:`~jaxcontact.lcp.solution.default_tol` of the dtype.
      differentiation: ``"unroll"`` or ``"implicit"``; see
        :mod:`jaxcontact.lcp.implicit`.

    Returns:
      :class:`LCPSolution` with ``iterations`` = sweeps performed.
    """
    M, q, z0, tol = prepare(
        M, q, z0, iterations=iterations, omega=omega, tol=tol, differentiation=differentiation, name="projected_jacobi"
    )
    omega = default_omega(M) if omega is None else jnp.asarray(omega, M.dtype)
    if differentiation == "implicit":

        def solve(M, q, z0, omega):
            return _jacobi_z(M, q, z0, omega, iterations=iterations), jnp.int32(iterations)

        return implicit_solution(solve, M, q, z0, omega, tol=tol)
    z = _jacobi_z(M, q, z0, omega, iterations=iterations)
    return make_solution(M, q, z, iterations, tol)
