"""Planar rigid bodies in absolute coordinates, body-fixed points, rigid velocity fields.

Body i owns q[3i:3i+3] = (x_i, y_i, θ_i): the world position of its centre of
mass and the angle from the world x-axis to its body x-axis (counter-clockwise
positive). A body-fixed point with local coordinates s = (s_x, s_y) sits at
r + R(θ) s. The ground is the body with no coordinates: its points are world
points and its velocity field is zero.

Geometry is written on scalars (pairs of 0-d arrays), not 2-vectors: the
stepper's arrays stay tiny and XLA fuses the arithmetic.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp

from jaxcontact.values import Value

COORDINATES = ("x", "y", "theta")


@dataclasses.dataclass(frozen=True, eq=False)
class Body:
    """A rigid body (``index`` ≥ 0) or the ground (``index`` None), owned by one Mechanism."""

    name: str
    index: int | None
    mass: Value | None = None
    inertia: Value | None = None
    owner: Any = dataclasses.field(default=None, repr=False)

    @property
    def is_ground(self) -> bool:
        return self.index is None

    def slice(self) -> slice:
        """The slice of q holding this body's (x, y, θ)."""
        return slice(3 * self.index, 3 * self.index + 3)

    def __repr__(self):
        if self.is_ground:
            return "Ground()"
        i = 3 * self.index
        return f"Body({self.name!r}, mass={self.mass!r}, inertia={self.inertia!r}, q[{i}:{i + 3}])"


class Point:
    """A point fixed in a body: local coordinates (world coordinates for the ground) as two Values."""

    __slots__ = ("body", "x", "y")

    def __init__(self, body: Body, xy, where: str):
        if isinstance(xy, Point):
            raise ValueError(f"{where}: give the point's coordinates as (x, y), not a Point")
        try:
            sx, sy = xy
        except (TypeError, ValueError):
            raise ValueError(f"{where}: point {xy!r} must be a pair (x, y) of values") from None
        self.body = body
        self.x = Value(sx, f"{where} x")
        self.y = Value(sy, f"{where} y")

    def local(self, p):
        """The point's body-frame coordinates (x, y) resolved from the parameters ``p``."""
        return self.x(p), self.y(p)

    def world(self, q, p):
        """World position (px, py) of the point at configuration q."""
        return world_point(q, self.body, self.local(p))

    def velocity(self, q, u, px, py):
        """Velocity of the body's material point now at (px, py) (:func:`material_velocity`)."""
        return material_velocity(q, u, self.body, px, py)

    def spin(self, q, u):
        """θ̇ of the body (0 for the ground)."""
        return 0.0 if self.body.is_ground else u[3 * self.body.index + 2]

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return (self.x, self.y)

    def __repr__(self):
        return f"{self.body.name}({self.x!r}, {self.y!r})"


class Frames:
    """Per-call cache of body poses and (cos θ, sin θ): each body's trigonometry is traced once
    however many points, joints and contacts use it. Builder functions wrap q in one Frames per
    call; every helper below accepts a Frames or a plain q."""

    __slots__ = ("q", "dtype", "_pose", "_cs")

    def __init__(self, q):
        self.q, self.dtype = q, q.dtype
        self._pose, self._cs = {}, {}

    def pose(self, body: Body):
        """(x, y, θ) of ``body`` (zeros for the ground), taken from q once."""
        if body.index not in self._pose:
            if body.is_ground:
                self._pose[None] = (0.0, 0.0, 0.0)
            else:
                i = 3 * body.index
                self._pose[body.index] = (self.q[i], self.q[i + 1], self.q[i + 2])
        return self._pose[body.index]

    def cs(self, body: Body):
        """(cos θ, sin θ) of ``body``, evaluated once per call and reused."""
        if body.index not in self._cs:
            th = self.pose(body)[2]
            self._cs[body.index] = cos_sin(th)
        return self._cs[body.index]


@jax.custom_jvp
def cos_sin(theta):
    """(cos θ, sin θ), evaluated once per call however many kernels read them.

    XLA on CPU treats cos and sin as cheap and copies them into every fused kernel that reads
    them, so a step that reads an angle's cos in many places evaluates it many times, each a
    few tens of multiply-adds in float64. A division is never copied, so the values are
    divided by a 1 that XLA cannot see is 1 (exact: x / 1 = x): each value is computed once,
    with bitwise the same numbers (the four-bar study's gain: bench/RESULTS.md, "Figures moved
    out of the code"). The derivative rule reuses the two values
    (jnp.sin's own rule would call cos again): d(cos, sin) = (−sin, cos) dθ.
    """
    one = 1.0 + 0.0 * theta  # 0·θ is not folded (it is NaN for θ = ±inf, as cos θ is)
    return jnp.cos(theta) / one, jnp.sin(theta) / one


@cos_sin.defjvp
def _cos_sin_jvp(primals, tangents):
    (theta,), (dtheta,) = primals, tangents
    c, s = cos_sin(theta)
    return (c, s), (-s * dtheta, c * dtheta)


def frames(q) -> Frames:
    """``q`` wrapped as :class:`Frames` (returned as is if it already is one)."""
    return q if isinstance(q, Frames) else Frames(q)


# Arithmetic that folds structural constants (Python 0.0 and 1.0 from literal coordinates) at
# trace time: XLA keeps x * 0.0 (it is NaN for x = inf), so a literal zero offset would cost flops.
def is_zero(x) -> bool:
    """True for a Python number equal to 0 (a structural zero that can be skipped at trace time)."""
    return isinstance(x, (int, float)) and x == 0.0


def is_one(x) -> bool:
    """True for a Python number equal to 1."""
    return isinstance(x, (int, float)) and x == 1.0


def mul(a, b):
    """a · b, skipping structural zeros and ones (fewer traced operations)."""
    if is_zero(a) or is_zero(b):
        return 0.0
    if is_one(a):
        return b
    if is_one(b):
        return a
    return a * b


def add(a, b):
    """a + b, skipping structural zeros."""
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    return a + b


def sub(a, b):
    """a − b, skipping structural zeros."""
    if is_zero(b):
        return a
    if is_zero(a):
        return -b
    return a - b


def dot(ax, ay, bx, by):
    """The 2D dot product (ax, ay) · (bx, by), skipping structural zeros."""
    return add(mul(ax, bx), mul(ay, by))


def pose(q, body: Body):
    """(x, y, θ) of a body; the ground has zero pose."""
    return frames(q).pose(body)


def rotate_cs(c, s, vx, vy):
    """R v for R = [[c, −s], [s, c]], with structural zeros in v folded."""
    return sub(mul(c, vx), mul(s, vy)), add(mul(s, vx), mul(c, vy))


def rotate(theta, vx, vy):
    """R(θ) (vx, vy)."""
    return rotate_cs(jnp.cos(theta), jnp.sin(theta), vx, vy)


def world_point(q, body: Body, local):
    """r + R(θ) s for body-local s; for the ground, s itself."""
    sx, sy = local
    if body.is_ground:
        return sx, sy
    f = frames(q)
    x, y, _ = f.pose(body)
    dx, dy = rotate_cs(*f.cs(body), sx, sy)
    return add(x, dx), add(y, dy)


def world_direction(q, body: Body, local):
    """R(θ) d for a body-fixed direction d (d itself for the ground)."""
    dx, dy = local
    if body.is_ground:
        return dx, dy
    return rotate_cs(*frames(q).cs(body), dx, dy)


def material_velocity(q, u, body: Body, px, py):
    """Velocity of the material point of ``body`` that is at world point (px, py) now.

    The rigid velocity field v = ṙ + θ̇ ẑ × (P − r) = (ẋ − θ̇ (P_y − y), ẏ + θ̇ (P_x − x));
    zero for the ground. Affine in u, as γ_T must be.
    """
    if body.is_ground:
        return 0.0, 0.0
    x, y, _ = frames(q).pose(body)
    i = 3 * body.index
    vx, vy, w = u[i], u[i + 1], u[i + 2]
    return sub(vx, mul(w, sub(py, y))), add(vy, mul(w, sub(px, x)))


def unit(vx, vy, default):
    """Normalise a direction: in Python for constants, with the safe norm otherwise."""
    if isinstance(vx, (int, float)) and isinstance(vy, (int, float)):
        n = math.hypot(vx, vy)
        return (float(vx) / n, float(vy) / n) if n > 0 else default
    return safe_unit(vx, vy, default)


def safe_norm(vx, vy):
    """√(vx² + vy²) with a zero (not NaN) gradient at the origin: the double-where trick."""
    sq = vx * vx + vy * vy
    pos = sq > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, sq, 1.0)), 0.0)


def safe_unit(vx, vy, default=(1.0, 0.0)):
    """(vx, vy)/‖(vx, vy)‖, and ``default`` at the origin, with finite gradients everywhere."""
    sq = vx * vx + vy * vy
    pos = sq > 0
    inv = 1.0 / jnp.sqrt(jnp.where(pos, sq, 1.0))
    return jnp.where(pos, vx * inv, default[0]), jnp.where(pos, vy * inv, default[1])
