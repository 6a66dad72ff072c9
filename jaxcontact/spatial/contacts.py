"""Rigid contacts of spatial bodies: gaps, contact points and slip velocities on two tangents.

Every contact gives, per contact point, the gap g_N (open when positive), and the slip
velocity of the two bodies' material points along an orthonormal tangent pair (t1, t2)
of the unit normal n — the rows Siconos orders (N, T1, T2). The law of each contact
(Newton restitution ε_N and Coulomb's μ on the cone ‖P_T‖ ≤ μ P_N) is a pair of value
specs, so every physical number is a named, batchable parameter.

The elements place their shapes on the bodies (a point and an axis in the body frame, value
specs) and take the world-frame gap geometry from :mod:`jaxcontact.spatial.geometry`:

* :class:`SpherePlane` — a sphere on a point of the body (its centre of mass by default: an offset
  centre makes an eccentric sphere, a tippe top);
* :class:`SphereSphere` — spheres on points of the bodies (their centres of mass by default);
* :class:`SphereBox` — a sphere and a box (of a body or of the ground): the box's point closest to the sphere;
* :class:`BoxPlane` — a box's 8 vertices on the plane;
* :class:`BoxBox` — two boxes, each one's 8 vertices against the other;
* :class:`MeshPlane` — a convex mesh's hull vertices on the plane (a box's 8 are :class:`BoxPlane`);
* :class:`CapsulePlane` — a capsule's two end spheres on the plane;
* :class:`CapsuleBox` — a capsule and a box (of a body or of the ground): its end spheres and the box's edges;
* :class:`CylinderPlane` — a cylinder's end circles on the plane (their lowest points and rim points);
* :class:`CapsuleCapsule` — the closest points of two capsules' segments;
* :class:`PinInHole` — a cylindrical pin in a cylindrical hole with radial clearance (the spatial
  clearance joint): the two ends of the pin's axis against the hole's wall;
* :class:`SphereInSphere` — a ball in a spherical socket with clearance (the spherical clearance joint).
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxcontact.params import POSITIVE, law_range_rule
from jaxcontact.spatial import rotations
from jaxcontact.spatial.bodies import Body, point_velocity, pose, vector_value
from jaxcontact.spatial.geometry import (
    box_box_edge_gaps,
    box_box_gaps,
    box_plane_gaps,
    capsule_box_gaps,
    capsule_capsule_gap,
    capsule_plane_gaps,  # noqa: F401
    cylinder_plane_gaps,
    pin_in_hole_gaps,
    sphere_box_gap,
    sphere_in_sphere_gap,
    sphere_plane_gap,
    sphere_sphere_gap,
    tangent_basis,
    vertex_plane_gaps,
)
from jaxcontact.values import Value

# --- contact elements -----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class Plane:
    """The plane n·x = offset of the ground (normal: three value specs, normalised; open side n·x > offset)."""

    normal: tuple = (0.0, 0.0, 1.0)
    offset: Any = 0.0

    def resolve(self, p, where: str):
        """(unit normal (3,), offset) at the parameters ``p``."""
        n = jnp.stack([jnp.asarray(Value(c, f"{where} plane normal")(p), jnp.result_type(float)) for c in self.normal])
        return n / jnp.sqrt(n @ n), Value(self.offset, f"{where} plane offset")(p)


@dataclasses.dataclass(frozen=True, eq=False)
class Contact(abc.ABC):
    """Base of the contact elements: a name, a law (restitution, friction) and ``size`` contact points.

    A field ``body`` or ``b`` holds a body of the assembly; a field ``a`` a body or None (the ground).
    """

    name: str
    restitution: Any
    friction: Any

    size = 1
    # Its normal impulses are forces at its points along its normals (a view draws them as arrows there);
    # False where they are not (a hinge limit's are torques about the axis).
    point_impulses = True

    def physical(self) -> dict:
        """field -> (value spec, rule) of the physical scalars (checked by the assembly)."""
        return {
            "restitution": (self.restitution, law_range_rule("restitution")),
            "friction": (self.friction, law_range_rule("friction")),
        }

    def vectors(self) -> dict:
        """field -> (three value specs, is a direction) of the geometric vectors, checked by :meth:`check`:
        a point must be finite, a direction (normalised when used) finite and non-zero."""
        return {}

    def check(self, p) -> None:
        """Raise ValueError naming the field, its value and the rule for a broken geometric value.

        The assembly calls it after the physical scalars (:meth:`physical`) passed their rules; an
        element with a rule between several values (a pin thinner than its hole) adds it here.
        """
        for field, (spec, direction) in self.vectors().items():
            where = f"contact {self.name!r} {field}"
            if not isinstance(spec, (tuple, list)) or len(spec) != 3:
                raise ValueError(f"{where} = {spec!r} must be three coordinates (value specs)")
            v = np.stack(np.broadcast_arrays(*[np.asarray(Value(c, where).check(p), float) for c in spec]))
            if not np.all(np.isfinite(v)) or (direction and np.any(np.sqrt(np.sum(v * v, axis=0)) == 0)):
                rule = "finite and non-zero" if direction else "finite"
                raise ValueError(f"{where} = {v.tolist()} breaks the rule: {rule}")

    def bodies(self) -> tuple[Body, ...]:
        """The bodies whose motion moves its points, the ground left out (its fields that hold bodies)."""
        held = (getattr(self, f.name) for f in dataclasses.fields(self))
        return tuple(sorted((v for v in held if isinstance(v, Body) and not v.is_ground), key=lambda b: b.index))

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

    def _scalar(self, field: str, p):
        return Value(getattr(self, field), f"contact {self.name!r} {field}")(p)


def _value(spec, where):
    return Value(spec, where)


def _check_box(where, half_field, half, orientation_field, orientation):
    """Raise ValueError naming the field unless a box has three half extents and a unit-quaternion orientation."""
    if not isinstance(half, (tuple, list)) or len(half) != 3:
        raise ValueError(f"{where} {half_field} = {half!r} must be three value specs")
    rotations.check_unit(orientation, f"{where} {orientation_field}")


def _box(q, p, body, centre, orientation, half, where):
    """(world centre, rotation, half extents) of a box placed on ``body`` at the body-frame point ``centre``,
    its edges along the body axes turned by ``orientation``."""
    x, R = pose(q, body)
    x = x + R @ vector_value(centre, p, q.dtype, f"{where} centre")
    R = R @ rotations.matrix(jnp.asarray(orientation, q.dtype))
    return x, R, vector_value(half, p, q.dtype, f"{where} half extent")


def _segment(q, p, body, centre, axis, half_length, where):
    """(world centre, world half-vector) of the segment ``centre`` ± ``half_length`` · axis/‖axis‖ of ``body``."""
    x, R = pose(q, body)
    c = x + R @ vector_value(centre, p, q.dtype, f"{where} centre")
    ax = vector_value(axis, p, q.dtype, f"{where} axis")
    return c, (half_length / jnp.sqrt(ax @ ax)) * (R @ ax)


@dataclasses.dataclass(frozen=True, eq=False)
class SpherePlane(Contact):
    """A sphere of ``radius`` centred at the body-frame point ``centre`` of ``body``, on the ground plane.

    By default the sphere is centred on the centre of mass. An offset centre c (three value specs)
    makes an eccentric sphere — a tippe top, a weighted ball: the sphere's world centre is x + R c,
    and the contact point, its lowest point, moves on the body as it turns, so the contact force
    has a moment (x + R c − r n − x) × F about the centre of mass.
    """

    body: Body = None
    radius: Any = None
    plane: Plane = Plane()
    centre: tuple = (0.0, 0.0, 0.0)

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {**super().physical(), "radius": (self.radius, POSITIVE)}

    def vectors(self) -> dict:
        """The plane's normal (a direction) and the sphere's centre (a point of the body)."""
        return {"plane normal": (self.plane.normal, True), "centre": (self.centre, False)}

    def frames(self, q, p):
        """(gaps, points, normals, ground, body) — the ground is side a, the sphere side b."""
        where = f"contact {self.name!r}"
        n, d = self.plane.resolve(p, where)
        x, R = pose(q, self.body)
        c = x + R @ vector_value(self.centre, p, q.dtype, f"{where} centre")
        gap, point = sphere_plane_gap(c, _value(self.radius, f"{where} radius")(p), n, d)
        return gap[None], point[None], n[None], _ground(), self.body


@dataclasses.dataclass(frozen=True, eq=False)
class SphereSphere(Contact):
    """Two spheres of radii ``radius_a``, ``radius_b`` centred at the body-frame points ``centre_a`` of ``a``
    (None: the ground, the point in world coordinates) and ``centre_b`` of ``b`` (the centres of mass by
    default)."""

    a: Body = None
    b: Body = None
    radius_a: Any = None
    radius_b: Any = None
    centre_a: tuple = (0.0, 0.0, 0.0)
    centre_b: tuple = (0.0, 0.0, 0.0)

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {**super().physical(), "radius_a": (self.radius_a, POSITIVE), "radius_b": (self.radius_b, POSITIVE)}

    def vectors(self) -> dict:
        """The spheres' centres (points of the bodies)."""
        return {"centre_a": (self.centre_a, False), "centre_b": (self.centre_b, False)}

    def frames(self, q, p):
        """(gaps, points, normals, a, b); the normal points from a to b."""
        where = f"contact {self.name!r}"
        xa, Ra = pose(q, _side(self.a))
        xb, Rb = pose(q, self.b)
        xa = xa + Ra @ vector_value(self.centre_a, p, q.dtype, f"{where} centre_a")
        xb = xb + Rb @ vector_value(self.centre_b, p, q.dtype, f"{where} centre_b")
        ra = _value(self.radius_a, f"contact {self.name!r} radius_a")(p)
        rb = _value(self.radius_b, f"contact {self.name!r} radius_b")(p)
        gap, point, n = sphere_sphere_gap(xa, ra, xb, rb)
        return gap[None], point[None], n[None], _side(self.a), self.b


@dataclasses.dataclass(frozen=True, eq=False)
class _BoxAndRound(Contact):
    """A box of body ``a`` (None: of the ground) and a shape of body ``b`` made round by ``radius`` about the point
    ``centre_b`` of b's frame (a sphere, a capsule): the fields, rules and box placement they share."""

    a: Body = None
    half_extents: tuple = ()
    box_centre: tuple = (0.0, 0.0, 0.0)
    box_orientation: tuple = (1.0, 0.0, 0.0, 0.0)
    b: Body = None
    radius: Any = None
    centre_b: tuple = (0.0, 0.0, 0.0)

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        halves = {f"half_extents[{i}]": (h, POSITIVE) for i, h in enumerate(self.half_extents)}
        return {**super().physical(), "radius": (self.radius, POSITIVE), **halves}

    def vectors(self) -> dict:
        """The box's centre and the round shape's (points of the bodies)."""
        return {"box_centre": (self.box_centre, False), "centre_b": (self.centre_b, False)}

    def check(self, p) -> None:
        """Three half extents, a unit quaternion, and the vectors."""
        _check_box(f"contact {self.name!r}", "half_extents", self.half_extents, "box_orientation", self.box_orientation)
        super().check(p)

    def _placed_box(self, q, p):
        """(world centre, rotation, half extents) of the box at q."""
        where = f"contact {self.name!r}"
        return _box(q, p, _side(self.a), self.box_centre, self.box_orientation, self.half_extents, where)


@dataclasses.dataclass(frozen=True, eq=False)
class SphereBox(_BoxAndRound):
    """A box of body ``a`` (None: a box of the ground, placed in world coordinates) and a sphere of body ``b``.

    The box has ``half_extents`` (three value specs), its centre at the point ``box_centre`` of a's frame and
    its edges along a's axes turned by the unit quaternion ``box_orientation`` (numbers, w first); the sphere
    has ``radius`` and its centre at the point ``centre_b`` of b's frame. One contact point: the box's point
    closest to the sphere's centre (:func:`jaxcontact.spatial.geometry.sphere_box_gap`), the normal from the
    box to the sphere.
    """

    def frames(self, q, p):
        """(gaps, points, normals, a, b): the point on the box, the normal from the box to the sphere."""
        where = f"contact {self.name!r}"
        centre, R, half = self._placed_box(q, p)
        xb, Rb = pose(q, self.b)
        sphere = xb + Rb @ vector_value(self.centre_b, p, q.dtype, f"{where} centre_b")
        gap, point, n = sphere_box_gap(centre, R, half, sphere, _value(self.radius, f"{where} radius")(p))
        return gap[None], point[None], n[None], _side(self.a), self.b


@dataclasses.dataclass(frozen=True, eq=False)
class BoxBox(Contact):
    """Two boxes, of body ``a`` (None: a box of the ground, placed in world coordinates) and of body ``b``: 25
    contact points, each box's vertices against the other box (:func:`jaxcontact.spatial.geometry.box_box_gaps`),
    then one edge–edge contact per pair of edge directions (:func:`~jaxcontact.spatial.geometry.box_box_edge_gaps`).

    Box a has ``half_extents_a`` (three value specs), its centre at the point ``centre_a`` of a's frame and its
    edges along a's axes turned by the unit quaternion ``orientation_a`` (numbers, w first); box b the same
    with ``_b``.
    """

    a: Body = None
    half_extents_a: tuple = ()
    centre_a: tuple = (0.0, 0.0, 0.0)
    orientation_a: tuple = (1.0, 0.0, 0.0, 0.0)
    b: Body = None
    half_extents_b: tuple = ()
    centre_b: tuple = (0.0, 0.0, 0.0)
    orientation_b: tuple = (1.0, 0.0, 0.0, 0.0)

    size = 25

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        halves = {
            f"half_extents_{side}[{i}]": (h, POSITIVE)
            for side in "ab"
            for i, h in enumerate(getattr(self, f"half_extents_{side}"))
        }
        return {**super().physical(), **halves}

    def vectors(self) -> dict:
        """The boxes' centres (points of the bodies)."""
        return {"centre_a": (self.centre_a, False), "centre_b": (self.centre_b, False)}

    def check(self, p) -> None:
        """Three half extents and a unit quaternion per box, and the centres."""
        for side in "ab":
            _check_box(
                f"contact {self.name!r}",
                f"half_extents_{side}",
                getattr(self, f"half_extents_{side}"),
                f"orientation_{side}",
                getattr(self, f"orientation_{side}"),
            )
        super().check(p)

    def _box(self, q, p, side):
        body = _side(self.a) if side == "a" else self.b
        fields = (getattr(self, f"{f}_{side}") for f in ("centre", "orientation", "half_extents"))
        return _box(q, p, body, *fields, f"contact {self.name!r}")

    def frames(self, q, p):
        """(gaps (25,), points, normals from a to b, a, b): b's vertices on box a, a's on box b, then the edges."""
        boxes = (*self._box(q, p, "a"), *self._box(q, p, "b"))
        parts = (box_box_gaps(*boxes), box_box_edge_gaps(*boxes))
        gaps, points, normals = (jnp.concatenate(arrays) for arrays in zip(*parts))
        return gaps, points, normals, _side(self.a), self.b


@dataclasses.dataclass(frozen=True, eq=False)
class BoxPlane(Contact):
    """A box with ``half_extents`` (three value specs) on the ground plane: 8 vertex contacts.

    The box is centred at the body-frame point ``centre`` with its edges along the body axes turned by the
    unit quaternion ``orientation`` (numbers, w first: the box's frame in the body's); by default it is
    centred on the centre of mass with its edges along the principal axes.
    """

    body: Body = None
    half_extents: tuple = ()
    plane: Plane = Plane()
    centre: tuple = (0.0, 0.0, 0.0)
    orientation: tuple = (1.0, 0.0, 0.0, 0.0)

    size = 8

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {**super().physical(), **{f"half_extents[{i}]": (h, POSITIVE) for i, h in enumerate(self.half_extents)}}

    def vectors(self) -> dict:
        """The plane's normal and the box's centre."""
        return {"plane normal": (self.plane.normal, True), "centre": (self.centre, False)}

    def check(self, p) -> None:
        """Three half extents, a unit quaternion, and the plane's normal and the centre."""
        _check_box(f"contact {self.name!r}", "half_extents", self.half_extents, "orientation", self.orientation)
        super().check(p)

    def frames(self, q, p):
        """(gaps (8,), vertices, normals, ground, body)."""
        where = f"contact {self.name!r}"
        n, d = self.plane.resolve(p, where)
        x, R, half = _box(q, p, self.body, self.centre, self.orientation, self.half_extents, where)
        gaps, vertices = box_plane_gaps(x, R, half, n, d)
        return gaps, vertices, jnp.broadcast_to(n, vertices.shape), _ground(), self.body


@dataclasses.dataclass(frozen=True, eq=False)
class CapsulePlane(Contact):
    """A capsule of ``body`` on the ground plane: two contact points, its end spheres.

    The capsule is the set of points within ``radius`` of the segment ``centre`` ± ``half_length`` ·
    â (``centre`` and ``axis`` in the body frame, â = axis/‖axis‖; by default the segment lies on
    the body's z axis, centred on the centre of mass). With the segment's world centre c and
    half-vector h = half_length R â, the gaps of the end spheres are

        g_∓ = n·(c ∓ h) − d − radius          (plane n·x = d),

    and the contact points the spheres' lowest points c ∓ h − radius n. A capsule's lowest point is
    always on an end sphere (the height is linear along the segment), and a capsule lying flat
    touches along the line between these two points, which carry any load distribution along it.
    """

    body: Body = None
    radius: Any = None
    half_length: Any = None
    axis: tuple = (0.0, 0.0, 1.0)
    centre: tuple = (0.0, 0.0, 0.0)
    plane: Plane = Plane()

    size = 2

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {**super().physical(), "radius": (self.radius, POSITIVE), "half_length": (self.half_length, POSITIVE)}

    def vectors(self) -> dict:
        """The plane's normal and the capsule's axis (directions), its centre (a point)."""
        return {"plane normal": (self.plane.normal, True), "axis": (self.axis, True), "centre": (self.centre, False)}

    def frames(self, q, p):
        """(gaps (2,), points, normals, ground, body): the end −h first."""
        n, d = self.plane.resolve(p, f"contact {self.name!r}")
        c, h = _segment(
            q, p, self.body, self.centre, self.axis, self._scalar("half_length", p), f"contact {self.name!r}"
        )
        gaps, points = capsule_plane_gaps(c, h, self._scalar("radius", p), n, d)
        return gaps, points, jnp.broadcast_to(n, points.shape), _ground(), self.body


@dataclasses.dataclass(frozen=True, eq=False)
class CapsuleBox(_BoxAndRound):
    """A box of body ``a`` (None: a box of the ground, placed in world coordinates) and a capsule of body ``b``:
    14 contact points (:func:`jaxcontact.spatial.geometry.capsule_box_gaps`), the normals from the box to the
    capsule and the points on the box.

    The box is placed as :class:`SphereBox`'s (``half_extents``, ``box_centre``, ``box_orientation`` in a's
    frame); the capsule is the set of points within ``radius`` of the segment ``centre_b`` ± ``half_length`` ·
    â (b's frame, â = ``axis_b``/‖``axis_b``‖), world centre c and half-vector h = half_length R_b â. The
    contacts are the two end spheres c ∓ h against the box (the box's closest point, as a sphere's), then the
    segment against each of the box's 12 edges e ± k:

        g_∓ = dist(c ∓ h, box) − radius,      g_e = min over the segment and the edge of ‖x − y‖ − radius.

    While the segment stays outside the box, the smallest of these is the capsule's gap exactly: the
    segment's closest pair to a box is at an end of the segment or on an edge of the box, or along a face
    the segment is parallel to, where an end or an edge attains it too. A capsule lying on a face rests on
    its end spheres, or on the face's edges where it overhangs them; across an edge it touches at the edge's
    closest point. Missed: a segment passing through a face between edges with both ends outside (a capsule
    driven deeper than its radius into a face); the end spheres see it again once an end is inside the box.
    """

    half_length: Any = None
    axis_b: tuple = (0.0, 0.0, 1.0)

    size = 14

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {**super().physical(), "half_length": (self.half_length, POSITIVE)}

    def vectors(self) -> dict:
        """The box's centre (a point of a), the capsule's axis (a direction) and centre (a point of b)."""
        return {**super().vectors(), "axis_b": (self.axis_b, True)}

    def frames(self, q, p):
        """(gaps (14,), points on the box, normals from the box to the capsule, a, b): the end spheres (−h
        first), then the box's edges along its x, y and z axes."""
        where = f"contact {self.name!r}"
        box = self._placed_box(q, p)
        c, h = _segment(q, p, self.b, self.centre_b, self.axis_b, self._scalar("half_length", p), where)
        gaps, points, normals = capsule_box_gaps(*box, c, h, self._scalar("radius", p))
        return gaps, points, normals, _side(self.a), self.b


def _hull(points):
    """Indices (in input order) of the extreme points of ``points`` (k, 3): the vertices of their convex hull,
    taken in the affine span of the points (a flat set: its polygon's corners; a collinear one: its two ends;
    coincident points: the first)."""
    centred = points - points.mean(axis=0)
    _, sv, vt = np.linalg.svd(centred, full_matrices=False)
    rank = int(np.sum(sv > 1e-12 * max(1.0, float(np.abs(points).max()))))
    if rank == 0:
        return np.asarray([0])
    coords = centred @ vt[:rank].T
    if rank == 1:
        return np.unique([np.argmin(coords[:, 0]), np.argmax(coords[:, 0])])
    from scipy.spatial import ConvexHull  # here: only a mesh needs Qhull, and scipy.spatial is slow to import

    return np.sort(ConvexHull(coords).vertices)


@dataclasses.dataclass(frozen=True, eq=False)
class MeshPlane(Contact):
    """A convex mesh of ``body`` on the ground plane: one contact point per vertex of its convex hull.

    ``vertices`` (numbers, k × 3, k ≥ 1) are points of the mesh in the body frame, scaled by the uniform
    ``scale`` (a value spec, 1 by default) about the body's origin (its centre of mass): with the body's
    pose (x, R) the vertex v_i is at x + scale R v_i, and its gap is

        g_i = n·(x + scale R v_i) − d          (plane n·x = d).

    A convex body's lowest point is always one of its hull's vertices (the height is linear, so its
    minimum over a polytope is at a vertex), and a face or an edge lying on the plane touches at its
    vertices, which carry any load distribution over it. With ``hull`` (the default) the vertices are
    reduced once, at construction, to those of their convex hull (scipy's Qhull, in input order; a flat
    set to its polygon's corners): a mesh's full vertex list can be given. Without it every vertex is a
    contact: any set works — a vertex inside the hull is never below the hull's lowest vertex, so it is
    harmless, but it costs a contact row. A non-convex mesh is its hull here. :class:`BoxPlane` is the
    case of a box's 8 vertices.
    """

    body: Body = None
    vertices: Any = ()
    scale: Any = 1.0
    plane: Plane = Plane()
    hull: bool = True

    def __post_init__(self):
        where = f"contact {self.name!r} vertices"
        try:
            v = np.asarray(self.vertices, float)
        except (TypeError, ValueError):
            raise ValueError(f"{where} = {self.vertices!r} must be a (k, 3) array of numbers") from None
        if v.ndim != 2 or v.shape[1] != 3 or v.shape[0] < 1:
            raise ValueError(f"{where} of shape {v.shape} breaks the rule: a (k, 3) array with k >= 1 vertices")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{where} = {v.tolist()} breaks the rule: finite")
        if not isinstance(self.hull, bool):
            raise ValueError(f"contact {self.name!r} hull = {self.hull!r} must be True or False")
        points = v[_hull(v)] if self.hull else v
        points.setflags(write=False)
        object.__setattr__(self, "_points", points)

    @property
    def size(self) -> int:
        """Contact points: the hull's vertices (all the vertices without ``hull``)."""
        return len(self._points)

    @property
    def points(self) -> np.ndarray:
        """The contact vertices (size, 3) in the body frame, before ``scale``."""
        return self._points

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {**super().physical(), "scale": (self.scale, POSITIVE)}

    def vectors(self) -> dict:
        """The plane's normal."""
        return {"plane normal": (self.plane.normal, True)}

    def frames(self, q, p):
        """(gaps (size,), vertices, normals, ground, body), the vertices in :attr:`points`' order."""
        n, d = self.plane.resolve(p, f"contact {self.name!r}")
        x, R = pose(q, self.body)
        vertices = self._scalar("scale", p) * jnp.asarray(self._points, q.dtype)
        gaps, world = vertex_plane_gaps(x, R, vertices, n, d)
        return gaps, world, jnp.broadcast_to(n, world.shape), _ground(), self.body


@dataclasses.dataclass(frozen=True, eq=False)
class CylinderPlane(Contact):
    """A solid cylinder of ``body`` on the ground plane: per end circle its lowest point and ``rim`` points
    around it (:func:`jaxcontact.spatial.geometry.cylinder_plane_gaps`), 2 (1 + rim) contact points.

    The cylinder has radius ``radius`` about the segment ``centre`` ± ``half_length`` · â (body frame,
    â = axis/‖axis‖; by default the body's z axis through the centre of mass). On its side it touches along
    a line whose ends are the two lowest points (it rolls); on an edge, at one lowest point; standing on a
    face, at the rim points of that face (``rim`` ≥ 3, static: 6 by default).
    """

    body: Body = None
    radius: Any = None
    half_length: Any = None
    axis: tuple = (0.0, 0.0, 1.0)
    centre: tuple = (0.0, 0.0, 0.0)
    plane: Plane = Plane()
    rim: int = 6

    @property
    def size(self) -> int:
        """Contact points: the lowest point and the rim points of each end circle."""
        return 2 * (1 + self.rim)

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {**super().physical(), "radius": (self.radius, POSITIVE), "half_length": (self.half_length, POSITIVE)}

    def vectors(self) -> dict:
        """The plane's normal and the cylinder's axis (directions), its centre (a point)."""
        return {"plane normal": (self.plane.normal, True), "axis": (self.axis, True), "centre": (self.centre, False)}

    def check(self, p) -> None:
        """At least 3 rim points per end circle, and the vectors."""
        if isinstance(self.rim, bool) or not isinstance(self.rim, int) or self.rim < 3:
            raise ValueError(f"contact {self.name!r} rim = {self.rim!r} must be an int >= 3 (a face stands on 3)")
        super().check(p)

    def frames(self, q, p):
        """(gaps, points, normals, ground, body): the end −h first, each end's lowest point then its rim."""
        where = f"contact {self.name!r}"
        n, d = self.plane.resolve(p, where)
        c, h = _segment(
            q, p, self.body, self.centre, self.axis, _value(self.half_length, f"{where} half_length")(p), where
        )
        _, R = pose(q, self.body)
        axis = vector_value(self.axis, p, q.dtype, f"{where} axis")
        axis = axis / jnp.sqrt(axis @ axis)
        reference = R @ tangent_basis(axis)[0]
        radius = _value(self.radius, f"{where} radius")(p)
        gaps, points = cylinder_plane_gaps(c, h, radius, reference, n, d, self.rim)
        return gaps, points, jnp.broadcast_to(n, points.shape), _ground(), self.body


@dataclasses.dataclass(frozen=True, eq=False)
class CapsuleCapsule(Contact):
    """Two capsules, on bodies ``a`` (None: a capsule fixed on the ground) and ``b``: one contact point.

    Capsule i is the set of points within ``radius_i`` of the segment ``centre_i`` ± ``half_length_i``
    · âᵢ in its body's frame (as :class:`CapsulePlane`). With x_a, x_b the closest points of the
    two segments (:func:`jaxcontact.spatial.geometry.segment_parameters`),

        g = ‖x_b − x_a‖ − radius_a − radius_b,      n = (x_b − x_a)/‖x_b − x_a‖  (from a to b),

    and the contact point x_a + radius_a n on a's surface. Parallel segments touch along a line;
    the contact point is then the middle of their overlap (or its end, where the distance is
    measurably smaller: the symmetric, stable choice; one point carries no moment about the line
    — two parallel capsules pressed together along their length can rock about it). Values and
    gradients stay finite at and near parallel segments.
    """

    a: Body = None
    b: Body = None
    radius_a: Any = None
    radius_b: Any = None
    half_length_a: Any = None
    half_length_b: Any = None
    axis_a: tuple = (0.0, 0.0, 1.0)
    axis_b: tuple = (0.0, 0.0, 1.0)
    centre_a: tuple = (0.0, 0.0, 0.0)
    centre_b: tuple = (0.0, 0.0, 0.0)

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {
            **super().physical(),
            **{f: (getattr(self, f), POSITIVE) for f in ("radius_a", "radius_b", "half_length_a", "half_length_b")},
        }

    def vectors(self) -> dict:
        """The axes (directions) and centres (points)."""
        return {
            "axis_a": (self.axis_a, True),
            "axis_b": (self.axis_b, True),
            "centre_a": (self.centre_a, False),
            "centre_b": (self.centre_b, False),
        }

    def frames(self, q, p):
        """(gaps (1,), points, normals, a, b); the normal points from a to b."""
        where = f"contact {self.name!r}"
        ca, ha = _segment(q, p, _side(self.a), self.centre_a, self.axis_a, self._scalar("half_length_a", p), where)
        cb, hb = _segment(q, p, self.b, self.centre_b, self.axis_b, self._scalar("half_length_b", p), where)
        gap, point, n = capsule_capsule_gap(ca, ha, self._scalar("radius_a", p), cb, hb, self._scalar("radius_b", p))
        return gap[None], point[None], n[None], _side(self.a), self.b


@dataclasses.dataclass(frozen=True, eq=False)
class PinInHole(Contact):
    """A cylindrical pin of body ``b`` in a cylindrical hole of body ``a`` (None: the ground) with radial
    clearance: the spatial revolute clearance joint. Two contact points, one at each end of the pin.

    The hole is the cylinder of radius ``hole_radius`` r_h about the line through ``hole_point``
    along ``hole_axis`` (a's frame); the pin the cylinder of radius ``pin_radius`` r_p and length
    ``pin_length`` L about the segment ``pin_centre`` ± (L/2) ``pin_axis`` (b's frame). The clearance
    is c = r_h − r_p (:meth:`clearance`), and r_p < r_h is the rule (:meth:`check`). With e_∓ the
    ends of the pin's axis and ρ_∓ their radial offsets from the hole's axis,

        g_∓ = c − ‖ρ_∓‖,      n_∓ = −ρ_∓/‖ρ_∓‖,

    the normal from the hole's wall to the pin (the force on the pin pushes it back towards the
    axis; the contact lies on the outward radial ρ̂ at the pin's surface point e + r_p ρ̂, where
    the slip is measured) — the convention of every contact here and of the 2D builder's clearance
    joint (``ClearanceJoint``).

    The radial distance is convex along the pin's axis, so its largest value over the pin is at an
    end: the two end contacts are exact for the pin's axis. Neglected: the tilt of the end faces
    (a pin tilted by φ reaches r_p cos φ, not r_p, in the tilt's plane: the gap is short by
    r_p(1 − cos φ) ≈ r_p φ²/2, with φ ≤ 2c/L in the hole), axial contact (no shoulders or faces:
    the pin slides and turns freely along the axis, and the hole is infinitely long — its ends and
    edges are not modelled). On the hole's axis (a centred pin end) the gap is c with a zero, finite
    gradient.
    """

    a: Body = None
    b: Body = None
    hole_radius: Any = None
    pin_radius: Any = None
    pin_length: Any = None
    hole_axis: tuple = (0.0, 0.0, 1.0)
    hole_point: tuple = (0.0, 0.0, 0.0)
    pin_axis: tuple = (0.0, 0.0, 1.0)
    pin_centre: tuple = (0.0, 0.0, 0.0)

    size = 2

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {
            **super().physical(),
            **{f: (getattr(self, f), POSITIVE) for f in ("hole_radius", "pin_radius", "pin_length")},
        }

    def vectors(self) -> dict:
        """The axes (directions) and the hole's point and pin's centre (points)."""
        return {
            "hole_axis": (self.hole_axis, True),
            "pin_axis": (self.pin_axis, True),
            "hole_point": (self.hole_point, False),
            "pin_centre": (self.pin_centre, False),
        }

    def check(self, p) -> None:
        """The vectors, and the pin thinner than the hole: pin_radius < hole_radius (a positive clearance)."""
        super().check(p)
        rh = np.asarray(Value(self.hole_radius, f"contact {self.name!r} hole_radius").check(p))
        rp = np.asarray(Value(self.pin_radius, f"contact {self.name!r} pin_radius").check(p))
        if np.any(rp >= rh):
            raise ValueError(
                f"contact {self.name!r} pin_radius = {rp} >= hole_radius = {rh} breaks the rule "
                f"pin_radius < hole_radius (the clearance hole_radius − pin_radius must be positive)"
            )

    def clearance(self, p):
        """c = r_h − r_p."""
        return self._scalar("hole_radius", p) - self._scalar("pin_radius", p)

    def frames(self, q, p):
        """(gaps (2,), points, normals, a, b): the pin's end −L/2 first."""
        where = f"contact {self.name!r}"
        a = _side(self.a)
        xa, Ra = pose(q, a)
        h = xa + Ra @ vector_value(self.hole_point, p, q.dtype, f"{where} hole_point")
        ax = vector_value(self.hole_axis, p, q.dtype, f"{where} hole_axis")
        ax = Ra @ (ax / jnp.sqrt(ax @ ax))
        c, half = _segment(q, p, self.b, self.pin_centre, self.pin_axis, 0.5 * self._scalar("pin_length", p), where)
        rp = self._scalar("pin_radius", p)
        gaps, points, normals = pin_in_hole_gaps(
            h, ax, jnp.stack([c - half, c + half]), rp, self._scalar("hole_radius", p) - rp
        )
        return gaps, points, normals, a, self.b


_GROUND = Body("ground", None)


def _ground() -> Body:
    return _GROUND


def _side(body) -> Body:
    """A contact's side a: the body, or the ground for None."""
    return _GROUND if body is None else body


@dataclasses.dataclass(frozen=True, eq=False)
class SphereInSphere(Contact):
    """A spherical clearance joint: a ball of ``ball_radius`` centred at ``ball_point`` of body ``b`` inside a
    socket of ``socket_radius`` centred at ``socket_point`` of body ``a`` (None: the ground), points in the
    body frames. The clearance c = r_s − r_b must be > 0 (:func:`jaxcontact.spatial.geometry.sphere_in_sphere_gap`)."""

    a: Body = None
    socket_point: tuple = (0.0, 0.0, 0.0)
    socket_radius: Any = None
    b: Body = None
    ball_point: tuple = (0.0, 0.0, 0.0)
    ball_radius: Any = None

    def vectors(self) -> dict:
        """The socket's and the ball's centres (points)."""
        return {"socket_point": (self.socket_point, False), "ball_point": (self.ball_point, False)}

    def _radii(self, p):
        rs = _value(self.socket_radius, f"contact {self.name!r} socket_radius")(p)
        rb = _value(self.ball_radius, f"contact {self.name!r} ball_radius")(p)
        return rs, rb

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {
            **super().physical(),
            "socket_radius": (self.socket_radius, POSITIVE),
            "ball_radius": (self.ball_radius, POSITIVE),
        }

    def check(self, p) -> None:
        """The centres, and the ball smaller than its socket: a positive clearance r_s − r_b."""
        super().check(p)
        rs, rb = (
            np.asarray(Value(getattr(self, f), f"contact {self.name!r} {f}").check(p))
            for f in ("socket_radius", "ball_radius")
        )
        if np.any(rs <= rb):
            raise ValueError(
                f"contact {self.name!r} clearance = socket_radius − ball_radius = {rs - rb} breaks the "
                f"rule > 0 (the ball must fit in its socket)"
            )

    def frames(self, q, p):
        """(gaps, points, normals, a, b): the point on the ball's surface, the normal −ê from the socket's side."""
        a = _side(self.a)
        xa, Ra = pose(q, a)
        xb, Rb = pose(q, self.b)
        xs = xa + Ra @ vector_value(self.socket_point, p, q.dtype, f"contact {self.name!r} socket_point")
        xc = xb + Rb @ vector_value(self.ball_point, p, q.dtype, f"contact {self.name!r} ball_point")
        rs, rb = self._radii(p)
        gap, point, n = sphere_in_sphere_gap(xs, jnp.asarray(rs, q.dtype), xc, jnp.asarray(rb, q.dtype))
        return gap[None], point[None], n[None], a, self.b
