"""Exact solve of one contact's problem u = B r + c (B the d × d diagonal block).

Used by the Gauss–Seidel and Jacobi sweeps (:mod:`jaxcontact.cones.sweeps`).
Every regime of Coulomb's law is a candidate, as in Siconos' enumerative
local solver, and the first exact one is taken:

1. take-off: c_N ≥ 0 ⇒ r = 0 (u = c has u_N ≥ 0);
2. stick: r = −B⁻¹c, if it lies in the cone K;
3. slide: r = r_N (1, μ e(θ)) on the cone's boundary with e(θ) = (cos θ,
   sin θ) (in the plane e = ±1), u_N = 0 giving r_N = −c_N / (B_N· t(θ)),
   t(θ) = (1, μ e(θ)), and the slip u_T = r_N B_T· t + c_T opposite to
   e(θ). Cleared of the positive denominator, "u_T parallel to e" is the
   scalar equation G(θ) = (−c_N B_T· t + (B_N· t) c_T) × e(θ) = 0, a
   trigonometric polynomial of degree 2 (at most four roots). Its sign is
   tabulated on ``GRID`` angles; every sign change is refined by
   ``BISECTIONS`` halvings and ``NEWTON_STEPS`` Newton steps (θ to
   round-off), and
   of the roots where the slip opposes e and B_N· t > 0 the one with the
   smallest local error is taken. In the plane the two slides
   θ = 0, π are tried directly.

Robust fallback: the result replaces the previous value r_old only if its
local natural-map error ‖r − P_K(r − û)‖ is not larger, so a sweep never
makes a contact worse, whatever the block (singular, non-symmetric, huge μ,
or a slide the grid missed).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxcontact.cones.laws import _norm, modified_velocity, project_cone

GRID = 16
BISECTIONS = 12
NEWTON_STEPS = 3


def local_error(r, u, mu):
    """‖r − P_K(r − û)‖ for one contact (Siconos' error term, unnormalised)."""
    e = r - project_cone(r - modified_velocity(u, mu), mu)
    return jnp.sqrt(jnp.sum(e * e))


def _slide_3d(B, c, mu):
    def parts(th):
        e = jnp.stack([jnp.cos(th), jnp.sin(th)], axis=-1)
        t = jnp.concatenate([jnp.ones_like(th)[..., None], mu * e], axis=-1)
        den = t @ B[0]
        v = -c[0] * (t @ B[1:].T) + den[..., None] * c[1:]  # den · u_T
        G = v[..., 0] * e[..., 1] - v[..., 1] * e[..., 0]
        ok = (den > 0) & (jnp.sum(v * e, axis=-1) <= 0)
        return G, ok, den, t

    th = jnp.linspace(0.0, 2 * np.pi, GRID + 1, dtype=c.dtype)
    G = parts(th)[0]
    lo, hi, glo = th[:-1], th[1:], G[:-1]
    bracket = G[:-1] * G[1:] <= 0

    for _ in range(BISECTIONS):  # every bracket at once; straight-line code XLA fuses
        mid = 0.5 * (lo + hi)
        gm = parts(mid)[0]
        same = gm * glo > 0
        lo, hi, glo = jnp.where(same, mid, lo), jnp.where(same, hi, mid), jnp.where(same, gm, glo)
    # Newton steps in θ from the bracket's midpoint: θ to round-off, and a derivative of the
    # root in (B, c, μ) that is the implicit one, -∂G/∂G', when unrolled (a secant across a
    # 1e-13-wide bracket would cancel to 1e-4).
    dG = jax.vmap(jax.grad(lambda th: parts(th)[0]))
    root = 0.5 * (lo + hi)
    for _ in range(NEWTON_STEPS):
        g, gp = parts(root)[0], dG(root)
        root = jnp.clip(root - g / jnp.where(gp != 0, gp, 1.0), lo, hi)
    _, ok, den, t = parts(root)
    R = (-c[0] / jnp.where(den > 0, den, 1.0))[:, None] * t
    err = jax.vmap(lambda r: local_error(r, B @ r + c, mu))(R)
    err = jnp.where(bracket & ok & jnp.isfinite(err), err, jnp.inf)
    return R[jnp.argmin(err)]


def _slide_2d(B, c, mu):
    best, best_err = jnp.zeros_like(c), jnp.inf
    for s in (1.0, -1.0):
        t = jnp.array([1.0, s], c.dtype) * jnp.array([1.0, mu])
        den = B[0] @ t
        r = (-c[0] / jnp.where(den > 0, den, 1.0)) * t
        err = jnp.where(den > 0, local_error(r, B @ r + c, mu), jnp.inf)
        best, best_err = jnp.where(err < best_err, r, best), jnp.minimum(err, best_err)
    return best


def _solve_small(B, c):
    """B⁻¹ c for a 2 × 2 or 3 × 3 block by cofactors (no LAPACK call inside the sweep loops)."""
    if c.shape[0] == 2:
        det = B[0, 0] * B[1, 1] - B[0, 1] * B[1, 0]
        x = jnp.stack([B[1, 1] * c[0] - B[0, 1] * c[1], B[0, 0] * c[1] - B[1, 0] * c[0]])
        return x / det
    cof = jnp.stack([jnp.cross(B[1], B[2]), jnp.cross(B[2], B[0]), jnp.cross(B[0], B[1])])  # rows of adj(B)ᵀ
    det = B[0] @ cof[0]
    return (cof.T @ c) / det


def local_solve(B, c, mu, r_old):
    """Solution r of one contact's problem (see the module docstring)."""
    rs = -_solve_small(B, c)
    rs_ok = jnp.all(jnp.isfinite(rs))
    rs = jnp.where(rs_ok, rs, 0.0)
    stick = rs_ok & (rs[0] >= 0) & (_norm(rs[1:]) <= mu * rs[0])
    take_off = c[0] >= 0
    # The slide search only where needed (a real branch in the Gauss–Seidel loop; under vmap
    # both sides run and are selected).
    slide_fn = _slide_3d if c.shape[0] == 3 else _slide_2d
    slide = lax.cond(take_off | stick, lambda: jnp.zeros_like(c), lambda: slide_fn(B, c, mu))
    r = jnp.where(take_off, 0.0, jnp.where(stick, rs, slide))
    err_new = local_error(r, B @ r + c, mu)
    err_old = local_error(r_old, B @ r_old + c, mu)
    return jnp.where(err_new <= err_old, r, r_old)
