"""A block (a point mass) at rest on rough level ground, pushed by a horizontal force growing in time.

q = (x, y); gap g_N = y, slip velocity γ_T = ẋ; push F = r t (``push_rate`` r).
Coulomb friction with static μ0 (``static_friction``) and dynamic μ (``friction``):
the block sticks until F reaches μ0 m g, at t_s = μ0 m g / r, then slides with
ẍ = (r t − μ m g) / m, so

    x(t) = r ((t³ − t_s³)/3 − t_s² (t − t_s)) / (2m) − μ g (t − t_s)² / 2   (t ≥ t_s).

Its position history thus carries both coefficients: the onset time gives μ0, the
curvature of the sliding phase gives μ. Static μ0 ≠ μ needs a scheme that tells
stick from slip — :class:`jaxcontact.stepping.EventDriven` (docs/theory/event-driven.md); Moreau–Jean
uses μ alone.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxcontact.models import Model
from jaxcontact.params import ParamTable
from jaxcontact.system import ContactLaws, LagrangianSystem

DEFAULTS = {"mass": 1.0, "friction": 0.3, "static_friction": 0.4, "push_rate": 10.0, "gravity": 9.81}
RULES = {
    "mass": (lambda v: v > 0, "> 0"),
    "friction": (lambda v: v >= 0, ">= 0"),
    "static_friction": (lambda v: v >= 0, ">= 0"),
    "push_rate": (lambda v: v >= 0, ">= 0"),
    "gravity": (lambda v: v >= 0, ">= 0"),
}
# The parameters: defaults, rules and units (the conventions by name for the units not given).
TABLE = ParamTable.of(DEFAULTS, RULES)


def _mass(q, p):
    return p["mass"] * jnp.eye(2, dtype=q.dtype)


def _forces(q, u, t, p):
    return jnp.stack([p["push_rate"] * t, -p["mass"] * p["gravity"]]).astype(q.dtype)


def _laws(p):
    mu, mu0 = (jnp.reshape(p[k], (1,)) for k in ("friction", "static_friction"))
    return ContactLaws(jnp.zeros_like(mu), jnp.zeros_like(mu), mu, mu0)


def _potential(q, t, p):
    return p["mass"] * p["gravity"] * q[1]


SYSTEM = LagrangianSystem(
    n_dof=2,
    mass=_mass,
    forces=_forces,
    gaps=lambda q, t, p: q[1:2],
    slip_velocity=lambda q, u, t, p: u[0:1],
    laws=_laws,
    potential=_potential,
    names=("x", "y"),
)


def initial_state(p):
    """At rest at the origin, on the ground."""
    z = jnp.zeros(2, jnp.result_type(float))
    return z, z


def position(q, p):
    """The pushed (x) coordinate of positions q (..., 2)."""
    return q[..., 0]


def model(**overrides) -> Model:
    """The pushed block with parameter overrides by name; refuses static_friction < friction."""
    params = TABLE.apply(overrides)
    if not np.all(np.asarray(params["static_friction"]) >= np.asarray(params["friction"])):
        raise ValueError(f"static_friction = {params['static_friction']} must be >= friction = {params['friction']}")
    return Model(
        "pushed-block",
        SYSTEM,
        params,
        initial_state,
        dt=1e-2,
        t_final=0.8,
        description="A block at rest on rough ground pushed by a force growing in time: it sticks "
        "until the push reaches μ0 m g, then slides against dynamic μ (event-driven scheme).",
        table=TABLE,
    )
