"""Applied loads: gravity, point forces, torques, linear spring–dampers, lubricated journals, user forces.

Each load adds body wrenches (F_x, F_y, τ about the centre of mass) to an
accumulator; a force F at world point P of body i contributes
(F_x, F_y, (P − r_i) × F) — the adjoint of the rigid velocity field (virtual
power F · v_P = Q · u). Loads that are constant in time also contribute to the
potential V(q, t, p) used by the energy diagnostic (−T θ for a torque, −F · P
for a force), so "energy" is the mechanical energy including the work of
constant loads; a load that varies in time (an expression in t or a callable
of (t, p)) is left out of V.
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp

from jaxcontact.contact_laws import lubricated_journal_force
from jaxcontact.planar.bodies import Body, Point, material_velocity, mul, pose, safe_norm, safe_unit, sub, unit
from jaxcontact.system import RowForces
from jaxcontact.values import Value


class Wrenches:
    """Per-body sums of (F_x, F_y, τ); ``vector(n)`` lays them out as generalized forces."""

    def __init__(self, n_bodies: int, dtype):
        self.parts = [[[], [], []] for _ in range(n_bodies)]
        self.dtype = dtype
        self.extra = []

    def add(self, body: Body, fx, fy, tau):
        """Add the force (fx, fy) and torque τ acting on ``body`` at its centre (ignored for the ground)."""
        if body.is_ground:
            return
        for lst, v in zip(self.parts[body.index], (fx, fy, tau)):
            lst.append(v)

    def add_at(self, q, body: Body, px, py, fx, fy):
        """Force (fx, fy) applied at world point (px, py) of ``body``."""
        if body.is_ground:
            return
        x, y, _ = pose(q, body)
        self.add(body, fx, fy, sub(mul(sub(px, x), fy), mul(sub(py, y), fx)))

    def vector(self):
        """The generalized force vector (3 per body), user generalized forces added."""
        z = jnp.zeros((), self.dtype)
        comps = [_sum(lst, z) for parts in self.parts for lst in parts]
        v = jnp.stack([jnp.asarray(c, self.dtype) for c in comps])
        for e in self.extra:
            v = v + e
        return v


def _sum(terms, zero):
    terms = [t for t in terms if not (isinstance(t, (int, float)) and t == 0.0)]
    if not terms:
        return zero
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


class Gravity:
    """Uniform gravity g (magnitude) along the world direction ``direction`` (default −y)."""

    def __init__(self, name: str, g: Value, direction: tuple[Value, Value]):
        self.name, self.g, self.direction = name, g, direction

    def _dir(self, p):
        return unit(self.direction[0](p), self.direction[1](p), (0.0, -1.0))

    def apply(self, acc: Wrenches, bodies, q, u, t, p):
        """Add this load's generalized force at (q, u, t) to ``acc``."""
        g = self.g(p)
        dx, dy = self._dir(p)
        for b in bodies:
            mg = b.mass(p) * g
            acc.add(b, mul(mg, dx), mul(mg, dy), 0.0)

    def potential(self, bodies, q, t, p):
        """This load's potential energy (0 when it is not conservative or varies in time)."""
        g = self.g(p)
        dx, dy = self._dir(p)
        v = 0.0
        for b in bodies:
            x, y, _ = pose(q, b)
            v = v - b.mass(p) * g * (mul(dx, x) + mul(dy, y))
        return v

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return (self.g,) + tuple(self.direction)

    def __repr__(self):
        return f"Gravity(g={self.g!r}, direction=({self.direction[0]!r}, {self.direction[1]!r}))"


class PointForce:
    """A world-frame force (F_x, F_y) at a body point; may vary in time."""

    def __init__(self, name: str, at: Point, fx: Value, fy: Value):
        self.name, self.at, self.fx, self.fy = name, at, fx, fy

    def apply(self, acc, bodies, q, u, t, p):
        """Add this load's generalized force at (q, u, t) to ``acc``."""
        px, py = self.at.world(q, p)
        acc.add_at(q, self.at.body, px, py, self.fx(p, t), self.fy(p, t))

    def potential(self, bodies, q, t, p):
        """This load's potential energy (0 when it is not conservative or varies in time)."""
        if not (self.fx.is_constant_in_time and self.fy.is_constant_in_time):
            return 0.0
        px, py = self.at.world(q, p)
        return -(self.fx(p, t) * px + self.fy(p, t) * py)

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return self.at.values() + (self.fx, self.fy)

    def __repr__(self):
        return f"PointForce({self.name!r}: ({self.fx!r}, {self.fy!r}) at {self.at!r})"


class Torque:
    """A torque T on a body (counter-clockwise positive); −T on ``reaction`` (a motor's stator)."""

    def __init__(self, name: str, body: Body, value: Value, reaction: Body):
        self.name, self.body, self.value, self.reaction = name, body, value, reaction

    def apply(self, acc, bodies, q, u, t, p):
        """Add this load's generalized force at (q, u, t) to ``acc``."""
        T = self.value(p, t)
        acc.add(self.body, 0.0, 0.0, T)
        acc.add(self.reaction, 0.0, 0.0, -T)

    def potential(self, bodies, q, t, p):
        """This load's potential energy (0 when it is not conservative or varies in time)."""
        if not self.value.is_constant_in_time:
            return 0.0
        return -self.value(p, t) * (pose(q, self.body)[2] - pose(q, self.reaction)[2])

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return (self.value,)

    def __repr__(self):
        rel = "" if self.reaction.is_ground else f", reaction on {self.reaction.name!r}"
        return f"Torque({self.name!r}: {self.value!r} on {self.body.name!r}{rel})"


class SpringDamper:
    """Linear spring–damper between two body points: tension f = k (L − L0) + c L̇.

    L = ‖P_b − P_a‖ (safe norm: no NaN gradient when the points coincide); the
    force pulls the points together when f > 0.
    """

    def __init__(self, name: str, a: Point, b: Point, stiffness: Value, damping: Value, rest_length: Value):
        self.name, self.a, self.b = name, a, b
        self.stiffness, self.damping, self.rest_length = stiffness, damping, rest_length

    def _geometry(self, q, p):
        ax, ay = self.a.world(q, p)
        bx, by = self.b.world(q, p)
        return ax, ay, bx, by, safe_norm(bx - ax, by - ay), safe_unit(bx - ax, by - ay)

    def apply(self, acc, bodies, q, u, t, p):
        """Add this load's generalized force at (q, u, t) to ``acc``."""
        ax, ay, bx, by, L, (ex, ey) = self._geometry(q, p)
        vax, vay = material_velocity(q, u, self.a.body, ax, ay)
        vbx, vby = material_velocity(q, u, self.b.body, bx, by)
        Ldot = ex * (vbx - vax) + ey * (vby - vay)
        f = self.stiffness(p) * (L - self.rest_length(p)) + self.damping(p) * Ldot
        acc.add_at(q, self.a.body, ax, ay, f * ex, f * ey)
        acc.add_at(q, self.b.body, bx, by, -f * ex, -f * ey)

    def potential(self, bodies, q, t, p):
        """This load's potential energy (0 when it is not conservative or varies in time)."""
        L = self._geometry(q, p)[4]
        return 0.5 * self.stiffness(p) * (L - self.rest_length(p)) ** 2

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return self.a.values() + self.b.values() + (self.stiffness, self.damping, self.rest_length)

    def __repr__(self):
        return (
            f"SpringDamper({self.name!r}: {self.a!r} — {self.b!r}, k={self.stiffness!r}, "
            f"c={self.damping!r}, L0={self.rest_length!r})"
        )


class LubricatedJournal:
    """The hydrodynamic π-film force of a short journal bearing between a pin (body A) and its hole (B).

    The pin (journal, radius R) and the hole (bearing, radius R + c) are those of a
    :class:`jaxcontact.planar.contacts.ClearanceJoint`, whose compliant (or rigid) contact is the dry
    contact once the film has broken. From e = P_pin − P_hole and ė (the velocities of the two
    centres), ê = e/‖e‖ (safe: +x at e = 0), ε = ‖e‖/c, ε̇ = ê · ė / c, and
    a ε = ω̄ ε − (ê × ė)/c with ω̄ = (θ̇_A + θ̇_B)/2 (the whirl φ̇ = (ê × ė)/‖e‖ enters multiplied by ε,
    so nothing divides by ‖e‖). The force on the pin,
    F = F_r ê + F_t ê⊥ (ê⊥ = ê turned a quarter counter-clockwise), comes from
    :func:`jaxcontact.contact_laws.lubricated_journal_force` (film capped at ε_t = ``threshold`` and faded
    out between ε_t and 1); it acts at the pin centre on A and −F at the hole centre on B. The
    pressure is normal to both surfaces, so it has no moment about either centre; the viscous shear
    torque is not part of the π-film model and is left out. No potential (the film is dissipative
    or driven by the rotation).
    """

    def __init__(
        self,
        name: str,
        pin: Point,
        hole: Point,
        pin_radius: Value,
        clearance: Value,
        viscosity: Value,
        length: Value,
        threshold: Value,
        film: str = "positive",
    ):
        self.name, self.pin, self.hole = name, pin, hole
        self.pin_radius, self.clearance = pin_radius, clearance
        self.viscosity, self.length, self.threshold, self.film = viscosity, length, threshold, film
        self.contact = None  # the clearance joint carrying the dry contact (set by the builder)

    def relative_velocity(self, q, u, p):
        """w = (ė_x, ė_y, ω̄): the velocity of the pin's centre relative to the hole's and the mean spin, the
        velocities the film reads (linear in u; the pin's and hole's points give their own velocities and spins,
        a rigid body's or a beam node's)."""
        px, py = self.pin.world(q, p)
        hx, hy = self.hole.world(q, p)
        vpx, vpy = self.pin.velocity(q, u, px, py)
        vhx, vhy = self.hole.velocity(q, u, hx, hy)
        omega = 0.5 * (self.pin.spin(q, u) + self.hole.spin(q, u))
        return jnp.stack([jnp.asarray(x, u.dtype) for x in (sub(vpx, vhx), sub(vpy, vhy), omega)])

    def state(self, q, w, p):
        """(ε, ε̇, a ε, ê) at q and w = :meth:`relative_velocity`: the film's arguments and the eccentricity
        direction (ex, ey)."""
        px, py = self.pin.world(q, p)
        hx, hy = self.hole.world(q, p)
        ex, ey = sub(px, hx), sub(py, hy)
        dex, dey, omega = w[0], w[1], w[2]
        c = self.clearance(p)
        nx, ny = safe_unit(ex, ey)
        eps = safe_norm(ex, ey) / c
        eps_dot = (nx * dex + ny * dey) / c
        eps_wedge = omega * eps - (nx * dey - ny * dex) / c
        return eps, eps_dot, eps_wedge, (nx, ny)

    def law(self, q, w, p):
        """(F_x, F_y, 0): the film force on the pin (world frame; −F on the hole) at q and w =
        :meth:`relative_velocity`, conjugate to w (the pressure has no moment, so nothing is conjugate to the
        spin). Positively homogeneous of degree one in w: the force of a viscous film."""
        eps, eps_dot, eps_wedge, (nx, ny) = self.state(q, w, p)
        fr, ft = lubricated_journal_force(
            eps,
            eps_dot,
            eps_wedge,
            self.viscosity(p),
            self.length(p),
            self.pin_radius(p),
            self.clearance(p),
            self.threshold(p),
            self.film,
        )
        fx, fy = fr * nx - ft * ny, fr * ny + ft * nx
        return jnp.stack([fx, fy, jnp.zeros_like(fx)])

    def force(self, q, u, p):
        """The film force (F_x, F_y) on the pin, world frame (−F on the hole)."""
        f = self.law(q, self.relative_velocity(q, u, p), p)
        return f[0], f[1]

    def apply(self, acc, bodies, q, u, t, p):
        """Add this load's generalized force at (q, u, t) to ``acc``."""
        fx, fy = self.force(q, u, p)
        px, py = self.pin.world(q, p)
        hx, hy = self.hole.world(q, p)
        acc.add_at(q, self.pin.body, px, py, fx, fy)
        acc.add_at(q, self.hole.body, hx, hy, -fx, -fy)

    def potential(self, bodies, q, t, p):
        """This load's potential energy (0 when it is not conservative or varies in time)."""
        return 0.0

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return (
            self.pin.values()
            + self.hole.values()
            + (self.pin_radius, self.clearance, self.viscosity, self.length, self.threshold)
        )

    def __repr__(self):
        return (
            f"LubricatedJournal({self.name!r}: pin r={self.pin_radius!r} at {self.pin!r} in hole at {self.hole!r}, "
            f"clearance {self.clearance!r}, μ={self.viscosity!r}, L={self.length!r}, ε_t={self.threshold!r}, "
            f"{self.film} film)"
        )


def film_forces(films) -> RowForces:
    """The lubricated journals ``films`` as a system's viscous forces: w stacks each film's
    :meth:`LubricatedJournal.relative_velocity`, F each film's :meth:`LubricatedJournal.law`."""
    films = tuple(films)

    def velocities(q, u, p):
        return jnp.concatenate([f.relative_velocity(q, u, p) for f in films])

    def law(q, w, p):
        return jnp.concatenate([f.law(q, w[3 * i : 3 * i + 3], p) for i, f in enumerate(films)])

    return RowForces(velocities, law)


class GeneralizedForce:
    """A user force ``fn(q, u, t, p) -> (n,)`` added to h as is (no potential)."""

    def __init__(self, name: str, fn: Callable):
        self.name, self.fn = name, fn

    def apply(self, acc, bodies, q, u, t, p):
        """Add this load's generalized force at (q, u, t) to ``acc``."""
        acc.extra.append(self.fn(q, u, t, p))

    def potential(self, bodies, q, t, p):
        """This load's potential energy (0 when it is not conservative or varies in time)."""
        return 0.0

    def values(self):
        """The Values this element reads (for parameter checks)."""
        return ()

    def __repr__(self):
        return f"GeneralizedForce({self.name!r}: {getattr(self.fn, '__name__', '<callable>')})"
