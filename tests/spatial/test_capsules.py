"""Capsule contacts: the segment–segment closest points against hand cases and an independent minimiser, finite
gradients at parallel segments, and a capsule on the plane in Moreau–Jean against rigid-body closed forms.

Every Moreau–Jean run of the capsule on the plane uses one grid (dt = 1e-3, 300 steps), so one compiled program
serves them all (and one more the batch).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from jaxcontact.simulate import simulate
from jaxcontact.spatial import Assembly, CapsuleCapsule, CapsulePlane, rotations
from jaxcontact.spatial.geometry import PARALLEL, capsule_capsule_gap, segment_distance, segment_parameters
from jaxcontact.system import advance, kinematics

# --- geometry -------------------------------------------------------------------------------------------------

X, Y, Z = np.eye(3)


@pytest.mark.parametrize(
    "ca, ha, cb, hb, xa, xb",
    [
        # crossing at right angles, 0.5 apart: the closest points are the crossing's
        ((0, 0, 0), X, (0, 0, 0.5), Y, (0, 0, 0), (0, 0, 0.5)),
        # parallel, overlapping on [−0.5, 1] along x: the middle of the overlap
        ((0, 0, 0), X, (0.5, 0, 0.3), X, (0.25, 0, 0), (0.25, 0, 0.3)),
        # antiparallel: the same
        ((0, 0, 0), X, (0.5, 0, 0.3), -X, (0.25, 0, 0), (0.25, 0, 0.3)),
        # skew, closest at a's end and inside b
        ((0, 0, 0), X, (2, 0, 1), Y, (1, 0, 0), (2, 0, 1)),
        # collinear, end to end
        ((0, 0, 0), X, (3.5, 0, 0), 1.5 * X, (1, 0, 0), (2, 0, 0)),
        # parallel, not overlapping: the two nearest ends
        ((0, 0, 0), X, (3, 0, 1), X, (1, 0, 0), (2, 0, 1)),
        # T: b's end above the inside of a
        ((0, 0, 0), X, (0.3, 0, 1.5), 0.5 * Z, (0.3, 0, 0), (0.3, 0, 1)),
        # skew lines whose closest points are inside both segments
        ((0, 0, 0), X, (0.2, 0.1, 0.4), np.array([1.0, 1.0, 0.0]) / 4, (0.1, 0, 0), (0.1, 0, 0.4)),
    ],
    ids=["crossing", "parallel", "antiparallel", "skew", "end-to-end", "parallel-apart", "T", "skew-inside"],
)
def test_capsule_gap_hand_cases(ca, ha, cb, hb, xa, xb):
    ra, rb = 0.1, 0.05
    args = [jnp.asarray(v, float) for v in (ca, ha)] + [ra] + [jnp.asarray(v, float) for v in (cb, hb)] + [rb]
    gap, point, n = jax.jit(capsule_capsule_gap)(*args)
    xa, xb = np.asarray(xa, float), np.asarray(xb, float)
    dist = np.linalg.norm(xb - xa)
    assert abs(gap - (dist - ra - rb)) < 1e-15
    assert np.allclose(n, (xb - xa) / dist, atol=1e-15)
    assert np.allclose(point, xa + ra * (xb - xa) / dist, atol=1e-15)


def _distance_by_minimisation(p1, d1, p2, d2):
    """min over s of the distance from p1 + s d1 to the segment p2 + t d2 (exact projection): a convex function
    of s, minimised by bounded Brent — a method independent of the clamped closed form."""

    def to_b(s):
        x = p1 + s * d1
        t = np.clip((x - p2) @ d2 / (d2 @ d2), 0.0, 1.0)
        return np.linalg.norm(x - p2 - t * d2)

    res = minimize_scalar(to_b, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-12})
    return min(res.fun, to_b(0.0), to_b(1.0))


def test_segment_distance_matches_minimisation_and_dense_sampling_on_random_segments():
    """200 random segment pairs — general, nearly parallel (1e-9 … 1e-4 rad), exactly parallel and antiparallel,
    collinear — give the distance of a 1D minimiser to 1e-10 and never exceed a 201 × 201 sample's minimum."""
    rng = np.random.default_rng(17)
    n = 200
    p1, p2 = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    d1, d2 = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    tilt = 10.0 ** rng.uniform(-9, -4, size=(50, 1))
    d2[50:100] = d1[50:100] * rng.uniform(-2, 2, size=(50, 1)) + tilt * rng.normal(size=(50, 3))
    d2[100:150] = d1[100:150] * rng.choice([-1.0, 1.0], size=(50, 1)) * rng.uniform(0.2, 2, size=(50, 1))
    p2[130:150] = p1[130:150] + d1[130:150] * rng.uniform(-2, 2, size=(20, 1))  # collinear
    s, t = jax.vmap(segment_parameters)(*(jnp.asarray(v) for v in (p1, d1, p2, d2)))
    s, t = np.asarray(s), np.asarray(t)
    assert np.all((s >= 0) & (s <= 1) & (t >= 0) & (t <= 1))
    ours = np.linalg.norm(p1 + s[:, None] * d1 - p2 - t[:, None] * d2, axis=1)
    # Symmetric in the two segments and in their directions.
    dist = jax.jit(jax.vmap(segment_distance))
    args = [jnp.asarray(v) for v in (p1, d1, p2, d2)]
    assert np.allclose(dist(*args), ours, rtol=0, atol=1e-15)
    assert np.allclose(dist(args[2], args[3], args[0], args[1]), ours, rtol=0, atol=1e-14)
    assert np.allclose(dist(args[0] + args[1], -args[1], args[2] + args[3], -args[3]), ours, rtol=0, atol=1e-14)
    grid = np.linspace(0.0, 1.0, 201)
    for i in range(n):
        best = _distance_by_minimisation(p1[i], d1[i], p2[i], d2[i])
        assert abs(ours[i] - best) < 1e-10, (i, ours[i], best)
        sampled = np.linalg.norm(
            (p1[i] + grid[:, None] * d1[i])[:, None] - (p2[i] + grid[:, None] * d2[i])[None], axis=2
        ).min()
        assert ours[i] <= sampled + 1e-12


def _two_capsules():
    asm = Assembly(gravity=0.0)
    a = asm.add_body("a", mass=1.0, inertia=(1.0, 1.0, 1.0))
    b = asm.add_body("b", mass=1.0, inertia=(1.0, 1.0, 1.0))
    asm.add_contact(
        CapsuleCapsule(
            "ab",
            restitution=0.0,
            friction=0.0,
            a=a,
            b=b,
            radius_a="ra",
            radius_b="rb",
            half_length_a=0.5,
            half_length_b=0.3,
            axis_a=(1.0, 0.0, 0.0),
            axis_b=(1.0, 0.0, 0.0),
            centre_b=(0.0, 0.0, "off"),
        )
    )
    return asm


TWO = _two_capsules().system()
P2 = {"ra": 0.05, "rb": 0.04, "off": 0.0}


@jax.jit
def _gap_and_derivatives(q, p, du):
    """The gap, its gradients in q and p, its Jacobian W_N in u, and central differences (step 1e-6) of the gap
    along the exponential map for each row of ``du``."""
    gap = lambda qq, pp: TWO.gaps(qq, 0.0, pp)[0]  # noqa: E731
    eps = 1e-6
    fd = jax.vmap(lambda d: (gap(advance(TWO, q, d, eps), p) - gap(advance(TWO, q, d, -eps), p)) / (2 * eps))(du)
    return gap(q, p), jax.grad(gap)(q, p), jax.grad(gap, argnums=1)(q, p), kinematics(TWO, q, 0.0, p).W_N[:, 0], fd


def _state(xb, tilt, quat_a=(1.0, 0.0, 0.0, 0.0), xa=(0.0, 0.0, 0.0)):
    """a at ``xa`` turned by ``quat_a``; b's centre at ``xb`` in a's frame, b turned from a by ``tilt`` about a's z
    (0: parallel to a)."""
    quat_a = jnp.asarray(quat_a, float)
    xb = jnp.asarray(xa, float) + rotations.matrix(quat_a) @ jnp.asarray(xb, float)
    quat_b = rotations.multiply(quat_a, rotations.from_axis_angle([0, 0, 1.0], tilt))
    return jnp.concatenate([jnp.asarray(xa, float), quat_a, xb, quat_b])


POSE = rotations.from_axis_angle([0.3, -0.8, 0.5], 2.1), (0.7, -0.2, 0.4)  # a generic pose of the pair


@pytest.mark.parametrize("tilt", [0.0, 1e-12, 1e-9, 1e-8, 1e-7, 1e-5, 1e-3])
def test_gap_gradient_is_finite_and_exact_at_parallel_capsules(tilt):
    """b parallel to a (or turned by up to 1e-3 rad about a's z at its centre) 0.2 above it and shifted along it, the
    pair turned to a generic pose: the closest points are x_a = 0.1 along a's axis, under b's centre x_b (the middle
    of the overlap, or the crossing of the turned axes), and the gap's Jacobian in u is Danskin's,
    n·(v_b(x_b) − v_a(x_a)) with n = R_a e_z: −n for a's velocity, +n for b's, +0.1 for a's ω_y (x_a is 0.1 from
    a's centre), 0 for the rest. Treated as parallel (tilt ≤ 1.5e-7): exact to 1e-12. Above, to the conditioning of
    where nearly parallel segments are closest, ε h / tilt² (5e-7 at 1e-5 rad): the rounding of the turned
    directions moves the crossing. (Differentiating through the closest points' parameters instead adds errors
    growing like 1/tilt².) Gradients in q and in the radii are finite, translations match central differences."""
    translations = np.asarray([0, 1, 2, 6, 7, 8])
    gap, gq, gp, W, fd = _gap_and_derivatives(_state([0.1, 0.0, 0.2], tilt, *POSE), P2, jnp.eye(12)[translations])
    n = np.asarray(rotations.matrix(POSE[0]))[:, 2]
    assert abs(gap - (0.2 - 0.09)) < 1e-15
    assert np.all(np.isfinite(gq))
    assert abs(gp["ra"] + 1.0) < 1e-12 and abs(gp["rb"] + 1.0) < 1e-12
    parallel = tilt <= PARALLEL * np.sqrt(np.finfo(float).eps)
    tol = 1e-12 if parallel else 1e-12 + 1e-15 / tilt**2
    assert np.allclose(W, np.concatenate([-n, [0, 0.1, 0], n, [0, 0, 0]]), rtol=0, atol=tol)
    assert np.allclose(fd, np.asarray(W)[translations], rtol=0, atol=1e-9)


def test_gap_jacobian_matches_finite_differences_at_skew_capsules():
    """At a generic pose (both turned, b skew above a) W_N u = d/dτ g(advance(q, u, τ)) for random u."""
    q = _state([0.1, 0.05, 0.2], 0.0, rotations.from_axis_angle([1.0, 2.0, 3.0], 0.4), (0.05, -0.02, 0.01))
    q = q.at[10:].set(rotations.from_axis_angle([0.3, -1.0, 0.5], 1.1))  # b skew
    du = jnp.asarray(np.random.default_rng(3).normal(size=(5, 12)))
    _, gq, _, W, fd = _gap_and_derivatives(q, P2, du)
    assert np.all(np.isfinite(gq))
    assert np.allclose(fd, du @ W, rtol=0, atol=1e-8)


def test_capsule_contacts_refuse_bad_values_by_name():
    asm = Assembly()
    rod = asm.add_body("rod", mass=1.0, inertia=(1.0, 1.0, 0.5))
    with pytest.raises(ValueError, match=r"contact 'c': b must be a body of this assembly"):
        asm.add_contact(
            CapsuleCapsule(
                "c",
                restitution=0.0,
                friction=0.0,
                a=rod,
                b=None,
                radius_a=0.1,
                radius_b=0.1,
                half_length_a=0.1,
                half_length_b=0.1,
            )
        )
    with pytest.raises(ValueError, match=r"contact 'c': a and b are the same body 'rod'"):
        asm.add_contact(
            CapsuleCapsule(
                "c",
                restitution=0.0,
                friction=0.0,
                a=rod,
                b=rod,
                radius_a=0.1,
                radius_b=0.1,
                half_length_a=0.1,
                half_length_b=0.1,
            )
        )
    asm.add_contact(
        CapsulePlane(
            "floor", restitution=0.0, friction=0.3, body=rod, radius="r", half_length="hl", axis=("ax", 0.0, 0.0)
        )
    )
    p = {"gravity": 9.81, "r": 0.05, "hl": 0.2, "ax": 1.0}
    asm.validate(p)
    with pytest.raises(ValueError, match=r"contact 'floor' half_length = -0.2 breaks the rule > 0"):
        asm.validate({**p, "hl": -0.2})
    with pytest.raises(ValueError, match=r"contact 'floor' radius = 0.0 breaks the rule > 0"):
        asm.validate({**p, "r": 0.0})
    with pytest.raises(
        ValueError,
        match=r"contact 'floor' axis = \[0.0, 0.0, 0.0\] breaks the rule: finite and "
        r"non-zero",
    ):
        asm.validate({**p, "ax": 0.0})
    bad = Assembly()
    rod = bad.add_body("rod", mass=1.0, inertia=(1.0, 1.0, 0.5))
    bad.add_contact(
        CapsulePlane("floor", restitution=0.0, friction=0.3, body=rod, radius=0.1, half_length=0.1, axis=(1.0, 0.0))
    )
    with pytest.raises(ValueError, match=r"contact 'floor' axis = \(1.0, 0.0\) must be three coordinates"):
        bad.validate({"gravity": 9.81})


# --- a capsule on the plane in Moreau–Jean ----------------------------------------------------------------------


def _capsule_on_plane():
    """A capsule along the body's x axis; inertia of a solid cylinder of the same radius and length 2 hl (the
    closed forms below take the moments as given, whatever they are)."""
    asm = Assembly(gravity="gravity")
    rod = asm.add_body("rod", mass="mass", inertia=("Ia", "It", "It"))
    asm.add_contact(
        CapsulePlane(
            "floor",
            restitution="restitution",
            friction="friction",
            body=rod,
            radius="radius",
            half_length="hl",
            axis=(1.0, 0.0, 0.0),
        )
    )
    return asm


ROD = _capsule_on_plane()
SYSTEM = ROD.system()
DT, STEPS = 1e-3, 300


def _params(**kw):
    p = {"gravity": 9.81, "mass": 1.0, "radius": 0.05, "hl": 0.2, "restitution": 0.0, "friction": 0.3}
    p.update(kw)
    m, r, hl = p["mass"], p["radius"], p["hl"]
    p.setdefault("It", m * (3 * r**2 + 4 * hl**2) / 12)
    p.setdefault("Ia", m * r**2 / 2)
    ROD.validate(p)
    return {k: jnp.asarray(v, float) for k, v in p.items()}


def _run(p, q0, u0):
    return simulate(SYSTEM, p, q0, u0, dt=DT, n_steps=STEPS)


# Compiled once (op by op, the contact Jacobian alone takes seconds to dispatch).
_gaps = jax.jit(jax.vmap(lambda q, p: SYSTEM.gaps(q, 0.0, p), in_axes=(0, None)))
_W_N = jax.jit(lambda q, p: kinematics(SYSTEM, q, 0.0, p).W_N)


def _drop_state(p, drop=0.01):
    return jnp.asarray([0.0, 0.0, p["radius"] + drop, 1.0, 0.0, 0.0, 0.0]), jnp.zeros(6)


def test_capsule_dropped_flat_rests_on_both_ends():
    """Dropped flat from 1 cm (ε = 0): it lands on both end spheres at once and rests at height = radius — up to
    the velocity-level scheme's penetration, at most h v/2 for the landing speed v — with both contacts closed and
    equal, no rotation, and each end carrying half the weight."""
    p = _params()
    traj = _run(p, *_drop_state(p))
    gaps = np.asarray(_gaps(traj.q, p))
    v_land = np.sqrt(2 * 9.81 * 0.01)
    assert np.all(gaps[:, 0] == gaps[:, 1])
    assert gaps.min() >= -0.5 * DT * v_land
    assert abs(float(traj.q[-1, 2]) - 0.05) <= 0.5 * DT * v_land
    assert np.max(np.abs(np.asarray(traj.u[-1]))) < 1e-12
    assert np.max(np.abs(np.asarray(traj.q[:, 3:]) - [1.0, 0.0, 0.0, 0.0])) < 1e-14
    assert np.max(np.abs(np.asarray(traj.u[:, 3:]))) < 1e-12
    assert np.all(np.asarray(traj.active[-1]))
    assert np.allclose(np.asarray(traj.impulse_normal[-1]), 0.5 * 9.81 * DT, rtol=1e-12)


def rod_impact(m, It, hl, alpha, v0, e):
    """A rigid rod (mass m, transverse moment It about its centre) falling at v0 without spin, its axis at α to the
    ground, hits it with its lower end (lever arm hl cos α horizontally): frictionless Newton impact.

    The impulse P ẑ at the contact point (ρ from the centre) gives Δv = P/m ẑ and Δω = It⁻¹ ρ × P ẑ, only about
    the horizontal axis ⊥ the rod: Δω_y = −(hl cos α) P / It. The contact's normal velocity v_z + (ω × ρ)_z goes
    from −v0 to e v0 (Newton), so P = (1 + e) v0 m*, 1/m* = 1/m + (hl cos α)²/It. Returns (v_z, ω_y) after.
    """
    arm = hl * np.cos(alpha)
    P = (1 + e) * v0 / (1 / m + arm**2 / It)
    return -v0 + P / m, -arm * P / It


def test_capsule_plane_gaps_of_an_offset_turned_capsule():
    """The segment centred 0.1 from the centre of mass along the body's x, the body at height 1 turned 90° about y
    (body x → world −z): the ends are at heights 1.1 and 0.7, the gaps those minus the radius (end −h first)."""
    asm = Assembly(gravity=9.81)
    rod = asm.add_body("rod", mass=1.0, inertia=(1.0, 1.0, 1.0))
    asm.add_contact(
        CapsulePlane(
            "c",
            restitution=0.0,
            friction=0.0,
            body=rod,
            radius=0.05,
            half_length=0.2,
            axis=(2.0, 0.0, 0.0),
            centre=(0.1, 0.0, 0.0),
        )
    )
    asm.validate({})
    q = jnp.concatenate([jnp.asarray([0.3, -0.2, 1.0]), rotations.from_axis_angle([0.0, 1.0, 0.0], np.pi / 2)])
    assert np.allclose(jax.jit(asm.system().gaps)(q, 0.0, {}), [1.1 - 0.05, 0.7 - 0.05], rtol=0, atol=1e-15)


@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_tilted_capsule_first_impact_matches_the_rigid_rod(e):
    """Tilted 30° about y (the +x end lower), falling at 1 m/s without gravity or friction: after the impact step the
    centre's velocity and the spin are the rigid rod's (1e-12), the end's normal velocity is −e times the
    approach, energy is kept for e = 1, and only the lower end took an impulse."""
    alpha, v0 = np.deg2rad(30.0), 1.0
    p = _params(gravity=0.0, friction=0.0, restitution=e)
    quat = rotations.from_axis_angle([0.0, 1.0, 0.0], alpha)
    z0 = 0.2 * np.sin(alpha) + 0.05 + 0.0105  # the lower end 10.5 mm above the plane
    q0 = jnp.concatenate([jnp.asarray([0.0, 0.0, z0]), quat])
    u0 = jnp.asarray([0.0, 0.0, -v0, 0.0, 0.0, 0.0])
    traj = _run(p, q0, u0)
    P = np.asarray(traj.impulse_normal)
    hit = np.flatnonzero(P.sum(axis=1) > 0)[0]
    assert P[hit, 1] > 0 and P[hit, 0] == 0  # contact 1 is the end +h: the lower one
    vz, wy = rod_impact(1.0, float(p["It"]), 0.2, alpha, v0, e)
    u = np.asarray(traj.u[hit])
    assert np.allclose(u, [0.0, 0.0, vz, 0.0, wy, 0.0], atol=1e-12)
    W = np.asarray(_W_N(traj.q[hit - 1], p))[:, 1]
    assert abs(W @ u - e * v0) < 1e-12
    if e == 1.0:
        M = np.diag([1.0, 1.0, 1.0, float(p["Ia"]), float(p["It"]), float(p["It"])])
        assert abs(0.5 * u @ M @ u - 0.5 * v0**2) < 1e-12


def test_capsule_slides_then_rolls_about_its_axis():
    """Lying across x (axis along world y) on the plane, launched sliding at 1 m/s without spin (μ = 0.3): friction
    μ m g slows it and spins it up about its axis until t* = v0 / (μ g (1 + m r²/I_a)), then it rolls at
    v* = v0 m r² / (I_a + m r²) (2/3 v0 for a solid cylinder) and keeps v = ω r without slip, on both ends."""
    p = _params()
    m, r, Ia, mu, g, v0 = 1.0, 0.05, float(p["Ia"]), 0.3, 9.81, 1.0
    quat = rotations.from_axis_angle([0.0, 0.0, 1.0], np.pi / 2)  # body x along world y
    q0 = jnp.concatenate([jnp.asarray([0.0, 0.0, r]), quat])
    traj = _run(p, q0, jnp.asarray([v0, 0.0, 0.0, 0.0, 0.0, 0.0]))
    t = np.asarray(traj.t)
    v = np.asarray(traj.u[:, 0])
    spin = np.asarray(traj.u[:, 3])  # body x = the axis = world y
    t_star = v0 / (mu * g * (1 + m * r**2 / Ia))
    v_star = v0 * m * r**2 / (Ia + m * r**2)
    exact = np.where(t < t_star, v0 - mu * g * t, v_star)
    assert np.max(np.abs(v - exact)) < 1e-9
    rolling = np.flatnonzero(np.abs(v - spin * r) < 1e-10)
    assert abs(t[rolling[0]] - t_star) <= DT
    assert np.all(np.abs(v[rolling[0] :] - spin[rolling[0] :] * r) < 1e-10)
    assert abs(v[-1] - 2.0 / 3.0 * v0) < 1e-9
    gaps = np.asarray(_gaps(traj.q, p))
    assert np.max(np.abs(gaps)) < 1e-12
    assert np.max(np.abs(np.asarray(traj.u[:, [1, 2, 4, 5]]))) < 1e-12
    assert np.all(np.asarray(traj.diagnostics.converged))


def test_batch_of_radii_and_restitutions_equals_single_runs():
    values = {"radius": [0.04, 0.05, 0.06], "restitution": [0.0, 0.3, 0.6]}
    singles = [_params(**{k: v[i] for k, v in values.items()}) for i in range(3)]
    batch = jax.tree.map(lambda *xs: jnp.stack(xs), *singles)
    states = [_drop_state(s) for s in singles]
    q0 = jnp.stack([s[0] for s in states])
    u0 = jnp.stack([s[1] for s in states])
    traj = simulate(SYSTEM, batch, q0, u0, dt=DT, n_steps=STEPS)
    for i in range(3):
        one = _run(singles[i], *states[i])
        assert np.max(np.abs(traj.q[i] - one.q)) < 1e-13
        assert np.max(np.abs(traj.u[i] - one.u)) < 1e-12
        assert np.array_equal(traj.active[i], one.active)
    # The restitutions show: the capsule with ε = 0.6 bounces to ε² of the drop (within the step's O(h) error).
    z = np.asarray(traj.q[2, :, 2]) - 0.06
    first = np.flatnonzero(np.asarray(traj.impulse_normal[2]).sum(axis=1) > 0)[0]
    assert abs(z[first + 5 : first + 150].max() - 0.36 * 0.01) < 2e-4


# --- a capsule on a capsule fixed on the ground ----------------------------------------------------------------


def _capsule_on_capsule():
    """A capsule (radius 0.04, half length 0.2 along its body's x) over a ground capsule along world x (radius 0.05,
    half length 0.3, centred at the origin)."""
    asm = Assembly(gravity="gravity")
    rod = asm.add_body("rod", mass=1.0, inertia=(0.0008, 0.0137, 0.0137))
    asm.add_contact(
        CapsuleCapsule(
            "on",
            restitution="restitution",
            friction="friction",
            a=None,
            b=rod,
            radius_a=0.05,
            radius_b=0.04,
            half_length_a=0.3,
            half_length_b=0.2,
            axis_a=(1.0, 0.0, 0.0),
            axis_b=(1.0, 0.0, 0.0),
        )
    )
    return asm


STACK = _capsule_on_capsule().system()


@pytest.mark.parametrize("case", ["crossed", "parallel"])
def test_capsule_on_a_ground_capsule(case):
    """Crossed: the rod falls at 1 m/s across the ground capsule's middle (gravity off, frictionless, ε = 0.5) and
    leaves at 0.5 m/s without turning. Parallel: the rod lies on it, its centre over the middle of their overlap
    (x = 0.1 on [−0.1, 0.3]), under gravity with friction: it rests, one contact carrying the weight, the gap 0."""
    dt = 1e-3
    if case == "crossed":
        p = {"gravity": 0.0, "restitution": 0.5, "friction": 0.0}
        q0 = jnp.concatenate([jnp.asarray([0.0, 0.0, 0.0955]), rotations.from_axis_angle([0.0, 0.0, 1.0], np.pi / 2)])
        u0 = jnp.asarray([0.0, 0.0, -1.0, 0.0, 0.0, 0.0])
    else:
        p = {"gravity": 9.81, "restitution": 0.0, "friction": 0.5}
        q0 = jnp.asarray([0.1, 0.0, 0.09, 1.0, 0.0, 0.0, 0.0])
        u0 = jnp.zeros(6)
    p = {k: jnp.asarray(v) for k, v in p.items()}
    traj = simulate(STACK, p, q0, u0, dt=dt, n_steps=STEPS)
    P = np.asarray(traj.impulse_normal[:, 0])
    if case == "crossed":
        hit = np.flatnonzero(P > 0)[0]
        assert np.flatnonzero(P > 0).size == 1
        assert np.allclose(np.asarray(traj.u[hit]), [0.0, 0.0, 0.5, 0.0, 0.0, 0.0], rtol=0, atol=1e-12)
    else:
        assert np.max(np.abs(np.asarray(traj.u))) < 1e-12
        assert np.max(np.abs(np.asarray(traj.q[-1] - q0))) < 1e-15
        assert np.allclose(P[1:], 9.81 * dt, rtol=1e-12)
