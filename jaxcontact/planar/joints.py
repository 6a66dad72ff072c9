"""Bilateral constraints Φ(q, t, p) = 0 of a planar mechanism.

Each joint contributes a fixed number of rows (``size``) and names them
(``row_names``). Only residuals are written here; Φ_q and Φ_t come from
``jax.jacfwd`` in :func:`jaxcontact.system.kinematics`.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxcontact.planar.bodies import COORDINATES, Body, Point, dot, frames, is_zero, pose, rotate, sub
from jaxcontact.values import Value


class Revolute:
    """Pin joint: point a of body a coincides with point b of body b (2 rows: x, y).

    Φ = (r_a + R_a s_a) − (r_b + R_b s_b). With the ground as body b, s_b is a world point.
    """

    size = 2

    def __init__(self, name: str, a: Point, b: Point):
        self.name, self.a, self.b = name, a, b

    def residual(self, q, t, p):
        """This joint's constraint rows Φ(q, t) (a list of scalars, zero when the joint holds)."""
        ax, ay = self.a.world(q, p)
        bx, by = self.b.world(q, p)
        return [sub(ax, bx), sub(ay, by)]

    @property
    def row_names(self):
        return (f"{self.name}.x", f"{self.name}.y")

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return self.a.values() + self.b.values()

    def __repr__(self):
        return f"Revolute({self.name!r}: {self.a!r} = {self.b!r})"


class Prismatic:
    """Slider: body b translates along an axis fixed in body a, without relative rotation (2 rows).

    Rows: θ_b − θ_a − angle = 0 (``angle`` the assembled relative angle), and
    n_a · (P_b − P_a) = 0 with n_a ⟂ the axis (the axis at ``axis_angle`` from body a's
    x-axis, through point a; point b of body b slides on it).
    """

    size = 2

    def __init__(self, name: str, a: Point, b: Point, axis_angle: Value, angle: Value):
        self.name, self.a, self.b = name, a, b
        self.axis_angle, self.angle = axis_angle, angle

    def residual(self, q, t, p):
        """This joint's constraint rows Φ(q, t) (a list of scalars, zero when the joint holds)."""
        _, _, tha = pose(q, self.a.body)
        _, _, thb = pose(q, self.b.body)
        ax, ay = self.a.world(q, p)
        bx, by = self.b.world(q, p)
        alpha = self.axis_angle(p)
        if is_zero(alpha) and not self.a.body.is_ground:
            c, s = frames(q).cs(self.a.body)
            nx, ny = -s, c
        else:
            nx, ny = rotate(tha + alpha, 0.0, 1.0)
        return [sub(sub(thb, tha), self.angle(p)), dot(nx, ny, sub(bx, ax), sub(by, ay))]

    @property
    def row_names(self):
        return (f"{self.name}.angle", f"{self.name}.offset")

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return self.a.values() + self.b.values() + (self.axis_angle, self.angle)

    def __repr__(self):
        return f"Prismatic({self.name!r}: {self.b!r} along {self.a!r} at {self.axis_angle!r} rad)"


class Driver:
    """Rheonomic (or fixed) coordinate constraint: c(body) − c(relative_to) − f(t, p) = 0 (1 row).

    ``coordinate`` is "x", "y" or "theta"; e.g. a motor at constant speed is
    θ2 − θ1 − ω t = 0: ``Driver("motor", bar2, "theta", Value("omega*t"), bar1)``.
    """

    size = 1

    def __init__(self, name: str, body: Body, coordinate: str, value: Value, relative_to: Body):
        if coordinate not in COORDINATES:
            raise ValueError(f"driver {name!r}: coordinate {coordinate!r} must be one of {COORDINATES}")
        self.name, self.body, self.coordinate = name, body, coordinate
        self.value, self.relative_to = value, relative_to

    def residual(self, q, t, p):
        """This joint's constraint rows Φ(q, t) (a list of scalars, zero when the joint holds)."""
        c = COORDINATES.index(self.coordinate)
        return [sub(sub(pose(q, self.body)[c], pose(q, self.relative_to)[c]), self.value(p, t))]

    @property
    def row_names(self):
        return (self.name,)

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return (self.value,)

    def __repr__(self):
        rel = "" if self.relative_to.is_ground else f" − {self.coordinate}({self.relative_to.name})"
        return f"Driver({self.name!r}: {self.coordinate}({self.body.name}){rel} = {self.value!r})"


def stack_rows(rows, dtype):
    """The constraint rows as one array of ``dtype``."""
    return jnp.stack([jnp.asarray(r, dtype) for r in rows])
