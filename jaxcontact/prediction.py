"""Predict measured tosses from their first samples and score the prediction.

Each experiment starts from the ballistic fit of its first samples (:mod:`jaxcontact.toss_states`) and is
simulated with given parameters, ``substeps`` steps per measurement sample, in batches (``vmap`` inside
:func:`jaxcontact.simulate.simulate`), by default with the scheme a fit over experiments uses
(:func:`measured_scheme`), so a fit and the prediction of held-out experiments see the same model.

Metrics per experiment, over its valid samples:

- position error: mean of ‖p_sim − p_meas‖ divided by the body's width (2 × its mean half extent), the
  measure of the ContactNets authors;
- orientation error: mean rotation angle between q_sim and q_meas in degrees (q and −q alike);
- penetration: the deepest the simulated box's lowest vertex goes below the table at the sample times.

Experiments differ in length, and ``n_steps`` is a compiled constant, so a batch runs in segments of
``segment`` samples, each continuing from the last state of the one before (``start="continue"``), until
its longest experiment is covered: one compiled program for any mix of lengths. A segment's first step is
warm-started from zero impulses instead of the previous step's; the contact solve converges to the same
impulses either way, within its tolerance.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.experiments import Experiments, uniform_step
from jaxcontact.initial import check_state
from jaxcontact.simulate import simulate
from jaxcontact.spatial import rotations
from jaxcontact.studies.runner import SplitProgram
from jaxcontact.toss_states import ballistic_start, lowest_vertex

REQUIRED = ("position", "quaternion_wxyz")
# The table's height in the measurement's frame (m): a parameter of the measurement, not of the model.
OFFSET = "table_offset"


def measured_scheme(model):
    """The scheme measured experiments are fitted and predicted with: Moreau–Jean with impacts located inside
    the step, nothing projected, the cone solve swept to its tolerance (forward runs; its gradients implicit).
    :mod:`jaxcontact.studies.experiments_fit` says why each."""
    from jaxcontact.commands.identify import identify_default
    from jaxcontact.stepping import MoreauJean

    return identify_default(MoreauJean(), model, projection=False).for_forward_runs()


class Prediction(NamedTuple):
    """Per experiment (N,): position_error (share of the width), orientation_error_deg, penetration (m),
    fit_samples (samples the start's fit used); q (N, T, 7) the simulated coordinates at the sample times
    (NaN past each length)."""

    position_error: np.ndarray
    orientation_error_deg: np.ndarray
    penetration: np.ndarray
    fit_samples: np.ndarray
    q: np.ndarray


def starts(model, experiments: Experiments, table_offset: float = 0.0):
    """q0 (N, 7), u0 (N, 6) and the samples each fit used: the ballistic fit of every experiment, in the
    measurement's frame; ValueError when a start puts the box into the table (at height ``table_offset``; a box
    of another size than the measured one)."""
    missing = [k for k in REQUIRED if k not in experiments.measured]
    if missing:
        raise ValueError(
            f"the experiments hold no {', '.join(missing)}; predicting {model.name} needs measured "
            f"{' and '.join(REQUIRED)}"
        )
    fits = [
        ballistic_start(
            model,
            experiments.t[i, :n],
            experiments.measured["position"][i, :n],
            experiments.measured["quaternion_wxyz"][i, :n],
        )
        for i, n in enumerate(experiments.length)
    ]
    q0 = np.stack([f.q0 for f in fits])
    heights = lowest_vertex(model, q0) - table_offset
    if heights.min() < 0:
        i = int(np.argmin(heights))
        size = ", ".join(f"{k} = {float(model.params[k]):g}" for k in ("half_x", "half_y", "half_z"))
        raise ValueError(
            f"experiment {i} would start with a vertex {-1e3 * heights[i]:.1f} mm below the table with the box's "
            f"{size} m; give the measured body's size (--set half_x=…)"
        )
    return q0, np.stack([f.u0 for f in fits]), np.array([f.samples for f in fits])


def simulate_experiments(
    model,
    q0,
    u0,
    length,
    sample_dt: float,
    *,
    substeps: int = 10,
    batch: int = 16,
    segment: int = 64,
    scheme=None,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Simulated coordinates (N, max(length), n_dof) at the sample times, NaN past each length.

    Batches of ``batch`` experiments of similar length (sorted), the last one padded by repeating an
    experiment, split over the devices JAX sees; ``progress(done, total)`` after every batch.
    """
    scheme = measured_scheme(model) if scheme is None else scheme
    n, width = len(length), int(np.max(length))
    out = np.full((n, width, q0.shape[1]), np.nan)
    order = np.argsort(length, kind="stable")
    run = _segment_program(model.system, scheme, substeps, segment, float(sample_dt))
    wide = -(-batch // run.devices) * run.devices  # the batch, padded to a multiple of the devices sharing it
    params = jax.tree.map(lambda x: np.broadcast_to(np.asarray(x), (wide,) + np.shape(x)), model.params)
    for first in range(0, n, batch):
        idx = order[first : first + batch]
        padded = np.concatenate([idx, np.full(wide - idx.size, idx[0])])
        q, u = q0[padded], u0[padded]
        check_state(model.system, params, q, None, 0.0)
        rows, done = [q[:, None]], 1
        while done < int(np.max(length[idx])):
            saved, q, u = run(params, q, u, np.asarray((done - 1) * sample_dt))
            rows.append(saved)
            done += segment
        sim = np.concatenate(rows, axis=1)
        for k, i in enumerate(idx):
            out[i, : length[i]] = sim[k, : length[i]]
        if progress is not None:
            progress(min(first + batch, n), n)
    return out


@functools.lru_cache(maxsize=8)
def _segment_program(system, scheme, substeps, segment, sample_dt):
    """(params, q, u of a batch, t0) → q at the next ``segment`` sample times, the last q and u: a segment of
    every experiment of the batch, each device running its share; cached, so predictions with the same settings
    compile once."""

    def run(params, q, u, t0):
        traj = simulate(
            system,
            params,
            q,
            u,
            dt=sample_dt / substeps,
            n_steps=segment * substeps,
            t0=t0,
            save_every=substeps,
            start="continue",
            scheme=scheme,
        )
        return traj.q[:, 1:], traj.q[:, -1], traj.u[:, -1]

    return SplitProgram(run, (True, True, True, False), desc="the prediction")


def metrics(model, experiments: Experiments, q_sim, table_offset: float = 0.0) -> tuple[np.ndarray, ...]:
    """Position error (share of the width), orientation error (degrees) and penetration (m) per experiment;
    q_sim in the measurement's frame, whose table is at height ``table_offset``."""
    mask = experiments.mask
    width = 2.0 * float(np.mean([model.params[k] for k in ("half_x", "half_y", "half_z")]))
    p_meas, q_meas = experiments.measured["position"], experiments.measured["quaternion_wxyz"]
    dist = np.linalg.norm(q_sim[..., :3] - p_meas, axis=-1) / width
    flat_sim = np.where(mask[..., None], q_sim[..., 3:], [1.0, 0, 0, 0]).reshape(-1, 4)
    flat_meas = np.where(mask[..., None], q_meas, [1.0, 0, 0, 0]).reshape(-1, 4)
    angle = np.degrees(np.asarray(jax.vmap(rotations.angle_between)(jnp.asarray(flat_sim), jnp.asarray(flat_meas))))
    angle = angle.reshape(mask.shape)
    count = mask.sum(axis=1)
    heights = lowest_vertex(model, np.where(mask[..., None], q_sim, q_sim[:, :1]).reshape(-1, q_sim.shape[-1]))
    heights = heights - table_offset
    depth = np.maximum(0.0, -heights.reshape(mask.shape))
    return (
        np.where(mask, dist, 0.0).sum(axis=1) / count,
        np.where(mask, angle, 0.0).sum(axis=1) / count,
        np.where(mask, depth, 0.0).max(axis=1),
    )


def predict(
    model,
    experiments: Experiments,
    *,
    substeps: int = 10,
    batch: int = 16,
    progress=None,
    scheme=None,
    table_offset: float = 0.0,
):
    """Fit every experiment's start, simulate it over its length and score it: a :class:`Prediction`.

    ``table_offset``: the table's height in the measurement's frame (m). Gravity is uniform, so the model's
    table at z = 0 serves: starts are lowered by it and the simulated poses raised by it."""
    q0, u0, used = starts(model, experiments, table_offset)
    lift = np.array([0.0, 0.0, table_offset, 0.0, 0.0, 0.0, 0.0])
    q_sim = (
        simulate_experiments(
            model,
            q0 - lift,
            u0,
            experiments.length,
            uniform_step(experiments),
            substeps=substeps,
            batch=min(batch, experiments.n),
            progress=progress,
            scheme=scheme,
        )
        + lift
    )
    pos, ang, pen = metrics(model, experiments, q_sim, table_offset)
    return Prediction(pos, ang, pen, used, q_sim)


class Bands(NamedTuple):
    """Prediction bands of the centre position from parameter draws: lo, hi (N, T, 3) the ``level`` band per
    sample and axis (NaN past each length), coverage (N,) the share of an experiment's valid samples whose
    measured centre lies inside the band on all three axes, draws the parameter sets simulated."""

    lo: np.ndarray
    hi: np.ndarray
    coverage: np.ndarray
    level: float
    draws: list


def parameter_draws(estimates: dict, covariance, bounds: dict, count: int, seed: int = 0) -> list[dict]:
    """``count`` parameter sets from the normal law of a fit (mean ``estimates``, ``covariance`` in their
    order), each value clipped into its bounds (a restitution stays in [0, 1])."""
    names = list(estimates)
    cov = np.asarray(covariance, float)
    if cov.shape != (len(names), len(names)) or not np.isfinite(cov).all():
        raise ValueError(
            f"the fit's covariance must be a finite {len(names)} x {len(names)} matrix for {names}; "
            "a fit whose Hessian was not positive definite has none"
        )
    rng = np.random.default_rng(seed)
    values = rng.multivariate_normal([estimates[k] for k in names], cov, size=count, method="eigh")
    lo = np.array([bounds[k][0] for k in names])
    hi = np.array([bounds[k][1] for k in names])
    return [dict(zip(names, map(float, row))) for row in np.clip(values, lo, hi)]


def prediction_bands(make_model, experiments: Experiments, draws: list[dict], *, level: float = 0.95, **kwargs):
    """Predict every experiment once per parameter set of ``draws`` (``make_model(values)`` builds the model;
    a ``table_offset`` entry is the table's height) and return their :class:`Bands`. ``kwargs`` go to
    :func:`predict`."""
    if not 0 < level < 1:
        raise ValueError(f"level = {level} must lie in (0, 1)")
    runs = []
    for values in draws:
        values = dict(values)
        offset = float(values.pop(OFFSET, 0.0))
        runs.append(predict(make_model(values), experiments, table_offset=offset, **kwargs).q[..., :3])
    runs = np.stack(runs)
    tail = 50.0 * (1.0 - level)
    lo, hi = np.percentile(runs, tail, axis=0), np.percentile(runs, 100.0 - tail, axis=0)
    meas = experiments.measured["position"]
    inside = np.all((meas >= lo) & (meas <= hi), axis=-1) & experiments.mask
    coverage = inside.sum(axis=1) / experiments.mask.sum(axis=1)
    return Bands(lo, hi, coverage, level, list(draws))


def summary(values) -> dict:
    """mean, median, 10th and 90th percentiles and max of one metric over experiments."""
    v = np.asarray(values, float)
    return {
        "mean": float(np.mean(v)),
        "median": float(np.median(v)),
        "p10": float(np.percentile(v, 10)),
        "p90": float(np.percentile(v, 90)),
        "max": float(np.max(v)),
    }


def progress_printer(stream, label: str = "simulated") -> Callable[[int, int], None]:
    """A ``progress(done, total)`` that prints ``simulated done/total experiments, elapsed, left`` lines."""
    began = time.perf_counter()

    def show(done: int, total: int) -> None:
        elapsed = time.perf_counter() - began
        left = elapsed / done * (total - done)
        print(f"  {label} {done}/{total} experiments, {elapsed:.0f} s elapsed, about {left:.0f} s left", file=stream)
        stream.flush()

    return show
