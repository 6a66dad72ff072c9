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
from typing import Any, Optional

import jax.numpy as jnp

from jaxcontact.planar.values import Value

COORDINATES = ("x", "y", "theta")


@dataclasses.dataclass(frozen=True, eq=False)
class Body:
    """A rigid body (``index`` ≥ 0) or the ground (``index`` None), owned by one Mechanism."""

    name: str
    index: Optional[int]
    mass: Optional[Value] = None
    inertia: Optional[Value] = None
    owner: Any = dataclasses.field(default=None, repr=False)

    @property
    def is_ground(self) -> bool:
        return self.index is None

    def slice(self) -> slice:
        return slice(3 * self.index, 3 * self.index + 3)

    def __repr__(self):
        if self.is_ground:
            return "Ground()"
        return f"Body({self.name!r}, mass={self.mass!r}, inertia={self.inertia!r}, q[{3 * self.index}:{3 * self.index + 3}])"


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
        return self.x(p), self.y(p)

    def world(self, q, p):
        """World position (px, py) of the point at configuration q."""
        return world_point(q, self.body, self.local(p))

    def values(self):
        return (self.x, self.y)

    def __repr__(self):
        return f"{self.body.name}({self.x!r}, {self.y!r})"


def pose(q, body: Body):
    """(x, y, θ) of a body; the ground has zero pose."""
    if body.is_ground:
        z = jnp.zeros((), q.dtype)
        return z, z, z
    i = 3 * body.index
    return q[i], q[i + 1], q[i + 2]


def rotate(theta, vx, vy):
    """R(θ) (vx, vy)."""
    c, s = jnp.cos(theta), jnp.sin(theta)
    return c * vx - s * vy, s * vx + c * vy


def world_point(q, body: Body, local):
    """r + R(θ) s for body-local s; for the ground, s itself (as arrays of q's dtype)."""
    sx, sy = local
    if body.is_ground:
        return jnp.asarray(sx, q.dtype), jnp.asarray(sy, q.dtype)
    x, y, th = pose(q, body)
    dx, dy = rotate(th, sx, sy)
    return x + dx, y + dy


def world_direction(q, body: Body, local):
    """R(θ) d for a body-fixed direction d (d itself for the ground)."""
    dx, dy = local
    if body.is_ground:
        return jnp.asarray(dx, q.dtype), jnp.asarray(dy, q.dtype)
    return rotate(pose(q, body)[2], dx, dy)


def material_velocity(q, u, body: Body, px, py):
    """Velocity of the material point of ``body`` that is at world point (px, py) now.

    The rigid velocity field v = ṙ + θ̇ ẑ × (P − r) = (ẋ − θ̇ (P_y − y), ẏ + θ̇ (P_x − x));
    zero for the ground. Affine in u, as γ_T must be.
    """
    if body.is_ground:
        z = jnp.zeros((), q.dtype)
        return z, z
    x, y, _ = pose(q, body)
    i = 3 * body.index
    vx, vy, w = u[i], u[i + 1], u[i + 2]
    return vx - w * (py - y), vy + w * (px - x)


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
