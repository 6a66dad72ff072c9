"""A user model for the command line: a pendulum released from horizontal whose tip strikes the floor.

Every command takes it as ``FILE.py:FUNCTION`` beside the built-in names:

    jaxcontact simulate examples/user_model.py:pendulum --out out/pendulum
    jaxcontact simulate --model examples/user_model.py:soft_pendulum --scheme penalty --dt 1e-5 --t-final 0.5
    jaxcontact mc examples/user_model.py:pendulum --n 256
    jaxcontact mc examples/user_model.py:soft_pendulum --scheme penalty --param 'stiffness=uniform(5e5,2e6)'
    jaxcontact identify examples/user_model.py:pendulum --data out/pendulum/trajectory.npz --fit restitution=0.5

A function of this kind takes parameter overrides by name and returns a
:class:`jaxcontact.models.Model`; build the system with the planar builder
(:class:`jaxcontact.planar.Mechanism`) or write a :class:`jaxcontact.system.LagrangianSystem`
by hand. Build the structure once at import (a module-level system): the same system
object then reuses compiled programs across calls.

The bar (length l, mass m) is pinned at its top end 0.8 l above the floor and released
horizontal; its free end hits the floor when the bar has turned by asin(0.8) ≈ 53°.
``pendulum`` has a rigid tip contact (Newton restitution: Moreau–Jean or event-driven),
``soft_pendulum`` a compliant one (Hunt–Crossley: penalty or event-driven).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxcontact.models import DefaultStudy, Model, apply_overrides
from jaxcontact.params import POSITIVE, Param
from jaxcontact.planar import Mechanism

DEFAULTS = {
    "m": 0.5,
    "l": 0.4,
    "restitution": 0.6,
    "friction": 0.2,
    "gravity": 9.81,
    "stiffness": 1e6,
    "exponent": 1.5,
    "damping": 0.5,
    "slip_width": 1e-3,
    "slip_width0": 0.0,
}
RULES = {"m": (lambda v: v > 0, "> 0"), "l": (lambda v: v > 0, "> 0")}


def _mechanism(compliant: bool) -> Mechanism:
    mech = Mechanism("soft-pendulum" if compliant else "pendulum")
    bar = mech.body("bar", mass="m", inertia="m*l**2/12")
    mech.revolute(bar, ("-l/2", 0.0), None, (0.0, "0.8*l"), name="pivot")
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
    mech.point_contact("tip", bar, ("l/2", 0.0), floor, friction="friction", **law)
    return mech


_RIGID, _SOFT = _mechanism(False), _mechanism(True)
_RIGID_SYSTEM, _ = _RIGID.build(DEFAULTS)
_SOFT_SYSTEM, _ = _SOFT.build(DEFAULTS)


def _initial_state(p):
    """Horizontal, at rest: the centre l/2 to the right of the pivot."""
    zero = jnp.zeros_like(p["l"])
    q0 = jnp.stack([p["l"] / 2, 0.8 * p["l"], zero])
    return q0, jnp.zeros_like(q0)


# What the rigid pendulum declares about itself; the soft one declares nothing (the units of its parameters
# follow the conventions by name, and ``mc`` needs ``--param``). The builder knows the rule and unit of every
# element field a parameter fills (m fills the bar's mass: > 0, in kg; restitution the tip's: in [0, 1]);
# what it cannot know (the bar's length enters expressions only) is said here, with the range a study may
# draw it from.
TABLE = _RIGID.param_table(DEFAULTS).updated(
    Param("l", DEFAULTS["l"], unit="m", rule=POSITIVE, bounds=(0.1, 1.0), doc="bar length"),
)
# ``jaxcontact mc examples/user_model.py:pendulum`` with no --param runs this.
STUDY = DefaultStudy(
    params=("restitution=uniform(0.3,0.9)", "l=uniform(0.3,0.5)"),
    outcomes=("impacts", "peak_impulse", "rest_time"),
    n=64,
    t_final=0.6,
)


def _model(mech, system, compliant, params, **declared) -> Model:
    mech.validate(params)
    kind = "compliant (Hunt–Crossley)" if compliant else "rigid (Newton restitution)"
    return Model(
        mech.name,
        system,
        params,
        _initial_state,
        dt=1e-5 if compliant else 1e-3,
        t_final=1.0,
        description=f"a pendulum released from horizontal whose tip strikes the floor; {kind} tip contact",
        **declared,
    )


def pendulum(**overrides) -> Model:
    """Rigid tip contact (Moreau–Jean, event-driven), with its parameter table and default study."""
    return _model(_RIGID, _RIGID_SYSTEM, False, TABLE.apply(overrides), table=TABLE, study=STUDY)


def soft_pendulum(**overrides) -> Model:
    """Compliant tip contact (penalty, event-driven)."""
    return _model(_SOFT, _SOFT_SYSTEM, True, apply_overrides(DEFAULTS, overrides, RULES))
