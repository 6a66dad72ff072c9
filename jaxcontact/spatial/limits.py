"""Joint limits as unilateral contacts: a hinge's angle or a slide's travel kept in [lower, upper].

A limit is two contact rows of the joint coordinate s (an angle in rad, a travel in m),

    g_lower = s − lower ≥ 0,        g_upper = upper − s ≥ 0,

each with a normal impulse ≥ 0 (a torque impulse about the axis, a force impulse along it) and Newton's
restitution on ṡ: a door swung into its stop at ω comes back at −ε ω. The stepper differentiates the gaps
(the contact Jacobian is ∂s/∂q), so s need not be a distance. A limit has no friction: its tangent rows
are zero and its friction must be 0 (a stop's friction is a contact of shapes, not of the joint).

The coordinate is measured from a reference pose (the drawing: ``orientation`` is b's frame in a's there,
the two ``point`` fields coincide there) and offset by ``reference``, the joint's reading in that pose:

* hinge: the relative rotation from the reference, q_d = (q_a* ⊗ q_b) ⊗ O*, is a turn by s − reference
  about the axis (a's frame): s = reference + 2 atan2(â · vec(q_d), w(q_d)), continuous through ±π
  (the quaternions are continuous along a run), exact for any angle in (−2π, 2π) from the reference;
* slide: s = reference + (R_a â) · (p_b − p_a), the travel of b's point along a's axis.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax.numpy as jnp

from jaxcontact.spatial import rotations
from jaxcontact.spatial.bodies import Body, attached_point, vector_value
from jaxcontact.spatial.contacts import Contact, _ground
from jaxcontact.values import Value

KINDS = ("hinge", "slide")


def _quaternion(q, body: Body):
    if body is None or body.is_ground:
        return jnp.asarray([1.0, 0.0, 0.0, 0.0], q.dtype)
    return q[body.q_slice()][3:]


@dataclasses.dataclass(frozen=True, eq=False)
class JointLimit(Contact):
    """The range [``lower``, ``upper``] of the joint coordinate of a hinge or slide between ``a`` (None: the
    ground) and ``b``: two contact rows, the lower stop first.

    ``kind``: "hinge" or "slide"; ``axis``: the joint axis in a's frame; ``point_a``, ``point_b``: the joint's
    point in each body's frame (they coincide in the reference pose); ``orientation``: b's frame in a's in
    the reference pose (unit quaternion, w first; hinge); ``reference``: the joint coordinate there;
    ``lower``, ``upper``: value specs (rad or m). ``friction`` must be 0.
    """

    kind: str = "hinge"
    a: Body | None = None
    b: Body = None
    axis: tuple = (0.0, 0.0, 1.0)
    point_a: tuple = (0.0, 0.0, 0.0)
    point_b: tuple = (0.0, 0.0, 0.0)
    orientation: tuple = (1.0, 0.0, 0.0, 0.0)
    reference: float = 0.0
    lower: Any = None
    upper: Any = None

    size = 2

    @property
    def point_impulses(self) -> bool:
        """A slide's stop pushes along the axis at the joint's point; a hinge's is a torque about the axis."""
        return self.kind == "slide"

    def vectors(self) -> dict:
        """The axis (a direction) and the two points."""
        return {"axis": (self.axis, True), "point_a": (self.point_a, False), "point_b": (self.point_b, False)}

    def check(self, p) -> None:
        """The kind, a frictionless law, a unit orientation, lower < upper, and the vectors."""
        where = f"joint limit {self.name!r}"
        if self.kind not in KINDS:
            raise ValueError(f"{where} kind = {self.kind!r} must be one of {KINDS}")
        friction = Value(self.friction, f"{where} friction")(p)
        if jnp.any(jnp.asarray(friction) != 0):
            raise ValueError(f"{where} friction = {self.friction!r} must be 0 (a joint limit has no friction)")
        rotations.check_unit(self.orientation, f"{where} orientation")
        lower, upper = (jnp.asarray(Value(getattr(self, f), f"{where} {f}")(p)) for f in ("lower", "upper"))
        if not jnp.all(lower < upper):
            raise ValueError(f"{where}: lower = {self.lower!r} must be below upper = {self.upper!r}")
        super().check(p)

    def coordinate(self, q, p):
        """The joint coordinate s at q (rad for a hinge, m for a slide)."""
        where = f"joint limit {self.name!r}"
        axis = vector_value(self.axis, p, q.dtype, f"{where} axis")
        axis = axis / jnp.sqrt(axis @ axis)
        if self.kind == "hinge":
            relative = rotations.multiply(rotations.conjugate(_quaternion(q, self.a)), _quaternion(q, self.b))
            turn = rotations.multiply(relative, rotations.conjugate(jnp.asarray(self.orientation, q.dtype)))
            return self.reference + 2.0 * jnp.arctan2(axis @ turn[1:], turn[0])
        pa, pb, Ra = self._points(q, p)
        return self.reference + (Ra @ axis) @ (pb - pa)

    def _points(self, q, p):
        where = f"joint limit {self.name!r}"
        pa, Ra = attached_point(q, p, self.a, self.point_a, f"{where} point_a")
        pb, _ = attached_point(q, p, self.b, self.point_b, f"{where} point_b")
        return pa, pb, Ra

    def frames(self, q, p):
        """(gaps (2,), points, normals, a, b): the joint's point on b, the normal ∓ the world axis (the
        direction of the stop's torque or force on b)."""
        where = f"joint limit {self.name!r}"
        s = self.coordinate(q, p)
        lower, upper = (jnp.asarray(Value(getattr(self, f), f"{where} {f}")(p), q.dtype) for f in ("lower", "upper"))
        _, pb, Ra = self._points(q, p)
        axis = Ra @ vector_value(self.axis, p, q.dtype, f"{where} axis")
        axis = axis / jnp.sqrt(axis @ axis)
        return (
            jnp.stack([s - lower, upper - s]),
            jnp.stack([pb, pb]),
            jnp.stack([axis, -axis]),
            self.a if self.a is not None else _ground(),
            self.b,
        )

    def slips(self, q, u, p):
        """No tangent motion: zero rows (the limit is frictionless)."""
        return jnp.zeros((2, 2), q.dtype)
