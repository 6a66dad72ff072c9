"""The tippe top: an eccentric sphere spun on a rough plane turns upside down (spin reversal).

A spatial rigid body, axially symmetric about its body z axis, whose sphere of ``radius`` R is
centred ``offset`` a above the centre of mass on that axis (the body-frame point (0, 0, a):
:class:`jaxcontact.spatial.SpherePlane` with an offset ``centre``), on the plane z = 0 with
Coulomb friction μ and Newton restitution ε. Principal moments about the centre of mass:
I₃ = ``axial_inertia`` · m R² about the axis, I₁ = I₂ = ``inertia_ratio`` · I₃ across it
(γ = I₁/I₃, the literature's ratio).

Initial state: the symmetry axis ê₃ (from the centre of mass to the sphere's centre) tilted by
``tilt_deg`` from the upward vertical about the world x axis, the sphere touching the plane, its
centre at rest, and the body spinning at ``spin`` about ê₃. Upright, the centre of mass is at
height R − a; inverted (ê₃ down), at R + a.

Truths the top must reproduce (docs/theory/spatial.md, "The tippe top"):

* Jellett's integral λ = L · (R e_z − a ê₃) = R L_z − a L₃ (L the angular momentum about the
  centre of mass) is constant for any contact force acting at the contact point — sliding
  friction included — on an axially symmetric body (:func:`jellett`);
* with 1 − α < γ < 1 (α = a/R) and λ above a threshold, the top inverts: ê₃ turns down, the
  centre of mass rises from R − a to R + a, and the spin about ê₃ changes sign while L_z keeps
  its own (λ fixed: ω₃ goes from λ/(I₃(R − a)) to −λ/(I₃(R + a)));
* the energy never increases (friction only dissipates); with μ = 0, or γ < 1 − α, it does not
  invert.

Dry friction can stop the slip: a Coulomb cone holds a nonzero force at zero slip, so the top may
roll, and a rolling top conserves its energy and does not invert (the literature's inversion
assumes gliding, with a friction law that vanishes at zero slip). Launched nearly upright with
μ = 0.3, this top rolls within 0.1 s; Moreau–Jean's O(h) drift then raises the friction it needs
until it slips and inverts — at a time that doubles when h halves, a numerical artefact. The
defaults (μ = 0.05, tilt 20°) keep it gliding long enough to invert at a time that converges
with the step (docs/theory/spatial.md).
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxcontact.models import DefaultStudy, Model
from jaxcontact.params import ParamTable, law_rule
from jaxcontact.spatial import Assembly, SpherePlane, rotations
from jaxcontact.spatial.pictures import save, snapshot_figure
from jaxcontact.spatial.view import write_gif, write_html

DEFAULTS = {
    "mass": 0.015,
    "radius": 0.02,
    "offset": 0.006,
    "axial_inertia": 0.4,
    "inertia_ratio": 0.9,
    "friction": 0.05,
    "restitution": 0.0,
    "spin": 180.0,
    "tilt_deg": 20.0,
    "gravity": 9.81,
}
RULES = {
    "mass": (lambda v: v > 0, "> 0"),
    "radius": (lambda v: v > 0, "> 0"),
    "offset": (lambda v: v > 0, "> 0 (a centred sphere has no reason to turn over)"),
    # Every point of the body lies within R of the sphere's centre, so I₃ = Σ m ρ² ≤ m R².
    "axial_inertia": (lambda v: (v > 0) & (v <= 1), "in (0, 1] (I_3 = axial_inertia·m·R² ≤ m·R²)"),
    # Principal moments obey the triangle inequality I₃ ≤ I₁ + I₂ = 2 I₁.
    "inertia_ratio": (lambda v: v >= 0.5, ">= 0.5 (I_3 <= I_1 + I_2 = 2 I_1)"),
    "friction": law_rule("friction"),
    "restitution": law_rule("restitution"),
    "tilt_deg": (lambda v: (v >= 0) & (v < 180), "in [0, 180)"),
    "gravity": (lambda v: v >= 0, ">= 0"),
}
# The parameters: defaults, rules and units (the conventions by name for the units not given).
TABLE = ParamTable.of(DEFAULTS, RULES)


def _assembly() -> Assembly:
    asm = Assembly(gravity="gravity")
    top = asm.add_body(
        "top",
        mass="mass",
        inertia=("inertia_ratio*axial_inertia*mass*radius**2",) * 2 + ("axial_inertia*mass*radius**2",),
    )
    asm.add_contact(
        SpherePlane(
            "plane",
            restitution="restitution",
            friction="friction",
            body=top,
            radius="radius",
            centre=(0.0, 0.0, "offset"),
        )
    )
    return asm


ASSEMBLY = _assembly()
SYSTEM = ASSEMBLY.system()


def inertia(p):
    """(I₁, I₃): the transverse and axial principal moments about the centre of mass."""
    i3 = p["axial_inertia"] * p["mass"] * p["radius"] ** 2
    return p["inertia_ratio"] * i3, i3


def initial_state(p):
    """Axis tilted by tilt_deg about e_x, the sphere's centre at (0, 0, R) and at rest, body spin ``spin`` about ê₃."""
    dtype = jnp.result_type(float)
    tilt = jnp.deg2rad(jnp.asarray(p["tilt_deg"], dtype))
    z = 0.0 * tilt
    quat = rotations.exp(jnp.stack([tilt, z, z]))
    centre = jnp.stack([z, z, p["radius"] + z])
    x = centre - rotations.rotate(quat, jnp.stack([z, z, p["offset"] + z]))
    # The centre of mass moves with ω × (x − centre) = 0 for ω along ê₃: the sphere's centre is at rest.
    return jnp.concatenate([x, quat]), jnp.stack([z, z, z, z, z, p["spin"] + z])


def _columns(q):
    """The body axes ê₁, ê₂, ê₃ in the world frame (the columns of R(q)) for coordinates q (..., 7)."""
    w, x, y, z = q[..., 3], q[..., 4], q[..., 5], q[..., 6]
    return (
        jnp.stack([1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)], axis=-1),
        jnp.stack([2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)], axis=-1),
        jnp.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], axis=-1),
    )


def axis(q):
    """ê₃, the symmetry axis from the centre of mass to the sphere's centre, in the world frame (..., 3)."""
    return _columns(q)[2]


def inclination(q, p=None):
    """The angle θ between ê₃ and the upward vertical [rad]: 0 upright, π inverted (coordinates (..., 7))."""
    return jnp.arccos(jnp.clip(axis(q)[..., 2], -1.0, 1.0))


def angular_momentum(q, u, p):
    """L about the centre of mass in the world frame (..., 3): R(q) diag(I₁, I₁, I₃) ω."""
    i1, i3 = inertia(p)
    w = u[..., 3:6]
    body = jnp.stack([i1 * w[..., 0], i1 * w[..., 1], i3 * w[..., 2]], axis=-1)
    e1, e2, e3 = _columns(q)
    return body[..., :1] * e1 + body[..., 1:2] * e2 + body[..., 2:] * e3


def jellett(q, u, p):
    """Jellett's integral λ = L · (R e_z − a ê₃) = R L_z − a L₃ (..., ): conserved by the continuous dynamics.

    Why it is conserved: the contact force F acts at the contact point, at r = a ê₃ − R e_z from
    the centre of mass, so L̇ = r × F (gravity has no moment there) and L̇ · r = 0; then
    d(L · r)/dt = L · a ê̇₃ = a L · (ω × ê₃) = a ê₃ · (L × ω), and L × ω lies across ê₃ for an
    axially symmetric body (L = I₁ ω + (I₃ − I₁) ω₃ ê₃). Whatever the friction does, λ = −L · r stays.
    """
    L = angular_momentum(q, u, p)
    return p["radius"] * L[..., 2] - p["offset"] * jnp.sum(L * axis(q), axis=-1)


def body_spin(u):
    """ω₃, the spin about the body's symmetry axis (velocities (..., 6))."""
    return u[..., 5]


# The default study: the inversion under uncertain friction and spin: the time the axis passes the
# horizontal (inclination ≥ π/2; censored at t_final when it does not turn over), how far it turns, where
# its centre of mass ends (R − a upright, R + a inverted). The ranges keep the top gliding often enough
# that its inversion time converges with the step (with more friction it rolls, and only the step's drift
# turns it over: docs/theory/spatial.md); the step keeps Moreau–Jean's sinking a small share of R.
STUDY = DefaultStudy(
    params=("friction=uniform(0.04,0.06)", "spin=uniform(150,220)"),
    outcomes=("first_above:inclination=1.5708", "max:inclination", "final:com_height", "series:inclination"),
    n=64,
    dt=1.25e-4,
    t_final=12.0,
    save_every=400,
    scheme="moreau-jean",
)


def model(**overrides) -> Model:
    """The tippe top with parameter overrides by name."""
    params = TABLE.apply(overrides)
    a, r = np.asarray(params["offset"]), np.asarray(params["radius"])
    if np.any(a >= r):
        raise ValueError(
            f"parameter offset = {a} >= radius = {r} breaks the rule offset < radius "
            f"(the centre of mass must lie inside the sphere)"
        )
    ASSEMBLY.validate(params)
    return Model(
        "tippe-top",
        SYSTEM,
        params,
        initial_state,
        dt=1.25e-4,
        t_final=10.0,
        description="The tippe top (an eccentric sphere spun on a rough plane, spatial body, Coulomb "
        "cone): friction turns it over, its centre of mass rises and its spin about its own "
        "axis reverses; Jellett's integral R L_z − a L_3 stays constant.",
        observables={"inclination": inclination, "com_height": lambda q, p: q[..., 2]},
        picture=_picture,
        view=functools.partial(write_html, assembly=ASSEMBLY, title="tippe-top"),
        animation=functools.partial(write_gif, assembly=ASSEMBLY),
        # Projecting the contact back onto the plane turns the top upright and stops its
        # inversion (docs/theory/spatial.md, "The sinking").
        resting_projection=False,
        table=TABLE,
        study=STUDY,
    )


def _picture(traj, params, path, count: int = 7):
    """Write :func:`picture_figure` to ``path`` (PNG)."""
    return save(picture_figure(traj, params, count)[0], path)


def picture_figure(traj, params, count: int = 7):
    """3D snapshots in a row, the stem drawn along ê₃ from the sphere's centre out through its top: (figure, axes).

    The top wanders over the plane far more than its size, so each snapshot is moved to its own place
    on a line (sphere centres 2.5 R apart), keeping its height and orientation: the dashed path through
    the centres of mass then shows them rise from R − a to R + a. Along that line x is a layout, not
    the top's position, so the axis is labelled by each snapshot's time under it; y is taken about the
    sphere's centre; z stays the height above the plane. (One axes rather than a panel per instant:
    side by side on one height scale, the rise of the centre of mass reads at a glance.)
    """
    from types import SimpleNamespace

    a, r = float(params["offset"]), float(params["radius"])
    q, t = np.asarray(traj.q), np.asarray(traj.t)
    rows = np.unique(np.linspace(0, len(t) - 1, count).round().astype(int))
    q = q[rows].copy()
    centres = q[:, :3] + a * np.asarray(axis(jnp.asarray(q)))
    places = 2.5 * r * np.arange(len(rows))
    q[:, 0] += places - centres[:, 0]
    q[:, 1] -= centres[:, 1]
    fig, ax = snapshot_figure(
        SimpleNamespace(t=t[rows], q=q),
        params,
        assembly=ASSEMBLY,
        count=len(rows),
        segments=((0, (0.0, 0.0, a), (0.0, 0.0, a + 1.6 * r)),),
        min_span=0.0,
        view=(12.0, -80.0),
    )
    ax.set_xticks(places, [f"{ti:.2g}" for ti in t[rows]])
    ax.set_xlabel("snapshot at t [s] (set side by side, not its x)")
    ax.set_ylabel("y about centre [m]")
    ax.set_zlabel("height z [m]")
    return fig, ax
