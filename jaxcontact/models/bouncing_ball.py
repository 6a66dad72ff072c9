"""Bouncing ball: a point mass (or a ball of radius r) dropped on the ground y = 0.

One coordinate, the height y of the centre. Gap g_N = y − r, Newton restitution ε,
no friction (a vertical drop has no slip). Analytic check (radius 0, from
height H at rest): first impact t₁ = √(2H/g) with speed v₀ = g t₁; bounce j
lasts 2 εʲ v₀ / g; the bounces accumulate at t∞ = t₁ + 2 ε v₀ / (g (1 − ε))
(8.579 s for H = 1 m, ε = 0.9, g = 9.81).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxcontact.models import DefaultStudy, Model
from jaxcontact.params import ParamTable, law_rule
from jaxcontact.system import ContactLaws, LagrangianSystem

DEFAULTS = {"mass": 1.0, "radius": 0.0, "height": 1.0, "restitution": 0.9, "gravity": 9.81}
RULES = {
    "mass": (lambda v: v > 0, "> 0"),
    "radius": (lambda v: v >= 0, ">= 0"),
    "restitution": law_rule("restitution"),
    "gravity": (lambda v: v >= 0, ">= 0"),
}
# The parameters: defaults, rules and units (the conventions by name for the units not given).
TABLE = ParamTable.of(DEFAULTS, RULES)


def _mass(q, p):
    return jnp.reshape(p["mass"], (1, 1)).astype(q.dtype)


def _forces(q, u, t, p):
    return jnp.reshape(-p["mass"] * p["gravity"], (1,)).astype(q.dtype)


def _gaps(q, t, p):
    return q[:1] - p["radius"]


def _laws(p):
    e = jnp.reshape(p["restitution"], (1,))
    return ContactLaws(e, jnp.zeros_like(e), jnp.zeros_like(e))


def _potential(q, t, p):
    return p["mass"] * p["gravity"] * q[0]


SYSTEM = LagrangianSystem(
    n_dof=1, mass=_mass, forces=_forces, gaps=_gaps, laws=_laws, potential=_potential, names=("y",)
)


def initial_state(p):
    """At rest with the centre at ``height``."""
    q0 = jnp.reshape(p["height"], (1,))
    return q0, jnp.zeros_like(q0)


STUDY = DefaultStudy(
    params=("restitution=uniform(0.5,0.95)", "height=uniform(0.5,1.5)"),
    outcomes=("peak_impulse", "impacts", "rest_time", "max_penetration", "series:y", "series:energy"),
    n=4096,
    dt=1e-3,
    t_final=3.0,
    save_every=10,
)


def model(**overrides) -> Model:
    """The bouncing ball with parameter overrides by name (ValueError for unknown names or broken rules)."""
    params = TABLE.apply(overrides)
    if float(params["height"]) < float(params["radius"]):
        raise ValueError(
            f"parameter height = {float(params['height'])} must be >= radius = "
            f"{float(params['radius'])} (the ball would start inside the ground)"
        )
    return Model(
        "bouncing-ball",
        SYSTEM,
        params,
        initial_state,
        dt=1e-3,
        t_final=10.0,
        description="A ball dropped from rest on the ground y = 0 (Newton restitution, no friction).",
        table=TABLE,
        study=STUDY,
    )
