"""Gradient-based parameter identification through contact (issue 7, first slice).

    res = fit(model, data_t, data_y, observe=lambda q: q[:, 0], fit_names=("restitution",),
              guesses={"restitution": 0.56}, bounds={"restitution": (0.1, 0.99)}, steps=200)

Each fitted parameter θ lives in an unconstrained z with θ = lo + (hi - lo)·sigmoid(z),
so every iterate respects its bounds. The loss is the mean squared misfit between
``observe(traj.q)`` linearly interpolated onto ``data_t`` and ``data_y``. Optimizers are
optax Adam or optax.lbfgs (zoom line search). Uncertainty: Gauss–Newton/Laplace,
cov = σ² (JᵀJ)⁻¹ with J = ∂r/∂θ from jax.jacfwd and σ² = ‖r‖²/(m - p); intervals ±1.96 σ.
Not yet here: contact smoothing schedule, multiple shooting, plots, CLI.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxcontact.simulate import simulate


class FitResult(NamedTuple):
    estimates: dict
    std: dict
    interval95: dict
    loss_history: np.ndarray
    iterations: int
    loss: float


def _to_theta(z, lo, hi):
    return lo + (hi - lo) * jax.nn.sigmoid(z)


def _to_z(theta, lo, hi):
    s = (theta - lo) / (hi - lo)
    return jnp.log(s) - jnp.log1p(-s)


def make_residuals(model, data_t, data_y, observe, fit_names, t_final=None):
    """r(θ) = observe(q)(data_t) - data_y for θ the fitted values in ``fit_names`` order."""
    data_t = jnp.asarray(data_t)
    data_y = jnp.asarray(data_y)
    tf = float(np.max(np.asarray(data_t))) if t_final is None else t_final
    n_steps = int(np.ceil(tf / model.dt)) + 1

    def residuals(theta):
        p = dict(model.params)
        for i, name in enumerate(fit_names):
            p[name] = theta[i]
        q0, u0 = model.initial_state(p)
        traj = simulate(model.system, p, q0, u0, dt=model.dt, n_steps=n_steps)
        y = observe(traj.q)
        return jnp.interp(data_t, traj.t, y) - data_y

    return residuals


def fit(model, data_t, data_y, observe, fit_names, guesses, bounds, *, optimizer="adam",
        steps=200, learning_rate=0.05):
    """Fit ``fit_names`` (bounded) to data; see the module docstring. Returns :class:`FitResult`."""
    fit_names = tuple(fit_names)
    for n in fit_names:
        if n not in model.params:
            raise ValueError(f"fit parameter {n!r} is not a parameter of model {model.name}")
        lo_, hi_ = bounds[n]
        if not lo_ < float(guesses[n]) < hi_:
            raise ValueError(f"guess {n} = {guesses[n]} must lie strictly inside bounds ({lo_}, {hi_})")
    lo = jnp.array([bounds[n][0] for n in fit_names], dtype=float)
    hi = jnp.array([bounds[n][1] for n in fit_names], dtype=float)
    res_fn = make_residuals(model, data_t, data_y, observe, fit_names)

    def loss(z):
        r = res_fn(_to_theta(z, lo, hi))
        return jnp.mean(r ** 2)

    z = _to_z(jnp.array([float(guesses[n]) for n in fit_names]), lo, hi)
    history = []
    if optimizer == "adam":
        opt = optax.adam(learning_rate)

        @jax.jit
        def update(z, s):
            v, g = jax.value_and_grad(loss)(z)
            u, s = opt.update(g, s, z)
            return optax.apply_updates(z, u), s, v
    elif optimizer == "lbfgs":
        opt = optax.lbfgs()
        vg = optax.value_and_grad_from_state(loss)

        @jax.jit
        def update(z, s):
            v, g = vg(z, state=s)
            u, s = opt.update(g, s, z, value=v, grad=g, value_fn=loss)
            return optax.apply_updates(z, u), s, v
    else:
        raise ValueError(f"optimizer = {optimizer!r} must be 'adam' or 'lbfgs'")
    s = opt.init(z)
    for _ in range(steps):
        z, s, v = update(z, s)
        history.append(float(v))
    theta = _to_theta(z, lo, hi)
    r = res_fn(theta)
    J = jax.jacfwd(res_fn)(theta)
    m, pn = J.shape
    sigma2 = float(jnp.sum(r ** 2)) / max(m - pn, 1)
    cov = sigma2 * np.linalg.pinv(np.asarray(J.T @ J))
    sd = np.sqrt(np.maximum(np.diag(cov), 0.0))
    est = {n: float(theta[i]) for i, n in enumerate(fit_names)}
    return FitResult(est, {n: float(sd[i]) for i, n in enumerate(fit_names)},
                     {n: (est[n] - 1.96 * sd[i], est[n] + 1.96 * sd[i]) for i, n in enumerate(fit_names)},
                     np.asarray(history), steps, float(jnp.mean(r ** 2)))
