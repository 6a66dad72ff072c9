"""Spatial slider–crank whose crank–rod ball joint has a clearance (a ball in a spherical socket).

Bodies (spatial, quaternions): crank (1), connecting rod (2), slider (3). The crank turns about
the world x-axis through the origin (revolute to the ground, driven at ω: θ = ω t from e_y
towards e_z); the slider runs along the x-direction on the line (·, offset_y, offset_z)
(prismatic to the ground), off the crank's plane, so the rod moves in space; the rod's far end
is joined to the slider by a universal joint (spider axes: the slider's z and the rod's y),
which stops the rod spinning about its own axis. The crank–rod joint is either

* "ideal": a spherical joint (the reference mechanism; 18 velocities, 18 joint rows: no freedom);
* "rigid": a ball of radius r_b on the rod's end in a socket of radius r_b + c on the crank's
  tip (:class:`jaxcontact.spatial.SphereInSphere`) with Newton restitution ε and Coulomb friction
  μ on the cone — for Moreau–Jean impacts; the ball has 3 freedoms inside the socket;
* "compliant": the same ball and socket with Hertz contact K δ^1.5, Hunt–Crossley damping
  matched to ε and regularized Coulomb friction — for the penalty scheme.

This is the layout of Haug's spatial slider–crank (Computer-Aided Kinematics and Dynamics of
Mechanical Systems, 1989, as we recall it: revolute, spherical, universal, translational joints), with the
spherical joint given a clearance as in the spherical-clearance-joint studies (Flores, Lankarani
et al.). Values: masses and inertias of Flores' planar slider–crank (our planar
``slider-crank-clearance``), crank 0.05 m, rod 0.2 m, slider line at (0.06, 0.03) m from the
crank axis (our choice: a stroke of ≈ 3.7 cm, the rod at least 66° off the spider's axis), ball radius
10 mm, clearance 0.5 mm, ε = 0.9, μ = 0.01, steel (E = 207 GPa, ν = 0.3), ω = 200 rad/s,
gravity 9.81 m/s² along −z. Stiffness: Hertz for a sphere inside a spherical seat,
K = (4/3) √R / (σ_b + σ_s), σ = (1 − ν²)/E, R = r_b r_s / (r_s − r_b) (the formula
:func:`jaxcontact.models.slider_crank.hertz_cylinder_stiffness` evaluates; for spheres it is
Hertz's own), ≈ 6.9e10 N/m^1.5 at c = 0.5 mm; the damping matched exactly to ε at 0.5 m/s.

Bars are slender cylinders of radius 5 mm along their body e1 (I_1 = m r²/2, I_2 = I_3 = m l²/12);
the slider's moments are J3 (it does not turn). The crank starts at θ = 0 with the ideal
mechanism's velocities (the linear solve of the 18 joint rows' rates) and the ball centred.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.contact_laws import restitution_damping
from jaxcontact.models import DefaultStudy, Model
from jaxcontact.models.slider_crank import REFERENCE_IMPACT_SPEED
from jaxcontact.models.slider_crank import hertz_cylinder_stiffness as hertz_stiffness
from jaxcontact.params import ParamTable, law_rule
from jaxcontact.spatial import Assembly, Driver, Prismatic, Revolute, SphereInSphere, Spherical, Universal, rotations
from jaxcontact.spatial.pictures import snapshots
from jaxcontact.spatial.view import write_gif, write_html
from jaxcontact.system import velocity_matrix

CONTACTS = ("rigid", "compliant", "ideal")
BAR_RADIUS = 0.005  # m, of the slender bars' inertia

DEFAULTS = {
    "l1": 0.05,
    "l2": 0.2,
    "offset_y": 0.06,
    "offset_z": 0.03,
    "m1": 0.30,
    "m2": 0.21,
    "m3": 0.14,
    "J3": 1e-4,
    "omega": 200.0,
    "g": 9.81,
    "ball_radius": 0.01,
    "clearance": 5e-4,
    "stiffness": float(hertz_stiffness(0.01, 5e-4)),
    "exponent": 1.5,
    "damping": 0.0,
    "friction": 0.01,
    "slip_width": 1e-3,
    "restitution": 0.9,
}
RULES = {
    **{
        k: (lambda v: v > 0, "> 0")
        for k in ("l1", "l2", "m1", "m2", "m3", "J3", "ball_radius", "clearance", "exponent", "slip_width")
    },
    **{k: (lambda v: v >= 0, ">= 0") for k in ("stiffness", "damping", "g")},
    "offset_y": (lambda v: np.isfinite(v), "finite"),
    "offset_z": (lambda v: np.isfinite(v), "finite"),
    "friction": law_rule("friction"),
    "restitution": law_rule("restitution"),
}
# The parameters: defaults, rules and units (the conventions by name for the units not given).
TABLE = ParamTable.of(DEFAULTS, RULES, units={"damping": "N·s/m^(exponent+1)"})


def _assembly(contact: str) -> Assembly:
    asm = Assembly(gravity="g")
    bar = "{m}*" + str(BAR_RADIUS) + "**2/2"
    crank = asm.add_body("crank", mass="m1", inertia=(bar.format(m="m1"), "m1*l1**2/12", "m1*l1**2/12"))
    rod = asm.add_body("rod", mass="m2", inertia=(bar.format(m="m2"), "m2*l2**2/12", "m2*l2**2/12"))
    slider = asm.add_body("slider", mass="m3", inertia=("J3", "J3", "J3"))
    x, z = (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)
    asm.add_joint(Revolute("crank_pivot", None, (0.0, 0.0, 0.0), crank, ("-l1/2", 0.0, 0.0), axis_a=x, axis_b=z))
    asm.add_joint(Driver("motor", None, b=crank, axis_a=x, reference_a=(0.0, 1.0, 0.0), reference_b=x, angle="omega*t"))
    if contact == "ideal":
        asm.add_joint(Spherical("crank_rod", crank, ("l1/2", 0.0, 0.0), rod, ("-l2/2", 0.0, 0.0)))
    else:
        law = dict(restitution="restitution") if contact == "rigid" else dict(restitution=None)
        joint = SphereInSphere(
            "crank_rod",
            friction="friction",
            a=crank,
            socket_point=("l1/2", 0.0, 0.0),
            socket_radius="ball_radius+clearance",
            b=rod,
            ball_point=("-l2/2", 0.0, 0.0),
            ball_radius="ball_radius",
            **law,
        )
        asm.add_contact(
            joint,
            compliant=None
            if contact == "rigid"
            else dict(stiffness="stiffness", exponent="exponent", damping="damping", slip_width="slip_width"),
        )
    asm.add_joint(
        Universal("rod_slider", slider, (0.0, 0.0, 0.0), rod, ("l2/2", 0.0, 0.0), axis_a=z, axis_b=(0.0, 1.0, 0.0))
    )
    asm.add_joint(Prismatic("slide", None, (0.0, "offset_y", "offset_z"), slider, (0.0, 0.0, 0.0), axis_a=x, axis_b=x))
    return asm


ASSEMBLIES = {c: _assembly(c) for c in CONTACTS}
SYSTEMS = {c: a.system() for c, a in ASSEMBLIES.items()}


def check_geometry(p) -> None:
    """The rod must reach the slider line at every crank angle, with the rod off the spider's axis (z):
    l2 > l1 + √(offset_y² + offset_z²) (the farthest crank tip) — a ValueError naming the values otherwise."""
    l1, l2, oy, oz = (np.asarray(p[k], float) for k in ("l1", "l2", "offset_y", "offset_z"))
    far = l1 + np.hypot(oy, oz)
    if np.any(l2 <= far):
        raise ValueError(
            f"l2 = {l2} must exceed l1 + √(offset_y² + offset_z²) = {far} (the rod must reach the "
            f"slider line at every crank angle)"
        )
    if np.any(np.abs(oz) + l1 >= 0.9 * l2):
        raise ValueError(
            f"|offset_z| + l1 = {np.abs(oz) + l1} must stay below 0.9 l2 = {0.9 * l2}: the rod "
            f"would come near the universal joint's spider axis (a singular pose)"
        )


def initial_pose(p, theta=0.0):
    """q (21,) of the assembled ideal mechanism at crank angle ``theta`` (the ball centred in its socket)."""
    l1, l2, oy, oz = p["l1"], p["l2"], p["offset_y"], p["offset_z"]
    dtype = jnp.result_type(l1, float)
    ex = jnp.asarray([1.0, 0.0, 0.0], dtype)
    c, s = jnp.cos(theta), jnp.sin(theta)
    q_crank = rotations.multiply(rotations.from_axis_angle(ex, theta), jnp.full((4,), 0.5, dtype))  # e1 → e_y, e3 → e_x
    tip = jnp.stack([0.0 * l1, l1 * c, l1 * s])
    slider = jnp.stack([jnp.sqrt(l2**2 - (oy - l1 * c) ** 2 - (oz - l1 * s) ** 2), oy + 0.0 * l1, oz + 0.0 * l1])
    e1 = (slider - tip) / l2
    yaw, pitch = jnp.arctan2(e1[1], e1[0]), jnp.arcsin(e1[2])  # rod e2 = e_z × e1 / |·| ⊥ the spider axis e_z
    q_rod = rotations.multiply(
        rotations.from_axis_angle(jnp.asarray([0.0, 0.0, 1.0], dtype), yaw),
        rotations.from_axis_angle(jnp.asarray([0.0, 1.0, 0.0], dtype), -pitch),
    )
    one = jnp.asarray([1.0, 0.0, 0.0, 0.0], dtype)
    return jnp.concatenate([tip / 2, q_crank, (tip + slider) / 2, q_rod, slider, one])


def initial_state(p):
    """Crank at θ = 0, ball centred; u0 solves the ideal mechanism's velocity rows J u = −Φ_t (square, regular)."""
    q0 = initial_pose(p)
    system = SYSTEMS["ideal"]
    t0 = jnp.zeros((), q0.dtype)
    J = jax.jacfwd(system.constraints)(q0, t0, p) @ velocity_matrix(system, q0)
    phi_t = jax.jacfwd(system.constraints, argnums=1)(q0, t0, p)
    return q0, jnp.linalg.solve(J, -phi_t)


def eccentricity(q, p):
    """|x_ball − x_socket| (m): the ball's offset in its socket (0 for the ideal joint)."""
    Q = q.reshape(3, 7)
    socket = Q[0, :3] + rotations.rotate(Q[0, 3:], jnp.stack([p["l1"] / 2, 0.0 * p["l1"], 0.0 * p["l1"]]))
    ball = Q[1, :3] + rotations.rotate(Q[1, 3:], jnp.stack([-p["l2"] / 2, 0.0 * p["l2"], 0.0 * p["l2"]]))
    e = ball - socket
    s = e @ e
    return jnp.where(s > 0, jnp.sqrt(jnp.where(s > 0, s, 1.0)), 0.0)


def derived(params: dict, given=()) -> dict:
    """The compliant joint's stiffness (Hertz, from the radii) and damping (matched to the restitution at
    the reference impact speed), pure jnp; names in ``given`` keep their value."""
    p = dict(params)
    if "stiffness" not in given:
        p["stiffness"] = hertz_stiffness(p["ball_radius"], p["clearance"])
    if "damping" not in given:
        p["damping"] = restitution_damping(p["stiffness"], p["restitution"], REFERENCE_IMPACT_SPEED)
    return p


# The default study: uncertain clearance, restitution and friction of the crank–rod ball joint; one
# crank turn at 200 rad/s. Rigid ball in socket (Moreau–Jean impacts) by default, compliant (Hertz,
# Hunt–Crossley damping matched to the restitution) with --scheme penalty, on the same samples
# (VARIANTS). peak_impulse is the rigid joint's measure (its impulse / dt scales with the step).
STUDY = DefaultStudy(
    params=("clearance=uniform(1e-4,5e-4)", "restitution=uniform(0.7,0.95)", "friction=uniform(0.01,0.1)"),
    outcomes=(
        "peak_impulse",
        "peak_force",
        "peak_accel:slider.vx",
        "impacts",
        "free_flight",
        "max:eccentricity",
        "series:eccentricity",
        "series:slider.x",
    ),
    n=64,
    dt=5e-6,
    t_final=0.0314,
    save_every=40,
    scheme="moreau-jean",
)
VARIANTS = {"rigid": {"contact": "rigid"}, "compliant": {"contact": "compliant"}}


def model(contact: str = "rigid", **overrides) -> Model:
    """The registry model: the rigid clearance joint (Moreau–Jean) by default; ``contact="compliant"`` the
    penalty variant (stiffness from the radii, damping from the restitution unless given); ``"ideal"`` the
    spherical joint."""
    if contact not in CONTACTS:
        raise ValueError(f"contact = {contact!r} must be one of {CONTACTS}")
    given = frozenset(overrides)
    params = derived(TABLE.apply(overrides), given)
    check_geometry(params)
    ASSEMBLIES[contact].validate(params)
    dt = {"rigid": 1e-5, "compliant": 5e-6, "ideal": 1e-4}[contact]
    return Model(
        "spatial-slider-crank",
        SYSTEMS[contact],
        params,
        initial_state,
        dt=dt,
        t_final=2 * np.pi / DEFAULTS["omega"],
        description="Spatial slider–crank (Haug's layout: revolute, ball, universal, prismatic joints) whose "
        f"crank–rod ball joint has a clearance ({contact} contact); crank driven at constant speed.",
        derive=functools.partial(derived, given=given) if contact == "compliant" else None,
        observables={"eccentricity": eccentricity},
        picture=functools.partial(picture, contact=contact),
        view=functools.partial(view, contact=contact),
        animation=functools.partial(animation, contact=contact),
        table=TABLE,
        study=STUDY,
        variants=VARIANTS,
    )


def _bodies(params) -> dict:
    """The shapes of the bodies that have no contact shape: the bars as segments between their joints, the
    slider as a box (keyword options of the drawing functions)."""
    links = [(0, (-0.5, "l1"), (0.5, "l1")), (1, (-0.5, "l2"), (0.5, "l2"))]
    p = {k: float(np.asarray(v)) for k, v in params.items() if np.ndim(v) == 0}
    segments = [(b, (a * p[l], 0.0, 0.0), (c * p[l], 0.0, 0.0)) for b, (a, l), (c, _) in links]
    return {"segments": segments, "boxes": [(2, (0.015, 0.01, 0.01))]}


def picture(traj, params, path, contact="rigid"):
    """3D snapshots: the bars as segments between their joints, the slider as a box, the ball."""
    return snapshots(traj, params, path, assembly=ASSEMBLIES[contact], **_bodies(params))


def view(traj, params, path, contact="rigid"):
    """The page that plays the motion (:func:`jaxcontact.spatial.view.write_html`), the bodies as in :func:`picture`."""
    return write_html(traj, params, path, assembly=ASSEMBLIES[contact], title="spatial-slider-crank", **_bodies(params))


def animation(traj, params, path, contact="rigid"):
    """The motion as an animated GIF (:func:`jaxcontact.spatial.view.write_gif`), the bodies as in :func:`picture`."""
    return write_gif(traj, params, path, assembly=ASSEMBLIES[contact], **_bodies(params))
