"""Rocking block (Housner 1963): a rigid rectangular block rocking on its two bottom corners.

One body q = (x, y, θ) at the centre of mass; the bottom corners
(∓width/2, −height/2) in the block's frame touch the ground y = 0 (two
point–line contacts with Newton restitution and Coulomb friction). Released
from rest standing on its left corner, tilted by ``tilt`` (counter-clockwise,
radians; |tilt| below the overturning angle α = atan(width/height)), it rocks
back, lands on the other corner, and rocks with decreasing amplitude until it
rests flat.

Our choices (the reviews name the example without values): width 0.2 m,
height 0.4 m, mass 1 kg, J = m (w² + h²)/12, ε_N = 0 (a plastic corner
impact: Housner's classical rocking model), μ = 0.7 (enough to keep the
corners from slipping), tilt 0.1 rad, gravity 9.81 m/s².

Independent truth (Housner 1963): if the landing corner sticks and the other
lifts, angular momentum about the landing corner is conserved, so each impact
multiplies the angular velocity by r = 1 − (3/2) sin² α (0.7 here).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxcontact.models import Model
from jaxcontact.params import ParamTable
from jaxcontact.planar import Mechanism

DEFAULTS = {"width": 0.2, "height": 0.4, "mass": 1.0, "restitution": 0.0, "friction": 0.7, "tilt": 0.1, "gravity": 9.81}
# The parameters: defaults, rules and units (the conventions by name for the units not given).
TABLE = ParamTable.of(DEFAULTS)

LEFT_CORNER = ("-width/2", "-height/2")
RIGHT_CORNER = ("width/2", "-height/2")


def mechanism() -> Mechanism:
    """The rocking block's structure: one body, gravity, two corner contacts on the ground."""
    mech = Mechanism("rocking-block")
    block = mech.body("block", mass="mass", inertia="mass*(width**2 + height**2)/12")
    mech.gravity("gravity")
    ground = mech.line(point=(0.0, 0.0), normal=(0.0, 1.0))
    mech.point_contact("left", block, LEFT_CORNER, ground, restitution="restitution", friction="friction")
    mech.point_contact("right", block, RIGHT_CORNER, ground, restitution="restitution", friction="friction")
    return mech


MECHANISM = mechanism()
SYSTEM, _PARAMS = MECHANISM.build(DEFAULTS)


def housner_ratio(p):
    """Housner's angular-velocity ratio per impact, r = 1 − (3/2) sin² α, α = atan(width/height)."""
    alpha = jnp.arctan2(p["width"], p["height"])
    return 1.0 - 1.5 * jnp.sin(alpha) ** 2


def initial_state(p):
    """At rest, rotated by ``tilt`` and lifted so that the lowest bottom corner touches y = 0."""
    th = p["tilt"]
    c, s = jnp.cos(th), jnp.sin(th)
    w2, h2 = p["width"] / 2, p["height"] / 2
    # world height of a bottom corner (±w/2, −h/2) relative to the centre: ±(w/2) sin θ − (h/2) cos θ
    lowest = jnp.minimum(-w2 * s - h2 * c, w2 * s - h2 * c)
    q0 = jnp.stack([jnp.zeros_like(th), -lowest, th])
    return q0, jnp.zeros_like(q0)


def model(**overrides) -> Model:
    """The rocking block with parameter overrides by name; refuses a tilt beyond the overturning angle."""
    params = TABLE.apply(overrides)
    MECHANISM.validate(params)
    alpha = np.arctan2(np.asarray(params["width"]), np.asarray(params["height"]))
    tilt = np.asarray(params["tilt"])
    if np.any(np.abs(tilt) >= alpha):
        raise ValueError(
            f"parameter tilt = {tilt} must satisfy |tilt| < atan(width/height) = {alpha} "
            "(beyond it the block overturns instead of rocking)"
        )
    if np.any(np.asarray(params["gravity"]) <= 0):
        raise ValueError(f"parameter gravity = {np.asarray(params['gravity'])} must be > 0")
    return Model(
        "rocking-block",
        SYSTEM,
        params,
        initial_state,
        dt=1e-3,
        t_final=2.0,
        description="A rectangular block released tilted on one corner rocks on its two bottom "
        "corners (restitution, Coulomb friction) and comes to rest.",
        table=TABLE,
    )
