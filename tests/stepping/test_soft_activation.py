"""MoreauJean's identification knobs: soft contact activation (width τ) and implicit PGS gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.models.four_bar import point_a
from jaxcontact.simulate import simulate
from jaxcontact.stepping import MoreauJean
from jaxcontact.stepping.projection import Projection

BALL = get_model("bouncing-ball")
FOUR_BAR = get_model("four-bar")
SOFT = MoreauJean(soft_activation="tau")


def _ball_heights(scheme, tau=None, **over):
    p = dict(BALL.params) | {k: jnp.asarray(v) for k, v in over.items()}
    if tau is not None:
        p["tau"] = jnp.asarray(tau)
    q0, u0 = BALL.initial_state(p)
    return simulate(BALL.system, p, q0, u0, dt=1e-3, n_steps=1200, scheme=scheme).q[:, 0]


def _four_bar_misfit(d, tau=None, scheme=SOFT, n=20):
    """Σ x_a² over the first n steps at h = 0.01: the impact at step ~4 decides it."""
    p = dict(FOUR_BAR.params) | {"wall_distance": d}
    if tau is not None:
        p["tau"] = jnp.asarray(tau)
    q0, u0 = FOUR_BAR.initial_state(p)
    tr = simulate(FOUR_BAR.system, p, q0, u0, dt=0.01, n_steps=n, scheme=scheme)
    return jnp.sum(jax.vmap(lambda q: point_a(q, p))(tr.q)[:, 0] ** 2)


def test_small_width_gives_back_the_hard_model():
    hard = _ball_heights(MoreauJean())
    soft = _ball_heights(SOFT, tau=1e-9)
    assert float(jnp.max(jnp.abs(hard - soft))) < 1e-6


def test_moderate_width_spreads_the_impact_and_lowers_the_bounce():
    # The documented bias: the contact pushes before it touches, so the rebound is lower.
    hard = np.asarray(_ball_heights(MoreauJean()))
    soft = np.asarray(_ball_heights(SOFT, tau=2e-3))
    assert soft[600:].max() < hard[600:].max()
    assert soft.min() > hard.min()  # starts braking above the ground


@pytest.mark.slow  # reverse mode through the four-bar compiles for ~30 s on the shared machine
def test_wall_distance_gradient_is_zero_hard_and_matches_fd_soft():
    d = 0.06
    g_hard = jax.grad(lambda x: _four_bar_misfit(x, scheme=MoreauJean()))(d)
    assert float(g_hard) == 0.0  # the hard law: piecewise constant in the wall distance
    for tau in (1e-2, 1e-3):
        f = jax.jit(lambda x: _four_bar_misfit(x, tau))
        g = float(jax.grad(lambda x: _four_bar_misfit(x, tau))(d))
        h = 1e-6
        fd = float((f(d + h) - f(d - h)) / (2 * h))
        assert abs(g) > 1e-3
        np.testing.assert_allclose(g, fd, rtol=1e-5)


def test_gradients_finite_through_opening_closing_contacts_and_zero_slip():
    # Ball: bounces (contacts closing and opening), then hard and soft.
    for scheme, tau in ((MoreauJean(), None), (SOFT, 1e-4)):
        g = jax.grad(lambda e, h: jnp.sum(_ball_heights(scheme, tau, restitution=e, height=h) ** 2), argnums=(0, 1))(
            0.8, 1.0
        )
        assert np.all(np.isfinite(np.asarray(g))) and float(g[0]) != 0.0
    # Block at rest on a rough incline (μ > tan α, zero speed): zero slip velocity at every step.
    blk = get_model("sliding-block", speed=0.0)

    def rest(mu, slope, tau):
        p = dict(blk.params) | {"friction": mu, "slope_deg": slope, "tau": jnp.asarray(tau)}
        q0, u0 = blk.initial_state(p)
        tr = simulate(blk.system, p, q0, u0, dt=1e-2, n_steps=50, scheme=SOFT)
        return jnp.sum(tr.q**2) + jnp.sum(tr.impulse_tangent**2)

    for tau in (1e-9, 1e-4):
        g = jax.grad(rest, argnums=(0, 1))(0.6, 20.0, tau)
        assert np.all(np.isfinite(np.asarray(g)))


@pytest.mark.slow  # as above: the four-bar's reverse mode compiles slowly
def test_four_bar_gradient_finite_through_repeated_impacts_and_rest():
    # Repeated impacts, then resting against the wall (with projection).
    g = jax.grad(lambda d: _four_bar_misfit(d, 1e-4, MoreauJean(projection=Projection(), soft_activation="tau"), n=60))(
        0.06
    )
    assert np.isfinite(float(g))


def test_implicit_pgs_gradient_matches_unrolled():
    def loss(e, scheme):
        return jnp.sum(_ball_heights(scheme, restitution=e) ** 2)

    g_unroll = jax.grad(lambda e: loss(e, MoreauJean()))(0.8)
    g_implicit = jax.grad(lambda e: loss(e, MoreauJean(differentiation="implicit")))(0.8)
    np.testing.assert_allclose(float(g_implicit), float(g_unroll), rtol=1e-8)


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="soft_activation"):
        MoreauJean(soft_activation=1e-3)
    with pytest.raises(ValueError, match="differentiation"):
        MoreauJean(differentiation="adjoint")
