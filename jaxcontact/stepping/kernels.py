"""Kernels shared by the time-stepping schemes (one copy each; the schemes are siblings).

* :func:`spd_solve`: small SPD solves by an unrolled Cholesky (LAPACK above ``UNROLL_MAX``), its
  factor and its substitutions apart (:func:`spd_factor`, :func:`spd_factor_solve`);
* :func:`mass_solver`: B ↦ M⁻¹ B, M factorised once, by the mass structure a system declares
  (:func:`mass_structure`): a division for a diagonal M, one small Cholesky per block for a
  block-diagonal M (the cost grows with the number of blocks, not with n³; the blocks come from the
  system without assembling M when it gives them), :func:`spd_factor` otherwise;
* :func:`constrained_response`: the saddle-point system [[M, −Φ_qᵀ], [Φ_q, 0]] eliminated by
  the Schur complement G = Φ_q M⁻¹ Φ_qᵀ, for any number of right-hand sides — M⁻¹ by
  :func:`mass_solver` (the
  Moreau–Jean step's own structured path for a declared constraint pattern is
  :mod:`jaxcontact.stepping.structured`);
* :func:`bilateral_rows`, :func:`constrained_acceleration`, :func:`second_rate`: the
  Baumgarte-stabilised acceleration-level constraint rows and the accelerations they give;
* :func:`rk4`: one classical Runge–Kutta step as a ``lax.scan`` over its four stages
  (the right-hand side is traced once), with per-stage outputs for the caller to weight;
* :func:`constraint_residuals`: ‖Φ‖ and ‖Φ̇‖, the diagnostics every scheme reports;
* :func:`gaps_and_rates`: the gaps g_N and their rates ġ_N along q̇ = T(q) u (one owner of
  that rate: with a velocity map q̇ is not u);
* :func:`gap_closed`: which rigid contacts are closed (g_N ≤ a tolerance, by default a
  rounding guard); the rows of the closed or active contacts are then kept, and the others
  decoupled at a fixed shape, by :func:`jaxcontact.lcp.rows.decouple_rows`;
* :func:`regularized_solve`: a Cholesky solve of a positive semidefinite matrix shifted by a
  small multiple of its diagonal and refined once (rank-deficient Schur complements of the
  projections: singular configurations, redundant contacts);
* :func:`diffrax_solver`: the adaptive diffrax solvers by name.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import cho_factor, cho_solve

from jaxcontact.stepping.baumgarte import baumgarte_acceleration_rhs
from jaxcontact.system import LagrangianSystem, coordinate_rate, mass_block_groups, velocity_matrix

ADAPTIVE_METHODS = ("tsit5", "dopri5", "kvaerno5")

# Up to this size, SPD solves are written out entry by entry (see spd_solve).
UNROLL_MAX = 12


def spd_factor(A):
    """The Cholesky factor of a small symmetric positive definite A (n, n), for :func:`spd_factor_solve`.

    For n ≤ ``UNROLL_MAX`` it is written out entry by entry, (L, 1 / diag L) as lists of scalars (L's rows up
    to its diagonal), so under ``vmap`` every operation is elementwise over the batch axis and XLA fuses them;
    LAPACK's potrf/trsm would instead be called once per sample, and a batched step would be bound by those
    calls (the four-bar's A/B: bench/RESULTS.md, "Simulation throughput", "Speed-up made"). Above, LAPACK's
    lower factor. A matrix that is not positive definite gives NaN (√ of a non-positive pivot), which the step
    reports as not converged, as LAPACK's factorisation does.
    """
    n = A.shape[0]
    if n > UNROLL_MAX:
        return cho_factor(A, lower=True)[0]  # an array alone: a factor may leave a vmap
    L = [[None] * i for i in range(n)]
    inv_diag = [None] * n
    for j in range(n):
        d = A[j, j] - sum((L[j][k] * L[j][k] for k in range(j)), jnp.zeros((), A.dtype))
        inv_diag[j] = 1.0 / jnp.sqrt(d)
        for i in range(j + 1, n):
            L[i][j] = (A[i, j] - sum((L[i][k] * L[j][k] for k in range(j)), jnp.zeros((), A.dtype))) * inv_diag[j]
    return L, inv_diag


def spd_factor_solve(factor, B):
    """A⁻¹ B (B (n,) or (n, r)) from A's :func:`spd_factor`: two substitutions, unrolled like the factor."""
    if not isinstance(factor, tuple):  # LAPACK's lower factor
        return cho_solve((factor, True), B)
    L, inv_diag = factor
    n = len(L)
    y = [None] * n
    for i in range(n):  # L y = B
        y[i] = (B[i] - sum((L[i][k] * y[k] for k in range(i)), jnp.zeros_like(B[i]))) * inv_diag[i]
    x = [None] * n
    for i in reversed(range(n)):  # Lᵀ x = y
        x[i] = (y[i] - sum((L[k][i] * x[k] for k in range(i + 1, n)), jnp.zeros_like(B[i]))) * inv_diag[i]
    return jnp.stack(x)


def spd_solve(A, B):
    """A⁻¹ B for a small symmetric positive definite A (n, n) and B (n, r), by Cholesky (:func:`spd_factor`)."""
    return spd_factor_solve(spd_factor(A), B)


def mass_structure(system: LagrangianSystem, diagonal: bool = False):
    """The static structure of M(q, p) a solve may use: "diagonal" (declared by the system or promised
    by the scheme's ``diagonal``), the system's ``mass_blocks``, or None (dense)."""
    if diagonal or system.diagonal_mass:
        return "diagonal"
    return system.mass_blocks


def block_of(structure, n: int) -> np.ndarray:
    """(n,) static: the block of M each of its n coordinates lies in, for a :func:`mass_structure` (one block
    for a dense M)."""
    if structure == "diagonal":
        return np.arange(n)
    if structure is None:
        return np.zeros(n, int)
    out = np.empty(n, int)
    for i, block in enumerate(structure):
        out[list(block)] = i
    return out


def block_spd_factor(blocks: tuple[jax.Array, ...]):
    """The factors of a block-diagonal SPD matrix given by its blocks, grouped as
    :func:`~jaxcontact.system.mass_block_groups` groups them ((count, size, size) each): one vmapped
    :func:`spd_factor` per size (the diagonal for 1 × 1 blocks), so the cost is linear in the number of blocks."""
    return tuple(Ab[:, 0, 0] if Ab.shape[1] == 1 else jax.vmap(spd_factor)(Ab) for Ab in blocks)


def block_spd_factor_solve(factors, B, partition):
    """A⁻¹ B from :func:`block_spd_factor`'s factors of A on ``partition`` (the static ``mass_blocks``);
    B (n,) or (n, r)."""
    vector = B.ndim == 1
    B2 = B[:, None] if vector else B
    out = jnp.zeros(B2.shape, jnp.result_type(B2, *jax.tree_util.tree_leaves(factors)))
    for idx, factor in zip(mass_block_groups(partition), factors):
        if idx.shape[1] == 1:
            X, rows = B2[idx[:, 0]] / factor[:, None], idx[:, 0]
        else:
            X = jax.vmap(spd_factor_solve)(factor, B2[idx]).reshape(-1, B2.shape[1])
            rows = idx.reshape(-1)
        out = out.at[rows].set(X)
    return out[:, 0] if vector else out


def block_spd_solve(A, B, partition):
    """A⁻¹ B for a symmetric positive definite A that is block diagonal on ``partition`` (a static partition of
    its indices); B (n,) or (n, r). Entries of A outside the blocks are never read: a wrong partition gives a
    wrong answer."""
    blocks = tuple(A[idx[:, :, None], idx[:, None, :]] for idx in mass_block_groups(partition))
    return block_spd_factor_solve(block_spd_factor(blocks), B, partition)


class MassSolve:
    """B ↦ M⁻¹ B (B (n,) or (n, r)) with M factorised once (:func:`mass_solver`), and the entries of M⁻¹ inside
    its blocks (:meth:`inverse_entries`), which a Gram matrix of sparse rows needs."""

    def __init__(self, structure, M=None, factors=None):
        self.structure, self._M, self._factors = structure, M, factors
        if structure == "diagonal":
            self._d = jnp.diagonal(M)
        elif structure is None:
            self._factor = spd_factor(M)

    def __call__(self, B):
        if self.structure == "diagonal":
            return B / (self._d if B.ndim == 1 else self._d[:, None])
        if self.structure is not None:
            return block_spd_factor_solve(self._factors, B, self.structure)
        return spd_factor_solve(self._factor, B)

    def block_of(self, n: int) -> np.ndarray:
        """(n,) static: the block of M each coordinate lies in (one block for a dense M)."""
        return block_of(self.structure, n)

    def inverse_entries(self, a: np.ndarray, b: np.ndarray):
        """(M⁻¹)[a, b] for static index arrays a, b whose pairs lie inside one block of M each."""
        if self.structure == "diagonal":
            return 1.0 / self._d[a]
        if self.structure is None:
            n = self._M.shape[0]
            return self(jnp.eye(n, dtype=self._M.dtype))[a, b]
        out = jnp.zeros(a.shape, jax.tree_util.tree_leaves(self._factors)[0].dtype)
        for idx, factor in zip(mass_block_groups(self.structure), self._factors):
            size = idx.shape[1]
            where = {int(c): (j, l) for j, block in enumerate(idx) for l, c in enumerate(block)}
            pick = np.flatnonzero([int(c) in where for c in a])
            if pick.size == 0:
                continue
            j = np.asarray([where[int(c)][0] for c in a[pick]])
            la, lb = (np.asarray([where[int(c)][1] for c in x[pick]]) for x in (a, b))
            if size == 1:
                inv = 1.0 / factor[j]
            else:
                eye = jnp.broadcast_to(jnp.eye(size, dtype=out.dtype), (idx.shape[0], size, size))
                inv = jax.vmap(spd_factor_solve)(factor, eye)[j, la, lb]
            out = out.at[pick].set(inv)
        return out


def mass_solver(system: LagrangianSystem, q, p, diagonal: bool = False) -> MassSolve:
    """B ↦ M(q, p)⁻¹ B (B (n,) or (n, r)), M factorised once for every solve, by the structure
    :func:`mass_structure` finds: a division for a diagonal M, one small Cholesky per block for declared
    ``mass_blocks`` (read from the system's ``mass_block_values`` when it has them: M is then never
    assembled), :func:`spd_factor` otherwise."""
    structure = mass_structure(system, diagonal)
    if structure is not None and structure != "diagonal":
        return MassSolve(structure, factors=block_spd_factor(system.block_masses(q, p)))
    return MassSolve(structure, M=system.mass(q, p))


def second_rate(fn, q, u, t, rate=None):
    """fn(q, t), its rate along (q̇, 1) and its second rate at u̇ = 0 (two nested forward passes).

    ``rate(q) -> q̇`` at the fixed velocity u (None: q̇ = u). With a velocity map q̇ = T(q) u the
    inner rate is taken at every q of the outer pass, so the second rate holds the T_q term.
    """
    one = jnp.ones_like(t)
    rate = (lambda qq: u) if rate is None else rate

    def value_and_rate(qq, tt):
        return jax.jvp(fn, (qq, tt), (rate(qq), one))

    (g, g_dot), (_, g_ddot) = jax.jvp(value_and_rate, (q, t), (rate(q), one))
    return g, g_dot, g_ddot


def bilateral_rows(system: LagrangianSystem, p, q, u, t, alpha, beta):
    """(Φ_q, rhs) of the Baumgarte-stabilised acceleration rows Φ_q u̇ = rhs (empty without constraints);
    Φ_q is the Jacobian in the velocities u (∂Φ/∂q T(q) with a velocity map)."""
    if system.constraints is None:
        return jnp.zeros((0, u.shape[0]), q.dtype), jnp.zeros((0,), q.dtype)
    phi, phi_dot, convective = second_rate(
        lambda qq, tt: system.constraints(qq, tt, p), q, u, t, lambda qq: coordinate_rate(system, qq, u)
    )
    phi_q = jax.jacfwd(system.constraints)(q, t, p)
    T = velocity_matrix(system, q)
    if T is not None:
        phi_q = phi_q @ T
    return phi_q, -convective + baumgarte_acceleration_rhs(phi, phi_dot, alpha, beta)


def regularization_shift(dtype, regularization=None) -> float:
    """The relative shift δ of :func:`regularized_solve`: ``regularization``, or 100 eps of the dtype."""
    return 100.0 * float(jnp.finfo(dtype).eps) if regularization is None else regularization


def regularized_solve(A, rhs, reg, lm=None):
    """A⁻¹ rhs through the Cholesky factor of A + δ I, δ = reg · max diag A (reg if that is 0).

    With ``lm`` = κ‖Φ(q_k)‖ (Levenberg–Marquardt, position only) the shift
    grows by lm · √(max diag A) (see "Rank loss" in :mod:`jaxcontact.stepping.projection`).

    One step of iterative refinement with the same factor removes the shift's
    first-order bias (relative error (δ/σ_min)² instead of δ/σ_min), so the
    one-shot velocity projection is accurate in float32 too. On a null
    direction of A the refined step is twice the damped one: still bounded.
    """
    scale = jnp.max(jnp.diagonal(A), initial=0.0)
    scale = jnp.where(scale > 0, scale, 1.0)
    shift = reg * scale
    if lm is not None:
        shift = shift + lm * jnp.sqrt(scale)
    chol = cho_factor(A + shift * jnp.eye(A.shape[0], dtype=A.dtype), lower=True)
    x = cho_solve(chol, rhs)
    return x + cho_solve(chol, rhs - A @ x)


def constrained_response(solve_M, phi_q, force, columns, rhs):
    """Accelerations and bilateral multipliers of M u̇ = force + C x + Φ_qᵀ λ, Φ_q u̇ = rhs, affine in x.

    Returns (a₀, λ₀, M̂C, Λ) with u̇ = a₀ + M̂C x and λ = λ₀ + Λ x (Schur complement on
    G = Φ_q M⁻¹ Φ_qᵀ; one solve with M and one with G for every right-hand side).
    ``solve_M``: B ↦ M⁻¹ B (:func:`mass_solver`).
    """
    m, r = phi_q.shape[0], columns.shape[1]
    B = jnp.concatenate([force[:, None], columns, phi_q.T], axis=1)
    X = solve_M(B)
    a_free, X_C, X_phi = X[:, 0], X[:, 1 : 1 + r], X[:, 1 + r :]
    if m == 0:
        return a_free, jnp.zeros((0,), X.dtype), X_C, jnp.zeros((0, r), X.dtype)
    Y = spd_solve(phi_q @ X_phi, jnp.concatenate([(rhs - phi_q @ a_free)[:, None], -(phi_q @ X_C)], axis=1))
    return a_free + X_phi @ Y[:, 0], Y[:, 0], X_C + X_phi @ Y[:, 1:], Y[:, 1:]


def constrained_acceleration(system: LagrangianSystem, p, q, u, t, force, alpha, beta, diagonal=False):
    """(u̇, λ) of M u̇ = force + Φ_qᵀ λ with the Baumgarte-stabilised Φ̈ + 2αΦ̇ + β²Φ = 0.

    ``force`` (n_u,) is every generalized force but the bilateral one. Without
    constraints λ is empty and u̇ = M⁻¹ force. ``diagonal`` (static): M is promised diagonal
    (:func:`mass_structure`).
    """
    t = jnp.asarray(t, q.dtype)
    phi_q, rhs = bilateral_rows(system, p, q, u, t, alpha, beta)
    a, lam, _, _ = constrained_response(
        mass_solver(system, q, p, diagonal), phi_q, force, jnp.zeros((u.shape[0], 0), q.dtype), rhs
    )
    return a, lam


def constraint_residuals(system: LagrangianSystem, q, u, t, p):
    """‖Φ(q, t)‖₂ and ‖Φ_q u + Φ_t‖₂ by one forward-mode pass (0 without constraints)."""
    if system.constraints is None:
        z = jnp.zeros((), q.dtype)
        return z, z
    t = jnp.asarray(t, q.dtype)
    phi, phi_dot = jax.jvp(
        lambda qq, tt: system.constraints(qq, tt, p), (q, t), (coordinate_rate(system, q, u), jnp.ones_like(t))
    )
    return _safe_norm(phi), _safe_norm(phi_dot)


def gaps_and_rates(system: LagrangianSystem, p, q, u, t):
    """(g_N, ġ_N) at (q, u, t): the gaps and their time derivatives W_Nᵀ u + ∂g/∂t, q moving at
    q̇ = T(q) u (u itself without a velocity map)."""
    t = jnp.asarray(t, q.dtype)
    return jax.jvp(lambda qq, tt: system.gaps(qq, tt, p), (q, t), (coordinate_rate(system, q, u), jnp.ones_like(t)))


def gap_closed(gap, q, tol=None):
    """(k,) bool: g_N ≤ ``tol``; None: the rounding guard 64 ε_mach max(1, ‖q‖∞).

    Without the guard a body resting or sliding on a surface (g_N = 0 up to the rounding
    of q's coordinates) drops in and out of the closed set at random and chatters.
    """
    if tol is None:
        tol = 64 * jnp.finfo(q.dtype).eps * jnp.maximum(1.0, jnp.max(jnp.abs(q)))
    return gap <= tol


def _safe_norm(x):
    """‖x‖₂ with a finite gradient at x = 0 (the double-where trick)."""
    sq = jnp.sum(x * x)
    nz = sq > 0
    return jnp.where(nz, jnp.sqrt(jnp.where(nz, sq, 1.0)), 0.0)


def diffrax_solver(method: str):
    """The diffrax solver named ``method`` (one of ADAPTIVE_METHODS): Tsit5/Dopri5 explicit,
    Kvaerno5 implicit. diffrax is imported here, on first use, so that importing the
    stepping schemes does not pay for it."""
    import diffrax

    return {"tsit5": diffrax.Tsit5, "dopri5": diffrax.Dopri5, "kvaerno5": diffrax.Kvaerno5}[method]()


RK4_NODES = (0.0, 0.5, 0.5, 1.0)
RK4_WEIGHTS = (1.0, 2.0, 2.0, 1.0)  # divided by 6


def rk4(derivative, y, t, H):
    """One classical RK4 step of size H for y' = derivative(y, t)[0] (y a pytree).

    ``derivative(y, t) -> (dy, aux)``: ``aux`` (any pytree, e.g. contact forces) is returned
    stacked over the four stages with the quadrature weights ``w`` (4,) = H (1, 2, 2, 1)/6,
    so ``quadrature(w, aux)`` integrates it over the step. Stage i evaluates at y + c_i H k_{i−1}
    (c = 0, ½, ½, 1); the stages are a ``lax.scan``, so ``derivative`` is traced once.
    Returns (y_E, stacked stage derivatives, stacked aux, w).
    """
    dtype = jax.tree.leaves(y)[0].dtype
    c = jnp.asarray(RK4_NODES, dtype)

    def stage(k_prev, c_i):
        ys = jax.tree.map(lambda a, k: a + c_i * H * k, y, k_prev)
        dy, aux = derivative(ys, t + c_i * H)
        return dy, (dy, aux)

    _, (ks, aux) = jax.lax.scan(stage, jax.tree.map(jnp.zeros_like, y), c)
    w = jnp.asarray(RK4_WEIGHTS, dtype) * (H / 6.0)
    y_E = jax.tree.map(lambda a, k: a + quadrature(w, k), y, ks)
    return y_E, ks, aux, w


# A Rosenbrock-W method on RK4's tableau (the penalty scheme's step where a system declares stiff viscous forces).
# Stage i: (I − hγW) kᵢ = h f(y + Σⱼ αᵢⱼ kⱼ) + hW Σⱼ γᵢⱼ kⱼ; y⁺ = y + Σᵢ bᵢ kᵢ, with α, b RK4's, so W = 0 gives
# RK4. The γᵢⱼ (derived for this project; W-methods: Hairer & Wanner, Solving ODEs II, IV.7) make it of order 3
# for any matrix W — with G = γI + (γᵢⱼ), c = α1: bᵀG1 = bᵀαG1 = bᵀGc = bᵀG²1 = 0 — and L-stable with W the
# Jacobian: R(∞) = 1 − bᵀ(α + G)⁻¹1 = 0, and γ inside the A-stability interval [0.2236, 0.5728] of such methods
# (the value of SDIRK3 and ROS34PW2). With W the stiff part only, the step stays stable for any W and explicit
# eigenvalues hλ up to 2.75 on the imaginary and negative real axes (RK4's limits: 2.83 and 2.79).
ROSW_GAMMA = 0.435866521508459
ROSW_ALPHA = tuple(tuple(RK4_NODES[i] if j == i - 1 else 0.0 for j in range(4)) for i in range(4))
ROSW_GAMMAS = (
    (0.0, 0.0, 0.0, 0.0),
    (-0.5, 0.0, 0.0, 0.0),
    (0.5, -1.3075995645253768, 0.0, 0.0),
    (0.0, -0.5452602553351020, 0.5452602553351020, 0.0),
)
ROSW_WEIGHTS = tuple(w / 6.0 for w in RK4_WEIGHTS)


def quadrature(w, stages):
    """Σᵢ wᵢ stagesᵢ over the leading (stage) axis, as elementwise products and sums: the same
    rounding batched or not (a dot product's summation order may differ under ``vmap``)."""
    out = w[0] * stages[0]
    for i in range(1, stages.shape[0]):
        out = out + w[i] * stages[i]
    return out
