"""ODE integration of smooth Lagrangian systems (no contacts): explicit RK and a stiff reference.

The smoothed models (model smoothing: explicit steps far beyond the stiff parts'
stability limit) are ordinary Lagrangian systems whose mass matrix grows by h²K/6 (or its nonlinear
analogue for beams), so everything here works on any :class:`jaxcontact.system.LagrangianSystem` without gaps:

* :func:`accelerations` solves M u̇ = h + Φ_qᵀλ with Baumgarte-stabilised
  constraint rows Φ̈ = −2αΦ̇ − β²Φ (the penalty scheme's
  :func:`jaxcontact.stepping.kernels.constrained_acceleration`);
* :func:`rk4` is a fixed-step classical Runge–Kutta (the schemes' one RK4 step,
  :func:`jaxcontact.stepping.kernels.rk4`, in a ``lax.scan``: a fixed cost,
  differentiable, vmap-able);
* :func:`solve` wraps diffrax: adaptive explicit ``"tsit5"``/``"dopri5"`` or the
  stiff (L-stable, implicit) ``"kvaerno5"``, with a PID step controller.

The state is y = (q, u) stacked into one vector of length 2n; the parameters
``p`` are passed through (vmap over them, or over y0).
"""

from __future__ import annotations

from typing import NamedTuple

import diffrax
import jax
import jax.numpy as jnp

from jaxcontact.stepping.kernels import ADAPTIVE_METHODS, constrained_acceleration, diffrax_solver
from jaxcontact.stepping.kernels import rk4 as rk4_step
from jaxcontact.system import LagrangianSystem


def accelerations(system: LagrangianSystem, q, u, t, p, alpha=10.0, beta=10.0):
    """u̇ from M(q) u̇ = h(q, u, t) + Φ_qᵀλ and Φ̈ = −2αΦ̇ − β²Φ (α, β in 1/s; unused without Φ).

    The penalty scheme's saddle-point solve without contact forces (M is symmetric
    positive definite, also when smoothed: M + h²K/6 or the beams' analogue).
    """
    if system.gaps is not None:
        raise ValueError("accelerations: the system has contacts (gaps); these integrators are for smooth systems")
    force = system.forces(q, u, t, p)
    return constrained_acceleration(system, p, q, u, t, force, alpha, beta)[0]


def vector_field(system: LagrangianSystem, alpha=10.0, beta=10.0):
    """f(t, y, p) = (u, u̇) for the first-order state y = (q, u)."""
    n = system.n_dof

    def f(t, y, p):
        q, u = y[:n], y[n:]
        return jnp.concatenate([u, accelerations(system, q, u, t, p, alpha, beta)])

    return f


def rk4(f, y0, p, *, t0, dt, n_steps: int, save_every: int = 1):
    """Classical fixed-step RK4 for y' = f(t, y, p); returns (t, y) at every ``save_every``-th step.

    ``n_steps`` must be a multiple of ``save_every``; row 0 is y0. A step larger than
    the stability limit (about 2.8/ω for the fastest undamped mode) blows up to inf/nan.
    """
    if n_steps % save_every:
        raise ValueError(f"n_steps = {n_steps} must be a multiple of save_every = {save_every}")
    dt = jnp.asarray(dt, y0.dtype)

    def step(carry, _):
        t, y = carry
        y_E, _, _, _ = rk4_step(lambda yy, tt: (f(tt, yy, p), ()), y, t, dt)
        return (t + dt, y_E), None

    def saved(carry, _):
        carry, _ = jax.lax.scan(step, carry, None, length=save_every)
        return carry, carry

    _, (ts, ys) = jax.lax.scan(saved, (jnp.asarray(t0, y0.dtype), y0), None, length=n_steps // save_every)
    return jnp.concatenate([jnp.asarray(t0, y0.dtype)[None], ts]), jnp.concatenate([y0[None], ys])


class Solution(NamedTuple):
    """diffrax result: ys at ``ts`` (len(ts), 2n); steps accepted/rejected; ok = diffrax reported success."""

    ts: jax.Array
    ys: jax.Array
    accepted: jax.Array
    rejected: jax.Array
    ok: jax.Array


def solve(f, y0, p, ts, *, solver: str = "tsit5", rtol=1e-6, atol=1e-8, dt0=None, max_steps: int = 100_000):
    """Integrate y' = f(t, y, p) over ``ts`` (saved there) with diffrax's adaptive ``solver``.

    ``solver``: "tsit5" or "dopri5" (explicit, adaptive) or "kvaerno5" (stiff, implicit).
    Inside jit a failure (e.g. ``max_steps`` reached) does not raise: ``ok`` is False.
    """
    if solver not in ADAPTIVE_METHODS:
        raise ValueError(f"solver {solver!r} must be one of {sorted(ADAPTIVE_METHODS)}")
    ts = jnp.asarray(ts, y0.dtype)
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(f),
        diffrax_solver(solver),
        ts[0],
        ts[-1],
        dt0,
        y0,
        args=p,
        saveat=diffrax.SaveAt(ts=ts),
        stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol),
        max_steps=max_steps,
        throw=False,
    )
    return Solution(
        sol.ts,
        sol.ys,
        sol.stats["num_accepted_steps"],
        sol.stats["num_rejected_steps"],
        sol.result == diffrax.RESULTS.successful,
    )
