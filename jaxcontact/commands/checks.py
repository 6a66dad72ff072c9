"""Checks every command runs before any compute: option values, output folders, data files, sizes, conflicts.

A user mistake must end in one line that names the value and the rule (exit
code 2), never in a traceback after minutes of computing. Option types
(``positive_int``, ``positive_float``, …) are argparse ``type=`` functions, so
argparse itself refuses a bad value with the option's name; the other checks
raise ``ValueError`` that the command prints as ``jaxcontact <cmd>: error: …``.

Size limits. A run is refused outright when it cannot fit (memory above half
the machine's RAM, outputs above the free disk space) and needs
``--allow-large`` when it is far beyond what a user would expect from a
command line (``LIMITS``): the estimate is printed either way, so a user who
typed ``--dt 1e-12`` learns that it means 10¹³ steps before anything starts.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import shutil
import tempfile
import zipfile
from typing import NamedTuple

import numpy as np

# Above these a run needs --allow-large (the user probably mistyped dt, t_final or n). A single
# trajectory runs one step after another, so it gets a lower step limit than a batched study.
LIMITS = {"memory_bytes": 4e9, "disk_bytes": 2e9, "env_steps": 2e10}
SINGLE_RUN_STEPS = 1e8


# ---------------------------------------------------------------- argparse types


def _number(text: str, kind):
    try:
        v = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
    if kind is float and not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"{text!r} must be finite")
    return v


def positive_int(text: str) -> int:
    """An integer ≥ 1."""
    v = _number(text, int)
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v} must be an integer ≥ 1")
    return v


def nonnegative_int(text: str) -> int:
    """An integer ≥ 0."""
    v = _number(text, int)
    if v < 0:
        raise argparse.ArgumentTypeError(f"{v} must be an integer ≥ 0")
    return v


def positive_float(text: str) -> float:
    """A finite number > 0."""
    v = _number(text, float)
    if not v > 0:
        raise argparse.ArgumentTypeError(f"{v:g} must be a finite number > 0")
    return v


def unit_float(text: str) -> float:
    """A number in [0, 1]."""
    v = _number(text, float)
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"{v:g} must be in [0, 1]")
    return v


def add_check_option(p: argparse.ArgumentParser) -> None:
    """``--check``: every command validates, prints what it would run and stops."""
    p.add_argument(
        "--check",
        action="store_true",
        help="validate the options, data and output folder, print the plan and size estimate, and stop",
    )


# ---------------------------------------------------------------- output folder

# Folders created by output_folder in this process: a command refused after creating one removes it
# again if it is still empty (``discard_created``), so a mistyped command leaves nothing behind.
_CREATED: list[str] = []


def output_folder(path: str, option: str = "--out") -> str:
    """Create ``path`` if needed and prove it writable (by writing a file: permissions alone do not tell, e.g.
    for root or a read-only mount); ValueError naming the folder otherwise."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{option} {path!r} is a file, not a folder; give a folder name")
    try:
        if not os.path.isdir(path):
            missing, p = [], os.path.abspath(path)
            while not os.path.exists(p):
                missing.append(p)  # deepest first
                p = os.path.dirname(p)
            os.makedirs(path)
            _CREATED.extend(missing)
        _probe_write(path)
    except OSError as e:
        raise ValueError(f"{option} {path!r}: the folder cannot be created or written ({e.strerror or e})") from None
    return path


def _probe_write(path: str) -> None:
    fd, probe = tempfile.mkstemp(prefix=".write-test.", dir=path)
    os.close(fd)
    os.unlink(probe)


def prove_writable(path: str) -> None:
    """Create the folder ``path`` if needed and write a file in it; OSError when either fails."""
    os.makedirs(path, exist_ok=True)
    _probe_write(path)


def forget_created() -> None:
    """Start a command: folders created before (by another command in this process) are not its to remove."""
    _CREATED.clear()


def discard_created() -> None:
    """Remove the folders ``output_folder`` created if they are still empty (the command was refused, or only
    checked)."""
    for path in _CREATED:  # deepest first
        try:
            os.rmdir(path)  # only succeeds on an empty folder
        except OSError:
            pass
    _CREATED.clear()


# ---------------------------------------------------------------- Ctrl-C

# The line a command wants printed when Ctrl-C ends the process from outside its main thread (the CLI's
# interrupt watchdog, while a compiled call holds the main thread): a study says what it saved and how to resume.
_INTERRUPT_NOTE: list = [None]


def note_on_interrupt(note) -> None:
    """Set (or with None, clear) the function ``() -> str`` giving this command's interrupted line."""
    _INTERRUPT_NOTE[0] = note


def interrupt_note() -> str | None:
    """This command's interrupted line, or None when it set none or it cannot be made now."""
    try:
        return None if _INTERRUPT_NOTE[0] is None else _INTERRUPT_NOTE[0]()
    except Exception:  # noqa: BLE001 - read while the main thread works: the generic line is then said instead
        return None


# ---------------------------------------------------------------- one writer per folder

LOCK_FILE = ".jaxcontact.lock"
# Lock files held by this process: the OS releases them when it ends, however it ends (flock), so a
# crashed or killed run never leaves a folder locked.
_LOCKS: list = []


def lock_folder(path: str, name: str = LOCK_FILE) -> None:
    """Hold an exclusive lock on ``path/name`` for the rest of the command (``release_locks``) or process.

    Two runs writing one study folder would each recompute everything and take each other's half-written
    chunks for damaged ones: the second is refused, naming the folder and the other run's process id."""
    import fcntl

    f = open(os.path.join(path, name), "a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.seek(0)
        pid = f.read().strip() or "unknown"
        f.close()
        raise ValueError(
            f"study folder {path!r} is in use by another jaxcontact run (pid {pid}); wait for it to "
            "finish or give another --out"
        ) from None
    f.seek(0)
    f.truncate()
    f.write(str(os.getpid()))
    f.flush()
    _LOCKS.append(f)


def release_locks() -> None:
    """Release the folders this process locked."""
    while _LOCKS:
        _LOCKS.pop().close()


def releases_locks(run):
    """Decorate a command's ``run``: the folders it locks are released when it returns or raises, so the same
    process (a test, a notebook) can run a command on that folder again."""

    @functools.wraps(run)
    def wrapped(args):
        try:
            return run(args)
        finally:
            release_locks()

    return wrapped


# ---------------------------------------------------------------- measured data


class Data(NamedTuple):
    """A measured trajectory: times t (m,), observations y (m, d), the full state (q, u) or None, and the step dt."""

    t: np.ndarray
    y: np.ndarray
    state: tuple | None
    dt: float
    dt_source: str


def data_file(path: str, model, cols, names) -> Data:
    """Read and check ``--data``: an npz with t and y (observed columns) or q (all coordinates), finite,
    t increasing, q with the model's coordinate count; dt from the file, else from t's uniform spacing."""
    opt = f"--data {path!r}"
    if not os.path.exists(path):
        raise ValueError(f"{opt}: no such file")
    if os.path.isdir(path):
        raise ValueError(f"{opt} is a folder; give the npz file (e.g. {os.path.join(path, 'trajectory.npz')})")
    try:
        with np.load(path, allow_pickle=False) as z:
            d = {k: z[k] for k in z.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as e:
        kind = "not an npz archive" if not zipfile.is_zipfile(path) else f"a damaged npz archive ({e})"
        raise ValueError(
            f"{opt} is {kind}; --data takes the trajectory.npz of `jaxcontact simulate` or an npz "
            "with arrays t and y (or q)"
        ) from None
    if not isinstance(d, dict):
        raise ValueError(f"{opt} is a single .npy array; --data needs an npz with arrays t and y (or q)")
    found = sorted(d)
    if "t" not in d:
        raise ValueError(f"{opt} needs an array 't' (found {found})")
    t = np.asarray(d["t"], float)
    if t.ndim != 1 or t.size < 2:
        raise ValueError(f"{opt}: t must be a 1-D array of at least 2 times; got shape {t.shape}")
    n = model.system.n_dof
    params = sorted(k[len("param_") :] for k in d if k.startswith("param_"))
    if params and set(params) != set(model.params):
        raise ValueError(
            f"{opt} was written for a model with parameters {params}, not {model.name} "
            f"({sorted(model.params)}); identify it with the model that matches the data"
        )
    for key, size, what in (("q", n, "coordinates"), ("u", model.system.n_u, "velocities")):
        if key in d:
            a = np.asarray(d[key])
            if a.ndim != 2 or a.shape[1] != size:
                raise ValueError(
                    f"{opt}: {key} has shape {a.shape}, but {model.name} has {size} {what}"
                    + (f" {list(names)}" if key == "q" else "")
                    + "; is this data of another model?"
                )
            if a.shape[0] != t.size:
                raise ValueError(f"{opt}: {key} has {a.shape[0]} rows but t has {t.size} times")
    if "y" in d:
        y = np.asarray(d["y"], float)
        y2 = y.reshape(len(y), -1) if y.ndim else y
        if y.ndim == 0 or y2.shape[0] != t.size:
            raise ValueError(f"{opt}: y has shape {y.shape} but t has {t.size} times (one row per time)")
        if y2.shape[1] != len(cols):
            raise ValueError(
                f"{opt}: y has {y2.shape[1]} column(s) but {len(cols)} coordinate(s) are observed "
                f"({', '.join(names[c] for c in cols)}); pick them with --observe"
            )
    elif "q" in d:
        y = np.asarray(d["q"], float)[:, cols]
    else:
        raise ValueError(f"{opt} needs an array 'y' (observations) or 'q' (coordinates); found {found}")
    for key, a in (("t", t), ("y", y)):
        if not np.all(np.isfinite(a)):
            bad = int(np.size(a) - np.count_nonzero(np.isfinite(a)))
            raise ValueError(f"{opt}: {key} holds {bad} non-finite value(s) (NaN or inf); remove those rows")
    if t[0] < 0:
        raise ValueError(f"{opt}: t starts at {t[0]:g} s, before the model's start at t = 0; shift the times")
    steps = np.diff(t)
    if not np.all(steps > 0):
        raise ValueError(f"{opt}: t must increase strictly (row {int(np.argmin(steps > 0)) + 1} does not)")
    uniform = bool(np.allclose(steps, steps[0], rtol=1e-6, atol=0.0))
    if "dt" in d:
        dt = float(np.asarray(d["dt"]))
        if not (math.isfinite(dt) and dt > 0):
            raise ValueError(f"{opt}: dt = {dt} must be a finite number > 0")
        ratio = steps[0] / dt
        if uniform and abs(ratio - round(ratio)) > 1e-6 * max(1.0, ratio):
            raise ValueError(
                f"{opt}: dt = {dt:g} does not divide the spacing of t ({steps[0]:g}); fix dt in the file or give --dt"
            )
        source = "the file's dt"
    elif uniform:
        dt, source = float(steps[0]), "the spacing of t"
    else:
        raise ValueError(f"{opt} has no dt and t is not uniformly spaced; give the simulation step with --dt")
    state = (np.asarray(d["q"]), np.asarray(d["u"])) if "q" in d and "u" in d else None
    return Data(t, y, state, dt, source)


# ---------------------------------------------------------------- size estimates


class Size(NamedTuple):
    """What a run will ask for: bytes in memory (largest live arrays) and on disk, and env-steps."""

    memory_bytes: float
    disk_bytes: float
    env_steps: float

    def describe(self) -> str:
        """One line for the plan: steps, memory and disk of the run."""
        return (
            f"{self.env_steps:.3g} time steps in all, about {_bytes(self.memory_bytes)} in memory and "
            f"{_bytes(self.disk_bytes)} on disk"
        )


def _bytes(b: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b:.0f} B"


def _ram_bytes() -> float:
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return float("inf")


def _free_disk(folder: str) -> float:
    try:
        return float(shutil.disk_usage(folder).free)
    except OSError:
        return float("inf")


def n_contacts(model) -> int:
    """Number of unilateral contacts of a model (the shape of its gaps at its initial state: traced, not run)."""
    if model.system.gaps is None:
        return 0
    import jax

    q0, _ = model.initial_state(model.params)
    return int(np.prod(jax.eval_shape(model.system.gaps, q0, 0.0, model.params).shape))


def trajectory_size(model, n_steps: int, save_every: int) -> Size:
    """One saved trajectory of ``simulate``: t, q, u, per contact impulses/active, diagnostics, per saved row."""
    rows = n_steps // save_every + 1
    per_row = 1 + model.system.n_dof + model.system.n_u + (2 + model.system.tangent_directions) * n_contacts(model) + 6
    b = 8.0 * rows * per_row
    # the scan keeps the saved rows; writing the npz holds a second copy in numpy
    return Size(2 * b, b, float(n_steps))


def study_size(
    model,
    *,
    n_simulations: int,
    n_params: int,
    n_steps: int,
    save_every: int,
    n_series: int,
    n_scalars: int,
    chunk: int,
    n_saved: int = 0,
) -> Size:
    """A Monte Carlo study: inputs and outputs of every sample (kept for the statistics), one chunk's
    series on the devices, and samples.npz plus the chunk files on disk. A resumed study (``n_saved``
    samples already in chunks) writes only the missing chunks and samples.npz."""
    rows = n_steps // save_every + 1
    per_sample = 8.0 * (n_series * rows + n_scalars + 4 + n_params)
    everything = n_simulations * per_sample
    memory = 2 * everything + min(chunk, n_simulations) * per_sample + 8.0 * n_simulations * 3 * n_params
    left = max(0, n_simulations - n_saved) * per_sample
    return Size(memory, everything + left, float(n_simulations) * n_steps)


def fit_size(model, n_steps: int, starts: int, iterations: int) -> Size:
    """A fit: every step's state of every start is kept (the trajectory the misfit is read from; reverse-mode
    gradients keep about as much again); each iteration simulates them all. It writes only fit.json and two
    figures."""
    one = trajectory_size(model, n_steps, 1)
    return Size(starts * one.memory_bytes, 0.0, float(starts) * iterations * n_steps)


# Below this step float32 round-off, not the step, sets a mechanism's joint error (see step_warnings).
FLOAT32_MIN_DT = 1e-4

STUDY_HINT = "a larger --dt, a shorter --t-final, a larger --save-every or a smaller --n"


def check_size(
    size: Size,
    out: str,
    allow_large: bool,
    max_steps: float = LIMITS["env_steps"],
    hint: str = STUDY_HINT,
    resuming: bool = False,
) -> list[str]:
    """Refuse what cannot fit; ask for --allow-large above ``LIMITS`` (``max_steps`` time steps).
    ``hint`` names the options that make the run smaller; a resumed study (``resuming``) is not made smaller
    (its options belong to it), so its disk advice is to make room. Returns warnings to print: unlike
    the memory check, the disk check gives way to --allow-large (free space can grow while a long run goes
    on, e.g. on a shared scratch disk; a disk that does fill up ends the run with one line, and a study
    keeps its finished chunks)."""
    limits = LIMITS | {"env_steps": max_steps}
    ram, free = _ram_bytes(), _free_disk(out)
    if size.memory_bytes > 0.5 * ram:
        raise ValueError(
            f"this run needs {size.describe()}: more than half the machine's memory ({_bytes(ram)}); use {hint}"
        )
    warns = []
    if size.disk_bytes > free:
        short = f"this run needs {size.describe()}: more than the {_bytes(free)} free in {out!r}"
        if allow_large:
            warns.append(f"{short}; running anyway (--allow-large): it stops with an error if the disk fills up")
        elif resuming:
            raise ValueError(
                f"{short}; to resume, free space on that disk, or move {out!r} (with its chunks "
                "folder) to a disk with more room and resume there; or add --allow-large to try anyway"
            )
        else:
            raise ValueError(
                f"{short}; use {hint}, another --out on a disk with more room, or add --allow-large to try anyway"
            )
    over = [
        k
        for k, v in (
            ("memory_bytes", size.memory_bytes),
            ("disk_bytes", size.disk_bytes),
            ("env_steps", size.env_steps),
        )
        if v > limits[k]
    ]
    if over and not allow_large:
        what = {
            "memory_bytes": f"{_bytes(limits['memory_bytes'])} of memory",
            "disk_bytes": f"{_bytes(limits['disk_bytes'])} on disk",
            "env_steps": f"{limits['env_steps']:.0e} time steps",
        }
        advice = (
            "this study is under way (its options belong to it): add --allow-large to resume it"
            if resuming
            else f"to shrink it use {hint}, or add --allow-large to run it anyway"
        )
        raise ValueError(f"this run needs {size.describe()}, above {' and '.join(what[k] for k in over)}; {advice}")
    return warns


# ---------------------------------------------------------------- option conflicts


def set_and_param_conflict(sets: dict, param_texts) -> None:
    """A parameter cannot be both fixed (--set) and uncertain (--param)."""
    from jaxcontact.studies.distributions import parse_distribution

    varied = [parse_distribution(t)[0] for t in param_texts]
    both = sorted(set(sets) & set(varied))
    if both:
        raise ValueError(
            f"{', '.join(both)}: given both by --set (fixed) and --param (uncertain); keep one "
            f"(--param '{both[0]}=fixed(v)' also fixes it)"
        )


# ---------------------------------------------------------------- accuracy warnings


def smallest_length(model) -> float | None:
    """The smallest positive parameter in metres (a bar, a radius, a gap): the model's finest length scale, or
    None when no parameter is a length."""
    unit = model.param_table.unit
    lengths = [float(np.min(np.abs(np.asarray(v)))) for k, v in model.params.items() if unit(k) == "m"]
    lengths = [v for v in lengths if v > 0]
    return min(lengths) if lengths else None


# A joint error or penetration above this share of the model's smallest length changes its geometry visibly.
LARGE_ERROR_SHARE = 0.01


def result_warnings(model, phi, converged, residual) -> list[str]:
    """Warnings about a finished run (per saved row ``phi`` = ‖Φ‖, ``converged``, ``residual``): steps whose
    contact solve did not converge, and a joint error large against the model's smallest length."""
    out = []
    phi, converged, residual = np.asarray(phi), np.asarray(converged, bool), np.asarray(residual)
    bad = int(np.sum(~converged))
    if bad:
        out.append(
            f"the contact solver did not converge at {bad} of {converged.size} saved steps (largest residual "
            f"{float(np.max(residual)):.3g}): the impulses there are approximate; raise --iterations or try "
            f"--solver newton"
        )
    h = smallest_length(model)
    if h and phi.size and float(np.max(phi)) > LARGE_ERROR_SHARE * h:
        out.append(
            f"the joints drift by up to ‖Φ‖ = {float(np.max(phi)):.3g}, {100 * float(np.max(phi)) / h:.0f} % "
            f"of {model.name}'s smallest length ({h:g} m): use a smaller --dt (or, in Python, "
            f"MoreauJean(projection=Projection()))"
        )
    return out


def step_warnings(model, dt: float, dtype: str = "float64") -> list[str]:
    """Warnings about a time step too large for the model's time scales, or float32 for a model that needs more.

    The free-fall time scale of a contact model is √(2 h / g) for the smallest length h among its
    parameters (a drop height, a gap, a bar): a step above a tenth of it lets a body cross its
    contact in one step (the bouncing ball at dt = 10 s ends hundreds of metres below the floor).
    Mechanisms with bilateral joints drift off their joints by a discretisation error that shrinks
    with the step (∝ dt² per step) plus round-off (∝ ε per step): below ``FLOAT32_MIN_DT`` float32's
    round-off dominates and the joint error grows many times over (bench/RESULTS.md).
    """
    out = []
    p = {k: float(np.max(np.abs(np.asarray(v)))) for k, v in model.params.items()}
    unit = model.param_table.unit
    g = next((v for k, v in p.items() if unit(k) == "m/s²" and v > 0), None)  # the gravity, by its unit
    h = smallest_length(model)
    if g and h:
        tau = math.sqrt(2.0 * h / g)
        if dt > 0.1 * tau:
            out.append(
                f"dt = {dt:g} s is large for {model.name}: a free fall over its smallest length ({h:g} m) "
                f"takes {tau:.3g} s, so a body can cross a contact within one step; use dt < {0.1 * tau:.2g} s"
            )
    if dtype == "float32" and dt < FLOAT32_MIN_DT and getattr(model.system, "constraints", None) is not None:
        out.append(
            f"float32 on {model.name} at dt = {dt:g} s: its joints are enforced at velocity level, and at "
            "steps this small float32 round-off (1e-7 relative), not the step, sets the joint error ‖Φ‖; "
            "compare max_phi with a float64 run, or use float64"
        )
    return out
