"""A solid sphere launched sliding (and spinning) on a rough plane, possibly inclined: it slips, then rolls.

A spatial rigid body (quaternion, body-frame angular velocity) with one sphere–plane contact on
a Coulomb cone, stepped by Moreau–Jean. The plane passes through the origin and falls at
``slope_deg`` towards +x: unit normal n = (sin α, 0, cos α), down-slope tangent
t = (cos α, 0, −sin α), and e_y across the slope. The sphere starts ``drop`` above the plane
(its centre at (radius + drop) n), moving down the slope at ``speed`` with the angular
velocity ``spin`` about e_y (positive: topspin, rolling is spin = speed / radius).

Analytic solution (a solid sphere, I = 2/5 m r², once on the plane): the slip velocity of
the contact point s = v − r ω starts at s₀ = speed − radius·spin; friction μ m g cos α opposes
it, so s changes at the constant rate g sin α − (7/2) μ g cos α sgn s₀ and vanishes at

    t* = −s₀ / (g sin α − (7/2) μ g cos α sgn s₀)     (t* = 2 v₀ / (7 μ g) on the flat, no spin),

when v* = v₀ + (g sin α − μ g cos α sgn s₀) t* (5/7 v₀ on the flat). After t* it rolls:
v = v* + (5/7) g sin α (t − t*), which needs μ ≥ (2/7) tan α (:func:`rolling`).
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxcontact.models import DefaultStudy, Model
from jaxcontact.params import ParamTable, law_rule
from jaxcontact.spatial import Assembly, Plane, SpherePlane
from jaxcontact.spatial.pictures import snapshots
from jaxcontact.spatial.view import write_gif, write_html

DEFAULTS = {
    "mass": 1.0,
    "radius": 0.1,
    "speed": 2.0,
    "spin": 0.0,
    "friction": 0.2,
    "restitution": 0.0,
    "slope_deg": 0.0,
    "drop": 0.0,
    "gravity": 9.81,
}
RULES = {
    "mass": (lambda v: v > 0, "> 0"),
    "radius": (lambda v: v > 0, "> 0"),
    "friction": law_rule("friction"),
    "restitution": law_rule("restitution"),
    "slope_deg": (lambda v: (v >= 0) & (v < 90), "in [0, 90)"),
    "drop": (lambda v: v >= 0, ">= 0"),
    "gravity": (lambda v: v >= 0, ">= 0"),
}
# The parameters: defaults, rules and units (the conventions by name for the units not given).
TABLE = ParamTable.of(DEFAULTS, RULES)
SLOPE = "slope_deg*pi/180"


def _assembly() -> Assembly:
    asm = Assembly(gravity="gravity")
    ball = asm.add_body("ball", mass="mass", inertia=("0.4*mass*radius**2",) * 3)
    plane = Plane(normal=(f"sin({SLOPE})", 0.0, f"cos({SLOPE})"), offset=0.0)
    asm.add_contact(
        SpherePlane("plane", restitution="restitution", friction="friction", body=ball, radius="radius", plane=plane)
    )
    return asm


ASSEMBLY = _assembly()
SYSTEM = ASSEMBLY.system()


def frame(p, dtype=None):
    """(n, t): the plane's unit normal and down-slope tangent."""
    a = jnp.deg2rad(jnp.asarray(p["slope_deg"], dtype or jnp.result_type(float)))
    z = jnp.zeros_like(a)
    return jnp.stack([jnp.sin(a), z, jnp.cos(a)]), jnp.stack([jnp.cos(a), z, -jnp.sin(a)])


def initial_state(p):
    """Centre (radius + drop) n, identity orientation, velocity ``speed`` t, body angular velocity ``spin`` e_y."""
    n, t = frame(p)
    q0 = jnp.concatenate([(p["radius"] + p["drop"]) * n, jnp.asarray([1.0, 0.0, 0.0, 0.0], n.dtype)])
    u0 = jnp.concatenate([p["speed"] * t, jnp.stack([0.0 * p["spin"], p["spin"], 0.0 * p["spin"]])])
    return q0, u0


def down_slope_speed(u, p):
    """v = t·v of velocities u (..., 6)."""
    _, t = frame(p, u.dtype)
    return u[..., :3] @ t


def slip_speed(u, p):
    """s = v − r ω_y: the contact point's down-slope slip (ω_y about e_y, the body frame's y while it only rolls)."""
    return down_slope_speed(u, p) - p["radius"] * u[..., 4]


def rolling(p) -> bool:
    """Whether the sphere can roll without slipping on the slope: μ ≥ (2/7) tan α."""
    return bool(np.all(np.asarray(p["friction"]) >= 2.0 / 7.0 * np.tan(np.deg2rad(np.asarray(p["slope_deg"])))))


def slip_to_roll(p):
    """(t*, v*): the analytic time at which slipping stops and the down-slope speed then (sphere on the plane)."""
    a = np.deg2rad(float(p["slope_deg"]))
    g, mu = float(p["gravity"]), float(p["friction"])
    s0 = float(p["speed"]) - float(p["radius"]) * float(p["spin"])
    sgn = np.sign(s0)
    t_star = -s0 / (g * np.sin(a) - 3.5 * mu * g * np.cos(a) * sgn) if s0 != 0 else 0.0
    return t_star, float(p["speed"]) + (g * np.sin(a) - mu * g * np.cos(a) * sgn) * t_star


def analytic_speed(p, t):
    """The analytic down-slope speed at times t (numpy) for a sphere that starts on the plane and can roll."""
    a = np.deg2rad(float(p["slope_deg"]))
    g, mu = float(p["gravity"]), float(p["friction"])
    t_star, v_star = slip_to_roll(p)
    s0 = float(p["speed"]) - float(p["radius"]) * float(p["spin"])
    t = np.asarray(t, float)
    slipping = float(p["speed"]) + (g * np.sin(a) - mu * g * np.cos(a) * np.sign(s0)) * t
    return np.where(t < t_star, slipping, v_star + 5.0 / 7.0 * g * np.sin(a) * (t - t_star))


STUDY = DefaultStudy(
    params=("friction=uniform(0.1,0.3)", "spin=uniform(-10,10)", "slope_deg=uniform(0,10)"),
    outcomes=("final:ball.x", "max:ball.z", "series:ball.x"),
    n=256,
    dt=1e-3,
    t_final=1.0,
    save_every=10,
    scheme="moreau-jean",
)


def model(**overrides) -> Model:
    """The sphere on a rough plane with parameter overrides by name."""
    params = TABLE.apply(overrides)
    ASSEMBLY.validate(params)
    return Model(
        "sphere-on-plane",
        SYSTEM,
        params,
        initial_state,
        dt=1e-3,
        t_final=1.0,
        description="A solid sphere launched sliding (and spinning) on a rough, possibly inclined plane "
        "(spatial body, Coulomb cone): it slips, then rolls at 5/7 of its speed on the flat.",
        picture=functools.partial(snapshots, assembly=ASSEMBLY),
        view=functools.partial(write_html, assembly=ASSEMBLY, title="sphere-on-plane"),
        animation=functools.partial(write_gif, assembly=ASSEMBLY),
        table=TABLE,
        study=STUDY,
    )
