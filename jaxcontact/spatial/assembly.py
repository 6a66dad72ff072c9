"""The spatial builder: rigid bodies, joints and contacts assembled into a :class:`LagrangianSystem`.

    asm = Assembly(gravity="gravity")
    ball = asm.add_body("ball", mass="mass", inertia=("0.4*mass*radius**2",) * 3)
    asm.add_contact(SpherePlane("ground", restitution="restitution", friction="friction",
                                body=ball, radius="radius"))
    system = asm.system()

Coordinates and velocities (:mod:`jaxcontact.spatial.bodies`): 7 coordinates and 6 velocities
per body, q̇ = T(q) u through the quaternion rate, positions advanced by the exponential map.
Equations of motion in the velocities u = (v, ω_body) (Newton–Euler):

    m v̇ = m g + F,        I ω̇ = −ω × I ω + τ_body,

so M = diag(m, m, m, I_1, I_2, I_3) per body is constant and diagonal and the gyroscopic term
−ω × Iω is a force quadratic in u (declared: ``gyroscopic=True``). Every physical value is a
value spec (:class:`jaxcontact.values.Value`): a parameter name, an expression over
names, or a callable — an array leaf, batchable and differentiable.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxcontact.params import NONNEGATIVE, POSITIVE, ParamTable
from jaxcontact.spatial import bodies as B
from jaxcontact.spatial.bodies import Body
from jaxcontact.spatial.contact_groups import ContactGroups
from jaxcontact.spatial.contacts import Contact
from jaxcontact.spatial.forces import Load, SpringDamper
from jaxcontact.spatial.joints import Joint
from jaxcontact.system import CompliantLaws, ContactLaws, LagrangianSystem
from jaxcontact.values import Value


class Assembly:
    """Spatial rigid bodies and their contacts (and joints), built into one LagrangianSystem.

    ``gravity``: the value spec of g (m/s²); gravity acts along −z.
    """

    def __init__(self, gravity="gravity"):
        self.gravity = Value(gravity, "gravity")
        self.bodies: list[Body] = []
        self.contacts: list[Contact] = []
        self.joints: list = []
        self.loads: list = []
        self.compliant_laws: dict = {}  # contact -> {field: Value} of its compliant law
        self.ground = Body("ground", None)

    def add_body(self, name: str, mass, inertia) -> Body:
        """A free rigid body with ``mass`` and principal moments ``inertia`` = (I_1, I_2, I_3) (value specs)."""
        if not isinstance(name, str) or not name or name == "ground" or any(b.name == name for b in self.bodies):
            raise ValueError(f"body name {name!r} must be a new non-empty string other than 'ground'")
        if not isinstance(inertia, (tuple, list)) or len(inertia) != 3:
            raise ValueError(f"body {name!r}: inertia must be three principal moments (I_1, I_2, I_3); got {inertia!r}")
        body = Body(
            name,
            len(self.bodies),
            Value(mass, f"body {name!r} mass"),
            tuple(Value(v, f"body {name!r} inertia[{i}]") for i, v in enumerate(inertia)),
        )
        self.bodies.append(body)
        return body

    def add_contact(self, contact: Contact, compliant: dict | None = None) -> Contact:
        """Add a contact element (:mod:`jaxcontact.spatial.contacts`) between bodies of this assembly.

        Rigid by default (Newton restitution, Coulomb cone: Moreau–Jean). ``compliant`` — a dict of
        value specs ``stiffness`` K (required), ``exponent`` n (1.5, Hertz), ``damping`` c (0),
        ``slip_width`` (1e-3 m/s), ``slip_width0`` (0) — makes it a force law instead
        (docs/theory/compliant.md: F_N = K δ^n + c δ^n δ̇, regularized Coulomb on the tangent
        plane; the penalty scheme). A compliant contact has no restitution (give None): its
        damping sets the rebound (:func:`jaxcontact.contact_laws.restitution_damping`).
        """
        if not isinstance(contact, Contact):
            raise TypeError(f"add_contact takes a spatial contact element; got {type(contact).__name__}")
        where = f"contact {contact.name!r}"
        for f in ("body", "b"):
            if not hasattr(contact, f):
                continue
            body = getattr(contact, f)
            if not isinstance(body, Body) or body.is_ground:
                raise ValueError(f"{where}: {f} must be a body of this assembly (not the ground); got {body!r}")
        a = getattr(contact, "a", None)
        if a is not None and not isinstance(a, Body):
            raise ValueError(f"{where}: a must be a body of this assembly, or None for the ground; got {a!r}")
        if a is not None and a is getattr(contact, "b", None):
            raise ValueError(f"{where}: a and b are the same body {a.name!r} (a contact joins two bodies)")
        self._own(contact, where)
        if compliant is not None:
            self.compliant_laws[contact] = _compliant_law(contact, compliant)
        elif contact.restitution is None:
            raise ValueError(
                f"contact {contact.name!r}: a rigid contact needs a restitution (or give compliant=dict(stiffness=…))"
            )
        self.contacts.append(contact)
        return contact

    def add_joint(self, joint: Joint) -> Joint:
        """Add a joint (:mod:`jaxcontact.spatial.joints`) between bodies of this assembly."""
        if not isinstance(joint, Joint):
            raise TypeError(f"add_joint takes a spatial joint; got {type(joint).__name__}")
        if (joint.a is None or joint.a.is_ground) and (joint.b is None or joint.b.is_ground):
            raise ValueError(f"joint {joint.name!r} joins the ground to itself")
        self._own(joint, f"joint {joint.name!r}")
        self.joints.append(joint)
        return joint

    def add_load(self, load):
        """Add an applied load (:class:`jaxcontact.spatial.forces.Load`) or a spring–damper
        (:class:`jaxcontact.spatial.forces.SpringDamper`)."""
        if not isinstance(load, (Load, SpringDamper)):
            raise TypeError(f"add_load takes a spatial Load or SpringDamper; got {type(load).__name__}")
        self._own(load, f"load {load.name!r}")
        self.loads.append(load)
        return load

    def _own(self, element, where):
        for f in ("body", "a", "b"):
            b = getattr(element, f, None)
            if (
                isinstance(b, Body)
                and not b.is_ground
                and (b.index >= len(self.bodies) or self.bodies[b.index] is not b)
            ):
                raise ValueError(f"{where}: body {b.name!r} does not belong to this assembly")

    # --- checks ---------------------------------------------------------------------------------------------------

    def _field_rules(self) -> list:
        """(value, element, field, rule) of every physical value: what ``validate`` checks and what
        ``param_table`` gives the parameters that fill them."""
        out = [(self.gravity, "gravity", "gravity", NONNEGATIVE)]
        for b in self.bodies:
            out.append((b.mass, f"body {b.name!r}", "mass", POSITIVE))
            out += [(v, f"body {b.name!r}", f"inertia[{i}]", POSITIVE) for i, v in enumerate(b.inertia)]
        for c in self.contacts:
            for field, (spec, rule) in c.physical().items():
                if field == "restitution" and c in self.compliant_laws:
                    continue  # none: the damping sets the rebound
                out.append((Value(spec, f"contact {c.name!r} {field}"), f"contact {c.name!r}", field, rule))
        for c, law in self.compliant_laws.items():
            out += [(v, f"contact {c.name!r}", field, COMPLIANT_FIELDS[field]) for field, v in law.items()]
        for ld in self.loads:
            for field, (spec, rule) in ld.physical().items():
                out.append((Value(spec, f"load {ld.name!r} {field}"), f"load {ld.name!r}", field, rule))
        return out

    def param_table(self, defaults: dict, uses=()) -> ParamTable:
        """The parameters ``defaults`` with the rule and unit of every element field each fills directly (a
        body's ``mass="m"``: m > 0, in kg), and of the (parameter, field, rule) ``uses`` a builder adds for the
        parameters it puts inside expressions; the rest by the conventions."""
        direct = [(v.parameter_name, field, rule) for v, _, field, rule in self._field_rules() if v.parameter_name]
        return ParamTable.from_uses(defaults, [*direct, *uses])

    def build(self, defaults: dict, **system_options) -> tuple[LagrangianSystem, dict]:
        """The system (``system(**system_options)``) and the parameter dict ``defaults`` as float array leaves,
        validated: the same idiom as the 2D builder's ``Mechanism.build``."""
        params = {k: jnp.asarray(v, jnp.result_type(float)) for k, v in defaults.items()}
        self.validate(params)
        return self.system(**system_options), params

    def validate(self, p) -> None:
        """Raise ValueError naming the element, the value and the rule for any broken physical value."""
        if not self.bodies:
            raise ValueError("the assembly has no body")
        checks = [
            (value, f"{element} {field}" if element != field else field, rule.pred, rule.text)
            for value, element, field, rule in self._field_rules()
        ]
        for value, where, pred, text in checks:
            v = np.asarray(value.check(p))
            if not np.all(np.isfinite(v)) or not np.all(pred(v)):
                raise ValueError(f"{where} = {v} breaks the rule {text}")
        for c in self.contacts:
            c.check(p)  # its vectors (planes, axes, points) and the rules between its values
        for j in self.joints:
            for field in ("point_a", "point_b"):
                spec = getattr(j, field)
                if not isinstance(spec, (tuple, list)) or len(spec) != 3:
                    raise ValueError(f"joint {j.name!r} {field} = {spec!r} must be three coordinates")
                for v in spec:
                    Value(v, f"joint {j.name!r} {field}").check(p)
            for field, v in j.values().items():
                if not np.all(np.isfinite(np.asarray(v.check(p)))):
                    raise ValueError(f"joint {j.name!r} {field} = {v.check(p)} breaks the rule: finite")
        for b in self.bodies:
            moments = np.stack([np.asarray(v.check(p)) for v in b.inertia])
            for i in range(3):
                if np.any(moments[i] > moments[(i + 1) % 3] + moments[(i + 2) % 3] + 1e-12 * moments.max()):
                    raise ValueError(
                        f"body {b.name!r} inertia = {moments.tolist()} breaks the triangle rule "
                        f"I_{i + 1} <= I_{(i + 1) % 3 + 1} + I_{(i + 2) % 3 + 1} (no rigid body has it)"
                    )

    # --- the system -----------------------------------------------------------------------------------------------

    @property
    def n_bodies(self) -> int:
        """Number of bodies (the ground excluded)."""
        return len(self.bodies)

    @property
    def n_contacts(self) -> int:
        """Number of contact points (a box on a plane counts 8)."""
        return sum(c.size for c in self.contacts)

    def names(self) -> tuple[str, ...]:
        """Names of the coordinates, ``body.x`` … ``body.qz``."""
        return tuple(f"{b.name}.{c}" for b in self.bodies for c in B.COORDINATES)

    def velocity_names(self) -> tuple[str, ...]:
        """Names of the velocities, ``body.vx`` … ``body.wz`` (ω in the body frame)."""
        return tuple(f"{b.name}.{c}" for b in self.bodies for c in B.VELOCITIES)

    def constraint_names(self) -> tuple[str, ...]:
        """Names of the rows of Φ, ``joint[i]``, in the system's order."""
        return tuple(f"{j.name}[{i}]" for j in self.joints for i in range(j.size))

    def contact_names(self) -> tuple[str, ...]:
        """Names of the rigid contact points, in the order of the system's ``gaps``: the contact's name, with
        ``[i]`` when it has several points (a box's corners)."""
        return tuple(c.name if c.size == 1 else f"{c.name}[{i}]" for c in self._group(False) for i in range(c.size))

    def _velocity_columns(self, rows_per_point: int) -> tuple[tuple[int, ...], ...]:
        """For each rigid contact row (``rows_per_point`` a point), the velocities of the bodies it touches: the
        pattern of its row of W (a box on the ground: its own six; a sphere on a sphere: both bodies' twelve)."""
        out = []
        for c in self._group(False):
            cols = tuple(len(B.VELOCITIES) * b.index + j for b in c.bodies() for j in range(len(B.VELOCITIES)))
            out += [cols] * (c.size * rows_per_point)
        return tuple(out)

    def _mass_diagonal(self, p, dtype):
        parts = []
        for b in self.bodies:
            m = jnp.asarray(b.mass(p), dtype)
            parts += [m, m, m] + [jnp.asarray(v(p), dtype) for v in b.inertia]
        return jnp.stack(parts)

    def mass(self, q, p):
        """M (n_u, n_u): diag(m, m, m, I_1, I_2, I_3) per body."""
        return jnp.diag(self._mass_diagonal(p, q.dtype))

    def forces(self, q, u, t, p):
        """Gravity on every centre, the gyroscopic torque −ω × Iω (body frame) and the applied loads."""
        g = jnp.asarray(self.gravity(p), q.dtype)
        d = self._mass_diagonal(p, q.dtype).reshape(-1, 6)
        U = u.reshape(-1, 6)
        f = jnp.zeros_like(U).at[:, 2].set(-d[:, 0] * g)
        w = U[:, 3:]
        f = f.at[:, 3:].set(-jnp.cross(w, d[:, 3:] * w)).reshape(-1)
        for ld in self.loads:
            f = f + ld.generalized(q, u, t, p, u.shape[0])
        return f

    def potential(self, q, t, p):
        """Σ m g z plus the springs' ½ k (ℓ − ℓ₀)² (applied loads have no potential here)."""
        d = self._mass_diagonal(p, q.dtype).reshape(-1, 6)
        v = jnp.asarray(self.gravity(p), q.dtype) * jnp.sum(d[:, 0] * q.reshape(-1, 7)[:, 2])
        for ld in self.loads:
            if isinstance(ld, SpringDamper):
                v = v + ld.potential(q, p)
        return v

    def constraints(self, q, t, p):
        """Φ of every joint (m,)."""
        return jnp.concatenate([j.rows(q, t, p) for j in self.joints])

    def _group(self, compliant: bool):
        return [c for c in self.contacts if (c in self.compliant_laws) == compliant]

    def gaps(self, q, t, p):
        """Gaps of every rigid contact point (k,); alike contacts are computed together
        (:mod:`jaxcontact.spatial.contact_groups`)."""
        return ContactGroups.of(self._group(False)).gaps(q, p)

    def slip_velocity(self, q, u, t, p):
        """Slip velocities (k, 2) of the rigid contacts along each contact's tangent pair."""
        return ContactGroups.of(self._group(False)).slips(q, u, p)

    def compliant_gaps(self, q, t, p):
        """Gaps of every compliant contact point (kc,)."""
        return ContactGroups.of(self._group(True)).gaps(q, p)

    def compliant_slip_velocity(self, q, u, t, p):
        """Slip velocities (kc, 2) of the compliant contacts."""
        return ContactGroups.of(self._group(True)).slips(q, u, p)

    @staticmethod
    def _per_point(contacts, value, p):
        return jnp.concatenate(
            [jnp.broadcast_to(jnp.asarray(value(c)(p), jnp.result_type(float)), (c.size,)) for c in contacts]
        )

    def laws(self, p):
        """ContactLaws (k,): each rigid contact's restitution and friction on each of its points."""
        rigid = self._group(False)
        e, mu = (
            self._per_point(rigid, lambda c, f=f: Value(getattr(c, f), f"contact {c.name!r} {f}"), p)
            for f in ("restitution", "friction")
        )
        return ContactLaws(e, jnp.zeros_like(e), mu)

    def compliant_law_values(self, p):
        """CompliantLaws (kc,) of the compliant contacts (static friction = the dynamic μ: the regularized
        law has no sticking)."""
        soft = self._group(True)
        mu = self._per_point(soft, lambda c: Value(c.friction, f"contact {c.name!r} friction"), p)
        fields = {f: self._per_point(soft, lambda c, f=f: self.compliant_laws[c][f], p) for f in COMPLIANT_FIELDS}
        return CompliantLaws(friction=mu, static_friction=mu, **fields)

    def system(
        self, compliant_damping: str = "hunt_crossley", friction_regularization: str = "exponential"
    ) -> LagrangianSystem:
        """The LagrangianSystem of the bodies, joints and contacts (Coulomb cones, quaternion kinematics);
        the compliant contacts' damping model and friction regularization are static choices
        (:class:`jaxcontact.system.LagrangianSystem`)."""
        if not self.bodies:
            raise ValueError("the assembly has no body")
        n = self.n_bodies
        rigid, soft = bool(self._group(False)), bool(self._group(True))
        return LagrangianSystem(
            n_dof=7 * n,
            n_velocities=6 * n,
            mass=self.mass,
            forces=self.forces,
            constraints=self.constraints if self.joints else None,
            gaps=self.gaps if rigid else None,
            slip_velocity=self.slip_velocity if rigid else None,
            gap_columns=self._velocity_columns(1) if rigid else None,
            slip_columns=self._velocity_columns(2) if rigid else None,
            laws=self.laws if rigid else None,
            potential=self.potential,
            names=self.names(),
            compliant_gaps=self.compliant_gaps if soft else None,
            compliant_slip_velocity=self.compliant_slip_velocity if soft else None,
            compliant_laws=self.compliant_law_values if soft else None,
            compliant_damping=compliant_damping,
            friction_regularization=friction_regularization,
            velocity_map=functools.partial(B.velocity_map, n_bodies=n),
            position_update=functools.partial(B.position_update, n_bodies=n),
            tangent_directions=2,
            gyroscopic=True,
            diagonal_mass=True,
            velocity_names=self.velocity_names(),
            constraint_names=self.constraint_names(),
            contact_names=self.contact_names(),
        )


# The compliant law's fields, their rules and defaults (docs/theory/compliant.md).
COMPLIANT_FIELDS = {
    "stiffness": NONNEGATIVE,
    "exponent": POSITIVE,
    "damping": NONNEGATIVE,
    "slip_width": POSITIVE,
    "slip_width0": NONNEGATIVE,
}
COMPLIANT_DEFAULTS = {"exponent": 1.5, "damping": 0.0, "slip_width": 1e-3, "slip_width0": 0.0}


def _compliant_law(contact, spec) -> dict:
    """{field: Value} of a compliant law given as a dict of value specs (see :meth:`Assembly.add_contact`)."""
    where = f"contact {contact.name!r}"
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: compliant must be a dict of law values; got {spec!r}")
    unknown = sorted(set(spec) - set(COMPLIANT_FIELDS))
    if unknown or "stiffness" not in spec:
        raise ValueError(
            f"{where}: compliant needs 'stiffness' and takes {sorted(COMPLIANT_FIELDS)}; got {sorted(spec)}"
        )
    if contact.restitution is not None:
        raise ValueError(
            f"{where}: a compliant contact has no restitution (give restitution=None: its damping sets "
            f"the rebound, jaxcontact.contact_laws.restitution_damping)"
        )
    return {f: Value(v, f"{where} {f}") for f, v in {**COMPLIANT_DEFAULTS, **spec}.items()}
