"""Unilateral contact geometry of a planar mechanism: gaps, normals, tangents, slip.

Every contact is between a *first* body A and a *second* body B (either may
be the ground). Sign conventions, the same for all geometries:

* the gap g_N ≥ 0 is a distance (open when positive);
* the unit normal n points from B towards A, so the normal relative velocity
  γ_N = ġ_N = n · (v_A − v_B) at the contact points (``kinematics`` gets it,
  with W_N, by differentiating the gap; it is never written here);
* the tangent is t = (n_y, −n_x), n turned clockwise by 90°: for the ground
  (n = +y) t = +x;
* the slip velocity γ_T = t · (v_A(P_A) − v_B(P_B)) is the relative velocity of
  the two *material* contact points, rotation included. For a disk of radius
  r on the ground, γ_T = ẋ + r θ̇ (θ counter-clockwise), zero when it rolls.

Directions use a safe normalisation (the double-where trick) so gaps and
their gradients stay finite at degenerate points, e.g. a clearance joint with
the pin exactly centred (zero eccentricity), where the normal is undefined:
there the direction defaults to +x and the gap's gradient is zero.
"""

from __future__ import annotations

from jaxcontact.planar.bodies import (
    Body,
    Point,
    dot,
    material_velocity,
    mul,
    safe_norm,
    safe_unit,
    sub,
    unit,
    world_direction,
)
from jaxcontact.values import Value


class Line:
    """A straight line fixed in a body (world line for the ground): a point and a normal.

    The normal (body frame, normalised at run time) points to the free side.
    """

    def __init__(self, point: Point, normal: tuple[Value, Value]):
        self.point, self.normal = point, normal

    @property
    def body(self) -> Body:
        return self.point.body

    def world(self, q, p):
        """Origin (ox, oy) and unit normal (nx, ny) in world coordinates."""
        ox, oy = self.point.world(q, p)
        # Normalise in the body frame (rotation keeps the length): constants fold in Python.
        nx, ny = unit(self.normal[0](p), self.normal[1](p), (0.0, 1.0))
        nx, ny = world_direction(q, self.body, (nx, ny))
        return ox, oy, nx, ny

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return self.point.values() + tuple(self.normal)

    def __repr__(self):
        return f"Line(through {self.point!r}, normal ({self.normal[0]!r}, {self.normal[1]!r}))"


class Contact:
    """Common part: name, contact laws (ε_N, ε_T, μ, μ0 as Values or None = structurally zero).

    A rigid contact has a restitution; a *compliant* one (``compliant`` a dict of
    Values: stiffness, exponent, damping, slip_width, slip_width0) has a force law
    instead (:class:`jaxcontact.system.CompliantLaws`) and restitution None.
    The builder (``Mechanism``) registers the validity rules of the laws and radii.
    """

    def __init__(
        self,
        name: str,
        restitution: Value | None,
        tangential_restitution: Value | None,
        friction: Value | None,
        static_friction: Value | None = None,
        compliant: dict | None = None,
    ):
        self.name = name
        self.restitution = restitution
        self.tangential_restitution = tangential_restitution
        self.friction = friction
        self.static_friction = static_friction
        self.compliant = compliant

    def _laws_repr(self):
        if self.compliant is None:
            s = f"ε_N={self.restitution!r}"
        else:
            s = "compliant " + ", ".join(f"{k}={v!r}" for k, v in self.compliant.items())
        if self.tangential_restitution is not None:
            s += f", ε_T={self.tangential_restitution!r}"
        if self.friction is not None:
            s += f", μ={self.friction!r}"
        if self.static_friction is not None:
            s += f", μ0={self.static_friction!r}"
        return s


def _slip(q, u, a: Body, pa, b: Body, pb, nx, ny):
    """t · (v_A(P_A) − v_B(P_B)) with t = (n_y, −n_x)."""
    vax, vay = material_velocity(q, u, a, *pa)
    vbx, vby = material_velocity(q, u, b, *pb)
    return sub(mul(ny, sub(vax, vbx)), mul(nx, sub(vay, vby)))


class PointLine(Contact):
    """A body point (A) against a line (B): g_N = n · (P − O)."""

    def __init__(self, name, point: Point, line: Line, **laws):
        super().__init__(name, **laws)
        self.point, self.line = point, line

    def _geometry(self, q, p):
        px, py = self.point.world(q, p)
        ox, oy, nx, ny = self.line.world(q, p)
        return px, py, nx, ny, dot(nx, ny, sub(px, ox), sub(py, oy))

    def gap(self, q, t, p):
        """The signed gap g_N(q, t): positive when open, negative when the bodies overlap."""
        return self._geometry(q, p)[4]

    def slip(self, q, u, t, p):
        """The slip velocity γ_T of the material contact points along the tangent."""
        px, py, nx, ny, _ = self._geometry(q, p)
        return _slip(q, u, self.point.body, (px, py), self.line.body, (px, py), nx, ny)

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return self.point.values() + self.line.values()

    def __repr__(self):
        return f"PointLine({self.name!r}: {self.point!r} vs {self.line!r}, {self._laws_repr()})"


class CircleLine(Contact):
    """A circle (disk, rounded end) of radius r on body A against a line (B): g_N = n · (C − O) − r."""

    def __init__(self, name, centre: Point, radius: Value, line: Line, **laws):
        super().__init__(name, **laws)
        self.centre, self.radius, self.line = centre, radius, line

    def _geometry(self, q, p):
        cx, cy = self.centre.world(q, p)
        ox, oy, nx, ny = self.line.world(q, p)
        r = self.radius(p)
        return sub(cx, mul(r, nx)), sub(cy, mul(r, ny)), nx, ny, sub(dot(nx, ny, sub(cx, ox), sub(cy, oy)), r)

    def gap(self, q, t, p):
        """The signed gap g_N(q, t): positive when open, negative when the bodies overlap."""
        return self._geometry(q, p)[4]

    def slip(self, q, u, t, p):
        """The slip velocity γ_T of the material contact points along the tangent."""
        px, py, nx, ny, _ = self._geometry(q, p)
        return _slip(q, u, self.centre.body, (px, py), self.line.body, (px, py), nx, ny)

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return self.centre.values() + (self.radius,) + self.line.values()

    def __repr__(self):
        circle = f"circle r={self.radius!r} at {self.centre!r}"
        return f"CircleLine({self.name!r}: {circle} vs {self.line!r}, {self._laws_repr()})"


class CircleCircle(Contact):
    """Two circles, on bodies A and B: g_N = ‖C_A − C_B‖ − r_A − r_B, n from C_B to C_A."""

    def __init__(self, name, centre_a: Point, radius_a: Value, centre_b: Point, radius_b: Value, **laws):
        super().__init__(name, **laws)
        self.centre_a, self.radius_a, self.centre_b, self.radius_b = centre_a, radius_a, centre_b, radius_b

    def _geometry(self, q, p):
        ax, ay = self.centre_a.world(q, p)
        bx, by = self.centre_b.world(q, p)
        d = safe_norm(ax - bx, ay - by)
        nx, ny = safe_unit(ax - bx, ay - by)
        ra, rb = self.radius_a(p), self.radius_b(p)
        return (ax - ra * nx, ay - ra * ny), (bx + rb * nx, by + rb * ny), nx, ny, d - ra - rb

    def gap(self, q, t, p):
        """The signed gap g_N(q, t): positive when open, negative when the bodies overlap."""
        return self._geometry(q, p)[4]

    def slip(self, q, u, t, p):
        """The slip velocity γ_T of the material contact points along the tangent."""
        pa, pb, nx, ny, _ = self._geometry(q, p)
        return _slip(q, u, self.centre_a.body, pa, self.centre_b.body, pb, nx, ny)

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return self.centre_a.values() + (self.radius_a,) + self.centre_b.values() + (self.radius_b,)

    def __repr__(self):
        return (
            f"CircleCircle({self.name!r}: r={self.radius_a!r} at {self.centre_a!r} vs "
            f"r={self.radius_b!r} at {self.centre_b!r}, {self._laws_repr()})"
        )


class ClearanceJoint(Contact):
    """Revolute joint with radial clearance: a pin (radius r_p, body A) in a hole r_h = r_p + c (body B).

    Eccentricity e = P_pin − P_hole; g_N = c − ‖e‖ ≥ 0; n = −e/‖e‖ (moving the pin
    back to the centre opens the gap); the contact points are the pin surface
    P_pin + r_p ê and the hole wall P_hole + r_h ê. ‖e‖ and ê use the safe
    norm, so at e = 0 the gap is c with a zero (finite) gradient.
    """

    def __init__(self, name, pin: Point, hole: Point, pin_radius: Value, clearance: Value, **laws):
        super().__init__(name, **laws)
        self.pin, self.hole, self.pin_radius, self.clearance = pin, hole, pin_radius, clearance

    def _geometry(self, q, p):
        px, py = self.pin.world(q, p)
        hx, hy = self.hole.world(q, p)
        ecc = safe_norm(px - hx, py - hy)
        ex, ey = safe_unit(px - hx, py - hy)
        rp, c = self.pin_radius(p), self.clearance(p)
        rh = rp + c
        return (px + rp * ex, py + rp * ey), (hx + rh * ex, hy + rh * ey), -ex, -ey, c - ecc

    def gap(self, q, t, p):
        """The signed gap c − |p_hole − p_pin|: negative when the pin penetrates the bearing."""
        return self._geometry(q, p)[4]

    def eccentricity(self, q, p):
        """(e_x, e_y) = P_pin − P_hole, for plots of the journal's path in the hole."""
        px, py = self.pin.world(q, p)
        hx, hy = self.hole.world(q, p)
        return px - hx, py - hy

    def slip(self, q, u, t, p):
        """The slip velocity γ_T of the material contact points along the tangent."""
        pa, pb, nx, ny, _ = self._geometry(q, p)
        return _slip(q, u, self.pin.body, pa, self.hole.body, pb, nx, ny)

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return self.pin.values() + self.hole.values() + (self.pin_radius, self.clearance)

    def __repr__(self):
        return (
            f"ClearanceJoint({self.name!r}: pin r={self.pin_radius!r} at {self.pin!r} in hole at "
            f"{self.hole!r}, clearance {self.clearance!r}, {self._laws_repr()})"
        )
