"""``jaxcontact mc <model>``: a Monte Carlo uncertainty study of a built-in model.

    jaxcontact mc four-bar                      # the four-bar against a wall, default uncertainties
    jaxcontact mc four-bar --n 4096 --sampler sobol --param 'restitution=uniform(0.5,0.9)'
    jaxcontact mc bouncing-ball --param 'restitution=uniform(0.5,0.9)' --outcome peak_impulse
    jaxcontact mc slider-crank-clearance        # compliant journal, uncertain clearance (penalty scheme)

``--method pce`` (or ``pce-grad``, adding each simulation's ``jax.jacfwd``
gradient as regression rows) replaces the Monte Carlo statistics by a sparse
polynomial chaos expansion of each scalar outcome (``jaxcontact.studies.pce_study``).

``--limit 'OUTCOME>VALUE'`` (or ``<``) names a failure event; ``--method
subset | form | sorm | importance`` estimates its probability by subset
simulation, FORM, SORM or importance sampling at FORM's design point
(``jaxcontact.studies.reliability_study``), and ``--method mc`` adds the failed
fraction of its samples to the statistics::

    jaxcontact mc bouncing-ball --only --param 'restitution=uniform(0.5,0.9)' \
        --method subset --limit 'peak_impulse>0.55'

``--method interval`` bounds one scalar outcome over a box of ``interval(lo,hi)``
inputs (a Chebyshev surrogate, its extremes re-simulated, and a batched gradient
search, compared); ``--method fuzzy`` gives its membership function from
``triangular(lo,mode,hi)`` inputs by α-cuts (``jaxcontact.studies.interval_study``)::

    jaxcontact mc four-bar --only --param 'restitution=interval(0.6,0.95)' \
        --param 'wall_distance=interval(0.04,0.08)' --impact-location interpolated \
        --method interval --outcome peak_impulse

Writes ``summary.json``, ``samples.npz`` and PNG figures into ``--out`` and a
``chunks/`` folder that lets an interrupted run (Ctrl-C, a killed job) resume:
rerun the same command.

With the penalty scheme (explicit integration of stiff contact and film forces)
a study ends with its step check: the samples at each outcome's extremes run
again at half the step, and those whose outcomes it changes are flagged in the
summary (``step_check``) and in ``samples.npz`` (``step_check:flagged``), with
the step to rerun at (``jaxcontact.studies.step_check``; ``--no-step-check``
skips it).

Ctrl-C stops after saying how many samples are saved and the command that
resumes the study. Chunks carry checksums: a damaged or altered chunk file is
named, set aside and recomputed. The chunk size belongs to the study (recorded
when it starts), so it resumes on any device count.

Several processes: ``--processes N`` runs the study as N processes on this
host (``jax.distributed``, coordinator on 127.0.0.1 on a free port), each with
its own devices; process i computes chunks i, i + N, … and process 0 writes the
summary and figures once all chunks are in. The numbers are those of one
process (every sample's inputs derive from its global index), and a killed
run resumes with any process count. On a cluster every process runs the same
command with ``--coordinator HOST:PORT --num-processes N --process-id K``
(``--out`` on a shared file system), e.g. with SLURM::

    srun --ntasks=4 bash -c 'jaxcontact mc four-bar --out $SCRATCH/fb \\
        --coordinator $(scontrol show hostnames $SLURM_JOB_NODELIST | head -1):12345 \\
        --num-processes $SLURM_NTASKS --process-id $SLURM_PROCID'

``--devices K`` splits each chunk over K XLA host devices on a CPU, one per
core. By default K is the number of cores this process may use
(``os.sched_getaffinity``): samples are independent, so the numbers do not
depend on K, and several devices keep several cores busy (speed-ups measured in
bench/RESULTS.md). ``--devices 1`` keeps one device. On CPU, programs that
call LAPACK (custom calls such as ``lapack_dpotrf_ffi``: a model with a full
mass matrix or more than a dozen coordinates) can *hang* when several host
devices run them on large batches (bench/RESULTS.md, "LAPACK on several host
devices"); the runner therefore runs such a program on one device and says so
(``jaxcontact.studies.runner``). Planar mechanisms (diagonal mass, unrolled
small solves) make no LAPACK call and shard.
"""

from __future__ import annotations

import argparse
import functools
import os
import shlex
import sys

from jaxcontact.commands import checks
from jaxcontact.commands.devices import host_devices, usable_cores
from jaxcontact.commands.scheme_options import (
    add_model_argument,
    add_scheme_arguments,
    default_out,
    model_name,
    scheme_from_args,
)
from jaxcontact.commands.simulate import parse_sets

NAME = "mc"
PCE_DEFAULT_N = 256
RELIABILITY = ("subset", "form", "sorm", "importance")
INTERVAL = ("interval", "fuzzy")
HELP = "Monte Carlo uncertainty study of a built-in or user model, with any scheme (statistics, Sobol indices, plots)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``mc`` command's arguments."""
    add_model_argument(
        p,
        "the model (`jaxcontact models` says which have a default study, the others need --param; "
        "`jaxcontact params MODEL` lists its parameters)",
    )
    add_scheme_arguments(p, default="the study's (moreau-jean unless the model's default study says)")
    p.add_argument(
        "--n",
        type=checks.positive_int,
        default=None,
        help="number of simulations (default: the model's default study, 10000 for four-bar; 256 with "
        "--method pce or pce-grad); with Sobol indices rounded up to whole Saltelli rows, "
        "n_base × (d + 2) for d uncertain parameters (the count is printed before the run)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="'NAME=DIST(ARGS)'",
        help="uncertain parameter, quoted for the shell, e.g. 'restitution=uniform(0.6,0.95)'; dists: "
        "uniform(a,b), normal(mu,sigma), truncnormal(mu,sigma,lo,hi), lognormal(mu,sigma), "
        "fixed(v); with --method interval: interval(lo,hi); with --method fuzzy: triangular(lo,mode,hi). "
        "Repeatable; replaces the default distribution of that name",
    )
    p.add_argument(
        "--only", action="store_true", help="vary only the --param parameters (drop the model's default uncertainties)"
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="fixed parameter value for the whole study (repeatable; not also a --param)",
    )
    p.add_argument(
        "--outcome",
        action="append",
        default=[],
        metavar="NAME",
        help="outcome (repeatable; default: the model's default list): peak_impulse, impacts, "
        "rest_time, max_penetration, max_phi, max_phi_dot, peak_force, free_flight, final:<coord>, "
        "max:<coord>, min:<coord>, peak_accel:<coord>, first_above:<coord>=<level>, "
        "first_below:<coord>=<level>, peak_force:<contact>, free_flight:<contact>, "
        "path_rms:<coord>[,<coord>…]@<model>, path_max:…@<model> (the distance from a reference model's path), "
        "series:<coord>|gap|energy|phi|speed "
        "(<coord>: a coordinate or a model observable; <contact>: a contact's name or index)",
    )
    p.add_argument(
        "--chunk",
        type=checks.positive_int,
        default=None,
        help="samples per chunk (one compiled call, split over the devices, one file on disk; "
        "default when the study starts: at most jaxcontact.studies.runner.CHUNK_PER_DEVICE per device, the "
        "samples split evenly; then the study's recorded size)",
    )
    p.add_argument("--seed", type=checks.nonnegative_int, default=0, help="random seed of the design (default 0)")
    p.add_argument(
        "--sampler",
        choices=("random", "lhs", "sobol"),
        default=None,
        help="design: random (i.i.d., the default), lhs (Latin hypercube) or sobol (scrambled Sobol' points)",
    )
    p.add_argument("--no-sobol", action="store_true", help="skip Sobol indices (plain design of N samples)")
    p.add_argument(
        "--no-step-check",
        action="store_true",
        help="skip the step check of schemes that integrate stiff forces explicitly (penalty): the extreme "
        "samples run again at half the step, and those it changes are flagged",
    )
    p.add_argument(
        "--bootstrap",
        type=checks.positive_int,
        default=1000,
        help="bootstrap resamples for the Sobol-index intervals (default 1000)",
    )
    p.add_argument("--dt", type=checks.positive_float, default=None, help="time step in s (default: the study's)")
    p.add_argument(
        "--t-final", type=checks.positive_float, default=None, help="simulated time in s (default: the study's)"
    )
    p.add_argument(
        "--save-every",
        type=checks.positive_int,
        default=None,
        help="keep every k-th row of time series (default: the study's)",
    )
    p.add_argument(
        "--dtype",
        choices=("float64", "float32"),
        default="float64",
        help="floating-point precision of the simulations (default float64)",
    )
    p.add_argument(
        "--devices",
        type=checks.positive_int,
        default=None,
        help="XLA host devices to shard over on CPU (default: one per usable core; programs with "
        "LAPACK calls run on one, see the module doc)",
    )
    p.add_argument(
        "--method",
        choices=("mc", "pce", "pce-grad", *RELIABILITY, *INTERVAL),
        default="mc",
        help="mc: Monte Carlo statistics and Saltelli Sobol indices; pce: a sparse polynomial chaos "
        "expansion of each scalar outcome fitted to N samples (moments and Sobol indices from its "
        "coefficients, cross-validated Q² per outcome, pce_diagnostics.png); pce-grad: the same "
        "with each sample's jax.jacfwd gradient as extra regression rows; subset, form, sorm, "
        "importance: the probability of the --limit event by subset simulation (--n samples per "
        "level), FORM or SORM (forward-mode gradients through the simulation), or importance "
        "sampling at FORM's design point (--n samples), with reliability.png; interval: the range of one "
        "scalar --outcome over the box of interval(lo,hi) inputs, by a Chebyshev surrogate (extremes "
        "re-simulated, check error reported) and a projected L-BFGS gradient search, compared "
        "(interval.png); fuzzy: the outcome's membership function from triangular(lo,mode,hi) inputs by "
        "α-cuts, each an interval problem (fuzzy.png)",
    )
    p.add_argument(
        "--degree",
        type=checks.positive_int,
        default=None,
        help="interval, fuzzy: the Chebyshev surrogate's degree per input ((degree + 1)^d simulations per box; "
        "default 6)",
    )
    p.add_argument(
        "--starts",
        type=checks.nonnegative_int,
        default=None,
        help="interval, fuzzy: gradient-search starts per direction (minimum and maximum; default 4 when the "
        "outcome is smooth and the scheme has forward-mode gradients; 0: the Chebyshev result alone)",
    )
    p.add_argument(
        "--alpha-levels",
        type=checks.positive_int,
        default=None,
        metavar="K",
        help="fuzzy: number of α levels, evenly from 0 to 1 (default 5: 0, 0.25, 0.5, 0.75, 1)",
    )
    p.add_argument(
        "--limit",
        default=None,
        metavar="'OUTCOME>VALUE'",
        help="failure event of a scalar outcome, quoted for the shell, e.g. 'peak_force>2000' or "
        "'final:x<0.1' (needed by the reliability methods; with --method mc its failed fraction is "
        "reported)",
    )
    p.add_argument(
        "--p0",
        type=float,
        default=0.1,
        help="subset simulation: the conditional probability of each level (default 0.1; --n × p0 chains per level)",
    )
    p.add_argument(
        "--processes",
        type=checks.positive_int,
        default=None,
        metavar="N",
        help="run the study as N processes on this host (jax.distributed, coordinator on 127.0.0.1 "
        "on a free port); each takes every N-th chunk, same numbers as one process",
    )
    p.add_argument(
        "--coordinator",
        default=None,
        metavar="HOST:PORT",
        help="several hosts: the coordinator address of jax.distributed (process 0's host), with "
        "--num-processes and --process-id; every process runs the same command",
    )
    p.add_argument(
        "--num-processes",
        type=checks.positive_int,
        default=None,
        help="several hosts: number of processes in the study (with --coordinator)",
    )
    p.add_argument(
        "--process-id",
        type=checks.nonnegative_int,
        default=None,
        help="several hosts: this process's index, 0 … num-processes − 1 (with --coordinator)",
    )
    p.add_argument("--no-plots", action="store_true", help="write summary.json and samples.npz only")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--out", default=None, help="output folder, created if needed (default: mc-<model>)")
    p.add_argument(
        "--allow-large",
        action="store_true",
        help="run even when the size estimate is far above what a command line usually asks for",
    )
    checks.add_check_option(p)


def plan(spec, chunk_folder: str, dtype: str = "float64") -> tuple[str, checks.Size, list, int]:
    """What will run (simulations, design, steps) in one line, its size estimate, accuracy warnings and the
    samples already saved by an earlier run of it (a resume); no compute."""
    from jaxcontact.studies.montecarlo import parameters_line, study_model
    from jaxcontact.studies.runner import chunk_size_for, saved_samples, study_chunk_size
    from jaxcontact.studies.sensitivity import MIN_BASE_ROWS, base_rows, design_size, too_few_rows

    model, dt, _, n_steps, outcomes = study_model(spec)
    warn = checks.step_warnings(model, dt, dtype)
    d = len(spec.space.uncertain)
    if spec.sensitivity and d >= 1:
        n_base = base_rows(spec.n, d)
        n_sim = design_size(n_base, d)
        design = f"Saltelli design for Sobol indices: {n_base} base rows × (d + 2 = {d + 2})"
        if n_sim != spec.n:
            design += f", asked --n {spec.n}"
        refused = too_few_rows(n_base)
        if refused:
            warn.append(
                f"{refused} base rows: the study will report no Sobol indices "
                f"(--n {design_size(MIN_BASE_ROWS, d)} or more gives them; --no-sobol skips the Saltelli design)"
            )
    else:
        n_sim, design = spec.n, f"{spec.sampler} design"
    n_series = sum(o.kind == "series" for o in outcomes)
    chunk = spec.chunk_size or study_chunk_size(chunk_folder) or chunk_size_for(None, n_sim, usable_cores())
    # Chunks of another study do not count: the runner refuses to resume it, naming what differs.
    saved, total = saved_samples(chunk_folder) if os.path.isdir(chunk_folder) else (0, 0)
    saved = saved if total == n_sim else 0
    size = checks.study_size(
        model,
        n_simulations=n_sim,
        n_params=len(spec.space),
        n_steps=n_steps,
        save_every=spec.save_every,
        n_series=n_series,
        n_scalars=len(spec.outcomes) - n_series,
        chunk=chunk,
        n_saved=saved,
    )
    return (
        f"{spec.name}: {n_sim} simulations ({design}) × {n_steps} steps of {dt:g} s; {size.describe()}"
        + (f"; resuming: {saved} samples already saved" if saved else "")
        + "\n"
        + parameters_line(spec, model),
        size,
        warn,
        saved,
    )


PROCESS_TIMEOUT = 300  # seconds a process waits for the others to join jax.distributed


def _with_references(model, outcomes, get_model):
    """The model with the reference models its path outcomes name (``…@NAME``) that it does not declare,
    resolved as the command line resolves a model (a registered name or FILE.py:FUNCTION)."""
    from jaxcontact.studies.outcomes import reference_names

    extra = {r: functools.partial(get_model, r) for r in sorted(reference_names(outcomes) - set(model.references))}
    return model._replace(references={**model.references, **extra}) if extra else model


def _distributed_arguments(args) -> tuple[str, int, int] | None:
    """(coordinator, processes, process id) from --coordinator/--num-processes/--process-id, or None."""
    given = [args.coordinator is not None, args.num_processes is not None, args.process_id is not None]
    if not any(given):
        return None
    if not all(given):
        raise ValueError(
            "--coordinator, --num-processes and --process-id go together (every process of the "
            "study gets all three, with its own --process-id)"
        )
    if args.processes is not None:
        raise ValueError("--processes N starts its own processes; do not combine it with --coordinator")
    if args.process_id >= args.num_processes:
        raise ValueError(f"--process-id {args.process_id} must be < --num-processes {args.num_processes}")
    host, _, port = args.coordinator.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--coordinator {args.coordinator!r} must be HOST:PORT, e.g. 127.0.0.1:12345")
    return args.coordinator, args.num_processes, args.process_id


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawn_local(args, n: int) -> int:
    """Run this command as ``n`` processes on this host (coordinator 127.0.0.1) and wait for all of them."""
    import signal
    import subprocess

    argv = list(getattr(args, "argv", None) or sys.argv[1:])
    i = argv.index("--processes") if "--processes" in argv else None
    if i is not None:
        del argv[i : i + 2]
    else:
        argv = [a for a in argv if not a.startswith("--processes=")]
    coordinator = f"127.0.0.1:{_free_port()}"
    children = []
    try:
        for k in range(n):
            extra = ["--coordinator", coordinator, "--num-processes", str(n), "--process-id", str(k)]
            if k > 0:
                extra += ["--quiet"]  # one progress bar and one summary: process 0's
            children.append(
                subprocess.Popen(
                    [sys.executable, "-m", "jaxcontact.cli", *argv, *extra],
                    stdout=None if k == 0 else subprocess.DEVNULL,
                )
            )
        codes = [c.wait() for c in children]
    except KeyboardInterrupt:
        for c in children:
            c.send_signal(signal.SIGINT)
        for c in children:
            try:
                c.wait(timeout=30)
            except subprocess.TimeoutExpired:
                c.kill()
        return 130
    finally:
        for c in children:
            if c.poll() is None:
                c.kill()
    bad = [(k, c) for k, c in enumerate(codes) if c != 0]
    for k, c in bad:
        print(f"jaxcontact mc: process {k} of {n} exited with code {c}", file=sys.stderr)
    return bad[0][1] if bad else 0


@checks.releases_locks
def run(args) -> int:
    """Run ``jaxcontact mc`` with parsed ``args``: the study, its summary, files and plots; returns the exit status."""
    try:
        distributed = _distributed_arguments(args)
        if (distributed is not None or (args.processes or 1) > 1) and args.method != "mc":
            raise ValueError(
                f"several processes (--processes, --coordinator) run --method mc studies only, "
                f"not --method {args.method}"
            )
        if args.processes is not None and args.processes > 1 and not args.check:
            return _spawn_local(args, args.processes)
        host_devices(args.devices)
        sets = parse_sets(args.set)
        checks.set_and_param_conflict(sets, args.param)
        if args.no_sobol and args.method in ("pce", "pce-grad"):
            raise ValueError(
                f"--no-sobol does not apply to --method {args.method}: its Sobol indices come "
                f"from the expansion's coefficients at no extra simulation"
            )
        if args.no_step_check and args.method != "mc":
            raise ValueError(f"--no-step-check applies to --method mc only: --method {args.method} checks no step")
        limit = _limit_arguments(args)
        _interval_arguments(args)
        name = model_name(args)
        out = checks.output_folder(args.out or default_out("mc", name))
    except ValueError as e:
        print(f"jaxcontact mc: error: {e}", file=sys.stderr)
        return 2
    import jax

    jax.config.update("jax_enable_x64", args.dtype == "float64")
    if distributed is not None:
        coordinator, n_proc, pid = distributed
        try:
            jax.distributed.initialize(
                coordinator_address=coordinator,
                num_processes=n_proc,
                process_id=pid,
                initialization_timeout=PROCESS_TIMEOUT,
            )
        except Exception as e:  # noqa: BLE001 - the runtime raises XlaRuntimeError/RuntimeError/ValueError
            print(
                f"jaxcontact mc: error: process {pid} of {n_proc} could not join the coordinator "
                f"{coordinator} within {PROCESS_TIMEOUT} s: {e}",
                file=sys.stderr,
            )
            return 2
    from jaxcontact.models import get_model
    from jaxcontact.studies.montecarlo import default_outcomes, default_study, format_summary, run_study
    from jaxcontact.studies.runner import saved_samples

    chunks = os.path.join(out, "chunks")

    def interrupted_line() -> str:
        argv = getattr(args, "argv", None)
        again = shlex.join(["jaxcontact", *argv]) if argv is not None else f"the same command with --out {out}"
        if args.method in RELIABILITY or args.method in INTERVAL:
            from jaxcontact.studies.reliability_study import saved_rounds

            folders = [chunks]
            if args.method in INTERVAL:  # its forward runs and its gradient runs keep rounds apart
                folders = [os.path.join(chunks, k) for k in ("forward", "gradient")]
            rounds, sims = (sum(v) for v in zip(*(saved_rounds(f) for f in folders)))
            return f"interrupted: {rounds} rounds ({sims} simulations) saved in {chunks}; resume with: {again}"
        saved, total = saved_samples(chunks)
        return f"interrupted: {saved} of {total or '?'} samples saved in {chunks}; resume with: {again}"

    checks.note_on_interrupt(interrupted_line)
    try:
        # A polynomial chaos fit needs far fewer simulations than Monte Carlo statistics.
        n = args.n if args.n is not None or args.method not in ("pce", "pce-grad") else PCE_DEFAULT_N
        model = get_model(name)  # the one resolution of the name: the study asks this object the rest
        outcomes = args.outcome
        if limit is not None and args.method in RELIABILITY:
            outcomes = [limit.outcome, *(o for o in args.outcome if o != limit.outcome)]
        elif args.method in INTERVAL and not outcomes:
            # One outcome is bounded: the model's first scalar default outcome unless --outcome names it.
            outcomes = [next(o for o in default_outcomes(model) if not o.startswith("series:"))]
        elif limit is not None and limit.outcome not in (args.outcome or default_outcomes(model)):
            outcomes = [*(args.outcome or default_outcomes(model)), limit.outcome]
        model = _with_references(model, outcomes or default_outcomes(model), get_model)
        study = model.study
        scheme = (
            scheme_from_args(args, study.scheme, {study.scheme: study.scheme_options})
            if study is not None
            else scheme_from_args(args)
        )
        spec = default_study(
            model,
            n=n if args.method not in RELIABILITY and args.method not in INTERVAL else 1,
            params=args.param,
            only=args.only,
            outcomes=outcomes,
            sampler=args.sampler or "random",
            seed=args.seed,
            sensitivity=not args.no_sobol and args.method == "mc",
            step_check=not args.no_step_check,
            dt=args.dt,
            t_final=args.t_final,
            save_every=args.save_every,
            overrides=sets,
            chunk_size=args.chunk,
            n_bootstrap=args.bootstrap,
            scheme=scheme,
        )
        if args.method in INTERVAL:
            from jaxcontact.studies.interval_study import plan_line as interval_plan

            given = {t.partition("=")[0].strip() for t in args.param}
            defaults = [k for k in spec.space.uncertain if k not in given]
            if defaults and not args.only:
                # The model's default study brings probability laws: name them and the way to drop them.
                raise ValueError(
                    f"--method {args.method} takes no probability laws, and the model's default study varies "
                    f"{', '.join(f'{k}={spec.space[k]}' for k in defaults)}: give --only (with --param for each "
                    f"input)"
                )
            line, size, warns, saved = interval_plan(spec, args.method, *_interval_options(args), args.dtype)
        else:
            spec.space.check_probabilistic(f"--method {args.method}")
        if args.method in RELIABILITY:
            from jaxcontact.studies.reliability_study import plan_line

            line, size, warns, saved = plan_line(spec, limit, args.method, args.n, args.p0, args.dtype)
        elif args.method not in INTERVAL:
            line, size, warns, saved = plan(spec, chunks, args.dtype)
        warns = checks.check_size(size, out, args.allow_large, resuming=saved > 0) + warns
        print(line)
        for w in warns:
            print(f"warning: {w}", file=sys.stderr)
        if args.check:
            return 0
        # One writer per process slot: the processes of one distributed study each write their own files.
        checks.lock_folder(out, checks.LOCK_FILE + (f".p{distributed[2]}" if distributed and distributed[2] else ""))
        if args.method == "mc":
            summary = run_study(spec, out, progress=not args.quiet, plot=not args.no_plots, limit=limit)
        elif args.method in RELIABILITY:
            from jaxcontact.studies.reliability_study import format_reliability, run_reliability_study

            summary = run_reliability_study(
                spec,
                out,
                limit=limit,
                method=args.method,
                n=args.n,
                p0=args.p0,
                progress=not args.quiet,
                plot=not args.no_plots,
            )
            print(format_reliability(summary))
            print(f"wrote {', '.join(os.path.join(out, f) for f in summary['files'])}")
            return 0
        elif args.method in INTERVAL:
            from jaxcontact.studies.interval_study import format_interval, run_interval_study

            degree, starts, levels = _interval_options(args)
            summary = run_interval_study(
                spec,
                out,
                method=args.method,
                degree=degree,
                starts=starts,
                alpha_levels=levels,
                progress=not args.quiet,
                plot=not args.no_plots,
            )
            print(format_interval(summary))
            print(f"wrote {', '.join(os.path.join(out, f) for f in summary['files'])}")
            return 0
        else:
            import warnings

            from jaxcontact.studies.pce import PCEWarning
            from jaxcontact.studies.pce_study import run_pce_study

            with warnings.catch_warnings():
                # Unreliable fits are reported below, one line per outcome, instead of as Python warnings.
                warnings.simplefilter("ignore", PCEWarning)
                summary = run_pce_study(spec, out, method=args.method, progress=not args.quiet, plot=not args.no_plots)
    except ValueError as e:
        print(f"jaxcontact mc: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\n" + interrupted_line(), file=sys.stderr)
        return 130
    if jax.process_index() != 0:
        return 0  # process 0 prints the summary and writes the files
    print(format_summary(summary))
    if "reliability" in summary:
        from jaxcontact.studies.reliability_study import reliability_line

        print(reliability_line(summary["reliability"]))
    for name, o in summary["outcomes"].items():
        if "pce" in o:
            print(pce_line(name, o["pce"]))
    print(f"wrote {', '.join(os.path.join(out, f) for f in summary['files'])}")
    fail = summary["failures"]
    if fail["n_valid"] == 0:
        print(
            f"jaxcontact mc: error: every one of the {fail['n_samples']} simulations failed (see 'failed samples' "
            f"above): the study has no valid result",
            file=sys.stderr,
        )
        return 1
    return 0


def _limit_arguments(args):
    """The --limit event (or None), refused where the method takes none or needs one; checks --p0, --sampler."""
    from jaxcontact.studies.reliability import parse_limit

    limit = parse_limit(args.limit) if args.limit is not None else None
    if args.method in RELIABILITY:
        if limit is None:
            raise ValueError(f"--method {args.method} estimates a failure probability: give --limit 'OUTCOME>VALUE'")
        if args.sampler is not None:
            raise ValueError(f"--sampler does not apply to --method {args.method}: it draws its own samples")
        if args.no_sobol:
            raise ValueError(f"--no-sobol does not apply to --method {args.method}: it computes no Sobol indices")
    elif limit is not None and args.method != "mc":
        raise ValueError(f"--limit applies to --method mc and {', '.join(RELIABILITY)}, not --method {args.method}")
    if not 0 < args.p0 < 1:
        raise ValueError(f"--p0 {args.p0:g} must lie in (0, 1)")
    if args.p0 != 0.1 and args.method != "subset":
        raise ValueError(f"--p0 applies to --method subset only, not --method {args.method}")
    return limit


def _interval_arguments(args) -> None:
    """Refuse the options that do not apply to --method interval | fuzzy, and theirs elsewhere."""
    own = [("--degree", args.degree), ("--starts", args.starts), ("--alpha-levels", args.alpha_levels)]
    if args.method not in INTERVAL:
        for option, value in own:
            if value is not None:
                raise ValueError(f"{option} applies to --method interval and fuzzy only, not --method {args.method}")
        return
    if args.alpha_levels is not None and args.method != "fuzzy":
        raise ValueError("--alpha-levels applies to --method fuzzy only, not --method interval")
    if args.alpha_levels is not None and args.alpha_levels < 2:
        raise ValueError(f"--alpha-levels {args.alpha_levels} must be ≥ 2 (α = 0 and α = 1 at least)")
    for option, given, why in (
        ("--n", args.n is not None, "it takes the simulations its grid and search need"),
        ("--sampler", args.sampler is not None, "it draws no random design"),
        ("--no-sobol", args.no_sobol, "it computes no Sobol indices"),
    ):
        if given:
            raise ValueError(f"{option} does not apply to --method {args.method}: {why}")


def _interval_options(args) -> tuple[int, int | None, int]:
    """(degree, starts, α levels) of --method interval | fuzzy, with their defaults."""
    from jaxcontact.studies import interval_study as iv

    return (
        iv.DEFAULT_DEGREE if args.degree is None else args.degree,
        args.starts,
        iv.DEFAULT_ALPHA_LEVELS if args.alpha_levels is None else args.alpha_levels,
    )


def pce_line(name: str, p: dict) -> str:
    """One outcome's polynomial chaos line of the printed summary: its Q², and why it is unreliable if it is."""
    if "error" in p:
        return f"  {name:<18} polynomial chaos: not fitted: {p['error']}"
    return f"  {name:<18} polynomial chaos: Q² = {_q2(p['q2'])} (degree {p['degree']}, {p['n_terms']} terms)" + (
        "" if p["reliable"] else f" — UNRELIABLE ({p['unreliable_because']}): do not trust its Sobol indices"
    )


def _q2(x) -> str:
    return "n/a" if x is None else f"{x:.4f}"
