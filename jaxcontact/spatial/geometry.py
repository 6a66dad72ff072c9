"""World-frame contact geometry of spatial shapes: small pure functions of world points and directions.

Each function returns gaps (open when positive), contact points and unit normals; the contact
elements (:mod:`jaxcontact.spatial.contacts`) place the shapes on their bodies and call these.
The time stepping differentiates the gap of every contact, open or closed, so every function keeps
its value *and its gradient* finite at its degenerate configurations — a pin on the hole's axis,
parallel segments, touching axes — by the double-where trick of :func:`safe_norm`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

# Two segments count as parallel when sin θ ≤ PARALLEL √ε (:func:`segment_parameters`): below it, where nearly
# parallel segments are closest is decided by the rounding of their directions.
PARALLEL = 10.0


def tangent_basis(n):
    """An orthonormal pair (t1, t2) with (t1, t2, n) right-handed, smooth away from the switch |n_y| = 0.9.

    t1 = e × n / ‖e × n‖ with e = e_y (e_x when n is close to ±e_y), t2 = n × t1; for the
    horizontal plane (n = e_z) this is (e_x, e_y).
    """
    e = jnp.where(jnp.abs(n[1]) < 0.9, jnp.asarray([0.0, 1.0, 0.0], n.dtype), jnp.asarray([1.0, 0.0, 0.0], n.dtype))
    t1 = jnp.cross(e, n)
    t1 = t1 / jnp.sqrt(t1 @ t1)
    return t1, jnp.cross(n, t1)


def safe_norm(v):
    """‖v‖ over the last axis, with a zero (not NaN) gradient at v = 0: the double-where trick."""
    sq = jnp.sum(v * v, axis=-1)
    pos = sq > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, sq, 1.0)), 0.0)


def safe_unit(v, default):
    """v / ‖v‖ over the last axis, and ``default`` where v = 0, with finite gradients everywhere."""
    sq = jnp.sum(v * v, axis=-1, keepdims=True)
    pos = sq > 0
    return jnp.where(pos, v / jnp.sqrt(jnp.where(pos, sq, 1.0)), default)


def sphere_plane_gap(centre, radius, plane_normal, plane_offset):
    """(gap, contact point on the sphere) of a sphere and the plane n·x = d (n unit, the open side n·x > d).

    ``centre`` may hold several spheres (..., 3): then gaps (...,) and points (..., 3).
    """
    gap = centre @ plane_normal - plane_offset - radius
    return gap, centre - radius * plane_normal


def sphere_sphere_gap(ca, ra, cb, rb):
    """(gap, contact point on a, unit normal from a to b) of two spheres (centres apart)."""
    d = cb - ca
    dist = jnp.sqrt(d @ d)
    n = d / dist
    return dist - ra - rb, ca + ra * n, n


def vertex_plane_gaps(centre, R, vertices, plane_normal, plane_offset):
    """(gaps (k,), world vertices (k, 3)) of the points ``vertices`` (k, 3) of a frame (origin ``centre``,
    rotation R) above the plane n·x = d: g_i = n·(centre + R v_i) − d, the points themselves."""
    world = centre + vertices @ R.T
    return world @ plane_normal - plane_offset, world


def box_plane_gaps(centre, R, half_extents, plane_normal, plane_offset):
    """(gaps (8,), vertices (8, 3)) of a box's vertices above the plane n·x = d (:func:`vertex_plane_gaps`)."""
    signs = jnp.asarray([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], centre.dtype)
    return vertex_plane_gaps(centre, R, signs * half_extents, plane_normal, plane_offset)


def sphere_box_gap(box_centre, R, half_extents, centre, radius):
    """(gap, contact point on the box, unit normal from the box to the sphere) of a box (centre, rotation R,
    half extents) and a sphere.

    In the box's frame the sphere's centre is s = Rᵀ (centre − box_centre) and the box's closest point
    p = clip(s, −h, h). Outside the box the normal is (s − p)/‖s − p‖ (a face, an edge or a vertex, whichever
    p lies on) and the gap ‖s − p‖ − r. A centre inside the box leaves by the face it is closest to: the
    normal is that face's, the gap −(its depth) − r; both branches are computed with finite values, so the
    gradient of the one taken is finite.
    """
    s = R.T @ (centre - box_centre)
    p = jnp.clip(s, -half_extents, half_extents)
    d = s - p
    dd = d @ d
    outside = dd > 0.0
    dist = jnp.sqrt(jnp.where(outside, dd, 1.0))
    n_out = jnp.where(outside, d, 1.0) / dist
    depth = half_extents - jnp.abs(s)  # ≥ 0 inside
    face = jnp.argmin(depth)
    side = jnp.where(s[face] >= 0, 1.0, -1.0)
    n_in = side * jax.nn.one_hot(face, 3, dtype=s.dtype)
    p_in = s + n_in * depth[face]  # the centre pushed out to the face
    gap = jnp.where(outside, dist, -depth[face]) - radius
    n = jnp.where(outside, n_out, n_in)
    point = jnp.where(outside, p, p_in)
    return gap, box_centre + R @ point, R @ n


def box_box_gaps(centre_a, Ra, half_a, centre_b, Rb, half_b):
    """(gaps (16,), points (16, 3), unit normals from a to b (16, 3)) of two boxes by their vertices: b's 8
    vertices against box a, then a's 8 against box b (each by :func:`sphere_box_gap` with radius 0: the box's
    closest point, or the nearest face for a vertex inside it).

    Face on face (a box resting on a box) the vertices of the smaller face carry the contact; a vertex or an
    edge on a face, its vertices. Two edges crossing each other touch at no vertex: that contact is
    :func:`box_box_edge_gaps`'s. A vertex inside a box takes the
    normal of the face it is least deep under: where a face of each box lies in one plane (two boxes of one
    height side by side), a vertex on that plane reads depth 0 under it and takes its normal, not the face
    it is crossing.
    """
    signs = jnp.asarray([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], centre_a.dtype)
    vertices_b = centre_b + (signs * half_b) @ Rb.T
    vertices_a = centre_a + (signs * half_a) @ Ra.T
    on_a = jax.vmap(sphere_box_gap, in_axes=(None, None, None, 0, None))(centre_a, Ra, half_a, vertices_b, 0.0)
    on_b = jax.vmap(sphere_box_gap, in_axes=(None, None, None, 0, None))(centre_b, Rb, half_b, vertices_a, 0.0)
    gaps = jnp.concatenate([on_a[0], on_b[0]])
    points = jnp.concatenate([on_a[1], on_b[1]])
    normals = jnp.concatenate([on_a[2], -on_b[2]])
    return gaps, points, normals


def box_box_edge_gaps(centre_a, Ra, half_a, centre_b, Rb, half_b):
    """(gaps (9,), points (9, 3), unit normals from a to b (9, 3)) of two boxes' edge–edge contacts: one per pair
    of edge directions (a's axis k, b's axis l), the contact of the edges that axis pair can bring together.

    For the axis pair, n = ±(A_k × B_l)/‖A_k × B_l‖ is turned from a's centre towards b's; a's edge along A_k
    that lies furthest along n (its other two coordinates of the signs of n·A_i) and b's edge along B_l that
    lies furthest along −n are the only two edges of that pair of directions that can touch with normal n (the
    separating axes of the two boxes' edges). Where the closest points of these two segments lie inside both
    (the edges cross, seen along n) and the boxes are no further apart along any face normal than along n (the
    separating-axis test: n is the axis along which they overlap least), the gap is n·(c_b − c_a) — the
    separation of the boxes along n, negative where the edges have passed through each other — and the contact
    point the middle of c_a and c_b; otherwise — the edges do not cross, so a vertex meets a face instead (the
    vertex contacts), a face axis separates them (a box resting on a face: its vertical edges "cross" the
    lower box's edges seen sideways, far behind them), or the directions are parallel (edges lying along each
    other touch at vertices too) — the contact is inactive: its gap is the centres' distance plus both boxes'
    half diagonals, more than any distance between their points. A face on a face crossed by edges of the other
    (a box turned on a box) has gap 0 at the crossings, normal along the faces' normal: the same contact as
    the vertices'. Values and gradients are finite everywhere; the gap is differentiable wherever the edges
    cross (the support edges and the activity switch where an n·A_i or a closest point's parameter passes 0).
    """
    A, B = Ra.T, Rb.T  # rows: the boxes' unit axes
    offset = centre_b - centre_a
    far = safe_norm(offset) + safe_norm(half_a) + safe_norm(half_b)
    eps = jnp.finfo(centre_a.dtype).eps
    # The boxes' separation along their face normals (the separating-axis test's face axes): an edge pair is
    # the contact only where its own separation is not less (else a face axis separates them, or they overlap
    # less across a face, and the vertex contacts hold them).
    cross = jnp.abs(A @ B.T)  # |A_i · B_j|
    face = jnp.max(
        jnp.concatenate(
            [jnp.abs(A @ offset) - half_a - cross @ half_b, jnp.abs(B @ offset) - half_b - cross.T @ half_a]
        )
    )

    def pair(k, l):
        m = jnp.cross(A[k], B[l])
        n = safe_unit(m, A[k])  # parallel directions: an inactive contact, any unit normal
        n = jnp.where(n @ offset < 0, -n, n)
        sign_a = jnp.where(A @ n < 0, -1.0, 1.0)
        sign_b = jnp.where(B @ n < 0, 1.0, -1.0)  # b's edge lies furthest along −n
        mid_a = centre_a + ((sign_a * half_a).at[k].set(0.0)) @ A
        mid_b = centre_b + ((sign_b * half_b).at[l].set(0.0)) @ B
        p1, d1 = mid_a - half_a[k] * A[k], 2.0 * half_a[k] * A[k]
        p2, d2 = mid_b - half_b[l] * B[l], 2.0 * half_b[l] * B[l]
        s, t = segment_parameters(p1, d1, p2, d2)
        c_a, c_b = p1 + s * d1, p2 + t * d2
        gap = n @ (c_b - c_a)  # the separation along n: the support planes' distance
        crossing = (m @ m > PARALLEL**2 * eps) & (s > 0.0) & (s < 1.0) & (t > 0.0) & (t < 1.0) & (gap >= face)
        return jnp.where(crossing, gap, far), 0.5 * (c_a + c_b), n

    gaps, points, normals = zip(*(pair(k, l) for k in range(3) for l in range(3)))
    return jnp.stack(gaps), jnp.stack(points), jnp.stack(normals)


def capsule_plane_gaps(centre, half, radius, plane_normal, plane_offset):
    """(gaps (2,), contact points (2, 3)) of a capsule — the points within ``radius`` of the segment
    centre ± half (world) — above the plane n·x = d: its two end spheres.

    The lowest point of a capsule is on one of its end spheres (the height is linear along the
    segment), and a capsule lying flat touches along a line whose ends these two points are; the
    two contacts carry any distribution of load along that line (statics needs no more).
    """
    ends = jnp.stack([centre - half, centre + half])
    return sphere_plane_gap(ends, radius, plane_normal, plane_offset)


def cylinder_plane_gaps(centre, half, radius, reference, plane_normal, plane_offset, rim: int):
    """(gaps (2 (1 + rim),), points) of a solid cylinder — radius ``radius`` about the segment centre ± half
    (world) — above the plane n·x = d: for each end circle, its lowest point and ``rim`` points spread
    evenly around it from the world direction ``reference`` (⟂ the axis, turning with the body).

    The lowest point of a circle of centre e and unit axis â is e − r v/‖v‖ with v = n − (n·â) â (the
    downward direction in the circle's plane): a cylinder on its side or on an edge touches there, and
    rolls smoothly. Standing on an end face, v vanishes and the whole circle touches: the rim points then
    carry the load (at least 3 of them keep it standing), and the lowest point falls back on ``reference``
    so that its value and gradient stay finite. The rim points are never below the lowest point, so they
    take load only when the face is nearly flat on the plane.
    """
    axis = half / jnp.sqrt(half @ half)
    v = plane_normal - (plane_normal @ axis) * axis
    tilted = v @ v > 1e-20  # below: an end face parallel to the plane (v is rounding)
    v = jnp.where(tilted, v, reference)
    down = v / jnp.sqrt(v @ v)
    other = jnp.cross(axis, reference)
    angles = 2 * jnp.pi * jnp.arange(rim, dtype=centre.dtype) / rim
    spokes = jnp.cos(angles)[:, None] * reference + jnp.sin(angles)[:, None] * other  # (rim, 3)
    offsets = radius * jnp.concatenate([-down[None], spokes])  # (1 + rim, 3)
    points = jnp.concatenate([centre - half + offsets, centre + half + offsets])
    return points @ plane_normal - plane_offset, points


def segment_parameters(p1, d1, p2, d2):
    """(s, t) ∈ [0, 1]² minimising ‖p1 + s d1 − (p2 + t d2)‖ for the segments p1 + s d1 and p2 + t d2
    (d1, d2 non-zero): the clamped closest-point problem.

    Non-parallel segments: the closest points of the two lines, s = ((p2 − p1) × d2)·m / ‖m‖² with
    m = d1 × d2, clamped to [0, 1]; t is then the projection of that point on the second segment,
    and when t has to be clamped, s is projected again from the clamped end (Ericson, *Real-Time
    Collision Detection*, §5.1.9) — the exact minimiser of the convex quadratic over the square.
    The cross product keeps ‖m‖² = a e sin²θ to a relative rounding error ε/θ, where Ericson's
    a e − (d1·d2)² has ε/θ² and is pure rounding below θ ≈ 1e-8.

    Nearly parallel segments are ill-conditioned in *where* they are closest (not in how far):
    a rounding ε of the directions moves the lines' closest points by about ε h / sin²θ (h the
    distance between them), anywhere along the overlap once θ ≲ √ε. Below sin θ = :data:`PARALLEL`
    √ε the segments are treated as parallel: of the middle of the overlap of the second segment's
    projection on the first and the overlap's two ends, s is the closest, and the middle on a tie
    (within the rounding of the distance) — the stable, symmetric choice, the centre of the line of
    contact of two parallel capsules, which a rounding error does not throw to an end. (When they
    do not overlap, all three are the first segment's end nearest to the second.) The distance is
    then the minimum up to sin²θ ‖d1‖²/(2h) ≤ 100 ε ‖d1‖²/(2h) (a crossing inside the overlap),
    exact when it is monotone along the overlap. The division by ‖m‖² is taken only on the
    non-parallel branch (the other divides by 1), so values and gradients are finite everywhere.
    """
    r = p2 - p1
    a, b, e = d1 @ d1, d1 @ d2, d2 @ d2
    m = jnp.cross(d1, d2)
    mm = m @ m
    eps = jnp.finfo(mm.dtype).eps
    parallel = mm <= PARALLEL**2 * eps * a * e
    s_lines = (jnp.cross(r, d2) @ m) / jnp.where(parallel, 1.0, mm)
    s0, s1 = (r @ d1) / a, (r @ d1 + b) / a  # the second segment's ends projected on the first
    lo, hi = jnp.maximum(0.0, jnp.minimum(s0, s1)), jnp.minimum(1.0, jnp.maximum(s0, s1))
    candidates = jnp.clip(jnp.stack([0.5 * (lo + hi), lo, hi]), 0.0, 1.0)  # the middle first
    t_c = jnp.clip((b * candidates - r @ d2) / e, 0.0, 1.0)
    dist = safe_norm(r + t_c[:, None] * d2 - candidates[:, None] * d1)
    tie = 64.0 * eps * (jnp.sqrt(r @ r) + jnp.sqrt(a) + jnp.sqrt(e))
    s_parallel = jnp.where(jnp.min(dist) < dist[0] - tie, candidates[jnp.argmin(dist)], candidates[0])
    s = jnp.clip(jnp.where(parallel, s_parallel, s_lines), 0.0, 1.0)
    t = (b * s - r @ d2) / e
    s = jnp.where(t < 0.0, jnp.clip(s0, 0.0, 1.0), jnp.where(t > 1.0, jnp.clip(s1, 0.0, 1.0), s))
    return s, jnp.clip(t, 0.0, 1.0)


@jax.custom_jvp
def segment_distance(p1, d1, p2, d2):
    """The distance min ‖p1 + s d1 − (p2 + t d2)‖ over s, t ∈ [0, 1] (:func:`segment_parameters`).

    Its derivative is Danskin's: the distance's derivative at the minimiser (s*, t*) held fixed,
    n·(dp2 + t* dd2 − dp1 − s* dd1) with n the unit vector between the closest points — exact
    wherever the distance is differentiable (at an inner minimiser ∂/∂s = 0; a clamped one does not
    move), and a subgradient at parallel segments; it is the normal velocity of the very points
    the contact's friction rows use. Differentiating through s* and t* instead gives the same value
    as a sum whose terms grow like 1/sin²θ for nearly parallel segments crossing within their
    length, so that the rounding of ∂/∂s ≈ 0 is amplified to about ε/sin²θ (bench/RESULTS.md,
    "Spatial contacts"). The rule is written in s*(q), t*(q), so its own derivative — the second
    derivative of the distance — is exact.
    """
    s, t = segment_parameters(p1, d1, p2, d2)
    return safe_norm(p2 + t * d2 - p1 - s * d1)


@segment_distance.defjvp
def _segment_distance_jvp(primals, tangents):
    p1, d1, p2, d2 = primals
    dp1, dd1, dp2, dd2 = tangents
    s, t = segment_parameters(p1, d1, p2, d2)
    d = p2 + t * d2 - p1 - s * d1
    n = safe_unit(d, jnp.zeros_like(d))  # touching axes: a zero derivative, not NaN
    return safe_norm(d), n @ (dp2 + t * dd2 - dp1 - s * dd1)


def capsule_capsule_gap(ca, ha, ra, cb, hb, rb):
    """(gap, contact point on a, unit normal from a to b) of two capsules: segments c ± h (world) with radii r.

    gap = ‖x_b − x_a‖ − r_a − r_b for the closest points x_a, x_b of the segments
    (:func:`segment_parameters`, differentiated by :func:`segment_distance`); the contact point is
    x_a + r_a n on a's surface. When the axes touch (a penetration deeper than a radius,
    x_a = x_b) the normal is the unit of h_a × h_b (a tangent of h_a for parallel axes) and the
    gradient of the distance is zero there, not NaN.
    """
    p1, d1, p2, d2 = ca - ha, 2.0 * ha, cb - hb, 2.0 * hb
    s, t = segment_parameters(p1, d1, p2, d2)
    xa = p1 + s * d1
    fallback = safe_unit(jnp.cross(ha, hb), tangent_basis(ha / jnp.sqrt(ha @ ha))[0])
    n = safe_unit(p2 + t * d2 - xa, fallback)
    return segment_distance(p1, d1, p2, d2) - ra - rb, xa + ra * n, n


# The box's 12 edges: edge 4 i + m (contact 2 + 4 i + m of a capsule–box) runs along the box's axis i (its
# half-vector h_i e_i), its centre at the signs (±1, ±1) times the half extents on the two other axes.
_EDGE_AXES = np.repeat(np.eye(3), 4, axis=0)
_EDGE_SIGNS = np.asarray(
    [
        [0.0 if k == i else (sj if k == (i + 1) % 3 else sk) for k in range(3)]
        for i in range(3)
        for sj in (-1, 1)
        for sk in (-1, 1)
    ]
)


def capsule_box_gaps(box_centre, R, half_extents, centre, half, radius):
    """(gaps (14,), points on the box (14, 3), unit normals from the box to the capsule (14, 3)) of a box
    (centre, rotation R, half extents) and a capsule — the points within ``radius`` of the segment
    centre ± half (world): its two end spheres against the box (:func:`sphere_box_gap`, the end −half
    first), then the segment against each of the box's 12 edges (:func:`capsule_capsule_gap` with the
    edge as a capsule of radius 0: the edges along the box's x, then y, then z axis).

    These 14 distances give the capsule's gap exactly whenever its segment stays outside the box: the
    closest pair (x on the segment, y on the box) has x at an end of the segment (an end sphere), or y
    on an edge (an edge contact), or else x inside the segment and y inside a face — then the segment
    is parallel to that face, and sliding x along it keeps the distance until x reaches an end or y an
    edge, so an end or an edge attains it too. A capsule lying on a face touches along a line whose
    ends are end spheres or, where it overhangs, its crossings of the face's edges; across an edge it
    touches at the edge's closest point. Every contact is a true non-penetration condition (an end or
    an edge is part of the box), so the set never pushes where the box is not; near a line contact,
    two or three of them coincide, a redundant set the cone solver shares out. Missed: a segment that
    passes through a face (both ends outside, the segment crossing the face's interior: a capsule
    driven deeper than its radius into a face between edges); the end spheres see it again once an end
    enters the box. Values and gradients are finite everywhere (the end spheres' inside branch, the
    segment distance's safe norm at touching or parallel axes).
    """
    ends = jnp.stack([centre - half, centre + half])
    end_gaps, end_points, end_normals = jax.vmap(sphere_box_gap, in_axes=(None, None, None, 0, None))(
        box_centre, R, half_extents, ends, radius
    )
    edge_centres = box_centre + (jnp.asarray(_EDGE_SIGNS, centre.dtype) * half_extents) @ R.T
    edge_halves = (jnp.asarray(_EDGE_AXES, centre.dtype) * half_extents) @ R.T
    edge_gaps, edge_points, edge_normals = jax.vmap(capsule_capsule_gap, in_axes=(0, 0, None, None, None, None))(
        edge_centres, edge_halves, 0.0, centre, half, radius
    )
    return (
        jnp.concatenate([end_gaps, edge_gaps]),
        jnp.concatenate([end_points, edge_points]),
        jnp.concatenate([end_normals, edge_normals]),
    )


def pin_in_hole_gaps(hole_point, hole_axis, ends, pin_radius, clearance):
    """(gaps (k,), contact points (k, 3), normals (k, 3)) of the pin-axis points ``ends`` (k, 3) in a hole.

    The hole is the cylinder of radius r_p + c about the line through ``hole_point`` along the unit
    ``hole_axis``. For each end e, the radial offset ρ = (e − h) − ((e − h)·a) a from the hole's axis
    gives the gap c − ‖ρ‖; ρ̂ = ρ/‖ρ‖ is the outward radial direction, the contact point the pin's
    surface point e + r_p ρ̂, and the contact normal −ρ̂ (from the hole's wall to the pin: moving the
    pin back towards the axis opens the gap, as every normal here points from a to b). On the hole's
    axis (ρ = 0, the centred pin) ρ̂ is the tangent t1 of the axis and the gap's gradient zero (finite).
    """
    d = ends - hole_point
    rho = d - (d @ hole_axis)[:, None] * hole_axis
    out = safe_unit(rho, tangent_basis(hole_axis)[0])
    return clearance - safe_norm(rho), ends + pin_radius * out, -out


def sphere_in_sphere_gap(socket_centre, socket_radius, ball_centre, ball_radius):
    """(gap, contact point on the ball, unit normal) of a ball inside a spherical socket.

    gap = c − ‖e‖ with the clearance c = r_s − r_b and the eccentricity e = x_b − x_s; the ball
    touches the socket at x_b + r_b ê, and the normal −ê makes ġ = n·(v_b − v_a). At zero
    eccentricity ê is undefined: the ball is then centred, the gap is the whole clearance (the
    contact is wide open, so no law reads its normal), and the gradient of ‖e‖ is 0 (its
    subgradient at the minimum) and the normal −e_z, finite in value and derivative.
    """
    e = ball_centre - socket_centre
    unit = safe_unit(e, jnp.asarray([0.0, 0.0, 1.0], e.dtype))
    return socket_radius - ball_radius - safe_norm(e), ball_centre + ball_radius * unit, -unit
