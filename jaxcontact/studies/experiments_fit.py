"""Shared physical parameters from many measured experiments (real cube tosses), with intervals from their scatter.

    fit = fit_experiments(model, experiments, ("friction", "restitution"), guesses, bounds, horizon=100)

One model, N experiments (:class:`jaxcontact.experiments.Experiments`), each with its own initial state and
length; the physical parameters (μ, ε, …) are shared. What each design choice does:

* **Starts from the first samples, held fixed.** Each experiment starts from the ballistic fit of its first
  flight samples (:func:`jaxcontact.prediction.starts`), not fitted jointly as 13 nuisance parameters per
  toss: six poses in free flight fix the state far better than the contact phase could, and nuisance starts
  would let every toss absorb the model's errors into its own state (the shared parameters would then explain
  less of what happens at the impacts). The price: a start's error is carried into its horizon and shows as
  scatter between experiments, which the intervals below include.
* **Truncated horizons.** Each experiment is fitted over its first ``horizon`` samples (100 at 148 Hz: 0.68 s,
  the median toss's length: flight, landing, the slide and the start of rest; shorter tosses are masked). The
  horizon decides what the parameters explain. Over the first impact alone (30 samples: 0.2 s; every shared
  toss's first contact is at sample 11–23) the cube tosses give μ ≈ 0.21, ε ≈ 0.27, which predict whole
  tosses worse than the nominal values: where a cube stops is set by its slide after landing, and the box on
  eight sharp vertices slides as the real cube does only with a smaller μ than its impacts want (its model
  error; bench/RESULTS.md has both). Longer horizons are chaotic: the face a cube comes to rest on switches with
  a small change of μ or ε, and past such a switch the misfit jumps; the robust loss below bounds what such a
  toss adds, and the predictions (``jaxcontact predict``) run whole tosses.
* **Pose misfit, robust.** Per sample, e² = |p_sim + o ẑ − p_meas|² + (a·θ)², θ the rotation between
  simulated and measured orientation (2 sin(θ/2) from the quaternions, smooth everywhere) and a the body's
  mean half extent, so both parts are lengths. The loss is the pseudo-Huber mean s²(√(1 + e²/s²) − 1) over an
  experiment's valid samples (``scale`` s): quadratic for tracking noise, linear for the outliers and the
  samples where simulation and measurement have parted.
* **The table offset** ``table_offset`` (o, m; :data:`OBSERVATION_PARAMS`): the measured table plane sits off
  z = 0 by a few mm in the shared data. Gravity is uniform, so a table at height o is the model's table at 0
  with the start lowered by o and the simulated poses raised by o: fitted like a physical parameter, no model
  change.
* **Gradients through the contacts.** Impacts are located inside the step (the identification's default,
  :func:`jaxcontact.commands.identify.identify_default`), with the forward runs' cone solve (swept to its
  tolerance) and its implicit gradients: reverse mode through the steps. Resting contacts are *not* projected:
  the projection decides that a contact rests by a speed threshold, a switch that makes the misfit jump as μ
  or ε moves a toss across it (its gradient then disagrees with finite differences on most tosses); over a
  horizon of 0.2 s a cube that comes to rest sinks only about g·h² per step into the table. Every experiment
  gets its own copy of θ in the batch, so one backward pass gives each experiment's own gradient (the
  optimiser sums them; the intervals need them apart).
* **Minibatches.** Adam over minibatches of ``batch`` experiments (a new permutation every epoch), the step size
  decaying by a cosine to a twentieth: one compiled program of ``batch`` experiments serves every step, the final
  passes and the intervals, whatever N is (a smaller set is padded, the padding weighed 0). Bounds by transform, θ =
  lo + (hi − lo)·sigmoid(z). Adam's last iterate carries its minibatches' noise and stops short where the loss is
  flat, so the fit ends with at most ``newton_steps`` (:data:`NEWTON_TRIALS`) trials, each a pass over the whole set
  (:func:`_refine`). Their model is the mean Hessian of a random sample of :data:`HESSIAN_SAMPLE` experiments (as
  below), each coordinate differenced *downhill*: where that coordinate's mean gradient changes sign over the span,
  the minimum along it lies within the span and the model's curvature says where. Where it keeps its sign (the
  real cubes' restitution, whose loss falls nearly linearly over 0.3 toward its bound 0 with a ripple from
  stick–slip and impact switches), the curvature over one span is that ripple's, of either sign, and a model step
  along it goes wherever the ripple points; such a coordinate first takes *sign steps*, :data:`SIGN_FIRST` spans
  and doubling while its full gradient keeps its sign, until the gradient turns (at a step taken or refused: the
  minimum along it is then within the step, and the Newton steps take it) or a bound stops it; a refused step
  where no gradient turned halves them all. Then *trust-region Newton steps* minimise the quadratic model within a
  radius of :data:`TRUST_SPANS` spans at first (the distance over which the model was measured), grown after an
  accepted step and shrunk after a refused one, the model corrected along each step, taken or refused, by the
  secant it measured; a parameter on its bound whose gradient points out of the bounds is held there, so is one
  along which the model, where the Newton steps start, has no curvature (a rough or flat misfit: the sign steps
  took it as far as its gradient's sign said, and a falling model would send every trial to the radius), and a step
  below a tenth of the estimate's standard error (from the same model and the experiments' gradients) ends them.
  A pass over all experiments is what such a fit pays for: one for the gradients at Adam's estimate, p over the
  sample for the model Hessian (again where sign steps moved), one per trial, and p for every experiment's Hessian
  at the estimate (the intervals). The guesses' loss is measured on the first minibatch only (``loss_at_guess``, beside
  the estimate's loss on the same experiments), not by another pass.
* **Intervals from the scatter between experiments.** θ̂ solves Σᵢ gᵢ(θ) = 0 (gᵢ the gradient of
  experiment i's loss). Left out, experiment i would move the estimate to θ̂₋ᵢ ≈ θ̂ − (Σ_{j≠i} Hⱼ)⁻¹ Σ_{j≠i} gⱼ
  (one Newton step on the others; Hⱼ experiment j's Hessian), and the delete-one jackknife over experiments,
  cov(θ̂) = (N − 1)/N Σᵢ (θ̂₋ᵢ − mean)², is the estimate's covariance; the 95 % interval is θ̂ ± t·σ with
  Student's t for N − 1 degrees of freedom. It holds whatever makes the experiments differ (tracking noise,
  start errors, a model that is not the cube), unlike an interval built on the noise of one record. When all
  experiments weigh alike (equal Hᵢ) it is the cluster-robust ("sandwich") covariance H̄⁻¹ V H̄⁻¹ / N, V the
  sample covariance of the gᵢ; when a few experiments carry most of the information (the tosses whose impacts
  tell the restitution), the sandwich, which estimates V from the very scatter those few dominate, is too
  narrow for tens of experiments, and the jackknife's left-out estimates are what widen it. A parameter held on
  its bound stays fixed in the left-out estimates (:func:`_intervals`), and so does one the experiments do not
  determine together: where the summed Hessian, of all experiments or of all but one, has no curvature along
  it, a left-out estimate is not defined, and the parameter gets no interval but the reason, naming the
  experiments that alone carry its curvature (:func:`_undetermined`). Hᵢ come from differences of the gᵢ over
  a span of :data:`HESSIAN_SPAN` of each bound's width, one coordinate at a time (toward the bounds' interior;
  the model's, differenced downhill, serve when they are every experiment's at the estimate): the misfit is only
  piecewise smooth in μ (stick–slip switches), so the Hessian is the slope over that span, not at a point. The
  Newton steps' stop rule, which has no Hᵢ, takes the standard error from the sandwich with the model's mean
  Hessian.
* **A parameter the Hessians cannot determine: its profile, bootstrapped.** Where the loss along a parameter is
  rough at the scale of a span (the real cubes' restitution near 0: every bounce, however small, changes which
  vertices strike next), the summed Hessians have no curvature along it and the jackknife no interval. Such a
  parameter is profiled instead (:func:`_profile`): every experiment's loss on a grid of spans along it, the others
  held at the estimate (forward runs only, no gradients). The estimate moves to the grid point of lowest mean loss,
  and the others take Newton steps from there with it held, their intervals taken where those end. Its 95 % interval
  is the 2.5–97.5 % range of a bootstrap over experiments: resampled with replacement, each resample's own lowest
  grid point. That needs no smoothness, only the experiments' losses, and shows the scatter between them as the
  jackknife does for the smooth parameters; its resolution is the grid's (a span, refined where the experiments
  agree within a few spans), and it leaves out what re-fitting the others along the profile would add. ``profiles``
  in the result holds the grid and its mean loss.
* **The whole machine.** Every device JAX sees runs its share of each minibatch and pass (``jaxcontact identify``
  asks XLA for one host device per core, as ``jaxcontact mc`` does); the experiments are independent, so the
  results do not depend on the device count.
* **The population's spread.** One Newton step per experiment from the shared estimate,
  θᵢ = θ̂ − Hᵢ⁻¹ gᵢ, estimates the parameters each experiment alone would prefer; experiments whose Hᵢ is not
  positive definite (a toss that never slides says nothing about μ) are counted apart. Their median and
  percentiles describe how much μ and ε vary from toss to toss, which the interval of the shared value does
  not. For a profiled parameter, each experiment's own lowest point on the profile takes that place (experiments
  whose loss hardly changes along it are counted apart).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from scipy import special

from jaxcontact.experiments import Experiments, uniform_step
from jaxcontact.prediction import OFFSET, measured_scheme
from jaxcontact.prediction import starts as experiment_starts
from jaxcontact.simulate import check_scheme, simulate
from jaxcontact.spatial import rotations
from jaxcontact.studies.identify import _to_theta, _to_z
from jaxcontact.studies.runner import SplitProgram

# Parameters of the measurement rather than the model, with their default bounds (m).
OBSERVATION_PARAMS = {OFFSET: (-0.01, 0.01)}
# The span of the differences of the experiments' gradients that give their Hessians: this share of each bound's
# width.
HESSIAN_SPAN = 2e-2
# Adam's steps over minibatches before the Newton steps on all experiments: the Newton steps take the estimate
# the rest of the way at a pass each, so Adam only brings it near.
ADAM_STEPS = 40
# The Newton steps' model Hessian is the mean over a random sample of this many experiments (all of them when
# there are fewer); the intervals take every experiment's at the estimate.
HESSIAN_SAMPLE = 128
# A coordinate the model does not bracket first moves by this many spans, doubling while its gradient keeps its
# sign: the span's own gradients did not change sign, so the minimum along it is farther.
SIGN_FIRST = 2
# The first Newton step's trust radius, in spans: the model was measured over one.
TRUST_SPANS = 4
# A parameter the experiments' Hessians do not determine is profiled (:func:`_profile`): every experiment's loss on
# a grid of this many spans either side of the estimate, extended by as many again (at most PROFILE_EXTENSIONS
# times) while the bootstrap's estimates reach the grid's end short of a bound.
PROFILE_SPANS = 5
PROFILE_EXTENSIONS = 3
# Where fewer than PROFILE_RESOLVED grid points lie in the bootstrap's interval (the experiments agree within a
# few spans), the grid is refined about its lowest point, the spacing divided by PROFILE_REFINE_BY, at most
# PROFILE_REFINEMENTS times; an interval still that narrow is widened by a spacing either side (the grid's
# resolution).
PROFILE_RESOLVED = 5
PROFILE_REFINE_BY = 4
PROFILE_REFINEMENTS = 2
# Resamples of the experiments in the profile's bootstrap.
BOOTSTRAP = 2000
# At most so many trials (sign steps and Newton steps), a pass over all experiments each; the stop rule (a step
# below a tenth of the standard error) ends a fit that has converged before, so the limit binds only where the
# model is poor and the secant corrections take the steps there one by one.
NEWTON_TRIALS = 10


class Segments(NamedTuple):
    """The fitted part of each experiment: starts q0 (N, 7), u0 (N, 6), measured position (N, H, 3) and
    quaternion_wxyz (N, H, 4) at the first H samples, mask (N, H) of the valid ones, and the sampling step."""

    q0: np.ndarray
    u0: np.ndarray
    position: np.ndarray
    quaternion: np.ndarray
    mask: np.ndarray
    sample_dt: float

    @property
    def n(self) -> int:
        return int(self.q0.shape[0])

    def take(self, idx) -> Segments:
        """The experiments at ``idx``."""
        return Segments(
            self.q0[idx], self.u0[idx], self.position[idx], self.quaternion[idx], self.mask[idx], self.sample_dt
        )


def segments(model, experiments: Experiments, horizon: int) -> Segments:
    """Starts and the first ``horizon`` samples of every experiment (fewer where one is shorter)."""
    if not isinstance(horizon, int) or horizon < 2:
        raise ValueError(f"horizon = {horizon!r} must be an int >= 2 (samples fitted per experiment)")
    q0, u0, _ = experiment_starts(model, experiments)
    width = min(horizon, experiments.mask.shape[1])
    return Segments(
        q0,
        u0,
        np.nan_to_num(experiments.measured["position"][:, :width]),
        np.nan_to_num(experiments.measured["quaternion_wxyz"][:, :width], nan=0.5),
        experiments.mask[:, :width],
        uniform_step(experiments),
    )


def pose_error2(q_sim, position, quaternion, offset, half_extent):
    """e² per sample (module docstring): q_sim (…, 7), measured position (…, 3) and quaternion (…, 4)."""
    lift = jnp.asarray(offset, q_sim.dtype)[..., None] * jnp.array([0.0, 0.0, 1.0], q_sim.dtype)
    dp = q_sim[..., :3] + lift - position
    rel = jax.vmap(rotations.multiply)(
        rotations.conjugate(quaternion.reshape(-1, 4)), q_sim[..., 3:7].reshape(-1, 4)
    ).reshape(quaternion.shape)
    # |vec(q_meas* ⊗ q_sim)| = sin(θ/2); (2 a sin(θ/2))² ≈ (a θ)², the same for q and −q
    return jnp.sum(dp**2, axis=-1) + (2.0 * half_extent) ** 2 * jnp.sum(rel[..., 1:] ** 2, axis=-1)


def pseudo_huber(e2, scale):
    """s²(√(1 + e²/s²) − 1): e²/2 for small e, s·e for large."""
    return scale**2 * (jnp.sqrt(1.0 + e2 / scale**2) - 1.0)


class ExperimentsFit(NamedTuple):
    """A joint fit over experiments (names in fit order).

    estimates, std, interval95: by name (std and intervals cluster-robust over experiments, NaN where the
    mean Hessian is not positive definite); covariance (p, p) the same, in fit order; population: by name,
    the per-experiment one-step estimates' median, p10, p90 and how many experiments could be estimated;
    interval_notes: by name, why a parameter has no interval (the experiments do not determine it together);
    profiles: by name, the parameters whose interval comes from a bootstrap of their profile instead (the
    Hessians do not determine them; :func:`_profile`): its grid, mean loss along it, interval and standard error;
    loss_history / param_history per optimiser step (minibatch losses); loss: mean loss over all fitted
    experiments; loss_at_guess / loss_first_batch: mean loss at the guesses / at the estimate over the first
    minibatch's experiments (all of them when N ≤ batch: a pass over all at the guesses would cost a pass);
    experiment_loss (N,); q (N, H, 7) simulated at the estimate (the offset added to z); error (N, H) the
    pose error e (m); experiment_estimates (N, p) the one-step estimates (NaN where not estimable); wall_time
    s; settings: what reproduces the fit.
    """

    estimates: dict
    std: dict
    interval95: dict
    covariance: np.ndarray
    population: dict
    interval_notes: dict
    profiles: dict
    loss_history: np.ndarray
    param_history: np.ndarray
    loss: float
    loss_at_guess: float
    loss_first_batch: float
    experiment_loss: np.ndarray
    q: np.ndarray
    error: np.ndarray
    experiment_estimates: np.ndarray
    wall_time: float
    settings: dict

    def to_json(self) -> dict:
        """The result as a JSON-serialisable dict (fit.json)."""
        return {
            "estimates": self.estimates,
            "std": self.std,
            "interval95": {k: list(v) for k, v in self.interval95.items()},
            "interval_method": "delete-one jackknife over experiments (one Newton step each), Student's t with "
            "N - 1 degrees of freedom, within the bounds; for a parameter in profiles, the 2.5-97.5 % range of a "
            "bootstrap over experiments of the lowest point of its profile",
            "covariance": {"names": list(self.estimates), "matrix": self.covariance.tolist()},
            "population": self.population,
            "interval_notes": self.interval_notes,
            "profiles": self.profiles,
            "loss": self.loss,
            "loss_at_guess": self.loss_at_guess,
            "loss_first_batch": self.loss_first_batch,
            "iterations": int(len(self.loss_history)),
            "loss_history": self.loss_history.tolist(),
            "wall_time_s": self.wall_time,
            "settings": self.settings,
        }


@functools.lru_cache(maxsize=8)
def _batched_program(system, scheme, names, substeps, sample_dt, horizon, scale, gradients=True):
    """(θ (M, p), params, half extent, segment arrays) → (losses (M,), q (M, H, 7), e² (M, H), gradients (M, p)),
    or the losses alone (``gradients=False``), compiled for every device to run its share of the M experiments;
    cached, so fits of the same shapes (repetitions, training sizes) compile once."""
    offset_at = names.index(OFFSET) if OFFSET in names else None
    physical = [(i, n) for i, n in enumerate(names) if n not in OBSERVATION_PARAMS]

    def losses(thetas, base, half, q0, u0, position, quaternion, mask):
        m = q0.shape[0]
        p = jax.tree.map(lambda x: jnp.broadcast_to(x, (m,) + jnp.shape(x)), base)
        for i, n in physical:
            p[n] = thetas[:, i]
        offset = thetas[:, offset_at] if offset_at is not None else jnp.zeros(m, q0.dtype)
        traj = simulate(
            system,
            p,
            q0.at[:, 2].add(-offset),
            u0,
            dt=sample_dt / substeps,
            n_steps=(horizon - 1) * substeps,
            save_every=substeps,
            start="continue",
            scheme=scheme,
        )
        e2 = pose_error2(traj.q, position, quaternion, offset[:, None], half)
        rho = jnp.where(mask, pseudo_huber(e2, scale), 0.0)
        per = jnp.sum(rho, axis=1) / jnp.maximum(jnp.sum(mask, axis=1), 1)
        return jnp.sum(per), (per, traj.q.at[:, :, 2].add(offset[:, None]), e2)

    grad = jax.value_and_grad(losses, has_aux=True)

    def run(thetas, base, half, q0, u0, position, quaternion, mask):
        if not gradients:
            return (losses(thetas, base, half, q0, u0, position, quaternion, mask)[1][0],)
        (_, (per, q, e2)), g = grad(thetas, base, half, q0, u0, position, quaternion, mask)
        return per, q, e2, g

    # every device its share of the experiments (the parameters and the body's size are the same for all)
    return SplitProgram(run, (True, False, False, True, True, True, True, True), desc="the fit")


def _chunks(n: int, size: int):
    """Index arrays of ``size`` covering 0..n−1, the last padded by repeating index 0 (and how many are real)."""
    for first in range(0, n, size):
        idx = np.arange(first, min(first + size, n))
        yield np.concatenate([idx, np.zeros(size - idx.size, int)]), idx.size


def fit_experiments(
    model,
    experiments: Experiments,
    fit_names,
    guesses: dict,
    bounds: dict,
    *,
    horizon: int = 100,
    substeps: int = 10,
    scheme=None,
    steps: int = ADAM_STEPS,
    batch: int = 32,
    learning_rate: float = 0.1,
    scale: float = 0.01,
    newton_steps: int = NEWTON_TRIALS,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> ExperimentsFit:
    """Fit ``fit_names`` (model parameters and :data:`OBSERVATION_PARAMS`) shared by all experiments.

    guesses / bounds by name; horizon: samples fitted per experiment; substeps: steps per sample; scheme: the
    stepping scheme (default: identify's located impacts without projection, with the forward runs' solve);
    steps: Adam steps over minibatches of ``batch`` experiments; newton_steps: at most so many trials (sign
    and trust-region Newton steps) on all experiments after them (each a pass over all); scale: the robust
    loss's s (m); progress(line) after every step. See the module docstring for what each choice does.
    """
    began = time.perf_counter()
    names = tuple(fit_names)
    if not names:
        raise ValueError("fit_names is empty: name at least one parameter to fit")
    for n in names:
        if n not in model.params and n not in OBSERVATION_PARAMS:
            raise ValueError(
                f"fit parameter {n!r} is neither a parameter of {model.name} ({sorted(model.params)}) nor a "
                f"measurement parameter ({sorted(OBSERVATION_PARAMS)})"
            )
        lo, hi = bounds[n]
        if not lo < float(guesses[n]) < hi:
            raise ValueError(f"guess {n} = {guesses[n]} must lie strictly inside its bounds ({lo}, {hi})")
    for label, value in (("steps", steps), ("batch", batch), ("substeps", substeps)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{label} = {value!r} must be a positive int")
    if not isinstance(newton_steps, int) or newton_steps < 0:
        raise ValueError(f"newton_steps = {newton_steps!r} must be an int >= 0")
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale = {scale} must be a finite length > 0 (m)")
    if scheme is None:
        scheme = measured_scheme(model)
    check_scheme(scheme, model.system, model.name)
    if "reverse" not in scheme.differentiation_modes:
        raise ValueError(f"the {scheme.name} scheme with these options has no reverse-mode gradients")
    scheme = scheme.without_diagnostics()
    say = progress or (lambda line: None)

    seg = segments(model, experiments, horizon)
    n, width = seg.n, seg.mask.shape[1]
    size = batch  # one compiled width for any N: a shorter set is padded, the padding weighed 0
    lo = np.array([bounds[k][0] for k in names], float)
    hi = np.array([bounds[k][1] for k in names], float)

    # the fit's program and the losses alone (the profiles'); each compiles at its first call
    programs = {
        g: _batched_program(model.system, scheme, names, substeps, seg.sample_dt, width, float(scale), g)
        for g in (True, False)
    }

    base = {k: np.asarray(v, float) for k, v in model.params.items()}
    half = float(np.mean([float(model.params[k]) for k in ("half_x", "half_y", "half_z")]))

    def evaluate(theta, idx, gradients=True):
        """The experiments ``idx`` (at most ``size``) at θ (p,): losses, q, e², gradients (or the losses alone)."""
        run = programs[gradients]
        wide = -(-size // run.devices) * run.devices  # the batch, padded to a multiple of the devices sharing it
        part = seg.take(np.concatenate([idx, np.full(wide - idx.size, idx[0])]))
        rows = np.broadcast_to(np.asarray(theta, float), (wide, len(names)))
        got = run(rows, base, half, part.q0, part.u0, part.position, part.quaternion, part.mask)
        return [a[: idx.size] for a in got]

    def full_pass(theta, which=None, gradients=True):
        """The experiments ``which`` (default: all) at one shared θ (p,): their losses, q, e², gradients (or the
        losses alone)."""
        which = np.arange(n) if which is None else which
        out = None
        for pos, real in _chunks(which.size, size):
            got = evaluate(theta, which[pos], gradients)
            out = out or [np.empty((which.size,) + a.shape[1:]) for a in got]
            for o, a in zip(out, got):
                o[pos[:real]] = a[:real]
        return out

    say(
        f"compiling the fit: {size} experiments at a time, {(width - 1) * substeps} steps each, gradients by "
        "reverse mode through the contacts (about a minute on a laptop CPU)"
    )
    theta0 = np.array([float(guesses[k]) for k in names])
    z = jnp.asarray(_to_z(jnp.asarray(theta0), lo, hi))
    schedule = optax.cosine_decay_schedule(learning_rate, steps, alpha=0.05)
    opt = optax.adam(schedule)
    state = opt.init(z)
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    losses, params = [], []
    cursor = 0
    for k in range(steps):
        if n <= size:
            idx, real = next(_chunks(n, size))
        else:
            if cursor + size > n:
                order, cursor = rng.permutation(n), 0
            idx, real = order[cursor : cursor + size], size
            cursor += size
        theta = np.asarray(_to_theta(z, lo, hi))
        per, _, _, g = evaluate(theta, idx)
        loss = float(np.mean(np.asarray(per)[:real]))
        if k == 0:  # the guesses' loss, on the first minibatch's experiments
            guess_batch, loss_at_guess = idx[:real], loss
        grad_theta = np.mean(np.asarray(g)[:real], axis=0)
        grad_z = grad_theta * (hi - lo) * np.asarray(jax.nn.sigmoid(z) * (1.0 - jax.nn.sigmoid(z)))
        grad_z = np.where(np.isfinite(grad_z), grad_z, 0.0)
        updates, state = opt.update(jnp.asarray(grad_z), state, z)
        z = optax.apply_updates(z, updates)
        losses.append(loss)
        params.append(theta)
        say(
            f"step {k + 1:3d}/{steps}  minibatch loss {loss:.4g}  "
            + "  ".join(f"{nm}={v:.5g}" for nm, v in zip(names, theta))
            + f"  ({time.perf_counter() - began:.0f} s)"
        )
    theta = np.asarray(_to_theta(z, lo, hi))

    say("passes over every experiment: the gradients, the Hessians (differences of the gradients), Newton steps")
    first = full_pass(theta)
    say(f"pass at Adam's estimate: mean loss {np.mean(first[0]):.4g} ({time.perf_counter() - began:.0f} s)")
    sample = np.sort(rng.permutation(n)[: min(n, HESSIAN_SAMPLE)])

    def told(line):
        say(f"{line} ({time.perf_counter() - began:.0f} s)")

    theta, (per, q, e2, g), hess, status, trials = _refine(
        full_pass, theta, first, names, lo, hi, sample, newton_steps, told
    )
    theta, (per, q, e2, g), cov, interval, population, own, notes, profiles, left, status = _conclude(
        full_pass, theta, (per, q, e2, g), hess, names, lo, hi, status, rng, told, sample, newton_steps
    )
    return ExperimentsFit(
        {k: float(v) for k, v in zip(names, theta)},
        {k: float(np.sqrt(max(cov[i, i], 0.0))) for i, k in enumerate(names)},
        interval,
        cov,
        population,
        notes,
        {
            k: {key: v[key] for key in ("estimate", "interval95", "std", "grid", "mean_loss")}
            for k, v in profiles.items()
        },
        np.asarray(losses),
        np.asarray(params),
        float(np.mean(per)),
        loss_at_guess,
        float(np.mean(per[guess_batch])),
        per,
        q,
        np.sqrt(np.maximum(e2, 0.0)),
        own,
        time.perf_counter() - began,
        {
            "horizon_samples": width,
            "substeps": substeps,
            "step_s": seg.sample_dt / substeps,
            "batch": size,
            "steps": steps,
            "learning_rate": learning_rate,
            "loss_scale_m": scale,
            "seed": seed,
            "hessian_span": HESSIAN_SPAN,
            "newton_steps": newton_steps,
            "newton_trials": trials,
            "newton_status": status,
            "newton_step_left": {k: float(v) for k, v in zip(names, left) if np.isfinite(v)},
            "guesses": {k: float(v) for k, v in zip(names, theta0)},
            "bounds": {k: [float(a), float(b)] for k, a, b in zip(names, lo, hi)},
            "scheme": scheme.config(),
            "experiments": n,
        },
    )


def _inward(theta, lo, hi):
    """Per parameter +1 or −1: the direction from θ along which a span stays inside the bounds (+1 where both
    do)."""
    return np.where(theta + HESSIAN_SPAN * (hi - lo) <= hi, 1.0, -1.0)


def _held(theta, grad, lo, hi):
    """The parameters on a bound whose mean gradient points out of the bounds: held there (projected Newton: a
    step through the bound would be clipped, and the rest of it would follow a model that assumed it)."""
    return ((theta <= lo) & (grad > 0)) | ((theta >= hi) & (grad < 0))


def _difference_hessians(full_pass, theta, g, span, toward, columns=None, which=None):
    """The Hessians of the experiments ``which`` (default all; g (m, p) their gradients at θ): differences of
    their gradients over ``span`` from θ, one coordinate at a time in the direction ``toward`` (±1 each), for
    the parameters ``columns`` (default all; the others' rows and columns 0), symmetrised; and the mean
    gradient at each differenced point, by column."""
    p = theta.size
    columns = range(p) if columns is None else columns
    h, moved_mean, done = np.zeros(g.shape + (p,)), {}, np.zeros(p, bool)
    for j in columns:
        other = theta + toward[j] * span[j] * np.eye(p)[j]
        moved = full_pass(other, which)[3]
        h[:, :, j] = (moved - g) / (toward[j] * span[j])
        moved_mean[j], done[j] = moved.mean(axis=0), True
    return 0.5 * (h + np.swapaxes(h, 1, 2)) * np.outer(done, done), moved_mean


def _refine(full_pass, theta, first, names, lo, hi, sample, budget, say, fixed=None):
    """From Adam's estimate θ to the optimum of all experiments, in at most ``budget`` passes over them (module
    docstring): sign steps along the parameters the model does not bracket, then trust-region Newton steps.

    full_pass(θ, which=None) → (losses, q, e², gradients) of the experiments ``which`` (default all); first:
    full_pass(θ); sample: the experiments whose mean Hessian is the model; fixed: parameters held where θ has
    them (a profiled one). Returns θ, full_pass(θ), every
    experiment's Hessian at θ when the model's sample is all of them and still holds there (else None), the
    status and the passes used."""
    n, p = first[3].shape
    fixed = np.zeros(p, bool) if fixed is None else np.asarray(fixed, bool)
    span, unit = HESSIAN_SPAN * (hi - lo), hi - lo  # the trust region and the secant in shares of the widths

    def model_at(theta, g):
        """The sample's Hessians over the free parameters, each coordinate differenced downhill; whether they
        cover every parameter; which parameters they bracket (the sample's mean gradient changes sign over the
        span, or a bound is nearer than the span downhill)."""
        free = ~_held(theta, g.mean(axis=0), lo, hi) & ~fixed
        mean_g = g[sample].mean(axis=0)
        downhill = np.where(mean_g > 0, -1.0, 1.0)
        end = theta + downhill * span
        toward = np.where((end >= lo) & (end <= hi), downhill, _inward(theta, lo, hi))
        h, moved_mean = _difference_hessians(full_pass, theta, g[sample], span, toward, np.flatnonzero(free), sample)
        say(f"Hessians of {sample.size} experiments")
        brackets = np.array(
            [j not in moved_mean or toward[j] != downhill[j] or moved_mean[j][j] * mean_g[j] <= 0 for j in range(p)]
        )
        return h, bool(free.all()), brackets

    def report(kind, trial, tried):
        say(kind + "  ".join(f"{nm}={v:.5g}" for nm, v in zip(names, trial)) + f"  mean loss {np.mean(tried[0]):.4g}")

    got = first
    hess, complete, brackets = model_at(theta, got[3])
    model_h, at = hess.mean(axis=0) * np.outer(unit, unit), theta
    grad = got[3].mean(axis=0)
    moving = ~_held(theta, grad, lo, hi) & ~brackets & ~fixed
    step, trials = SIGN_FIRST * span, 0
    if moving.any():
        say("sign steps for " + ", ".join(nm for nm, m in zip(names, moving) if m) + " (not bracketed by the span)")
    while moving.any() and trials < budget:
        trial = theta.copy()
        trial[moving] = np.clip(theta[moving] - np.sign(grad[moving]) * step[moving], lo[moving], hi[moving])
        trials += 1
        tried = full_pass(trial)
        accepted = np.mean(tried[0]) < np.mean(got[0])
        report("sign step: " if accepted else "sign step refused (the loss rose): ", trial, tried)
        new_grad = tried[3].mean(axis=0)
        turned = moving & (np.sign(new_grad) != np.sign(grad))  # the minimum along it lies within this step
        if not accepted:
            # a refused step's gradients still say which coordinates overshot: they are bracketed and left to
            # the Newton steps, the others try the same step again; where none turned, every step halves
            if turned.any():
                moving &= ~turned
            else:
                step = np.where(moving, step / 2, step)
                moving &= step >= span  # the minimum lies within a span along it: the model resolves it
            continue
        theta, got = trial, tried
        moving &= ~turned & ~_held(theta, new_grad, lo, hi)
        grad, step = new_grad, 2 * step
    if np.any(theta != at) and trials < budget:  # the sign steps moved: the model afresh where they ended
        hess, complete, _ = model_at(theta, got[3])
        model_h, at = hess.mean(axis=0) * np.outer(unit, unit), theta

    # Trust-region Newton steps: each minimises the quadratic model within a radius (shares of the bounds'
    # widths; at first a few spans, the distance over which the model was measured), grown after an accepted step
    # and shrunk after a refused one (the loss rose); every step, taken or refused, corrects the model along itself
    # by the secant it measured (Powell's symmetric update) instead of p more passes. The model's Hessian is the
    # gradients' slope over the span, not at a point: the misfit is piecewise smooth and need not be convex there.
    # A parameter along which the model has no curvature (the misfit is rough or flat there; the sign steps
    # have already taken it as far as its gradient's sign said) is held: a step along a falling direction of
    # the model goes to the trust radius whatever the loss does, and the trials would be spent there.
    radius, status = TRUST_SPANS * HESSIAN_SPAN, "not converged: the trials ran out"
    flat = np.zeros(p, bool)
    if np.isfinite(model_h).all():  # over the parameters not fixed (a fixed one's row was not differenced)
        flat[~fixed] = _flat(model_h[np.ix_(~fixed, ~fixed)])
    if flat.any():
        say("Newton steps hold " + ", ".join(nm for nm, f in zip(names, flat) if f) + " (no curvature along it)")
    while True:
        g = got[3]
        grad_u = g.mean(axis=0) * unit
        free = ~_held(theta, grad_u, lo, hi) & ~flat & ~fixed
        if not free.any():
            status = "every parameter held " + (
                "on its bound" if not flat.any() else "(on its bound or without curvature)"
            )
            break
        step_u = _trust_step(model_h[np.ix_(free, free)], grad_u[free], radius)
        move = np.zeros(p)
        move[free] = unit[free] * step_u
        trial = np.clip(theta + move, lo, hi)
        taken = trial - theta
        if np.all(np.abs(taken) < _resolution(model_h, g * unit, free) * unit):
            within = np.linalg.norm(step_u) < radius * (1 - 1e-9)
            status = "converged" if within else "stalled: refused steps shrank the trust region below the resolution"
            break
        if trials >= budget:
            break
        trials += 1
        tried = full_pass(trial)
        accepted = np.mean(tried[0]) < np.mean(got[0])
        report("Newton step: " if accepted else "Newton step refused (the loss rose): ", trial, tried)
        # the gradient's change over the step is measured whether or not the step is taken
        change = np.where(fixed, 0.0, (tried[3].mean(axis=0) - g.mean(axis=0)) * unit)  # a fixed one keeps no row
        model_h = _secant(model_h, taken / unit, change)
        size_taken = float(np.linalg.norm(taken / unit))
        if not accepted:
            radius = size_taken / 4
            continue
        theta, got = trial, tried
        radius = max(radius, 2 * size_taken)
    say(f"Newton steps: {status} after {trials} passes (a step below a tenth of the standard error ends them)")
    valid = sample.size == n and complete and np.all(np.abs(theta - at) <= span)
    return theta, got, hess if valid else None, status, trials


def _conclude(full_pass, theta, got, hess, names, lo, hi, status, rng, say, sample=None, budget=NEWTON_TRIALS):
    """The intervals at the fit's estimate θ (``got`` = full_pass(θ); ``hess`` every experiment's Hessian there,
    or None to difference them): the jackknife's (:func:`_intervals`), and for a parameter the Hessians do not
    determine, a bootstrap of its profile (:func:`_profile`), which moves the estimate to the profile's lowest
    mean loss; the others then take Newton steps from there with it held (:func:`_refine` over the model's
    ``sample`` of experiments, at most ``budget`` trials) and their gradients and Hessians are taken where those
    end. Returns θ, full_pass(θ), the covariance, intervals, population, per-experiment estimates, notes,
    profiles, the Newton step left and the status (the Newton steps' after a move)."""
    per, q, e2, g = got
    n, theta, names_ = g.shape[0], np.array(theta, float), np.asarray(names)
    if hess is None:
        hess = _difference_hessians(full_pass, theta, g, HESSIAN_SPAN * (hi - lo), _inward(theta, lo, hi))[0]
        say(f"Hessians of {n} experiments")
    held = _held(theta, g.mean(axis=0), lo, hi)
    cov, interval, population, own, notes = _intervals(names, theta, g, hess, lo, hi, held)
    profiles = {}
    for k in list(notes):  # what the Hessians cannot say of a parameter, its profile over the experiments can
        j = names.index(k)
        say(f"{k}: {notes[k]}; profiling it instead")
        profiles[k] = _profile(lambda t: full_pass(t, gradients=False)[0], theta, j, per, lo, hi, rng, say)
    moved = {k: v for k, v in profiles.items() if v["estimate"] != theta[names.index(k)]}
    profiled = np.isin(names_, list(profiles))
    if moved:  # a lower loss on the profile: the others' optimum there, their gradients and Hessians
        for k, v in moved.items():
            theta[names.index(k)] = v["estimate"]
        per, q, e2, g = full_pass(theta)
        say(f"pass at the profiles' estimate: mean loss {np.mean(per):.4g}")
        if not profiled.all():
            sample = np.arange(n) if sample is None else sample
            theta, (per, q, e2, g), _, status, _ = _refine(
                full_pass, theta, (per, q, e2, g), names, lo, hi, sample, budget, say, fixed=profiled
            )
        held = _held(theta, g.mean(axis=0), lo, hi)
        hess = _difference_hessians(
            full_pass, theta, g, HESSIAN_SPAN * (hi - lo), _inward(theta, lo, hi), np.flatnonzero(~(held | profiled))
        )[0]
        say(f"Hessians of {n} experiments")
    fixed = held | profiled
    if profiles:
        cov, interval, population, own, notes = _intervals(names, theta, g, hess, lo, hi, fixed)
        for k, v in profiles.items():
            j = names.index(k)
            interval[k], population[k], own[:, j] = v["interval95"], v["population"], v["own"]
            cov[j, :] = cov[:, j] = 0.0
            cov[j, j] = v["std"] ** 2
            notes.pop(k, None)
    left = _step_left(hess, g, ~fixed & ~np.isin(names_, list(notes)))
    if moved:
        status += " (" + ", ".join(moved) + " from " + ("its" if len(moved) == 1 else "their") + " profile)"
    return theta, (per, q, e2, g), cov, interval, population, own, notes, profiles, left, status


def _profile(losses_at, theta, j, per, lo, hi, rng, say) -> dict:
    """Parameter j of θ on a grid, the others held at θ: every experiment's loss at each point (``losses_at(θ)``
    → (N,), ``per`` those at θ), the grid point with the lowest mean loss (the estimate), and a bootstrap over the
    experiments: :data:`BOOTSTRAP` resamples with replacement, each giving the grid point its own mean loss puts
    lowest. Their 2.5–97.5 % range is the 95 % interval (at the grid's resolution: a span, refined about the
    lowest point where fewer than :data:`PROFILE_RESOLVED` grid points lie in that range, widened by the finest
    spacing where still so), their standard deviation the standard error; each experiment's own lowest point is the
    population. For a parameter whose loss is rough over a span (a restitution whose every value changes which
    vertices strike next), the Hessians' one-step jackknife has nothing to stand on, while the bootstrap needs only
    the losses. The grid is :data:`PROFILE_SPANS` spans either side of θ within the bounds, extended beyond an end
    short of a bound while more than 2.5 % of the resamples put their lowest point there (their interval would be
    cut by the grid); an end still reached after :data:`PROFILE_EXTENSIONS` extensions leaves that side of the
    interval NaN. The profile holds the other parameters at θ, so the interval does not include what their re-fit
    along it would add."""
    span = HESSIAN_SPAN * (hi[j] - lo[j])
    values, losses = [float(theta[j])], [np.asarray(per, float)]

    def add(points):
        for v in np.clip(points, lo[j], hi[j]):
            if min(abs(v - w) for w in values) > 1e-3 * span:
                trial = np.array(theta, float)
                trial[j] = v
                values.append(float(v))
                losses.append(np.asarray(losses_at(trial), float))

    add(theta[j] + span * np.arange(-PROFILE_SPANS, PROFILE_SPANS + 1))
    n = losses[0].size
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=BOOTSTRAP).astype(float)

    def bootstrap():
        order = np.argsort(values)
        grid, table = np.asarray(values)[order], np.stack(losses, axis=1)[:, order]  # (G,), (N, G)
        draws = grid[np.argmin(counts @ table, axis=1)]
        low = grid[0] > lo[j] and np.mean(draws == grid[0]) > 0.025
        high = grid[-1] < hi[j] and np.mean(draws == grid[-1]) > 0.025
        return grid, table, draws, low, high

    for extension in range(PROFILE_EXTENSIONS + 1):
        grid, table, draws, low, high = bootstrap()
        if not (low or high) or extension == PROFILE_EXTENSIONS:
            break
        say(
            f"profile: the bootstrap reaches the grid's end; extending it {'below' if low else ''}"
            f"{' and ' if low and high else ''}{'above' if high else ''}"
        )
        if low:
            add(grid[0] - span * np.arange(1, PROFILE_SPANS + 1))
        if high:
            add(grid[-1] + span * np.arange(1, PROFILE_SPANS + 1))
    spacing = span
    for _ in range(PROFILE_REFINEMENTS):
        inner = np.quantile(draws, [0.025, 0.975], method="inverted_cdf")
        if np.count_nonzero((grid >= inner[0]) & (grid <= inner[1])) >= PROFILE_RESOLVED:
            break
        # the resamples agree to within a spacing: a finer grid about the lowest point resolves their spread
        spacing /= PROFILE_REFINE_BY
        say(f"profile: the bootstrap's interval holds few grid points; a grid of {spacing:.3g} about its lowest")
        add(grid[np.argmin(table.mean(axis=0))] + spacing * np.arange(-PROFILE_SPANS, PROFILE_SPANS + 1))
        grid, table, draws, low, high = bootstrap()
    mean = table.mean(axis=0)
    interval = [float(np.quantile(draws, q, method="inverted_cdf")) for q in (0.025, 0.975)]
    if np.count_nonzero((grid >= interval[0]) & (grid <= interval[1])) < PROFILE_RESOLVED:
        # still within a few spacings: the grid cannot tell more, so the interval takes a spacing on either side
        interval = [max(interval[0] - spacing, float(lo[j])), min(interval[1] + spacing, float(hi[j]))]
    interval = (math.nan if low else interval[0], math.nan if high else interval[1])
    own = grid[np.argmin(table, axis=1)]
    # an experiment whose loss does not change over the grid says nothing of the parameter
    says = np.ptp(table, axis=1) > 1e-3 * np.abs(table).mean(axis=1)
    vals = own[says]
    say(
        f"profile of {grid.size} points over [{grid[0]:.4g}, {grid[-1]:.4g}]: lowest mean loss {mean.min():.4g} at "
        f"{grid[np.argmin(mean)]:.4g}; bootstrap 95 % [{interval[0]:.4g}, {interval[1]:.4g}]"
    )
    return {
        "estimate": float(grid[np.argmin(mean)]) if mean.min() < mean[grid == theta[j]][0] else float(theta[j]),
        "interval95": interval,
        "std": float(np.std(draws)),
        "grid": grid.tolist(),
        "mean_loss": mean.tolist(),
        "own": np.where(says, own, np.nan),
        "population": {
            "median": float(np.median(vals)) if vals.size else math.nan,
            "p10": float(np.percentile(vals, 10)) if vals.size else math.nan,
            "p90": float(np.percentile(vals, 90)) if vals.size else math.nan,
            "experiments": int(says.sum()),
            "not_estimable": int(n - says.sum()),
        },
    }


def _trust_step(h, g, radius):
    """The step s minimising gᵀs + ½ sᵀhs within |s| ≤ radius (h symmetric, not necessarily positive definite):
    s = −(h + λI)⁻¹g with the least λ ≥ 0 that makes h + λI positive definite and s fit the radius."""
    w, v = np.linalg.eigh(h)
    gv = v.T @ g
    scale = max(float(np.max(np.abs(w))), float(np.linalg.norm(g)) / radius, 1e-300)

    def step(lam):
        return -v @ (gv / (w + lam))

    low = max(0.0, -float(w[0])) + 1e-12 * scale
    if np.linalg.norm(step(low)) <= radius:
        if w[0] > 0:
            return step(low)
        # the model falls along the lowest curvature whatever g says there: go to the radius along it
        s = step(low)
        extra = math.sqrt(max(radius**2 - float(s @ s), 0.0))
        return s - math.copysign(extra, float(g @ v[:, 0]) or 1.0) * v[:, 0]
    high = low + 2.0 * scale
    for _ in range(100):  # |step(λ)| falls with λ; bisect it to the radius
        mid = 0.5 * (low + high)
        low, high = (mid, high) if np.linalg.norm(step(mid)) > radius else (low, mid)
    return step(high)


def _resolution(h, g, free):
    """Per parameter, the Newton step below which the fit stops: a tenth of the estimate's standard error from
    the model Hessian h and the experiments' gradients g (N, p), both in shares of the bounds' widths, over the
    free parameters (a thousandth of the width where h is not positive definite there)."""
    out = np.full(g.shape[1], 1e-3)
    cov = _sandwich(h[np.ix_(free, free)], g[:, free])
    if not np.isnan(cov).any():
        out[free] = 0.1 * np.sqrt(np.maximum(np.diag(cov), 0.0))
    return out


def _sandwich(h, g):
    """The cluster-robust covariance H⁻¹ V H⁻¹ / N of the estimate (module docstring): h the mean Hessian, g
    (N, p) the experiments' gradients; NaN where h is not positive definite."""
    n, p = g.shape
    if not _positive_definite(h):
        return np.full((p, p), np.nan)
    centred = g - g.mean(axis=0)
    inv = np.linalg.inv(h)
    return inv @ (centred.T @ centred / max(n - 1, 1)) @ inv / n


def _secant(h, s, y):
    """Powell's symmetric update of h so that h s = y (the gradient's change y over the step s), the least
    change in h's Frobenius norm."""
    r = y - h @ s
    ss = float(s @ s)
    if ss == 0.0:
        return h
    return h + (np.outer(r, s) + np.outer(s, r)) / ss - float(r @ s) * np.outer(s, s) / ss**2


def _jackknife(hess, g):
    """The delete-one jackknife covariance of the estimate over experiments (module docstring): hess (N, p, p)
    and g (N, p) the experiments' Hessians and gradients at θ̂; NaN where a sum of the others' Hessians is not
    positive definite."""
    n, p = g.shape
    others_h = hess.sum(axis=0) - hess
    if n < 2 or not _positive_definite(others_h).all():
        return np.full((p, p), np.nan)
    # each left-out estimate one Newton step from θ̂ on the others' losses (exact for quadratic ones)
    moved = -np.linalg.solve(others_h, (g.sum(axis=0) - g)[..., None])[..., 0]
    centred = moved - moved.mean(axis=0)
    return (n - 1) / n * centred.T @ centred


def _positive_definite(h):
    """(…) booleans: whether each symmetric ``h`` (…, p, p) is finite and positive definite."""
    finite = np.isfinite(h).all(axis=(-2, -1))
    return finite & (np.linalg.eigvalsh(np.where(finite[..., None, None], h, 0.0)) > 0).all(axis=-1)


def _flat(h):
    """(…, p) booleans: the parameters along which the symmetric ``h`` (…, p, p) has no curvature — a
    component of at least 1/3 along one of its non-positive eigen-directions."""
    w, v = np.linalg.eigh(h)  # column j of v the direction of w[j]
    return ((w <= 0)[..., None, :] & (np.abs(v) >= 1 / 3)).any(axis=-1)


def _step_left(hess, g, free):
    """The Newton step that every experiment's Hessian and gradient at the estimate still ask for, over the
    parameters ``free`` (NaN elsewhere, and where their summed Hessian is not positive definite): what a fit
    that did not converge leaves, beside its intervals."""
    step = np.full(g.shape[1], np.nan)
    idx = np.flatnonzero(free)
    h = hess.sum(axis=0)[np.ix_(idx, idx)]
    if idx.size and _positive_definite(h):
        step[idx] = -np.linalg.solve(h, g.sum(axis=0)[idx])
    return step


def _undetermined(hess, lo, hi) -> dict:
    """The parameters the experiments do not determine together, by index, with the reason.

    A parameter is undetermined where a non-positive direction of the summed Hessian, over all experiments or
    over all but one, has a component of at least ``1/3`` along it (the directions measured in the bounds'
    widths): the loss has no minimum along that direction, or only through the experiment left out (its
    curvature then comes from that one experiment, and a jackknife that leaves it out is not defined)."""
    n, p = hess.shape[:2]
    width = np.asarray(hi, float) - np.asarray(lo, float)
    total = hess.sum(axis=0)
    sums = np.concatenate([total[None], total - hess]) * np.outer(width, width)
    if not np.isfinite(sums).all():
        return {}
    along = _flat(sums)  # (N + 1, p): sum k has no curvature along parameter j
    reasons = {}
    for j in range(p):
        if along[0, j]:
            reasons[j] = f"the summed Hessian of all {n} experiments is not positive definite along it"
        elif along[1:, j].any():
            left = np.flatnonzero(along[1:, j])
            listed = ", ".join(str(i) for i in left[:5]) + (f" … ({left.size} in all)" if left.size > 5 else "")
            # positions among the fitted experiments (the caller maps them to its own labels)
            reasons[j] = (
                f"without experiment {listed} of those fitted the others' summed Hessian is not positive definite "
                "along it: its curvature comes from that experiment alone"
                if left.size == 1
                else f"without any one of experiments {listed} of those fitted the others' summed Hessian is not "
                "positive definite along it: its curvature hangs on each of them"
            )
    return reasons


def _intervals(names, theta, g, hess, lo, hi, held=None):
    """Jackknife covariance and 95 % intervals (Student's t with N − 1 degrees of freedom, within the bounds
    ``lo``, ``hi``), the per-experiment one-step estimates' spread, those estimates (N, p), and by name why a
    parameter has no interval.

    Parameters ``held`` on a bound (their gradient points out of the bounds) are kept there when an experiment is
    left out (exact unless that experiment alone turns their gradient), and so are the parameters the experiments
    do not determine together (:func:`_undetermined`: a restitution whose curvature a handful of tosses carry).
    The others' covariance is the jackknife's with those fixed, which needs the others' summed Hessians positive
    definite only over the free parameters. A held parameter's own interval runs from its bound by the
    unconstrained jackknife's spread (NaN where that one is not defined); an undetermined one has none (NaN, and
    the reason); neither has a covariance with the others."""
    n, p = g.shape
    held = np.zeros(p, bool) if held is None else np.asarray(held, bool)
    reasons = _undetermined(hess, lo, hi)
    undetermined = np.isin(np.arange(p), list(reasons)) & ~held
    cov = _jackknife(hess, g)
    fixed = held | undetermined
    if fixed.any():
        free = np.flatnonzero(~fixed)
        conditional = np.zeros((p, p))
        conditional[np.ix_(free, free)] = _jackknife(hess[:, free][:, :, free], g[:, free])
        conditional[held, held] = np.diag(cov)[held]
        conditional[undetermined, :] = conditional[:, undetermined] = np.nan
        cov = conditional
    notes = {names[j]: reasons[j] for j in np.flatnonzero(undetermined)}
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    quantile = float(special.stdtrit(max(n - 1, 1), 0.975))
    # Clipped to the parameter's bounds: an estimate on its bound (a restitution of 0) keeps no values it
    # cannot take.
    interval = {
        k: (float(a if t <= a else max(t - quantile * s, a)), float(b if t >= b else min(t + quantile * s, b)))
        for k, t, s, a, b in zip(names, theta, std, lo, hi)
    }
    for k in notes:
        interval[k] = (math.nan, math.nan)
    population = {}
    # over the parameters whose Hessians were differenced (all, unless some are held for a reason of the caller's)
    m = np.flatnonzero(np.any(hess != 0, axis=(0, 1)))
    sub = hess[:, m][:, :, m]
    ok = _positive_definite(sub)
    own = np.full((n, p), np.nan)
    if ok.any():
        own[np.ix_(ok, m)] = np.clip(theta[m] - np.linalg.solve(sub[ok], g[ok][:, m][..., None])[..., 0], lo[m], hi[m])
    for i, k in enumerate(names):
        vals = own[ok, i]
        population[k] = {
            "median": float(np.median(vals)) if vals.size else math.nan,
            "p10": float(np.percentile(vals, 10)) if vals.size else math.nan,
            "p90": float(np.percentile(vals, 90)) if vals.size else math.nan,
            "experiments": int(ok.sum()),
            "not_estimable": int(n - ok.sum()),
        }
    return cov, interval, population, own, notes
