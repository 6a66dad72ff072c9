"""A block (a point mass) on a rough incline, launched down the slope (Coulomb friction).

Coordinates (x, y) in the world frame; the incline is the line through the
origin falling at ``slope_deg`` towards +x, with down-slope tangent
t = (cos α, −sin α) and outward normal n = (sin α, cos α). Gap g_N = n·q,
slip velocity γ_T = t·u. The block is treated as a point: its size does not
enter a translating block's motion. Analytic checks: with μ > tan α it
decelerates at g (μ cos α − sin α) and stops after v₀² / (2 g (μ cos α − sin α));
with μ < tan α it accelerates at g (sin α − μ cos α).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxcontact.models import Model
from jaxcontact.params import ParamTable
from jaxcontact.system import ContactLaws, LagrangianSystem

DEFAULTS = {"mass": 1.0, "friction": 0.5, "slope_deg": 20.0, "speed": 1.0, "gravity": 9.81}
RULES = {
    "mass": (lambda v: v > 0, "> 0"),
    "friction": (lambda v: v >= 0, ">= 0"),
    "slope_deg": (lambda v: (v >= 0) & (v < 90), "in [0, 90)"),
    "gravity": (lambda v: v >= 0, ">= 0"),
}
# The parameters: defaults, rules and units (the conventions by name for the units not given).
TABLE = ParamTable.of(DEFAULTS, RULES)


def _frame(p, dtype):
    a = jnp.deg2rad(jnp.asarray(p["slope_deg"], dtype))
    c, s = jnp.cos(a), jnp.sin(a)
    return jnp.stack([c, -s]), jnp.stack([s, c])  # tangent (down-slope), normal


def _mass(q, p):
    return p["mass"] * jnp.eye(2, dtype=q.dtype)


def _forces(q, u, t, p):
    return jnp.stack([jnp.zeros((), q.dtype), -p["mass"] * p["gravity"]]).astype(q.dtype)


def _gaps(q, t, p):
    _, n = _frame(p, q.dtype)
    return jnp.reshape(n @ q, (1,))


def _slip(q, u, t, p):
    tan, _ = _frame(p, q.dtype)
    return jnp.reshape(tan @ u, (1,))


def _laws(p):
    mu = jnp.reshape(p["friction"], (1,))
    return ContactLaws(jnp.zeros_like(mu), jnp.zeros_like(mu), mu)


def _potential(q, t, p):
    return p["mass"] * p["gravity"] * q[1]


SYSTEM = LagrangianSystem(
    n_dof=2,
    mass=_mass,
    forces=_forces,
    gaps=_gaps,
    slip_velocity=_slip,
    laws=_laws,
    potential=_potential,
    names=("x", "y"),
)


def initial_state(p):
    """On the incline at the origin, moving down the slope at ``speed``."""
    tan, _ = _frame(p, jnp.result_type(float))
    return jnp.zeros(2, tan.dtype), p["speed"] * tan


def distance_along_slope(q, p):
    """Down-slope distance t·q of positions q (..., 2) from the origin."""
    tan, _ = _frame(p, q.dtype)
    return q @ tan


def model(**overrides) -> Model:
    """The block on a rough incline with parameter overrides by name."""
    params = TABLE.apply(overrides)
    return Model(
        "sliding-block",
        SYSTEM,
        params,
        initial_state,
        dt=1e-3,
        t_final=2.0,
        description="A block launched down a rough incline (Coulomb friction): it stops "
        "when μ > tan α, otherwise it keeps accelerating.",
        table=TABLE,
    )
