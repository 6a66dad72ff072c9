"""Newton's cradle: three balls on spherical joints, touching in a row; the first is pulled back and released.

Three spatial balls (radius r, mass m, solid: I = 2/5 m r²) hang at ``length`` below ground pivots
spaced 2r apart along x, so neighbours touch (gap 0); sphere–sphere contacts with Newton
restitution ε and friction μ join them. Ball 1 starts pulled back by ``angle_deg``.

What Moreau–Jean's impulse law gives for the simultaneous impact: every closed contact obeys
Newton's law ξ_N = γ_NE + ε γ_NA at once (one cone problem for the step), so when ball 1 hits
the resting pair the impulses solve an LCP over both contacts. For equal masses and ε = 1 its
solution sends ball 1 back at −v/3 and balls 2 and 3 off together at 2v/3 — energy and
momentum conserved, but not the "one ball out" (0, 0, v) of a real cradle, whose balls
separate through a wave of successive impacts that a rigid simultaneous law cannot resolve.
(:func:`simultaneous_impact` gives this LCP's velocities for any ε.)
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

from jaxcontact.models import Model
from jaxcontact.params import ParamTable, law_rule
from jaxcontact.spatial import Assembly, SphereSphere, Spherical, rotations
from jaxcontact.spatial.pictures import snapshots
from jaxcontact.spatial.view import write_gif, write_html

N_BALLS = 3
DEFAULTS = {
    "mass": 0.2,
    "radius": 0.02,
    "length": 0.3,
    "angle_deg": 20.0,
    "restitution": 1.0,
    "friction": 0.0,
    "gravity": 9.81,
}
RULES = {
    "mass": (lambda v: v > 0, "> 0"),
    "radius": (lambda v: v > 0, "> 0"),
    "length": (lambda v: v > 0, "> 0"),
    "angle_deg": (lambda v: (v >= 0) & (v < 90), "in [0, 90)"),
    "restitution": law_rule("restitution"),
    "friction": law_rule("friction"),
    "gravity": (lambda v: v >= 0, ">= 0"),
}
# The parameters: defaults, rules and units (the conventions by name for the units not given).
TABLE = ParamTable.of(DEFAULTS, RULES)


def _assembly() -> Assembly:
    asm = Assembly(gravity="gravity")
    balls = [asm.add_body(f"ball{i + 1}", mass="mass", inertia=("0.4*mass*radius**2",) * 3) for i in range(N_BALLS)]
    for i, b in enumerate(balls):
        asm.add_joint(Spherical(f"pivot{i + 1}", None, (f"{2 * i}*radius", 0.0, 0.0), b, (0.0, 0.0, "length")))
    for i in range(N_BALLS - 1):
        asm.add_contact(
            SphereSphere(
                f"contact{i + 1}",
                restitution="restitution",
                friction="friction",
                a=balls[i],
                b=balls[i + 1],
                radius_a="radius",
                radius_b="radius",
            )
        )
    return asm


ASSEMBLY = _assembly()
SYSTEM = ASSEMBLY.system()


def initial_state(p):
    """Balls 2… hanging at rest; ball 1 turned back by angle_deg about e_y around its pivot."""
    dtype = jnp.result_type(float)
    parts = []
    for i in range(N_BALLS):
        angle = jnp.deg2rad(jnp.asarray(p["angle_deg"], dtype)) if i == 0 else 0.0 * p["angle_deg"]
        quat = rotations.exp(angle * jnp.asarray([0.0, 1.0, 0.0], dtype))
        pivot = jnp.stack([2 * i * p["radius"], 0.0 * p["radius"], 0.0 * p["radius"]])
        parts.append(
            jnp.concatenate(
                [pivot - rotations.rotate(quat, jnp.stack([0.0 * p["length"], 0.0 * p["length"], p["length"]])), quat]
            )
        )
    q0 = jnp.concatenate(parts)
    return q0, jnp.zeros(6 * N_BALLS, dtype)


def simultaneous_impact(v, restitution, n: int = N_BALLS):
    """Velocities after Moreau–Jean's simultaneous Newton impact of ball 1 (speed v) on n − 1 touching balls at rest.

    Solves the LCP ξ = γ_E + ε γ_A ≥ 0 ⊥ P ≥ 0 over the n − 1 contacts of equal unit masses by enumeration
    of the active sets (numpy; small n).
    """
    import itertools

    gamma_A = np.zeros(n - 1)
    gamma_A[0] = -v
    B = np.zeros((n, n - 1))  # velocity change per contact impulse: ball i gets −P_i, ball i+1 gets +P_i
    for i in range(n - 1):
        B[i, i], B[i + 1, i] = -1.0, 1.0
    u_A = np.zeros(n)
    u_A[0] = v
    D = np.diff(B, axis=0)  # γ_E = D P + diff(u_A)
    c = np.diff(u_A) + restitution * gamma_A
    for active in itertools.product((False, True), repeat=n - 1):
        idx = np.flatnonzero(active)
        P = np.zeros(n - 1)
        if idx.size:
            P[idx] = np.linalg.solve(D[np.ix_(idx, idx)], -c[idx])
        xi = D @ P + c
        if np.all(P >= -1e-12) and np.all(xi >= -1e-12):
            return u_A + B @ P
    raise ValueError("no solution of the impact LCP (unreachable for positive masses)")


def model(**overrides) -> Model:
    """Newton's cradle with parameter overrides by name."""
    params = TABLE.apply(overrides)
    ASSEMBLY.validate(params)
    return Model(
        "newton-cradle",
        SYSTEM,
        params,
        initial_state,
        dt=1e-3,
        t_final=1.0,
        description="Newton's cradle: three balls on spherical joints; Moreau–Jean's simultaneous impact "
        "law sends ball 1 back at −v/3 and balls 2–3 off at 2v/3 (ε = 1).",
        picture=functools.partial(snapshots, assembly=ASSEMBLY),
        view=functools.partial(write_html, assembly=ASSEMBLY, title="newton-cradle"),
        animation=functools.partial(write_gif, assembly=ASSEMBLY),
        table=TABLE,
    )
