"""Penalty / ODE scheme: compliant contacts, regularized friction, Baumgarte DAE as an ODE.

With compliant normal forces and regularized friction every force is a
function of (q, u, t), so the equations of motion are an index-1 DAE

    M(q) u̇ = f(q, u, t) + Q_C(q, u, t) + Φ_qᵀ λ
    Φ_q u̇ = −(Φ̈ at u̇ = 0) − 2α Φ̇ − β² Φ        (Baumgarte)

solved for (u̇, λ) at every stage by the saddle-point system, eliminated by
blocks (G = Φ_q M⁻¹ Φ_qᵀ): G λ = rhs − Φ_q M⁻¹ (f + Q_C), u̇ = M⁻¹(f + Q_C + Φ_qᵀ λ).
Q_C comes from :func:`jaxcontact.system.compliant_contact_forces`. The
convective term Φ̈|_{u̇=0} = (Φ_q u)_q u + 2 Φ_qt u + Φ_tt is a second
directional derivative of Φ along (u, 1), by two nested forward passes.

Spatial bodies (a velocity map, ``Scheme.spatial``): the ODE is (q̇, u̇) = (T(q) u, u̇), every
Jacobian is taken in the velocities (``bilateral_rows``, ``compliant_contact_forces``), and the
step's end q is retracted onto unit quaternions (:func:`jaxcontact.system.retract`; RK4 keeps
|quaternion| = 1 to O(h⁵) per step, the retraction stops that accumulating). Spatial friction
is the isotropic regularized law on the contact's tangent plane; ``P_T`` then holds the two
tangent impulses of each contact (t1, t2 of contact 0, then of contact 1, …: Moreau–Jean's order).

The ODE (q̇, u̇) = (T(q) u, u̇(q, u, t)) (T = I for planar bodies) is integrated with classical RK4 at a fixed
step (jit/vmap/grad-able, a fixed cost per step), or — ``method`` — with an
adaptive diffrax solver inside each simulation step (Tsit5/Dopri5 explicit,
Kvaerno5 implicit): small steps only around impacts, at the price of a
data-dependent cost (under vmap every sample waits for the slowest). Contacts are stiff: the
step must resolve the contact period ~ 2π √(m_eff / K_lin), and for explicit
RK4 the stability limit with damping too — the compliant-contact papers use 1e-5–1e-6 s.

Baumgarte rates: ``baumgarte(p, h) -> (α, β)`` as for Moreau–Jean; the
default α = β = 0.1 / h keeps the stabilisation eigenvalue (−α, double) at
h λ = −0.1, well inside RK4's stability region, and removes a drift in a few
tens of steps.

Stiff forces. A lubricated journal's squeeze film (a system's declared ``viscous`` forces, whose damping grows as
μ/c³ and without bound as the film thins) and the regularized friction of a compliant contact on a light
coordinate (a beam node's slope, whose inertia is tiny) set RK4's stable step far below what the motion needs.
With ``implicit`` on, the step is a linearly implicit Runge–Kutta (Rosenbrock-W) method on RK4's tableau
(:data:`jaxcontact.stepping.kernels.ROSW_GAMMAS`): of order 3 whatever matrix stands for the Jacobian, RK4
itself where that matrix vanishes, L-stable where it is exact. Here the matrix is the Jacobian of the films'
and the compliant contacts' forces, Hᵀ F(q, H u) (:class:`jaxcontact.system.RowForces`: w = H u the r
velocities they read — the films' relative velocities and spins, the contacts' gap rates and slips), at the
step's start: J_uu = −X C H and J_uq = −X K with C = −∂F/∂w, K = −∂F/∂q and X the constrained response of M to
the columns Hᵀ, J_qu = T(q). A stage's velocity increment is then kᵤ = h a + X ζ with ζ from one r × r system
(I + hγ C H X + (hγ)² K T X) ζ = …, so the cost over RK4 is r right-hand sides of M and one r × r LU a step,
and two triangular substitutions a stage. A steady state of the equations is a fixed point of the step, and a
film or contact stiff beyond any step relaxes within it instead of ringing. The linearisation is the step's
start's: a force that changes by orders of magnitude within a step (a film near its breakdown threshold in a
very small clearance) still needs a small step. ``implicit``: None (the default) where the system declares
viscous forces, True or False.

Impulses reported per step (``StepInfo.P_N``, ``P_T``, shape (kc,)): the
contact forces integrated over the step with RK4's weights,
h (F₁ + 2F₂ + 2F₃ + F₄)/6 (adaptive methods integrate ∫F dt as extra ODE
states) — the impulse, comparable to Moreau–Jean's P.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from jaxcontact.cones.linear_solvers import lu_factor, lu_solve
from jaxcontact.stepping.base import Scheme, StepInfo, register
from jaxcontact.stepping.baumgarte import baumgarte_rates
from jaxcontact.stepping.kernels import (
    ADAPTIVE_METHODS,
    ROSW_ALPHA,
    ROSW_GAMMA,
    ROSW_GAMMAS,
    ROSW_WEIGHTS,
    bilateral_rows,
    constrained_acceleration,
    constrained_response,
    constraint_residuals,
    diffrax_solver,
    mass_solver,
    quadrature,
    rk4,
)
from jaxcontact.stepping.projection import Projection, check_part
from jaxcontact.system import (
    LagrangianSystem,
    compliant_contact_forces,
    compliant_contact_law,
    coordinate_rate,
    energy,
    retract,
    velocity_matrix,
)

METHODS = ("rk4",) + ADAPTIVE_METHODS


class PenaltyState(NamedTuple):
    """Scan carry: time t = t0 + i h, position, velocity."""

    t: jax.Array
    q: jax.Array
    u: jax.Array
    t0: jax.Array
    i: jax.Array


class Dynamics(NamedTuple):
    """Right-hand side at one (q, u, t): acceleration, bilateral multipliers, contact forces."""

    acceleration: jax.Array  # u̇ (n,)
    multipliers: jax.Array  # λ (m,): Φ_qᵀ λ is the joint force (driving torque for a driver row)
    normal_force: jax.Array  # F_N (kc,)
    friction_force: jax.Array  # F_T (kc · tangent_directions,)


@register
@dataclasses.dataclass(frozen=True)
class Penalty(Scheme):
    """Compliant contacts as an ODE with fixed-step RK4 (options static: changing one recompiles).

    baumgarte: ``(params, h) -> (α, β)`` rates of the constraint stabilisation
      (default α = β = 0.1/h, see the module docstring).
    friction: "regularized" (the system's ``friction_regularization`` law) or "none".
    diagnostics: ‖Φ‖, ‖Φ̇‖ and the energy (kinetic + V + the contact springs' elastic
      energy, :func:`jaxcontact.system.energy`) at each step's end.
    diagonal_mass: promise that M(q) is diagonal (as :class:`MoreauJean`'s option;
      implied when the system declares ``LagrangianSystem.diagonal_mass``).
    method: "rk4" (fixed step = the simulation step) or an adaptive diffrax solver over
      each simulation step: "tsit5", "dopri5" (explicit, 5th order) or "kvaerno5"
      (implicit, for stiff contacts), with ``rtol``/``atol`` and at most ``max_steps``
      inner steps per simulation step. StepInfo.iterations = inner steps taken.
    projection: None, or a :class:`jaxcontact.stepping.projection.Projection` applied after
      each step: the end state onto Φ = 0 and Φ̇ = 0 exactly, where Baumgarte only keeps the
      drift small.
    implicit: step by the Rosenbrock-W method of the module docstring, linearly implicit in the films
      (``LagrangianSystem.viscous``) and the compliant contacts, instead of RK4 (method "rk4" only): None
      (the default) where the system declares viscous forces, True, or False.
    """

    baumgarte: Callable = baumgarte_rates(0.1)
    friction: str = "regularized"
    diagnostics: bool = True
    diagonal_mass: bool = False
    method: str = "rk4"
    rtol: float = 1e-6
    atol: float = 1e-9
    max_steps: int = 4096
    projection: Projection | None = None
    implicit: bool | None = None

    name: ClassVar[str] = "penalty"
    summary: ClassVar[str] = "compliant contacts, an ODE"
    contact_kinds: ClassVar[frozenset] = frozenset({"compliant"})
    spatial: ClassVar[bool] = True
    step_checked: ClassVar[bool] = True

    def __post_init__(self):
        if not callable(self.baumgarte):
            raise ValueError(f"baumgarte = {self.baumgarte!r} must be a function (params, h) -> (alpha, beta)")
        if self.friction not in ("regularized", "none"):
            raise ValueError(f"friction = {self.friction!r} must be 'regularized' or 'none'")
        if self.method not in METHODS:
            raise ValueError(f"method = {self.method!r} must be one of {METHODS}")
        if not (float(self.rtol) > 0 and float(self.atol) > 0):
            raise ValueError(f"rtol = {self.rtol} and atol = {self.atol} must be > 0")
        if not isinstance(self.max_steps, int) or self.max_steps < 1:
            raise ValueError(f"max_steps = {self.max_steps!r} must be a positive int")
        check_part(self.projection)
        if self.implicit not in (None, True, False):
            raise ValueError(
                f"implicit = {self.implicit!r} must be None (where the system declares viscous forces), True or False"
            )
        if self.implicit and self.method != "rk4":
            raise ValueError(
                f"implicit = True is a step of its own, not one of method {self.method!r}: give one of them"
            )

    @property
    def differentiation_modes(self) -> frozenset:
        # diffrax's checkpointed adjoint is a custom VJP: the adaptive methods are reverse-only.
        return frozenset({"forward", "reverse"} if self.method == "rk4" else {"reverse"})

    def plan(self, system: LagrangianSystem) -> dict[str, str]:
        """The path on ``system``: the scheme's, and the integrator of each step."""
        if self._implicit_on(system):
            stiff = " and ".join(
                x for x, on in (("films", system.viscous), ("compliant contacts", system.compliant_gaps)) if on
            )
            return super().plan(system) | {
                "integrator": f"rosenbrock-w on rk4 (fixed step, linearly implicit in the {stiff})"
            }
        inner = "fixed step" if self.method == "rk4" else f"adaptive, rtol {self.rtol:g}, atol {self.atol:g}"
        return super().plan(system) | {"integrator": f"{self.method} ({inner})"}

    def init(self, system: LagrangianSystem, p, q0, u0, t0) -> PenaltyState:
        """The scheme's state at (q0, u0, t0)."""
        q0 = jnp.asarray(q0)
        t0 = jnp.asarray(t0, q0.dtype)
        return PenaltyState(t0, q0, jnp.asarray(u0, q0.dtype), t0, jnp.zeros((), jnp.int32))

    def dynamics(self, system: LagrangianSystem, p, q, u, t, h) -> Dynamics:
        """u̇, λ, F_N, F_T at (q, u, t); ``h`` sets the Baumgarte rates."""
        Q, F_N, F_T = compliant_contact_forces(system, q, u, t, p, self.friction)
        alpha, beta = self.baumgarte(p, h)
        a, lam = constrained_acceleration(
            system, p, q, u, t, system.forces(q, u, t, p) + Q, alpha, beta, self.diagonal_mass
        )
        return Dynamics(a, lam, F_N, jnp.reshape(F_T, (-1,)))

    def active(self, system: LagrangianSystem, p, state: PenaltyState):
        """Compliant contacts in penetration (g ≤ 0)."""
        if system.compliant_gaps is None:
            return jnp.zeros((0,), bool)
        return system.compliant_gaps(state.q, state.t, p) <= 0

    def step(self, system: LagrangianSystem, p, state: PenaltyState, dt):
        """One step of size dt: RK4, or an adaptive solve over [t, t + dt] (pure; jit/vmap/grad-able)."""
        q, u, t = state.q, state.u, state.t
        h = jnp.asarray(dt, q.dtype)
        kc = 0 if system.compliant_gaps is None else jax.eval_shape(system.compliant_gaps, q, t, p).shape[0]
        # Increments of (q, u) and the impulses ∫F_N, ∫F_T over the step, integrated together.
        zero = (
            jnp.zeros_like(q),
            jnp.zeros_like(u),
            jnp.zeros((kc,), q.dtype),
            jnp.zeros((kc * system.tangent_directions,), q.dtype),
        )
        if self.method != "rk4":
            (dq, du, P_N, P_T), ok, steps = self._adaptive(system, p, q, u, t, h, zero)
        elif self._implicit_on(system):
            (dq, du, P_N, P_T), ok, steps = self._rosenbrock(system, p, q, u, t, h)
        else:
            (dq, du, P_N, P_T), ok, steps = self._rk4(system, p, q, u, t, h, zero)
        q_E, u_E = retract(system, q + dq), u + du
        t_E = state.t0 + (state.i + 1) * h
        converged = ok & jnp.all(jnp.isfinite(u_E))
        if self.projection is not None:
            q_E, u_E = self.projection.apply(system, p, q_E, u_E, t_E, P_N)
        new = PenaltyState(t_E, q_E, u_E, state.t0, state.i + 1)
        if self.diagnostics:
            phi, phi_dot = constraint_residuals(system, q_E, u_E, t_E, p)
            e = energy(system, q_E, u_E, t_E, p)
        else:
            phi = phi_dot = e = jnp.zeros((), q.dtype)
        info = StepInfo(
            P_N, P_T, self.active(system, p, new), jnp.zeros((), q.dtype), converged, steps, phi, phi_dot, e
        )
        return new, info

    def _implicit_on(self, system: LagrangianSystem) -> bool:
        """Whether a step is the Rosenbrock-W method: ``implicit`` (None: where the system declares viscous
        forces), for a system with forces to take implicitly, by the fixed-step method."""
        on = system.viscous is not None if self.implicit is None else self.implicit
        return bool(on) and self.method == "rk4" and (system.viscous is not None or system.compliant_gaps is not None)

    def _stiff_parts(self, system: LagrangianSystem, t) -> list:
        """The forces the Rosenbrock-W step takes implicitly (module docstring), as RowForces."""
        contacts = compliant_contact_law(system, t, self.friction)
        return [part for part in (system.viscous, contacts) if part is not None]

    def _rosenbrock(self, system, p, q, u, t, h):
        """One Rosenbrock-W step implicit in the stiff forces (module docstring): the increments of (q, u) and the
        impulses, the contact forces summed with the method's weights."""
        Hs, Cs, Ks = [], [], []
        for part in self._stiff_parts(system, t):
            Hi = jax.jacfwd(lambda v, part=part: part.velocities(q, v, p))(jnp.zeros_like(u))
            wi = part.velocities(q, u, p)
            Hs.append(Hi)
            Cs.append(-jax.jacfwd(part.law, argnums=1)(q, wi, p))
            Ks.append(-jax.jacfwd(part.law, argnums=0)(q, wi, p))
        H, C, K = jnp.concatenate(Hs), jax.scipy.linalg.block_diag(*Cs), jnp.concatenate(Ks)
        phi_q, _ = bilateral_rows(system, p, q, u, t, 0.0, 0.0)
        solve_M = mass_solver(system, q, p, self.diagonal_mass)
        _, _, X, _ = constrained_response(solve_M, phi_q, jnp.zeros_like(u), H.T, jnp.zeros((phi_q.shape[0],), u.dtype))
        hg = h * ROSW_GAMMA
        CH = C @ H
        T = velocity_matrix(system, q)
        S = lu_factor(jnp.eye(H.shape[0], dtype=u.dtype) + hg * CH @ X + hg * hg * (K if T is None else K @ T) @ X)
        alpha, gammas = jnp.asarray(ROSW_ALPHA, u.dtype), jnp.asarray(ROSW_GAMMAS, u.dtype)
        nodes = jnp.sum(alpha, axis=1)

        def stage(K_, i):
            Kq, Ku = K_
            qi, ui = q + quadrature(alpha[i], Kq), u + quadrature(alpha[i], Ku)
            d = self.dynamics(system, p, qi, ui, t + nodes[i] * h, h)
            ha, hv = h * d.acceleration, h * coordinate_rate(system, qi, ui)
            gu, gq = h * quadrature(gammas[i], Ku), h * quadrature(gammas[i], Kq)
            # K acts on coordinate increments: the stage's own (hγ)² kᵤ part and the others' mapped by T(q).
            rhs = -CH @ (hg * ha + gu) - K @ (hg * (hv + coordinate_rate(system, q, hg * ha + gu)) + gq)
            ku = ha + X @ lu_solve(S, rhs)
            kq = hv + coordinate_rate(system, q, hg * ku + gu)
            return (Kq.at[i].set(kq), Ku.at[i].set(ku)), (d.normal_force, d.friction_force)

        empty = (jnp.zeros((4,) + q.shape, q.dtype), jnp.zeros((4,) + u.shape, u.dtype))
        (Kq, Ku), (F_N, F_T) = jax.lax.scan(stage, empty, jnp.arange(4))
        b = jnp.asarray(ROSW_WEIGHTS, u.dtype)
        inc = (quadrature(b, Kq), quadrature(b, Ku), quadrature(h * b, F_N), quadrature(h * b, F_T))
        return inc, jnp.ones((), bool), jnp.ones((), jnp.int32)

    def _rk4(self, system, p, q, u, t, h, zero):
        def derivative(y, s):
            d = self.dynamics(system, p, y[0], y[1], s, h)
            return (coordinate_rate(system, y[0], y[1]), d.acceleration), (d.normal_force, d.friction_force)

        _, (k_q, k_u), (F_N, F_T), w = rk4(derivative, (q, u), t, h)
        inc = tuple(quadrature(w, x) for x in (k_q, k_u, F_N, F_T))
        return inc, jnp.ones((), bool), jnp.ones((), jnp.int32)

    def _adaptive(self, system, p, q, u, t, h, zero):
        """diffrax with a PID step-size controller over [t, t + h] (h is the output step).

        Each call starts from dt0 = h and lets the controller shrink it (a few rejected
        attempts per output step near contacts); ``max_steps`` bounds the inner loop
        (a fixed-size loop for reverse-mode gradients). Failure (step budget exhausted)
        is reported as ``converged`` False, never raised inside jit.
        """
        import diffrax

        def rhs(s, y, args):
            dq, du, _, _ = y
            d = self.dynamics(system, p, q + dq, u + du, s, h)
            return (coordinate_rate(system, q + dq, u + du), d.acceleration, d.normal_force, d.friction_force)

        sol = diffrax.diffeqsolve(
            diffrax.ODETerm(rhs),
            diffrax_solver(self.method),
            t,
            t + h,
            h,
            zero,
            stepsize_controller=diffrax.PIDController(rtol=self.rtol, atol=self.atol),
            max_steps=self.max_steps,
            throw=False,
        )
        inc = jax.tree.map(lambda x: x[-1], sol.ys)
        return inc, sol.result == diffrax.RESULTS.successful, jnp.asarray(sol.stats["num_accepted_steps"], jnp.int32)
