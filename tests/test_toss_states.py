"""Initial states of tosses: the ballistic fit recovers the known start of tosses the project simulated,
with noise like the real cube data's; the state map keeps the model's conventions."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.spatial import rotations
from jaxcontact.toss_states import ballistic_start, box_toss_state, lowest_vertex, quaternion_log

CUBE = {"half_x": 0.0524, "half_y": 0.0524, "half_z": 0.0524, "mass": 0.37, "friction": 0.18, "restitution": 0.125}
SAMPLE = 1 / 148
# Noise like the real tosses': the residuals of a free-flight fit to their first samples have a standard
# deviation of about 0.14 mm in position and 2.5 mrad in orientation (heavy tails); a little above both.
NOISE_POSITION, NOISE_ANGLE = 2e-4, 3e-3
# Six samples over 34 ms give a velocity standard error of about 7 mm/s and an angular one of about
# 0.1 rad/s at that noise: the tolerances are five of those.
TOL_VELOCITY, TOL_OMEGA = 0.035, 0.5


def test_quaternion_log_inverts_the_exponential_and_ignores_the_sign():
    v = np.array([0.3, -1.2, 2.0])
    q = np.asarray(rotations.exp(jnp.asarray(v)))
    np.testing.assert_allclose(quaternion_log(q), v, atol=1e-12)
    np.testing.assert_allclose(quaternion_log(-q), v, atol=1e-12)
    np.testing.assert_allclose(quaternion_log(np.array([1.0, 0, 0, 0])), 0.0)


def test_state_map_turns_the_quaternion_to_w_nonnegative():
    q, u = box_toss_state([1, 2, 3], [-0.6, 0.0, 0.8, 0.0], [4, 5, 6], [7, 8, 9])
    np.testing.assert_allclose(q, [1, 2, 3, 0.6, 0.0, -0.8, 0.0])
    np.testing.assert_allclose(u, [4, 5, 6, 7, 8, 9])


def _noisy(rng, pos, quat):
    """Tracking noise like the real data's on positions and orientations, and random quaternion signs."""
    pos = pos + NOISE_POSITION * rng.standard_normal(pos.shape)
    turn = jax.vmap(rotations.exp)(jnp.asarray(NOISE_ANGLE * rng.standard_normal((len(quat), 3))))
    quat = np.asarray(jax.vmap(rotations.multiply)(jnp.asarray(quat), turn))
    return pos, quat * np.where(rng.random(len(quat)) < 0.5, -1.0, 1.0)[:, None]  # trackers flip signs freely


def _check_start(start, q0, u0):
    np.testing.assert_allclose(start.u0[:3], u0[:3], atol=TOL_VELOCITY)
    np.testing.assert_allclose(start.u0[3:], u0[3:], atol=TOL_OMEGA)
    np.testing.assert_allclose(start.q0[:3], q0[:3], atol=5 * NOISE_POSITION)
    assert float(rotations.angle_between(jnp.asarray(start.q0), jnp.asarray(q0))) < 3 * NOISE_ANGLE
    assert start.q0[3] >= 0


def test_ballistic_fit_recovers_closed_form_free_flight():
    """The closed-form flight of a cube (parabola, constant body-frame spin) sampled at 148 Hz."""
    jax.config.update("jax_enable_x64", True)
    model = get_model("box-toss", **CUBE)
    rng = np.random.default_rng(1)
    t = SAMPLE * np.arange(8)
    for _ in range(5):
        q0 = np.concatenate([[0.0, 0.0, 0.3], np.asarray(rotations.exp(jnp.asarray(rng.standard_normal(3))))])
        u0 = np.concatenate([rng.uniform(-1, 1, 3), rng.uniform(-4, 4, 3)])
        pos = q0[:3] + t[:, None] * u0[:3] - 0.5 * 9.81 * t[:, None] ** 2 * np.array([0, 0, 1.0])
        quat = np.stack(
            [np.asarray(rotations.multiply(jnp.asarray(q0[3:]), rotations.exp(jnp.asarray(s * u0[3:])))) for s in t]
        )
        start = ballistic_start(model, t, *_noisy(rng, pos, quat))
        assert start.samples == 6
        _check_start(start, q0, u0)


@pytest.fixture(scope="module")
def tosses():
    """Three tosses the box-toss model simulates from known starts, 8 samples at 148 Hz (h = 1/1480 s)."""
    jax.config.update("jax_enable_x64", True)
    model = get_model("box-toss", **CUBE)
    axes = np.array([[1.0, 0.2, -0.4], [0.0, 1.0, 1.0], [-0.7, 0.1, 0.3]])
    q0 = np.stack(
        [np.concatenate([[0.1 * k, -0.2, 0.25], np.asarray(rotations.exp(jnp.asarray(a)))]) for k, a in enumerate(axes)]
    )
    u0 = np.array(
        [[-1.0, -0.8, 0.3, -3.4, -0.8, 3.9], [0.8, 0.7, -0.5, 2.1, 0.4, -2.3], [0.2, -1.1, 0.9, -2.2, -3.6, -0.4]]
    )
    params = jax.tree.map(lambda x: jnp.broadcast_to(x, (3,)), model.params)
    traj = simulate(model.system, params, q0, u0, dt=SAMPLE / 10, n_steps=70, save_every=10)
    return model, q0, u0, np.asarray(traj.t), np.asarray(traj.q)


@pytest.mark.slow  # the box's contact solver compiles for about a minute on the shared 2-core machine
def test_ballistic_fit_recovers_simulated_starts_under_noise(tosses):
    model, q0, u0, t, q = tosses
    assert lowest_vertex(model, q.reshape(-1, 7)).min() > 0.05  # the window is in free flight
    rng = np.random.default_rng(0)
    for i in range(3):
        pos, quat = _noisy(rng, q[i, :, :3], q[i, :, 3:])
        start = ballistic_start(model, t[i], pos, quat)
        assert start.samples == 6
        _check_start(start, q0[i], u0[i])
        # a finite difference of the first two samples misses by far more: what the fit is for
        fd = (pos[1] - pos[0]) / SAMPLE
        assert np.abs(fd - u0[i, :3]).max() > np.abs(start.u0[:3] - u0[i, :3]).max()


def test_ballistic_fit_stops_before_samples_near_the_table():
    """Falling straight down, flat: the fit keeps the samples above CONTACT_CLEARANCE only."""
    jax.config.update("jax_enable_x64", True)
    model = get_model("box-toss", **CUBE)
    t = SAMPLE * np.arange(8)
    z = 0.0524 + 0.02 - 1.0 * t  # the lower face 20 mm up, falling at 1 m/s: 6.8 mm a sample
    pos = np.stack([np.zeros(8), np.zeros(8), z], axis=1)
    quat = np.tile([1.0, 0.0, 0.0, 0.0], (8, 1))
    start = ballistic_start(model, t, pos, quat)
    assert start.samples == 3  # the fourth sample is 20 - 3 * 6.8 - ½ g t² < 5 mm above the table
    start = ballistic_start(model, t, pos - [0, 0, 0.03], quat)
    assert start.samples == 2  # never fewer than two, even for a toss caught at the table
