"""Unit quaternions q = [w, x, y, z] for the orientation of spatial bodies.

Why quaternions: they parametrise every orientation without singularity (Euler
angles lose a degree of freedom at gimbal lock, rotation vectors at |θ| = π), with
four coordinates and one algebraic constraint |q| = 1, and the rotation matrix is a
polynomial in them (cheap, smooth derivatives). The velocity is the angular velocity
ω in the *body* frame: the inertia tensor is then constant, and

    q̇ = ½ q ⊗ (0, ω),        R(q) maps body vectors to world vectors.

Positions are advanced by the exponential map q ⊗ exp(h ω / 2), exact for a constant
body-frame ω and on the unit sphere up to rounding; the result is renormalised, so the
rounding does not accumulate (‖q‖ = 1 to ~1e-16 over any number of steps). An additive
update q + h q̇ followed by a projection would be a first-order retraction instead.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np


def multiply(a, b):
    """Quaternion product a ⊗ b ([w, x, y, z])."""
    aw, av = a[0], a[1:]
    bw, bv = b[0], b[1:]
    return jnp.concatenate([jnp.reshape(aw * bw - av @ bv, (1,)), aw * bv + bw * av + jnp.cross(av, bv)])


def conjugate(q):
    """The conjugate [w, −x, −y, −z] (the inverse of a unit quaternion)."""
    return q * jnp.asarray([1.0, -1.0, -1.0, -1.0], q.dtype)


def matrix(q):
    """The rotation matrix R(q) (3, 3) of a unit quaternion (body → world)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    return jnp.stack(
        [
            jnp.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)]),
            jnp.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)]),
            jnp.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]),
        ]
    )


def rotate(q, v):
    """R(q) v: a body-frame vector in the world frame."""
    return matrix(q) @ v


def rate(q, omega):
    """q̇ = ½ q ⊗ (0, ω) for the body-frame angular velocity ω."""
    return 0.5 * multiply(q, jnp.concatenate([jnp.zeros((1,), omega.dtype), omega]))


def exp(v):
    """exp(v/2) as a unit quaternion: the rotation by the rotation vector v (angle |v| about v/|v|).

    Smooth at v = 0 (a series there), so gradients through a resting body stay finite.
    """
    s = v @ v
    small = s < 1e-8
    ss = jnp.where(small, 1.0, s)  # the other branch's argument, safe for √ and its gradient
    a = jnp.sqrt(ss)
    w = jnp.where(small, 1.0 - s / 8.0 + s * s / 384.0, jnp.cos(0.5 * a))
    k = jnp.where(small, 0.5 - s / 48.0 + s * s / 3840.0, jnp.sin(0.5 * a) / a)
    return jnp.concatenate([jnp.reshape(w, (1,)), k * v])


def advance(q, omega, h):
    """q ⊗ exp(h ω / 2), renormalised: the orientation after a time h at constant body-frame ω."""
    r = multiply(q, exp(h * omega))
    return r / jnp.sqrt(r @ r)


def from_axis_angle(axis, angle):
    """The unit quaternion of a rotation by ``angle`` (rad) about ``axis`` (normalised here)."""
    axis = jnp.asarray(axis, jnp.result_type(float))
    axis = axis / jnp.linalg.norm(axis)
    return exp(jnp.asarray(angle, axis.dtype) * axis)


def angle_between(a, b):
    """The rotation angle (rad, in [0, π]) taking orientation a to orientation b."""
    d = jnp.abs(a @ b)
    return 2.0 * jnp.arccos(jnp.clip(d, 0.0, 1.0))


def check_unit(quat, where: str) -> None:
    """Raise ValueError naming ``where`` unless ``quat`` is four finite numbers of unit norm (a constant
    orientation of a shape or a joint frame)."""
    q = np.asarray(quat, float) if len(quat) == 4 else None
    if q is None or not np.all(np.isfinite(q)) or abs(np.sqrt(q @ q) - 1.0) > 1e-6:
        raise ValueError(f"{where} = {tuple(quat)!r} must be a unit quaternion (w, x, y, z)")
