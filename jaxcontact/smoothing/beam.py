"""Planar large-deformation beams (ANCF) with model smoothing of strain and curvature (docs/theory/smoothing.md).

Element: the planar gradient-deficient Euler–Bernoulli beam of the absolute
nodal coordinate formulation (Berzeri & Shabana, "Development of simple models
for the elastic forces in the absolute nodal co-ordinate formulation", J. Sound
Vib. 235 (2000) 539–565). Each node carries its world position r and slope
r' = ∂r/∂x (4 coordinates); an element interpolates r(x) by cubic Hermite
polynomials over its length l, so the mass matrix M = ∫ρA SᵀS dx is constant
and large rotations are exact (no rotation coordinates). Strain measures at a
material point:

    ε = ½ (r'ᵀr' − 1)               (axial Green–Lagrange strain)
    κ = (r' × r'') / |r'|³          (signed curvature)

and the elastic virtual power is ∫ (EA ε δε̇ + EI κ δκ̇) dx, by 5-point Gauss
quadrature per element.

Smoothing replaces ε and κ in the stress by their means over (t, t + h),
ε̄ = ε + (h/2) ε̇ + (h²/6) ε̈ (same for κ). With ε̇ = ε_q u and
ε̈ = ε_q u̇ + uᵀ ε_qq u, the u̇ part moves to the left-hand side, so the smoothed
beam is a Lagrangian system with a configuration-dependent mass matrix

    M̄(q) = M + (h²/6) ∫ (EA ε_qᵀ ε_q + EI κ_qᵀ κ_q) dx,
    Q̄(q, u) = −∫ [EA (ε + (h/2) ε_q u + (h²/6) uᵀε_qq u) ε_qᵀ + EI (same for κ) κ_qᵀ] dx + gravity,

which reduces to (M + h²K/6) ü + (h/2) K u̇ + K u = F for a linear element.
h is the parameter leaf named by ``smoothing`` (h = 0: the original beam).

Joints: :func:`flexible_system` appends the beams' coordinates to a rigid
system built by :class:`jaxcontact.planar.Mechanism` (or to nothing) and adds
revolute pins — beam node to ground point, to another beam's node, or to a
point of a rigid body of that mechanism — as constraint rows Φ = r_node − r_target.
Parameters of beam ``b``: ``b_rho`` (kg/m³), ``b_E`` (Pa), ``b_A`` (m²), ``b_I`` (m⁴),
``b_L`` (m); ``n_elements`` per beam is static.

Clearance joints (:class:`Clearance`): a pin of radius r_p at a beam node in a hole of radius
r_p + c on a rigid body, the ground or another beam's node (or the hole at the node and the pin on
the other side), with the geometry and sign conventions of
:class:`jaxcontact.planar.contacts.ClearanceJoint` (g_N = c − ‖e‖, safe normalisation at e = 0). A
rigid joint (restitution) is a unilateral contact of ``gaps`` for Moreau–Jean; a compliant one
(``compliant=dict(stiffness=…)``) a compliant contact for the penalty scheme. The slip of a beam
node's contact point uses the node's material rotation: the angle of its slope r', whose rate is
ω = (x' ẏ' − y' ẋ') / ‖r'‖² (the section turns with the centre line: Euler–Bernoulli).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.contact_laws import FILM_MODELS
from jaxcontact.planar.bodies import Body, Frames, Point, frames
from jaxcontact.planar.contacts import ClearanceJoint
from jaxcontact.planar.forces import LubricatedJournal, film_forces
from jaxcontact.system import CompliantLaws, ContactLaws, LagrangianSystem, RowForces
from jaxcontact.values import Value

_XI, _W = np.polynomial.legendre.leggauss(5)
GAUSS_XI, GAUSS_W = (_XI + 1.0) / 2.0, _W / 2.0  # on [0, 1]; exact for the degree-6 mass integrand


@dataclasses.dataclass(frozen=True)
class Beam:
    """A flexible beam of ``n_elements`` ANCF elements; its parameters are ``<name>_rho/_E/_A/_I/_L``."""

    name: str
    n_elements: int = 2

    def __post_init__(self):
        if not isinstance(self.n_elements, int) or self.n_elements < 1:
            raise ValueError(f"beam {self.name!r}: n_elements = {self.n_elements!r} must be an int ≥ 1")

    @property
    def n_dof(self) -> int:
        return 4 * (self.n_elements + 1)

    def param(self, p, field):
        """The parameter leaf ``<beam name>_<field>`` of ``p``."""
        return p[f"{self.name}_{field}"]


@dataclasses.dataclass(frozen=True)
class Pin:
    """Revolute pin: node ``node`` of ``beam`` (−1: the last) to ``to``.

    ``to``: None (ground: the world point ``point``), a Beam (its node ``to_node``), or a rigid
    :class:`jaxcontact.planar.Body` of the mechanism (its local point ``point``). Point coordinates
    are numbers or parameter names/expressions.
    """

    beam: Beam
    node: int
    to: None | Beam | Body = None
    to_node: int = 0
    point: tuple = (0.0, 0.0)


# A lubricated joint's optional film values: the eccentricity ratio where the film starts to break, and which
# half of the film carries pressure (:func:`jaxcontact.contact_laws.short_bearing_force`).
LUBRICATION_DEFAULTS = {"threshold": 0.95, "film": "positive"}
COMPLIANT_FIELDS = ("stiffness", "exponent", "damping", "slip_width", "slip_width0")
# The defaults of Mechanism's compliant contacts: Hertz exponent, no damping, v_r = 1 mm/s, v0 = 0.
COMPLIANT_DEFAULTS = {"exponent": 1.5, "damping": 0.0, "slip_width": 1e-3, "slip_width0": 0.0}


@dataclasses.dataclass(frozen=True)
class Clearance:
    """Revolute joint with radial clearance at node ``node`` of ``beam`` (−1: the last).

    The other side ``to``: None (ground: the world point ``point``), a Beam (its node ``to_node``) or
    a rigid :class:`jaxcontact.planar.Body` of the mechanism (its local point ``point``).
    ``pin_on_beam``: the pin (radius ``pin_radius``) sits at the beam node and the hole (radius
    pin_radius + ``clearance``) on ``to``; False: the hole at the node, the pin on ``to``.
    Laws, as :meth:`jaxcontact.planar.Mechanism.clearance_revolute`: rigid (``restitution``, for
    Moreau–Jean) or compliant (``compliant=dict(stiffness=…, exponent=…, damping=…, slip_width=…,
    slip_width0=…)``, for the penalty scheme); ``friction`` μ or None (frictionless). ``lubrication``:
    None (dry), or ``dict(viscosity=…, length=…, threshold=0.95, film="positive")`` for an oil film in the
    clearance, as :meth:`jaxcontact.planar.Mechanism.lubricated_journal`: the short-bearing π-film force
    between the pin and hole centres while the eccentricity ratio is below ``threshold``, faded out by 1, and
    the joint's dry law beyond. Every value is a number or a parameter name/expression.
    """

    name: str
    beam: Beam
    node: int
    to: None | Beam | Body = None
    to_node: int = 0
    point: tuple = (0.0, 0.0)
    pin_radius: object = "pin_radius"
    clearance: object = "clearance"
    pin_on_beam: bool = True
    restitution: object = None
    friction: object = None
    compliant: dict | None = None
    lubrication: dict | None = None

    def __post_init__(self):
        where = f"clearance joint {self.name!r}"
        if (self.restitution is None) == (self.compliant is None):
            raise ValueError(
                f"{where}: give either restitution (a rigid joint, Moreau–Jean) or compliant=dict(stiffness=…) "
                f"(a compliant joint, penalty scheme), not {'both' if self.compliant is not None else 'neither'}"
            )
        if self.compliant is not None:
            if not isinstance(self.compliant, dict):
                raise ValueError(f"{where}: compliant must be a dict of law values; got {self.compliant!r}")
            unknown = sorted(set(self.compliant) - set(COMPLIANT_FIELDS))
            if unknown or "stiffness" not in self.compliant:
                raise ValueError(
                    f"{where}: compliant needs 'stiffness' and takes {list(COMPLIANT_FIELDS)}; "
                    f"got {sorted(self.compliant)}"
                )
        if self.lubrication is not None:
            fields = {"viscosity", "length", *LUBRICATION_DEFAULTS}
            spec = self.lubrication if isinstance(self.lubrication, dict) else {}
            if not {"viscosity", "length"} <= set(spec) or set(spec) - fields:
                raise ValueError(
                    f"{where}: lubrication must be a dict with viscosity and length (optional threshold, film); "
                    f"got {self.lubrication!r}"
                )
            if spec.get("film", "positive") not in FILM_MODELS:
                raise ValueError(f"{where}: film {spec['film']!r} must be one of {FILM_MODELS}")
        if self.to is self.beam and self.to_node % (self.beam.n_elements + 1) == self.node % (self.beam.n_elements + 1):
            raise ValueError(f"{where}: pin and hole at the same node {self.node} of beam {self.beam.name!r}")


class _NodePoint:
    """A beam node as a contact point: its position is the node's r; its material rotation the
    angle of its slope r', so a point P of the section moves at ṙ + ω ẑ × (P − r) with
    ω = (x' ẏ' − y' ẋ') / ‖r'‖² (affine in u, as a slip velocity must be)."""

    def __init__(self, start: int, where: str):
        self.start, self.where = start, where

    def world(self, q, p):
        q = frames(q).q
        return q[self.start], q[self.start + 1]

    def spin(self, q, u):
        """ω = (x' ẏ' − y' ẋ') / ‖r'‖²: the turn rate of the node's slope."""
        q, i = frames(q).q, self.start
        dx, dy = q[i + 2], q[i + 3]
        return (dx * u[i + 3] - dy * u[i + 2]) / (dx * dx + dy * dy)

    def velocity(self, q, u, px, py):
        x, y, w = frames(q).q[self.start], frames(q).q[self.start + 1], self.spin(q, u)
        return u[self.start] - w * (py - y), u[self.start + 1] + w * (px - x)

    def values(self):
        return ()

    def __repr__(self):
        return self.where


class _NodePoints(_NodePoint):
    """Several beam nodes as one contact point of a group of joints: ``world`` and ``velocity`` give
    arrays, one entry per node (the same formulas as :class:`_NodePoint`, over index arrays)."""

    def __init__(self, starts, where: str):
        super().__init__(np.asarray(starts, dtype=np.int32), where)


class _Stacked:
    """The values of a group of joints' :class:`Value` objects as one array, in the group's order."""

    def __init__(self, values):
        self.values = tuple(values)

    def __call__(self, p):
        return jnp.stack([jnp.asarray(v(p)) for v in self.values])


def _joint_groups(joints):
    """(parts, position): the joints between two beam nodes as one vectorised joint (their rows computed
    as arrays, so the program does not grow with their number), every other joint alone; ``position[i]``
    is joint i's row in the parts' concatenated rows."""
    nodes = [i for i, j in enumerate(joints) if isinstance(j.pin, _NodePoint) and isinstance(j.hole, _NodePoint)]
    if len(nodes) < 2:
        return tuple(joints), np.arange(len(joints))
    group = [joints[i] for i in nodes]
    names = ", ".join(j.name for j in group)
    vectorised = _BeamClearanceJoint(
        names,
        _NodePoints([j.pin.start for j in group], "pins"),
        _NodePoints([j.hole.start for j in group], "holes"),
        _Stacked(j.pin_radius for j in group),
        _Stacked(j.clearance for j in group),
        restitution=None,
        tangential_restitution=None,
        friction=None,
    )
    others = [i for i in range(len(joints)) if i not in set(nodes)]
    order = nodes + others
    position = np.empty(len(joints), dtype=np.int32)
    position[order] = np.arange(len(joints))
    return (vectorised,) + tuple(joints[i] for i in others), position


class _BeamClearanceJoint(ClearanceJoint):
    """:class:`ClearanceJoint` between points that may be beam nodes: the same gap, normal and
    contact points; the slip uses each side's own velocity field (a node's: :class:`_NodePoint`)."""

    def slip(self, q, u, t, p):
        """t · (v_pin − v_hole) at the material contact points, t = (n_y, −n_x)."""
        pa, pb, nx, ny, _ = self._geometry(q, p)
        vax, vay = self.pin.velocity(q, u, *pa)
        vbx, vby = self.hole.velocity(q, u, *pb)
        return ny * (vax - vbx) - nx * (vay - vby)


def _hermite(xi, l):
    """Shape functions (value, d/dx, d²/dx²) of the cubic Hermite element, each (4,)."""
    s = jnp.stack(
        [1 - 3 * xi**2 + 2 * xi**3, l * (xi - 2 * xi**2 + xi**3), 3 * xi**2 - 2 * xi**3, l * (-(xi**2) + xi**3)]
    )
    ds = (
        jnp.stack([-6 * xi + 6 * xi**2, l * (1 - 4 * xi + 3 * xi**2), 6 * xi - 6 * xi**2, l * (-2 * xi + 3 * xi**2)])
        / l
    )
    dds = jnp.stack([-6 + 12 * xi, l * (-4 + 6 * xi), 6 - 12 * xi, l * (-2 + 6 * xi)]) / l**2
    return s, ds, dds


def strains(e, xi, l):
    """(ε, κ) at ξ = x/l of an element with coordinates e = (r_A, r'_A, r_B, r'_B) (8,)."""
    _, ds, dds = _hermite(xi, l)
    E = e.reshape(4, 2)
    r1, r2 = ds @ E, dds @ E
    g = r1 @ r1
    return jnp.stack([0.5 * (g - 1.0), (r1[0] * r2[1] - r1[1] * r2[0]) / g**1.5])


def _element_force(e, v, l, stiff, h):
    """Smoothed elastic force −∫ (stiff · s̄) s_qᵀ dx of one element (8,), s = (ε, κ), stiff = (EA, EI)."""

    def at(xi, w):
        def s(e):
            return strains(e, xi, l)

        G = jax.jacfwd(s)(e)  # (2, 8): ε_q, κ_q
        rate, curv = jax.jvp(lambda e: jax.jvp(s, (e,), (v,))[1], (e,), (v,))  # ε̇ and vᵀε_qq v
        return -w * l * G.T @ (stiff * (s(e) + 0.5 * h * rate + h**2 / 6.0 * curv))

    return jax.vmap(at)(jnp.asarray(GAUSS_XI, e.dtype), jnp.asarray(GAUSS_W, e.dtype)).sum(0)


def _element_mass_increment(e, l, stiff, h):
    """(h²/6) ∫ (EA ε_qᵀε_q + EI κ_qᵀκ_q) dx of one element (8, 8): the ε̈ part of the smoothed stress."""

    def at(xi, w):
        G = jax.jacfwd(strains)(e, xi, l)
        return w * l * h**2 / 6.0 * G.T @ (stiff[:, None] * G)

    dM = jax.vmap(at)(jnp.asarray(GAUSS_XI, e.dtype), jnp.asarray(GAUSS_W, e.dtype)).sum(0)
    return 0.5 * (dM + dM.T)  # symmetric to the last bit: the schemes' Cholesky and the start check need it


def _element_mass_and_weight(l, rho_a, gravity, dtype):
    """Consistent mass ∫ρA SᵀS dx (8, 8) and gravity force ∫ρA Sᵀ g dx (8,) of one element."""
    xi, w = jnp.asarray(GAUSS_XI, dtype), jnp.asarray(GAUSS_W, dtype)
    s = jax.vmap(lambda x: _hermite(x, l)[0])(xi)  # (5, 4)
    S = jnp.einsum("gi,ab->giab", s, jnp.eye(2, dtype=dtype)).reshape(5, 8, 2)  # Sᵀ per point
    M = rho_a * l * jnp.einsum("g,gia,gja->ij", w, S, S)
    F = rho_a * l * jnp.einsum("g,gia,a->i", w, S, gravity)
    return M, F


def _element_index(beam: Beam, offset: int):
    return offset + 4 * np.arange(beam.n_elements)[:, None] + np.arange(8)[None, :]


def straight_beam(beam: Beam, length, start=(0.0, 0.0), angle=0.0):
    """Coordinates (n_dof,) of an undeformed straight beam from ``start`` at ``angle`` (numpy)."""
    c, s = np.cos(angle), np.sin(angle)
    x = np.linspace(0.0, length, beam.n_elements + 1)
    nodes = np.stack([start[0] + c * x, start[1] + s * x, np.full_like(x, c), np.full_like(x, s)], axis=1)
    return nodes.reshape(-1)


def flexible_system(
    beams,
    pins=(),
    *,
    rigid: LagrangianSystem | None = None,
    gravity: str = "g",
    smoothing: str = "h",
    clearances=(),
    compliant_damping: str = "hunt_crossley",
    friction_regularization: str = "exponential",
) -> LagrangianSystem:
    """A LagrangianSystem of (rigid bodies +) smoothed ANCF beams joined by revolute pins and clearance joints.

    Coordinates: the rigid system's q first (if any), then each beam's nodes (x, y, x', y')
    in order. ``gravity`` names the parameter g (acting along −y), ``smoothing`` the window h.
    ``clearances`` (:class:`Clearance`): the rigid ones become the system's ``gaps`` (with slip
    velocities when any has friction), the compliant ones its ``compliant_gaps``, with the laws
    ``compliant_damping`` and ``friction_regularization`` (:class:`LagrangianSystem`).
    The rigid system's own (planar) contacts stay, before the clearance joints. Beam bodies' potential is not
    included (energy: kinetic plus the rigid system's potential plus the compliant contacts' springs).
    """
    beams = tuple(beams)
    if len({b.name for b in beams}) != len(beams):
        raise ValueError(f"beam names must be distinct; got {[b.name for b in beams]}")
    if rigid is not None and (rigid.velocity_map is not None or rigid.tangent_directions != 1):
        raise ValueError("flexible_system: the rigid system must be planar (q̇ = u, planar contacts)")
    if rigid is not None and rigid.compliant_gaps is not None:
        for field, value in (
            ("compliant_damping", compliant_damping),
            ("friction_regularization", friction_regularization),
        ):
            if getattr(rigid, field) != value:
                raise ValueError(
                    f"flexible_system: {field} = {value!r} differs from the rigid system's {getattr(rigid, field)!r}; "
                    "one system has one law for all its compliant contacts"
                )
    n_r = 0 if rigid is None else rigid.n_dof
    offsets, n = {}, n_r
    for b in beams:
        offsets[b.name] = n
        n += b.n_dof
    pins = tuple(pins)
    for pin in pins:
        for b in (pin.beam,) + ((pin.to,) if isinstance(pin.to, Beam) else ()):
            if b not in beams:
                raise ValueError(f"pin {pin}: beam {b.name!r} is not one of the system's beams")
    targets = [
        Point(pin.to if isinstance(pin.to, Body) else Body("ground", None), pin.point, f"pin {i} point")
        for i, pin in enumerate(pins)
    ]

    def node_slice(beam, node):
        node = node % (beam.n_elements + 1)
        start = offsets[beam.name] + 4 * node
        return slice(start, start + 2)

    joints, films = _clearance_joints(tuple(clearances), beams, node_slice, n_r)
    rigid_joints = tuple(j for j in joints if j.compliant is None)
    compliant_joints = tuple(j for j in joints if j.compliant is not None)

    # Every element of every beam at once (one vmap, one scatter): the program's size and its compile time
    # do not grow with the number of beams.
    element_index = np.concatenate([_element_index(b, offsets[b.name]) for b in beams]) if beams else None
    element_beam = np.repeat(np.arange(len(beams)), [b.n_elements for b in beams])

    def beam_parts(q, p):
        """(index (E, 8), length (E,), (EA, EI) (E, 2), consistent mass (E, 8, 8), weight (E, 8)) of the E elements."""
        dt = q.dtype
        g = jnp.asarray([0.0, -1.0], dt) * p[gravity]

        def per_element(field):
            values = jnp.stack([jnp.asarray(b.param(p, field), dt) for b in beams])
            return values[element_beam]

        l = per_element("L") / jnp.asarray([b.n_elements for b in beams], dt)[element_beam]
        rho_a, E = per_element("rho") * per_element("A"), per_element("E")
        stiff = jnp.stack([E * per_element("A"), E * per_element("I")], axis=1)
        Me, Fe = jax.vmap(lambda le, ra: _element_mass_and_weight(le, ra, g, dt))(l, rho_a)
        return element_index, l, stiff, Me, Fe

    def element_masses(q, p):
        """(E, 8, 8): each element's mass matrix with the smoothing's increment."""
        idx, l, stiff, Me, _ = beam_parts(q, p)
        return Me + jax.vmap(lambda e, le, k: _element_mass_increment(e, le, k, p[smoothing]))(q[idx], l, stiff)

    def mass(q, p):
        M = jnp.zeros((n, n), q.dtype)
        if rigid is not None:
            M = M.at[:n_r, :n_r].set(rigid.mass(q[:n_r], p))
        if beams:
            M = M.at[element_index[:, :, None], element_index[:, None, :]].add(element_masses(q, p))
        return M

    def forces(q, u, t, p):
        f = jnp.zeros((n,), q.dtype)
        if rigid is not None:
            f = f.at[:n_r].set(rigid.forces(q[:n_r], u[:n_r], t, p))
        if beams:
            idx, l, stiff, _, Fe = beam_parts(q, p)
            Q = jax.vmap(lambda e, v, le, k: _element_force(e, v, le, k, p[smoothing]))(q[idx], u[idx], l, stiff)
            f = f.at[idx].add(Q + Fe)
        for film in films:
            f = f + film.generalized_force(q, u, p)
        return f

    def constraints(q, t, p):
        rows = [] if rigid is None or rigid.constraints is None else [rigid.constraints(q[:n_r], t, p)]
        for pin, target in zip(pins, targets):
            r = q[node_slice(pin.beam, pin.node)]
            if isinstance(pin.to, Beam):
                other = q[node_slice(pin.to, pin.to_node)]
            else:
                other = jnp.stack([jnp.asarray(c, q.dtype) for c in target.world(q[:n_r], p)])
            rows.append(r - other)
        return jnp.concatenate(rows)

    def stacked(fn, group):
        parts, position = _joint_groups(group)

        def rows(q, *args):
            f = Frames(q)
            out = jnp.concatenate([jnp.reshape(jnp.asarray(fn(c, f, *args), q.dtype), (-1,)) for c in parts])
            return out[position]

        return rows

    def law_rows(group, p, field, default=0.0):
        vals = [default if getattr(c, field) is None else getattr(c, field)(p) for c in group]
        return jnp.stack([jnp.asarray(v, jnp.result_type(float)) for v in vals])

    def laws(p):
        return ContactLaws(
            restitution=law_rows(rigid_joints, p, "restitution"),
            tangential_restitution=law_rows(rigid_joints, p, "tangential_restitution"),
            friction=law_rows(rigid_joints, p, "friction"),
        )

    def compliant_laws(p):
        mu = law_rows(compliant_joints, p, "friction")
        fields = {
            f: jnp.stack([jnp.asarray(c.compliant[f](p), mu.dtype) for c in compliant_joints]) for f in COMPLIANT_FIELDS
        }
        return CompliantLaws(**fields, friction=mu, static_friction=mu)

    def gap(c, f, t, p):
        return c.gap(f, t, p)

    def slip(c, f, u, t, p):
        return c.slip(f, u, t, p)

    # The rigid system's own contacts come first, on its coordinates q[:n_r]; the beams' clearance joints after.
    rigid_gaps = None if rigid is None else rigid.gaps
    rigid_cgaps = None if rigid is None else rigid.compliant_gaps
    contacts = _joined(
        rigid_gaps and (lambda q, t, p: rigid_gaps(q[:n_r], t, p)),
        rigid is not None and rigid.slip_velocity and (lambda q, u, t, p: rigid.slip_velocity(q[:n_r], u[:n_r], t, p)),
        rigid_gaps and rigid.laws,
        rigid_joints and stacked(gap, rigid_joints),
        any(c.friction is not None for c in rigid_joints) and stacked(slip, rigid_joints),
        rigid_joints and laws,
    )
    compliant = _joined(
        rigid_cgaps and (lambda q, t, p: rigid_cgaps(q[:n_r], t, p)),
        rigid is not None
        and rigid.compliant_slip_velocity
        and (lambda q, u, t, p: rigid.compliant_slip_velocity(q[:n_r], u[:n_r], t, p)),
        rigid_cgaps and rigid.compliant_laws,
        compliant_joints and stacked(gap, compliant_joints),
        any(c.friction is not None for c in compliant_joints) and stacked(slip, compliant_joints),
        compliant_joints and compliant_laws,
    )
    contact_names = tuple(c.name for c in rigid_joints)
    # Each clearance joint's gap reads the two points it joins alone: its row's pattern (the projections'
    # sparse rows); not declared when the rigid system has contacts of its own.
    gap_columns = tuple(_point_columns(c.pin) + _point_columns(c.hole) for c in rigid_joints)
    # A slip reads the two points' velocities and spins: a node's slope rates too (its section's turn rate).
    slip_columns = tuple(_point_columns(c.pin, spin=True) + _point_columns(c.hole, spin=True) for c in rigid_joints)
    if rigid_gaps is not None:  # names for all rows or for none
        contact_names = rigid.contact_names + contact_names if rigid.contact_names else ()

    has_constraints = bool(pins) or (rigid is not None and rigid.constraints is not None)
    potential = None if rigid is None or rigid.potential is None else (lambda q, t, p: rigid.potential(q[:n_r], t, p))
    names = rigid.names if rigid is not None and rigid.names else tuple(f"q{i}" for i in range(n_r))
    names += tuple(f"{b.name}[{j}].{c}" for b in beams for j in range(b.n_elements + 1) for c in ("x", "y", "dx", "dy"))
    # M is block diagonal: a beam's inertia couples only its own nodes (pins and clearance joints are
    # constraints and contacts, not shared coordinates); the rigid bodies keep their own structure.
    if rigid is None:
        rigid_blocks = ()
    elif rigid.diagonal_mass:
        rigid_blocks = tuple((i,) for i in range(n_r))
    else:
        rigid_blocks = rigid.mass_blocks or (tuple(range(n_r)),)
    beam_blocks = tuple(tuple(range(offsets[b.name], offsets[b.name] + b.n_dof)) for b in beams)
    mass_block_values = _block_masses(rigid, rigid_blocks, beams, element_beam, element_masses)
    return LagrangianSystem(
        n_dof=n,
        mass=mass,
        forces=forces,
        constraints=constraints if has_constraints else None,
        potential=potential,
        names=names,
        gaps=contacts[0],
        gap_columns=gap_columns if rigid_joints and rigid_gaps is None else None,
        slip_columns=slip_columns if contacts[1] and rigid_joints and rigid_gaps is None else None,
        slip_velocity=contacts[1],
        laws=contacts[2],
        contact_names=contact_names,
        compliant_gaps=compliant[0],
        compliant_slip_velocity=compliant[1],
        compliant_laws=compliant[2],
        compliant_damping=compliant_damping,
        friction_regularization=friction_regularization,
        mass_blocks=rigid_blocks + beam_blocks,
        mass_block_values=mass_block_values,
        viscous=_viscous(rigid, films),
    )


def _point_columns(point, spin: bool = False) -> tuple[int, ...]:
    """The coordinates a joint's point's place reads: a node's x and y, a rigid body's x, y and θ, none for the
    ground; ``spin``: its velocity's, which for a node reads its slope's x' and y' too."""
    if isinstance(point, _NodePoint):
        return tuple(range(point.start, point.start + (4 if spin else 2)))
    if point.body.is_ground:
        return ()
    return tuple(range(3 * point.body.index, 3 * point.body.index + 3))


def _block_masses(rigid, rigid_blocks, beams, element_beam, element_masses):
    """M's blocks without M (``LagrangianSystem.mass_block_values``), grouped as ``mass_block_groups`` groups
    ``rigid_blocks`` followed by one block per beam: the rigid system's read from its own (small) M, each beam's
    summed from its elements' matrices. Linear in the number of beams, where assembling M grows as n²."""
    plans = []  # per block size: the rigid blocks' indices, and each of its beams' elements, slot and local indices
    element_of_beam = np.concatenate([np.arange(b.n_elements) for b in beams]) if beams else np.zeros(0, int)
    for size in sorted({len(b) for b in rigid_blocks} | {b.n_dof for b in beams}):  # mass_block_groups' order
        rigid_idx = np.asarray([b for b in rigid_blocks if len(b) == size], np.int32).reshape(-1, size)
        sized = [i for i, b in enumerate(beams) if b.n_dof == size]
        elements = np.flatnonzero(np.isin(element_beam, sized))
        slot = np.searchsorted(sized, element_beam[elements])
        local = 4 * element_of_beam[elements][:, None] + np.arange(8)[None, :]
        plans.append((size, rigid_idx, len(sized), elements, slot, local))

    def values(q, p):
        M_r = rigid.mass(q[: rigid.n_dof], p) if rigid is not None else None
        K_e = element_masses(q, p) if beams else None
        out = []
        for size, rigid_idx, n_beams, elements, slot, local in plans:
            parts = [M_r[rigid_idx[:, :, None], rigid_idx[:, None, :]]] if rigid_idx.size else []
            if n_beams:
                Z = jnp.zeros((n_beams, size, size), q.dtype)
                parts.append(Z.at[slot[:, None, None], local[:, :, None], local[:, None, :]].add(K_e[elements]))
            out.append(jnp.concatenate(parts))
        return tuple(out)

    return values


def _viscous(rigid, films):
    """The viscous forces of the rigid system's coordinates q[:n_r] (its own lubricated journals) and of the
    clearance joints' films, stacked in that order; None without any."""
    own = film_forces(films) if films else None
    first = None if rigid is None else rigid.viscous
    if first is None:
        return own
    if own is None:
        return RowForces(
            lambda q, u, p: first.velocities(q[: rigid.n_dof], u[: rigid.n_dof], p),
            lambda q, w, p: first.law(q[: rigid.n_dof], w, p),
        )
    n_r = rigid.n_dof

    def velocities(q, u, p):
        return jnp.concatenate([first.velocities(q[:n_r], u[:n_r], p), own.velocities(q, u, p)])

    def law(q, w, p):
        k = jax.eval_shape(first.velocities, q[:n_r], q[:n_r], p).shape[0]
        return jnp.concatenate([first.law(q[:n_r], w[:k], p), own.law(q, w[k:], p)])

    return RowForces(velocities, law)


def _joined(gaps_a, slip_a, laws_a, gaps_b, slip_b, laws_b):
    """(gaps, slip velocity, laws) of two groups of contacts (a first), each group's parts a function or a falsy
    value for none; a group without slip velocities slips at zero (frictionless rows), laws are concatenated
    field by field (a missing static friction is the dynamic one)."""
    gaps_a, slip_a, laws_a = gaps_a or None, slip_a or None, laws_a or None
    gaps_b, slip_b, laws_b = gaps_b or None, slip_b or None, laws_b or None
    if gaps_a is None or gaps_b is None:
        return (gaps_a, slip_a, laws_a) if gaps_b is None else (gaps_b, slip_b, laws_b)

    def gaps(q, t, p):
        return jnp.concatenate([gaps_a(q, t, p), gaps_b(q, t, p)])

    def slip(q, u, t, p):
        a = slip_a(q, u, t, p) if slip_a is not None else jnp.zeros_like(gaps_a(q, t, p))
        b = slip_b(q, u, t, p) if slip_b is not None else jnp.zeros_like(gaps_b(q, t, p))
        return jnp.concatenate([a, b])

    def laws(p):
        la, lb = laws_a(p), laws_b(p)
        fields = {}
        for f in la._fields:
            va, vb = getattr(la, f), getattr(lb, f)
            if f == "static_friction":
                if va is None and vb is None:
                    fields[f] = None
                    continue
                va = la.friction if va is None else va
                vb = lb.friction if vb is None else vb
            fields[f] = jnp.concatenate([jnp.atleast_1d(va), jnp.atleast_1d(vb)])
        return type(la)(**fields)

    return gaps, (slip if slip_a is not None or slip_b is not None else None), laws


class _Film(LubricatedJournal):
    """The oil film of a lubricated clearance joint between a pin and a hole that may be beam nodes: the rigid
    journal's force at the pin centre, its opposite at the hole centre, as generalized forces by the virtual work
    of the two centres' motion."""

    def generalized_force(self, q, u, p):
        fx, fy = self.force(q, u, p)
        push = jnp.stack([jnp.asarray(fx, q.dtype), jnp.asarray(fy, q.dtype)])
        _, pull = jax.vjp(lambda x: (jnp.stack(self.pin.world(x, p)), jnp.stack(self.hole.world(x, p))), q)
        return pull((push, -push))[0]


def _clearance_joints(clearances, beams, node_slice, n_rigid):
    """The :class:`Clearance` specs as :class:`ClearanceJoint` elements on the flexible system's q, and the
    lubricated ones' films (:class:`_Film`)."""
    names = [c.name for c in clearances]
    if len(set(names)) != len(names):
        raise ValueError(f"clearance joint names must be distinct; got {names}")
    joints, films = [], []
    for c in clearances:
        where = f"clearance joint {c.name!r}"
        if not isinstance(c, Clearance):
            raise ValueError(f"{c!r} is not a jaxcontact.smoothing.beam.Clearance")
        for b in (c.beam,) + ((c.to,) if isinstance(c.to, Beam) else ()):
            if b not in beams:
                raise ValueError(f"{where}: beam {b.name!r} is not one of the system's beams")
        if isinstance(c.to, Body) and not c.to.is_ground and 3 * c.to.index + 3 > n_rigid:
            raise ValueError(f"{where}: body {c.to.name!r} is not a body of the rigid system")
        node = _NodePoint(node_slice(c.beam, c.node).start, f"{c.beam.name}[{c.node}]")
        if isinstance(c.to, Beam):
            other = _NodePoint(node_slice(c.to, c.to_node).start, f"{c.to.name}[{c.to_node}]")
        else:
            other = Point(c.to if isinstance(c.to, Body) else Body("ground", None), c.point, f"{where} point")
        pin, hole = (node, other) if c.pin_on_beam else (other, node)
        compliant = None
        if c.compliant is not None:
            spec = {**COMPLIANT_DEFAULTS, **c.compliant}
            compliant = {f: Value(spec[f], f"{where} {f}") for f in COMPLIANT_FIELDS}
        radius, clearance = Value(c.pin_radius, f"{where} pin_radius"), Value(c.clearance, f"{where} clearance")
        joints.append(
            _BeamClearanceJoint(
                c.name,
                pin,
                hole,
                radius,
                clearance,
                restitution=None if c.restitution is None else Value(c.restitution, f"{where} restitution"),
                tangential_restitution=None,
                friction=None if c.friction is None else Value(c.friction, f"{where} friction"),
                compliant=compliant,
            )
        )
        if c.lubrication is not None:
            spec = {**LUBRICATION_DEFAULTS, **c.lubrication}
            films.append(
                _Film(
                    f"{c.name}_film",
                    pin,
                    hole,
                    radius,
                    clearance,
                    *(Value(spec[f], f"{where} {f}") for f in ("viscosity", "length", "threshold")),
                    spec["film"],
                )
            )
    return tuple(joints), tuple(films)


def flexible_double_pendulum(n_elements: int = 2, h: float = 0.0):
    """Double pendulum: two steel beams pinned to the ground and to each other, released from horizontal.

    ρ = 7801 kg/m³, E = 2.1e11 Pa, L = 1.8 m, A = 2.5e-3 m² as published; the second moment of
    area is not published: we take a square section, I = A²/12 = 5.2e-7 m⁴. g = 9.81 m/s².
    Returns ``(system, params, y0)`` with y0 = (q0, 0): beam 1 from (0, 0) to (L, 0), beam 2 on to (2L, 0).
    """
    b1, b2 = Beam("beam1", n_elements), Beam("beam2", n_elements)
    system = flexible_system([b1, b2], [Pin(b1, 0), Pin(b2, 0, b1, -1)])
    p = {"g": 9.81, "h": h}
    for b in ("beam1", "beam2"):
        p.update({f"{b}_rho": 7801.0, f"{b}_E": 2.1e11, f"{b}_A": 2.5e-3, f"{b}_I": 2.5e-3**2 / 12, f"{b}_L": 1.8})
    params = {k: jnp.asarray(v, jnp.result_type(float)) for k, v in p.items()}
    q0 = np.concatenate([straight_beam(b1, 1.8), straight_beam(b2, 1.8, start=(1.8, 0.0))])
    return system, params, jnp.asarray(np.concatenate([q0, np.zeros_like(q0)]), jnp.result_type(float))
