"""Planar arm of N flexible links (ANCF beams) joined by N clearance revolute joints, driven at its base.

A chain in the vertical plane (gravity along −y): a rigid hub turns about the origin with a prescribed
angle θ(t) = ``drive_amplitude`` (1 − cos(``drive_omega`` t)) (a smooth start: θ = θ̇ = 0 at t = 0); a pin
at the hub's local point (0, −``hub_r``) carries link 1, and each link k + 1 hangs on the end of link k.
Every link is a planar ANCF Euler–Bernoulli beam of ``n_elements`` elements
(:mod:`jaxcontact.smoothing.beam`) named ``link1 … linkN``; all share the properties ``link_L``,
``link_rho``, ``link_E``, ``link_A``, ``link_I``. Joint k is a clearance revolute joint: a pin of radius
``pin_radius`` at the end of link k − 1 (the hub for k = 1) in a hole of radius ``pin_radius`` +
``clearance_k`` at the start node of link k, so a study can vary each joint's clearance. Coordinates: the
hub (x, y, θ), then each link's nodes (x, y, x', y') from its start to its end.

Joint laws:

* "rigid": Newton restitution and Coulomb friction, for Moreau–Jean (the default; dt 2e-5 s);
* "compliant": Hertz K δ^1.5 (K of each joint from its own clearance, steel pin and hole) with
  Hunt–Crossley damping matched to the restitution at 0.5 m/s, regularized friction, for the penalty
  scheme (dt 1e-6 s);
* "lubricated": the compliant joints filled with oil: the short-bearing π-film force between each pin and
  hole centre (:class:`jaxcontact.smoothing.beam.Clearance` ``lubrication``; ``viscosity``,
  ``bearing_length``, ``film_threshold``), the compliant contact once the film breaks, for the penalty
  scheme, linearly implicit in the films and the dry contacts (dt 1e-6 s); registered as
  ``flexible-arm-6-lubricated``. Its joints' contacts are the dry ones: in its study ``peak_force:joint_k``
  is the dry contact's largest force and ``free_flight:joint_k`` the share of steps without dry contact
  (the film's own force is not among the outcomes);
* "ideal": plain pins (no clearance), the arm the clearance arms are compared with.

Values. Aluminium links (ρ = 2700 kg/m³, E = 70 GPa), 0.1 m long, a 10 mm (in the plane) × 5 mm section
(A = 5e-5 m², I = 4.17e-10 m⁴, EI = 29 N·m²; a link weighs 13.5 g); steel pins of radius 5 mm, clearance
0.1 mm each, restitution 0.8, friction 0.05; in the lubricated joints an oil of
viscosity 0.04 Pa·s (as ``slider-crank-lubricated``) over the link's 5 mm thickness (the bearing length), the
film breaking from an eccentricity ratio of 0.95. The hub's pin radius 0.05 m, drive amplitude 0.3 rad at
10 rad/s: the hub's pin accelerates at up to r A ω² = 1.5 m/s², below g, so the hanging arm keeps its joints
loaded nearly all the time and its outer joints fly free only now and then in a long run. At
``drive_omega`` = 40 rad/s (24 m/s², beyond g) the drive unloads the joints within the first drive period and
throws the pins into free flight and impacts.

Model smoothing as in ``flexible-slider-crank``: the links' strains in the stress are means over a
window ``smoothing`` (default 8e-5 s, four Moreau–Jean steps; 0 for the compliant variant's 1 µs step),
which turns the links' axial modes (≈ 1.6e5 rad/s) and bending modes (≈ 3e4 rad/s) into modes of
frequency ≤ √6 / window ≈ 3e4 rad/s, which the explicit force evaluation at dt = 2e-5 s follows, and
leaves the swinging arm (a few rad/s) unchanged.

The arm starts at rest, straight, at an angle ``theta0`` from the downward vertical about the hub's
pin (0: hanging), the hub at θ = 0; each hole rests on its pin, its centre ``clearance_k`` from the pin's
centre along the arm (every joint in contact, gap 0): the hanging arm's equilibrium.
"""

from __future__ import annotations

import dataclasses
import functools

import jax.numpy as jnp
import numpy as np

from jaxcontact.contact_laws import restitution_damping
from jaxcontact.models import DefaultStudy, Model
from jaxcontact.models.slider_crank import REFERENCE_IMPACT_SPEED, hertz_cylinder_stiffness
from jaxcontact.params import ParamTable, law_rule
from jaxcontact.planar import Mechanism
from jaxcontact.smoothing.beam import Beam, Clearance, Pin, flexible_system

CONTACTS = ("rigid", "compliant", "lubricated", "ideal")
FILM = ("viscosity", "bearing_length", "film_threshold")
LINK_FIELDS = ("L", "rho", "E", "A", "I")
SMOOTHING = {"rigid": 8e-5, "compliant": 0.0, "lubricated": 0.0, "ideal": 8e-5}
# The oil's squeeze film stiffens as μ/c³ and the dry joints' regularized friction acts on the nodes' light slopes:
# the penalty scheme steps the lubricated arm linearly implicitly in both (``Penalty(implicit=None)`` does so for a
# system with films), at the compliant joints' step; a study's step check flags the samples for which it is too
# coarse.
DT = {"rigid": 2e-5, "compliant": 1e-6, "lubricated": 1e-6, "ideal": 2e-5}
MAX_LINKS = 200

BASE_DEFAULTS = {
    "hub_m": 1.0,
    "hub_J": 1e-3,
    "hub_r": 0.05,
    "drive_amplitude": 0.3,
    "drive_omega": 10.0,
    "theta0": 0.0,
    "g": 9.81,
    "link_L": 0.1,
    "link_rho": 2700.0,
    "link_E": 70e9,
    "link_A": 5e-5,
    "link_I": 0.005 * 0.01**3 / 12.0,
    "smoothing": SMOOTHING["rigid"],
    "pin_radius": 5e-3,
    "restitution": 0.8,
    "friction": 0.05,
    "exponent": 1.5,
    "slip_width": 1e-3,
    "viscosity": 0.04,
    "bearing_length": 0.005,
    "film_threshold": 0.95,
}
DEFAULT_CLEARANCE = 1e-4
_POSITIVE = ("hub_m", "hub_J", "hub_r", "link_L", "link_rho", "link_E", "link_A", "link_I", "pin_radius")
UNITS = {
    "hub_m": "kg",
    "hub_J": "kg·m²",
    "hub_r": "m",
    "drive_amplitude": "rad",
    "drive_omega": "rad/s",
    "theta0": "rad",
    "g": "m/s²",
    "link_L": "m",
    "link_rho": "kg/m³",
    "link_E": "Pa",
    "link_A": "m²",
    "link_I": "m⁴",
    "smoothing": "s",
    "pin_radius": "m",
    "restitution": "1",
    "friction": "1",
    "exponent": "1",
    "slip_width": "m/s",
    "viscosity": "Pa·s",
    "bearing_length": "m",
    "film_threshold": "1",
}


def _check_size(n_links, n_elements):
    if not isinstance(n_links, int) or isinstance(n_links, bool) or not 1 <= n_links <= MAX_LINKS:
        raise ValueError(f"n_links = {n_links!r} must be an int in [1, {MAX_LINKS}]")
    if not isinstance(n_elements, int) or isinstance(n_elements, bool) or n_elements not in (1, 2):
        raise ValueError(f"n_elements = {n_elements!r} must be 1 or 2 (ANCF elements per link)")


@functools.cache
def table(n_links: int) -> ParamTable:
    """The parameter table of the arm of ``n_links`` links: the shared values and ``clearance_1 … clearance_N``."""
    clearances = {f"clearance_{k}": DEFAULT_CLEARANCE for k in range(1, n_links + 1)}
    rules = {
        **{k: (lambda v: v > 0, "> 0") for k in _POSITIVE + ("exponent", "slip_width") + tuple(clearances)},
        **{k: (lambda v: v >= 0, ">= 0") for k in ("friction", "smoothing", "g")},
        "drive_amplitude": (lambda v: abs(v) <= np.pi, "in [-pi, pi]"),
        "drive_omega": (lambda v: v >= 0, ">= 0"),
        "theta0": (lambda v: abs(v) <= np.pi / 2, "in [-pi/2, pi/2]"),
        "restitution": law_rule("restitution"),
        "viscosity": (lambda v: v > 0, "> 0"),
        "bearing_length": (lambda v: v > 0, "> 0"),
        "film_threshold": (lambda v: (v > 0) & (v < 1), "in (0, 1)"),
    }
    units = {**UNITS, **{k: "m" for k in clearances}}
    bounds = {"viscosity": (0.0, np.inf), "film_threshold": (0.0, 1.0)}
    return ParamTable.of({**BASE_DEFAULTS, **clearances}, rules, units=units, bounds=bounds)


def _hub():
    """The driven hub: a rigid body turning about the origin, θ(t) = A (1 − cos ω t)."""
    mech = Mechanism("flexible-arm")
    hub = mech.body("hub", mass="hub_m", inertia="hub_J")
    mech.revolute(hub, (0.0, 0.0), name="hub_pivot")
    mech.driver(hub, "theta", "drive_amplitude*(1-cos(drive_omega*t))", name="drive")
    mech.gravity("g")
    return mech, hub


def _compliant_law(k):
    """Hertz stiffness of joint k from its own clearance (steel pin and hole), damping matched to the restitution."""

    def stiffness(p):
        return hertz_cylinder_stiffness(p["pin_radius"], p[f"clearance_{k}"])

    def damping(p):
        return restitution_damping(stiffness(p), p["restitution"], REFERENCE_IMPACT_SPEED)

    return dict(stiffness=stiffness, exponent="exponent", damping=damping, slip_width="slip_width")


def _with_link_parameters(system, n_links):
    """The system whose mass and forces read the shared ``link_*`` values as every beam's ``link<k>_*``."""
    names = [(f"link{k}_{f}", f"link_{f}") for k in range(1, n_links + 1) for f in LINK_FIELDS]

    def expand(p):
        return {**p, **{each: p[shared] for each, shared in names}}

    mass, blocks, forces = system.mass, system.mass_block_values, system.forces
    return dataclasses.replace(
        system,
        mass=lambda q, p: mass(q, expand(p)),
        mass_block_values=lambda q, p: blocks(q, expand(p)),
        forces=lambda q, u, t, p: forces(q, u, t, expand(p)),
    )


@functools.cache
def system(contact: str = "rigid", n_links: int = 6, n_elements: int = 1):
    """The LagrangianSystem (one object per (contact, n_links, n_elements): compiled programs are shared)."""
    if contact not in CONTACTS:
        raise ValueError(f"contact = {contact!r} must be one of {CONTACTS}")
    _check_size(n_links, n_elements)
    mech, hub = _hub()
    rigid, _ = mech.build({k: BASE_DEFAULTS[k] for k in ("hub_m", "hub_J", "drive_amplitude", "drive_omega", "g")})
    links = [Beam(f"link{k}", n_elements) for k in range(1, n_links + 1)]
    pins, clearances = [], []
    for k, link in enumerate(links, start=1):
        # The other side of joint k: the hub's pin, or the end node of link k − 1.
        other = dict(to=hub, point=(0.0, "-hub_r")) if k == 1 else dict(to=links[k - 2], to_node=-1)
        if contact == "ideal":
            pins.append(Pin(link, 0, **other))
            continue
        law = dict(restitution="restitution") if contact == "rigid" else dict(compliant=_compliant_law(k))
        if contact == "lubricated":
            law["lubrication"] = dict(viscosity="viscosity", length="bearing_length", threshold="film_threshold")
        clearances.append(
            Clearance(
                f"joint_{k}",
                link,
                0,
                **other,
                pin_radius="pin_radius",
                clearance=f"clearance_{k}",
                pin_on_beam=False,
                friction="friction",
                **law,
            )
        )
    flex = flexible_system(links, pins, rigid=rigid, gravity="g", smoothing="smoothing", clearances=clearances)
    if contact in ("compliant", "lubricated"):
        # No rigid contacts: the penalty scheme's impulse rows are the compliant joints, named so that the
        # study's per-joint outcomes (free_flight:joint_k, …) read the same joints in both variants.
        flex = dataclasses.replace(flex, contact_names=tuple(c.name for c in clearances))
    return _with_link_parameters(flex, n_links)


def _used_parameters(contact, n_links):
    common = set(_POSITIVE) - {"pin_radius"} | {"drive_amplitude", "drive_omega", "theta0", "g", "smoothing"}
    if contact == "ideal":
        return common
    joint = common | {"pin_radius", "friction", "restitution"} | {f"clearance_{k}" for k in range(1, n_links + 1)}
    if contact == "rigid":
        return joint
    return joint | {"exponent", "slip_width"} | (set(FILM) if contact == "lubricated" else set())


def initial_state(p, n_links: int = 6, n_elements: int = 1):
    """At rest, the hub at θ = 0, the arm straight at ``theta0`` from the downward vertical about the hub's pin,
    each hole resting on its pin: its centre ``clearance_k`` from the pin's centre along the arm (gap 0)."""
    th0, L, r = p["theta0"], p["link_L"], p["hub_r"]
    z = jnp.zeros_like(L)
    d = jnp.stack([jnp.sin(th0), -jnp.cos(th0)])  # unit vector along the arm, from the hub outward
    gaps = jnp.stack([p.get(f"clearance_{k}", z) for k in range(1, n_links + 1)])
    # Start of link k: the hub's pin + (k − 1) link lengths + the clearances of joints 1 … k, along d.
    offset = jnp.arange(n_links, dtype=L.dtype) * L + jnp.cumsum(gaps)
    s = jnp.linspace(0.0, 1.0, n_elements + 1, dtype=L.dtype)
    along = offset[:, None] + s[None, :] * L  # (n_links, nodes)
    x = along * d[0]
    y = -r + along * d[1]
    nodes = jnp.stack([x, y, jnp.broadcast_to(d[0], x.shape), jnp.broadcast_to(d[1], x.shape)], axis=-1)
    q0 = jnp.concatenate([jnp.stack([z, z, z]), nodes.reshape(-1)])
    return q0, jnp.zeros_like(q0)


def tip(q, n_links: int, n_elements: int = 1):
    """(x, y) of the end-effector: the last link's end node."""
    i = 3 + 4 * (n_elements + 1) * n_links - 4
    return q[..., i], q[..., i + 1]


# The registered ideal-joint arm of each size: the reference of the clearance arm's tip path.
IDEAL_ARMS = {6: "flexible-arm-6-ideal"}


def _references(n_links):
    """The registered ideal-joint arm of this size, by name: what the default study's path outcomes compare with."""
    ideal = IDEAL_ARMS.get(n_links)
    return {ideal: functools.partial(model, "ideal", n_links)} if ideal else {}


# Per-joint outcomes up to this many joints; a longer arm's study reads all joints together.
PER_JOINT_MAX = 12


def _study_outcomes(n_links):
    """Each joint's peak force and free flight (its pin off the hole's wall: no contact impulse), the tip's distance
    from the ideal-joint arm's tip over time (RMS and max; the ideal arm simulated once on the study's grid), the
    impacts, and the tip's path."""
    if n_links <= PER_JOINT_MAX:
        joints = range(1, n_links + 1)
        per_joint = (*(f"peak_force:joint_{k}" for k in joints), *(f"free_flight:joint_{k}" for k in joints))
    else:
        per_joint = ("peak_force", "free_flight")
    ideal = IDEAL_ARMS.get(n_links)
    path = (f"path_rms:tip_x,tip_y@{ideal}", f"path_max:tip_x,tip_y@{ideal}") if ideal else ()
    return (*per_joint, *path, "impacts", "series:tip_x", "series:tip_y")


# The default study: each joint's clearance (0.05 to 0.3 mm), the joints' restitution and friction (320 samples:
# Sobol indices of the 6-link arm's 8 parameters); the rigid joints by Moreau–Jean, 0.5 s of motion. The study drives
# the hub at 40 rad/s (its pin accelerates at up to r A ω² = 24 m/s², beyond g), which unloads the joints and throws
# the pins into free flight and impacts; at the model's default 10 rad/s (1.5 m/s², below g) the hanging arm keeps
# its joints closed over this horizon and every free-flight outcome would be 0.
STUDY_DRIVE_OMEGA = 40.0


def _study(n_links):
    return DefaultStudy(
        params=tuple(f"clearance_{k}=uniform(5e-5,3e-4)" for k in range(1, n_links + 1))
        + ("restitution=uniform(0.5,0.95)", "friction=uniform(0.01,0.1)"),
        outcomes=_study_outcomes(n_links),
        n=320,
        dt=DT["rigid"],
        t_final=0.5,
        save_every=250,
        scheme="moreau-jean",
        overrides={"drive_omega": STUDY_DRIVE_OMEGA},
    )


VARIANTS = {"rigid": {"contact": "rigid"}, "compliant": {"contact": "compliant"}}
LUBRICATED_VARIANTS = {"compliant": {"contact": "lubricated"}}


# The lubricated arm's study: each joint's clearance, the oil's viscosity and the dry contact's restitution, by the
# penalty scheme at the lubricated joints' step, the same drive and as many samples as the rigid joints' study (the
# Saltelli design's 32 base rows for Sobol indices of 8 parameters); its step is twenty times smaller, so its
# horizon is a tenth: the first third of the drive's period, over which the outer joints begin to fly free. Its
# clearances start at 0.08 mm: below, in thick oil, the film's damping changes by orders of magnitude within a
# step near its breakdown threshold, and the joints ring at any step the study can afford.
LUBRICATED_HORIZON = 0.05
LUBRICATED_CLEARANCE = "uniform(8e-5,3e-4)"


def _lubricated_study(n_links):
    clearances = tuple(f"clearance_{k}={LUBRICATED_CLEARANCE}" for k in range(1, n_links + 1))
    return _study(n_links)._replace(
        params=clearances + ("viscosity=uniform(0.02,0.08)", "restitution=uniform(0.5,0.95)"),
        dt=DT["lubricated"],
        t_final=LUBRICATED_HORIZON,
        save_every=500,
        scheme="penalty",
    )


def model(contact: str = "rigid", n_links: int = 6, n_elements: int = 1, **overrides) -> Model:
    """The arm of ``n_links`` flexible links and as many joints: by default rigid clearance joints (Moreau–Jean);
    ``contact="compliant"`` the penalty variant (Hertz stiffness from each joint's clearance, damping from the
    restitution), ``"ideal"`` plain pins. ``n_elements``: ANCF elements per link (1 or 2)."""
    if contact not in CONTACTS:
        raise ValueError(f"contact = {contact!r} must be one of {CONTACTS}")
    _check_size(n_links, n_elements)
    sys_ = system(contact, n_links, n_elements)
    tab = table(n_links)
    if "smoothing" not in overrides:
        overrides = {**overrides, "smoothing": SMOOTHING[contact]}
    params = {k: v for k, v in tab.apply(overrides).items() if k in _used_parameters(contact, n_links)}
    observables = {
        "tip_x": lambda q, p: tip(q, n_links, n_elements)[0],
        "tip_y": lambda q, p: tip(q, n_links, n_elements)[1],
    }
    if contact != "ideal":
        # Joint k's gap c_k − ‖e_k‖ as the system's joint k computes it: positive while the pin flies free in its hole.
        gaps = sys_.gaps if contact == "rigid" else sys_.compliant_gaps
        observables.update(
            {
                f"joint_gap_{k}": functools.partial(lambda q, p, k: gaps(q, 0.0, p)[k - 1], k=k)
                for k in range(1, n_links + 1)
            }
        )
    joints = "ideal revolute pins" if contact == "ideal" else f"{contact} clearance revolute joints"
    lubricated = contact == "lubricated"
    if lubricated:
        study, variants = _lubricated_study(n_links), LUBRICATED_VARIANTS
    else:
        study, variants = (_study(n_links), VARIANTS) if contact != "ideal" else (None, {})
    return Model(
        f"flexible-arm-{n_links}" + ("-lubricated" if lubricated else ""),
        sys_,
        params,
        functools.partial(initial_state, n_links=n_links, n_elements=n_elements),
        dt=DT[contact],
        t_final=20.0,
        description=f"Planar arm of {n_links} flexible links (aluminium ANCF beams of {n_elements} element(s), model "
        f"smoothing of their stiff modes) joined by {n_links} {joints} (joint k: a pin of radius pin_radius in a "
        "hole of radius pin_radius + clearance_k at link k's start), hanging in gravity from a hub driven at "
        "θ = drive_amplitude (1 − cos(drive_omega t)).",
        observables=observables,
        table=tab,
        study=study,
        variants=variants,
        references=_references(n_links) if contact != "ideal" else {},
    )


def arm6(contact: str = "rigid", **overrides) -> Model:
    """Flexible arm of 6 ANCF links with 6 clearance revolute joints, driven at its base (``model(n_links=6)``)."""
    return model(contact, 6, **overrides)


def arm60(contact: str = "rigid", **overrides) -> Model:
    """Flexible arm of 60 ANCF links with 60 clearance revolute joints, driven at its base (``model(n_links=60)``)."""
    return model(contact, 60, **overrides)


def lubricated6(contact: str = "lubricated", **overrides) -> Model:
    """The 6-link arm whose clearance joints are lubricated (π film; compliant dry contact once it breaks)."""
    return model(contact, 6, **overrides)


def ideal6(contact: str = "ideal", **overrides) -> Model:
    """The 6-link arm with ideal revolute pins (no clearance), to compare with ``flexible-arm-6``."""
    return model(contact, 6, **overrides)
