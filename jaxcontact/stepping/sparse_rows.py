"""The contact rows Wᵀ of the projections and of Moreau–Jean as an operator, dense or by a declared pattern.

The projections (:mod:`jaxcontact.stepping.projection`) use the gaps' Jacobian W_N (n × k) through four
products only: W_Nᵀ x, W_N λ, W_Nᵀ Y for the few columns Y = M⁻¹ Φ_qᵀ, and the Gram matrix W_Nᵀ M⁻¹ W_N. Held
dense, the first three cost O(nk) and the last O(nk²) with k solves with M; on a chain of N clearance joints
(k = N, n ∝ N) that is what makes a step grow faster than N. A system that declares each gap row's coordinates
(``LagrangianSystem.gap_columns``) gets :class:`SparseRows` instead:

* the entries come from one forward tangent per colour of columns (columns no row shares share a tangent,
  :func:`jaxcontact.stepping.structured.column_colors`), not one per coordinate;
* the products run over the entries, and the Gram matrix over the pairs of entries that lie in one block of M
  (entries of different blocks meet no entry of M⁻¹): linear in the number of contacts when each joint
  touches a few blocks.

Both are evaluated the same way by the projections, so a pattern changes the cost, not the arithmetic's
meaning: the two agree to rounding (tests/stepping/test_sparse_rows.py). Moreau–Jean's step needs the same
four products of W = [W_N, W_T] (:func:`contact_rows`, where the slips' pattern is declared too,
``LagrangianSystem.slip_columns``): its Delassus matrix Wᵀ M̂⁻¹ W = Wᵀ M⁻¹ W − (Wᵀ M⁻¹ Φ_qᵀ) G⁻¹ (Φ_q M⁻¹ W)
and its response M̂⁻¹ W P.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.stepping.structured import column_colors
from jaxcontact.system import coordinate_rate, value_and_jacobian, velocity_matrix


class DenseRows:
    """W (n, k) held whole."""

    def __init__(self, W):
        self.W = W
        self.k = W.shape[1]

    def t(self, x):
        """Wᵀ x."""
        return self.W.T @ x

    def apply(self, lam):
        """W λ."""
        return self.W @ lam

    def cross(self, Y):
        """Wᵀ Y for Y (n, m)."""
        return self.W.T @ Y

    def gram(self, solve_M):
        """Wᵀ M⁻¹ W."""
        return self.W.T @ solve_M(self.W)


class SparseRows:
    """W's entries ``values`` (E,) at the static rows ``rows`` (E,) and coordinates ``cols`` (E,)."""

    def __init__(self, values, rows: np.ndarray, cols: np.ndarray, k: int, n: int):
        self.values, self.rows, self.cols, self.k, self.n = values, rows, cols, k, n

    def t(self, x):
        """Wᵀ x, over the entries."""
        return jax.ops.segment_sum(self.values * x[self.cols], self.rows, self.k)

    def apply(self, lam):
        """W λ, scattered from the entries."""
        return jnp.zeros((self.n,), self.values.dtype).at[self.cols].add(self.values * lam[self.rows])

    def cross(self, Y):
        """Wᵀ Y for Y (n, m), over the entries."""
        return jax.ops.segment_sum(self.values[:, None] * Y[self.cols], self.rows, self.k)

    def gram(self, solve_M):
        """Wᵀ M⁻¹ W over the pairs of entries in one block of M (``solve_M``: a :class:`MassSolve
        <jaxcontact.stepping.kernels.MassSolve>`)."""
        first, second = _pairs_in_blocks(*_key(self.cols, solve_M.block_of(self.n)))
        inverse = solve_M.inverse_entries(self.cols[first], self.cols[second])
        products = self.values[first] * self.values[second] * inverse
        flat = jax.ops.segment_sum(products, self.rows[first] * self.k + self.rows[second], self.k * self.k)
        return flat.reshape(self.k, self.k)


def gram_pattern(columns: tuple[tuple[int, ...], ...], block: np.ndarray) -> np.ndarray:
    """(k, k) static bool: where Wᵀ M⁻¹ W may be non-zero, for k rows of W with the coordinates ``columns`` and M
    block-diagonal on ``block`` (the block of each coordinate): the pairs of rows with entries in one block."""
    rows = np.concatenate([np.full(len(c), i) for i, c in enumerate(columns)]).astype(np.int64)
    cols = np.concatenate([np.asarray(c) for c in columns]).astype(np.int64)
    first, second = _pairs_in_blocks(*_key(cols, block))
    out = np.zeros((len(columns), len(columns)), bool)
    out[rows[first], rows[second]] = True
    return out


def _key(cols, block) -> tuple[bytes, bytes]:
    return tuple(np.asarray(a, np.int64).tobytes() for a in (cols, block))


@functools.cache
def _pairs_in_blocks(cols_bytes: bytes, block_bytes: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (e, f) of entries whose coordinates lie in one block of M (static, cached by pattern)."""
    cols, block = np.frombuffer(cols_bytes, np.int64), np.frombuffer(block_bytes, np.int64)
    of_entry = block[cols]
    first, second = [], []
    for b in np.unique(of_entry):
        entries = np.flatnonzero(of_entry == b)
        first.append(np.repeat(entries, entries.size))
        second.append(np.tile(entries, entries.size))
    return np.concatenate(first), np.concatenate(second)


@functools.cache
def _pattern(columns: tuple[tuple[int, ...], ...], n: int):
    """(rows, cols, colour of each entry) of a gap pattern, and the colours' seeds (static)."""
    rows = np.concatenate([np.full(len(c), i) for i, c in enumerate(columns)]).astype(np.int64)
    cols = np.concatenate([np.asarray(c) for c in columns]).astype(np.int64)
    groups = column_colors(columns, n)
    colour = np.empty(n, np.int64)
    for g, members in enumerate(groups):
        colour[list(members)] = g
    seeds = np.zeros((len(groups), n))
    for g, members in enumerate(groups):
        seeds[g, list(members)] = 1.0
    return rows, cols, colour[cols], seeds


def _by_pattern(tangent, n: int, dtype, columns: tuple, field: str):
    """(value, Jacobian as :class:`SparseRows`) of a function through ``tangent(seed) -> (value, derivative along
    seed)``, one seed per colour of ``columns`` over its n inputs. The seeds' tangents are one vmap: the function
    is traced once, not once per colour (a spatial assembly's contact geometry would compile once per colour)."""
    rows, cols, colour, seeds = _pattern(columns, n)
    values, derivative = jax.vmap(tangent)(jnp.asarray(seeds, dtype))  # (colours, rows) each
    value = values[0]
    if value.shape != (len(columns),):
        raise ValueError(f"{field} has {len(columns)} rows for {value.shape[0]} {field.split('_')[0]}s")
    return value, SparseRows(derivative[colour, rows], rows, cols, value.shape[0], n)


def gap_rows(system, q, t, p):
    """(g_N(q), W_N as rows) at q, W_N = (∂g_N/∂q T(q))ᵀ in the velocities (∂g_N/∂q without a velocity map):
    :class:`SparseRows` when the system declares ``gap_columns``, else :class:`DenseRows` (one forward tangent
    per coordinate)."""

    def gaps(x):
        return system.gaps(x, t, p)

    if system.gap_columns is None:
        g, gq = value_and_jacobian(gaps, q)
        T = velocity_matrix(system, q)
        return g, DenseRows((gq if T is None else gq @ T).T)
    # The gaps' rate along the coordinates' rate q̇ = T(q) s of each seed velocity s.
    return _by_pattern(
        lambda s: jax.jvp(gaps, (q,), (coordinate_rate(system, q, s),)),
        system.n_u,
        q.dtype,
        system.gap_columns,
        "gap_columns",
    )


def declares_contact_rows(system) -> bool:
    """Whether ``system`` declares the pattern of every row of W = [W_N, W_T] (:func:`contact_rows`)."""
    return system.gap_columns is not None and (system.slip_velocity is None or system.slip_columns is not None)


def contact_rows(system, q, t, p):
    """(g_N, ∂g_N/∂t, γ_T at u = 0, W = [W_N, W_T] as :class:`SparseRows`) at q, by the declared patterns
    (:func:`declares_contact_rows`); the slips are affine in u, so their tangents in u are W_T's entries."""
    t = jnp.asarray(t, q.dtype)
    g, W_N = gap_rows(system, q, t, p)
    g_t = jax.jvp(lambda tt: system.gaps(q, tt, p), (t,), (jnp.ones_like(t),))[1]
    if system.slip_velocity is None:
        return g, g_t, jnp.zeros((0,), q.dtype), W_N

    def slips(u):
        return jnp.reshape(system.slip_velocity(q, u, t, p), (-1,))

    u0 = jnp.zeros((system.n_u,), q.dtype)
    w_T, W_T = _by_pattern(
        lambda s: jax.jvp(slips, (u0,), (s,)), system.n_u, q.dtype, system.slip_columns, "slip_columns"
    )
    stacked = SparseRows(
        jnp.concatenate([W_N.values, W_T.values]),
        np.concatenate([W_N.rows, W_N.k + W_T.rows]),
        np.concatenate([W_N.cols, W_T.cols]),
        W_N.k + W_T.k,
        W_N.n,
    )
    return g, g_t, w_T, stacked
