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
    first_above:<coord>=<level>, first_below:<coord>=<level>
                     first time a coordinate is ≥ (≤) the level [s] (censored:
                     t_final when it never is; a tippe top's inversion time)
    peak_force       largest contact force: the largest normal impulse of one step / dt [N]
                     (force-based schemes report the force integrated over the step)
    peak_accel:<coord>   max |Δu / dt| of a coordinate between consecutive steps; with spatial
                     bodies (velocities apart from coordinates) <coord> names a velocity
                     (``slider.vx``: the acceleration of the slider's centre along x)
    free_flight      fraction of the steps in which no contact carries an impulse
                     above ``threshold`` (a clearance joint's journal in free flight)
    free_flight:<contact>   the same for one contact: the fraction of the steps in which
                     its normal impulse is ≤ ``threshold`` (one clearance joint's pin flying free)
    peak_force:<contact>    largest force of one contact: its largest normal impulse of one
                     step / dt [N]
    path_rms:<q1>[,<q2>…]@<model>, path_max:<q1>[,<q2>…]@<model>
                     RMS (max) over the time grid, t = 0 included, of the distance
                     ‖(q1, q2, …) − (q1, q2, …)_ref‖₂ between this run's path of the named
                     coordinates or observables and the same path of the reference model
                     ``<model>`` (one of the model's ``references``; on the command line any registered
                     name or FILE.py:FUNCTION; the flexible arm's
                     tip against the ideal-joint arm's: ``path_rms:tip_x,tip_y@flexible-arm-6-ideal``)
                     [unit of the quantities]. The reference is simulated once per time grid
                     (the run's dt, number of steps and scheme; on a stored trajectory its rows,
                     by Moreau–Jean), at its own nominal parameters
                     except those it shares with the run, which take the run's values; a
                     shared parameter that varies between samples is refused (the reference
                     would have to be simulated per sample). The reference path is compared at
                     every step and kept whole in the study's program (a constant of 8 bytes per
                     step and quantity)

<coord> is a coordinate's name or index, or a model observable (``Model.observables``:
a named scalar fn(q, params), e.g. a journal's eccentricity). <contact> is a contact's name
(``system.contact_names``: the flexible arm's ``joint_3``) or its index.

Kept time series (``series:<what>``, every k-th row, first and last included
when k divides the number of steps): ``series:<coord>``, ``series:gap``
(contact 0, or ``series:gap<i>``), ``series:energy``, ``series:phi``,
``series:speed`` (‖u‖∞).

Every outcome exists twice, on purpose: ``fn`` reduces a stored
:class:`~jaxcontact.simulate.Trajectory` with the array reductions below (the
reference), and ``stream`` folds the same quantity row by row inside the
simulation's scan (:func:`simulate_outcomes`), so a study never stores the
trajectory nor computes per-step diagnostics it does not read: storing a long
trajectory costs a sizeable part of the stepping itself (bench/RESULTS.md,
"Figures moved out of the code"); tests check that both give the same numbers.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.simulate import Fold, fold_steps
from jaxcontact.stepping.base import Scheme
from jaxcontact.stepping.kernels import constraint_residuals
from jaxcontact.stepping.moreau_jean import MoreauJean
from jaxcontact.system import energy

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


def first_time(t, reached):
    """The first time t where ``reached`` (T,) holds; t_final (censored) when it never does."""
    return jnp.where(jnp.any(reached), t[jnp.argmax(reached)], t[-1])


def keep_every(x, k: int):
    """Every k-th row of a time series (row 0 = the initial state)."""
    return x[::k]


# Named outcomes on trajectories -----------------------------------------------------------------


class Row(NamedTuple):
    """One row of a trajectory (the state after a step and that step's impulses): what a stream reads."""

    t: jax.Array
    q: jax.Array
    u: jax.Array
    impulse_normal: jax.Array  # (k,)


class Stream(NamedTuple):
    """An outcome folded over rows: ``init(row0, system, params) -> carry``,
    ``update(carry, row, system, params) -> carry``, ``finish(carry) -> value``.

    A series keeps ``value(row, system, params)`` at the kept rows instead (init/update/finish None).
    """

    init: Callable | None = None
    update: Callable | None = None
    finish: Callable | None = None
    value: Callable | None = None


class Outcome(NamedTuple):
    """A named outcome: ``fn(traj, system, params) -> array`` for one sample (scalar or (T',) series).

    diagnostics: ``fn`` reads the trajectory's per-step diagnostics (‖Φ‖, ‖Φ̇‖, energy), so the
    scheme must compute them; ``stream`` computes what it needs from the state itself.
    smooth: False for an outcome that is piecewise constant in the parameters (a count, or a time read off
    the step grid): its derivative is zero almost everywhere, so a gradient method cannot use it.
    bind: None, or ``bind(dt, n_steps, scheme, params, dtype) -> Outcome`` for an outcome that needs the
    run's time grid before it can be computed (a reference model's path, simulated on the same grid):
    :func:`simulate_outcomes` binds it; the unbound ``stream`` refuses to run.
    measures_error: the outcome measures the scheme's own error (the penetration of rigid contacts, the drift
    of the constraints), which shrinks with the step by design: the step check does not judge it.
    floor: a change of the outcome no larger than this is not judged by the step check (0: none), for an
    outcome of a fixed scale that may hardly leave zero (a share of the steps).
    """

    name: str
    kind: str  # "scalar" or "series"
    description: str
    unit: str
    fn: Callable
    stream: Stream
    diagnostics: bool = False
    smooth: bool = True
    bind: Callable | None = None
    measures_error: bool = False
    floor: float = 0.0


def _quantity(system, spec: str, observables=None):
    """(row value fn(r, s, p), trajectory fn(tr, s, p) -> (T,)) of a coordinate or a model observable."""
    if observables and spec in observables:
        fn = observables[spec]
        return (lambda r, s, p: fn(r.q, p)), (lambda tr, s, p: jax.vmap(lambda q: fn(q, p))(tr.q))
    i = _coord_index(system, spec, observables)
    return (lambda r, s, p: r.q[i]), (lambda tr, s, p: tr.q[:, i])


def _name_or_index(spec: str, names: tuple) -> int | None:
    """The index of ``spec`` among ``names``, else ``spec`` read as an integer (None if it is neither)."""
    if spec in names:
        return names.index(spec)
    try:
        return int(spec)
    except ValueError:
        return None


def _coord_index(system, spec: str, observables=None) -> int:
    names = tuple(system.names)
    i = _name_or_index(spec, names)
    if i is None:
        raise ValueError(
            f"unknown coordinate {spec!r}; coordinates: {list(names) or list(range(system.n_dof))}"
            + (f", observables: {sorted(observables)}" if observables else "")
        )
    if not 0 <= i < system.n_dof:
        raise ValueError(f"coordinate index {i} outside [0, {system.n_dof})")
    return i


def _velocity_index(system, spec: str) -> tuple[int, str]:
    """(index in u, unit of the velocity's coordinate) of the velocity named by ``spec``: a coordinate when
    q̇ = u, a velocity name (``system.velocity_names``) when the system has a velocity map."""
    from jaxcontact.units import coordinate_unit, velocity_unit

    if not system.kinematic_map:
        return _coord_index(system, spec), coordinate_unit(spec)
    names = tuple(system.velocity_names)
    if spec not in names:
        raise ValueError(
            f"peak_accel:{spec}: this system's velocities are not its coordinates' rates (spatial "
            f"bodies); name a velocity: {list(names)}"
        )
    return names.index(spec), velocity_unit(spec).removesuffix("/s")


def _gaps(traj, system, params):
    return jax.vmap(lambda q, t: system.gaps(q, t, params))(traj.q, traj.t)


def _fold(op, value, finish=lambda c: c) -> Stream:
    """A stream that combines ``value(row)`` over every row with the binary ``op`` (max, min, last)."""
    return Stream(lambda r, s, p: value(r, s, p), lambda c, r, s, p: op(c, value(r, s, p)), finish)


def _last(c, x):
    return x


def _impacts_stream(threshold) -> Stream:
    """Onsets counted row by row (``impact_count``): carry (count, previous row's contact flags)."""

    def init(r, s, p):
        on = r.impulse_normal > threshold
        return jnp.sum(on).astype(r.q.dtype), on

    def update(c, r, s, p):
        on = r.impulse_normal > threshold
        return c[0] + jnp.sum(on & ~c[1]).astype(r.q.dtype), on

    return Stream(init, update, lambda c: c[0])


def _rest_stream(tol) -> Stream:
    """``rest_time`` row by row: carry (answer so far, previous row moving). A moving row sets the
    answer to its own time (the end, if it is the last row) and the next row to the next row's time."""

    def moving(r):
        return jnp.max(jnp.abs(r.u)) > tol

    def update(c, r, s, p):
        mv = moving(r)
        return jnp.where(c[1] | mv, r.t, c[0]), mv

    return Stream(lambda r, s, p: (r.t, moving(r)), update, lambda c: c[0])


def _rebound_stream(i, threshold) -> Stream:
    """``max_after_first_impact`` row by row: carry (impact seen, max of x since the first impact)."""

    def fold(seen, m, r):
        seen = seen | jnp.any(r.impulse_normal > threshold)
        return seen, jnp.where(seen, jnp.maximum(m, r.q[i]), m)

    return Stream(
        lambda r, s, p: fold(jnp.zeros((), bool), jnp.full((), -jnp.inf, r.q.dtype), r),
        lambda c, r, s, p: fold(c[0], c[1], r),
        lambda c: jnp.where(c[0], c[1], jnp.nan),
    )


def _first_time_stream(reached) -> Stream:
    """``first_time`` row by row: carry (reached yet, answer so far) — the row's own time until it is reached,
    so an unreached level ends at the last row's time."""

    def update(c, r, s, p):
        return c[0] | reached(r, s, p), jnp.where(c[0], c[1], r.t)

    return Stream(lambda r, s, p: (reached(r, s, p), r.t), update, lambda c: c[1])


def _level(name: str, arg: str):
    """(coordinate spec, level) of ``<coord>=<level>``; ValueError naming the outcome otherwise."""
    spec, eq, level = arg.rpartition("=")
    try:
        value = float(level)
    except ValueError:
        value = None
    if not eq or not spec or value is None or not np.isfinite(value):
        raise ValueError(
            f"outcome {name!r} must read first_above:<coord>=<level> (or first_below:) with a finite "
            f"number as the level"
        )
    return spec, value


def _row_gaps(r, s, p):
    return s.gaps(r.q, r.t, p)


def _row_phi(r, s, p):
    return constraint_residuals(s, r.q, r.u, r.t, p)


# The step check's floor for a free-flight share: a thousandth of the run's steps. A joint that hardly opens
# has a share of a few impacts' durations, which moves with its count of impacts at any step.
FREE_FLIGHT_FLOOR = 1e-3
SCALARS = ("peak_impulse", "impacts", "rest_time", "max_penetration", "max_phi", "max_phi_dot")
SERIES_FIELDS = ("gap", "energy", "phi", "speed")


def _peak_accel_stream(value, dt) -> Stream:
    """max |Δx/dt| of consecutive rows' values: carry (previous value, max so far)."""
    return Stream(
        lambda r, s, p: (value(r, s, p), jnp.zeros((), r.q.dtype)),
        lambda c, r, s, p: (value(r, s, p), jnp.maximum(c[1], jnp.abs(value(r, s, p) - c[0]) / dt)),
        lambda c: c[1],
    )


def _free_flight_stream(threshold, pick) -> Stream:
    """Steps without an impulse above ``threshold`` in the ``pick``-ed contacts (:func:`_picked_contacts`) over
    the steps: carry (free steps, steps)."""

    def update(c, r, s, p):
        free = jnp.all(pick(r.impulse_normal) <= threshold).astype(r.q.dtype)
        return c[0] + free, c[1] + 1.0

    return Stream(
        lambda r, s, p: (jnp.zeros((), r.q.dtype), jnp.zeros((), r.q.dtype)),
        update,
        lambda c: c[0] / jnp.maximum(c[1], 1.0),
    )


def _contact_index(system, name: str, spec: str) -> int:
    """Index in the normal impulses of the contact named (or numbered) ``spec``; ValueError naming the outcome."""
    if system.gaps is None and system.compliant_gaps is None:
        raise ValueError(f"outcome {name!r} needs a system with contacts")
    names = tuple(system.contact_names)
    i = _name_or_index(spec, names)
    if i is None:
        raise ValueError(
            f"outcome {name!r}: unknown contact {spec!r}; "
            + (f"contacts: {list(names)} (or their index)" if names else "this system names no contacts: give an index")
        )
    if i < 0 or (names and i >= len(names)):
        raise ValueError(f"outcome {name!r}: contact index {i} outside [0, {len(names) or 'number of contacts'})")
    return i


def _picked_contacts(system, name: str, arg: str):
    """The normal impulses (…, k) an outcome reads: every contact's, or (``arg``) the one contact's named or
    numbered by it, as (…, 1)."""
    if not arg:
        return lambda P: P
    j = _contact_index(system, name, arg)
    return lambda P: P[..., j : j + 1]


# The outcomes that compare a path with a reference model's (``<kind>:<q1>[,<q2>…]@<model>``).
PATH_OUTCOMES = ("path_rms", "path_max")


def reference_names(outcomes) -> set[str]:
    """The reference models the path outcomes among ``outcomes`` (names) compare with."""
    return {o.rpartition("@")[2].strip() for o in outcomes if o.partition(":")[0] in PATH_OUTCOMES and "@" in o}


def _path_spec(name: str, kind: str, arg: str) -> tuple[tuple[str, ...], str]:
    """(quantities, reference model) of ``<q1>[,<q2>…]@<model>``; ValueError naming the outcome otherwise."""
    quantities, at, ref = arg.rpartition("@")
    names = tuple(q.strip() for q in quantities.split(",")) if quantities else ()
    if not at or not ref.strip() or not names or not all(names) or len(set(names)) != len(names):
        raise ValueError(
            f"outcome {name!r} must read {kind}:<q1>[,<q2>…]@<model>: distinct coordinates or observables, "
            f"then @ and the reference model (e.g. {kind}:tip_x,tip_y@flexible-arm-6-ideal)"
        )
    return names, ref.strip()


def _reference_builder(name: str, ref: str, references):
    """The builder ``(**overrides) -> Model`` of the reference ``ref`` among the ``references`` a study was given
    (a study takes Model objects: the caller resolves the names, :attr:`jaxcontact.models.Model.references`)."""
    builder = (references or {}).get(ref)
    if builder is None:
        known = sorted(references or {})
        raise ValueError(
            f"outcome {name!r}: reference model {ref!r} unknown here: "
            + (f"this model's references are {known}" if known else "the model declares no reference models")
            + " (the command line resolves any registered name or FILE.py:FUNCTION)"
        )
    return builder


def _fixed_shared(name: str, ref, params) -> tuple:
    """The run's values of the parameters the reference shares with it where they differ from the reference's
    own, as a hashable key ((name, shape, values), …); a shared parameter that varies between samples (a
    traced value) is refused: the reference is simulated once, at fixed parameters."""
    fixed = []
    for k, nominal in ref.params.items():
        if k not in params:
            continue
        v = params[k]
        if isinstance(v, jax.core.Tracer):
            raise ValueError(
                f"outcome {name!r}: the reference {ref.label!r} uses the parameter {k!r}, which varies between "
                f"samples here (or is traced): the reference path is simulated once, at fixed parameters; "
                f"fix {k} or compute this outcome outside jit"
            )
        v = np.asarray(v)
        if not np.array_equal(v, np.asarray(nominal)):
            fixed.append((k, v.shape, tuple(v.ravel().tolist())))
    return tuple(fixed)


@functools.lru_cache(maxsize=8)
def _reference_path(ref, build, quantities, fixed, dt, n_steps, scheme, dtype) -> np.ndarray:
    """(n_steps + 1, len(quantities)) path of the reference model at every step (t = 0 included), simulated
    once for each time grid, scheme and fixed parameters, whichever outcomes read it (eagerly, even when
    called while a study's program is being traced: the path then enters that program as a constant)."""
    overrides = {k: np.asarray(values).reshape(shape) for k, shape, values in fixed}
    with jax.ensure_compile_time_eval():
        m = build(**overrides)
        kept = [outcome(f"series:{q}", m.system, observables=m.observables) for q in quantities]
        q0, u0 = m.initial_state(m.params)
        q0, u0 = jnp.asarray(q0, dtype), jnp.asarray(u0, dtype)
        run = functools.partial(simulate_outcomes, m.system, dt=dt, n_steps=n_steps, outcomes=kept, scheme=scheme)
        got = jax.jit(run)(m.params, q0, u0)
        if not (bool(got["converged"]) and bool(got["state_finite"])):
            raise ValueError(f"the reference {ref!r} did not converge on the grid dt = {dt:g} s, {n_steps} steps")
        return np.stack([np.asarray(got[o.name]) for o in kept], axis=-1)


def _path_outcome(name: str, kind: str, arg: str, system, observables, dt, references) -> Outcome:
    """``path_rms`` / ``path_max``: the distance between this run's path of the named quantities and the
    reference model's on the same grid (see the module docstring)."""
    quantities, ref_name = _path_spec(name, kind, arg)
    if dt is None:
        raise ValueError(f"outcome {name} needs the time step dt (its reference is simulated on the run's grid)")
    build = _reference_builder(name, ref_name, references)
    try:
        ref = build()
    except ValueError as e:
        raise ValueError(f"outcome {name!r}: reference model: {e}") from None
    values = []
    for q in quantities:
        try:
            _quantity(ref.system, q, ref.observables)
        except ValueError as e:
            raise ValueError(f"outcome {name!r}: the reference {ref_name!r} has no {q!r}: {e}") from None
        values.append(_quantity(system, q, observables))
    h = float(dt)

    def path(n_steps, scheme, p, dtype):
        key = _fixed_shared(name, ref, p)
        try:
            return _reference_path(ref_name, build, quantities, key, h, int(n_steps), scheme, jnp.dtype(dtype).name)
        except ValueError as e:
            raise ValueError(f"outcome {name!r}: {e}") from None

    def reduce(d):  # d: (T,) distances on the grid
        return jnp.sqrt(jnp.mean(d**2)) if kind == "path_rms" else jnp.max(d)

    def fn_with(scheme):
        def fn(tr, s, p):
            x = jnp.stack([series_of(tr, s, p) for _, series_of in values], axis=-1)
            r = jnp.asarray(path(tr.q.shape[0] - 1, scheme, p, tr.q.dtype), x.dtype)
            return reduce(jnp.linalg.norm(x - r, axis=-1))

        return fn

    def stream_with(r_path):
        def dist(i, r, s, p):
            x = jnp.stack([value(r, s, p) for value, _ in values])
            return jnp.linalg.norm(x - jnp.asarray(r_path, x.dtype)[i])

        def init(r, s, p):
            d = dist(0, r, s, p)
            return jnp.ones((), jnp.int32), d**2, d

        def update(c, r, s, p):
            d = dist(c[0], r, s, p)
            return c[0] + 1, c[1] + d**2, jnp.maximum(c[2], d)

        def finish(c):
            return jnp.sqrt(c[1] / c[0]) if kind == "path_rms" else c[2]

        return Stream(init, update, finish)

    def unbound(*_):
        raise ValueError(f"outcome {name!r} must be bound to a time grid first (Outcome.bind; simulate_outcomes does)")

    from jaxcontact.units import coordinate_unit

    what = "RMS" if kind == "path_rms" else "max"
    units = {coordinate_unit(q) for q in quantities}
    described = dict(
        description=f"{what} over time of the distance of ({', '.join(quantities)}) from {ref_name}'s",
        unit=units.pop() if len(units) == 1 else "",  # a distance over mixed units has none
    )

    def bind(dt_, n_steps, scheme, p, dtype):
        if not np.isclose(float(dt_), h, rtol=1e-12, atol=0.0):
            raise ValueError(f"outcome {name!r} was made for dt = {h:g} s, not {float(dt_):g} s")
        r_path = path(n_steps, scheme, p, dtype)
        return Outcome(name, "scalar", fn=fn_with(scheme), stream=stream_with(r_path), **described)

    return Outcome(
        name, "scalar", fn=fn_with(MoreauJean()), stream=Stream(unbound, unbound, unbound), bind=bind, **described
    )


def outcome(
    name: str,
    system,
    *,
    save_every: int = 1,
    impact_threshold: float = 1e-9,
    rest_tol: float = 1e-3,
    dt: float | None = None,
    observables: dict | None = None,
    references: dict | None = None,
) -> Outcome:
    """The outcome called ``name`` (see the module docstring) for ``system``.

    impact_threshold [N·s] and rest_tol [coordinate units/s] set the impact and rest criteria;
    ``dt`` (the step) is needed by peak_force and peak_accel; ``observables`` are the model's
    named quantities; ``references`` the models path outcomes may compare with (name -> builder
    ``(**overrides) -> Model``, :attr:`jaxcontact.models.Model.references`). Raises ValueError with the list
    of names for an unknown outcome.
    """
    k = int(save_every)
    has_contacts = system.gaps is not None
    has_phi = system.constraints is not None
    if name == "peak_impulse":
        return Outcome(
            name,
            "scalar",
            "largest normal impulse in one step",
            "N·s",
            lambda tr, s, p: peak_impulse(tr.impulse_normal),
            _fold(jnp.maximum, lambda r, s, p: jnp.max(r.impulse_normal, initial=0.0)),
        )
    if name == "impacts":
        return Outcome(
            name,
            "scalar",
            f"impacts (impulse onsets above {impact_threshold:g} N·s)",
            "",
            lambda tr, s, p: impact_count(tr.impulse_normal, impact_threshold).astype(tr.q.dtype),
            _impacts_stream(impact_threshold),
            smooth=False,
        )
    if name == "rest_time":
        return Outcome(
            name,
            "scalar",
            f"time to rest (‖u‖∞ ≤ {rest_tol:g} to the end; t_final if never)",
            "s",
            lambda tr, s, p: rest_time(tr.t, tr.u, rest_tol),
            _rest_stream(rest_tol),
            smooth=False,
        )
    if name == "max_penetration":
        if not has_contacts:
            raise ValueError("outcome max_penetration needs a system with contacts")
        return Outcome(
            name,
            "scalar",
            "max penetration max(0, −g_N)",
            "m",
            lambda tr, s, p: max_penetration(_gaps(tr, s, p)),
            _fold(
                jnp.minimum,
                lambda r, s, p: jnp.min(_row_gaps(r, s, p), initial=jnp.inf),
                lambda c: jnp.maximum(0.0, -c),
            ),
            measures_error=True,
        )
    if name in ("max_phi", "max_phi_dot"):
        if not has_phi:
            raise ValueError(f"outcome {name} needs a system with bilateral constraints")
        field = "phi" if name == "max_phi" else "phi_dot"
        return Outcome(
            name,
            "scalar",
            f"max ‖{'Φ' if field == 'phi' else 'Φ̇'}‖₂ over time",
            "",
            lambda tr, s, p: jnp.max(getattr(tr.diagnostics, field)),
            _fold(jnp.maximum, lambda r, s, p: _row_phi(r, s, p)[("phi", "phi_dot").index(field)]),
            True,
            measures_error=True,
        )
    kind, _, arg = name.partition(":")
    if name == "free_flight" or (kind == "free_flight" and arg):
        pick = _picked_contacts(system, name, arg)
        what = f"with {arg} open (its impulse" if arg else "without contact (impulses"
        return Outcome(
            name,
            "scalar",
            f"fraction of steps {what} ≤ {impact_threshold:g} N·s)",
            "1",  # a fraction: dimensionless (not a coordinate's unit guessed from the contact's name)
            lambda tr, s, p: jnp.mean(
                jnp.all(pick(tr.impulse_normal[1:]) <= impact_threshold, axis=-1).astype(tr.q.dtype)
            ),
            _free_flight_stream(impact_threshold, pick),
            smooth=False,
            floor=FREE_FLIGHT_FLOOR,
        )
    if kind in PATH_OUTCOMES and arg:
        return _path_outcome(name, kind, arg, system, observables, dt, references)
    if kind in ("peak_force", "peak_accel") and (arg or kind == "peak_force"):
        if dt is None:
            raise ValueError(f"outcome {name} needs the time step dt")
        h = float(dt)
    if name == "peak_force" or (kind == "peak_force" and arg):
        pick = _picked_contacts(system, name, arg)
        return Outcome(
            name,
            "scalar",
            f"largest force of {arg} (its largest normal impulse of a step / dt)"
            if arg
            else "largest contact force (largest normal impulse of a step / dt)",
            "N",
            lambda tr, s, p: peak_impulse(pick(tr.impulse_normal)) / h,
            _fold(jnp.maximum, lambda r, s, p: jnp.max(pick(r.impulse_normal), initial=0.0) / h),
        )
    if kind == "peak_accel" and arg:
        i, unit = _velocity_index(system, arg)
        return Outcome(
            name,
            "scalar",
            f"peak |acceleration| of {arg} (Δu/Δt between steps)",
            f"{unit}/s²",
            lambda tr, s, p: jnp.max(jnp.abs(jnp.diff(tr.u[:, i]) / h), initial=0.0),
            _peak_accel_stream(lambda r, s, p: r.u[i], h),
        )
    if kind in ("final", "max", "min") and arg:
        value, series_of = _quantity(system, arg, observables)
        red = {"final": lambda x: x[-1], "max": jnp.max, "min": jnp.min}[kind]
        op = {"final": _last, "max": jnp.maximum, "min": jnp.minimum}[kind]
        return Outcome(
            name,
            "scalar",
            f"{kind} of {arg} over the run",
            "",
            lambda tr, s, p: red(series_of(tr, s, p)),
            _fold(op, value),
        )
    if kind == "rebound" and arg:
        i = _coord_index(system, arg)
        return Outcome(
            name,
            "scalar",
            f"max of {arg} after the first impact",
            "",
            lambda tr, s, p: max_after_first_impact(tr.q[:, i], tr.impulse_normal, impact_threshold),
            _rebound_stream(i, impact_threshold),
        )
    if kind in ("first_above", "first_below") and arg:
        spec, level = _level(name, arg)
        value, series_of = _quantity(system, spec, observables)
        cmp = jnp.greater_equal if kind == "first_above" else jnp.less_equal
        word = "≥" if kind == "first_above" else "≤"
        return Outcome(
            name,
            "scalar",
            f"first time {spec} {word} {level:g} (t_final if never)",
            "s",
            lambda tr, s, p: first_time(tr.t, cmp(series_of(tr, s, p), level)),
            _first_time_stream(lambda r, s, p: cmp(value(r, s, p), level)),
            smooth=False,
        )
    if kind == "series" and arg:
        if arg.startswith("gap"):
            if not has_contacts:
                raise ValueError(f"outcome {name} needs a system with contacts")
            j = int(arg[3:] or 0)
            return Outcome(
                name,
                "series",
                f"gap of contact {j}",
                "m",
                lambda tr, s, p: keep_every(_gaps(tr, s, p)[:, j], k),
                Stream(value=lambda r, s, p: _row_gaps(r, s, p)[j]),
            )
        if arg in ("energy", "phi"):
            return Outcome(
                name,
                "series",
                {"energy": "energy", "phi": "‖Φ‖₂"}[arg],
                "J" if arg == "energy" else "",
                lambda tr, s, p: keep_every(getattr(tr.diagnostics, arg), k),
                Stream(value=lambda r, s, p: energy(s, r.q, r.u, r.t, p) if arg == "energy" else _row_phi(r, s, p)[0]),
                True,
            )
        if arg == "speed":
            return Outcome(
                name,
                "series",
                "‖u‖∞",
                "",
                lambda tr, s, p: keep_every(jnp.max(jnp.abs(tr.u), axis=-1), k),
                Stream(value=lambda r, s, p: jnp.max(jnp.abs(r.u))),
            )
        value, series_of = _quantity(system, arg, observables)
        return Outcome(
            name,
            "series",
            f"{arg} over time",
            "",
            lambda tr, s, p: keep_every(series_of(tr, s, p), k),
            Stream(value=value),
        )
    raise ValueError(
        f"unknown outcome {name!r}; scalars: {list(SCALARS)} or final:/max:/min:/rebound:<coord>, "
        f"first_above:/first_below:<coord>=<level>, peak_force/free_flight[:<contact>], "
        f"path_rms:/path_max:<q1>[,<q2>…]@<model>; "
        f"series: series:<coord> or series:{{{','.join(SERIES_FIELDS)}}}"
    )


def outcomes_fold(system, p, outcomes) -> Fold:
    """The :class:`jaxcontact.simulate.Fold` of a study: scalar outcomes folded step by step (their
    ``stream``), series kept at every save, plus ``converged`` (every step's solve converged with a
    finite velocity) and ``state_finite`` (q and u finite at every row)."""
    scalars = [o for o in outcomes if o.kind != "series"]
    series = [o for o in outcomes if o.kind == "series"]

    def init(s0, info):
        row0 = Row(s0.t, s0.q, s0.u, jnp.zeros(info.P_N.shape, s0.q.dtype))
        ok0 = jnp.all(jnp.isfinite(s0.q)) & jnp.all(jnp.isfinite(s0.u))
        return tuple(o.stream.init(row0, system, p) for o in scalars), jnp.ones((), bool), ok0

    def update(acc, s, info):
        streams, conv, finite = acc
        row = Row(s.t, s.q, s.u, info.P_N)
        streams = tuple(o.stream.update(c, row, system, p) for o, c in zip(scalars, streams))
        finite = finite & jnp.all(jnp.isfinite(s.q)) & jnp.all(jnp.isfinite(s.u))
        return streams, conv & info.converged, finite

    def save(acc, s):
        return acc, kept(s)

    def kept(s):  # series read the state only (no series outcome reads impulses)
        row = Row(s.t, s.q, s.u, None)
        return tuple(o.stream.value(row, system, p) for o in series)

    def finish(s0, acc, rows):
        streams, conv, finite = acc
        out = {o.name: o.stream.finish(c) for o, c in zip(scalars, streams)}
        out.update({o.name: jnp.concatenate([x0[None], x]) for o, x0, x in zip(series, kept(s0), rows)})
        out["converged"] = conv
        out["state_finite"] = finite
        return out

    return Fold(init, update, save), finish


def simulate_outcomes(
    system, params, q0, u0, *, dt, n_steps: int, outcomes, scheme: Scheme = MoreauJean(), save_every: int = 1, t0=0.0
) -> dict:
    """Simulate ONE sample and reduce it to ``outcomes`` inside the scan (their ``stream`` forms).

    The same steps as :func:`jaxcontact.simulate.simulate` (the one time loop,
    :func:`jaxcontact.simulate.fold_steps`) and the same numbers as
    ``{o.name: o.fn(simulate(...), system, params)}`` with a per-step trajectory, without
    storing it: scalar outcomes are carried through the scan, series are kept every
    ``save_every`` rows (row 0 = the initial state, as ``keep_every``; steps after the last
    kept row are still folded into the scalars). Also returns ``converged`` and
    ``state_finite``. The scheme's own per-step diagnostics are switched off: a stream that
    needs ‖Φ‖ or the energy computes it from the row's state. Works with every scheme; pure
    and unbatched (vmap it); the caller checks the scheme and validates the inputs.
    """
    scheme = scheme.without_diagnostics()
    q0 = jnp.asarray(q0)
    dtype = q0.dtype
    u0 = jnp.asarray(u0, dtype)
    p = jax.tree.map(lambda x: jnp.asarray(x, dtype) if jnp.issubdtype(jnp.result_type(x), jnp.floating) else x, params)
    # The unconverted params: a parameter not sampled is then still a concrete value, which a reference path reads.
    outcomes = [o.bind(dt, n_steps, scheme, params, dtype) if o.bind is not None else o for o in outcomes]
    fold, finish = outcomes_fold(system, p, outcomes)
    s0, acc, rows = fold_steps(
        system,
        scheme,
        p,
        q0,
        u0,
        jnp.asarray(dt, dtype),
        jnp.asarray(t0, dtype),
        n_steps=int(n_steps),
        save_every=int(save_every),
        fold=fold,
    )
    return finish(s0, acc, rows)
