"""Loss gradients of a fit in forward mode (few parameters) equal reverse mode; the rule that picks them."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.models import get_model
from jaxcontact.simulate import simulate
from jaxcontact.stepping import MoreauJean
from jaxcontact.studies.identify import FORWARD_MAX, coordinates, fit, forward_gradient, gradient_mode, make_residuals

BALL = get_model("bouncing-ball", restitution=0.73, radius=0.1, height=1.3)
LOCATED = MoreauJean(impact_location="interpolated")
H = 4e-3
_q0, _u0 = BALL.initial_state(BALL.params)
_TR = simulate(BALL.system, BALL.params, _q0, _u0, dt=H, n_steps=201, scheme=LOCATED)  # 0.8 s: one impact
T, Y = np.asarray(_TR.t[::4]), np.asarray(_TR.q[::4, 0]) + 1e-3 * np.sin(np.arange(51.0))


def test_forward_gradient_of_a_two_parameter_loss_equals_reverse_mode_to_1e_8():
    res = make_residuals(BALL, T, coordinates(0), ("restitution", "gravity"), scheme=LOCATED, dt=H)
    loss = lambda th: jnp.mean(res(th, Y, 1.0) ** 2)  # noqa: E731
    reverse, forward = jax.jit(jax.value_and_grad(loss)), jax.jit(jax.value_and_grad(forward_gradient(loss)))
    for th in (jnp.array([0.6, 9.5]), jnp.array([0.8, 10.2])):
        (v_r, g_r), (v_f, g_f) = reverse(th), forward(th)
        assert float(v_f) == float(v_r)
        assert np.max(np.abs(np.asarray(g_f) - np.asarray(g_r))) < 1e-8 * max(1.0, np.max(np.abs(np.asarray(g_r))))
        assert np.max(np.abs(np.asarray(g_r))) > 1e-4  # a real gradient, not two zeros that agree


def test_forward_gradient_never_transposes_its_function():
    # A while loop of data-dependent length: forward-differentiable, not reverse-differentiable. Its
    # gradient through the wrapper exists, so the wrapper took only Jacobian–vector products.
    def f(z):
        n = jnp.ceil(jnp.abs(z[0]) * 3).astype(int)
        w = jax.lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * z[1]), (0, jnp.ones(())))[1]
        return w + jnp.sin(z[0])  # z[1] ** 3 + sin z[0] at z[0] = 0.9

    z = jnp.array([0.9, 1.3])
    with pytest.raises(ValueError, match="[Rr]everse-mode differentiation does not work"):
        jax.grad(f)(z)
    np.testing.assert_allclose(np.asarray(jax.grad(forward_gradient(f))(z)), [np.cos(0.9), 3 * 1.3**2], rtol=1e-14)
    g = jax.vmap(jax.grad(forward_gradient(f)))(jnp.array([[0.9, 1.3], [0.2, 2.0]]))  # batched starts
    np.testing.assert_allclose(np.asarray(g), [[np.cos(0.9), 3 * 1.3**2], [np.cos(0.2), 1.0]], rtol=1e-14)


def test_gradient_rule_and_refusals():
    assert gradient_mode("auto", LOCATED, 1) == "forward"
    assert gradient_mode("auto", LOCATED, FORWARD_MAX + 1) == "reverse"
    implicit = MoreauJean(differentiation="implicit")
    assert gradient_mode("auto", implicit, 1) == "reverse"  # a custom VJP: reverse-only
    assert gradient_mode("reverse", LOCATED, 1) == "reverse"
    with pytest.raises(ValueError, match="reverse mode only"):
        gradient_mode("forward", implicit, 1)
    with pytest.raises(ValueError, match="gradient = 'fwd'"):
        fit(BALL, T, Y, ("restitution",), {"restitution": 0.6}, {"restitution": (0.05, 0.99)}, dt=H, gradient="fwd")


def test_fit_in_forward_mode_follows_the_reverse_mode_iterates():
    # L-BFGS and its zoom line search through the wrapper (the step law: the cheaper compile)
    args = (BALL, T, Y, ("restitution",), {"restitution": 0.6}, {"restitution": (0.05, 0.99)})
    kw = dict(observe=coordinates(0), dt=H, steps=6, scheme=MoreauJean(), noise=1e-3)
    fwd, rev = fit(*args, gradient="forward", **kw), fit(*args, gradient="reverse", **kw)
    np.testing.assert_allclose(fwd.param_history, rev.param_history, rtol=0, atol=1e-10)
    assert fwd.loss_history[-1] < 0.05 * fwd.loss_history[0]
