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

Fast path: the slide root is first sought by Newton steps on G; the steps move
the unit direction (cos θ, sin θ) itself, so they need no trigonometry. In a
sweep they start from the previous iterate's tangential direction
(``WARM_SLIDE`` steps: between sweeps a contact's slip turns little); a lane
that this leaves inexact gets ``SLIDE_NEWTON`` steps from the direction of the
(rejected) stick solution's tangential part — the exact root when the block is
isotropic in the tangent plane, and close to it otherwise. The slide is
accepted if its local error is at round-off; only when it is not (a root far
from that angle, a non-converged Newton) does the tabulated search above run.
Each fallback is a branch (:func:`~jaxcontact.cones.branch.unless`) taken only
when some lane needs it.

Robust fallback: a result that is not exact by construction (the tabulated
search's slide; in the plane, a slide that does not exist) replaces the
previous value r_old only if its local natural-map error ‖r − P_K(r − û)‖ is
not larger, so a sweep never makes a contact worse, whatever the block
(singular, non-symmetric, huge μ, or a slide the grid missed). Take-off, stick
and an exact fast slide solve the contact's problem and are taken as they are.

Lanes: the spatial solve is written on contacts laid out with the batch last
(:func:`local_solve_lanes`: B (3, 3, L), c (3, L), μ (L,)), component by
component, so that every operation is elementwise over L contiguous lanes (the
layout of :mod:`jaxcontact.cones.lanes`); one contact is L = 1, and a sweep's
contacts or a batch's problems are lanes. The stick solve is a few products;
the fast slide's Newton steps run only if some lane neither takes off nor
sticks (an inactive contact, a body at rest), and under an outer vmap only
when some member of that batch needs them.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxcontact.cones.branch import traced_once, unless
from jaxcontact.cones.laws import modified_velocity, project_cone

GRID = 16
BISECTIONS = 12
NEWTON_STEPS = 3
SLIDE_NEWTON = 8
WARM_SLIDE = 4  # Newton steps of the fast slide from the previous iterate's direction
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


def _no_worse(B, c, mu, r, r_old):
    err_new = local_error(r, B @ r + c, mu)
    err_old = local_error(r_old, B @ r_old + c, mu)
    return jnp.where(err_new <= err_old, r, r_old)


def _local_2d(B, c, mu, r_old):
    """The planar contact: take-off, stick or one of the two slides, never worse than r_old."""
    rs = -_solve_small(B, c)
    rs_ok = jnp.all(jnp.isfinite(rs))
    rs = jnp.where(rs_ok, rs, 0.0)
    stick = rs_ok & (rs[0] >= 0) & (jnp.abs(rs[1]) <= mu * rs[0])
    r = jnp.where(c[0] >= 0, 0.0, jnp.where(stick, rs, _slide_2d(B, c, mu)))
    return _no_worse(B, c, mu, r, r_old)


# --------------------------------------------------------------------------- the spatial contact on lanes
# Every function below takes one contact per lane, component by component: B indexable as B[i][j] (a (3, 3, L)
# array, or nested sequences of (L,) arrays), c and r as c[k], μ (L,); vectors come back as tuples of (L,)
# arrays. The arithmetic is elementwise over the lanes (module docstring), and the same code runs inside a
# GPU kernel, whose values are one-dimensional (:mod:`jaxcontact.cones.fused`).


def _hypot(x, y):
    s = x * x + y * y
    pos = s > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, s, 1.0)), 0.0)


def _finite(x):
    """x is finite (NaN and ±∞ compare false), elementwise."""
    return jnp.abs(x) < jnp.inf


def project_components(x, mu):
    """:func:`~jaxcontact.cones.laws.project_cone` of one contact per lane: (x_N, x_T1, x_T2) → tuple."""
    xn, x1, x2 = x[0], x[1], x[2]
    nt = _hypot(x1, x2)
    inside = nt <= mu * xn
    polar = mu * nt <= -xn
    s = (mu * nt + xn) / (mu * mu + 1.0)
    k = jnp.where(polar, 0.0, jnp.where(inside, 1.0, mu * s / jnp.where(nt > 0, nt, 1.0)))
    return jnp.where(polar, 0.0, jnp.where(inside, xn, s)), k * x1, k * x2


def project_cone_lanes(x, mu):
    """:func:`~jaxcontact.cones.laws.project_cone` of (3, L) lanes, component by component."""
    return jnp.stack(project_components(x, mu))


def local_error_components(r, u, mu):
    """:func:`local_error` per lane: ‖r − P_K(r − û)‖."""
    uh = (u[0] + mu * _hypot(u[1], u[2]), u[1], u[2])
    p = project_components([r[k] - uh[k] for k in range(3)], mu)
    e = [r[k] - p[k] for k in range(3)]
    return jnp.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])


def product_components(B, r):
    """B r per lane."""
    return tuple(B[i][0] * r[0] + B[i][1] * r[1] + B[i][2] * r[2] for i in range(3))


def _stick(B, c):
    """−B⁻¹ c per lane by cofactors, and whether it is finite."""
    b = lambda i, j: B[i % 3][j % 3]  # noqa: E731
    cof = [[b(i + 1, j + 1) * b(i + 2, j + 2) - b(i + 1, j + 2) * b(i + 2, j + 1) for j in range(3)] for i in range(3)]
    det = B[0][0] * cof[0][0] + B[0][1] * cof[0][1] + B[0][2] * cof[0][2]
    inv = -1.0 / det  # one division (one loop on the CPU: see _newton_turn), not one per component
    rs = [(cof[0][j] * c[0] + cof[1][j] * c[1] + cof[2][j] * c[2]) * inv for j in range(3)]
    ok = _finite(rs[0]) & _finite(rs[1]) & _finite(rs[2])
    return tuple(jnp.where(ok, x, 0.0) for x in rs), ok


def _newton_turn(e1, e2, p1, p2, g, gp):
    """The unit direction e − δ e⊥ / ‖e − δ e⊥‖ with the Newton step δ = G / G' bounded to ±½ (G is periodic).

    Written with a single costly operation, the reciprocal square root: XLA's CPU fusion does not copy a
    division or a root into each of its users, so every one with several users would be a loop (a kernel
    call) of its own, several a step. An unbounded step is the same direction as |G'| e − sign(G') G e⊥,
    which needs no division.
    """
    sign = jnp.where(gp < 0, -1.0, 1.0)
    newton = (jnp.abs(g) <= 0.5 * jnp.abs(gp)) & (gp != 0)
    bounded = jnp.where(gp != 0, 0.5 * jnp.sign(g) * sign, jnp.clip(g, -0.5, 0.5))
    a = jnp.where(newton, sign * gp, 1.0)
    b = jnp.where(newton, sign * g, bounded)
    w1, w2 = a * e1 - b * p1, a * e2 - b * p2
    inv = lax.rsqrt(w1 * w1 + w2 * w2)
    return w1 * inv, w2 * inv


def _slide_newton(B, c, mu, rs, steps=None):
    """The fast slide: ``steps`` (default ``SLIDE_NEWTON``) Newton steps on G from the tangential direction of
    ``rs`` (the stick solution, or a warm start).

    The unknown is the unit direction e itself, moved by the Newton step δ = G / G' along e⊥ and
    renormalised (a rotation by arctan δ instead of δ: the same root, still quadratic convergence), so the
    steps need no trigonometry; G' = dG/dθ, G's derivative along e⊥, is written out. The start is only a
    guess: a slide accepted as exact is a converged root, whose derivative the Newton steps carry. The start's
    own derivative is not merely unused but harmful: the normalisation's is 0/0 where the stick's tangential
    part vanishes (a head-on impact on an isotropic block), and a reverse pass would carry that NaN through
    the ``where`` that discards the slide.
    """
    t1, t2 = lax.stop_gradient(rs[1]), lax.stop_gradient(rs[2])
    n = _hypot(t1, t2)
    safe = jnp.where(n > 0, n, 1.0)
    e1, e2 = jnp.where(n > 0, t1 / safe, 1.0), jnp.where(n > 0, t2 / safe, 0.0)

    def parts(e1, e2):
        row = [B[i][0] + mu * (e1 * B[i][1] + e2 * B[i][2]) for i in range(3)]  # (B t)_i
        den = row[0]
        return row, den, -c[0] * row[1] + den * c[1], -c[0] * row[2] + den * c[2]  # den · u_T

    for _ in range(SLIDE_NEWTON if steps is None else steps):
        p1, p2 = -e2, e1
        row, den, v1, v2 = parts(e1, e2)
        drow = [mu * (p1 * B[i][1] + p2 * B[i][2]) for i in range(3)]
        dv1 = -c[0] * drow[1] + drow[0] * c[1]
        dv2 = -c[0] * drow[2] + drow[0] * c[2]
        g = v1 * e2 - v2 * e1
        gp = dv1 * e2 + v1 * p2 - dv2 * e1 - v2 * p1
        e1, e2 = _newton_turn(e1, e2, p1, p2, g, gp)
    _, den, v1, v2 = parts(e1, e2)
    ok = (den > 0) & (v1 * e1 + v2 * e2 <= 0)
    rn = -c[0] / jnp.where(den > 0, den, 1.0)
    return (rn, rn * mu * e1, rn * mu * e2), ok


def exact_fast_slide(B, c, mu, rs, steps=None):
    """The fast slide (:func:`_slide_newton`) and whether it is exact (its local error at round-off), per lane."""
    slide, ok = _slide_newton(B, c, mu, rs, steps)
    u = [x + ck for x, ck in zip(product_components(B, slide), c)]
    norm = lambda x: jnp.sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2])  # noqa: E731
    scale = jnp.maximum(norm(c), jnp.maximum(norm(slide), norm(u)))
    eps = jnp.finfo(c[0].dtype).eps
    return slide, ok & (local_error_components(slide, u, mu) <= EXACT_ULPS * eps * scale)


def candidate_components(B, c, mu, fast_slide):
    """Take-off, stick or the fast slide per lane (a tuple), and whether that candidate is exact.

    ``fast_slide(easy, B, c, mu, rs)`` gives (slide, exact) where a lane neither takes off nor sticks:
    :func:`exact_fast_slide` itself, or a branch that runs it only when some lane needs it."""
    rs, rs_ok = _stick(B, c)
    stick = rs_ok & (rs[0] >= 0) & (_hypot(rs[1], rs[2]) <= mu * rs[0])
    take_off = c[0] >= 0
    easy = take_off | stick
    slide, slide_ok = fast_slide(easy, B, c, mu, rs)
    r = tuple(jnp.where(take_off, 0.0, jnp.where(stick, rs[k], slide[k])) for k in range(3))
    return r, easy | slide_ok


def _fast_slide_if_needed(r_old, easy, B, c, mu, rs):
    # The slide's Newton steps cost many times the stick solve: they run only if some lane neither takes
    # off nor sticks (an inactive contact, a body at rest skip them).
    zero = jnp.zeros_like(c[0])
    return unless(jnp.all(easy), ((zero, zero, zero), jnp.ones_like(easy)), _warm_slide, B, c, mu, rs, r_old, easy)


def _warm_slide(B, c, mu, rs, r_old, easy):
    """The fast slide from r_old's tangential direction (the stick's where r_old has none) in ``WARM_SLIDE``
    steps; the lanes that leaves inexact get ``SLIDE_NEWTON`` steps from the stick's, if any lane needs them."""
    has = (r_old[1] != 0) | (r_old[2] != 0)
    start = (rs[0], jnp.where(has, r_old[1], rs[1]), jnp.where(has, r_old[2], rs[2]))
    slide, exact = exact_fast_slide(B, c, mu, start, WARM_SLIDE)
    return unless(jnp.all(easy | exact), (slide, exact), _cold_slide_where_inexact, B, c, mu, rs, slide, exact)


def _cold_slide_where_inexact(B, c, mu, rs, slide, exact):
    cold, cold_exact = exact_fast_slide(B, c, mu, rs)
    return tuple(jnp.where(exact, a, b) for a, b in zip(slide, cold)), exact | cold_exact


def _candidate_lanes(B, c, mu, r_old):
    """Take-off, stick or the fast slide per lane ((3, L)), and whether that candidate is exact; ``r_old``: the
    previous iterate, where the fast slide starts."""
    r, exact = candidate_components(B, c, mu, functools.partial(_fast_slide_if_needed, r_old))
    return jnp.stack(r), exact


def _searched_slide(B, c, mu, r_old):
    return _no_worse(B, c, mu, _slide_3d(B, c, mu), r_old)


_searched_lanes = jax.vmap(_searched_slide, in_axes=(-1, -1, -1, -1), out_axes=-1)


# Jitted: a solve traces its sweeps at several call sites (the sweeps, their groups, the gradient rules), and
# each would otherwise trace this unrolled solve again; one trace per lane shape serves them all.
@traced_once
def local_solve_lanes(B, c, mu, r_old):
    """Solution of one contact's problem per lane: B (d, d, L), c and r_old (d, L), μ (L,) → (d, L).

    The tabulated search runs only where the fast path missed, and only if some lane did (a branch).
    """
    if c.shape[0] == 2:
        return jax.vmap(_local_2d, in_axes=(-1, -1, -1, -1), out_axes=-1)(B, c, mu, r_old)
    r, exact = _candidate_lanes(B, c, mu, r_old)
    # An exact candidate solves the contact's problem (local error at round-off): nothing to compare it with.
    return unless(jnp.all(exact), r, _searched_where_inexact, B, c, mu, r_old, r, exact)


def _searched_where_inexact(B, c, mu, r_old, r, exact):
    return jnp.where(exact, r, _searched_lanes(B, c, mu, r_old))


def local_solve(B, c, mu, r_old):
    """Solution r of one contact's problem (see the module docstring): B (d, d), c, r_old (d,), μ scalar."""
    return local_solve_lanes(B[..., None], c[:, None], jnp.asarray(mu)[None], r_old[:, None])[:, 0]


def local_solve_all(B, C, mu, R_old):
    """:func:`local_solve` for every contact at once (B (nc, d, d), C, R_old (nc, d), mu (nc,)): the contacts
    as lanes."""
    return local_solve_lanes(jnp.moveaxis(B, 0, -1), C.T, mu, R_old.T).T
