"""How the cones' Newton solves its Newton system: one small frozen object per method (lineax style).

:func:`jaxcontact.cones.newton.newton` takes ``linear_solver=`` one of

* :class:`DenseLU` (the default) — a dense LU of J + σ I (:func:`dense_solve`): O(n³) a step; W given
  by block rows is densified first;
* :class:`GMRES` — preconditioned GMRES from products with J only, so W by block rows stays
  sparse (O(nnz) per inner iteration; the inexact direction is still checked for descent);
* :class:`SparseLU` — a sparse direct LU of J + σ I assembled from W's block rows (SciPy's SuperLU
  through a host callback), exact like the dense LU where GMRES stalls on near-singular J;
* :class:`BandedLU` — an LU within a band (:func:`banded_solve`): O(n b²) a step where J vanishes beyond b
  diagonals, as a chain of contacts makes it (J = A + B W has W's pattern), the dense LU elsewhere.

Each object declares how it takes W (:meth:`prepare`, which refuses a W it cannot use, by name)
and gives the step's direction (:meth:`direction`): the proximally regularised Newton step
(J + σ I) d = −F when it descends on ψ = ½‖F‖², else the Levenberg–Marquardt step
(JᵀJ + ‖F‖ I) d = −JᵀF, solved the same way. The objects are static (hashable) options.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse
import scipy.sparse.linalg
from jax import lax
from jax.scipy.sparse.linalg import cg, gmres

from jaxcontact.cones import delassus
from jaxcontact.cones.branch import branch, unless

KRYLOV_TOL = 1e-12  # relative residual of the inner solves with W by block rows
KRYLOV_RESTARTS = 4


# Up to this size :func:`dense_solve` factorises in jax itself, above it LAPACK does.
LAPACK_FROM = 64


def dense_solve(A, b):
    """A⁻¹ b by LU with partial pivoting (A (n, n), b (n,)); a singular A gives non-finite entries, as LAPACK.

    Up to ``LAPACK_FROM`` unknowns the elimination is written in jax (a loop over the pivots whose row
    operations are elementwise): under vmap it is one program over the batch, with no LAPACK custom call,
    which on the CPU runs once per member and may hang on several host devices (bench/RESULTS.md, "LAPACK on
    several host devices"), so a batched step whose Newton systems are small stays a pure XLA program.
    """
    n = A.shape[0]
    if n >= LAPACK_FROM:
        return jnp.linalg.solve(A, b)
    rows = jnp.arange(n)

    def eliminate(k, M):
        p = jnp.argmax(jnp.where(rows >= k, jnp.abs(M[:, k]), -1.0))
        Mk, Mp = M[k], M[p]
        M = M.at[p].set(Mk).at[k].set(Mp)
        f = jnp.where(rows > k, M[:, k] / Mp[k], 0.0)
        return M - f[:, None] * Mp[None, :]

    M = jax.lax.fori_loop(0, n, eliminate, jnp.concatenate([A, b[:, None]], axis=1))
    U, y = M[:, :n], M[:, n]

    def substitute(i, x):
        k = n - 1 - i
        return x.at[k].set((y[k] - U[k] @ x) / U[k, k])

    return jax.lax.fori_loop(0, n, substitute, jnp.zeros_like(b))


def lu_factor(A):
    """(LU, perm): A's LU factors with partial pivoting, in jax like :func:`dense_solve` (no LAPACK call), for
    several right-hand sides that come one after another (:func:`lu_solve`; :func:`dense_solve` is quicker for
    one). ``LU`` holds U on and above its diagonal and L's multipliers below it; ``perm`` A's rows in pivot
    order (P A = L U)."""
    n = A.shape[0]
    rows = jnp.arange(n)

    def eliminate(k, carry):
        M, perm = carry
        p = jnp.argmax(jnp.where(rows >= k, jnp.abs(M[:, k]), -1.0))
        Mk, Mp = M[k], M[p]
        M = M.at[p].set(Mk).at[k].set(Mp)
        perm = perm.at[p].set(perm[k]).at[k].set(perm[p])
        f = jnp.where(rows > k, M[:, k] / Mp[k], 0.0)
        # Columns after k are eliminated; column k keeps the multipliers below the pivot.
        M = M - f[:, None] * jnp.where(rows > k, Mp, 0.0)[None, :]
        return M.at[:, k].set(jnp.where(rows > k, f, M[:, k])), perm

    return jax.lax.fori_loop(0, n, eliminate, (A, rows))


def lu_solve(factors, b):
    """A⁻¹ b (b (n,)) from :func:`lu_factor`'s ``(LU, perm)``: L y = P b forwards, U x = y backwards."""
    LU, perm = factors
    n = LU.shape[0]
    rows = jnp.arange(n)

    def forward(i, y):
        return y.at[i].add(-(jnp.where(rows < i, LU[i], 0.0) @ y))

    y = jax.lax.fori_loop(0, n, forward, b[perm])

    def backward(i, x):
        k = n - 1 - i
        return x.at[k].set((y[k] - jnp.where(rows > k, LU[k], 0.0) @ x) / LU[k, k])

    return jax.lax.fori_loop(0, n, backward, jnp.zeros_like(b))


def banded_solve(A, b, lower: int, upper: int):
    """A⁻¹ b for A (n, n) that vanishes below its ``lower``-th subdiagonal and above its ``upper``-th
    superdiagonal (static ints ≥ 0): LU with partial pivoting within the band, as LAPACK's ``gbsv``. Entries of A
    outside the band are not read. A singular A gives non-finite entries, as :func:`dense_solve`.

    A pivot's elimination touches the ``lower`` + 1 rows below it and the ``lower`` + ``upper`` + 1 columns
    right of it only (row swaps widen U to ``lower`` + ``upper`` superdiagonals), so the loop carries that
    window alone, one row entering and one leaving per pivot: O(n ``lower`` (``lower`` + ``upper``)) work and
    no matrix-sized array updated in the loop (which XLA would copy at every pivot under vmap).
    """
    n = A.shape[0]
    lower, upper = min(lower, n - 1), min(upper, n - 1)
    R, C = lower + 1, lower + upper + 1
    Ap = jnp.pad(A, ((0, lower), (0, C)))
    bp = jnp.pad(b, (0, lower))
    k = np.arange(n)
    # Row k + lower enters the window at pivot k, with its columns k … k + C − 1.
    entering = Ap[(k + lower)[:, None], k[:, None] + np.arange(C)[None, :]]
    rows = np.arange(R)

    def eliminate(window, row_in):
        W, z = window
        W = jnp.concatenate([W, row_in[0][None]])
        z = jnp.concatenate([z, row_in[1][None]])
        p = jnp.argmax(jnp.abs(W[:, 0]))
        pivot = rows == p
        # The pivot row by a masked sum (a vmapped dynamic index would gather lane by lane).
        wp = jnp.sum(jnp.where(pivot[:, None], W, 0.0), axis=0)
        zp = jnp.sum(jnp.where(pivot, z, 0.0))
        W = jnp.where(pivot[:, None], W[0][None], W)  # row p takes row 0's place; row 0 leaves as U's row
        z = jnp.where(pivot, z[0], z)
        f = W[1:, 0] / wp[0]
        rest = W[1:] - f[:, None] * wp[None]
        # The next pivot's window starts one column to the right.
        shifted = jnp.concatenate([rest[:, 1:], jnp.zeros((lower, 1), A.dtype)], axis=1)
        return (shifted, z[1:] - f * zp), (wp, zp)

    # The first rows' window reaches past their band (zeros in a banded A, not read).
    first = jnp.where(np.arange(C)[None, :] - np.arange(lower)[:, None] <= upper, Ap[:lower, :C], 0.0)
    _, (U, y) = lax.scan(eliminate, (first, bp[:lower]), (entering, bp[lower:]))

    def substitute(after, row):  # after: x_{k+1} … x_{k+C−1}
        u, yk = row
        xk = (yk - jnp.sum(u[1:] * after)) / u[0]
        return jnp.concatenate([xk[None], after])[:-1], xk

    return lax.scan(substitute, jnp.zeros((C - 1,), A.dtype), (U, y), reverse=True)[1]


def _descends(d, grad):
    return jnp.all(jnp.isfinite(d)) & (grad @ d < 0)


def _levenberg_marquardt(J, grad, nF):
    return dense_solve(J.T @ J + nF * jnp.eye(J.shape[0], dtype=J.dtype), -grad)


@dataclasses.dataclass(frozen=True)
class DenseLU:
    """The Newton system by a dense LU (:func:`dense_solve`); W by block rows is densified."""

    name: ClassVar[str] = "dense LU"

    def prepare(self, W, caller: str):
        """W as this solver reads it: dense."""
        return delassus.to_dense(W)

    def direction(self, J, F, grad, nF, sigma, nc):
        """The Newton direction, or the Levenberg–Marquardt one where it does not descend."""
        d = dense_solve(J + sigma * jnp.eye(J.shape[0], dtype=J.dtype), -F)
        # The O(n³) fallback only when needed (under vmap: when some problem of the batch needs it).
        return unless(_descends(d, grad), d, _levenberg_marquardt, J, grad, nF)


@dataclasses.dataclass(frozen=True)
class BandedLU:
    """The Newton system by an LU within a band (:func:`banded_solve`): J vanishing beyond ``lower`` sub- and
    ``upper`` superdiagonals (static ints ≥ 0); the Levenberg–Marquardt fallback's JᵀJ within twice the band.
    J = A + B W has W's pattern, so a W whose contacts couple only their neighbours in the order (a column, a
    chain) has such a band. Where J has an entry outside the band, the direction is :class:`DenseLU`'s (under
    vmap, for the whole batch when one member has one): the band sets the cost, never the answer."""

    lower: int
    upper: int
    name: ClassVar[str] = "banded LU"

    def __post_init__(self):
        for label in ("lower", "upper"):
            v = getattr(self, label)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"BandedLU: {label} must be a static int >= 0; got {v!r}")

    def prepare(self, W, caller: str):
        """W as this solver reads it: dense."""
        return delassus.to_dense(W)

    def direction(self, J, F, grad, nF, sigma, nc):
        """The Newton direction within the band, or the Levenberg–Marquardt one where it does not descend;
        :class:`DenseLU`'s where J has an entry outside the band."""
        n = J.shape[0]
        i = np.arange(n)
        outside = (i[None, :] - i[:, None] > self.upper) | (i[:, None] - i[None, :] > self.lower)
        inside = ~jnp.any(outside & (J != 0))
        lo, up, wide = self.lower, self.upper, self.lower + self.upper

        def banded(J, F, grad, nF, sigma):
            d = banded_solve(J + sigma * jnp.eye(n, dtype=J.dtype), -F, lo, up)
            lm = lambda J, grad, nF: banded_solve(J.T @ J + nF * jnp.eye(n, dtype=J.dtype), -grad, wide, wide)  # noqa: E731
            return unless(_descends(d, grad), d, lm, J, grad, nF)

        dense = lambda J, F, grad, nF, sigma: DenseLU().direction(J, F, grad, nF, sigma, nc)  # noqa: E731
        return branch(inside, banded, dense, J, F, grad, nF, sigma)

    @staticmethod
    def pays(n: int, lower: int, upper: int) -> bool:
        """Whether a band of ``lower`` sub- and ``upper`` superdiagonals makes the LU of an (n, n) system cheaper
        than the dense one: its window (``lower`` + 1) × (``lower`` + ``upper`` + 1) against n², with the
        margin the window's per-pivot overhead needs."""
        return 4 * (lower + 1) * (lower + upper + 1) <= n * n


@dataclasses.dataclass(frozen=True)
class GMRES:
    """The Newton system by GMRES with restart length ``restart`` (at most ``KRYLOV_RESTARTS`` cycles,
    block-Jacobi preconditioned) and the fallback by conjugate gradients on the normal equations, from
    products with J = A + B W only: W by block rows is never densified (static int ≥ 1)."""

    restart: int = 30
    name: ClassVar[str] = "GMRES"

    def __post_init__(self):
        if isinstance(self.restart, bool) or not isinstance(self.restart, int) or self.restart < 1:
            raise ValueError(f"GMRES: restart must be a static int >= 1; got {self.restart!r}")

    def prepare(self, W, caller: str):
        """W as given (dense, or block rows kept sparse)."""
        return W

    def direction(self, J, F, grad, nF, sigma, nc):
        """The inexact Newton direction, or the Levenberg–Marquardt one by CG where it does not descend."""
        dim = F.shape[0] // nc
        diag = delassus.diagonal_blocks(J, nc) + sigma * jnp.eye(dim, dtype=F.dtype)
        inv = jnp.linalg.inv(diag)  # block-Jacobi preconditioner: nc small inverses
        precond = lambda x: jnp.einsum("iab,ib->ia", inv, x.reshape(nc, dim)).reshape(-1)
        op = lambda x: delassus.matvec(J, x) + sigma * x
        d, _ = gmres(op, -F, tol=KRYLOV_TOL, restart=self.restart, maxiter=KRYLOV_RESTARTS, M=precond)

        def lm(J, grad, nF):  # the normal equations by conjugate gradients: only products with J and Jᵀ
            normal = lambda x: delassus.transpose_matvec(J, delassus.matvec(J, x)) + nF * x
            return cg(normal, -grad, tol=KRYLOV_TOL, maxiter=self.restart * KRYLOV_RESTARTS)[0]

        return unless(_descends(d, grad), d, lm, J, grad, nF)


def _host_solve(rows, cols, values, b):
    A = scipy.sparse.csc_matrix((values, (rows, cols)), shape=(b.size, b.size))  # repeated positions summed
    with warnings.catch_warnings():  # a singular matrix gives NaN, which the caller checks for
        warnings.simplefilter("ignore", scipy.sparse.linalg.MatrixRankWarning)
        return scipy.sparse.linalg.spsolve(A, b).astype(b.dtype)


def _sparse_solve(rows, cols, values, b):
    """x with A x = b, A = Σ values at (rows, cols): SciPy's SuperLU on the host, one matrix per call.

    ``jax.experimental.sparse.linalg.spsolve`` calls the same SuperLU on CPU but
    needs canonical CSR (sorted, no repeated entries; else its callback fails
    on read-only buffers) and has no batching rule; this callback takes the
    block-row layout as it is and, under vmap, solves member by member.
    """
    out = jax.ShapeDtypeStruct(b.shape, b.dtype)
    return jax.pure_callback(_host_solve, out, rows, cols, values, b, vmap_method="sequential")


def _sparse_levenberg_marquardt(J, F, nF):
    # (JᵀJ + λ I) d = −JᵀF as the augmented system [[I, J], [Jᵀ, −λ I]] [s; d] = [−F; 0]: JᵀJ, whose
    # pattern reaches two block hops and whose condition number is J's squared, is never formed.
    rows, cols, values = delassus.coo(J)
    n = F.shape[0]
    diag = np.arange(n, dtype=np.int32)
    R = jnp.concatenate([rows, n + cols, diag, n + diag])
    C = jnp.concatenate([n + cols, rows, diag, n + diag])
    V = jnp.concatenate([values, values, jnp.ones(n, F.dtype), jnp.full(n, -nF, F.dtype)])
    return _sparse_solve(R, C, V, jnp.concatenate([-F, jnp.zeros_like(F)]))[n:]


@dataclasses.dataclass(frozen=True)
class SparseLU:
    """The Newton system (J + σ I) d = −F by a sparse direct LU (SciPy's SuperLU through a host
    callback), J assembled from W's block rows, and the Levenberg–Marquardt fallback as the equivalent
    sparse augmented system. Needs W by block rows. Runs on the host one matrix at a time: under vmap
    the batch is solved member by member."""

    name: ClassVar[str] = "sparse LU"

    def prepare(self, W, caller: str):
        """W by block rows, as given; a dense W is refused (the sparsity pattern is read from its blocks)."""
        if not delassus.is_blocks(W):
            raise ValueError(
                f"{caller}: SparseLU() needs W by block rows (BlockRows, from block_rows): the "
                f"sparsity pattern is read from its block columns; got a dense array {np.shape(W)}"
            )
        return W

    def direction(self, J, F, grad, nF, sigma, nc):
        """The Newton direction by SuperLU, or the Levenberg–Marquardt one where it does not descend."""
        rows, cols, values = delassus.coo(J)
        diag = np.arange(F.shape[0], dtype=np.int32)
        d = _sparse_solve(
            np.concatenate([rows, diag]),
            jnp.concatenate([cols, diag]),
            jnp.concatenate([values, jnp.full(F.shape, sigma, F.dtype)]),
            -F,
        )
        return unless(_descends(d, grad), d, _sparse_levenberg_marquardt, J, F, nF)


LINEAR_SOLVERS = (DenseLU, BandedLU, GMRES, SparseLU)
