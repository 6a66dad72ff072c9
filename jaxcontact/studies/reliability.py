"""Failure probability of a limit state: FORM, subset simulation, importance sampling, plain Monte Carlo.

A design fails where the limit state ``g(x) <= 0``; ``x`` holds independent uncertain inputs, each with one
of the marginals of :mod:`jaxcontact.studies.distributions` (uniform, normal, truncnormal, lognormal). Every
method works in standard normal space: ``x = F⁻¹(Φ(u))`` coordinate by coordinate (the Nataf transform of
independent inputs), so ``u ~ N(0, I)`` and ``P_f = P[G(u) <= 0]`` with ``G(u) = g(x(u))``.

* :func:`form` — the design point ``u*`` (the failure point nearest the origin) by the improved HL-RF
  iteration (Zhang & Der Kiureghian 1995: the HL-RF direction with an Armijo step on the merit
  ``½|u|² + c|G|``, all trial steps evaluated in one batched call), the reliability index ``β`` and
  ``P_f ≈ Φ(-β)``. Exact for a limit state linear in ``u``; for a series system (several failure
  modes) it finds one design point and underestimates ``P_f``.
* :func:`sorm` — FORM corrected by the main curvatures of the limit-state surface at ``u*`` (Breitung;
  Hohenbichler & Rackwitz), the Hessian from central differences of the gradient in one batched call.
* :func:`subset_simulation` — Au & Beck (2001): levels of conditional probability ``p0``, each populated by
  modified (component-wise) Metropolis chains started from the previous level's seeds; all chains advance
  in one batched call per step. Its c.o.v. is Au & Beck's, with each level's chain correlation factor γ.
* :func:`importance_sampling` — standard normal samples shifted to the design point, weights
  ``φ(u)/φ(u - u*)``.
* :func:`monte_carlo` — plain sampling of ``u``, the reference the others are checked against.

The limit state is given either per sample, ``g(x) -> scalar`` (a JAX function: it is vmapped and jitted
here, and differentiated for FORM), or batched, ``g(X) -> (n,)`` with ``batched=True`` (e.g. a batched
simulation followed by an outcome; FORM then needs the gradient, from ``value_and_grad(X) -> ((n,), (n, d))``
or, for a pure-JAX batched ``g`` whose rows are independent, from one reverse pass over the batch).

:func:`parse_limit` reads the failure event of a scalar outcome, ``peak_force>2000``, as a :class:`Limit`
whose :meth:`Limit.g` is the limit state of the outcome's values.

Each method returns a :class:`ReliabilityResult`: probability, standard error, c.o.v., number of limit-state
evaluations, and the method's extras; :meth:`ReliabilityResult.to_json` gives plain numbers for a
``summary.json``.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import ndtr, ndtri

from jaxcontact.studies.distributions import Fixed, LogNormal, Normal, TruncNormal, Uniform

# Φ(u) rounds to 0 or 1 in float64 beyond about |u| = 37.5; clipping the probabilities keeps bounded
# marginals (uniform, truncnormal) at their ends instead of producing ±inf through ndtri.
_P_TINY = 1e-300


class ReliabilityResult(NamedTuple):
    """A failure-probability estimate.

    ``probability``: the estimate of ``P[g(x) <= 0]``; ``standard_error`` and ``cov`` (= standard_error /
    probability) its sampling error (FORM, an approximation without sampling error, reports 0 for both);
    ``n_simulations``: evaluations of the limit state it took; ``method``: ``"form"``, ``"subset"``,
    ``"importance"`` or ``"montecarlo"``; ``extras``: the method's own results (see each function).
    """

    probability: float
    standard_error: float
    cov: float
    n_simulations: int
    method: str
    extras: dict

    def to_json(self) -> dict:
        """The result as plain Python numbers, lists and strings for ``json.dumps``; a number that is not finite
        (the c.o.v. of a zero estimate) becomes None, as in the rest of ``summary.json``."""
        out = {
            "method": self.method,
            "probability": _plain(float(self.probability)),
            "standard_error": _plain(float(self.standard_error)),
            "cov": _plain(float(self.cov)),
            "n_simulations": int(self.n_simulations),
        }
        out.update({k: _plain(v) for k, v in self.extras.items()})
        return out


def _plain(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, (np.ndarray, jax.Array)):
        return _plain(np.asarray(v).tolist())
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    return v


# --- the failure event of a scalar outcome -------------------------------------------------------------------

_LIMIT = re.compile(r"^\s*([^<>]*?)\s*(>=|<=|>|<)\s*([^<>=]+?)\s*$")


class Limit(NamedTuple):
    """Failure when a scalar outcome crosses a threshold: ``outcome > threshold`` (``above``) or ``<``.

    :meth:`g` turns outcome values into the limit state (``threshold - y`` above, ``y - threshold`` below), so
    failure is ``g <= 0`` and the threshold itself counts as failure: ``>`` and ``>=`` are one event for a
    continuous outcome; for a count, put the threshold between two integers (``impacts>2.5``).
    """

    outcome: str
    above: bool
    threshold: float

    def g(self, y):
        """The limit state of outcome values ``y`` (any shape; JAX or numpy): positive where safe."""
        return self.threshold - y if self.above else y - self.threshold

    def __str__(self):
        return f"{self.outcome}{'>' if self.above else '<'}{self.threshold!r}"

    def to_json(self) -> dict:
        """The limit for a ``summary.json``: as typed, its outcome and threshold, and the failure event in words."""
        return {
            "limit": str(self),
            "outcome": self.outcome,
            "threshold": self.threshold,
            "failure_when": f"{self.outcome} {'≥' if self.above else '≤'} {self.threshold:g}",
        }


def parse_limit(text: str) -> Limit:
    """Parse ``OUTCOME>VALUE`` or ``OUTCOME<VALUE`` (``>=`` and ``<=`` accepted, the same events), e.g.
    ``peak_force>2000`` or ``final:theta<-0.3``; the outcome is any name without ``<`` or ``>``."""
    m = _LIMIT.match(text)
    if not m or not m.group(1):
        raise ValueError(f"cannot parse limit {text!r}; expected OUTCOME>VALUE or OUTCOME<VALUE, e.g. peak_force>2000")
    name, op, value = m.groups()
    try:
        threshold = float(value)
    except ValueError:
        raise ValueError(f"limit {text!r}: threshold {value!r} is not a number") from None
    if not math.isfinite(threshold):
        raise ValueError(f"limit {text!r}: threshold {value!r} must be finite")
    return Limit(name, op.startswith(">"), threshold)


# --- inputs: marginals and the map from standard normal space --------------------------------------------


def _check_marginals(marginals) -> tuple:
    marginals = tuple(marginals)
    if not marginals:
        raise ValueError("marginals: got none; give one distribution per uncertain input")
    for i, m in enumerate(marginals):
        if isinstance(m, Fixed):
            raise ValueError(
                f"marginals[{i}] = {m} is fixed: a constant takes no dimension of the reliability problem; "
                "pass only the uncertain inputs and hold constants inside g"
            )
        if not isinstance(m, (Uniform, Normal, TruncNormal, LogNormal)):
            raise ValueError(f"marginals[{i}] = {m!r} is not one of uniform, normal, truncnormal, lognormal")
    return marginals


def _marginal_from_u(m, u):
    """x = F⁻¹(Φ(u)) for one marginal, in JAX (differentiable in u)."""
    if isinstance(m, Normal):
        return m.mu + m.sigma * u
    if isinstance(m, LogNormal):
        return jnp.exp(m.mu + m.sigma * u)
    if isinstance(m, Uniform):
        return m.a + (m.b - m.a) * ndtr(u)
    # TruncNormal: the normal's CDF restricted to [Φ(a), Φ(b)] and inverted.
    a, b = (m.lo - m.mu) / m.sigma, (m.hi - m.mu) / m.sigma
    pa, pb = ndtr(a), ndtr(b)
    p = jnp.clip(pa + (pb - pa) * ndtr(u), _P_TINY, 1.0 - 1e-16)
    return jnp.clip(m.mu + m.sigma * ndtri(p), m.lo, m.hi)


def standard_to_physical(marginals: Sequence, u) -> jax.Array:
    """Map standard normal points ``u`` (..., d) to inputs ``x`` (..., d): ``x_i = F_i⁻¹(Φ(u_i))``.

    Pure JAX (jit, vmap and grad go through it). ``marginals``: one distribution per column.
    """
    marginals = _check_marginals(marginals)
    u = jnp.asarray(u)
    if u.shape[-1] != len(marginals):
        raise ValueError(f"u has {u.shape[-1]} columns; the marginals need {len(marginals)}")
    return _physical(marginals, u)


@functools.partial(jax.jit, static_argnums=0)
def _physical(marginals: tuple, u):
    return jnp.stack([_marginal_from_u(m, u[..., i]) for i, m in enumerate(marginals)], axis=-1)


# --- the limit state in standard normal space --------------------------------------------------------------


def _batched_g(g, batched: bool):
    return g if batched else jax.vmap(g)


def _G_batch(g, marginals, batched: bool):
    """U (n, d) -> G(U) (n,) as numpy, jitted when g is a JAX function of one sample."""
    gb = _batched_g(g, batched)
    f = lambda U: gb(standard_to_physical(marginals, U))
    f = jax.jit(f) if not batched else f

    def call(U):
        vals = np.asarray(f(jnp.asarray(U)), dtype=float).reshape(-1)
        if vals.shape[0] != U.shape[0]:
            raise ValueError(f"g returned {vals.shape[0]} values for {U.shape[0]} samples; it must return (n,)")
        bad = ~np.isfinite(vals)
        if bad.any():
            i = int(np.argmax(bad))
            x = np.asarray(standard_to_physical(marginals, U[i]))
            raise ValueError(
                f"g returned {vals[i]} at x = {x.tolist()} ({int(bad.sum())} of {len(vals)} values not finite); "
                "the limit state must be finite everywhere it is evaluated"
            )
        return vals

    return call


def _G_value_and_grad(g, marginals, batched: bool, value_and_grad):
    """U (n, d) -> (G (n,), ∇_u G (n, d)) as numpy."""
    to_x = lambda U: standard_to_physical(marginals, U)
    if value_and_grad is not None:
        # The user's gradient is in x; the chain rule through the diagonal Jacobian of the marginal map.
        def f(U):
            vals, gx = value_and_grad(to_x(U))
            dxdu = jax.jvp(to_x, (U,), (jnp.ones_like(U),))[1]
            return jnp.asarray(vals).reshape(-1), jnp.asarray(gx) * dxdu

    elif batched:
        # Rows of a batched g are independent, so the pullback of a vector of ones gives each row's gradient.
        # A g that JAX can differentiate is one it can trace, so the whole evaluation is jitted.
        @jax.jit
        def f(U):
            vals, pullback = jax.vjp(lambda V: g(to_x(V)).reshape(-1), U)
            return vals, pullback(jnp.ones_like(vals))[0]

    else:
        f = jax.jit(jax.vmap(jax.value_and_grad(lambda u: g(to_x(u)))))

    def call(U):
        vals, grads = f(jnp.asarray(U))
        return np.asarray(vals, float).reshape(-1), np.asarray(grads, float).reshape(U.shape)

    return call


# --- FORM ---------------------------------------------------------------------------------------------------


def form(
    g: Callable,
    marginals: Sequence,
    *,
    batched: bool = False,
    value_and_grad: Callable | None = None,
    u0=None,
    tol: float = 1e-8,
    max_iter: int = 100,
    n_steps: int = 8,
) -> ReliabilityResult:
    """First-order reliability: the design point by the improved HL-RF iteration, ``P_f ≈ Φ(-β)``.

    Args:
        g: the limit state (failure where ``g <= 0``), of one sample ``x (d,) -> scalar`` or, with
            ``batched=True``, of a batch ``X (n, d) -> (n,)``.
        marginals: one distribution of :mod:`~jaxcontact.studies.distributions` per input.
        batched: whether ``g`` takes a batch.
        value_and_grad: optional batched ``X (n, d) -> (g (n,), ∂g/∂x (n, d))``; by default the gradient is
            JAX's, through ``g``.
        u0: the starting point in standard normal space (default the origin, the inputs' medians).
        tol: convergence when ``|G(u)| <= tol·|G(u0)|`` and the alignment residual
            ``|u - (u·α)α| <= tol·max(1, |u|)`` (``α = -∇G/|∇G|``: ``u`` lies on the gradient's line).
        max_iter: iterations at most.
        n_steps: step lengths ``1, ½, ¼, …`` tried at once (one batched evaluation per iteration).

    Returns:
        ReliabilityResult: the estimate; its ``extras``: ``beta`` (signed: negative when the medians fail),
            ``u_star``, ``x_star``, ``alpha`` (unit vector from the origin towards failure at ``u*``),
            ``importance_factors`` (``α²``, summing to 1), ``iterations``, ``converged``, ``g_residual``
            (``|G(u*)|``), ``alignment_residual``, ``g0`` (``G(u0)``).

    Raises:
        ValueError: a gradient of the limit state that is not finite or is zero (a non-differentiable outcome
            such as a count), non-finite values, bad settings.
    """
    marginals = _check_marginals(marginals)
    d = len(marginals)
    if not (isinstance(max_iter, int) and max_iter >= 1):
        raise ValueError(f"max_iter = {max_iter!r} must be an integer >= 1")
    if not (isinstance(n_steps, int) and n_steps >= 1):
        raise ValueError(f"n_steps = {n_steps!r} must be an integer >= 1")
    if not (tol > 0):
        raise ValueError(f"tol = {tol!r} must be > 0")
    u = np.zeros(d) if u0 is None else np.asarray(u0, float).reshape(-1)
    if u.shape != (d,) or not np.all(np.isfinite(u)):
        raise ValueError(f"u0 must be {d} finite numbers; got {u0!r}")
    vg = _G_value_and_grad(g, marginals, batched, value_and_grad)
    steps = 0.5 ** np.arange(n_steps)

    G, grad = _checked(vg, u[None], marginals)
    G, grad = G[0], grad[0]
    g0, n_eval, converged, it = G, 1, False, 0
    scale = max(abs(g0), np.finfo(float).tiny)
    for it in range(1, max_iter + 1):
        if _form_converged(u, G, grad, tol, scale):
            converged, it = True, it - 1
            break
        direction = (grad @ u - G) / (grad @ grad) * grad - u
        # The merit's penalty c must exceed |u|/|∇G| for the direction to descend it (Zhang & Der Kiureghian);
        # using the larger of |u| and |u + d| also lets a full step from the origin onto a linear G pass.
        c = 2.0 * max(np.linalg.norm(u), np.linalg.norm(u + direction)) / np.linalg.norm(grad)
        trials = u[None] + steps[:, None] * direction[None]
        Gt, gradt = vg(trials)
        n_eval += n_steps
        # A trial step where g or its gradient is unusable is not taken; FORM stops by name only when the
        # step it must take is such a point.
        k = _armijo(u, G, grad, c, direction, steps, trials, Gt, _usable(Gt, gradt))
        _refuse_unusable(trials[k], Gt[k], gradt[k], marginals)
        u, G, grad = trials[k], Gt[k], gradt[k]
    else:
        converged = _form_converged(u, G, grad, tol, scale)
    alpha = -grad / np.linalg.norm(grad)
    beta = float(alpha @ u) if converged else float(np.sign(alpha @ u) * np.linalg.norm(u))
    x_star = np.asarray(standard_to_physical(marginals, jnp.asarray(u)))
    extras = {
        "beta": beta,
        "u_star": u,
        "x_star": x_star,
        "alpha": alpha,
        "importance_factors": alpha**2,
        "iterations": it,
        "converged": bool(converged),
        "g_residual": float(abs(G)),
        "alignment_residual": _alignment(u, alpha),
        "g0": float(g0),
    }
    return ReliabilityResult(float(ndtr(-beta)), 0.0, 0.0, n_eval, "form", extras)


def _usable(G, grad) -> np.ndarray:
    """Rows whose value and gradient are finite and whose gradient is not zero."""
    return np.isfinite(G) & np.all(np.isfinite(grad), axis=1) & np.any(grad != 0, axis=1)


def _checked(vg, U, marginals):
    G, grad = vg(U)
    _refuse_unusable(U[0], G[0], grad[0], marginals)
    return G, grad


def _refuse_unusable(u, G, grad, marginals) -> None:
    if _usable(G[None], grad[None])[0]:
        return
    x = np.asarray(standard_to_physical(marginals, jnp.asarray(u))).tolist()
    if not np.isfinite(G):
        raise ValueError(f"g returned {G} at x = {x}; the limit state must be finite where FORM evaluates it")
    if not np.all(np.isfinite(grad)):
        raise ValueError(f"gradient of g at x = {x} is not finite ({grad.tolist()}); FORM needs a gradient")
    raise ValueError(
        f"gradient of g at x = {x} is zero; FORM needs a limit state that varies with its inputs "
        "(an outcome that is piecewise constant, such as a count of impacts, has no usable gradient)"
    )


def _alignment(u, alpha) -> float:
    return float(np.linalg.norm(u - (u @ alpha) * alpha) / max(1.0, np.linalg.norm(u)))


def _form_converged(u, G, grad, tol, scale) -> bool:
    alpha = -grad / np.linalg.norm(grad)
    return abs(G) <= tol * scale and _alignment(u, alpha) <= tol


def _armijo(u, G, grad, c, direction, steps, trials, Gt, usable) -> int:
    """Index of the longest usable trial step meeting Armijo's condition on m(u) = ½|u|² + c|G|.

    Without one: the shortest usable step, else the shortest step.
    """
    merit = lambda v, gv: 0.5 * np.sum(v * v, axis=-1) + c * np.abs(gv)
    slope = (u + c * np.sign(G) * grad) @ direction
    with np.errstate(invalid="ignore"):
        ok = usable & (merit(trials, Gt) - merit(u, G) <= 0.5 * steps * slope)
    if ok.any():
        return int(np.argmax(ok))
    return int(np.flatnonzero(usable)[-1]) if usable.any() else len(steps) - 1


# --- SORM ---------------------------------------------------------------------------------------------------


def sorm(
    g: Callable,
    marginals: Sequence,
    *,
    batched: bool = False,
    value_and_grad: Callable | None = None,
    form_result: ReliabilityResult | None = None,
    step: float = 1e-4,
    **form_options,
) -> ReliabilityResult:
    """Second-order reliability: FORM's ``Φ(-β)`` corrected by the limit-state surface's curvatures at ``u*``.

    The Hessian of ``G`` at the design point is the central difference of its gradient at ``u* ± step·e_j``
    (``2d`` points in one batched call, so any gradient :func:`form` takes serves); projected on the plane
    tangent to the surface and divided by ``|∇G|``, its eigenvalues are the main curvatures ``κ_i``
    (positive where the surface bends away from the origin, shrinking the failure domain). The estimate is
    Hohenbichler & Rackwitz's ``Φ(-β) Π (1 + ψ(β) κ_i)^(-1/2)`` with ``ψ(β) = φ(β)/Φ(-β)``; Breitung's, with
    ``β`` in place of ``ψ``, is reported beside it. Both are asymptotic in ``β`` and exact for a plane.

    Args:
        g, marginals, batched, value_and_grad: as in :func:`form`.
        form_result: a converged :func:`form` result of this problem; by default FORM is run here (with
            ``form_options``) and its evaluations are counted.
        step: the difference step in standard normal space.

    Returns:
        ReliabilityResult: the estimate (no sampling error); its ``extras``: ``beta`` (FORM's),
            ``beta_sorm`` (``-Φ⁻¹(P_f)``), ``curvatures``, ``p_form``, ``p_breitung``, ``u_star``, ``x_star``,
            ``form_simulations`` (0 when ``form_result`` was given).

    Raises:
        ValueError: FORM did not converge, ``β <= 0``, or ``1 + β κ_i <= 0`` (a surface curved so far towards the origin
            that the second-order formulas do not apply).
    """
    marginals = _check_marginals(marginals)
    if not (step > 0 and math.isfinite(step)):
        raise ValueError(f"step = {step!r} must be a finite number > 0")
    if form_result is None:
        form_result = form(g, marginals, batched=batched, value_and_grad=value_and_grad, **form_options)
        n_form = form_result.n_simulations
    else:
        n_form = 0
    if form_result.method != "form" or not form_result.extras["converged"]:
        raise ValueError("SORM needs a converged FORM design point; FORM did not converge (see its residuals)")
    u, beta = np.asarray(form_result.extras["u_star"]), form_result.extras["beta"]
    if not beta > 0:
        raise ValueError(f"SORM needs β > 0 (the medians safe); got β = {beta:.6g}")
    d = len(u)
    vg = _G_value_and_grad(g, marginals, batched, value_and_grad)
    points = np.concatenate([u + step * np.eye(d), u - step * np.eye(d), u[None]])
    G, grads = vg(points)
    for i in range(len(points)):
        _refuse_unusable(points[i], G[i], grads[i], marginals)
    n_eval = n_form + len(points)
    kappa = _curvatures(grads[:d], grads[d : 2 * d], grads[-1], step)
    p_form = float(ndtr(-beta))
    psi = math.exp(-0.5 * beta * beta) / math.sqrt(2 * math.pi) / p_form
    bad = 1.0 + beta * kappa <= 0
    if bad.any():
        raise ValueError(
            f"curvature {kappa[bad][0]:.6g} at the design point gives 1 + β κ = {1 + beta * kappa[bad][0]:.6g} <= 0 "
            f"(β = {beta:.6g}); the second-order formulas need 1 + β κ > 0"
        )
    p = p_form / math.sqrt(float(np.prod(1.0 + psi * kappa)))
    extras = {
        "beta": beta,
        "beta_sorm": float(-ndtri(p)),
        "curvatures": kappa,
        "p_form": p_form,
        "p_breitung": p_form / math.sqrt(float(np.prod(1.0 + beta * kappa))),
        "u_star": u,
        "x_star": form_result.extras["x_star"],
        "form_simulations": n_form,
    }
    return ReliabilityResult(p, 0.0, 0.0, n_eval, "sorm", extras)


def _curvatures(grad_plus, grad_minus, grad, step) -> np.ndarray:
    """Main curvatures of {G = 0} at a point: eigenvalues of the Hessian on the tangent plane over |∇G|."""
    hessian = (grad_plus - grad_minus) / (2 * step)  # row j: ∂∇G/∂u_j
    hessian = 0.5 * (hessian + hessian.T)
    normal = grad / np.linalg.norm(grad)
    # An orthonormal basis of the tangent plane: the last d - 1 columns of Q from the QR of [n, I].
    q, _ = np.linalg.qr(np.column_stack([normal, np.eye(len(grad))]))
    tangent = q[:, 1 : len(grad)]
    return np.linalg.eigvalsh(tangent.T @ hessian @ tangent / np.linalg.norm(grad))


# --- sampling methods ---------------------------------------------------------------------------------------


def _float():
    """jax's default float type: float64 with jax_enable_x64, else float32."""
    return jnp.zeros(()).dtype


def _key(seed):
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return jax.random.PRNGKey(int(seed))
    if isinstance(seed, jax.Array):
        return seed
    raise ValueError(f"seed = {seed!r} must be an integer or a jax.random key")


def _check_n(name, n, least=1):
    if not (isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= least):
        raise ValueError(f"{name} = {n!r} must be an integer >= {least}")
    return int(n)


def monte_carlo(
    g: Callable, marginals: Sequence, *, n: int = 100_000, seed=0, batched: bool = False, batch_size: int = 100_000
) -> ReliabilityResult:
    """Plain Monte Carlo: the failed fraction of ``n`` samples, standard error ``√(p(1-p)/n)``.

    ``g``, ``marginals``, ``batched`` as in :func:`form`; ``batch_size`` samples per call of ``g``.
    ``extras``: ``n_failed``.
    """
    marginals = _check_marginals(marginals)
    n, batch_size = _check_n("n", n), _check_n("batch_size", batch_size)
    Gb = _G_batch(g, marginals, batched)
    U = np.asarray(jax.random.normal(_key(seed), (n, len(marginals)), dtype=_float()))
    return from_samples(np.concatenate([Gb(U[i : i + batch_size]) for i in range(0, n, batch_size)]))


def from_samples(G) -> ReliabilityResult:
    """The plain Monte Carlo estimate from limit-state values ``G`` of independent samples of the inputs: the
    failed fraction, standard error ``√(p(1-p)/n)``; ``extras``: ``n_failed``."""
    G = np.asarray(G, float).reshape(-1)
    n = _check_n("number of samples", G.size)
    failed = int(np.sum(G <= 0))
    p = failed / n
    se = math.sqrt(p * (1 - p) / n)
    return ReliabilityResult(p, se, se / p if p > 0 else math.inf, n, "montecarlo", {"n_failed": failed})


def importance_sampling(
    g: Callable,
    marginals: Sequence,
    *,
    n: int = 10_000,
    seed=0,
    design_point=None,
    batched: bool = False,
    value_and_grad: Callable | None = None,
    batch_size: int = 100_000,
    **form_options,
) -> ReliabilityResult:
    """Importance sampling around the design point: ``u = u* + z``, ``z ~ N(0, I)``, weights ``φ(u)/φ(u - u*)``.

    Args:
        g, marginals, batched, value_and_grad: as in :func:`form`.
        n: samples.
        seed: an integer or a ``jax.random`` key; the same seed gives the same result.
        design_point: ``u*`` in standard normal space (e.g. ``form(...).extras["u_star"]``); by default
            :func:`form` is run first (with ``form_options``) and its evaluations are counted.
        batch_size: samples per call of ``g``.

    Returns:
        ReliabilityResult: the estimate; its ``extras``: ``u_star``, ``n_failed``, ``form_simulations`` (0 when the
            design point was given), and ``beta_form`` when FORM was run here.
    """
    marginals = _check_marginals(marginals)
    n, batch_size = _check_n("n", n, least=2), _check_n("batch_size", batch_size)
    extras = {"form_simulations": 0}
    if design_point is None:
        fr = form(g, marginals, batched=batched, value_and_grad=value_and_grad, **form_options)
        u_star = np.asarray(fr.extras["u_star"])
        extras.update(form_simulations=fr.n_simulations, beta_form=fr.extras["beta"])
    else:
        u_star = np.asarray(design_point, float).reshape(-1)
        if u_star.shape != (len(marginals),) or not np.all(np.isfinite(u_star)):
            raise ValueError(f"design_point must be {len(marginals)} finite numbers; got {design_point!r}")
    Gb = _G_batch(g, marginals, batched)
    U = u_star + np.asarray(jax.random.normal(_key(seed), (n, len(marginals)), dtype=_float()))
    G = np.concatenate([Gb(U[i : i + batch_size]) for i in range(0, n, batch_size)])
    # log φ(u) - log φ(u - u*) = -u·u* + ½|u*|²
    w = np.where(G <= 0, np.exp(-U @ u_star + 0.5 * u_star @ u_star), 0.0)
    p = float(w.mean())
    se = float(w.std(ddof=1) / math.sqrt(n))
    extras.update(u_star=u_star, n_failed=int(np.sum(G <= 0)))
    return ReliabilityResult(p, se, se / p if p > 0 else math.inf, n + extras["form_simulations"], "importance", extras)


def subset_simulation(
    g: Callable,
    marginals: Sequence,
    *,
    n_per_level: int = 1000,
    p0: float = 0.1,
    seed=0,
    batched: bool = False,
    proposal_scale: float = 1.0,
    max_levels: int = 20,
) -> ReliabilityResult:
    """Subset simulation (Au & Beck 2001) with the modified Metropolis sampler and batched chains.

    Level 0 is plain Monte Carlo with ``N = n_per_level`` samples. Each level's threshold ``b`` is the
    ``p0``-quantile of ``G`` (midway between the ``N·p0``-th and next smallest values); the ``N·p0``
    samples below it seed as many chains of ``1/p0`` states each (the seed is the first), which make the
    next level's ``N`` samples, distributed as ``N(0, I)`` conditioned on ``G <= b``. The chains move by
    the modified Metropolis rule: each coordinate's candidate ``u_k + s·ε`` is kept with probability
    ``min(1, φ(candidate)/φ(u_k))``, and the whole candidate is accepted if ``G`` stays below ``b``; all
    chains advance in one batched evaluation per step. The level where at least ``N·p0`` samples fail is the
    last: it counts them, ``P_f = p0^(m-1) · N_f/N`` after ``m`` levels.

    The c.o.v. is Au & Beck's: ``δ² = Σ_i (1 - P_i)/(P_i N) (1 + γ_i)`` with ``γ_0 = 0`` and ``γ_i`` from the
    correlation of the failure indicators along the chains (levels treated as uncorrelated, so a slight
    underestimate).

    Args:
        g, marginals, batched: as in :func:`form`.
        n_per_level: samples per level ``N``; ``N·p0`` must be an integer ``>= 1``.
        p0: conditional probability of each intermediate level, in (0, 1).
        seed: an integer or a ``jax.random`` key; the same seed gives the same result.
        proposal_scale: the standard deviation ``s`` of the component-wise Gaussian proposal.
        max_levels: levels at most, level 0 included; the last one counts failures whatever their number
            (``extras["converged"]`` is then False when they are fewer than ``N·p0``, and may be zero).

    Returns:
        ReliabilityResult: the estimate; its ``extras``: ``levels`` (number of levels, level 0 included),
            ``thresholds``, ``level_probabilities``, ``level_covs``, ``gammas``, ``acceptance`` (mean acceptance
            rate of each level's chains), ``converged``, ``n_per_level``, ``p0``.
    """
    marginals = _check_marginals(marginals)
    N = _check_n("n_per_level", n_per_level, least=2)
    if not (isinstance(p0, (int, float)) and 0 < p0 < 1):
        raise ValueError(f"p0 = {p0!r} must lie in (0, 1)")
    nc_float = N * p0
    n_chains = round(nc_float)
    if abs(nc_float - n_chains) > 1e-9 * N or n_chains < 1:
        raise ValueError(f"n_per_level·p0 = {N}·{p0} = {nc_float:g} must be an integer >= 1 (the number of chains)")
    if N % n_chains:
        raise ValueError(f"n_per_level = {N} must be a multiple of n_per_level·p0 = {n_chains} (equal chains)")
    if not (proposal_scale > 0 and math.isfinite(proposal_scale)):
        raise ValueError(f"proposal_scale = {proposal_scale!r} must be a finite number > 0")
    max_levels = _check_n("max_levels", max_levels)
    length = N // n_chains
    d = len(marginals)
    Gb = _G_batch(g, marginals, batched)
    key, sub = jax.random.split(_key(seed))
    U = np.asarray(jax.random.normal(sub, (N, d), dtype=_float()))
    G = Gb(U)
    n_eval = N
    chains_G = None  # level 0 is independent sampling: no chain correlation
    probability, thresholds, level_p, level_cov, gammas, acceptance = 1.0, [], [], [], [], []
    for level in range(max_levels):
        n_failed = int(np.sum(G <= 0))
        converged = n_failed >= n_chains
        final = converged or level == max_levels - 1
        if final:
            b, p_level = 0.0, n_failed / N
        else:
            order = np.argsort(G, kind="stable")
            b, p_level = 0.5 * (G[order[n_chains - 1]] + G[order[n_chains]]), n_chains / N
        gamma = _gamma(chains_G, b, p_level) if chains_G is not None else 0.0
        probability *= p_level
        thresholds.append(float(b))
        level_p.append(p_level)
        gammas.append(gamma)
        level_cov.append(math.sqrt((1 - p_level) / (p_level * N) * (1 + gamma)) if p_level > 0 else math.inf)
        if final:
            break
        key, sub = jax.random.split(key)
        chain_U, chains_G, acc = _mm_chains(
            Gb, U[order[:n_chains]], G[order[:n_chains]], b, length, proposal_scale, sub
        )
        n_eval += n_chains * (length - 1)
        acceptance.append(acc)
        U, G = chain_U.reshape(N, d), chains_G.reshape(N)
    cov = math.sqrt(sum(c * c for c in level_cov)) if probability > 0 else math.inf
    extras = {
        "levels": len(thresholds),
        "thresholds": thresholds,
        "level_probabilities": level_p,
        "level_covs": level_cov,
        "gammas": gammas,
        "acceptance": acceptance,
        "converged": converged,
        "n_per_level": N,
        "p0": float(p0),
    }
    return ReliabilityResult(probability, probability * cov, cov, n_eval, "subset", extras)


@jax.jit
def _mm_candidates(key, U, scale):
    """Modified Metropolis, component by component: candidates for every chain at once."""
    k1, k2 = jax.random.split(key)
    xi = U + scale * jax.random.normal(k1, U.shape, dtype=U.dtype)
    # ratio φ(ξ)/φ(u) per coordinate
    log_ratio = 0.5 * (U * U - xi * xi)
    keep = jnp.log(jax.random.uniform(k2, U.shape, dtype=U.dtype)) < log_ratio
    return jnp.where(keep, xi, U)


def _mm_chains(Gb, U0, G0, b, length, scale, key):
    """Run the chains from seeds U0 (nc, d): states (length, nc, d), G (length, nc), acceptance rate."""
    states, values = [U0], [G0]
    U, G, accepted = U0, G0, 0
    for _ in range(length - 1):
        key, sub = jax.random.split(key)
        cand = np.asarray(_mm_candidates(sub, jnp.asarray(U), scale))
        # Every chain is evaluated, moved or not: one call of a fixed size (no recompilation per step).
        Gc = Gb(cand)
        ok = Gc <= b
        U = np.where(ok[:, None], cand, U)
        G = np.where(ok, Gc, G)
        accepted += int(ok.sum())
        states.append(U)
        values.append(G)
    return np.stack(states), np.stack(values), accepted / max(1, U0.shape[0] * (length - 1))


def _gamma(chains_G, b, p) -> float:
    """Au & Beck's γ = 2 Σ_k (1 - k/Ns) ρ(k) from the failure indicators of chains (Ns, Nc)."""
    ind = (chains_G <= b).astype(float)
    ns, nc = ind.shape
    r0 = p * (1 - p)
    if r0 <= 0:
        return 0.0
    gamma = 0.0
    for k in range(1, ns):
        r_k = np.sum(ind[: ns - k] * ind[k:]) / (nc * (ns - k)) - p * p
        gamma += 2 * (1 - k / ns) * r_k / r0
    return float(gamma)
