"""Applied loads on spatial bodies: point forces and torques, and spring–dampers between two body points.

A force F (world frame) acting at the world point P of body b contributes, in b's velocities
(v, ω_body), the generalized force (F, Rᵀ((P − x) × F)); a world torque τ contributes (0, Rᵀτ).
Values are value specs; ``force`` and ``torque`` may depend on time (``t`` in an expression).
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxcontact.params import NONNEGATIVE
from jaxcontact.spatial.bodies import Body, point_velocity, pose
from jaxcontact.values import Value


def _vector(spec, p, t, dtype, where, time_ok=False):
    return jnp.stack([jnp.asarray(Value(c, where, time_ok=time_ok)(p, t), dtype) for c in spec])


def wrench(q, body: Body, F, point, n_u: int):
    """The generalized force (n_u,) of the world force F at the world point ``point`` of ``body`` (0 for the ground)."""
    out = jnp.zeros((n_u,), q.dtype)
    if body is None or body.is_ground:
        return out
    x, R = pose(q, body)
    return out.at[body.u_slice()].set(jnp.concatenate([F, R.T @ jnp.cross(point - x, F)]))


@dataclasses.dataclass(frozen=True, eq=False)
class Load:
    """A world force (three value specs, may use t) at a body point, and a world torque, on ``body``."""

    name: str
    body: Body
    force: tuple = (0.0, 0.0, 0.0)
    point: tuple = (0.0, 0.0, 0.0)
    torque: tuple = (0.0, 0.0, 0.0)

    def generalized(self, q, u, t, p, n_u):
        """The load's generalized force (n_u,)."""
        x, R = pose(q, self.body)
        F = _vector(self.force, p, t, q.dtype, f"load {self.name!r} force", time_ok=True)
        tau = _vector(self.torque, p, t, q.dtype, f"load {self.name!r} torque", time_ok=True)
        P = x + R @ _vector(self.point, p, t, q.dtype, f"load {self.name!r} point")
        out = wrench(q, self.body, F, P, n_u)
        return out.at[self.body.u_slice()].add(jnp.concatenate([jnp.zeros(3, q.dtype), R.T @ tau]))

    def physical(self) -> dict:
        """field -> (value spec, rule): none (forces and torques may have any sign)."""
        return {}


@dataclasses.dataclass(frozen=True, eq=False)
class SpringDamper:
    """A linear spring–damper between a point of a (or the ground) and a point of b:
    the tension k (ℓ − ℓ₀) + c ℓ̇ pulls the points together along their line."""

    name: str
    a: Body
    point_a: tuple
    b: Body
    point_b: tuple
    stiffness: object
    rest_length: object
    damping: object = 0.0

    def generalized(self, q, u, t, p, n_u):
        """The generalized force (n_u,) on both bodies."""
        ground = Body("ground", None)
        a = self.a if self.a is not None else ground
        b = self.b if self.b is not None else ground
        xa, Ra = pose(q, a)
        xb, Rb = pose(q, b)
        pa = xa + Ra @ _vector(self.point_a, p, t, q.dtype, f"spring {self.name!r} point_a")
        pb = xb + Rb @ _vector(self.point_b, p, t, q.dtype, f"spring {self.name!r} point_b")
        d = pb - pa
        length = jnp.sqrt(d @ d)
        e = d / length
        rate = e @ (point_velocity(q, u, b, pb) - point_velocity(q, u, a, pa))
        tension = (
            Value(self.stiffness, f"spring {self.name!r} stiffness")(p)
            * (length - Value(self.rest_length, f"spring {self.name!r} rest_length")(p))
            + Value(self.damping, f"spring {self.name!r} damping")(p) * rate
        )
        return wrench(q, a, tension * e, pa, n_u) + wrench(q, b, -tension * e, pb, n_u)

    def physical(self) -> dict:
        """field -> (value spec, rule)."""
        return {
            "stiffness": (self.stiffness, NONNEGATIVE),
            "rest_length": (self.rest_length, NONNEGATIVE),
            "damping": (self.damping, NONNEGATIVE),
        }

    def potential(self, q, p):
        """½ k (ℓ − ℓ₀)²."""
        ground = Body("ground", None)
        a = self.a if self.a is not None else ground
        b = self.b if self.b is not None else ground
        xa, Ra = pose(q, a)
        xb, Rb = pose(q, b)
        d = (xb + Rb @ _vector(self.point_b, p, 0.0, q.dtype, "point_b")) - (
            xa + Ra @ _vector(self.point_a, p, 0.0, q.dtype, "point_a")
        )
        stretch = jnp.sqrt(d @ d) - Value(self.rest_length, "rest_length")(p)
        return 0.5 * Value(self.stiffness, "stiffness")(p) * stretch**2
