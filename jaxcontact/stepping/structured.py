"""The bilateral Schur complement of a diagonal mass matrix and a sparse Φ_q, entry by entry.

A planar mechanism in absolute coordinates has a diagonal M and a constraint
Jacobian whose rows touch only the coordinates of the one or two bodies a joint
connects (``LagrangianSystem.constraint_columns``): on the four-bar, 3–6 of 9
columns per row, and G = Φ_q M⁻¹ Φ_qᵀ is block tridiagonal. The dense path of
:func:`jaxcontact.stepping.moreau_jean.step` builds Φ_q with nine JVPs, G with a
dense 8 × 9 · 9 × 8 product and factorises all of G; here

* Φ_q comes from one JVP per *colour* of columns (Curtis–Powell–Reid: columns
  that share no row share a JVP; six instead of nine on the four-bar),
* G, Φ_q ũ and Φ_q M⁻¹ W sum only over the columns two rows share,
* the Cholesky factor keeps only the entries the pattern and its fill-in need
  (symbolic factorisation at trace time), and the substitutions skip the rest.

Everything is a list of per-sample scalars, so under ``vmap`` each operation is
elementwise over the batch and XLA fuses it (as :func:`moreau_jean.spd_solve`).
The pattern is static (Python tuples): changing it recompiles.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def column_colors(columns, n: int) -> tuple[tuple[int, ...], ...]:
    """Greedy colouring of the n coordinates: no row of ``columns`` holds two of one colour.

    ``columns[i]`` are the coordinates row i depends on. Returns the colour groups
    (coordinates a row never touches get a colour too, so every coordinate is in one group).
    """
    neighbours = [set() for _ in range(n)]
    for cols in columns:
        for c in cols:
            neighbours[c].update(cols)
    color = [-1] * n
    for c in range(n):
        taken = {color[d] for d in neighbours[c] if d != c}
        color[c] = next(k for k in range(n) if k not in taken)
    return tuple(tuple(c for c in range(n) if color[c] == k) for k in range(max(color) + 1))


def sparse_jacobian(f, q, t, columns):
    """Φ(q, t), Φ_t and the structural entries {(i, c): ∂Φ_i/∂q_c} of f(q, t) -> (m,) by coloured JVPs."""
    n = q.shape[0]
    groups = column_colors(columns, n)
    phi, phi_t = jax.jvp(lambda tt: f(q, tt), (t,), (jnp.ones_like(t),))
    seeds = np.zeros((len(groups), n))
    for k, g in enumerate(groups):
        seeds[k, list(g)] = 1.0
    # One JVP per colour, not a vmap over the seeds: vmap's (colours, m) block is read back entry by
    # entry with a stride of colours·m; separate (m,) tangents are read contiguously (bench/RESULTS.md,
    # "structured Schur complement, trigonometry once").
    jvp_q = [jax.jvp(lambda qq: f(qq, t), (q,), (jnp.asarray(v, q.dtype),))[1] for v in seeds]
    color_of = {c: k for k, g in enumerate(groups) for c in g}
    entries = {(i, c): jvp_q[color_of[c]][i] for i, cols in enumerate(columns) for c in cols}
    return phi, phi_t, entries


def _dot(pairs, zero):
    """Σ a·b over (a, b) pairs (``zero`` when there are none)."""
    pairs = list(pairs)
    if not pairs:
        return zero
    out = pairs[0][0] * pairs[0][1]
    for a, b in pairs[1:]:
        out = out + a * b
    return out


def cholesky_solve(A: dict, B: list):
    """A⁻¹ B for a symmetric positive definite A given by its structural lower entries {(i, j): a_ij, j ≤ i}.

    B: right-hand sides as columns, each a list of m scalars; returns the solution columns.
    The factor L holds only the entries A's pattern and its fill-in need; a non-positive
    pivot gives NaN (as LAPACK).
    """
    m = len(B[0])
    L, sqrt_d = {}, [None] * m
    for j in range(m):
        d = A[(j, j)] - _dot([(L[(j, k)], L[(j, k)]) for k in range(j) if (j, k) in L], 0.0)
        sqrt_d[j] = jnp.sqrt(d)
        for i in range(j + 1, m):
            fill = [(L[(i, k)], L[(j, k)]) for k in range(j) if (i, k) in L and (j, k) in L]
            if (i, j) in A or fill:
                L[(i, j)] = (A.get((i, j), 0.0) - _dot(fill, 0.0)) / sqrt_d[j]
    # Scalar divisions, not products with 1/√d: XLA does not duplicate a division into each of
    # its consumers' fused kernels, so every entry of L, y and x is computed once (with products
    # the back-substitution's kernels each re-derived the factor; bench/RESULTS.md, "structured
    # Schur complement, trigonometry once").
    # Scalar, not vector / scalar: XLA may rewrite the latter as a product with a broadcast
    # reciprocal in one compilation and not another (different rounding on 1 and 2 devices).
    solutions = []
    for b in B:
        y = [None] * m
        for i in range(m):
            y[i] = (b[i] - _dot([(L[(i, k)], y[k]) for k in range(i) if (i, k) in L], 0.0)) / sqrt_d[i]
        x = [None] * m
        for i in reversed(range(m)):
            x[i] = (y[i] - _dot([(L[(k, i)], x[k]) for k in range(i + 1, m) if (k, i) in L], 0.0)) / sqrt_d[i]
        solutions.append(x)
    return solutions


def schur_response(J: dict, columns, inv_m, u_tilde, dphi_free, X_W):
    """(u_free, M̂ W) of the Moreau–Jean step for diagonal M⁻¹ = diag(inv_m) and sparse Φ_q.

    J: {(i, c): Φ_q[i, c]} on ``columns``; u_tilde (n,); dphi_free (m,) = Φ_q ũ + Φ_t (minus
    a Baumgarte target); X_W (n, r) = M⁻¹ W. Returns u_free = ũ − M⁻¹Φ_qᵀ G⁻¹ dphi_free and
    M̂ W = X_W − M⁻¹Φ_qᵀ G⁻¹ Φ_q X_W with G = Φ_q M⁻¹ Φ_qᵀ.
    """
    m, (n, r) = len(columns), X_W.shape
    sets = [set(cols) for cols in columns]
    G = {}
    for i in range(m):
        for j in range(i + 1):
            shared = sorted(sets[i] & sets[j])
            if shared:
                G[(i, j)] = _dot([(J[(i, c)] * J[(j, c)], inv_m[c]) for c in shared], 0.0)
    # Right-hand sides: dphi_free and the r columns of Φ_q X_W.
    B = [[dphi_free[i] for i in range(m)]]
    B += [[_dot([(J[(i, c)], X_W[c, a]) for c in columns[i]], 0.0) for i in range(m)] for a in range(r)]
    Y = cholesky_solve(G, B)
    rows_of = [[i for i in range(m) if c in sets[i]] for c in range(n)]
    # M⁻¹ Φ_qᵀ Y, column by column.
    back = [jnp.stack([inv_m[c] * _dot([(J[(i, c)], y[i]) for i in rows_of[c]], 0.0) for c in range(n)]) for y in Y]
    MhatW = X_W - jnp.stack(back[1:], axis=1) if r else X_W
    return u_tilde - back[0], MhatW
