"""Initial states of measured tosses: the box-toss model's state map and a short ballistic fit.

State map (box-toss). The model's coordinates are q = (x, y, z, w, qx, qy, qz): the centre in the
table frame and the unit quaternion body → table (w, x, y, z), the sign chosen with w ≥ 0 (q and −q
are the same orientation; one sign keeps starts comparable); its velocities are u = (vx, vy, vz,
ωx, ωy, ωz): the centre velocity in the table frame and the angular velocity in the *body* frame,
q̇ = ½ q ⊗ (0, ω) (``jaxcontact.spatial.rotations``). A measured ``angular_velocity_body`` is
therefore u[3:] as it is; a world-frame one is turned into the body frame by R(q)ᵀ.

Why a ballistic fit rather than the first sample. The measured velocities are backward finite
differences of positions sampled at 148 Hz, median-filtered: they lag the pose by half a sample, carry
the tracking noise amplified by 1/dt, and the first sample's velocity is a copy of the second's. Before
the first contact the body flies freely, and that motion is known up to its initial state: the centre
follows p0 + v0 t − ½ g t² ẑ (g known), and a body whose inertia is isotropic (a cube) turns at a
constant body-frame ω, q(t) = q0 ⊗ exp(t ω / 2). A least-squares fit of (p0, v0) and (q0, ω) over the
first few samples in flight averages the noise of all of them, uses the poses rather than their
differences, and gives the state at the first sample's time itself. For a body that is not isotropic
a constant ω is exact only to first order in the fit window (a few hundredths of a second).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.models.box_toss import lowest_vertex as model_lowest_vertex
from jaxcontact.spatial import rotations

# Samples used at most: about 40 ms at 148 Hz, short against a toss's flight, long enough to average
# the tracking noise of six poses.
FIT_SAMPLES = 6
# A sample whose lowest vertex is this close to the table may already touch it (the table plane in the
# shared data is off by a few mm): the fit stops before it.
CONTACT_CLEARANCE = 0.005


class Start(NamedTuple):
    """A fitted initial state: q0 (7,), u0 (6,) and the number of samples the fit used."""

    q0: np.ndarray
    u0: np.ndarray
    samples: int


def quaternion_log(q) -> np.ndarray:
    """The rotation vector (…, 3) of unit quaternions (…, 4) [w, x, y, z]: angle in [0, π] about the axis."""
    q = np.asarray(q, float)
    q = q * np.where(q[..., :1] < 0, -1.0, 1.0)
    s = np.linalg.norm(q[..., 1:], axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., :1])
    return np.where(s > 1e-12, angle / np.maximum(s, 1e-300), 2.0) * q[..., 1:]


def lowest_vertex(model, q) -> np.ndarray:
    """Height (m,) of the box's lowest vertex above the table for coordinates q (m, 7) (the model's own)."""
    return np.asarray(jax.vmap(model_lowest_vertex, in_axes=(0, None))(jnp.asarray(q), model.params))


def box_toss_state(position, quaternion_wxyz, velocity, angular_velocity_body):
    """The box-toss model's (q, u) of one measured state (see the module docstring); w ≥ 0."""
    quat = np.asarray(quaternion_wxyz, float)
    quat = quat * (-1.0 if quat[0] < 0 else 1.0)
    return np.concatenate([position, quat]), np.concatenate([velocity, angular_velocity_body])


def ballistic_start(model, t, position, quaternion_wxyz, samples=FIT_SAMPLES) -> Start:
    """Fit the state at t[0] of a freely flying box to its first measured poses (module docstring).

    model: the box-toss :class:`jaxcontact.models.Model` (its size and gravity); t (m,), position (m, 3),
    quaternion_wxyz (m, 4): the first valid samples of one experiment. The fit uses at most ``samples`` of
    them, stopping before the first whose lowest vertex is within ``CONTACT_CLEARANCE`` of the table (never
    fewer than 2: a toss caught near the table still starts).
    """
    t = np.asarray(t, float)
    pos = np.asarray(position, float)
    quat = np.asarray(quaternion_wxyz, float)
    gravity = float(model.params["gravity"])
    m = min(samples, t.size)
    first = np.asarray([box_toss_state(p, r, np.zeros(3), np.zeros(3))[0] for p, r in zip(pos[:m], quat[:m])])
    near = lowest_vertex(model, first) < CONTACT_CLEARANCE
    m = max(2, int(np.argmax(near)) if near.any() else m)
    tau = t[:m] - t[0]
    design = np.stack([np.ones(m), tau], axis=1)
    target = pos[:m] + 0.5 * gravity * tau[:, None] ** 2 * np.array([0.0, 0.0, 1.0])
    (p0, v0), *_ = np.linalg.lstsq(design, target, rcond=None)
    ref = quat[0]
    aligned = quat[:m] * np.where(quat[:m] @ ref < 0, -1.0, 1.0)[:, None]
    relative = jax.vmap(rotations.multiply, in_axes=(None, 0))(rotations.conjugate(jnp.asarray(ref)), aligned)
    rot = quaternion_log(np.asarray(relative))
    (a, omega), *_ = np.linalg.lstsq(design, rot, rcond=None)
    q0 = np.asarray(rotations.multiply(jnp.asarray(ref), rotations.exp(jnp.asarray(a))))
    q, u = box_toss_state(p0, q0 / np.linalg.norm(q0), v0, omega)
    return Start(q, u, m)
