"""Rigid contacts of spatial bodies: gaps, contact points and slip velocities on two tangents.

Every contact gives, per contact point, the gap g_N (open when positive), and the slip
velocity of the two bodies' material points along an orthonormal tangent pair (t1, t2)
of the unit normal n — the rows Siconos orders (N, T1, T2). The law of each contact
(Newton restitution ε_N and Coulomb's μ on the cone ‖P_T‖ ≤ μ P_N) is a pair of value
specs, so every physical number is a named, batchable parameter.

The few lines of world-frame gap geometry the first models need are in this module's
``*_gap`` functions (sphere–plane, sphere–sphere, box vertices–plane, ball in socket) and
:func:`tangent_basis`, kept together so a shared geometry module can replace them.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any

import jax.numpy as jnp

from jaxcontact.planar.values import POSITIVE, Value, is_number, law_range_rule
from jaxcontact.spatial.bodies import Body, pose, point_velocity


# --- world-frame geometry -------------------------------------------------------------------------------------

def tangent_basis(n):
    """An orthonormal pair (t1, t2) with (t1, t2, n) right-handed, smooth away from the switch |n_y| = 0.9.

    t1 = e × n / ‖e × n‖ with e = e_y (e_x when n is close to ±e_y), t2 = n × t1; for the
    horizontal plane (n = e_z) this is (e_x, e_y).
    """
    e = jnp.where(jnp.abs(n[1]) < 0.9, jnp.asarray([0.0, 1.0, 0.0], n.dtype), jnp.asarray([1.0, 0.0, 0.0], n.dtype))
    t1 = jnp.cross(e, n)
    t1 = t1 / jnp.sqrt(t1 @ t1)
    return t1, jnp.cross(n, t1)


def sphere_plane_gap(centre, radius, plane_normal, plane_offset):
    """(gap, contact point on the sphere) of a sphere and the plane n·x = d (n unit, the open side n·x > d)."""
    gap = plane_normal @ centre - plane_offset - radius
    return gap, centre - radius * plane_normal


def sphere_sphere_gap(ca, ra, cb, rb):
    """(gap, contact point on a, unit normal from a to b) of two spheres (centres apart)."""
    d = cb - ca
    dist = jnp.sqrt(d @ d)
    n = d / dist
    return dist - ra - rb, ca + ra * n, n


def box_plane_gaps(centre, R, half_extents, plane_normal, plane_offset):
    """(gaps (8,), vertices (8, 3)) of a box's vertices above the plane n·x = d."""
    signs = jnp.asarray([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], centre.dtype)
    vertices = centre + (signs * half_extents) @ R.T
    return vertices @ plane_normal - plane_offset, vertices


# --- contact elements -----------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, eq=False)
class Plane:
    """The plane n·x = offset of the ground (normal: three value specs, normalised; open side n·x > offset)."""

    normal: tuple = (0.0, 0.0, 1.0)
    offset: Any = 0.0

    def resolve(self, p, where: str):
        """(unit normal (3,), offset) at the parameters ``p``."""
        n = jnp.stack([jnp.asarray(Value(c, f"{where} plane normal")(p), jnp.result_type(float))
                       for c in self.normal])
        return n / jnp.sqrt(n @ n), Value(self.offset, f"{where} plane offset")(p)


@dataclasses.dataclass(frozen=True, eq=False)
class Contact(abc.ABC):
    """Base of the contact elements: a name, a law (restitution, friction) and ``size`` contact points."""

    name: str
    restitution: Any
    friction: Any

    size = 1

    def physical(self) -> dict:
        """field -> (value spec, rule) of the physical scalars (checked by the assembly)."""
        return {"restitution": (self.restitution, law_range_rule("restitution")),
                "friction": (self.friction, law_range_rule("friction"))}

    @abc.abstractmethod
    def frames(self, q, p):
        """(gaps (size,), points (size, 3), normals (size, 3), body a, body b) at q."""

    def gaps(self, q, p):
        """Gaps (size,)."""
        return self.frames(q, p)[0]

    def slips(self, q, u, p):
        """Slip velocities (size, 2): the relative velocity of b's and a's material points along (t1, t2)."""
        gap, points, normals, a, b = self.frames(q, p)
        rows = []
        for j in range(self.size):
            v = point_velocity(q, u, b, points[j]) - point_velocity(q, u, a, points[j])
            t1, t2 = tangent_basis(normals[j])
            rows.append(jnp.stack([t1 @ v, t2 @ v]))
        return jnp.stack(rows)


def _value(spec, where):
    return Value(spec, where)


@dataclasses.dataclass(frozen=True, eq=False)
class SpherePlane(Contact):
    """A sphere of ``radius`` centred on ``body``'s centre of mass, on the ground plane."""

    body: Body = None
    radius: Any = None
    plane: Plane = Plane()

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {**super().physical(), "radius": (self.radius, POSITIVE)}

    def frames(self, q, p):
        """(gaps, points, normals, ground, body) — the ground is side a, the sphere side b."""
        n, d = self.plane.resolve(p, f"contact {self.name!r}")
        x, _ = pose(q, self.body)
        gap, point = sphere_plane_gap(x, _value(self.radius, f"contact {self.name!r} radius")(p), n, d)
        return gap[None], point[None], n[None], _ground(), self.body


@dataclasses.dataclass(frozen=True, eq=False)
class SphereSphere(Contact):
    """Two spheres of radii ``radius_a``, ``radius_b`` centred on bodies ``a`` and ``b``."""

    a: Body = None
    b: Body = None
    radius_a: Any = None
    radius_b: Any = None

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {**super().physical(), "radius_a": (self.radius_a, POSITIVE), "radius_b": (self.radius_b, POSITIVE)}

    def frames(self, q, p):
        """(gaps, points, normals, a, b); the normal points from a to b."""
        xa, _ = pose(q, self.a)
        xb, _ = pose(q, self.b)
        ra = _value(self.radius_a, f"contact {self.name!r} radius_a")(p)
        rb = _value(self.radius_b, f"contact {self.name!r} radius_b")(p)
        gap, point, n = sphere_sphere_gap(xa, ra, xb, rb)
        return gap[None], point[None], n[None], self.a, self.b


@dataclasses.dataclass(frozen=True, eq=False)
class BoxPlane(Contact):
    """A box with ``half_extents`` (three value specs, along the body axes) on the ground plane: 8 vertex contacts."""

    body: Body = None
    half_extents: tuple = ()
    plane: Plane = Plane()

    size = 8

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {**super().physical(), **{f"half_extents[{i}]": (h, POSITIVE) for i, h in enumerate(self.half_extents)}}

    def frames(self, q, p):
        """(gaps (8,), vertices, normals, ground, body)."""
        n, d = self.plane.resolve(p, f"contact {self.name!r}")
        x, R = pose(q, self.body)
        half = jnp.stack([jnp.asarray(_value(h, f"contact {self.name!r} half extent")(p), q.dtype)
                          for h in self.half_extents])
        gaps, vertices = box_plane_gaps(x, R, half, n, d)
        return gaps, vertices, jnp.broadcast_to(n, vertices.shape), _ground(), self.body


_GROUND = Body("ground", None)


def _ground() -> Body:
    return _GROUND



def _point_vector(spec, p, dtype, where):
    if not isinstance(spec, (tuple, list)) or len(spec) != 3:
        raise ValueError(f"{where} = {spec!r} must be three coordinates (body frame)")
    return jnp.stack([jnp.asarray(Value(c, where)(p), dtype) for c in spec])


def sphere_in_sphere_gap(socket_centre, socket_radius, ball_centre, ball_radius):
    """(gap, contact point on the ball, unit normal) of a ball inside a spherical socket.

    gap = c − |e| with the clearance c = r_s − r_b and the eccentricity e = x_b − x_s; the ball
    touches the socket at x_b + r_b ê, and the normal −ê makes ġ = n·(v_b − v_a). At zero
    eccentricity ê is undefined: the ball is then centred, the gap is the whole clearance (the
    contact is wide open, so no law reads its normal), and we return the gradient 0 of |e| (its
    subgradient at the minimum) and the normal −e_z, finite in value and derivative (double where).
    """
    e = ball_centre - socket_centre
    s = e @ e
    off = s > 0
    dist = jnp.where(off, jnp.sqrt(jnp.where(off, s, 1.0)), 0.0)
    unit = jnp.where(off, e / jnp.where(off, dist, 1.0), jnp.asarray([0.0, 0.0, 1.0], e.dtype))
    return socket_radius - ball_radius - dist, ball_centre + ball_radius * unit, -unit


@dataclasses.dataclass(frozen=True, eq=False)
class SphereInSphere(Contact):
    """A spherical clearance joint: a ball of ``ball_radius`` centred at ``ball_point`` of body ``b`` inside a
    socket of ``socket_radius`` centred at ``socket_point`` of body ``a`` (None: the ground), points in the
    body frames. The clearance c = r_s − r_b must be > 0 (:func:`sphere_in_sphere_gap`)."""

    a: Body = None
    socket_point: tuple = (0.0, 0.0, 0.0)
    socket_radius: Any = None
    b: Body = None
    ball_point: tuple = (0.0, 0.0, 0.0)
    ball_radius: Any = None

    def __post_init__(self):
        if not isinstance(self.b, Body) or self.b.is_ground:
            raise ValueError(f"contact {self.name!r}: the ball's body b must be a body of the assembly; got {self.b!r}")
        for field in ("socket_point", "ball_point"):
            spec = getattr(self, field)
            if not isinstance(spec, (tuple, list)) or len(spec) != 3:
                raise ValueError(f"contact {self.name!r} {field} = {spec!r} must be three coordinates (body frame)")
        if is_number(self.socket_radius) and is_number(self.ball_radius) and \
                not float(self.socket_radius) > float(self.ball_radius):
            raise ValueError(f"contact {self.name!r}: clearance = socket_radius − ball_radius = "
                             f"{float(self.socket_radius) - float(self.ball_radius)} breaks the rule > 0 (the ball "
                             f"must fit in its socket)")

    def _radii(self, p):
        rs = _value(self.socket_radius, f"contact {self.name!r} socket_radius")(p)
        rb = _value(self.ball_radius, f"contact {self.name!r} ball_radius")(p)
        return rs, rb

    def physical(self) -> dict:
        """field -> (value spec, rule); the clearance r_s − r_b > 0 too."""
        return {**super().physical(), "socket_radius": (self.socket_radius, POSITIVE),
                "ball_radius": (self.ball_radius, POSITIVE),
                "clearance": (lambda p: jnp.subtract(*self._radii(p)), POSITIVE)}

    def frames(self, q, p):
        """(gaps, points, normals, a, b): the point on the ball's surface, the normal −ê from the socket's side."""
        a = self.a if self.a is not None else _ground()
        xa, Ra = pose(q, a)
        xb, Rb = pose(q, self.b)
        xs = xa + Ra @ _point_vector(self.socket_point, p, q.dtype, f"contact {self.name!r} socket_point")
        xc = xb + Rb @ _point_vector(self.ball_point, p, q.dtype, f"contact {self.name!r} ball_point")
        rs, rb = self._radii(p)
        gap, point, n = sphere_in_sphere_gap(xs, jnp.asarray(rs, q.dtype), xc, jnp.asarray(rb, q.dtype))
        return gap[None], point[None], n[None], a, self.b
