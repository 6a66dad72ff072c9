"""Coulomb's law on cones: projections, Siconos' error, the Alart–Curnier function.

Vectors are per contact, r = (r_N, r_T) with r_T of length d − 1 (d = 3 in
space, d = 2 in the plane: the same formulas with |·| for ‖·‖). K = {‖r_T‖ ≤
μ r_N} is the Coulomb cone, K* = {μ‖u_T‖ ≤ u_N} its dual, and De Saxcé's
modified velocity û = (u_N + μ‖u_T‖, u_T) turns Coulomb's law with maximal
dissipation into the complementarity K* ∋ û ⟂ r ∈ K.

* :func:`fc3d_error` — Siconos numerics' ``fc3d_compute_error``: per contact
  ‖r − P_K(r − û)‖², summed, square root, divided by the relative scaling
  max(‖q‖₂, ‖r‖₂, ‖u‖₂) when it exceeds machine epsilon (as Siconos 4.4
  does; checked against its own function on every bundled problem).
  The measure of the FCLIB benchmark (Acary, Brémond, Huber 2018).
* :func:`cone_violations` — the three parts apart: r outside K, û outside
  K*, and |rᵀû| (each the worst contact).
* :func:`alart_curnier` — the Alart–Curnier (1991) function, zero exactly at
  a solution:
      F_N = r_N − max(0, r_N − ρ u_N),
      F_T = r_T − P_B(μ max(0, r_N − ρ u_N))(r_T − ρ u_T),
  P_B(R) the projection on the disk of radius R. Piecewise smooth; its
  pieces are the contact regimes (separate, stick, slide), which the Newton
  solver and the implicit gradients use.
* :func:`fischer_burmeister` — the Fischer–Burmeister function of the
  second-order cone (Fukushima, Luo & Tseng 2002), zero exactly at a
  solution: with x = (μ r_N, r_T) and y = ρ (û_N, μ û_T), x ∈ L ⇔ r ∈ K and
  y ∈ L ⇔ û ∈ K* for the Lorentz cone L = {‖x_T‖ ≤ x_N}, and xᵀy = ρ μ rᵀû,
  so φ = x + y − (x∘x + y∘y)^½ (Jordan product and square root of L)
  vanishes exactly at Coulomb's law. For μ = 0 the first component, which
  then no longer sees r_N, is the scalar Fischer–Burmeister function of
  (r_N, ρ u_N). Smooth away from non-strict complementarity (unlike the
  Alart–Curnier function, whose regimes are kinks).

Norms are taken "safely" (√(x² + tiny) only where x = 0 is possible and the
value is not used), so derivatives stay finite at regime boundaries.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


def _norm(x):
    """‖x‖ over the last axis with a finite derivative at 0 (where it is 0)."""
    s = jnp.sum(x * x, axis=-1)
    pos = s > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, s, 1.0)), 0.0)


def project_cone(x, mu):
    """Projection of x = (x_N, x_T) on K = {‖x_T‖ ≤ μ x_N} (last axis per contact)."""
    xn, xt = x[..., 0], x[..., 1:]
    nt = _norm(xt)
    inside = nt <= mu * xn
    polar = mu * nt <= -xn
    s = (mu * nt + xn) / (mu * mu + 1.0)
    safe = jnp.where(nt > 0, nt, 1.0)
    edge_t = (mu * s / safe)[..., None] * xt
    pn = jnp.where(polar, 0.0, jnp.where(inside, xn, s))
    pt = jnp.where(polar[..., None], 0.0, jnp.where(inside[..., None], xt, edge_t))
    return jnp.concatenate([pn[..., None], pt], axis=-1)


def project_disk(x, radius):
    """Projection of x (last axis) on the ball ‖x‖ ≤ radius (radius ≥ 0)."""
    nx = _norm(x)
    # radius 0 (a separated or frictionless contact) counts as outside even at x = 0, so the
    # derivative is the one of P = 0 (r_T = 0), not of the identity (u_T = 0).
    out = (nx > radius) | (radius <= 0)
    scale = jnp.where(out, radius / jnp.where(nx > 0, nx, 1.0), 1.0)
    return scale[..., None] * x


def modified_velocity(u, mu):
    """De Saxcé's û = (u_N + μ‖u_T‖, u_T), per contact on the last axis."""
    return u.at[..., 0].add(mu * _norm(u[..., 1:]))


def per_contact(x, nc):
    """(d nc,) → (nc, d)."""
    return x.reshape(nc, -1)


def fc3d_error(r, u, mu, q):
    """Siconos' ``fc3d_compute_error`` of (r, u = W r + q); vectors interleaved per contact."""
    nc = mu.shape[-1]
    R, U = per_contact(r, nc), per_contact(u, nc)
    e = R - project_cone(R - modified_velocity(U, mu), mu)
    err = jnp.sqrt(jnp.sum(e * e))
    scale = jnp.maximum(jnp.linalg.norm(q), jnp.maximum(jnp.linalg.norm(r), jnp.linalg.norm(u)))
    big = scale > jnp.finfo(q.dtype).eps
    return jnp.where(big, err / jnp.where(big, scale, 1.0), err)


class ConeViolations(NamedTuple):
    """The parts of the cone law, each the worst contact (zero at a solution)."""

    primal: object  # max(0, ‖r_T‖ − μ r_N, −r_N): r outside K
    dual: object  # max(0, μ‖û_T‖ − û_N, −û_N): û outside K*
    complementarity: object  # |rᵀû|


def cone_violations(r, u, mu) -> ConeViolations:
    """The three violations of the cone law apart: r outside K, û outside K*, and |rᵀû| (complementarity)."""
    nc = mu.shape[-1]
    R, U = per_contact(r, nc), per_contact(u, nc)
    Uh = modified_velocity(U, mu)
    primal = jnp.maximum(jnp.maximum(_norm(R[:, 1:]) - mu * R[:, 0], -R[:, 0]), 0.0)
    dual = jnp.maximum(jnp.maximum(mu * _norm(Uh[:, 1:]) - Uh[:, 0], -Uh[:, 0]), 0.0)
    comp = jnp.abs(jnp.sum(R * Uh, axis=-1))
    worst = lambda x: jnp.max(x, initial=0.0)
    return ConeViolations(worst(primal), worst(dual), worst(comp))


def alart_curnier(r, u, mu, rho):
    """Alart–Curnier function per contact: r, u (…, d), mu, rho (…,) → (…, d)."""
    xn = r[..., 0] - rho * u[..., 0]
    pn = jnp.where(xn > 0, xn, 0.0)  # a tie (grazing contact) takes the separated piece
    ft = r[..., 1:] - project_disk(r[..., 1:] - rho[..., None] * u[..., 1:], mu * pn)
    return jnp.concatenate([(r[..., 0] - pn)[..., None], ft], axis=-1)


def alart_curnier_rho(diag):
    """Per-contact ρ = 1 / max diag(W_ii): scales ρ u like r (a numerical setting, no gradient)."""
    m = jnp.max(jnp.diagonal(jax.lax.stop_gradient(diag), axis1=-2, axis2=-1), axis=-1)
    return 1.0 / jnp.where(m > 0, m, 1.0)


def alart_curnier_map(r, u, mu, rho):
    """The whole problem's Alart–Curnier function (d nc,), vectors interleaved per contact."""
    nc = mu.shape[-1]
    return alart_curnier(per_contact(r, nc), per_contact(u, nc), mu, rho).reshape(-1)


def alart_curnier_blocks(r, u, mu, rho, law=alart_curnier):
    """Per-contact derivatives (A, B) = (∂F_i/∂r_i, ∂F_i/∂u_i), each (nc, d, d), of ``law`` (default Alart–Curnier)."""
    nc = mu.shape[-1]
    R, U = per_contact(r, nc), per_contact(u, nc)
    jac = jax.vmap(jax.jacfwd(lambda r, u, m, p: law(r, u, m, p), argnums=(0, 1)))
    return jac(R, U, mu, rho)


def _safe_sqrt(x):
    """√max(x, 0) with a zero (finite) derivative where x ≤ 0."""
    pos = x > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, x, 1.0)), 0.0)


def fischer_burmeister(r, u, mu, rho):
    """Fischer–Burmeister function of the Coulomb cone per contact: r, u (…, d), mu, rho (…,) → (…, d)."""
    uh = modified_velocity(u, mu)
    x = jnp.concatenate([(mu * r[..., 0])[..., None], r[..., 1:]], axis=-1)
    y = rho[..., None] * jnp.concatenate([uh[..., :1], mu[..., None] * uh[..., 1:]], axis=-1)
    # z = x∘x + y∘y = (‖x‖² + ‖y‖², 2 (x_N x_T + y_N y_T)); its square root in L from the
    # spectral values λ = z_N ∓ ‖z_T‖: ((√λ₁ + √λ₂)/2, z_T / (√λ₁ + √λ₂)).
    zn = jnp.sum(x * x, axis=-1) + jnp.sum(y * y, axis=-1)
    zt = 2.0 * (x[..., :1] * x[..., 1:] + y[..., :1] * y[..., 1:])
    nzt = _norm(zt)
    s = _safe_sqrt(zn - nzt) + _safe_sqrt(zn + nzt)
    root_t = zt / jnp.where(s > 0, s, 1.0)[..., None]
    phi_n = x[..., 0] + y[..., 0] - 0.5 * s
    rn, yn = r[..., 0], rho * u[..., 0]
    scalar_fb = rn + yn - _safe_sqrt(rn * rn + yn * yn)
    phi_n = jnp.where(mu > 0, phi_n, scalar_fb)
    return jnp.concatenate([phi_n[..., None], x[..., 1:] + y[..., 1:] - root_t], axis=-1)


def fischer_burmeister_map(r, u, mu, rho):
    """The whole problem's Fischer–Burmeister function (d nc,), vectors interleaved per contact."""
    nc = mu.shape[-1]
    return fischer_burmeister(per_contact(r, nc), per_contact(u, nc), mu, rho).reshape(-1)
