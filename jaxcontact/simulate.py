"""Run a nonsmooth Lagrangian system over a time grid: ``lax.scan`` over steps, ``vmap`` over a batch.

    traj = simulate(system, params, q0, u0, dt=1e-3, n_steps=10_000)

One call runs one system (q0 of shape (n,)) or a batch (q0 of shape (B, n),
every parameter leaf with leading axis B); the compiled program depends only
on the static structure (system, scheme, n_steps, save_every, batch or not),
so new parameter values, a new dt or new initial states reuse it.

``save_every = k`` keeps every k-th state (a scan of scans: memory O(n_steps/k));
the step quantities of a saved row then summarise the k steps that led to it:
impulses summed (the total impulse over the interval), ``active`` any,
solver residual and iterations the maximum, ``converged`` all; ‖Φ‖, ‖Φ̇‖ and
the energy are those of the saved state.

Row 0 of a trajectory is the initial state: zero impulses, residual 0 and
converged, since no step led there; ``active`` marks the contacts closed at
(q0, t0) (g_N ≤ 0), so a body that starts on a surface is not an "impact".

Schemes. ``scheme`` is any :class:`jaxcontact.stepping.base.Scheme` (Moreau–Jean,
penalty, event-driven, …): ``simulate`` asks it to ``check`` the system first (a scheme
that cannot treat the system's contacts is refused with an error naming both), then runs
its ``init``/``step`` in the one time loop, :func:`fold_steps`. ``StepInfo.P_N``/``P_T``
are impulses over the step: force-based schemes (penalty, event-driven) report the
contact force integrated over the step (≈ force × dt), so impulse-based and
force-based trajectories compare on the same footing.

The loop and what it keeps are separate: a :class:`Fold` says what to carry from step
to step and what to emit every ``save_every`` steps (as diffrax's ``SaveAt(fn=…)``). A
trajectory is one fold (every saved state and its summarised step quantities); a Monte
Carlo study's outcomes are another (:func:`jaxcontact.studies.outcomes.simulate_outcomes`:
peaks and counts folded inside the scan, no trajectory stored), so every study runs
exactly the steps ``simulate`` runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.initial import START_MODES, check_state, project_state
from jaxcontact.params import LAW_RANGES
from jaxcontact.stepping.base import Scheme, StepInfo
from jaxcontact.stepping.kernels import constraint_residuals
from jaxcontact.stepping.moreau_jean import MoreauJean
from jaxcontact.system import LagrangianSystem, energy


class Diagnostics(NamedTuple):
    """Per saved row: contact-solver residual/convergence/iterations, ‖Φ‖₂, ‖Φ_q u + Φ_t‖₂, energy.

    ‖Φ‖ and ‖Φ_q u + Φ_t‖ are evaluated at the saved state (q_E, u_E, t_E).
    Moreau–Jean enforces Φ_q u_E + Φ_t = 0 at the step's θ-point (q_M, t_M), so
    at q_E both drift by O(h) per unit time without a projection (``MoreauJean(projection=Projection())`` removes it).
    The energy is ½ uᵀ M u + V (kinetic only if the system has no potential).
    """

    residual: jax.Array
    converged: jax.Array
    iterations: jax.Array
    phi: jax.Array
    phi_dot: jax.Array
    energy: jax.Array


class Trajectory(NamedTuple):
    """A simulated trajectory (a pytree; batched trajectories carry a leading batch axis).

    t (N+1,), q (N+1, n), u (N+1, n_u), impulse_normal / active (N+1, k), impulse_tangent (N+1, k)
    or, with spatial contacts, (N+1, 2k) (t1, t2 of each contact),
    diagnostics: :class:`Diagnostics` with (N+1,) leaves. N = n_steps / save_every.
    """

    t: jax.Array
    q: jax.Array
    u: jax.Array
    impulse_normal: jax.Array
    impulse_tangent: jax.Array
    active: jax.Array
    diagnostics: Diagnostics

    def __repr__(self):
        shape = jnp.shape(self.q)
        batch = f"batch={shape[0]}, " if len(shape) == 3 else ""
        return (
            f"Trajectory({batch}rows={shape[-2]}, n_dof={shape[-1]}, "
            f"contacts={jnp.shape(self.active)[-1]}, t=[{float(np.min(self.t)):.6g}, {float(np.max(self.t)):.6g}])"
        )


def simulate(
    system: LagrangianSystem,
    params,
    q0,
    u0,
    *,
    dt,
    n_steps: int,
    t0=0.0,
    scheme=MoreauJean(),
    save_every: int = 1,
    start: str = "check",
) -> Trajectory:
    """Simulate ``system`` from (q0, u0) for ``n_steps`` steps of size ``dt``.

    Batch: q0, u0 of shape (B, n) and every leaf of ``params`` with leading axis B
    (use ``jax.tree.map(lambda x: jnp.broadcast_to(x, (B,) + jnp.shape(x)), p)``
    for shared values). Raises ValueError for bad input (outside jit); inside a
    trace only shape rules are checked.

    ``start``: "check" — a concrete start must be consistent (:func:`jaxcontact.initial.check_state`:
    on its manifold, joints assembled, no contact in penetration), else ValueError naming the row;
    "project" — (q0, u0) are first projected onto the constraints
    (:func:`jaxcontact.initial.project_state`), then checked; "continue" — the start is the last state of an
    earlier run of this system, whose small joint drift and contact penetration it keeps (checked only for
    being finite and on its manifold).
    """
    if not isinstance(system, LagrangianSystem):
        raise TypeError(f"system must be a LagrangianSystem; got {type(system).__name__}")
    check_scheme(scheme, system)
    q0, u0 = jnp.asarray(q0), jnp.asarray(u0)
    if not jnp.issubdtype(q0.dtype, jnp.floating):
        q0 = q0.astype(jnp.result_type(float))
    u0 = u0.astype(q0.dtype)
    if start not in START_MODES:
        raise ValueError(f"start = {start!r} must be one of {START_MODES}")
    batched = _validate(system, params, q0, u0, dt, n_steps, save_every, t0)
    if start == "project":
        project = functools.partial(project_state, system)
        q0, u0 = (jax.vmap(project, in_axes=(0, 0, 0, None)) if batched else project)(params, q0, u0, t0)
    if _all_concrete((params, q0, t0)):
        check_state(system, params, q0, None, t0, constraints=start != "continue")
    params = jax.tree.map(
        lambda x: jnp.asarray(x, q0.dtype) if jnp.issubdtype(jnp.result_type(x), jnp.floating) else x, params
    )
    return _run(
        params,
        q0,
        u0,
        jnp.asarray(dt, q0.dtype),
        jnp.asarray(t0, q0.dtype),
        system=system,
        scheme=scheme,
        n_steps=int(n_steps),
        save_every=int(save_every),
        batched=batched,
    )


def check_scheme(scheme, system, model: str | None = None) -> None:
    """``scheme`` must be a :class:`Scheme` that can treat ``system`` (its ``check``); the error names the
    scheme and, when given, the ``model``."""
    if not isinstance(scheme, Scheme):
        raise TypeError(
            f"scheme must be a jaxcontact.stepping.Scheme (MoreauJean, Penalty, EventDriven, …); "
            f"got {type(scheme).__name__}"
        )
    try:
        scheme.check(system)
    except ValueError as e:
        if model is None:
            raise
        raise ValueError(f"model {model!r}: {e}") from None


def simulate_model(
    model, *, params=None, dt=None, t_final=None, scheme=MoreauJean(), save_every: int = 1, batched: bool = False
) -> Trajectory:
    """Simulate a built-in :class:`jaxcontact.models.Model` (initial state from its parameters).

    ``params`` defaults to the model's; with ``batched=True`` every leaf has a leading batch axis.
    """
    check_scheme(scheme, model.system, model.name)
    params = model.params if params is None else params
    dt = model.dt if dt is None else dt
    t_final = model.t_final if t_final is None else t_final
    n_steps = n_steps_for(dt, t_final)
    init = jax.vmap(model.initial_state) if batched else model.initial_state
    q0, u0 = init(params)
    return simulate(model.system, params, q0, u0, dt=dt, n_steps=n_steps, scheme=scheme, save_every=save_every)


def n_steps_for(dt, t_final) -> int:
    """Number of steps covering [0, t_final] with step dt (rounded to the nearest; ≥ 1)."""
    dt, t_final = float(dt), float(t_final)
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt = {dt} must be finite and > 0")
    if not (np.isfinite(t_final) and t_final > 0):
        raise ValueError(f"t_final = {t_final} must be finite and > 0")
    if dt > t_final:  # one step would run past the horizon, to t = dt
        raise ValueError(f"dt = {dt:g} s must be ≤ t_final = {t_final:g} s (one step would end at t = {dt:g} s)")
    return max(1, int(round(t_final / dt)))


def _is_concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


def _all_concrete(tree) -> bool:
    return all(_is_concrete(leaf) for leaf in jax.tree_util.tree_leaves(tree))


def _validate(system, params, q0, u0, dt, n_steps, save_every, t0) -> bool:
    """Check the run's inputs; return whether it is a batch."""
    if not isinstance(system, LagrangianSystem):
        raise TypeError(f"system must be a LagrangianSystem; got {type(system).__name__}")
    if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
        raise ValueError(f"n_steps = {n_steps!r} must be an int ≥ 1")
    if isinstance(save_every, bool) or not isinstance(save_every, (int, np.integer)) or save_every < 1:
        raise ValueError(f"save_every = {save_every!r} must be an int ≥ 1")
    if n_steps % save_every:
        raise ValueError(f"save_every = {save_every} must divide n_steps = {n_steps}")
    if jnp.ndim(dt) != 0:
        raise ValueError(f"dt must be a scalar; got shape {jnp.shape(dt)}")
    if _is_concrete(dt):
        d = float(dt)
        if not (np.isfinite(d) and d > 0):
            raise ValueError(f"dt = {d} must be finite and > 0")
    if jnp.ndim(t0) != 0 or (_is_concrete(t0) and not np.isfinite(float(t0))):
        raise ValueError(f"t0 = {t0} must be a finite scalar")
    n = system.n_dof
    if q0.ndim not in (1, 2) or q0.shape[-1] != n:
        raise ValueError(f"q0 must have shape (n,) = ({n},) or (batch, {n}); got {q0.shape}")
    if system.n_u == n and u0.shape != q0.shape:
        raise ValueError(f"u0 must have the shape of q0 {q0.shape}; got {u0.shape}")
    if u0.shape != q0.shape[:-1] + (system.n_u,):
        raise ValueError(
            f"u0 must have shape {q0.shape[:-1] + (system.n_u,)} (q0 {q0.shape}, {system.n_u} "
            f"velocities); got {u0.shape}"
        )
    batched = q0.ndim == 2
    leaves = jax.tree_util.tree_leaves_with_path(params)
    for path, leaf in leaves:
        name = jax.tree_util.keystr(path) or "params"
        if batched and (jnp.ndim(leaf) == 0 or jnp.shape(leaf)[0] != q0.shape[0]):
            raise ValueError(
                f"batched run (q0 of shape {q0.shape}): parameter {name} must have leading axis "
                f"{q0.shape[0]}; got shape {jnp.shape(leaf)}"
            )
        if _is_concrete(leaf):
            a = np.asarray(leaf)
            if np.issubdtype(a.dtype, np.number) and not np.all(np.isfinite(a)):
                raise ValueError(f"parameter {name} = {a} must be finite")
    for label, x in (("q0", q0), ("u0", u0)):
        if _is_concrete(x) and not np.all(np.isfinite(np.asarray(x))):
            raise ValueError(f"{label} = {np.asarray(x)} must be finite")
    # Inside an outer trace (jit, grad) even constant parameters give traced laws, masses and Jacobians: their
    # rules are checked only where they have values.
    concrete = all(_is_concrete(leaf) for _, leaf in leaves)
    law = lambda f: (jax.vmap(f)(params) if batched else f(params)) if f is not None and concrete else None  # noqa: E731
    laws, compliant = law(system.laws), law(system.compliant_laws)
    if laws is not None and _all_concrete(laws):
        for field, (lo, hi) in LAW_RANGES.items():
            a = np.asarray(getattr(laws, field))
            if np.any(a < lo) or np.any(a > hi):
                raise ValueError(f"contact law {field} = {a} must lie in [{lo}, {hi}]")
        if laws.static_friction is not None and np.any(np.asarray(laws.static_friction) < np.asarray(laws.friction)):
            raise ValueError(
                f"contact law static_friction = {np.asarray(laws.static_friction)} must be ≥ "
                f"friction = {np.asarray(laws.friction)} (μ0 ≥ μ)"
            )
    if compliant is not None and _all_concrete(compliant):
        _check_compliant_laws(compliant, system.friction_regularization)
    return batched


def _check_compliant_laws(laws, regularization):
    """Rules of :class:`CompliantLaws`, with errors naming the field and value."""
    a = {f: np.asarray(getattr(laws, f)) for f in laws._fields}
    for field, ok, rule in (
        ("stiffness", a["stiffness"] >= 0, ">= 0"),
        ("exponent", a["exponent"] > 0, "> 0"),
        ("damping", a["damping"] >= 0, ">= 0"),
        ("friction", a["friction"] >= 0, ">= 0"),
        ("static_friction", a["static_friction"] >= a["friction"], ">= friction (μ0 ≥ μ)"),
        ("slip_width", a["slip_width"] > 0, "> 0"),
        (
            "slip_width0",
            (a["slip_width0"] >= 0) & ((regularization != "linear") | (a["slip_width0"] < a["slip_width"])),
            ">= 0 and < slip_width (linear model)",
        ),
    ):
        if not np.all(ok):
            raise ValueError(f"compliant contact law {field} = {a[field]} must be {rule}")


class Fold(NamedTuple):
    """What the time loop keeps (as diffrax's ``SaveAt(fn=…)``), three pure functions:

    init(state0, info) -> acc      the carry before the first step (``info``: the step's
                                   abstract output, for shapes)
    update(acc, state, info) -> acc    after every step (``state`` is the new state)
    save(acc, state) -> (acc, row)     every ``save_every`` steps; rows are stacked
    """

    init: Callable
    update: Callable
    save: Callable


def fold_steps(system, scheme, p, q0, u0, dt, t0, *, n_steps: int, save_every: int, fold: Fold):
    """THE time loop: ``n_steps`` steps of ``scheme`` from (q0, u0, t0), folded by ``fold``.

    A scan over blocks of ``save_every`` steps (memory O(n_steps / save_every)), each block a
    scan of steps, then ``fold.save``; the n_steps mod save_every steps after the last block
    are run and folded without a save. Returns (initial state, final acc, stacked rows).
    Pure and unbatched (vmap it); ``simulate`` validates the inputs.
    """
    s0 = scheme.init(system, p, q0, u0, t0)
    # Jitted so the step is traced once for the shape of its StepInfo and reused by every scan below.
    step = jax.jit(functools.partial(scheme.step, system))
    info_shape = jax.eval_shape(step, p, s0, dt)[1]

    def one(carry, _):
        s, acc = carry
        s1, info = step(p, s, dt)
        return (s1, fold.update(acc, s1, info)), None

    def block(carry, _):
        if save_every == 1:
            carry, _ = one(carry, None)
        else:
            carry, _ = jax.lax.scan(one, carry, None, length=save_every)
        s, acc = carry
        acc, row = fold.save(acc, s)
        return (s, acc), row

    n_blocks, rest = divmod(int(n_steps), int(save_every))
    carry, rows = jax.lax.scan(block, (s0, fold.init(s0, info_shape)), None, length=n_blocks)
    if rest:
        carry, _ = jax.lax.scan(one, carry, None, length=rest)
    return s0, carry[1], rows


def _info_identity(info_shape, dtype) -> StepInfo:
    """The neutral StepInfo of a block summary: no impulse, nothing active, converged."""
    z = jnp.zeros(info_shape.P_N.shape, dtype)
    return StepInfo(
        z,
        jnp.zeros(info_shape.P_T.shape, dtype),
        jnp.zeros(z.shape, bool),
        jnp.zeros((), dtype),
        jnp.ones((), bool),
        jnp.zeros((), jnp.int32),
        *(jnp.zeros((), dtype),) * 3,
    )


def _combine(acc: StepInfo, info: StepInfo) -> StepInfo:
    """Summary of consecutive steps: impulses summed, active any, residual/iterations max, converged all,
    ‖Φ‖, ‖Φ̇‖ and energy of the last."""
    return StepInfo(
        acc.P_N + info.P_N,
        acc.P_T + info.P_T,
        acc.active | info.active,
        jnp.maximum(acc.residual, info.residual),
        acc.converged & info.converged,
        jnp.maximum(acc.iterations, info.iterations),
        info.phi,
        info.phi_dot,
        info.energy,
    )


def trajectory_fold(dtype, save_every: int) -> Fold:
    """The fold of :func:`simulate`: every saved state with the summary of the steps that led to it."""

    def init(s0, info_shape):
        return _info_identity(info_shape, dtype)

    def update(acc, s, info):
        info = jax.tree.map(lambda a, x: jnp.asarray(x, a.dtype), acc, info)
        return info if save_every == 1 else _combine(acc, info)

    def save(acc, s):
        return jax.tree.map(jnp.zeros_like, acc)._replace(converged=jnp.ones((), bool)), (s.t, s.q, s.u, acc)

    return Fold(init, update, save)


def _single(p, q0, u0, dt, t0, *, system, scheme, n_steps, save_every) -> Trajectory:
    s0, _, (t, q, u, info) = fold_steps(
        system,
        scheme,
        p,
        q0,
        u0,
        dt,
        t0,
        n_steps=n_steps,
        save_every=save_every,
        fold=trajectory_fold(q0.dtype, save_every),
    )
    if scheme.diagnostics:
        phi0, phid0 = constraint_residuals(system, q0, u0, s0.t, p)
        e0 = energy(system, q0, u0, s0.t, p)
    else:
        phi0 = phid0 = e0 = jnp.zeros((), q0.dtype)
    z, z_T = jnp.zeros(info.P_N.shape[1:], q0.dtype), jnp.zeros(info.P_T.shape[1:], q0.dtype)
    active0 = scheme.active(system, p, s0)

    def cat(first, rest):
        return jnp.concatenate([jnp.asarray(first, rest.dtype)[None], rest])

    diag = Diagnostics(
        cat(0.0, jnp.asarray(info.residual, q0.dtype)),
        cat(True, info.converged),
        cat(0, jnp.asarray(info.iterations, jnp.int32)),
        cat(phi0, info.phi),
        cat(phid0, info.phi_dot),
        cat(e0, info.energy),
    )
    return Trajectory(
        cat(s0.t, t), cat(q0, q), cat(u0, u), cat(z, info.P_N), cat(z_T, info.P_T), cat(active0, info.active), diag
    )


@functools.partial(jax.jit, static_argnames=("system", "scheme", "n_steps", "save_every", "batched"))
def _run(params, q0, u0, dt, t0, *, system, scheme, n_steps, save_every, batched) -> Trajectory:
    run = functools.partial(_single, system=system, scheme=scheme, n_steps=n_steps, save_every=save_every)
    if batched:
        return jax.vmap(run, in_axes=(0, 0, 0, None, None))(params, q0, u0, dt, t0)
    return run(params, q0, u0, dt, t0)
