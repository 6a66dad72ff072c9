"""Exact solve of one contact's problem u = B r + c (B the d × d diagonal block).

Used by the Gauss–Seidel and Jacobi sweeps (:mod:`jaxcontact.cones.sweeps`).
The regimes are tried in order, as a closed form where there is one:

1. take-off: c_N ≥ 0 ⇒ r = 0 (u = c has u_N ≥ 0: a solution);
2. stick: r = −B⁻¹c, accepted if it lies in the cone K;
3. slide: Alart–Curnier local Newton (``newton_steps`` damped steps, Armijo
   backtracking over 8 halvings evaluated at once), started on the cone's
   boundary at the normal impulse −c_N / B_NN with the friction opposing the
   tangential velocity it leaves. On a positive definite block with moderate
   μ the slide is unique and Newton converges quadratically from there.

Robust fallback: the result replaces the previous value r_old only if its
local natural-map error ‖r − P_K(r − û)‖ is not larger — a sweep never makes a
contact worse, whatever the block (singular, non-symmetric, huge μ).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.cones.laws import _norm, alart_curnier, modified_velocity, project_cone

LINE_SEARCH = 8
ARMIJO_SIGMA = 1e-4


def local_error(r, u, mu):
    """‖r − P_K(r − û)‖ for one contact (Siconos' error term, unnormalised)."""
    e = r - project_cone(r - modified_velocity(u, mu), mu)
    return jnp.sqrt(jnp.sum(e * e))


def _newton(B, c, mu, rho, r, steps):
    d = c.shape[0]
    ts = jnp.asarray(0.5 ** np.arange(LINE_SEARCH), c.dtype)
    F = lambda r: alart_curnier(r, B @ r + c, mu, rho)

    def step(r, _):
        f = F(r)
        J = jax.jacfwd(F)(r)
        dr = jnp.linalg.solve(J + 1e-14 * jnp.eye(d, dtype=c.dtype), -f)
        dr = jnp.where(jnp.all(jnp.isfinite(dr)), dr, -J.T @ f)
        psi = f @ f
        cand = r[None, :] + ts[:, None] * dr[None, :]
        fc = jax.vmap(F)(cand)
        psis = jnp.sum(fc * fc, axis=1)
        ok = jnp.isfinite(psis) & (psis <= (1.0 - 2.0 * ARMIJO_SIGMA * ts) * psi)
        best = jnp.argmin(jnp.where(jnp.isfinite(psis), psis, jnp.inf))
        k = jnp.where(jnp.any(ok), jnp.argmax(ok), best)
        better = psis[k] < psi
        return jnp.where(better, cand[k], r), None

    r, _ = jax.lax.scan(step, r, None, length=steps)
    return r


def local_solve(B, c, mu, r_old, *, newton_steps: int = 10):
    """Solution r of one contact's problem (see the module docstring)."""
    d = c.shape[0]
    dtype = c.dtype
    eye = jnp.eye(d, dtype=dtype)
    diag = jnp.diagonal(B)
    rho = 1.0 / jnp.maximum(jnp.max(diag), jnp.finfo(dtype).tiny)
    # stick
    rs = -jnp.linalg.solve(B, c)
    rs_ok = jnp.all(jnp.isfinite(rs))
    rs = jnp.where(rs_ok, rs, 0.0)
    stick = rs_ok & (rs[0] >= 0) & (_norm(rs[1:]) <= mu * rs[0])
    # slide start: normal impulse of a frictionless contact, friction opposing the slip it leaves
    rn0 = jnp.maximum(-c[0] / jnp.where(B[0, 0] > 0, B[0, 0], 1.0), 0.0)
    ut0 = B[1:, 0] * rn0 + c[1:]
    nut = _norm(ut0)
    e1 = eye[0, 1:]
    direction = jnp.where(nut > 0, -ut0 / jnp.where(nut > 0, nut, 1.0), e1)
    x0 = jnp.concatenate([rn0[None], mu * rn0 * direction])
    slide = _newton(B, c, mu, rho, x0, newton_steps)
    take_off = c[0] >= 0
    r = jnp.where(take_off, 0.0, jnp.where(stick, rs, slide))
    err_new = local_error(r, B @ r + c, mu)
    err_old = local_error(r_old, B @ r_old + c, mu)
    keep_old = ~(err_new <= err_old)
    return jnp.where(keep_old, r_old, r)
