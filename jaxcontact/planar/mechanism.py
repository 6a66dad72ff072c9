"""The planar mechanism builder: bodies, joints, loads, contacts → a LagrangianSystem.

Example (a pendulum of length ``l`` hinged at the origin, hitting the ground)::

    mech = Mechanism("pendulum")
    bar = mech.body("bar", mass="m", inertia="m*l**2/12")
    mech.revolute(bar, ("-l/2", 0.0))                 # hinge: bar's end on the ground at (0, 0)
    mech.gravity("g")
    floor = mech.line(point=(0.0, "-depth"), normal=(0.0, 1.0))
    mech.point_contact("tip", bar, ("l/2", 0.0), floor, restitution="e", friction="mu")
    system, params = mech.build({"m": 1.0, "l": 0.5, "g": 9.81, "depth": 0.3, "e": 0.5, "mu": 0.2})

Structure (which bodies, joints, contacts) is static Python; every value is a
spec resolved against ``params`` inside the jitted functions (see
:mod:`jaxcontact.values`), so one compiled program serves any batch of
parameter variations. Coordinates: body i owns q[3i:3i+3] = (x, y, θ) of its
centre of mass, in the order the bodies were added. Contact sign conventions:
:mod:`jaxcontact.planar.contacts`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np

from jaxcontact.contact_laws import FILM_MODELS
from jaxcontact.initial import check_state
from jaxcontact.params import ANY, NONNEGATIVE, POSITIVE, ParamTable, Rule, law_range_rule
from jaxcontact.planar.bodies import COORDINATES, Body, Frames, Point, material_velocity, world_point
from jaxcontact.planar.contacts import CircleCircle, CircleLine, ClearanceJoint, Contact, Line, PointLine
from jaxcontact.planar.forces import (
    GeneralizedForce,
    Gravity,
    LubricatedJournal,
    PointForce,
    SpringDamper,
    Torque,
    Wrenches,
    film_forces,
)
from jaxcontact.planar.joints import Driver, Prismatic, Revolute
from jaxcontact.system import CompliantLaws, ContactLaws, LagrangianSystem
from jaxcontact.values import Value, is_number

BodyRef = Body | str | None
OPEN_UNIT_INTERVAL = Rule("in (0, 1)", lambda v: (v > 0) & (v < 1))


def _joint_columns(joint) -> tuple[int, ...]:
    """Coordinates of the (non-ground) bodies a joint connects: its rows depend on nothing else."""
    pair = (joint.body, joint.relative_to) if isinstance(joint, Driver) else (joint.a.body, joint.b.body)
    return tuple(sorted({3 * b.index + k for b in pair if not b.is_ground for k in range(3)}))


def _atomic(method):
    """A builder call that raises leaves the mechanism as it was (names, literals, rules)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        saved = (set(self._names), dict(self.literals), list(self._rules))
        try:
            return method(self, *args, **kwargs)
        except Exception:
            self._names, self.literals, self._rules = saved
            raise

    return wrapper


class Mechanism:
    """A planar rigid multibody system under construction; ``build`` makes it a LagrangianSystem."""

    def __init__(self, name: str = "mechanism"):
        self.name = name
        self.ground = Body("ground", None, owner=self)
        self.bodies: list[Body] = []
        self.joints: list = []
        self.loads: list = []
        self.contacts: list[Contact] = []
        self.literals: dict[str, float] = {}  # parameters registered from numeric literals
        self._names: set[str] = {"ground"}
        self._rules: list[tuple[str, str, Value, Rule]] = []  # (element, field, value, rule)

    # ----------------------------------------------------------------- helpers
    def _new_name(self, name: str | None, kind: str) -> str:
        if name is None:
            i = 1
            while f"{kind}{i}" in self._names:
                i += 1
            name = f"{kind}{i}"
        if not isinstance(name, str) or not name:
            raise ValueError(f"{kind} name must be a non-empty string; got {name!r}")
        if name in self._names:
            raise ValueError(f"{kind} name {name!r} is already used in mechanism {self.name!r}")
        self._names.add(name)
        return name

    def _body(self, ref: BodyRef, where: str) -> Body:
        """A Body of this mechanism from a Body, a body name, or None (the ground)."""
        if ref is None or ref == "ground":
            return self.ground
        if isinstance(ref, str):
            for b in self.bodies:
                if b.name == ref:
                    return b
            raise ValueError(f"{where}: unknown body {ref!r}; bodies: {[b.name for b in self.bodies]} (or 'ground')")
        if isinstance(ref, Body):
            if ref.owner is not self:
                raise ValueError(f"{where}: body {ref.name!r} belongs to another mechanism")
            return ref
        raise ValueError(f"{where}: {ref!r} is not a body (give a Body, a body name, or None for the ground)")

    def _scalar(self, spec, element: str, field: str, rule: Rule = ANY, time_ok: bool = False) -> Value:
        """A physical scalar: numeric literals become parameters named ``<element>_<field>``."""
        where = f"{element!r} {field}"
        if is_number(spec):
            pname = f"{element}_{field}"
            self.literals[pname] = float(spec)
            v = Value.parameter(pname, where)
        else:
            v = Value(spec, where, time_ok)
        self._rules.append((element, field, v, rule))
        return v

    def _point(self, body: Body, xy, where: str) -> Point:
        pt = Point(body, xy, where)
        for v in pt.values():
            self._rules.append((where, "coordinate", v, ANY))
        return pt

    def _laws(self, name, restitution, tangential_restitution, friction, static_friction=None, compliant=None) -> dict:
        """Contact law Values; ``compliant`` (a dict) makes the contact compliant instead of rigid."""
        if compliant is None and restitution is None:
            raise ValueError(f"contact {name!r}: a rigid contact needs a restitution (or give compliant=dict(...))")
        if compliant is not None and (restitution is not None or tangential_restitution is not None):
            raise ValueError(
                f"contact {name!r}: a compliant contact has no restitution (its damping sets the "
                "rebound: jaxcontact.contact_laws.restitution_damping)"
            )
        if static_friction is not None and friction is None:
            raise ValueError(f"contact {name!r}: static_friction needs a (dynamic) friction")
        return dict(
            restitution=None
            if restitution is None
            else self._scalar(restitution, name, "restitution", law_range_rule("restitution")),
            tangential_restitution=(
                None
                if tangential_restitution is None
                else self._scalar(
                    tangential_restitution, name, "tangential_restitution", law_range_rule("tangential_restitution")
                )
            ),
            friction=None if friction is None else self._scalar(friction, name, "friction", NONNEGATIVE),
            static_friction=(
                None if static_friction is None else self._scalar(static_friction, name, "static_friction", NONNEGATIVE)
            ),
            compliant=None if compliant is None else self._compliant(name, compliant),
        )

    def _compliant(self, name, spec: dict) -> dict:
        """Values of a compliant law: stiffness K (required), exponent n (1.5, Hertz), damping c (0),
        slip_width (1e-3 m/s: v_r or v1), slip_width0 (0: v0 of the linear friction model)."""
        if not isinstance(spec, dict):
            raise ValueError(f"contact {name!r}: compliant must be a dict of law values; got {spec!r}")
        fields = {
            "stiffness": NONNEGATIVE,
            "exponent": POSITIVE,
            "damping": NONNEGATIVE,
            "slip_width": POSITIVE,
            "slip_width0": NONNEGATIVE,
        }
        unknown = sorted(set(spec) - set(fields))
        if unknown or "stiffness" not in spec:
            raise ValueError(
                f"contact {name!r}: compliant needs 'stiffness' and takes {sorted(fields)}; got {sorted(spec)}"
            )
        values = {"exponent": 1.5, "damping": 0.0, "slip_width": 1e-3, "slip_width0": 0.0, **spec}
        return {f: self._scalar(values[f], name, f, rule) for f, rule in fields.items()}

    # ------------------------------------------------------------------ bodies
    @_atomic
    def body(self, name: str, mass, inertia) -> Body:
        """Add a rigid body with ``mass`` m > 0 and centroidal ``inertia`` J > 0 (value specs)."""
        name = self._new_name(name, "body")
        b = Body(
            name,
            len(self.bodies),
            self._scalar(mass, name, "mass", POSITIVE),
            self._scalar(inertia, name, "inertia", POSITIVE),
            owner=self,
        )
        self.bodies.append(b)
        return b

    # ------------------------------------------------------------------ joints
    @_atomic
    def revolute(
        self, body_a: BodyRef, point_a, body_b: BodyRef = None, point_b=(0.0, 0.0), name: str | None = None
    ) -> Revolute:
        """Pin ``point_a`` of body a to ``point_b`` of body b (body b None: a world point)."""
        name = self._new_name(name, "revolute")
        a = self._point(self._body(body_a, f"revolute {name!r}"), point_a, f"revolute {name!r} point a")
        b = self._point(self._body(body_b, f"revolute {name!r}"), point_b, f"revolute {name!r} point b")
        if a.body is b.body:
            raise ValueError(f"revolute {name!r}: both ends on body {a.body.name!r}")
        j = Revolute(name, a, b)
        self.joints.append(j)
        return j

    @_atomic
    def prismatic(
        self, body_a: BodyRef, point_a, body_b: BodyRef, point_b, axis_angle=0.0, angle=0.0, name: str | None = None
    ) -> Prismatic:
        """Body b slides along the axis through ``point_a`` of body a at ``axis_angle`` (a's frame).

        ``angle`` is the fixed relative angle θ_b − θ_a. Point and angle literals are constants.
        """
        name = self._new_name(name, "prismatic")
        a = self._point(self._body(body_a, f"prismatic {name!r}"), point_a, f"prismatic {name!r} point a")
        b = self._point(self._body(body_b, f"prismatic {name!r}"), point_b, f"prismatic {name!r} point b")
        if a.body is b.body:
            raise ValueError(f"prismatic {name!r}: both sides on body {a.body.name!r}")
        j = Prismatic(
            name, a, b, Value(axis_angle, f"prismatic {name!r} axis_angle"), Value(angle, f"prismatic {name!r} angle")
        )
        self.joints.append(j)
        return j

    @_atomic
    def driver(
        self, body: BodyRef, coordinate: str, value, relative_to: BodyRef = None, name: str | None = None
    ) -> Driver:
        """Prescribe c(body) − c(relative_to) = value(t, p), c ∈ {"x", "y", "theta"}.

        ``value`` may use time: ``"omega*t"`` or ``lambda t, p: ...``; a constant fixes the coordinate.
        """
        name = self._new_name(name, "driver")
        b = self._body(body, f"driver {name!r}")
        rel = self._body(relative_to, f"driver {name!r}")
        if b.is_ground or b is rel:
            raise ValueError(f"driver {name!r}: needs a body other than {rel.name!r}")
        if coordinate not in COORDINATES:
            raise ValueError(f"driver {name!r}: coordinate {coordinate!r} must be one of {COORDINATES}")
        j = Driver(name, b, coordinate, self._scalar(value, name, "value", ANY, time_ok=True), rel)
        self.joints.append(j)
        return j

    # ------------------------------------------------------------------- loads
    @_atomic
    def gravity(self, g, direction=(0.0, -1.0), name: str = "gravity") -> Gravity:
        """Uniform gravity of magnitude ``g`` along ``direction`` (world frame; default −y)."""
        name = self._new_name(name, "gravity")
        load = Gravity(
            name,
            self._scalar(g, name, "g"),
            (Value(direction[0], f"{name} direction x"), Value(direction[1], f"{name} direction y")),
        )
        self.loads.append(load)
        return load

    @_atomic
    def force(self, body: BodyRef, force, at=(0.0, 0.0), name: str | None = None) -> PointForce:
        """A world-frame force (F_x, F_y) at body point ``at``; may vary in time ("F0*sin(w*t)")."""
        name = self._new_name(name, "force")
        pt = self._point(self._body(body, f"force {name!r}"), at, f"force {name!r} point")
        fx, fy = force
        load = PointForce(
            name, pt, self._scalar(fx, name, "fx", time_ok=True), self._scalar(fy, name, "fy", time_ok=True)
        )
        self.loads.append(load)
        return load

    @_atomic
    def torque(self, body: BodyRef, value, reaction: BodyRef = None, name: str | None = None) -> Torque:
        """A torque (counter-clockwise positive) on ``body``, −torque on ``reaction``; may vary in time."""
        name = self._new_name(name, "torque")
        b = self._body(body, f"torque {name!r}")
        load = Torque(
            name, b, self._scalar(value, name, "value", time_ok=True), self._body(reaction, f"torque {name!r}")
        )
        self.loads.append(load)
        return load

    @_atomic
    def spring_damper(
        self,
        body_a: BodyRef,
        point_a,
        body_b: BodyRef,
        point_b,
        stiffness,
        damping=0.0,
        rest_length=0.0,
        name: str | None = None,
    ) -> SpringDamper:
        """Linear spring (stiffness k ≥ 0, rest length L0 ≥ 0) and damper (c ≥ 0) between two points."""
        name = self._new_name(name, "spring")
        a = self._point(self._body(body_a, f"spring {name!r}"), point_a, f"spring {name!r} point a")
        b = self._point(self._body(body_b, f"spring {name!r}"), point_b, f"spring {name!r} point b")
        load = SpringDamper(
            name,
            a,
            b,
            self._scalar(stiffness, name, "stiffness", NONNEGATIVE),
            self._scalar(damping, name, "damping", NONNEGATIVE),
            self._scalar(rest_length, name, "rest_length", NONNEGATIVE),
        )
        self.loads.append(load)
        return load

    @_atomic
    def generalized_force(self, fn: Callable, name: str | None = None) -> GeneralizedForce:
        """Add ``fn(q, u, t, p) -> (n,)`` to the generalized forces (e.g. a compliant law)."""
        name = self._new_name(name, "generalized_force")
        if not callable(fn):
            raise ValueError(f"generalized force {name!r}: {fn!r} is not callable")
        load = GeneralizedForce(name, fn)
        self.loads.append(load)
        return load

    # ---------------------------------------------------------------- contacts
    @_atomic
    def line(self, point, normal, body: BodyRef = None) -> Line:
        """A line through ``point`` with ``normal`` toward the free side, fixed in ``body`` (None: ground)."""
        b = self._body(body, "line")
        pt = self._point(b, point, f"line on {b.name!r} point")
        n = (Value(normal[0], "line normal x"), Value(normal[1], "line normal y"))
        return Line(pt, n)

    def _add_contact(self, c: Contact) -> Contact:
        self.contacts.append(c)
        return c

    def _line(self, line, where) -> Line:
        if not isinstance(line, Line):
            raise ValueError(f"{where}: {line!r} is not a Line (make one with Mechanism.line)")
        if line.point.body is not self.ground and line.point.body.owner is not self:
            raise ValueError(f"{where}: the line belongs to another mechanism")
        return line

    def _body_against_line(self, name: str, body: BodyRef, line: Line, what: str):
        """A new contact's name, its body and its line, checked: the two must be on different bodies."""
        name = self._new_name(name, "contact")
        b = self._body(body, f"contact {name!r}")
        line = self._line(line, f"contact {name!r}")
        if b is line.body:
            raise ValueError(f"contact {name!r}: {what} and line on the same body {b.name!r}")
        return name, b, line

    @_atomic
    def point_contact(
        self,
        name: str,
        body: BodyRef,
        point,
        line: Line,
        restitution=None,
        friction=None,
        tangential_restitution=None,
        static_friction=None,
        compliant=None,
    ) -> PointLine:
        """A body point against a line (wall, ground). ``friction=None``: frictionless by structure.

        Laws, for every contact method: rigid (``restitution``) or compliant
        (``compliant=dict(stiffness=…, exponent=…, damping=…, slip_width=…, slip_width0=…)``,
        every entry a value spec like the rest); ``friction`` is μ (dynamic),
        ``static_friction`` μ0 ≥ μ (default μ) for schemes that resolve sticking.
        """
        name, b, line = self._body_against_line(name, body, line, "point")
        return self._add_contact(
            PointLine(
                name,
                self._point(b, point, f"contact {name!r} point"),
                line,
                **self._laws(name, restitution, tangential_restitution, friction, static_friction, compliant),
            )
        )

    @_atomic
    def circle_contact(
        self,
        name: str,
        body: BodyRef,
        centre,
        radius,
        line: Line,
        restitution=None,
        friction=None,
        tangential_restitution=None,
        static_friction=None,
        compliant=None,
    ) -> CircleLine:
        """A circle (disk, rounded end) of ``radius`` centred at a body point, against a line."""
        name, b, line = self._body_against_line(name, body, line, "circle")
        return self._add_contact(
            CircleLine(
                name,
                self._point(b, centre, f"contact {name!r} centre"),
                self._scalar(radius, name, "radius", POSITIVE),
                line,
                **self._laws(name, restitution, tangential_restitution, friction, static_friction, compliant),
            )
        )

    @_atomic
    def circle_circle_contact(
        self,
        name: str,
        body_a: BodyRef,
        centre_a,
        radius_a,
        body_b: BodyRef,
        centre_b,
        radius_b,
        restitution=None,
        friction=None,
        tangential_restitution=None,
        static_friction=None,
        compliant=None,
    ) -> CircleCircle:
        """Two circles on two bodies (body_b None: a fixed circle on the ground)."""
        name = self._new_name(name, "contact")
        a = self._body(body_a, f"contact {name!r}")
        b = self._body(body_b, f"contact {name!r}")
        if a is b:
            raise ValueError(f"contact {name!r}: both circles on body {a.name!r}")
        return self._add_contact(
            CircleCircle(
                name,
                self._point(a, centre_a, f"contact {name!r} centre a"),
                self._scalar(radius_a, name, "radius_a", POSITIVE),
                self._point(b, centre_b, f"contact {name!r} centre b"),
                self._scalar(radius_b, name, "radius_b", POSITIVE),
                **self._laws(name, restitution, tangential_restitution, friction, static_friction, compliant),
            )
        )

    @_atomic
    def clearance_revolute(
        self,
        name: str,
        pin_body: BodyRef,
        pin_point,
        hole_body: BodyRef,
        hole_point,
        pin_radius,
        clearance,
        restitution=None,
        friction=None,
        tangential_restitution=None,
        static_friction=None,
        compliant=None,
    ) -> ClearanceJoint:
        """A revolute joint with radial clearance c > 0: a pin (radius r_p) in a hole r_p + c.

        No bilateral constraint is added: the pin is free inside the hole and the
        contact g_N = c − ‖p_pin − p_hole‖ ≥ 0 keeps it there.
        """
        name = self._new_name(name, "contact")
        a = self._body(pin_body, f"clearance joint {name!r}")
        b = self._body(hole_body, f"clearance joint {name!r}")
        if a is b:
            raise ValueError(f"clearance joint {name!r}: pin and hole on the same body {a.name!r}")
        return self._add_contact(
            ClearanceJoint(
                name,
                self._point(a, pin_point, f"clearance joint {name!r} pin"),
                self._point(b, hole_point, f"clearance joint {name!r} hole"),
                self._scalar(pin_radius, name, "pin_radius", POSITIVE),
                self._scalar(clearance, name, "clearance", POSITIVE),
                **self._laws(name, restitution, tangential_restitution, friction, static_friction, compliant),
            )
        )

    @_atomic
    def lubricated_journal(
        self,
        name: str,
        pin_body: BodyRef,
        pin_point,
        hole_body: BodyRef,
        hole_point,
        pin_radius,
        clearance,
        viscosity,
        length,
        threshold=0.95,
        film: str = "positive",
        restitution=None,
        friction=None,
        tangential_restitution=None,
        static_friction=None,
        compliant=None,
    ) -> LubricatedJournal:
        """A lubricated revolute clearance joint: the short-bearing π-film force, and dry contact once it breaks.

        Two elements: the clearance joint ``name`` (:meth:`clearance_revolute`, with the dry contact's
        laws: ``compliant=dict(...)`` for the penalty scheme, or ``restitution`` for impacts) and the
        load ``<name>_film`` (:class:`jaxcontact.planar.forces.LubricatedJournal`), which reads the same
        pin, hole, radius and clearance. The film pushes with the hydrodynamic force of
        :func:`jaxcontact.contact_laws.short_bearing_force` (dynamic ``viscosity`` μ > 0 in Pa·s,
        bearing ``length`` L > 0 in m) while the eccentricity ratio ε = e/c is below ``threshold``
        ε_t ∈ (0, 1); between ε_t and 1 the film force is held at its ε_t value and faded out
        (:func:`jaxcontact.contact_laws.lubricated_journal_force`), and beyond ε = 1 the dry contact
        carries the load. ``film``: "positive" (the positive-pressure half) or "fixed" (the half
        (0, π) of the printed Pinkus–Sternlicht forms).

        Returns:
            The film load; its ``contact`` attribute is the clearance joint (the dry contact).
        """
        if film not in FILM_MODELS:
            raise ValueError(f"lubricated journal {name!r}: film {film!r} must be one of {FILM_MODELS}")
        contact = self.clearance_revolute(
            name,
            pin_body,
            pin_point,
            hole_body,
            hole_point,
            pin_radius,
            clearance,
            restitution=restitution,
            friction=friction,
            tangential_restitution=tangential_restitution,
            static_friction=static_friction,
            compliant=compliant,
        )
        film_name = self._new_name(f"{contact.name}_film", "load")
        load = LubricatedJournal(
            film_name,
            contact.pin,
            contact.hole,
            contact.pin_radius,
            contact.clearance,
            self._scalar(viscosity, film_name, "viscosity", POSITIVE),
            self._scalar(length, film_name, "length", POSITIVE),
            self._scalar(threshold, film_name, "threshold", OPEN_UNIT_INTERVAL),
            film,
        )
        load.contact = contact
        self.loads.append(load)
        return load

    # ------------------------------------------------------------- read-outs
    @property
    def n_dof(self) -> int:
        return 3 * len(self.bodies)

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        return tuple(f"{b.name}.{c}" for b in self.bodies for c in COORDINATES)

    @property
    def constraint_names(self) -> tuple[str, ...]:
        return tuple(r for j in self.joints for r in j.row_names)

    @property
    def contact_names(self) -> tuple[str, ...]:
        """Rigid contacts, in the order of the system's ``gaps``."""
        return tuple(c.name for c in self.contacts if c.compliant is None)

    @property
    def compliant_contact_names(self) -> tuple[str, ...]:
        """Compliant contacts, in the order of the system's ``compliant_gaps``."""
        return tuple(c.name for c in self.contacts if c.compliant is not None)

    def index(self, body: BodyRef, coordinate: str) -> int:
        """Position in q of ``coordinate`` ("x", "y", "theta") of ``body``."""
        b = self._body(body, "index")
        if b.is_ground or coordinate not in COORDINATES:
            raise ValueError(f"index: no coordinate {coordinate!r} of {b.name!r}; coordinates: {COORDINATES}")
        return 3 * b.index + COORDINATES.index(coordinate)

    def point_position(self, body: BodyRef, point, q, p):
        """World position (2,) of a body point at q (pure; jit/vmap-able). Point as (x, y) specs."""
        b = self._body(body, "point_position")
        pt = Point(b, point, f"point_position on {b.name!r}")
        return jnp.stack(world_point(q, b, pt.local(p)))

    def point_velocity(self, body: BodyRef, point, q, u, p):
        """World velocity (2,) of a body point at (q, u)."""
        b = self._body(body, "point_velocity")
        pt = Point(b, point, f"point_velocity on {b.name!r}")
        px, py = world_point(q, b, pt.local(p))
        return jnp.stack(material_velocity(q, u, b, px, py))

    def check_state(self, system: LagrangianSystem, q, p, u=None, t=0.0, tol: float = 1e-8) -> None:
        """Check an initial state outside jit; raise ValueError naming the broken row or contact
        (:func:`jaxcontact.initial.check_state` with this builder's tighter default tol).

        Rules: |Φ_i(q, t)| ≤ tol for every constraint row; Φ_q has full row rank (redundant
        or conflicting joints make the stepper's G = Φ_q M⁻¹ Φ_qᵀ singular); no contact gap
        below −tol; with u, |Φ_q u + Φ_t| ≤ tol.
        """
        check_state(system, p, q, u, t, tol=tol)

    # ------------------------------------------------------------------- build
    def validate(self, params: dict) -> None:
        """Check every value against ``params`` (outside jit): known names, finite, and the rules
        (mass, inertia, radius, clearance > 0; restitution in [0, 1]; friction, stiffness ≥ 0).

        Works on batched parameter leaves too (every sample must pass). Raises ValueError naming
        the element, the field, the value and the parameter it came from.
        """
        for k, v in params.items():
            a = np.asarray(v)
            if not np.issubdtype(a.dtype, np.number) or not np.all(np.isfinite(a)):
                raise ValueError(f"parameter {k!r} = {a} must be a finite number")
        for element in self.joints + self.loads + self.contacts:
            for value in element.values():
                value.check(params)  # unknown names (points, directions, axis angles) raise here
        for element, field, value, rule in self._rules:
            v = np.asarray(value.check(params))
            if not np.all(np.isfinite(v)):
                raise ValueError(f"{element!r} {field} = {v} (from {value!r}) is not finite")
            if not np.all(rule.pred(v)):
                bad = v if v.ndim == 0 else v[~np.asarray(rule.pred(v), bool)]
                raise ValueError(f"{element!r} {field} = {bad} (from {value!r}) must be {rule!r}")

    def param_table(self, defaults: dict | None = None) -> ParamTable:
        """The parameters (``defaults`` and the registered literals) with the rule and unit of every element
        field each fills directly (a body's ``mass="m1"``: m1 > 0, in kg); the rest by the conventions."""
        uses = [(v.parameter_name, field, rule) for _, field, v, rule in self._rules if v.parameter_name]
        return ParamTable.from_uses({**self.literals, **dict(defaults or {})}, uses)

    def build(
        self,
        defaults: dict | None = None,
        dtype=None,
        compliant_damping: str = "hunt_crossley",
        friction_regularization: str = "exponential",
    ) -> tuple[LagrangianSystem, dict]:
        """Freeze the structure into a LagrangianSystem and the default parameter dict.

        ``compliant_damping`` and ``friction_regularization`` choose the (static) laws of
        the compliant contacts (:class:`jaxcontact.system.LagrangianSystem`).

        ``defaults`` maps parameter names to values; literals given to builder methods are
        added under their generated names (a clash with ``defaults`` is an error). Values
        become arrays of ``dtype`` (default: JAX's float, float64 when x64 is on).
        """
        if not self.bodies:
            raise ValueError(f"mechanism {self.name!r} has no bodies")
        defaults = dict(defaults or {})
        clash = sorted(set(defaults) & set(self.literals))
        if clash:
            raise ValueError(f"parameter(s) {clash} are given in defaults and also as literals in the builder")
        dtype = jnp.result_type(float) if dtype is None else dtype
        params = {k: jnp.asarray(v, dtype) for k, v in {**self.literals, **defaults}.items()}
        self.validate(params)

        bodies = tuple(self.bodies)
        joints, loads = tuple(self.joints), tuple(self.loads)
        contacts = tuple(c for c in self.contacts if c.compliant is None)
        compliant = tuple(c for c in self.contacts if c.compliant is not None)
        n = 3 * len(bodies)

        def mass(q, p):
            diag = [x for b in bodies for x in (b.mass(p), b.mass(p), b.inertia(p))]
            return jnp.diag(jnp.stack([jnp.asarray(d, q.dtype) for d in diag]))

        def forces(q, u, t, p):
            acc = Wrenches(len(bodies), q.dtype)
            f = Frames(q)
            for load in loads:
                load.apply(acc, bodies, f, u, t, p)
            return acc.vector()

        def _stack(vals, dt):
            return jnp.stack([jnp.asarray(v, dt) for v in vals])

        def constraints(q, t, p):
            f = Frames(q)
            return _stack([r for j in joints for r in j.residual(f, t, p)], q.dtype)

        def gaps_of(group):
            def gaps(q, t, p):
                f = Frames(q)
                return _stack([c.gap(f, t, p) for c in group], q.dtype)

            return gaps

        def slip_of(group):
            def slip_velocity(q, u, t, p):
                f = Frames(q)
                return _stack([c.slip(f, u, t, p) for c in group], q.dtype)

            return slip_velocity

        def leaf(v, p, default=None):
            return (jnp.zeros(()) if default is None else default) if v is None else v(p)

        def static_mu(c, p):
            return leaf(c.static_friction, p, leaf(c.friction, p))

        def laws(p):
            dt = jnp.result_type(*[jnp.asarray(leaf(c.restitution, p)) for c in contacts])
            return ContactLaws(
                restitution=_stack([leaf(c.restitution, p) for c in contacts], dt),
                tangential_restitution=_stack([leaf(c.tangential_restitution, p) for c in contacts], dt),
                friction=_stack([leaf(c.friction, p) for c in contacts], dt),
                static_friction=(
                    _stack([static_mu(c, p) for c in contacts], dt)
                    if any(c.static_friction is not None for c in contacts)
                    else None
                ),
            )

        def compliant_laws(p):
            dt = jnp.result_type(*[jnp.asarray(c.compliant["stiffness"](p)) for c in compliant])
            return CompliantLaws(
                **{
                    f: _stack([c.compliant[f](p) for c in compliant], dt)
                    for f in ("stiffness", "exponent", "damping", "slip_width", "slip_width0")
                },
                friction=_stack([leaf(c.friction, p) for c in compliant], dt),
                static_friction=_stack([static_mu(c, p) for c in compliant], dt),
            )

        def potential(q, t, p):
            f = Frames(q)
            return jnp.asarray(sum((load.potential(bodies, f, t, p) for load in loads), 0.0), q.dtype)

        frictional = any(c.friction is not None for c in contacts)
        films = [load for load in loads if isinstance(load, LubricatedJournal)]
        columns = tuple(cols for j in joints for cols in [_joint_columns(j)] * j.size)
        system = LagrangianSystem(
            n_dof=n,
            mass=mass,
            forces=forces,
            constraints=constraints if joints else None,
            gaps=gaps_of(contacts) if contacts else None,
            slip_velocity=slip_of(contacts) if frictional else None,
            laws=laws if contacts else None,
            potential=potential if loads else None,
            names=self.coordinate_names,
            constraint_names=self.constraint_names,
            contact_names=self.contact_names,
            compliant_gaps=gaps_of(compliant) if compliant else None,
            compliant_slip_velocity=slip_of(compliant) if any(c.friction is not None for c in compliant) else None,
            compliant_laws=compliant_laws if compliant else None,
            compliant_damping=compliant_damping,
            friction_regularization=friction_regularization,
            diagonal_mass=True,  # M = diag(m, m, J) per body
            viscous=film_forces(films) if films else None,
            constraint_columns=columns if joints else None,
        )  # a joint's rows see its two bodies only
        return system, params

    def __repr__(self):
        lines = [
            f"Mechanism({self.name!r}: {len(self.bodies)} bodies, {self.n_dof} coordinates, "
            f"{sum(j.size for j in self.joints)} constraint rows, {len(self.contacts)} contacts)"
        ]
        for group in (self.bodies, self.joints, self.loads, self.contacts):
            lines += [f"  {x!r}" for x in group]
        return "\n".join(lines)
