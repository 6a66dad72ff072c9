"""Slider–crank with a flexible connecting rod (ANCF beam) and a crank–rod clearance joint.

The rigid model ``slider-crank-clearance`` (:mod:`jaxcontact.models.slider_crank`) with its
connecting rod replaced by a planar ANCF Euler–Bernoulli beam of ``n_elements`` elements
(:mod:`jaxcontact.smoothing.beam`). Coordinates: crank (x, y, θ), slider (x, y, θ), then the
rod's nodes (x, y, x', y') from the crank end to the slider end. The crank turns about the origin
at a constant speed (driver θ1 = ω t); the rod's last node is pinned to the slider (a revolute
pin, ideal); the slider runs on the x-axis. The clearance joint is between the rod's first node
(the journal: a pin of radius r_p) and a hole of radius r_p + c at the crank's tip, as in the
rigid model:

* "rigid": Newton restitution and Coulomb friction, for Moreau–Jean (the default; dt 1e-5 s);
* "compliant": Hertz K δ^1.5 with Hunt–Crossley damping and regularized friction, for the
  penalty scheme (dt 1e-6 s); K from the clearance and the damping from the restitution as in the
  rigid model (:func:`jaxcontact.models.slider_crank.derived`);
* "lubricated": the same journal filled with oil, as the rigid ``slider-crank-lubricated``: the
  short-bearing π-film force between the journal and hole centres
  (:class:`jaxcontact.smoothing.beam.Clearance` ``lubrication``), and the compliant contact of
  "compliant" once the film breaks (eccentricity ratio beyond ``film_threshold``), for the penalty scheme
  (dt 1e-6 s); oil, bearing length and threshold as in the rigid model;
* "ideal": the rod's first node pinned to the crank's tip (no clearance).

The journal's slip uses the rod end's material rotation, the angle of the node's slope.

Values. Geometry, crank and slider, journal and clearance are those of ``slider-crank-clearance``
(Flores et al.). The rod: length 0.12 m and mass 0.21 kg as there, steel (ρ = 7800 kg/m³,
E = 207 GPa), hence the cross-section area A = m / (ρ L) = 2.24e-4 m²; we take a square section,
side 15.0 mm, I = A²/12 = 4.2e-9 m⁴ (EI = 869 N·m²). Its centroidal inertia m L²/12 = 2.52e-4 kg m²
is the rigid model's J2 = 2.5e-4 to 1 %. Vary ``rod_E`` (or ``rod_I``) for a more flexible rod.

Model smoothing (docs/theory/smoothing.md): the rod's strains in the stress are their means over
a window ``smoothing`` (s); the default 4e-5 s (four Moreau–Jean steps) turns the rod's axial modes
(first at π/L √(E/ρ) ≈ 1.3e5 rad/s, the discrete ones higher), which an explicit force evaluation
at dt = 1e-5 s cannot follow, into modes of frequency ≤ √6 / window, leaving the motion below a
few kHz unchanged; a window of two steps diverges. The compliant variant's step (1e-6 s) resolves
the axial modes of a steel rod: its default window is 0 (the plain beam); a much stiffer rod needs a
window of a few steps there too.

The crank starts at θ1 = 0 (dead centre) with the rigid mechanism's velocities at crank speed ω;
the rod straight and unstrained, the journal centred in the hole.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxcontact.models import DefaultStudy, Model
from jaxcontact.models import slider_crank as sc
from jaxcontact.params import ParamTable, law_rule
from jaxcontact.planar import Mechanism
from jaxcontact.smoothing.beam import Beam, Clearance, Pin, flexible_system

CONTACTS = ("rigid", "compliant", "lubricated", "ideal")
FILM = ("viscosity", "bearing_length", "film_threshold")
ROD_DENSITY, ROD_LENGTH, ROD_MASS = 7800.0, 0.12, 0.21
ROD_AREA = ROD_MASS / (ROD_DENSITY * ROD_LENGTH)
SMOOTHING = {"rigid": 4e-5, "compliant": 0.0, "lubricated": 0.0, "ideal": 4e-5}
DT = {"rigid": 1e-5, "compliant": 1e-6, "lubricated": 1e-6, "ideal": 1e-5}

DEFAULTS = {
    **{k: sc.DEFAULTS[k] for k in ("l1", "m1", "m3", "J1", "J3", "omega", "g")},
    "rod_L": ROD_LENGTH,
    "rod_rho": ROD_DENSITY,
    "rod_A": ROD_AREA,
    "rod_I": ROD_AREA**2 / 12.0,
    "rod_E": 207e9,
    "smoothing": SMOOTHING["rigid"],
    **{
        k: sc.DEFAULTS[k]
        for k in ("pin_radius", "clearance", "stiffness", "exponent", "damping", "friction", "slip_width")
    },
    "restitution": sc.DEFAULTS["restitution"],
    **{k: sc.DEFAULTS[k] for k in FILM},
}
_POSITIVE = ("l1", "m1", "m3", "J1", "J3", "rod_L", "rod_rho", "rod_A", "rod_I", "rod_E")
RULES = {
    **{k: (lambda v: v > 0, "> 0") for k in _POSITIVE + ("pin_radius", "clearance", "exponent", "slip_width")},
    **{k: (lambda v: v >= 0, ">= 0") for k in ("stiffness", "damping", "friction", "smoothing")},
    "restitution": law_rule("restitution"),
    **{k: sc.RULES[k] for k in FILM},
}
UNITS = {
    "rod_L": "m",
    "rod_rho": "kg/m³",
    "rod_A": "m²",
    "rod_I": "m⁴",
    "rod_E": "Pa",
    "smoothing": "s",
    "damping": "N·s/m^(exponent+1)",
    "viscosity": "Pa·s",
    "bearing_length": "m",
    "film_threshold": "1",
}
TABLE = ParamTable.of(DEFAULTS, RULES, units=UNITS, bounds={"viscosity": (0.0, np.inf), "film_threshold": (0.0, 1.0)})


def _rigid_part():
    """Crank (driven about the origin) and slider (on the x-axis) as a planar Mechanism."""
    mech = Mechanism("flexible-slider-crank")
    crank = mech.body("crank", mass="m1", inertia="J1")
    slider = mech.body("slider", mass="m3", inertia="J3")
    mech.revolute(crank, ("-l1/2", 0.0), name="crank_pivot")
    mech.driver(crank, "theta", "omega*t", name="motor")
    mech.prismatic(None, (0.0, 0.0), slider, (0.0, 0.0), name="slide")
    mech.gravity("g")
    return mech, crank, slider


@functools.cache
def system(contact: str = "rigid", n_elements: int = 3):
    """The LagrangianSystem (one object per (contact, n_elements): compiled programs are shared)."""
    if contact not in CONTACTS:
        raise ValueError(f"contact = {contact!r} must be one of {CONTACTS}")
    if not isinstance(n_elements, int) or not 1 <= n_elements <= 8:
        raise ValueError(f"n_elements = {n_elements!r} must be an int in [1, 8]")
    mech, crank, slider = _rigid_part()
    rigid, _ = mech.build({k: DEFAULTS[k] for k in ("l1", "m1", "m3", "J1", "J3", "omega", "g")})
    rod = Beam("rod", n_elements)
    pins = [Pin(rod, -1, slider, point=(0.0, 0.0))]
    clearances = []
    if contact == "ideal":
        pins.append(Pin(rod, 0, crank, point=("l1/2", 0.0)))
    else:
        laws = (
            dict(restitution="restitution")
            if contact == "rigid"
            else dict(
                compliant=dict(stiffness="stiffness", exponent="exponent", damping="damping", slip_width="slip_width")
            )
        )
        if contact == "lubricated":
            laws["lubrication"] = dict(viscosity="viscosity", length="bearing_length", threshold="film_threshold")
        clearances.append(
            Clearance(
                "crank_rod",
                rod,
                0,
                crank,
                point=("l1/2", 0.0),
                pin_radius="pin_radius",
                clearance="clearance",
                friction="friction",
                **laws,
            )
        )
    return flexible_system([rod], pins, rigid=rigid, gravity="g", smoothing="smoothing", clearances=clearances)


def _used_parameters(contact):
    common = set(_POSITIVE) | {"omega", "g", "smoothing"}
    if contact == "ideal":
        return common
    joint = common | {"pin_radius", "clearance", "friction"}
    if contact == "rigid":
        return joint | {"restitution"}
    compliant = joint | {"stiffness", "exponent", "damping", "slip_width", "restitution"}
    return compliant | set(FILM) if contact == "lubricated" else compliant


def journal_eccentricity(q, p):
    """(e_x, e_y) = journal (the rod's first node) − hole centre (the crank's tip), world frame."""
    x, y, th = q[0], q[1], q[2]
    half = p["l1"] / 2
    return jnp.stack([q[6] - (x + half * jnp.cos(th)), q[7] - (y + half * jnp.sin(th))])


def initial_state(p, n_elements: int = 3):
    """Dead centre θ1 = 0: the rigid mechanism's state at crank speed ω, the rod straight along x."""
    l1, L, w = p["l1"], p["rod_L"], p["omega"]
    z, one = jnp.zeros_like(l1), jnp.ones_like(l1)
    s = jnp.linspace(0.0, 1.0, n_elements + 1)  # node positions along the rod, fraction of L
    # Crank tip moves up at ω l1, the slider is at rest: the rod turns at −ω l1 / L, so a node at
    # fraction s moves up at ω l1 (1 − s) and every slope r' = (1, 0) turns at (0, −ω l1 / L).
    nodes_q = jnp.stack([l1 + s * L, 0 * s + z, 0 * s + one, 0 * s + z], axis=1).reshape(-1)
    nodes_u = jnp.stack([0 * s + z, w * l1 * (1 - s), 0 * s + z, 0 * s - w * l1 / L], axis=1).reshape(-1)
    q0 = jnp.concatenate([jnp.stack([l1 / 2, z, z, l1 + L, z, z]), nodes_q])
    u0 = jnp.concatenate([jnp.stack([z, w * l1 / 2, w, z, z, z]), nodes_u])
    return q0, u0


# The default study: the rod's stiffness (steel down to a tenth of it), the clearance, the journal's restitution
# (the Hunt–Crossley damping matched to it) and friction; the compliant journal by the penalty scheme (the
# rigid one with --scheme moreau-jean, VARIANTS); 0.03 s, half a crank turn at 200 rad/s.
STUDY = DefaultStudy(
    params=(
        "rod_E=uniform(2e10,2.07e11)",
        "clearance=uniform(1e-4,5e-4)",
        "restitution=uniform(0.7,0.95)",
        "friction=uniform(0.01,0.1)",
    ),
    outcomes=("peak_force", "peak_accel:slider.x", "max:journal_ex", "series:journal_ex", "series:slider.x"),
    n=192,
    dt=1e-6,
    t_final=0.03,
    save_every=50,
    scheme="penalty",
)
VARIANTS = sc.VARIANTS  # the same journal variants as the rigid-rod model
# The lubricated journal's study: uncertain rod stiffness, oil viscosity and clearance, at the model's step (the
# squeeze film's damping grows like μ R L³ / c³).
LUBRICATED_STUDY = STUDY._replace(
    params=("rod_E=uniform(2e10,2.07e11)", "viscosity=uniform(0.02,0.08)", "clearance=uniform(2e-4,5e-4)"),
    n=64,
    dt=DT["lubricated"],
    save_every=100,
)


def model(contact: str = "rigid", n_elements: int = 3, **overrides) -> Model:
    """The registry model: by default the rigid clearance joint (Moreau–Jean); ``contact="compliant"``
    gives the penalty variant (stiffness from the clearance, damping from the restitution unless given),
    ``"ideal"`` a plain pin. ``n_elements``: the rod's ANCF elements."""
    if contact not in CONTACTS:
        raise ValueError(f"contact = {contact!r} must be one of {CONTACTS}")
    sys_ = system(contact, n_elements)
    given = frozenset(overrides)
    if "smoothing" not in overrides:
        overrides = {**overrides, "smoothing": SMOOTHING[contact]}
    params = {k: v for k, v in TABLE.apply(overrides).items() if k in _used_parameters(contact)}
    derive = None
    if contact in ("compliant", "lubricated"):
        params = sc.derived(params, given)
        derive = functools.partial(sc.derived, given=given)
    observables = None
    if contact != "ideal":
        observables = {
            "journal_ex": lambda q, p: journal_eccentricity(q, p)[0],
            "journal_ey": lambda q, p: journal_eccentricity(q, p)[1],
        }
    joint = "an ideal crank–rod pin" if contact == "ideal" else f"a {contact} crank–rod clearance joint"
    lubricated = contact == "lubricated"
    return Model(
        "flexible-slider-crank-lubricated" if lubricated else "flexible-slider-crank",
        sys_,
        params,
        functools.partial(initial_state, n_elements=n_elements),
        dt=DT[contact],
        t_final=4 * np.pi / DEFAULTS["omega"],
        description="Slider–crank (Flores et al. geometry) with a flexible connecting rod (steel ANCF beam of "
        f"{n_elements} elements, model smoothing of its stiff modes) and {joint} (pin of radius pin_radius in a "
        "hole of radius pin_radius + clearance at the crank's tip); crank driven at constant speed.",
        derive=derive,
        observables=observables,
        table=TABLE,
        study=LUBRICATED_STUDY if lubricated else STUDY,
        variants=sc.LUBRICATED_VARIANTS if lubricated else VARIANTS,
    )


def compliant(contact: str = "compliant", **overrides) -> Model:
    """The compliant-journal variant, ``model("compliant", ...)``, for the command line as a model file:
    ``jaxcontact simulate jaxcontact/models/flexible_slider_crank.py:compliant --scheme penalty``."""
    return model(contact, **overrides)


def lubricated(contact: str = "lubricated", **overrides) -> Model:
    """The oil-lubricated journal (π film; the compliant dry contact once it breaks), ``model("lubricated",
    ...)``; registered as ``flexible-slider-crank-lubricated`` (penalty scheme)."""
    return model(contact, **overrides)
