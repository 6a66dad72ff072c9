"""Slider–bar mechanism ("flat beater") with friction — the 2015 slider–bar LCP paper's example.

A slider (body 1) rests on a rough floor through two compliant contacts at its
bottom corners; a bar (body 2) is pinned to the slider at point A and driven by
a motor on the slider at constant speed ω. Coordinates
q = (x_C1, y_C1, θ1, x_C2, y_C2, θ2) at the centres of mass. The constraints are
exactly the paper's:

    φ1 = x_C2 − x_C1 − e cos θ2 − d1 = 0,   φ2 = y_C2 − y_C1 − e sin θ2 − d2 = 0,
    φ̃ = θ2 − θ1 − ω t = 0,

with d = R(θ1)(A − C): the bar's centre of mass is at the eccentricity e from the
pin A (a revolute joint, the bar's point (−e, 0)), and the driver is the relative
angle. The rotating eccentric mass shakes the slider: the floor's friction holds
it while the horizontal load stays below μ0 F_N and lets it slip (with μ) when not
— stick–slip. The normal law is the paper's F_N = K δ^n + c δ δ̇ (``compliant_damping``
= "paper") on each corner.

Values the paper does not publish — our choices, all named parameter leaves:

* slider: m1 = 2 kg, a 0.2 m × 0.06 m block (``width``, ``height``),
  J1 = m1 (w² + h²)/12; the pin A at the middle of its top face (``ax``, ``ay``
  = A − C = (0, 0.03) m in the slider frame).
* bar: m2 = 0.5 kg, J2 = m2 L²/12 with L = 0.3 m (``bar_length``), eccentricity
  e = 0.1 m (the paper compares 0.1 and 0.15 m).
* motor ω = 4π rad/s (2 Hz): m2 e ω² ≈ 7.9 N (e = 0.1) and 11.8 N (e = 0.15) against
  μ0 (m1 + m2) g ≈ 7.4 N, so the slider sticks for part of each turn and slips for
  the rest, never lifting or tipping (vertical load < weight).
* floor: K = 1e7 N/m^1.5, n = 1.5 (Hertz), c = 3e6 N·s/m² (about a quarter of the
  critical damping of a corner at the static penetration ≈ 0.11 mm); μ0 = 0.3,
  μ = 0.2; ``slip_width`` = 1e-3 m/s for the regularized friction of the penalty
  scheme (the event-driven scheme resolves stick exactly and ignores it).
* gravity 9.81 m/s² along −y.

Initial state: both corners at the static penetration of the total weight, the
bar horizontal (θ2 = θ1 = 0), the constraint velocities satisfied (θ̇2 = ω, the
bar's centre moving at e ω upwards). Simulate with
:class:`jaxcontact.stepping.event_driven.EventDriven` (docs/theory/event-driven.md) or
:class:`jaxcontact.stepping.penalty.Penalty` (docs/theory/compliant.md); Moreau–Jean refuses compliant contacts
(``mechanism(compliant=False)`` builds rigid corners for it).
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from jaxcontact.models import DefaultStudy, Model
from jaxcontact.params import ParamTable
from jaxcontact.planar import Mechanism

DEFAULTS = {
    "m1": 2.0,
    "width": 0.2,
    "height": 0.06,
    "ax": 0.0,
    "ay": 0.03,
    "m2": 0.5,
    "bar_length": 0.3,
    "e": 0.1,
    "omega": 4.0 * math.pi,
    "stiffness": 1e7,
    "exponent": 1.5,
    "damping": 3e6,
    "friction": 0.2,
    "static_friction": 0.3,
    "slip_width": 1e-3,
    "slip_width0": 0.0,
    "gravity": 9.81,
}
RULES = {
    name: (lambda v: v > 0, "> 0")
    for name in ("m1", "width", "height", "m2", "bar_length", "e", "stiffness", "exponent", "slip_width")
}
RULES.update({name: (lambda v: v >= 0, ">= 0") for name in ("damping", "friction", "slip_width0", "gravity")})
# The parameters: defaults, rules and units (the conventions by name for the units not given).
TABLE = ParamTable.of(DEFAULTS, RULES, units={"damping": "N·s/m²"})


def mechanism(compliant: bool = True) -> Mechanism:
    """The slider–bar's structure: slider, bar, pin A, motor (relative angle ω t), gravity, two floor corners.

    ``compliant=False`` makes the corners rigid contacts (restitution from a parameter
    "restitution", friction μ) for Moreau–Jean comparisons (``bench/accuracy/schemes.py``).
    """
    mech = Mechanism("slider-bar")
    slider = mech.body("slider", mass="m1", inertia="m1*(width**2 + height**2)/12")
    bar = mech.body("bar", mass="m2", inertia="m2*bar_length**2/12")
    mech.revolute(bar, ("-e", 0.0), slider, ("ax", "ay"), name="A")
    mech.driver(bar, "theta", "omega*t", relative_to=slider, name="motor")
    mech.gravity("gravity")
    floor = mech.line(point=(0.0, 0.0), normal=(0.0, 1.0))
    law = (
        dict(
            compliant=dict(
                stiffness="stiffness",
                exponent="exponent",
                damping="damping",
                slip_width="slip_width",
                slip_width0="slip_width0",
            )
        )
        if compliant
        else dict(restitution="restitution")
    )
    for name, side in (("left", "-width/2"), ("right", "width/2")):
        mech.point_contact(
            name, slider, (side, "-height/2"), floor, friction="friction", static_friction="static_friction", **law
        )
    return mech


MECHANISM = mechanism()
SYSTEM, _PARAMS = MECHANISM.build(DEFAULTS, compliant_damping="paper")
CONSTRAINT_ROWS = MECHANISM.constraint_names  # ("A.x", "A.y", "motor")


def initial_state(p):
    """Corners at the static penetration of the total weight, bar horizontal, motor running."""
    load = 0.5 * (p["m1"] + p["m2"]) * p["gravity"]
    delta = (load / p["stiffness"]) ** (1.0 / p["exponent"])
    y1 = 0.5 * p["height"] - delta
    zero = jnp.zeros_like(y1)
    q0 = jnp.stack([zero, y1, zero, p["ax"] + p["e"], y1 + p["ay"], zero])
    u0 = jnp.stack([zero, zero, zero, zero, p["e"] * p["omega"], p["omega"]])
    return q0, u0


# The default study: the stick–slip under an uncertain motor speed and floor friction (compliant
# corners: penalty by default, event-driven for exact sticking).
STUDY = DefaultStudy(
    params=("omega=uniform(10,14)", "friction=uniform(0.1,0.2)", "static_friction=uniform(0.2,0.3)"),
    outcomes=("final:slider.x", "max:slider.x", "min:slider.x", "peak_impulse", "series:slider.x"),
    n=256,
    t_final=1.0,
    save_every=20,
    scheme="penalty",
)


def model(**overrides) -> Model:
    """The slider–bar with parameter overrides by name; refuses static_friction < friction."""
    params = TABLE.apply(overrides)
    MECHANISM.validate(params)
    if np.any(np.asarray(params["static_friction"]) < np.asarray(params["friction"])):
        raise ValueError(
            f"static_friction = {np.asarray(params['static_friction'])} must be ≥ friction = "
            f"{np.asarray(params['friction'])} (μ0 ≥ μ)"
        )
    return Model(
        "slider-bar",
        SYSTEM,
        params,
        initial_state,
        dt=5e-4,
        t_final=2.0,
        description="Flat beater: a slider on a rough floor (compliant corners, μ0 ≥ μ) shaken by a "
        "motor-driven eccentric bar: stick–slip. Use the event-driven or penalty scheme.",
        table=TABLE,
        study=STUDY,
    )
