"""A set of experiments of one model: per experiment its own time grid, named measurements and a mask.

Real users measure a part many times; each run (a toss, a drop) has its own length, its own initial
state and perhaps its own known inputs. :class:`Experiments` holds N of them padded to the longest,
T samples, with a validity mask, so a batched simulation or fit can treat them all in one array.

The npz layout (``read_experiments``; float64 unless said otherwise; N experiments, T ≥ longest):

=========================  ============  ==============================================================
key                        shape         meaning
=========================  ============  ==============================================================
``length``                 (N,) int      valid samples of each experiment (≥ 2); entries past it are
                                         ignored (NaN in the shared files)
``dt`` or ``t``            () or (N, T)  the sampling step in s (every experiment starts at t = 0), or
                                         each experiment's own times, strictly increasing while valid
a measured quantity        (N, T, d)     one or more of ``QUANTITIES`` (``position``, ``quaternion_wxyz``,
                                         ``velocity``, ``angular_velocity_body``, ``angular_velocity_world``),
                                         finite within each valid length; quaternions of unit norm
``input_<name>``           (N, ...)      optional known per-experiment input (a launch speed, a load)
anything else              () or (N,…)   kept as it is in ``info`` (an experiment id, a measured size)
=========================  ============  ==============================================================

The shared real cube tosses (``../shared/data/contactnets/cube_tosses.npz``: ``position``,
``quaternion_wxyz``, ``velocity``, ``angular_velocity_body``, ``length``, ``dt``, ``half_width``,
``toss_id``) read in this layout as they are.
"""

from __future__ import annotations

import os
import zipfile
from typing import NamedTuple

import numpy as np

# Measured quantities a file may hold, with their width d. Angular velocities say their frame in the
# name: the body frame is what spatial bodies' u holds, the world frame is what some trackers report.
QUANTITIES = {
    "position": 3,
    "quaternion_wxyz": 4,
    "velocity": 3,
    "angular_velocity_body": 3,
    "angular_velocity_world": 3,
}
# A tracker's quaternion is normalised to rounding; a norm this far from 1 is not a rotation.
UNIT_TOLERANCE = 1e-6


class Experiments(NamedTuple):
    """N experiments padded to T samples.

    t (N, T): times in s from each experiment's start (past ``length`` they continue the grid);
    mask (N, T) bool: valid samples; length (N,) int; measured: name → (N, T, d) (NaN past the length
    where the file had NaN); inputs: name → (N, ...) known per-experiment inputs; info: the file's other
    arrays (ids, a measured size), as they were.
    """

    t: np.ndarray
    mask: np.ndarray
    length: np.ndarray
    measured: dict
    inputs: dict
    info: dict

    @property
    def n(self) -> int:
        """Number of experiments."""
        return int(self.length.size)

    def select(self, index) -> Experiments:
        """The experiments at ``index`` (a slice, an int array or a boolean mask), the padding trimmed to
        their longest."""
        idx = np.arange(self.n)[index]
        idx = np.atleast_1d(idx)
        width = int(self.length[idx].max()) if idx.size else 0
        info = {k: (v[idx] if np.ndim(v) and np.shape(v)[0] == self.n else v) for k, v in self.info.items()}
        return Experiments(
            self.t[idx, :width],
            self.mask[idx, :width],
            self.length[idx],
            {k: v[idx, :width] for k, v in self.measured.items()},
            {k: v[idx] for k, v in self.inputs.items()},
            info,
        )


def parse_range(text: str, n: int, option: str = "--tosses") -> np.ndarray:
    """``"a:b"`` (Python slice, either end optional), ``"a:b:step"`` or ``"i,j,k"`` → indices into n
    experiments; ValueError naming the option for anything else or an index out of range."""
    text = text.strip()
    try:
        if ":" in text:
            parts = [int(p) if p.strip() else None for p in text.split(":")]
            if len(parts) > 3:
                raise ValueError
            outside = [p for p in parts[:2] if p is not None and not -n <= p <= n]
            if outside:
                raise IndexError(outside[0])
            idx = np.arange(n)[slice(*parts)]
        else:
            idx = np.asarray([int(p) for p in text.split(",")], int)
    except ValueError:
        raise ValueError(f"{option} {text!r}: expected START:STOP[:STEP] or I,J,K (integers)") from None
    except IndexError as e:
        raise ValueError(f"{option} {text!r}: {e} lies past the {n} experiments in the file") from None
    if idx.size == 0:
        raise ValueError(f"{option} {text!r} selects no experiment of the {n} in the file")
    if idx.min() < -n or idx.max() >= n:
        raise ValueError(f"{option} {text!r}: indices must lie in 0..{n - 1} (the file has {n} experiments)")
    return np.mod(idx, n)


def _load(path: str, opt: str) -> dict:
    if not os.path.exists(path):
        raise ValueError(f"{opt}: no such file")
    if os.path.isdir(path):
        raise ValueError(f"{opt} is a folder; give the experiments' npz file")
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, AttributeError) as e:
        kind = "not an npz archive" if not zipfile.is_zipfile(path) else f"a damaged npz archive ({e})"
        raise ValueError(f"{opt} is {kind}; it needs arrays length, dt (or t) and measured quantities") from None


def read_experiments(path: str, option: str = "--data") -> Experiments:
    """Read and check a multi-experiment npz (layout in this module's docstring).

    Every refusal is one ValueError line naming the file, the key and the rule it breaks.
    """
    return check_experiments(_load(path, f"{option} {path!r}"), f"{option} {path!r}")


def check_experiments(d: dict, where: str = "experiments") -> Experiments:
    """The checks of :func:`read_experiments` on a dict of arrays (``where`` starts every message)."""
    found = sorted(d)
    if "length" not in d:
        raise ValueError(f"{where} needs an array 'length' (valid samples per experiment); found {found}")
    length = np.asarray(d["length"])
    if length.ndim != 1 or length.size == 0 or not np.issubdtype(length.dtype, np.integer):
        raise ValueError(
            f"{where}: length must be a 1-D integer array, one entry per experiment; got {length.dtype} {length.shape}"
        )
    n = length.size
    names = [k for k in QUANTITIES if k in d]
    if not names:
        raise ValueError(
            f"{where} holds no measured quantity; name at least one of {sorted(QUANTITIES)} (found {found})"
        )
    widths = {np.shape(d[k])[1] if np.ndim(d[k]) == 3 else None for k in names}
    measured = {}
    for k in names:
        a = np.asarray(d[k], float)
        if a.ndim != 3 or a.shape[0] != n or a.shape[2] != QUANTITIES[k] or len(widths) != 1:
            raise ValueError(
                f"{where}: {k} has shape {np.shape(d[k])}; it must be (N, T, {QUANTITIES[k]}) with N = {n} "
                f"experiments (the entries of length) and the same T as the other quantities"
            )
        measured[k] = a
    width = measured[names[0]].shape[1]
    if length.min() < 2 or length.max() > width:
        i = int(np.argmin(length)) if length.min() < 2 else int(np.argmax(length))
        raise ValueError(
            f"{where}: length[{i}] = {int(length[i])} must lie in 2..{width} (T, the samples stored per experiment)"
        )
    mask = np.arange(width)[None, :] < length[:, None]
    for k, a in measured.items():
        bad = ~np.isfinite(a).all(axis=2) & mask
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError(
                f"{where}: {k} is not finite at experiment {i}, sample {j}, inside its valid length {int(length[i])}"
            )
    if "quaternion_wxyz" in measured:
        norm = np.linalg.norm(np.where(mask[..., None], measured["quaternion_wxyz"], [1.0, 0.0, 0.0, 0.0]), axis=2)
        off = np.abs(norm - 1.0)
        if off.max() > UNIT_TOLERANCE:
            i, j = np.unravel_index(int(np.argmax(off)), off.shape)
            raise ValueError(
                f"{where}: quaternion_wxyz at experiment {i}, sample {j} has norm {norm[i, j]:.6g}; "
                f"quaternions must have unit norm (within {UNIT_TOLERANCE:g})"
            )
    t = _times(d, n, width, mask, where)
    inputs, info = {}, {}
    for k, v in d.items():
        if k in measured or k in ("length", "dt", "t"):
            continue
        v = np.asarray(v)
        if k.startswith("input_"):
            if v.ndim == 0 or v.shape[0] != n:
                raise ValueError(f"{where}: {k} has shape {v.shape}; a per-experiment input needs a first axis N = {n}")
            inputs[k[len("input_") :]] = v
        else:
            info[k] = v
    return Experiments(t, mask, length.astype(int), measured, inputs, info)


def _times(d: dict, n: int, width: int, mask, where: str) -> np.ndarray:
    if "t" in d:
        t = np.asarray(d["t"], float)
        if t.shape != (n, width):
            raise ValueError(f"{where}: t has shape {t.shape}; it must be (N, T) = {(n, width)}")
        valid = np.where(mask, t, 0.0)
        if not np.isfinite(valid).all():
            i, j = np.argwhere(~np.isfinite(valid))[0]
            raise ValueError(f"{where}: t is not finite at experiment {i}, sample {j}, inside its valid length")
        steps = np.diff(t, axis=1)
        bad = ~(steps > 0) & mask[:, 1:]
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError(
                f"{where}: t must increase strictly within each experiment (experiment {i}, sample {j + 1})"
            )
        t0 = t[:, :1]
        # past the valid length, continue each experiment's last step so the grid stays finite
        last = np.take_along_axis(steps, np.maximum(np.asarray(d["length"])[:, None] - 2, 0), axis=1)
        k = np.arange(width)[None, :]
        tl = np.take_along_axis(t, np.asarray(d["length"])[:, None] - 1, axis=1)
        return np.where(mask, t, tl + (k - np.asarray(d["length"])[:, None] + 1) * last) - t0
    if "dt" not in d:
        raise ValueError(f"{where} needs a sampling step 'dt' (s) or per-experiment times 't' (N, T)")
    dt = np.asarray(d["dt"], float)
    if dt.shape != () or not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"{where}: dt must be one finite number > 0 (s); got {dt!r}")
    return np.broadcast_to(np.arange(width) * float(dt), (n, width)).copy()


def uniform_step(experiments: Experiments, where: str = "experiments") -> float:
    """The common sampling step of all experiments; ValueError if their grids are not uniform and equal."""
    valid = experiments.mask[:, 1:]
    steps = np.diff(experiments.t, axis=1)[valid]
    dt = float(np.median(steps))
    if not np.allclose(steps, dt, rtol=1e-6, atol=0.0):
        raise ValueError(
            f"{where}: the experiments' samples are not uniformly spaced by one dt "
            f"(found {steps.min():g}..{steps.max():g} s)"
        )
    return dt
