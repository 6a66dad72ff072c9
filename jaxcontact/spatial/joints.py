"""Joints between spatial bodies: holonomic constraints Φ(q) = 0 in world-frame vectors.

Each joint joins body a (or the ground) and body b at a point given in each body's frame and,
for the joints with an axis, an axis given in each body's frame; the rows (all vanish when the
joint is assembled):

* :class:`Spherical` — the two points coincide: p_a − p_b (3 rows);
* :class:`Universal` — spherical, and the axes stay perpendicular: (R_a a)·(R_b b) (1 row);
* :class:`Revolute` — spherical, and the axes stay parallel: (R_a a)·(R_b t_k(b)), k = 1, 2 (2 rows);
* :class:`Cylindrical` — the axes stay parallel and b's point stays on a's axis line:
  (R_a a)·(R_b t_k(b)) and (p_b − p_a)·(R_a t_k(a)) (4 rows);
* :class:`Prismatic` — cylindrical without the rotation about the axis: also (R_a t_1(a))·(R_b t_2(b)) (5 rows);
* :class:`Fixed` — spherical, and the frames keep their relative orientation O (a's frame turned by O is b's
  at assembly): (R_a O e_1)·(R_b e_2), (R_a O e_2)·(R_b e_3), (R_a O e_3)·(R_b e_1) (6 rows).
* :class:`Driver` — a rheonomic row: b's reference direction turned about a's axis by the angle φ(t)
  from a's: (R_b r_b)·R_a(−sin φ r_a + cos φ (n_a × r_a)) = sin(θ − φ) (1 row; with a revolute, a motor).

(t_1, t_2) is the tangent pair of a unit axis (:func:`jaxcontact.spatial.contacts.tangent_basis`).
The orientation rows are dot products, zero when assembled and regular there (their Jacobian has
full rank at the assembled pose); they single out the assembled branch only near it, which the
time stepping never leaves. Points and axes are constants (the drawing of the mechanism); each
point coordinate may be a value spec (a name or expression: a length as a parameter).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxcontact.spatial import rotations
from jaxcontact.spatial.bodies import Body, attached_point, pose
from jaxcontact.spatial.contacts import tangent_basis
from jaxcontact.values import Value


def _unit(v):
    return v / jnp.sqrt(v @ v)


@dataclasses.dataclass(frozen=True, eq=False)
class Joint:
    """Base of the joints: bodies a (None or the ground allowed) and b, a point in each body's frame."""

    name: str
    a: Body
    point_a: tuple
    b: Body
    point_b: tuple = (0.0, 0.0, 0.0)

    size = 3

    def _points(self, q, p):
        pa, Ra = attached_point(q, p, self.a, self.point_a, f"joint {self.name!r} point_a")
        pb, Rb = attached_point(q, p, self.b, self.point_b, f"joint {self.name!r} point_b")
        return pa, pb, Ra, Rb

    def rows(self, q, t, p):
        """Φ of this joint (``size``,)."""
        pa, pb, _, _ = self._points(q, p)
        return pa - pb

    def values(self) -> dict:
        """field -> Value of the joint's value specs beyond its points (checked by the assembly)."""
        return {}


@dataclasses.dataclass(frozen=True, eq=False)
class Spherical(Joint):
    """A ball joint: the points coincide (3 rows)."""


@dataclasses.dataclass(frozen=True, eq=False)
class _Axial(Joint):
    axis_a: tuple = (0.0, 0.0, 1.0)
    axis_b: tuple = (0.0, 0.0, 1.0)

    def _axes(self, q, p, Ra, Rb):
        a = Ra @ _unit(jnp.asarray(self.axis_a, q.dtype))
        b_local = _unit(jnp.asarray(self.axis_b, q.dtype))
        tb1, tb2 = tangent_basis(b_local)
        ta1, ta2 = tangent_basis(_unit(jnp.asarray(self.axis_a, q.dtype)))
        return a, Rb @ b_local, Rb @ tb1, Rb @ tb2, Ra @ ta1, Ra @ ta2


@dataclasses.dataclass(frozen=True, eq=False)
class Universal(_Axial):
    """Spherical, and a's axis stays perpendicular to b's (a cross-shaped spider): 4 rows."""

    size = 4

    def rows(self, q, t, p):
        """Φ (4,)."""
        pa, pb, Ra, Rb = self._points(q, p)
        a, b, *_ = self._axes(q, p, Ra, Rb)
        return jnp.concatenate([pa - pb, (a @ b)[None]])


@dataclasses.dataclass(frozen=True, eq=False)
class Revolute(_Axial):
    """Spherical, and the axes stay parallel: rotation about the common axis only (5 rows)."""

    size = 5

    def rows(self, q, t, p):
        """Φ (5,)."""
        pa, pb, Ra, Rb = self._points(q, p)
        a, _, tb1, tb2, _, _ = self._axes(q, p, Ra, Rb)
        return jnp.concatenate([pa - pb, jnp.stack([a @ tb1, a @ tb2])])


@dataclasses.dataclass(frozen=True, eq=False)
class Cylindrical(_Axial):
    """The axes stay parallel and b's point stays on a's axis line: slide along and turn about it (4 rows)."""

    size = 4

    def rows(self, q, t, p):
        """Φ (4,)."""
        pa, pb, Ra, Rb = self._points(q, p)
        a, _, tb1, tb2, ta1, ta2 = self._axes(q, p, Ra, Rb)
        d = pb - pa
        return jnp.stack([a @ tb1, a @ tb2, d @ ta1, d @ ta2])


@dataclasses.dataclass(frozen=True, eq=False)
class Prismatic(_Axial):
    """Cylindrical without the rotation about the axis: slide along it only (5 rows; assembled with
    a's and b's axis frames aligned)."""

    size = 5

    def rows(self, q, t, p):
        """Φ (5,)."""
        pa, pb, Ra, Rb = self._points(q, p)
        a, _, tb1, tb2, ta1, ta2 = self._axes(q, p, Ra, Rb)
        d = pb - pa
        return jnp.stack([a @ tb1, a @ tb2, d @ ta1, d @ ta2, ta1 @ tb2])


@dataclasses.dataclass(frozen=True, eq=False)
class Fixed(Joint):
    """Welds b to a: the points coincide and b's frame keeps the orientation ``orientation`` in a's frame (a unit
    quaternion, numbers, w first; by default the frames aligned): 6 rows."""

    orientation: tuple = (1.0, 0.0, 0.0, 0.0)

    size = 6

    def __post_init__(self):
        rotations.check_unit(self.orientation, f"joint {self.name!r} orientation")

    def rows(self, q, t, p):
        """Φ (6,)."""
        pa, pb, Ra, Rb = self._points(q, p)
        Ra = Ra @ rotations.matrix(jnp.asarray(self.orientation, q.dtype))
        return jnp.concatenate([pa - pb, jnp.stack([Ra[:, 0] @ Rb[:, 1], Ra[:, 1] @ Rb[:, 2], Ra[:, 2] @ Rb[:, 0]])])


@dataclasses.dataclass(frozen=True, eq=False)
class Driver(_Axial):
    """Drives the rotation of b about a's axis ``axis_a`` (a unit vector of a's frame): the angle θ from a's
    ``reference_a`` to b's ``reference_b`` (both ⊥ the axis, in their bodies' frames) follows ``angle``,
    a value spec that may use t (e.g. "omega*t"). One row, sin(θ − φ(t)): regular where it vanishes, so
    the time stepping (which starts on it) keeps the branch θ = φ. The points are not used.
    Pair it with a :class:`Revolute` about the same axis: together, a motor at a prescribed angle."""

    point_a: tuple = (0.0, 0.0, 0.0)
    b: Body = None
    reference_a: tuple = (1.0, 0.0, 0.0)
    reference_b: tuple = (1.0, 0.0, 0.0)
    angle: object = 0.0

    size = 1

    def __post_init__(self):
        if not isinstance(self.b, Body) or self.b.is_ground:
            raise ValueError(f"joint {self.name!r}: the driven body b must be a body of the assembly; got {self.b!r}")
        for field in ("axis_a", "reference_a", "reference_b"):
            v = np.asarray(getattr(self, field), float)
            if v.shape != (3,) or not np.all(np.isfinite(v)) or not np.linalg.norm(v) > 0:
                raise ValueError(
                    f"joint {self.name!r} {field} = {getattr(self, field)!r} must be three finite numbers, not all zero"
                )
        n, r = (np.asarray(v, float) / np.linalg.norm(v) for v in (self.axis_a, self.reference_a))
        if abs(n @ r) > 1e-12:
            raise ValueError(
                f"joint {self.name!r} reference_a = {self.reference_a!r} must be perpendicular to "
                f"axis_a = {self.axis_a!r}"
            )
        Value(self.angle, f"joint {self.name!r} angle", time_ok=True)  # parsed now: a bad expression fails here

    def values(self) -> dict:
        """{"angle": Value}: the prescribed angle (may use t)."""
        return {"angle": Value(self.angle, f"joint {self.name!r} angle", time_ok=True)}

    def rows(self, q, t, p):
        """Φ (1,): sin(θ − φ(t))."""
        ground = Body("ground", None)
        _, Ra = pose(q, self.a if self.a is not None else ground)
        _, Rb = pose(q, self.b)
        n = _unit(jnp.asarray(self.axis_a, q.dtype))
        ra = _unit(jnp.asarray(self.reference_a, q.dtype))
        rb = Rb @ _unit(jnp.asarray(self.reference_b, q.dtype))
        phi = jnp.asarray(Value(self.angle, f"joint {self.name!r} angle", time_ok=True)(p, t), q.dtype)
        return (rb @ (Ra @ (jnp.cos(phi) * jnp.cross(n, ra) - jnp.sin(phi) * ra)))[None]
