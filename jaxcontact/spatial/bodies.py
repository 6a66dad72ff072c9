"""Spatial rigid bodies: coordinates, velocities, body-fixed points and their velocities.

Body i owns q[7i:7i+7] = (x, y, z, w, q_x, q_y, q_z) — the world position of its centre of
mass and the unit quaternion of its orientation (:mod:`jaxcontact.spatial.rotations`) —
and u[6i:6i+6] = (v_x, v_y, v_z, ω_x, ω_y, ω_z): the centre's world velocity and the
angular velocity in the body frame. The body axes are the principal axes of inertia,
so the inertia tensor is the constant diag(I_1, I_2, I_3) and the mass matrix of the
whole system is diagonal (every rigid body has principal axes; placing its frame along
them costs the user nothing and saves the stepper a factorisation). The ground is the
body with no coordinates.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from jaxcontact.spatial import rotations
from jaxcontact.values import Value

COORDINATES = ("x", "y", "z", "qw", "qx", "qy", "qz")
VELOCITIES = ("vx", "vy", "vz", "wx", "wy", "wz")
# The fewest alike elements (bodies here; contacts of one kind in :mod:`jaxcontact.spatial.contact_groups`)
# computed under one ``vmap`` rather than one by one. Under ``vmap`` the elements sit beside each vector's
# components, which XLA's CPU loops run more slowly than the same computation written element by element (each
# operation then one vector over the batch of samples); but a program written element by element grows with
# their number, and so do its trace and compile. Few elements run faster one by one; many compile in a fraction
# of the time under ``vmap`` and run about as fast (bench/RESULTS.md).
VMAP_FROM = 16


@dataclasses.dataclass(frozen=True, eq=False)
class Body:
    """A rigid body (``index`` ≥ 0) or the ground (``index`` None) of one Assembly.

    mass and inertia (principal moments I_1, I_2, I_3 about the body axes) are value specs
    (:class:`jaxcontact.values.Value`) resolved against the parameters.
    """

    name: str
    index: int | None
    mass: Any = None
    inertia: Any = None

    @property
    def is_ground(self) -> bool:
        """True for the ground (no coordinates)."""
        return self.index is None

    def q_slice(self) -> slice:
        """The slice of q holding this body's position and quaternion."""
        return slice(7 * self.index, 7 * self.index + 7)

    def u_slice(self) -> slice:
        """The slice of u holding this body's velocity and body-frame angular velocity."""
        return slice(6 * self.index, 6 * self.index + 6)


def pose(q, body: Body):
    """(centre (3,), rotation matrix R (3, 3)) of ``body``; the ground's is (0, I)."""
    if body.is_ground:
        return jnp.zeros(3, q.dtype), jnp.eye(3, dtype=q.dtype)
    qi = q[body.q_slice()]
    return qi[:3], rotations.matrix(qi[3:])


def vector_value(spec, p, dtype, where: str):
    """A vector of value specs (:class:`jaxcontact.values.Value`) resolved against the parameters ``p``;
    ``where`` names it in an error."""
    return jnp.stack([jnp.asarray(Value(c, where)(p), dtype) for c in spec])


def attached_point(q, p, body: Body | None, spec, where: str):
    """(world position (3,), the body's rotation R) of the point with body coordinates ``spec`` (value specs)
    on ``body`` (None or the ground: a world point)."""
    x, R = pose(q, body if body is not None else Body("ground", None))
    return x + R @ vector_value(spec, p, q.dtype, where), R


def twist(u, R, body: Body):
    """(centre velocity (3,), world angular velocity R ω (3,)) of ``body``; zeros for the ground."""
    if body.is_ground:
        z = jnp.zeros(3, u.dtype)
        return z, z
    ui = u[body.u_slice()]
    return ui[:3], R @ ui[3:]


def world_point(q, body: Body, local):
    """World position of the body-fixed point with body coordinates ``local`` (3,)."""
    x, R = pose(q, body)
    return x + R @ jnp.asarray(local, q.dtype)


def point_velocity(q, u, body: Body, point):
    """World velocity of the material point of ``body`` now at the world position ``point``."""
    x, R = pose(q, body)
    v, w = twist(u, R, body)
    return v + jnp.cross(w, point - x)


def _body_by_body(one, q, u, n_bodies: int):
    """``one(q_i (7,), u_i (6,))`` for each of ``n_bodies`` free bodies, joined: under one ``vmap`` from
    :data:`VMAP_FROM` bodies on, else written body by body."""
    Q, U = q.reshape(n_bodies, 7), u.reshape(n_bodies, 6)
    if n_bodies >= VMAP_FROM:
        return jax.vmap(one)(Q, U).reshape(-1)
    return jnp.concatenate([one(Q[i], U[i]) for i in range(n_bodies)])


def velocity_map(q, u, n_bodies: int):
    """q̇ = T(q) u for ``n_bodies`` free bodies: ẋ = v, quaternion rate ½ q ⊗ (0, ω)."""

    def one(qi, ui):
        return jnp.concatenate([ui[:3], rotations.rate(qi[3:], ui[3:])])

    return _body_by_body(one, q, u, n_bodies)


def position_update(q, u, h, n_bodies: int):
    """The coordinates after a time h at constant u: x + h v and the quaternion's exponential map."""

    def one(qi, ui):
        return jnp.concatenate([qi[:3] + h * ui[:3], rotations.advance(qi[3:], ui[3:], h)])

    return _body_by_body(one, q, u, n_bodies)
