"""The Delassus matrix W, dense or by d × d blocks, and the products the solvers need.

Every solver takes W either as a dense (d nc, d nc) array or as a
:class:`BlockRows`: per contact (block row) i the blocks W_ij it couples to,
padded to the longest row (an ELLPACK layout of blocks). A Gauss–Seidel
sweep then costs O(nnz blocks · d²) instead of O(nc² d²), and the layout has
static shapes, so it jits, vmaps and differentiates like a dense array.
Padding entries are zero blocks pointing at the row's own contact.
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


def is_blocks(W) -> bool:
    """Whether W is stored by block rows (:class:`BlockRows`) rather than dense."""
    return isinstance(W, BlockRows)


def size(W) -> int:
    """d nc, the number of unknowns."""
    if is_blocks(W):
        return W.values.shape[0] * W.values.shape[-1]
    return W.shape[-1]


def dtype_of(W):
    """The floating dtype of W, dense or by block rows."""
    return W.values.dtype if is_blocks(W) else W.dtype


def matvec(W, r):
    """W r for either storage."""
    if is_blocks(W):
        nc, _, d, _ = W.values.shape
        R = r.reshape(nc, d)
        return jnp.einsum("ikab,ikb->ia", W.values, R[W.cols]).reshape(-1)
    return W @ r


def diagonal_blocks(W, nc: int):
    """(nc, d, d) diagonal blocks W_ii."""
    if is_blocks(W):
        own = (W.cols == jnp.arange(nc)[:, None]).astype(W.values.dtype)
        return jnp.einsum("ik,ikab->iab", own, W.values)
    d = W.shape[0] // nc
    Wr = W.reshape(nc, d, nc, d)
    return Wr[jnp.arange(nc), :, jnp.arange(nc), :]


def to_dense(W):
    """The dense matrix (for the Newton solver's factorisation)."""
    if not is_blocks(W):
        return W
    nc, kmax, d, _ = W.values.shape
    D = jnp.zeros((nc, nc, d, d), W.values.dtype)
    D = D.at[jnp.arange(nc)[:, None], W.cols].add(W.values)
    return D.transpose(0, 2, 1, 3).reshape(nc * d, nc * d)


def transpose_matvec(W, x):
    """Wᵀ x for either storage (block rows: a scatter-add over the block columns)."""
    if is_blocks(W):
        nc, _, d, _ = W.values.shape
        X = x.reshape(nc, d)
        parts = jnp.einsum("ikab,ia->ikb", W.values, X)
        return jax.ops.segment_sum(parts.reshape(-1, d), W.cols.reshape(-1), num_segments=nc).reshape(-1)
    return W.T @ x


def block_diagonal_plus(W, A, B):
    """A + B W with A, B block diagonal (nc, d, d): dense, or block rows of W's pattern."""
    nc, d, _ = A.shape
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
