"""Event-driven, acceleration-level scheme with the stick–slip LCP (Pfeiffer–Glocker's formulation).

Between events the equations of motion are integrated at the acceleration level,

    M u̇ = f + Q_C + Φ_qᵀ λ + W_N λ_N + W_T λ_T,
    Φ_q u̇ = −(Φ̈ at u̇ = 0) − 2αΦ̇ − β²Φ                 (bilateral, Baumgarte),

with Q_C the compliant normal forces (:func:`jaxcontact.system.compliant_contact_forces`,
friction "none": friction is added here). Bilateral multipliers are eliminated by
blocks (G = Φ_q M⁻¹ Φ_qᵀ), so u̇ = a₀ + M̂ W x for contact forces x. Each contact
carries a mode in the scheme's state: rigid contacts are closed (persistent,
g_N ≤ tolerance) or open; frictional contacts stick (direction d = 0) or slip
(d = ±1, the sign of γ_T).

The LCP (solved at every stage by Lemke, exact; sizes are tiny) has, as in Pfeiffer and Glocker's formulation,

    x = [λ_N; λ⁻; g̈⁺],  y = [g̈_N; g̈⁻; λ⁺],   x ≥ 0, y ≥ 0, xᵀy = 0,

over the closed rigid contacts (normal rows; Baumgarte-stabilised, g̈_N + 2αġ_N + β²g_N)
and the sticking contacts (friction saturations λ^± = μ0 λ_N ± λ_T, split tangential
accelerations g̈_T = g̈⁺ − g̈⁻; the sticking rows enforce g̈_T + 2αγ_T so that a residual
slip speed left at an event decays). A compliant contact's λ_N is its known force F_N:
then only the friction rows are in the LCP. Rows of open or slipping contacts are
masked to x = 0 (fixed shapes). Slipping contacts get λ_T = −μ λ_N d: for rigid
contacts this couples into the normal columns (W_N − μ d W_T), for compliant ones it is
a known force. Static μ0 (``static_friction``) bounds sticking; dynamic μ acts in slip.

One step of size h from t_A:

1. Modes at t_A: contacts with g_N ≤ tol are closed; an approaching closed contact
   (γ_N < 0) first gets a frictionless Newton impact impulse (an impulse LCP with ε_N;
   a contact closed at the step start is one that the previous step did not locate, e.g.
   an initial penetration). Slipping contacts whose
   slip reversed (d γ_T ≤ 0) and sticking contacts are candidates to stick; the LCP at
   (q_A, u_A) decides: those with g̈⁺ > 0 or g̈⁻ > 0 slip with d = sgn(g̈_T)
   (stick → slip; detachment is λ_N = 0 in the LCP).
2. A trial RK4 step with the modes frozen (the LCP solved at each stage). Within a step
   that crosses μ0 F_N the stage LCPs of a sticking contact saturate at μ0 λ_N.
3. Slip → stick: a slipping contact whose slip velocity changed sign (d γ_T(t_A + h) < 0)
   has an event inside the step. Its time τh is located on the cubic Hermite
   interpolant of γ_T (values and rates at both ends, from the RK4 stages) by a fixed
   number of bisections, then one Newton step — exact for the cubic and it carries the
   implicit derivative dτ/dθ into gradients (bisection alone has none).
   Stick → slip: a sticking contact that saturated in the trial has an onset where its
   friction margin (EventDynamics.friction_margin: reserve μ0 λ_N − |λ_T|, or minus the
   force μ0 lacks) crosses zero, by linear interpolation between the trial's first and
   last stages — exact for a push linear in t, and the onset time (hence the whole
   later motion) is then continuous and differentiable in μ0 (deciding stick → slip
   only at step starts would quantise it to the step and leave ∂/∂μ0 ≈ 0).
   Impact: an open rigid contact whose gap is negative at the trial's end closes inside
   the step, where the cubic Hermite interpolant of g_N (values and rates ġ_N at both
   ends) crosses zero, located as the slip → stick event. Treated at the next step start
   instead, the impact would be late by up to a step (first order in h) and its time —
   hence the whole later motion — quantised to the step: the misfit of a fitted length
   or wall distance would jump where the impact moves to the next step.
4. RK4 over τh with the old modes, modes updated there (a slip → stick contact is a
   stick candidate, the LCP decides whether μ0 holds it; an onset contact slips the way
   it saturated, with μ; a closing contact gets its Newton impact impulse first), RK4 over
   (1 − τ)h. τ is the earliest of the three kinds. Without event
   τ = 1. One event per step: a second contact reversing within the same step is caught
   at the next step start (its γ_T has reversed: step 1 makes it a candidate); a second
   contact closing within the same step, or one that closes and reopens inside the trial
   (a graze, g_N > 0 at both ends), is found there too (g_N ≤ tol: closed, impact at the
   step start) or missed — its impact time is then quantised to the step again.

Cost: three RK4 substeps (trial, τh, (1 − τ)h; all three run, also without an event, so
the cost is fixed and ``vmap`` has no branches) with an impact LCP and a mode LCP before
each: 15 stage and mode Lemke solves per step, plus four impact LCPs of the rigid contacts.
RK4 between events is 4th order while the modes (and the LCP's active set) stay fixed;
the scheme is fixed-step, so jit/vmap/grad-able. StepInfo's P_N/P_T are the contact
forces integrated over the step with RK4's weights (plus any impact impulse), k = rigid
then compliant contacts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from jaxcontact.lcp import lemke
from jaxcontact.lcp.rows import decouple_rows
from jaxcontact.stepping.base import Scheme, StepInfo, register
from jaxcontact.stepping.baumgarte import baumgarte_acceleration_rhs, baumgarte_rates
from jaxcontact.stepping.kernels import (
    bilateral_rows,
    constrained_response,
    constraint_residuals,
    gap_closed,
    gaps_and_rates,
    mass_solver,
    rk4,
    second_rate,
)
from jaxcontact.stepping.projection import Projection, check_part
from jaxcontact.system import LagrangianSystem, compliant_contact_forces, energy


class EventState(NamedTuple):
    """Scan carry: t = t0 + i h, q, u, rigid contacts closed (kr,), slip directions (kf,) (0: stick)."""

    t: jax.Array
    q: jax.Array
    u: jax.Array
    closed: jax.Array
    direction: jax.Array
    t0: jax.Array
    i: jax.Array


class EventDynamics(NamedTuple):
    """Right-hand side at one (q, u, t) and modes.

    acceleration u̇ (n,); multipliers λ (m,) of the bilateral rows (Φ_qᵀ λ is the joint
    force; a driver row's λ is its driving force/torque); normal_force (kr + kc,) rigid
    λ_N then compliant F_N; friction_force (kf,) λ_T; slip (kf,) γ_T; slip_rate (kf,) γ̇_T;
    slip_intent (kf,) g̈⁺ − g̈⁻ of the sticking rows (≠ 0: μ0 cannot hold the contact);
    friction_margin (kf,) of the sticking rows, μ0 λ_N − |λ_T| − |g̈_T| / (W_Tᵀ M̂ W_T)ᵢᵢ:
    the friction reserve while μ0 holds (> 0), minus the force it lacks once saturated (< 0)
    — a signed, continuous measure whose zero is the stick → slip onset (0 for other rows);
    and the LCP's residual, convergence and pivot count.
    """

    acceleration: jax.Array
    multipliers: jax.Array
    normal_force: jax.Array
    friction_force: jax.Array
    slip: jax.Array
    slip_rate: jax.Array
    slip_intent: jax.Array
    friction_margin: jax.Array
    residual: jax.Array
    converged: jax.Array
    iterations: jax.Array


class _Substep(NamedTuple):
    """One RK4 substep: end state, contact impulses, γ_T and γ̇_T at its start, γ̇_T at its last stage,
    and the friction margin at its first and last stages and the slip intent at its last stage."""

    q: jax.Array
    u: jax.Array
    normal_impulse: jax.Array
    friction_impulse: jax.Array
    slip0: jax.Array
    rate0: jax.Array
    rate1: jax.Array
    margin0: jax.Array
    margin1: jax.Array
    intent1: jax.Array
    residual: jax.Array
    converged: jax.Array
    iterations: jax.Array


class _Contacts(NamedTuple):
    """Contact kinematics at (q, u, t): rigid normals then frictional tangents."""

    W_N: jax.Array  # (n, kr)
    gap: jax.Array  # (kr,)
    gap_rate: jax.Array  # ġ_N (kr,)
    gap_convective: jax.Array  # g̈_N at u̇ = 0 (kr,)
    W_T: jax.Array  # (n, kf)
    slip: jax.Array  # γ_T (kf,)
    slip_convective: jax.Array  # γ̇_T at u̇ = 0 (kf,)


def _slip_functions(system: LagrangianSystem):
    """The frictional contacts' slip functions γ_T(q, u, t, p): rigid ones first, then compliant."""
    return tuple(f for f in (system.slip_velocity, system.compliant_slip_velocity) if f is not None)


def _contacts(system: LagrangianSystem, p, q, u, t) -> _Contacts:
    n, dtype = q.shape[0], q.dtype
    if system.gaps is not None:
        gap, gap_rate, gap_conv = second_rate(lambda qq, tt: system.gaps(qq, tt, p), q, u, t)
        W_N = jax.jacfwd(system.gaps)(q, t, p).T
    else:
        gap = gap_rate = gap_conv = jnp.zeros((0,), dtype)
        W_N = jnp.zeros((n, 0), dtype)
    W_T, slip, slip_conv = [jnp.zeros((n, 0), dtype)], [jnp.zeros((0,), dtype)], [jnp.zeros((0,), dtype)]
    for fn in _slip_functions(system):
        s, s_conv = jax.jvp(lambda qq, tt: fn(qq, u, tt, p), (q, t), (u, jnp.ones_like(t)))
        W_T.append(jax.jacfwd(fn, argnums=1)(q, u, t, p).T)
        slip.append(s)
        slip_conv.append(s_conv)
    return _Contacts(
        W_N, gap, gap_rate, gap_conv, jnp.concatenate(W_T, axis=1), jnp.concatenate(slip), jnp.concatenate(slip_conv)
    )


def _friction_laws(system: LagrangianSystem, p, dtype):
    """(μ, μ0) of the frictional contacts (kf,): rigid ones (μ0 = μ when not given), then compliant."""
    mu, mu0 = [jnp.zeros((0,), dtype)], [jnp.zeros((0,), dtype)]
    if system.slip_velocity is not None:
        laws = system.laws(p)
        mu.append(jnp.asarray(laws.friction, dtype))
        mu0.append(jnp.asarray(laws.friction if laws.static_friction is None else laws.static_friction, dtype))
    if system.compliant_slip_velocity is not None:
        laws = system.compliant_laws(p)
        mu.append(jnp.asarray(laws.friction, dtype))
        mu0.append(jnp.asarray(laws.static_friction, dtype))
    return jnp.concatenate(mu), jnp.concatenate(mu0)


def _masked_lcp(A, b, rows, max_pivots):
    """Solve the LCP on the rows in ``rows``; the others are decoupled with x = 0 (fixed shape)."""
    return lemke(*decouple_rows(A, b, rows), max_pivots=max_pivots)


def _sign(x):
    return jnp.where(x > 0, 1.0, jnp.where(x < 0, -1.0, 0.0)).astype(x.dtype)


@register
@dataclasses.dataclass(frozen=True)
class EventDriven(Scheme):
    """Event-driven stick–slip with fixed-step RK4 between events (options static: changing one recompiles).

    baumgarte: ``(params, h) -> (α, β)``: rates of the bilateral constraints, of the
      closed rigid gaps and (2α) of the sticking slip speed. Default α = β = 0.1/h,
      well inside RK4's stability region (as :class:`jaxcontact.stepping.penalty.Penalty`).
    root_iterations: bisections locating a slip → stick event in the step (fixed count;
      50 reach the float64 resolution of the step fraction).
    gap_tol: a rigid contact is closed when g_N ≤ gap_tol; None: a rounding guard
      64 ε_mach max(1, ‖q‖∞) (as Moreau–Jean's activation).
    slip_tol: relative threshold on the LCP's tangential acceleration above which a
      sticking contact starts to slip (|g̈_T| > slip_tol · (1 + ‖b‖∞)); guards against
      round-off turning a stuck contact into a slipping one.
    max_pivots: Lemke's pivot bound (None: its default).
    diagnostics: ‖Φ‖, ‖Φ̇‖ and the energy (kinetic + V; contact springs excluded) per step.
    projection: None, or a :class:`jaxcontact.stepping.projection.Projection` applied after
      each step (the resting rigid contacts are those whose integrated force or impact
      impulse is positive): Φ = 0, Φ̇ = 0 and resting gaps 0 exactly, where Baumgarte only
      keeps them near zero.
    """

    baumgarte: Callable = baumgarte_rates(0.1)
    root_iterations: int = 50
    gap_tol: float | None = None
    slip_tol: float = 1e-9
    max_pivots: int | None = None
    diagnostics: bool = True
    projection: Projection | None = None

    name: ClassVar[str] = "event-driven"
    summary: ClassVar[str] = "rigid and compliant contacts, stick–slip inside the step"
    contact_kinds: ClassVar[frozenset] = frozenset({"rigid", "compliant"})

    @property
    def differentiation_modes(self) -> frozenset:
        # Lemke's gradients (the stage and impact LCPs) are a custom VJP: reverse mode only.
        return frozenset({"reverse"})

    def __post_init__(self):
        if not callable(self.baumgarte):
            raise ValueError(f"baumgarte = {self.baumgarte!r} must be a function (params, h) -> (alpha, beta)")
        if not isinstance(self.root_iterations, int) or self.root_iterations < 1:
            raise ValueError(f"root_iterations = {self.root_iterations!r} must be a positive int")
        if not float(self.slip_tol) > 0.0:
            raise ValueError(f"slip_tol = {self.slip_tol} must be > 0")
        check_part(self.projection)

    # ------------------------------------------------------------------ modes
    def _closed(self, gap, q):
        return gap_closed(gap, q, self.gap_tol)

    def _loaded(self, system, p, q, u, t, closed):
        """Frictional contacts that carry a normal force: closed rigid ones, compressed compliant ones."""
        parts = [jnp.zeros((0,), bool)]
        if system.slip_velocity is not None:
            parts.append(closed)
        if system.compliant_slip_velocity is not None:
            parts.append(compliant_contact_forces(system, q, u, t, p, "none")[1] > 0)
        return jnp.concatenate(parts)

    def init(self, system: LagrangianSystem, p, q0, u0, t0) -> EventState:
        """The scheme state at (q0, u0, t0): contacts with g_N ≤ tol closed, slip directions from the sign of γ_T."""
        q0 = jnp.asarray(q0)
        u0 = jnp.asarray(u0, q0.dtype)
        t0 = jnp.asarray(t0, q0.dtype)
        c = _contacts(system, p, q0, u0, t0)
        return EventState(t0, q0, u0, self._closed(c.gap, q0), _sign(c.slip), t0, jnp.zeros((), jnp.int32))

    def active(self, system: LagrangianSystem, p, state: EventState):
        """Closed rigid contacts, then compliant contacts in penetration (g ≤ 0)."""
        parts = [state.closed]
        if system.compliant_gaps is not None:
            parts.append(system.compliant_gaps(state.q, state.t, p) <= 0)
        return jnp.concatenate(parts)

    # --------------------------------------------------------------- dynamics
    def dynamics(self, system: LagrangianSystem, p, q, u, t, closed, direction, h) -> EventDynamics:
        """u̇, λ and the contact forces at (q, u, t) with the given modes (the stage LCP)."""
        dtype = q.dtype
        t = jnp.asarray(t, dtype)
        alpha, beta = self.baumgarte(p, h)
        c = _contacts(system, p, q, u, t)
        kr, kf = c.gap.shape[0], c.slip.shape[0]
        mu, mu0 = _friction_laws(system, p, dtype)
        Q_C, F_C, _ = compliant_contact_forces(system, q, u, t, p, "none")
        # Normal force of each frictional contact: rigid ones unknown (E λ_N), compliant ones known (f_known).
        rigid_friction = system.slip_velocity is not None
        E = jnp.eye(kf, kr, dtype=dtype) if rigid_friction else jnp.zeros((kf, kr), dtype)
        f_known = F_C if system.compliant_slip_velocity is not None else jnp.zeros((0,), dtype)
        f_known = jnp.concatenate([jnp.zeros((kf - f_known.shape[0],), dtype), f_known])
        loaded = self._loaded(system, p, q, u, t, closed)
        stick = (direction == 0) & loaded
        slip_coef = jnp.where(direction != 0, -mu * direction, 0.0)  # λ_T = slip_coef · λ_N when slipping
        force = system.forces(q, u, t, p) + Q_C + c.W_T @ (slip_coef * f_known)
        W_N_eff = c.W_N + c.W_T @ (slip_coef[:, None] * E)
        phi_q, rhs = bilateral_rows(system, p, q, u, t, alpha, beta)
        a0, lam0, MhatC, Lam = constrained_response(
            mass_solver(system, q, p), phi_q, force, jnp.concatenate([W_N_eff, c.W_T], axis=1), rhs
        )
        if kr + kf:
            P = jnp.concatenate([c.W_N, c.W_T], axis=1).T @ MhatC
            A_NN, A_NT, A_TN, A_TT = P[:kr, :kr], P[:kr, kr:], P[kr:, :kr], P[kr:, kr:]
            b_N = c.W_N.T @ a0 + c.gap_convective - baumgarte_acceleration_rhs(c.gap, c.gap_rate, alpha, beta)
            b_T = c.W_T.T @ a0 + c.slip_convective + 2.0 * alpha * c.slip
            U = jnp.where(stick, mu0, 0.0)
            UE, Uf = U[:, None] * E, U * f_known
            I, Z = jnp.eye(kf, dtype=dtype), jnp.zeros((kf, kf), dtype)
            A = jnp.block(
                [
                    [A_NN + A_NT @ UE, -A_NT, jnp.zeros((kr, kf), dtype)],
                    [-(A_TN + A_TT @ UE), A_TT, I],
                    [2.0 * UE, -I, Z],
                ]
            )
            b = jnp.concatenate([b_N + A_NT @ Uf, -b_T - A_TT @ Uf, 2.0 * Uf])
            sol = _masked_lcp(A, b, jnp.concatenate([closed, stick, stick]), self.max_pivots)
            lam_N, lam_minus, acc_plus = sol.z[:kr], sol.z[kr : kr + kf], sol.z[kr + kf :]
            acc_minus = jnp.where(lam_minus > 0, 0.0, sol.w[kr : kr + kf])
            normal_f = E @ lam_N + f_known
            lam_T = jnp.where(stick, U * normal_f - lam_minus, slip_coef * normal_f)
            x = jnp.concatenate([lam_N, jnp.where(stick, lam_T, 0.0)])
            tol = self.slip_tol * (1.0 + jnp.max(jnp.abs(b)))
            intent = jnp.where(stick & (jnp.abs(acc_plus - acc_minus) > tol), acc_plus - acc_minus, 0.0)
            inv_mass = jnp.diagonal(A_TT)  # 1 / effective tangential mass; 0 if the joints forbid slip
            safe = jnp.where(inv_mass > 0, inv_mass, 1.0)
            # The rows hold g̈_T + 2αγ_T: the force lacking is the true g̈_T's (a stage past the
            # onset has γ_T > 0), so that the margin stays linear in a linearly growing push.
            saturated = (acc_plus - acc_minus) != 0
            slip_acc = jnp.where(saturated, acc_plus - acc_minus - 2.0 * alpha * c.slip, 0.0)
            lacking = jnp.where(inv_mass > 0, jnp.abs(slip_acc) / safe, 0.0)
            margin = jnp.where(stick, U * normal_f - jnp.abs(lam_T) - lacking, 0.0)
            residual, converged, iters = sol.residual, sol.converged, sol.iterations
        else:
            lam_N, lam_T, intent, margin, x = (jnp.zeros((0,), dtype),) * 5
            residual, converged, iters = jnp.zeros((), dtype), jnp.ones((), bool), jnp.zeros((), jnp.int32)
        acc = a0 + MhatC @ x
        return EventDynamics(
            acc,
            lam0 + Lam @ x,
            jnp.concatenate([lam_N, F_C]),
            lam_T,
            c.slip,
            c.W_T.T @ acc + c.slip_convective,
            intent,
            margin,
            residual,
            converged,
            iters,
        )

    def _impact(self, system, p, q, u, t, closed):
        """Frictionless Newton impact of the closed, approaching rigid contacts: (u⁺, P_N)."""
        if system.gaps is None:
            return u, jnp.zeros((0,), q.dtype)
        t = jnp.asarray(t, q.dtype)
        gap_fn = lambda qq, tt: system.gaps(qq, tt, p)  # noqa: E731
        _, gamma = jax.jvp(gap_fn, (q, t), (u, jnp.ones_like(t)))
        W_N = jax.jacfwd(system.gaps)(q, t, p).T
        phi_q = (
            jax.jacfwd(system.constraints)(q, t, p)
            if system.constraints is not None
            else jnp.zeros((0, q.shape[0]), q.dtype)
        )
        _, _, MhatW, _ = constrained_response(
            mass_solver(system, q, p), phi_q, jnp.zeros_like(q), W_N, jnp.zeros((phi_q.shape[0],), q.dtype)
        )
        eps = jnp.asarray(system.laws(p).restitution, q.dtype)
        # ξ = γ⁺ + ε min(γ⁻, 0) ≥ 0 ⟂ P ≥ 0 with γ⁺ = γ⁻ + W_Nᵀ M̂ W_N P (velocity jump keeps Φ̇).
        sol = _masked_lcp(W_N.T @ MhatW, gamma + eps * jnp.minimum(gamma, 0.0), closed, self.max_pivots)
        return u + MhatW @ sol.z, sol.z

    def modes(self, system: LagrangianSystem, p, q, u, t, direction, h, candidate=None):
        """Closed set and slip directions at (q, u, t) (step 1 of the module docstring).

        Sticking contacts, slipping ones whose slip reversed (d γ_T ≤ 0) and ``candidate``
        ones are offered to stick; the LCP turns those μ0 cannot hold to slip. Unloaded
        contacts take d = sgn γ_T. Returns (closed, direction, dynamics at the new modes).
        """
        t = jnp.asarray(t, q.dtype)
        c = _contacts(system, p, q, u, t)
        closed = self._closed(c.gap, q)
        loaded = self._loaded(system, p, q, u, t, closed)
        offer = (direction == 0) | (direction * c.slip <= 0)
        if candidate is not None:
            offer = offer | candidate
        d = jnp.where(loaded, jnp.where(offer, 0.0, direction), _sign(c.slip))
        dyn = self.dynamics(system, p, q, u, t, closed, d, h)
        return closed, jnp.where(dyn.slip_intent != 0, _sign(dyn.slip_intent), d), dyn

    def reactions(self, system: LagrangianSystem, p, q, u, t, dt, stick_speed: float = 1e-6) -> EventDynamics:
        """Forces at a saved state (q, u, t): bilateral multipliers (joint forces, driving torques),
        contact forces and accelerations, for plots along a trajectory (``jax.vmap`` it over rows).

        The slip modes are not saved in a trajectory, so they are rebuilt: contacts with
        |γ_T| ≤ ``stick_speed`` are offered to stick and the LCP decides, as in a step.
        """
        t = jnp.asarray(t, q.dtype)
        slip = _contacts(system, p, q, u, t).slip
        h = jnp.asarray(dt, q.dtype)
        d0 = jnp.where(jnp.abs(slip) > stick_speed, _sign(slip), 0.0)
        closed, d, _ = self.modes(system, p, q, u, t, d0, h)
        return self.dynamics(system, p, q, u, t, closed, d, h)

    # ------------------------------------------------------------ integration
    def _rk4(self, system, p, q, u, t, H, closed, direction, h) -> _Substep:
        """Classical RK4 over H with frozen modes; contact forces integrated with RK4's weights.

        The four stages are a ``lax.scan`` (stage i at y + c_i H k_{i−1}, c = 0, ½, ½, 1) so
        the stage LCP is traced once per substep: it keeps the compile time down.
        """

        def derivative(y, s):
            d = self.dynamics(system, p, y[0], y[1], s, closed, direction, h)
            return (y[1], d.acceleration), d

        (q_E, u_E), _, ds, w = rk4(derivative, (q, u), t, H)
        return _Substep(
            q_E,
            u_E,
            w @ ds.normal_force,
            w @ ds.friction_force,
            ds.slip[0],
            ds.slip_rate[0],
            ds.slip_rate[3],
            ds.friction_margin[0],
            ds.friction_margin[3],
            ds.slip_intent[3],
            jnp.max(ds.residual),
            jnp.all(ds.converged),
            jnp.max(ds.iterations),
        )

    def _crossing_fraction(self, p0, p1, m0, m1, event):
        """Step fraction τ ∈ [0, 1] per contact where the cubic Hermite interpolant of a signed
        quantity (values p0, p1, scaled rates m0, m1 at the substep's ends) first crosses zero
        downwards; 1 where ``event`` is False, 0 where p0 ≤ 0 already.

        Bisection (fixed count) on [0, 1], then one Newton step — exact for the cubic, and it
        carries the implicit derivative dτ/dθ into gradients (bisection alone has none).
        """

        def cubic(s):
            s2, s3 = s * s, s * s * s
            return (2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * p1 + (s3 - s2) * m1

        def bisect(_, bracket):
            lo, hi = bracket
            mid = 0.5 * (lo + hi)
            pos = cubic(mid) > 0
            return jnp.where(pos, mid, lo), jnp.where(pos, hi, mid)

        zero = jnp.zeros_like(p0)
        lo, hi = jax.lax.fori_loop(0, self.root_iterations, bisect, (zero, zero + 1.0))
        tau = 0.5 * (lo + hi)
        slope = jax.grad(lambda s: jnp.sum(cubic(s)))(tau)
        ok = slope < 0
        tau = jnp.clip(tau - jnp.where(ok, cubic(tau) / jnp.where(ok, slope, 1.0), 0.0), 0.0, 1.0)
        tau = jnp.where(p0 <= 0, 0.0, tau)  # already crossed at the start
        return jnp.where(event, tau, 1.0)

    def _event_fraction(self, direction, slip0, slip1, rate0, rate1, H):
        """Step fraction τ ∈ [0, 1] of the first slip → stick event (1: none) and its contact mask.

        p(τ) = d γ_T on the cubic Hermite interpolant of the step; a contact has an event
        when p(1) < 0.
        """
        p1 = direction * slip1
        event = (direction != 0) & (p1 < 0)
        tau = self._crossing_fraction(direction * slip0, p1, direction * rate0 * H, direction * rate1 * H, event)
        first = jnp.min(tau, initial=1.0)
        return first, event & (tau <= first)

    def _impact_fraction(self, system, p, q0, u0, t0, q1, u1, t1, closed, H):
        """Step fraction τ ∈ [0, 1] where the first open rigid contact closes (1: none) and its mask.

        An open contact whose gap is negative at the trial's end closes inside the step; its
        time is the root of the cubic Hermite interpolant of g_N (values and rates ġ_N at both
        ends). Locating it, rather than treating the impact at the next step start, makes the
        impact time — and everything after it — continuous and differentiable in the parameters
        (a wall distance, a length): at the step start it is quantised to the step and the
        misfit of an identification jumps where the impact moves to the next step.
        """
        if system.gaps is None:
            return jnp.ones((), q0.dtype), jnp.zeros((0,), bool)

        g0, r0 = gaps_and_rates(system, p, q0, u0, t0)
        g1, r1 = gaps_and_rates(system, p, q1, u1, t1)
        event = ~closed & (g1 < 0)
        tau = self._crossing_fraction(g0, g1, r0 * H, r1 * H, event)
        first = jnp.min(tau, initial=1.0)
        return first, event & (tau <= first)

    @staticmethod
    def _onset_fraction(direction, margin0, margin1, intent1):
        """Step fraction τ ∈ [0, 1] of the first stick → slip onset (1: none) and its contact mask.

        A sticking contact whose friction margin is positive at the step start and whose
        slip intent is non-zero at the trial's last stage (μ0 λ_N saturated) has an onset
        where the margin crosses zero, by linear interpolation of the margin (exact when
        the applied force is linear in t over the step, as for a ramped push).
        """
        onset = (direction == 0) & (margin0 > 0) & (margin1 < 0) & (intent1 != 0)
        tau = jnp.clip(margin0 / jnp.where(onset, margin0 - margin1, 1.0), 0.0, 1.0)
        tau = jnp.where(onset, tau, 1.0)
        first = jnp.min(tau, initial=1.0)
        return first, onset & (tau <= first)

    def step(self, system: LagrangianSystem, p, state: EventState, dt):
        """One step of size dt (see the module docstring; pure, jit/vmap/grad-able)."""
        q, t = state.q, state.t
        h = jnp.asarray(dt, q.dtype)
        gap = system.gaps(q, t, p) if system.gaps is not None else jnp.zeros((0,), q.dtype)
        u, P_impact = self._impact(system, p, q, state.u, t, self._closed(gap, q))

        # Three substeps — the trial over h, then τh and (1 − τ)h — as one scan, so the mode
        # LCP and the stage LCP are traced once (compile time); each substep first sets its
        # modes (for substeps 0 and 1 the same, from the step start). A contact that closes
        # inside the step gets its impact at τh, before the last substep's modes.
        def substep(carry, j):
            tau, event, onset, onset_dir, impact, q_s, u_s, d_in = carry
            t_s = jnp.where(j == 2, t + tau * h, t)
            H = jnp.where(j == 0, h, jnp.where(j == 1, tau * h, (1.0 - tau) * h))
            u_s, P_hit = self._impact(system, p, q_s, u_s, t_s, impact & (j == 2))
            closed, d, _ = self.modes(system, p, q_s, u_s, t_s, d_in, h, candidate=event & (j == 2))
            d = jnp.where(onset & (j == 2), onset_dir, d)  # stick → slip at τh: slip the way μ0 gave
            sub = self._rk4(system, p, q_s, u_s, t_s, H, closed, d, h)
            slip_end = _contacts(system, p, sub.q, sub.u, t + h).slip
            tau_stick, event_new = self._event_fraction(d, sub.slip0, slip_end, sub.rate0, sub.rate1, h)
            tau_slip, onset_new = self._onset_fraction(d, sub.margin0, sub.margin1, sub.intent1)
            tau_hit, impact_new = self._impact_fraction(system, p, q_s, u_s, t_s, sub.q, sub.u, t + h, closed, h)
            tau_new = jnp.minimum(jnp.minimum(tau_stick, tau_slip), tau_hit)
            tau = jnp.where(j == 0, tau_new, tau)
            event = jnp.where(j == 0, event_new & (tau_stick <= tau_new), event)
            onset = jnp.where(j == 0, onset_new & (tau_slip <= tau_new), onset)
            impact = jnp.where(j == 0, impact_new & (tau_hit <= tau_new), impact)
            onset_dir = jnp.where(j == 0, _sign(sub.intent1), onset_dir)
            nxt = j == 1  # after the τh substep the last one starts from its end, with its modes
            carry = (
                tau,
                event,
                onset,
                onset_dir,
                impact,
                jnp.where(nxt, sub.q, q_s),
                jnp.where(nxt, sub.u, u_s),
                jnp.where(nxt, d, d_in),
            )
            return carry, (sub, closed, d, P_hit)

        kf = _contacts(system, p, q, u, t).slip.shape[0]
        no_event = jnp.zeros((kf,), bool)
        carry0 = (
            jnp.ones((), q.dtype),
            no_event,
            no_event,
            jnp.zeros((kf,), q.dtype),
            jnp.zeros(P_impact.shape, bool),
            q,
            u,
            state.direction,
        )
        _, (subs, closed, direction, P_hits) = jax.lax.scan(substep, carry0, jnp.arange(3))
        P_impact = P_impact + P_hits[2]
        first, second = (jax.tree.map(lambda x, i=i: x[i], subs) for i in (1, 2))
        closed2, direction2 = closed[2], direction[2]
        t_E = state.t0 + (state.i + 1) * h
        P_N = first.normal_impulse + second.normal_impulse
        kr, kc = P_impact.shape[0], P_N.shape[0] - P_impact.shape[0]
        P_N = P_N + jnp.concatenate([P_impact, jnp.zeros((kc,), q.dtype)])
        converged = first.converged & second.converged & jnp.all(jnp.isfinite(second.u))
        q_E, u_E = second.q, second.u
        if self.projection is not None:
            q_E, u_E = self.projection.apply(system, p, q_E, u_E, t_E, P_N[:kr])
        new = EventState(t_E, q_E, u_E, closed2, direction2, state.t0, state.i + 1)
        # Friction impulses (kf,) spread over the k contacts: frictionless ones get 0.
        P_f, P_T = first.friction_impulse + second.friction_impulse, []
        for fn, kind in ((system.slip_velocity, kr), (system.compliant_slip_velocity, kc)):
            P_T.append(P_f[:kind] if fn is not None else jnp.zeros((kind,), q.dtype))
            P_f = P_f[kind:] if fn is not None else P_f
        P_T = jnp.concatenate(P_T)
        if self.diagnostics:
            phi, phi_dot = constraint_residuals(system, q_E, u_E, t_E, p)
            e = energy(system, q_E, u_E, t_E, p)
        else:
            phi = phi_dot = e = jnp.zeros((), q.dtype)
        info = StepInfo(
            P_N,
            P_T,
            self.active(system, p, new),
            jnp.maximum(first.residual, second.residual),
            converged,
            jnp.maximum(first.iterations, second.iterations),
            phi,
            phi_dot,
            e,
        )
        return new, info
