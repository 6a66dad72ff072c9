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

Fast path: the slide root is first sought by ``SLIDE_NEWTON`` Newton steps on
G from the direction of the (rejected) stick solution's tangential part — the
exact root when the block is isotropic in the tangent plane, and close to it
otherwise; the steps move the unit direction (cos θ, sin θ) itself, so they
need no trigonometry. The slide is accepted if its local error is at round-off; only
when it is not (a root far from that angle, a non-converged Newton) does the
tabulated search above run, in a branch (:func:`~jaxcontact.cones.branch.unless`) that the sequential
Gauss–Seidel loop skips and the Jacobi sweep runs only when some contact of
the sweep needs it (:func:`local_solve_all`).

Robust fallback: a result that is not exact by construction (the tabulated
search's slide; in the plane, a slide that does not exist) replaces the
previous value r_old only if its local natural-map error ‖r − P_K(r − û)‖ is
not larger, so a sweep never makes a contact worse, whatever the block
(singular, non-symmetric, huge μ, or a slide the grid missed). Take-off, stick
and an exact fast slide solve the contact's problem and are taken as they are.

Cost: the stick solve is a few products; the fast slide's Newton steps and
the comparison are skipped where the contact takes off or
sticks — an inactive contact, a body at rest — and, under vmap, run only when
some member of the batch needs them.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxcontact.cones.branch import unless
from jaxcontact.cones.laws import _norm, modified_velocity, project_cone

GRID = 16
BISECTIONS = 12
NEWTON_STEPS = 3
SLIDE_NEWTON = 8
EXACT_ULPS = 64  # a fast-path slide is exact if its local error is below this many ε of the contact's scale


def local_error(r, u, mu):
    """‖r − P_K(r − û)‖ for one contact (Siconos' error term, unnormalised)."""
    e = r - project_cone(r - modified_velocity(u, mu), mu)
    return jnp.sqrt(jnp.sum(e * e))


def _slide_parts(B, c, mu, th):
    """G(θ), whether the slide at θ is admissible, B_N· t and t(θ) (θ any shape)."""
    return _slide_parts_at(B, c, mu, jnp.stack([jnp.cos(th), jnp.sin(th)], axis=-1))


def _slide_parts_at(B, c, mu, e):
    """:func:`_slide_parts` at the unit tangent direction e = (cos θ, sin θ) (shape (..., 2))."""
    # Component by component: elementwise code that XLA fuses into one kernel, where each 3-vector product
    # (a reduction) would be a kernel call of its own inside the Newton steps.
    e1, e2 = e[..., 0], e[..., 1]
    row = lambda i: B[i, 0] + mu * (e1 * B[i, 1] + e2 * B[i, 2])  # noqa: E731 (B t)_i
    den = row(0)
    v1, v2 = -c[0] * row(1) + den * c[1], -c[0] * row(2) + den * c[2]  # den · u_T
    G = v1 * e2 - v2 * e1
    ok = (den > 0) & (v1 * e1 + v2 * e2 <= 0)
    t = jnp.stack([jnp.ones_like(e1), mu * e1, mu * e2], axis=-1)
    return G, ok, den, t


def _slide_3d(B, c, mu):
    def parts(th):
        return _slide_parts(B, c, mu, th)

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


def _slide_newton(B, c, mu, rs):
    """Slide from Newton steps on G started at the direction of the stick solution's tangential part.

    The unknown is the unit direction e itself, moved by the Newton step δ = G / G' along e⊥ and
    renormalised (a rotation by arctan δ instead of δ: the same root, still quadratic convergence), so the
    steps need no trigonometry. G' = dG/dθ is G's derivative along e⊥.
    """
    # The start is only a guess: a slide accepted as exact is a converged root, whose derivative the
    # Newton steps carry and the start does not enter. Its own derivative is not merely unused but
    # harmful: the normalisation's is 0/0 where the stick's tangential part vanishes (a head-on impact on an
    # isotropic block), and a reverse pass carries that NaN through the ``where`` that discards the slide.
    rt = lax.stop_gradient(rs[1:])
    n = _norm(rt)
    e = jnp.where(n > 0, rt / jnp.where(n > 0, n, 1.0), jnp.asarray([1.0, 0.0], c.dtype))
    G = lambda e: _slide_parts_at(B, c, mu, e)[0]
    perp = lambda e: jnp.stack([-e[1], e[0]])
    for _ in range(SLIDE_NEWTON):
        g, gp = jax.jvp(G, (e,), (perp(e),))
        step = jnp.clip(g / jnp.where(gp != 0, gp, 1.0), -0.5, 0.5)  # bounded: G is periodic, a far jump lands anywhere
        e = e - step * perp(e)
        e = e / jnp.sqrt(e @ e)
    _, ok, den, t = _slide_parts_at(B, c, mu, e)
    return (-c[0] / jnp.where(den > 0, den, 1.0)) * t, ok


def _exact_fast_slide(B, c, mu, rs):
    """The fast slide and whether it is exact (its local error at round-off)."""
    slide, ok = _slide_newton(B, c, mu, rs)
    u = B @ slide + c
    scale = jnp.maximum(_norm(c), jnp.maximum(_norm(slide), _norm(u)))
    return slide, ok & (local_error(slide, u, mu) <= EXACT_ULPS * jnp.finfo(c.dtype).eps * scale)


def _candidate(B, c, mu):
    """Take-off, stick or the fast slide, and whether that candidate is exact."""
    rs = -_solve_small(B, c)
    rs_ok = jnp.all(jnp.isfinite(rs))
    rs = jnp.where(rs_ok, rs, 0.0)
    stick = rs_ok & (rs[0] >= 0) & (_norm(rs[1:]) <= mu * rs[0])
    take_off = c[0] >= 0
    if c.shape[0] == 2:  # the two planar slides are tried directly: always exact when one exists
        slide, slide_ok = _slide_2d(B, c, mu), jnp.bool_(True)
    else:
        # The slide's Newton steps cost many times the stick solve; a contact that takes off or sticks (an
        # inactive contact, a body at rest) skips them, under vmap unless some member slides.
        slide, slide_ok = unless(take_off | stick, (jnp.zeros_like(c), jnp.bool_(True)), _exact_fast_slide,
                                 B, c, mu, rs)
    r = jnp.where(take_off, 0.0, jnp.where(stick, rs, slide))
    return r, take_off | stick | slide_ok


def _no_worse(B, c, mu, r, r_old):
    err_new = local_error(r, B @ r + c, mu)
    err_old = local_error(r_old, B @ r_old + c, mu)
    return jnp.where(err_new <= err_old, r, r_old)


def local_solve(B, c, mu, r_old):
    """Solution r of one contact's problem (see the module docstring).

    The tabulated search runs only when the fast path missed, by
    :func:`~jaxcontact.cones.branch.unless`: under vmap it runs only if some
    batch member needs it (both sides run only where a derivative is taken).
    """
    r, exact = _candidate(B, c, mu)
    if c.shape[0] == 2:
        return _no_worse(B, c, mu, r, r_old)
    # An exact candidate solves the contact's problem (local error at round-off): nothing to compare it with.
    return unless(exact, r, _searched_slide, B, c, mu, r_old)


def _searched_slide(B, c, mu, r_old):
    return _no_worse(B, c, mu, _slide_3d(B, c, mu), r_old)


def local_solve_all(B, C, mu, R_old):
    """:func:`local_solve` for every contact at once (B (nc, d, d), C, R_old (nc, d), mu (nc,)).

    The tabulated slide search runs only if some contact's fast path missed
    (:func:`~jaxcontact.cones.branch.unless`, as in :func:`local_solve`).
    """
    R, exact = jax.vmap(_candidate)(B, C, mu)
    if C.shape[-1] == 3:
        slides = lambda B, C, mu: jax.vmap(_slide_3d)(B, C, mu)
        R = jnp.where(exact[:, None], R, unless(jnp.all(exact), R, slides, B, C, mu))
    return jax.vmap(_no_worse)(B, C, mu, R, R_old)
