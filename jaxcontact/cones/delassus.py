"""The Delassus matrix W, dense, by d × d blocks or by its factors, and the products the solvers need.

Every solver takes W as a dense (d nc, d nc) array, as :class:`BlockRows` or as :class:`Factored`:

* :class:`BlockRows`: per contact (block row) i the blocks W_ij it couples to, padded to the longest row
  (an ELLPACK layout of blocks). A Gauss–Seidel sweep then costs O(nnz blocks · d²) instead of
  O(nc² d²), and the layout has static shapes, so it jits, vmaps and differentiates like a dense array.
  Padding entries are zero blocks pointing at the row's own contact.
* :class:`Factored`: W = Hᵀ X + diag(s) from the n_u × d nc factors a time step has anyway (H the
  contacts' velocity Jacobian, X = M̂ H the velocity response to their impulses). When a system has
  fewer velocities than contact unknowns — a box on 8 vertex contacts: 6 against 24 — a product with W
  costs 2 n_u d nc instead of (d nc)², W is never formed, and a Gauss–Seidel sweep carries the velocity
  v = X r instead of reading W's rows.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class BlockRows(NamedTuple):
    """W by block rows: ``values[i, k]`` (d × d) is the block at (i, ``cols[i, k]``)."""

    cols: jax.Array  # (nc, kmax) int32
    values: jax.Array  # (nc, kmax, d, d)


def block_rows(blocks, nc: int) -> BlockRows:
    """:class:`BlockRows` from a :class:`~jaxcontact.cones.problem.BlockMatrix` (numpy, outside jit)."""
    rows, cols, values = (np.asarray(x) for x in blocks)
    d = values.shape[-1]
    count = np.bincount(rows, minlength=nc)
    kmax = max(int(count.max(initial=0)), 1)
    C = np.tile(np.arange(nc)[:, None], (1, kmax)).astype(np.int32)
    V = np.zeros((nc, kmax, d, d), values.dtype)
    slot = np.zeros(nc, np.int64)
    for r, c, v in zip(rows, cols, values):
        C[r, slot[r]] = c
        V[r, slot[r]] += v
        slot[r] += 1
    return BlockRows(jnp.asarray(C), jnp.asarray(V))


class Factored(NamedTuple):
    """W = Hᵀ X + diag(s) (module docstring): H and X (n_u, d nc), s (d nc,); unknowns per contact."""

    H: jax.Array
    X: jax.Array
    s: jax.Array


def is_blocks(W) -> bool:
    """Whether W is stored by block rows (:class:`BlockRows`) rather than dense."""
    return isinstance(W, BlockRows)


def is_factored(W) -> bool:
    """Whether W is given by its factors (:class:`Factored`)."""
    return isinstance(W, Factored)


def factored_pays(n_u: int, n: int) -> bool:
    """Whether :class:`Factored` makes W's products cheaper than dense for n_u velocities and n unknowns:
    2 n_u n against n² multiply–adds for W r, 2 n_u d against d n for a contact's row in a sweep."""
    return 2 * n_u < n


def size(W) -> int:
    """d nc, the number of unknowns."""
    if is_blocks(W):
        return W.values.shape[0] * W.values.shape[-1]
    if is_factored(W):
        return W.s.shape[-1]
    return W.shape[-1]


def dtype_of(W):
    """The floating dtype of W, in any storage."""
    if is_blocks(W):
        return W.values.dtype
    return W.X.dtype if is_factored(W) else W.dtype


def matvec(W, r):
    """W r for any storage."""
    if is_blocks(W):
        nc, _, d, _ = W.values.shape
        R = r.reshape(nc, d)
        return jnp.einsum("ikab,ikb->ia", W.values, R[W.cols]).reshape(-1)
    if is_factored(W):
        return W.H.T @ (W.X @ r) + W.s * r
    return W @ r


def diagonal(W):
    """W's diagonal, (d nc,)."""
    if is_factored(W):
        return jnp.sum(W.H * W.X, axis=0) + W.s
    return jnp.diagonal(to_dense(W))


def add_diagonal(W, v):
    """W + diag(v), in W's storage (dense or factored)."""
    if is_factored(W):
        return W._replace(s=W.s + v)
    return W + jnp.diag(v)


def diagonal_blocks(W, nc: int):
    """(nc, d, d) diagonal blocks W_ii."""
    if is_blocks(W):
        own = (W.cols == jnp.arange(nc)[:, None]).astype(W.values.dtype)
        return jnp.einsum("ik,ikab->iab", own, W.values)
    if is_factored(W):
        n_u, n = W.H.shape
        d = n // nc
        blocks = jnp.einsum("kia,kib->iab", W.H.reshape(n_u, nc, d), W.X.reshape(n_u, nc, d))
        return blocks + W.s.reshape(nc, d)[:, :, None] * jnp.eye(d, dtype=W.s.dtype)
    d = W.shape[0] // nc
    Wr = W.reshape(nc, d, nc, d)
    return Wr[jnp.arange(nc), :, jnp.arange(nc), :]


def to_dense(W):
    """The dense matrix (for the Newton solver's factorisation)."""
    if is_factored(W):
        return W.H.T @ W.X + jnp.diag(W.s)
    if not is_blocks(W):
        return W
    nc, kmax, d, _ = W.values.shape
    D = jnp.zeros((nc, nc, d, d), W.values.dtype)
    D = D.at[jnp.arange(nc)[:, None], W.cols].add(W.values)
    return D.transpose(0, 2, 1, 3).reshape(nc * d, nc * d)


def transpose_matvec(W, x):
    """Wᵀ x for any storage (block rows: a scatter-add over the block columns)."""
    if is_blocks(W):
        nc, _, d, _ = W.values.shape
        X = x.reshape(nc, d)
        parts = jnp.einsum("ikab,ia->ikb", W.values, X)
        return jax.ops.segment_sum(parts.reshape(-1, d), W.cols.reshape(-1), num_segments=nc).reshape(-1)
    if is_factored(W):
        return W.X.T @ (W.H @ x) + W.s * x
    return W.T @ x


def block_diagonal_plus(W, A, B):
    """A + B W with A, B block diagonal (nc, d, d): dense (W dense or factored), or block rows of W's pattern."""
    nc, d, _ = A.shape
    W = to_dense(W) if is_factored(W) else W
    if is_blocks(W):
        # A goes into one slot per row: padding slots also point at the row's own contact.
        own = W.cols == jnp.arange(nc)[:, None]
        first = (own & (jnp.cumsum(own, axis=1) == 1)).astype(W.values.dtype)
        values = jnp.einsum("iab,ikbc->ikac", B, W.values) + first[:, :, None, None] * A[:, None]
        return BlockRows(W.cols, values)
    n = nc * d
    J = jnp.einsum("iab,ibn->ian", B, W.reshape(nc, d, n)).reshape(nc, d, nc, d)
    idx = jnp.arange(nc)
    return J.at[idx, :, idx, :].add(A).reshape(n, n)


def coo(W: BlockRows):
    """W's entries as coordinates ``(rows, cols, values)`` (padding zeros and repeated positions included).

    ``rows`` is a numpy array fixed by W's shapes at trace time; ``cols`` and
    ``values`` follow the block columns, so the pattern is W's whatever they are.
    """
    nc, kmax, d, _ = W.values.shape
    n = nc * d
    rows = np.repeat(np.arange(n, dtype=np.int32), kmax * d)
    cols = W.cols[:, None, :, None] * d + jnp.arange(d, dtype=W.cols.dtype)  # entry (i, a, k, b)
    cols = jnp.broadcast_to(cols, (nc, d, kmax, d)).reshape(-1)
    return rows, cols, W.values.transpose(0, 2, 1, 3).reshape(-1)
