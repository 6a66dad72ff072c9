"""Four-bar linkage hitting a wall (the 2015 projection-correction paper's example).

Three bars in absolute coordinates q = (x1, y1, θ1, x2, y2, θ2, x3, y3, θ3),
centres of mass as origins, 9 coordinates and 8 revolute constraint rows
(1 degree of freedom). Published values: l1 = l3 = 0.2 m, l2 = 0.4 m,
m1 = m3 = 0.1 kg, m2 = 0.2 kg, torque T = 10 N·m on bar 1, wall 0.06 m from
point a, ε_N = 0.8, h = 0.01 s, q0 = (0, 0.1, 1.57, 0.2, 0.2, 0, 0.4, 0.1, 0).

Our reading and choices (the paper leaves them open):

* Geometry: bar 1 pinned to the ground at (0, 0), bar 3 at (``ground_length``
  = 0.4 m, 0); coupler bar 2 on top; a parallelogram at t = 0.
* Angle convention: θ is measured counter-clockwise from the world x-axis to
  the bar's *body axis*. Bars 1 and 2 lie along their body x-axis; bar 3 lies
  along its body **y**-axis. So vertical bar 1 has θ1 = π/2, horizontal bar 2
  θ2 = 0 and vertical bar 3 θ3 = 0 — the paper's q0 literally, except that
  we use π/2 where it prints 1.57 (1.57 leaves ‖Φ(q0)‖ ≈ 1.1e-4 m).
* Torque T > 0 is counter-clockwise on bar 1: it swings the top of bar 1
  (point a, the bar 1–bar 2 joint, at (0, l1) initially) to the left, into
  the wall x = −``wall_distance``. The literal sign reaches the wall.
* Gravity is not stated; we take 9.81 m/s² along −y (the mechanism in a
  vertical plane). Its moments (≈ 0.1 N·m) are small against T = 10 N·m;
  set ``gravity`` = 0 for a horizontal plane.
* Bars are slender rods: J_i = m_i l_i² / 12.
* The wall contact is frictionless by default (``friction`` = 0, a leaf);
  on this one-degree-of-freedom linkage friction hardly matters (DESIGN.md).

``initial_state`` closes the loop from the parameters: bar 1 at
``initial_angle`` (default π/2), and the bar 2–bar 3 joint B at the
intersection of the circles |B − A| = l2 and |B − O3| = l3 on the left of the
line A → O3 (the parallelogram branch), so Φ(q0) = 0 to rounding for any
lengths that can be assembled.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from jaxcontact.models import DefaultStudy, Model
from jaxcontact.params import ParamTable
from jaxcontact.planar import Mechanism

DEFAULTS = {
    "l1": 0.2,
    "l2": 0.4,
    "l3": 0.2,
    "m1": 0.1,
    "m2": 0.2,
    "m3": 0.1,
    "ground_length": 0.4,
    "torque": 10.0,
    "wall_distance": 0.06,
    "restitution": 0.8,
    "friction": 0.0,
    "gravity": 9.81,
    "initial_angle": math.pi / 2,
}
# The parameters: defaults, rules and units (the conventions by name for the units not given).
TABLE = ParamTable.of(DEFAULTS)

POINT_A = ("l1/2", 0.0)  # top of bar 1 in bar 1's frame: the bar 1–bar 2 joint


def mechanism(friction: bool = True) -> Mechanism:
    """The four-bar's structure (bodies, joints, loads, wall contact); values by name.

    ``friction=False`` builds the wall contact frictionless by structure (no slip velocity,
    so the stepper solves a normal-only LCP): the same motion when ``friction`` = 0, cheaper
    for throughput benchmarks — ``mechanism(False).build(DEFAULTS)``.
    """
    mech = Mechanism("four-bar")
    bar1 = mech.body("bar1", mass="m1", inertia="m1*l1**2/12")
    bar2 = mech.body("bar2", mass="m2", inertia="m2*l2**2/12")
    bar3 = mech.body("bar3", mass="m3", inertia="m3*l3**2/12")
    mech.revolute(bar1, ("-l1/2", 0.0), None, (0.0, 0.0), name="O1")
    mech.revolute(bar1, POINT_A, bar2, ("-l2/2", 0.0), name="A")
    mech.revolute(bar2, ("l2/2", 0.0), bar3, (0.0, "l3/2"), name="B")
    mech.revolute(bar3, (0.0, "-l3/2"), None, ("ground_length", 0.0), name="O3")
    mech.torque(bar1, "torque", name="T")
    mech.gravity("gravity")
    wall = mech.line(point=("-wall_distance", 0.0), normal=(1.0, 0.0))
    mech.point_contact(
        "wall", bar1, POINT_A, wall, restitution="restitution", friction="friction" if friction else None
    )
    return mech


MECHANISM = mechanism()
SYSTEM, _PARAMS = MECHANISM.build(DEFAULTS)


def point_a(q, p):
    """World position (2,) of point a (top of bar 1)."""
    return MECHANISM.point_position("bar1", POINT_A, q, p)


def point_a_velocity(q, u, p):
    """World velocity (2,) of point a."""
    return MECHANISM.point_velocity("bar1", POINT_A, q, u, p)


def _closure(p):
    """Joint positions A, B and the pivots from the lengths: (A, B, O3) and h² (< 0: cannot assemble)."""
    th1 = p["initial_angle"]
    ax, ay = p["l1"] * jnp.cos(th1), p["l1"] * jnp.sin(th1)
    ox, oy = p["ground_length"], jnp.zeros_like(ax)
    dx, dy = ox - ax, oy - ay
    d = jnp.sqrt(dx * dx + dy * dy)
    ex, ey = dx / d, dy / d
    a = (p["l2"] ** 2 - p["l3"] ** 2 + d * d) / (2.0 * d)
    h2 = p["l2"] ** 2 - a * a
    h = jnp.sqrt(jnp.maximum(h2, 0.0))
    bx = ax + a * ex - h * ey  # left of A → O3: the normal (−e_y, e_x)
    by = ay + a * ey + h * ex
    return (ax, ay), (bx, by), (ox, oy), h2


def initial_state(p):
    """(q0, u0): the closed loop at rest with bar 1 at ``initial_angle`` (see module doc)."""
    (ax, ay), (bx, by), (ox, oy), _ = _closure(p)
    th1 = p["initial_angle"]
    th2 = jnp.arctan2(by - ay, bx - ax)
    th3 = jnp.arctan2(-(bx - ox), by - oy)  # bar 3's body y-axis (−sin θ3, cos θ3) points from O3 to B
    q0 = jnp.stack([ax / 2, ay / 2, th1, (ax + bx) / 2, (ay + by) / 2, th2, (ox + bx) / 2, (oy + by) / 2, th3])
    return q0, jnp.zeros_like(q0)


# The default study: the four-bar-against-a-wall example of the 2015 projection paper with uncertain
# restitution, wall distance, wall friction and the length of bar 1 (our choice of ranges: restitution
# around the paper's 0.8, the wall a few cm away, moderate friction, l1 within a few %); 2 s at dt = 1e-3
# covers the impacts and the rest against the wall. Friction is kept although it cannot move this
# one-degree-of-freedom linkage (its contact's Delassus matrix has rank 1, so friction only changes the
# non-unique split of the impulse between normal and tangential parts): its Sobol index is a check.
STUDY = DefaultStudy(
    params=(
        "restitution=uniform(0.6,0.95)",
        "wall_distance=uniform(0.04,0.08)",
        "friction=uniform(0,0.3)",
        "l1=uniform(0.19,0.21)",
    ),
    outcomes=(
        "peak_impulse",
        "impacts",
        "rest_time",
        "max_penetration",
        "max_phi",
        "final:bar1.theta",
        "series:gap",
        "series:bar1.theta",
        "series:energy",
    ),
    n=10_000,
    dt=1e-3,
    t_final=2.0,
    save_every=10,
)


def model(**overrides) -> Model:
    """The four-bar hitting a wall with parameter overrides by name; refuses lengths that cannot close the loop."""
    params = TABLE.apply(overrides)
    MECHANISM.validate(params)
    for name in ("wall_distance", "ground_length", "gravity"):
        if np.any(np.asarray(params[name]) < 0):
            raise ValueError(f"parameter {name} = {np.asarray(params[name])} must be >= 0")
    h2 = np.asarray(_closure(params)[3])
    if np.any(h2 < 0):
        raise ValueError(
            f"the lengths l1 = {np.asarray(params['l1'])}, l2 = {np.asarray(params['l2'])}, "
            f"l3 = {np.asarray(params['l3'])}, ground_length = {np.asarray(params['ground_length'])} "
            f"cannot close the loop at initial_angle = {np.asarray(params['initial_angle'])}"
        )
    return Model(
        "four-bar",
        SYSTEM,
        params,
        initial_state,
        dt=0.01,
        t_final=1.0,
        description="A four-bar linkage (2015 projection paper) driven by a torque on bar 1 until point a "
        "hits a wall and comes to rest against it (Newton restitution).",
        table=TABLE,
        study=STUDY,
    )
