"""Predict measured tosses from their first samples and score the prediction.

Each experiment starts from the ballistic fit of its first samples (:mod:`jaxcontact.toss_states`) and is
simulated with given parameters, ``substeps`` steps per measurement sample, in batches (``vmap`` inside
:func:`jaxcontact.simulate.simulate`). Metrics per experiment, over its valid samples:

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

import time
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.experiments import Experiments, uniform_step
from jaxcontact.simulate import simulate
from jaxcontact.spatial import rotations
from jaxcontact.toss_states import ballistic_start, lowest_vertex

REQUIRED = ("position", "quaternion_wxyz")


class Prediction(NamedTuple):
    """Per experiment (N,): position_error (share of the width), orientation_error_deg, penetration (m),
    fit_samples (samples the start's fit used); q (N, T, 7) the simulated coordinates at the sample times
    (NaN past each length)."""

    position_error: np.ndarray
    orientation_error_deg: np.ndarray
    penetration: np.ndarray
    fit_samples: np.ndarray
    q: np.ndarray


def starts(model, experiments: Experiments):
    """q0 (N, 7), u0 (N, 6) and the samples each fit used: the ballistic fit of every experiment; ValueError
    when a start puts the box into the table (a box of another size than the measured one)."""
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
    heights = lowest_vertex(model, q0)
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
    experiment; ``progress(done, total)`` after every batch.
    """
    kwargs = {} if scheme is None else {"scheme": scheme}
    n, width = len(length), int(np.max(length))
    out = np.full((n, width, q0.shape[1]), np.nan)
    order = np.argsort(length, kind="stable")
    params = jax.tree.map(lambda x: jnp.broadcast_to(x, (batch,) + jnp.shape(x)), model.params)
    for first in range(0, n, batch):
        idx = order[first : first + batch]
        padded = np.concatenate([idx, np.full(batch - idx.size, idx[0])])
        q, u = jnp.asarray(q0[padded]), jnp.asarray(u0[padded])
        rows, done = [np.asarray(q)[:, None]], 1
        while done < int(np.max(length[idx])):
            traj = simulate(
                model.system,
                params,
                q,
                u,
                dt=sample_dt / substeps,
                n_steps=segment * substeps,
                t0=(done - 1) * sample_dt,
                save_every=substeps,
                start="check" if done == 1 else "continue",
                **kwargs,
            )
            rows.append(np.asarray(traj.q[:, 1:]))
            q, u, done = traj.q[:, -1], traj.u[:, -1], done + segment
        sim = np.concatenate(rows, axis=1)
        for k, i in enumerate(idx):
            out[i, : length[i]] = sim[k, : length[i]]
        if progress is not None:
            progress(min(first + batch, n), n)
    return out


def metrics(model, experiments: Experiments, q_sim) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position error (share of the width), orientation error (degrees) and penetration (m) per experiment."""
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
    depth = np.maximum(0.0, -heights.reshape(mask.shape))
    return (
        np.where(mask, dist, 0.0).sum(axis=1) / count,
        np.where(mask, angle, 0.0).sum(axis=1) / count,
        np.where(mask, depth, 0.0).max(axis=1),
    )


def predict(model, experiments: Experiments, *, substeps: int = 10, batch: int = 16, progress=None, scheme=None):
    """Fit every experiment's start, simulate it over its length and score it: a :class:`Prediction`."""
    q0, u0, used = starts(model, experiments)
    q_sim = simulate_experiments(
        model,
        q0,
        u0,
        experiments.length,
        uniform_step(experiments),
        substeps=substeps,
        batch=min(batch, experiments.n),
        progress=progress,
        scheme=scheme,
    )
    pos, ang, pen = metrics(model, experiments, q_sim)
    return Prediction(pos, ang, pen, used, q_sim)


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
