"""A linear system or LCP restricted to some of its rows, at a fixed shape.

Under ``jit`` and ``vmap`` shapes are static, so a problem that holds only for
some rows — the active contacts of a step, the closed ones of an impact, the
basic variables of an LCP's active set — cannot be cut down to those rows.
Instead every row outside the subset is *decoupled*: its row and column are
zeroed, its diagonal entry set to ``diagonal`` and its right-hand side to
``outside``, so the other rows' solution is unchanged and the decoupled unknowns
take a known value —

* linear system K x = rhs with ``outside`` = 0: x = 0 there;
* LCP w = M z + q with ``outside`` = 1 (> 0): z = 0, w = 1 there, for every
  solver (pivoting or iterative), which therefore needs no notion of a mask;
* Moreau–Jean's contact problem ξ = D P + c with c = 1 on decoupled normal rows
  and 0 on decoupled tangent rows: P = 0 there (a tangent row with c = 0 and a
  zero normal impulse is solved by P_T = 0 under Coulomb's law).

``diagonal`` is 1 where the problem's own scale is 1 (velocities, impulses), or
the problem's scale (e.g. max diag) where the decoupled rows must not spoil
its conditioning (regularised and pseudo-inverse solves).
"""

from __future__ import annotations

import jax.numpy as jnp


def decouple_rows(A, b, rows, *, diagonal=1.0, outside=1.0):
    """(A', b') with the rows and columns outside ``rows`` decoupled (see the module docstring).

    Args:
      A: (n, n) matrix.
      b: (n,) right-hand side (or LCP vector q).
      rows: (n,) bool, the rows that keep their equations.
      diagonal: the diagonal entry of a decoupled row (a scalar, possibly an array leaf).
      outside: the right-hand side of a decoupled row (a scalar or an (n,) array).

    Returns:
      A' = A on rows × rows, ``diagonal`` on the other diagonal entries, 0 elsewhere;
      b' = b on ``rows``, ``outside`` elsewhere.
    """
    keep = rows[:, None] & rows[None, :]
    A = jnp.where(keep, A, 0.0) + jnp.diag(jnp.where(rows, 0.0, diagonal).astype(A.dtype))
    return A, jnp.where(rows, b, outside)
