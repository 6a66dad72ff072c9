"""A posterior over fitted parameters by batched simulation: vmapped random-walk Metropolis chains.

Noise model: every observed value is the model's plus independent Gaussian noise of sd σ (the
given ``noise``, else the residual's estimate at the fit), so log p(y | θ) = −M·L(θ)/(2σ²) with L
the mean squared residual over M entries; the prior is uniform inside the fit's bounds. The
sampler is random-walk Metropolis rather than a gradient sampler (MALA, HMC) because a
hard-contact misfit is piecewise smooth in restitution and friction: its gradient ignores the
jumps that move an impact by one step, while the Metropolis ratio sees them. Each chain step is
one forward run; all chains step together under ``vmap`` inside one ``lax.scan``.

    post = sample(loss, theta_hat, scale, lo, hi, n_residuals=M, sigma=σ)
    post.mean, post.interval95, post.rhat, post.ess
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class Posterior(NamedTuple):
    """Samples (chains, draws, p) after burn-in; per parameter: mean, sd, 95 % credible interval,
    split R-hat and effective sample size (over all chains); the acceptance rate per chain."""

    samples: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    interval95: np.ndarray
    rhat: np.ndarray
    ess: np.ndarray
    acceptance: np.ndarray

    def to_json(self, names) -> dict:
        """The posterior summary as plain JSON values (per parameter: mean, sd, 95 % interval, R-hat, ESS)."""
        return {
            n: {
                "mean": float(self.mean[i]),
                "std": float(self.std[i]),
                "interval95": [float(x) for x in self.interval95[i]],
                "rhat": float(self.rhat[i]),
                "ess": float(self.ess[i]),
            }
            for i, n in enumerate(names)
        } | {"acceptance": self.acceptance.tolist()}


def split_rhat(x: np.ndarray) -> np.ndarray:
    """Split R-hat (Gelman et al., Bayesian Data Analysis, 3rd ed.) of draws x (chains, draws, p)."""
    c, n, p = x.shape
    h = n // 2
    s = np.concatenate([x[:, :h], x[:, h : 2 * h]], axis=0)
    w = s.var(axis=1, ddof=1).mean(axis=0)
    b = h * s.mean(axis=1).var(axis=0, ddof=1)
    var = (h - 1) / h * w + b / h
    return np.sqrt(var / np.where(w > 0, w, np.inf))


def effective_sample_size(x: np.ndarray) -> np.ndarray:
    """ESS of draws x (chains, draws, p) from the chain-averaged autocorrelation, summed over lags
    until the first pair of consecutive lags with a negative sum (Geyer's initial positive sequence)."""
    c, n, p = x.shape
    out = np.empty(p)
    for j in range(p):
        y = x[:, :, j] - x[:, :, j].mean(axis=1, keepdims=True)
        f = np.fft.rfft(y, 2 * n, axis=1)
        ac = np.fft.irfft(f * np.conj(f), axis=1)[:, :n].mean(axis=0)
        if ac[0] <= 0:
            out[j] = c * n
            continue
        rho = ac / ac[0]
        tau = 1.0
        for k in range(1, n - 1, 2):
            pair = rho[k] + rho[k + 1]
            if pair < 0:
                break
            tau += 2 * pair
        out[j] = c * n / tau
    return out


def sample(
    loss: Callable,
    theta_hat,
    scale,
    lo,
    hi,
    *,
    n_residuals: int,
    sigma: float,
    chains: int = 8,
    draws: int = 1000,
    burn: int = 500,
    seed: int = 0,
) -> Posterior:
    """Random-walk Metropolis from ``theta_hat`` (spread by ``scale``), Gaussian proposals of sd
    2.38·``scale``/√p per parameter (``scale``: a standard deviation per parameter, e.g. a quarter of
    the checked 95 % interval's width). ``loss`` maps θ (p,) to the mean squared residual."""
    theta_hat, scale = jnp.asarray(theta_hat, float), jnp.asarray(scale, float)
    lo, hi = jnp.asarray(lo, float), jnp.asarray(hi, float)
    if not float(sigma) > 0:
        raise ValueError(f"sigma = {sigma} must be > 0 (the noise sd of the likelihood)")
    if not np.all(np.asarray(scale) > 0):
        raise ValueError(f"scale = {np.asarray(scale)} must be > 0 for every parameter")
    for name, v in (("chains", chains), ("draws", draws), ("burn", burn)):
        if not isinstance(v, int) or v < (2 if name != "burn" else 0):
            raise ValueError(f"{name} = {v!r} must be an int >= {2 if name != 'burn' else 0}")
    p = theta_hat.size
    step = 2.38 * scale / np.sqrt(p)

    def logp(th):
        inside = jnp.all((th > lo) & (th < hi))
        v = loss(th)
        return jnp.where(inside & jnp.isfinite(v), -n_residuals * v / (2 * sigma**2), -jnp.inf)

    def chain(key):
        k0, key = jax.random.split(key)
        th0 = jnp.clip(theta_hat + scale * jax.random.normal(k0, (p,)), lo + 1e-12 * (hi - lo), hi - 1e-12 * (hi - lo))

        def body(carry, k):
            th, lp = carry
            ka, kb = jax.random.split(k)
            prop = th + step * jax.random.normal(ka, (p,))
            lq = logp(prop)
            acc = jnp.log(jax.random.uniform(kb)) < lq - lp
            th, lp = jnp.where(acc, prop, th), jnp.where(acc, lq, lp)
            return (th, lp), (th, acc)

        _, (ths, accs) = jax.lax.scan(body, (th0, logp(th0)), jax.random.split(key, burn + draws))
        return ths[burn:], jnp.mean(accs[burn:])

    ths, acc = jax.jit(jax.vmap(chain))(jax.random.split(jax.random.PRNGKey(seed), chains))
    x = np.asarray(ths)
    flat = x.reshape(-1, p)
    return Posterior(
        x,
        flat.mean(axis=0),
        flat.std(axis=0, ddof=1),
        np.stack([np.quantile(flat, 0.025, axis=0), np.quantile(flat, 0.975, axis=0)], axis=1),
        split_rhat(x),
        effective_sample_size(x),
        np.asarray(acc),
    )
