"""Outcomes of one simulated trajectory: scalar reductions and kept time series.

The reductions are pure jnp functions of one sample's arrays (jit/vmap-able);
:func:`outcome` turns a name into an :class:`Outcome` that reads what it needs
from a :class:`jaxcontact.simulate.Trajectory` (run with ``save_every=1`` so
peaks and impact counts see every step). Scalar outcomes:

    peak_impulse     largest normal impulse of any contact in one step [N·s]
    impacts          number of impacts: steps where a contact's normal impulse
                     rises above ``threshold`` after a step at or below it
    rest_time        first time after which ‖u‖∞ ≤ ``tol`` until the end [s]
                     (censored: t_final when the system is still moving)
    max_penetration  max(0, −min g_N) over steps and contacts [m]
    max_phi          max over steps of ‖Φ(q, t)‖₂ (bilateral drift)
    max_phi_dot      max over steps of ‖Φ_q u + Φ_t‖₂
    final:<coord>    q of a coordinate at t_final (name or index)
    max:<coord>, min:<coord>   extreme of a coordinate over time
    rebound:<coord>  max of a coordinate after the first impact (the bouncing
                     ball's first rebound height; NaN if there is no impact)

Kept time series (``series:<what>``, every k-th row, first and last included
when k divides the number of steps): ``series:<coord>``, ``series:gap``
(contact 0, or ``series:gap<i>``), ``series:energy``, ``series:phi``,
``series:speed`` (‖u‖∞).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax.numpy as jnp
import jax

# Reductions on arrays of one sample (time on axis 0) ------------------------------------------


def peak_impulse(impulse_normal):
    """Largest normal impulse of any contact in any step; impulse_normal (T, k)."""
    return jnp.max(impulse_normal, initial=0.0)


def impact_count(impulse_normal, threshold):
    """Number of contact onsets: steps whose impulse exceeds ``threshold`` after a step at or below it.

    impulse_normal (T, k); the count is summed over contacts. A persistent
    contact (the linkage held against the wall by its motor) counts once.
    """
    on = impulse_normal > threshold
    prev = jnp.concatenate([jnp.zeros_like(on[:1]), on[:-1]], axis=0)
    return jnp.sum(on & ~prev)


def rest_time(t, u, tol):
    """First time after which ‖u‖∞ ≤ tol at every later row; t[-1] if still moving at the end.

    t (T,), u (T, n).
    """
    moving = jnp.max(jnp.abs(u), axis=-1) > tol
    idx = jnp.arange(t.shape[0])
    last = jnp.max(jnp.where(moving, idx, -1))
    return t[jnp.clip(last + 1, 0, t.shape[0] - 1)]


def max_penetration(gaps):
    """max(0, −min gap) over time and contacts; gaps (T, k)."""
    return jnp.maximum(0.0, -jnp.min(gaps, initial=jnp.inf))


def max_after_first_impact(x, impulse_normal, threshold):
    """Max of x (T,) over the rows after the first step with a normal impulse above ``threshold``.

    NaN when no impact happens (the sample then counts as failed for this outcome, visibly).
    """
    hit = jnp.any(impulse_normal > threshold, axis=-1)
    first = jnp.argmax(hit)
    after = jnp.arange(x.shape[0]) >= first
    return jnp.where(jnp.any(hit), jnp.max(jnp.where(after, x, -jnp.inf)), jnp.nan)


def keep_every(x, k: int):
    """Every k-th row of a time series (row 0 = the initial state)."""
    return x[::k]


# Named outcomes on trajectories -----------------------------------------------------------------


class Outcome(NamedTuple):
    """A named outcome: ``fn(traj, system, params) -> array`` for one sample (scalar or (T',) series).

    diagnostics: it reads the per-step diagnostics (‖Φ‖, ‖Φ̇‖, energy), so the scheme must
    compute them; a study without such an outcome turns them off for speed.
    """

    name: str
    kind: str  # "scalar" or "series"
    description: str
    unit: str
    fn: Callable
    diagnostics: bool = False


def _coord_index(system, spec: str) -> int:
    names = tuple(system.names)
    if spec in names:
        return names.index(spec)
    try:
        i = int(spec)
    except ValueError:
        raise ValueError(f"unknown coordinate {spec!r}; coordinates: {list(names) or list(range(system.n_dof))}") from None
    if not 0 <= i < system.n_dof:
        raise ValueError(f"coordinate index {i} outside [0, {system.n_dof})")
    return i


def _gaps(traj, system, params):
    return jax.vmap(lambda q, t: system.gaps(q, t, params))(traj.q, traj.t)


SCALARS = ("peak_impulse", "impacts", "rest_time", "max_penetration", "max_phi", "max_phi_dot")
SERIES_FIELDS = ("gap", "energy", "phi", "speed")


def outcome(name: str, system, *, save_every: int = 1, impact_threshold: float = 1e-9,
            rest_tol: float = 1e-3) -> Outcome:
    """The outcome called ``name`` (see the module docstring) for ``system``.

    impact_threshold [N·s] and rest_tol [coordinate units/s] set the impact and rest criteria.
    Raises ValueError with the list of names for an unknown outcome.
    """
    k = int(save_every)
    has_contacts = system.gaps is not None
    has_phi = system.constraints is not None
    if name == "peak_impulse":
        return Outcome(name, "scalar", "largest normal impulse in one step", "N·s",
                       lambda tr, s, p: peak_impulse(tr.impulse_normal))
    if name == "impacts":
        return Outcome(name, "scalar", f"impacts (impulse onsets above {impact_threshold:g} N·s)", "",
                       lambda tr, s, p: impact_count(tr.impulse_normal, impact_threshold).astype(tr.q.dtype))
    if name == "rest_time":
        return Outcome(name, "scalar", f"time to rest (‖u‖∞ ≤ {rest_tol:g} to the end; t_final if never)", "s",
                       lambda tr, s, p: rest_time(tr.t, tr.u, rest_tol))
    if name == "max_penetration":
        if not has_contacts:
            raise ValueError("outcome max_penetration needs a system with contacts")
        return Outcome(name, "scalar", "max penetration max(0, −g_N)", "m",
                       lambda tr, s, p: max_penetration(_gaps(tr, s, p)))
    if name in ("max_phi", "max_phi_dot"):
        if not has_phi:
            raise ValueError(f"outcome {name} needs a system with bilateral constraints")
        field = "phi" if name == "max_phi" else "phi_dot"
        return Outcome(name, "scalar", f"max ‖{'Φ' if field == 'phi' else 'Φ̇'}‖₂ over time", "",
                       lambda tr, s, p: jnp.max(getattr(tr.diagnostics, field)), True)
    kind, _, arg = name.partition(":")
    if kind in ("final", "max", "min") and arg:
        i = _coord_index(system, arg)
        red = {"final": lambda x: x[-1], "max": jnp.max, "min": jnp.min}[kind]
        return Outcome(name, "scalar", f"{kind} of {arg} over the run", "",
                       lambda tr, s, p: red(tr.q[:, i]))
    if kind == "rebound" and arg:
        i = _coord_index(system, arg)
        return Outcome(name, "scalar", f"max of {arg} after the first impact", "",
                       lambda tr, s, p: max_after_first_impact(tr.q[:, i], tr.impulse_normal, impact_threshold))
    if kind == "series" and arg:
        if arg.startswith("gap"):
            if not has_contacts:
                raise ValueError(f"outcome {name} needs a system with contacts")
            j = int(arg[3:] or 0)
            return Outcome(name, "series", f"gap of contact {j}", "m",
                           lambda tr, s, p: keep_every(_gaps(tr, s, p)[:, j], k))
        if arg in ("energy", "phi"):
            return Outcome(name, "series", {"energy": "energy", "phi": "‖Φ‖₂"}[arg], "J" if arg == "energy" else "",
                           lambda tr, s, p: keep_every(getattr(tr.diagnostics, arg), k), True)
        if arg == "speed":
            return Outcome(name, "series", "‖u‖∞", "", lambda tr, s, p: keep_every(jnp.max(jnp.abs(tr.u), axis=-1), k))
        i = _coord_index(system, arg)
        return Outcome(name, "series", f"{arg} over time", "", lambda tr, s, p: keep_every(tr.q[:, i], k))
    raise ValueError(f"unknown outcome {name!r}; scalars: {list(SCALARS)} or final:/max:/min:/rebound:<coord>; "
                     f"series: series:<coord> or series:{{{','.join(SERIES_FIELDS)}}}")
