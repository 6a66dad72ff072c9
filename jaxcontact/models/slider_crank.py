"""Slider–crank with a revolute clearance joint between crank and connecting rod (Flores et al.).

Bodies: crank (1), connecting rod (2), slider (3); q = (x, y, θ) of each centre
of mass. The crank turns about the origin at a constant speed (driver
θ1 = ω t), the rod's far end is pinned to the slider, the slider runs on the
x-axis (prismatic joint). The crank–rod joint is either

* "ideal": a perfect revolute joint (the reference mechanism);
* "compliant": a pin (radius r_p, at the rod's end) in a hole of radius
  r_p + c (at the crank's tip) with Hertz contact K δ^1.5 and Hunt–Crossley
  damping, regularized Coulomb friction — for the penalty scheme (docs/theory/compliant.md);
* "rigid": the same pin and hole with Newton restitution and Coulomb friction
  — for Moreau–Jean impacts (docs/theory/moreau-jean.md).
* "lubricated": the same pin and hole filled with oil — the hydrodynamic force
  of a short journal bearing with a π film (Pinkus–Sternlicht;
  :meth:`jaxcontact.planar.Mechanism.lubricated_journal`), and the compliant
  contact of "compliant" as the dry contact once the film breaks (eccentricity
  ratio beyond ``film_threshold``) — for the penalty scheme
  (docs/theory/compliant.md, "Lubricated journal").

Values. Geometry, masses and inertias are those of the slider–crank studied
by Flores and Ambrósio (Computers & Structures 82, 2004) and in Flores et al.,
"Kinematics and Dynamics of Multibody Systems with Imperfect Joints"
(Springer, 2008), as we recall them: crank 0.05 m, rod 0.12 m; masses 0.30,
0.21, 0.14 kg; inertias 1e-4, 2.5e-4, 1e-4 kg m²; journal radius 10 mm,
clearance 0.5 mm, restitution 0.9, friction 0.01, steel (E = 207 GPa,
ν = 0.3). They put the clearance in the rod–slider joint; here it sits in
the crank–rod joint, as our issue asks. Our choices: the crank speed is
ω = 200 rad/s (Flores used 5000 rpm ≈ 524 rad/s; lower keeps the explicit
step affordable in the tests — override ``omega``), gravity 9.81 m/s² along
−y, and the contact stiffness from Hertz for a cylinder in a cylindrical
hole as the clearance-joint literature does (Lankarani–Nikravesh form):
K = (4/3) R^½ / (σ_pin + σ_hole), σ = (1 − ν²)/E, R = r_p r_h / (r_h − r_p),
which gives K ≈ 6.9e10 N/m^1.5 at c = 0.5 mm. The Hunt–Crossley damping c is
matched (exactly, :func:`jaxcontact.contact_laws.restitution_damping`) to
ε = 0.9 at a reference impact speed of 0.5 m/s; the effective restitution of
other impacts differs (Hunt–Crossley ε depends on the impact speed). The
regularized friction width is 1e-3 m/s.

Lubricated joint: oil viscosity μ = 0.04 Pa·s (an SAE 30 engine oil near
60 °C), bearing length L = 40 mm (the length of this journal in Flores et al.'s
lubricated-joint studies, as we recall), film threshold ε_t = 0.95 (the film
force is capped at its value there and faded out by ε = 1). Over the same
horizon the film keeps the journal off the wall: no dry impacts where the
compliant joint has dozens (``tests/planar/test_lubricated_journal.py``).

The crank starts at θ1 = 0 (dead centre, every body on the x-axis) with the
velocities of the ideal mechanism at crank speed ω; the pin starts centred
in the hole.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxcontact.contact_laws import restitution_damping
from jaxcontact.models import DefaultStudy, Model
from jaxcontact.params import ParamTable, law_rule
from jaxcontact.planar import Mechanism
from jaxcontact.planar.bodies import Frames

CONTACTS = ("compliant", "rigid", "ideal", "lubricated")


def hertz_cylinder_stiffness(pin_radius, clearance, young=207e9, poisson=0.3):
    """K = (4/3) √R / (σ_i + σ_j), σ = (1 − ν²)/E, R = r_p r_h / (r_h − r_p) (conformal internal contact)."""
    sigma = (1.0 - poisson**2) / young
    r_h = pin_radius + clearance
    R = pin_radius * r_h / clearance
    return 4.0 / 3.0 * R**0.5 / (2.0 * sigma)


DEFAULTS = {
    "l1": 0.05,
    "l2": 0.12,
    "m1": 0.30,
    "m2": 0.21,
    "m3": 0.14,
    "J1": 1e-4,
    "J2": 2.5e-4,
    "J3": 1e-4,
    "omega": 200.0,
    "g": 9.81,
    "pin_radius": 0.01,
    "clearance": 5e-4,
    "stiffness": float(hertz_cylinder_stiffness(0.01, 5e-4)),
    "exponent": 1.5,
    "damping": 0.0,
    "friction": 0.01,
    "slip_width": 1e-3,
    "slip_width0": 0.0,  # v0 of the linear friction model; the exponential law (the default) reads none
    "restitution": 0.9,
    "viscosity": 0.04,
    "bearing_length": 0.04,
    "film_threshold": 0.95,
}
RULES = {
    **{
        k: (lambda v: v > 0, "> 0")
        for k in ("l1", "l2", "m1", "m2", "m3", "J1", "J2", "J3", "pin_radius", "clearance", "exponent", "slip_width")
    },
    **{k: (lambda v: v >= 0, ">= 0") for k in ("stiffness", "damping", "friction", "slip_width0")},
    "restitution": law_rule("restitution"),
    "viscosity": (lambda v: v > 0, "> 0"),
    "bearing_length": (lambda v: v > 0, "> 0"),
    "film_threshold": (lambda v: (v > 0) & (v < 1), "in (0, 1)"),
}
# The parameters: defaults, rules and units (the conventions by name for the units not given).
TABLE = ParamTable.of(
    DEFAULTS,
    RULES,
    units={
        "damping": "N·s/m^(exponent+1)",
        "viscosity": "Pa·s",
        "bearing_length": "m",
        "film_threshold": "1",
        "slip_width0": "m/s",
    },
    bounds={"viscosity": (0.0, np.inf), "film_threshold": (0.0, 1.0)},
)
REFERENCE_IMPACT_SPEED = 0.5  # m/s, for the restitution-matched damping
# The compliant journal's force law (dry, or once the oil film has broken): each field the parameter of that name.
DRY_CONTACT = {f: f for f in ("stiffness", "exponent", "damping", "slip_width", "slip_width0")}


def mechanism(contact: str = "compliant"):
    """The slider–crank :class:`Mechanism` with the crank–rod joint of kind ``contact`` (see the module doc)."""
    if contact not in CONTACTS:
        raise ValueError(f"contact = {contact!r} must be one of {CONTACTS}")
    mech = Mechanism(f"slider-crank-{contact}")
    crank = mech.body("crank", mass="m1", inertia="J1")
    rod = mech.body("rod", mass="m2", inertia="J2")
    slider = mech.body("slider", mass="m3", inertia="J3")
    mech.revolute(crank, ("-l1/2", 0.0), name="crank_pivot")
    mech.driver(crank, "theta", "omega*t", name="motor")
    # The crank–rod journal: the pin at the rod's end in the hole at the crank's tip.
    journal = ("crank_rod", rod, ("-l2/2", 0.0), crank, ("l1/2", 0.0), "pin_radius", "clearance")
    if contact == "ideal":
        mech.revolute(rod, ("-l2/2", 0.0), crank, ("l1/2", 0.0), name="crank_rod")
    elif contact == "lubricated":
        mech.lubricated_journal(
            *journal,
            viscosity="viscosity",
            length="bearing_length",
            threshold="film_threshold",
            friction="friction",
            compliant=DRY_CONTACT,
        )
    elif contact == "compliant":
        mech.clearance_revolute(*journal, friction="friction", compliant=DRY_CONTACT)
    else:
        mech.clearance_revolute(*journal, restitution="restitution", friction="friction")
    mech.revolute(rod, ("l2/2", 0.0), slider, (0.0, 0.0), name="rod_slider")
    mech.prismatic(None, (0.0, 0.0), slider, (0.0, 0.0), name="slide")
    mech.gravity("g")
    return mech


def journal_eccentricity(mech: Mechanism, q, p):
    """(e_x, e_y) = pin centre − hole centre (world frame) at q (n,): the journal's path in the clearance."""
    return jnp.stack(mech.contacts[0].eccentricity(Frames(q), p))


def initial_state(p):
    """Dead centre θ1 = 0, ideal-mechanism velocities at crank speed ω (pin centred in the hole)."""
    l1, l2, w = p["l1"], p["l2"], p["omega"]
    z = jnp.zeros_like(l1)
    q0 = jnp.stack([l1 / 2, z, z, l1 + l2 / 2, z, z, l1 + l2, z, z])
    # Crank tip moves up at ω l1; the slider is at rest at dead centre, so the rod turns at −ω l1 / l2.
    u0 = jnp.stack([z, w * l1 / 2, w, z, w * l1 / 2, -w * l1 / l2, z, z, z])
    return q0, u0


def build(contact: str = "compliant", **overrides):
    """(mechanism, system, params) with the damping matched to ε = ``restitution`` unless given."""
    params = TABLE.apply(overrides)
    if "damping" not in overrides:
        params["damping"] = jnp.asarray(
            restitution_damping(params["stiffness"], params["restitution"], REFERENCE_IMPACT_SPEED)
        )
    mech = mechanism(contact)
    system, p = mech.build({k: v for k, v in params.items() if k in _used_parameters(contact)})
    return mech, system, p


def _used_parameters(contact):
    common = {"l1", "l2", "m1", "m2", "m3", "J1", "J2", "J3", "omega", "g"}
    if contact == "ideal":
        return common
    joint = common | {"pin_radius", "clearance", "friction"}
    if contact == "rigid":
        return joint | {"restitution"}
    compliant = joint | set(DRY_CONTACT.values())
    if contact == "lubricated":
        return compliant | {"viscosity", "bearing_length", "film_threshold"}
    return compliant


def derived(params: dict, given=()) -> dict:
    """The compliant journal's stiffness (Hertz, from the clearance) and damping (matched to the
    restitution at the reference impact speed), pure jnp; names in ``given`` keep their value."""
    p = dict(params)
    if "stiffness" not in given:
        p["stiffness"] = hertz_cylinder_stiffness(p["pin_radius"], p["clearance"])
    if "damping" not in given:
        p["damping"] = restitution_damping(p["stiffness"], p["restitution"], REFERENCE_IMPACT_SPEED)
    return p


# The default study: uncertain clearance, journal restitution (the Hunt–Crossley damping matched to it)
# and friction, crank speed; the outcomes the clearance-joint literature reports. Compliant journal by
# default (penalty; Hertz stiffness from the clearance), rigid (Newton impacts) with --scheme
# moreau-jean, on the same samples (VARIANTS). Two crank turns at 200 rad/s, at the step that the study's
# step check finds resolves the largest clearances' peak forces (twice that step does not).
STUDY = DefaultStudy(
    params=(
        "clearance=uniform(1e-4,5e-4)",
        "restitution=uniform(0.7,0.95)",
        "friction=uniform(0.01,0.1)",
        "omega=uniform(150,250)",
    ),
    outcomes=(
        "peak_force",
        "peak_accel:slider.x",
        "free_flight",
        "impacts",
        "max:journal_ex",
        "series:journal_ex",
        "series:journal_ey",
        "series:slider.x",
    ),
    n=256,
    dt=2.5e-6,
    t_final=0.06,
    save_every=80,
    scheme="penalty",
)
VARIANTS = {"rigid": {"contact": "rigid"}, "compliant": {"contact": "compliant"}}

# The lubricated journal's study: uncertain oil viscosity, clearance and crank speed, the same outcomes
# (impacts, free_flight and peak_force read the dry contact only: the film is a force element). The
# squeeze film's damping grows like μ R L³ / c³, so the step is smaller than the dry study's: 2e-6 s
# keeps fixed-step RK4 stable over this box.
LUBRICATED_STUDY = STUDY._replace(
    params=(
        "viscosity=uniform(0.02,0.08)",
        "clearance=uniform(2e-4,5e-4)",
        "omega=uniform(150,250)",
    ),
    n=64,
    dt=2e-6,
    save_every=100,
)
LUBRICATED_VARIANTS = {"compliant": {"contact": "lubricated"}}


def model(contact: str = "rigid", **overrides) -> Model:
    """The registry model: by default the rigid clearance joint (Moreau–Jean impacts), which the
    ``jaxcontact simulate`` command runs; ``contact="compliant"`` gives the penalty variant, whose
    stiffness follows the clearance (Hertz) and damping the restitution unless given;
    ``contact="lubricated"`` the oil-lubricated journal (π-film force, compliant dry contact when
    the film breaks; penalty scheme), also reached as :func:`lubricated`."""
    if contact not in CONTACTS:
        raise ValueError(f"contact = {contact!r} must be one of {CONTACTS}")
    given = frozenset(overrides)
    mech, system, params = build(contact, **overrides)
    derive, observables = None, None
    if contact in ("compliant", "lubricated"):
        params["restitution"] = jnp.asarray(overrides.get("restitution", DEFAULTS["restitution"]), float)
        params = derived(params, given)
        derive = functools.partial(derived, given=given)
    if contact != "ideal":
        observables = {
            "journal_ex": lambda q, p: journal_eccentricity(mech, q, p)[0],
            "journal_ey": lambda q, p: journal_eccentricity(mech, q, p)[1],
        }
    dt = 1e-5 if contact == "rigid" else 1e-6
    return Model(
        "slider-crank-lubricated" if contact == "lubricated" else "slider-crank-clearance",
        system,
        params,
        initial_state,
        dt=dt,
        t_final=4 * np.pi / DEFAULTS["omega"],
        description="Slider–crank (Flores et al. geometry) whose crank–rod revolute joint has radial "
        f"clearance ({contact} contact); crank driven at constant speed.",
        derive=derive,
        observables=observables,
        table=TABLE,
        study=LUBRICATED_STUDY if contact == "lubricated" else STUDY,
        variants=LUBRICATED_VARIANTS if contact == "lubricated" else VARIANTS,
    )


def lubricated(contact: str = "lubricated", **overrides) -> Model:
    """Slider–crank whose crank–rod clearance journal is lubricated (π-film; dry contact when the film breaks).

    ``model("lubricated", ...)``; registered as ``slider-crank-lubricated``."""
    return model(contact, **overrides)
