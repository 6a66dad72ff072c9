"""Moreau–Jean time stepping with bilateral constraints by Schur complement.

One step from t_A to t_E = t_A + h, θ-method (θ = ½ is the midpoint rule of Moreau–Jean's scheme):

    q_M = q_A + (1 − θ) h u_A,            t_M = t_A + (1 − θ) h
    M(q_M) (u_E − u_A) = h f(q_M, u_A, t_M) + Φ_qᵀ S + W_N P_N + W_T P_T
    Φ_q u_E + Φ_t = 0                      (bilateral, velocity level, at (q_M, t_M))
    q_E = q_M + θ h u_E

Contacts with g_N(q_M) ≤ 0 are active (up to a rounding guard, see ``activation_tol``). Eliminating S (the
saddle-point system [[M, −Φ_qᵀ], [Φ_q, 0]] by blocks, G = Φ_q M⁻¹ Φ_qᵀ):

    u_E = u_free + M̂ W P,   M̂ = M⁻¹ − M⁻¹ Φ_qᵀ G⁻¹ Φ_q M⁻¹,
    u_free = ũ − M⁻¹ Φ_qᵀ G⁻¹ (Φ_q ũ + Φ_t),   ũ = u_A + h M⁻¹ f,

so the local velocities are ξ = D P + c with the Delassus matrix D = Wᵀ M̂ W
(W = [W_N W_T]) and c = Wᵀ u_free + w̃ + ε ∘ (Wᵀ u_A + w̃) — Newton's law
ξ_N = γ_NE + ε_N γ_NA and the tangential ξ_T = γ_TE + ε_T γ_TA. The bilateral
impulse S is never formed; u_E satisfies Φ_q u_E + Φ_t = 0 by construction.

The positions follow the θ-method, q_E = q_A + h((1 − θ) u_A + θ u_E); the forces
are evaluated once, at the θ-point (q_M, u_A, t_M) — for θ = ½ this is the classical midpoint Moreau–Jean step
(Störmer–Verlet in free flight). Siconos' MoreauJeanOSI instead blends f_A and
f_E (implicit in K and C); the two agree when the forces are constant.
``force_rule="siconos"`` takes Siconos' step instead — its force blend and
iteration matrix, its contact prediction and its literal Newton law
(:mod:`jaxcontact.stepping.siconos_rule`), so a ported Siconos model gives
Siconos' numbers.

Spatial systems (coordinates apart from velocities, ``LagrangianSystem.velocity_map``): the
position updates are ``advance(q, u, τ)`` (a quaternion's exponential map), every Jacobian is
in u, a ``gyroscopic`` system gets its forces at a predicted θ-point velocity, contacts with two
tangent directions are solved on Coulomb cones (:mod:`jaxcontact.stepping.cone_contacts`) and the
projection moves q through the position update (:mod:`jaxcontact.stepping.manifold_projection`);
docs/theory/spatial.md.

Everything at q_M (mass matrix, forces, constraint and gap Jacobians) is
computed once per step and M is factorised once (one Cholesky, one
multi-right-hand-side solve for [h f, Φ_qᵀ, W]); small Cholesky solves are
unrolled (:func:`spd_solve`). A system with a diagonal M that declares which
coordinates each constraint row touches (``constraint_columns``: every planar
mechanism) takes the structured path instead — Φ_q by coloured JVPs, G and its
Cholesky factor only where the pattern has entries (:mod:`structured`: fewer flops
and kernels, the same motion to rounding; the figures are in bench/RESULTS.md,
"structured Schur complement, trigonometry once"). A system that declares the
pattern of every contact row (``gap_columns`` and ``slip_columns``: clearance
joints between beam nodes, a spatial assembly's contacts between its bodies) gets
W by its entries and D = Wᵀ M̂ W from the pairs of entries in one block of M
(:mod:`jaxcontact.stepping.sparse_rows`), M⁻¹ applied to [h f, Φ_qᵀ] only: a cost
linear in the contacts, not O(n k²) — except where the cone solve takes D by its
factors (fewer velocities than half the cone unknowns: a box on its vertices).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from jaxcontact.cones import delassus
from jaxcontact.cones.branch import branch
from jaxcontact.stepping import siconos_rule, structured
from jaxcontact.stepping.base import Scheme, StepInfo, register, register_preset
from jaxcontact.stepping.baumgarte import baumgarte_rates, baumgarte_velocity_target  # noqa: F401 (re-export)
from jaxcontact.stepping.cone_contacts import (
    CONE_SOLVERS,
    block_columns,
    contact_coupling,
    later_relaxation,
    newton_solver,
    solve_cone_contacts,
    staged_sweeps,
)
from jaxcontact.stepping.cone_contacts import samples_per_call as cone_samples_per_call
from jaxcontact.stepping.contact_solve import SOLVERS, soften_normal_rows, solve_contacts
from jaxcontact.stepping.impact_location import IMPACT_LOCATIONS, located_step
from jaxcontact.stepping.kernels import (  # noqa: F401 (spd_solve, UNROLL_MAX: re-exports)
    UNROLL_MAX,
    block_of,
    constraint_residuals,
    gap_closed,
    mass_solver,
    mass_structure,
    spd_solve,
)
from jaxcontact.stepping.projection import Projection, check_part
from jaxcontact.stepping.sparse_rows import DenseRows, contact_rows, declares_contact_rows, gram_pattern
from jaxcontact.system import LagrangianSystem, advance, energy, kinematics

# MoreauJean.mass_path -> what a plan says of it
MASS_PATHS = {
    "iteration-lu": "Siconos' iteration matrix by LU",
    "structured": "diagonal M, Schur complement on the declared constraint pattern",
    "diagonal": "diagonal M (a division)",
    "blocks": "block-diagonal M (a Cholesky per declared block)",
    "cholesky": "Cholesky of M",
}
# "theta-point": forces at (q_M, u_A, t_M); "siconos": Siconos' MoreauJeanOSI step (siconos_rule.py).
FORCE_RULES = ("theta-point", "siconos")
ALL_SOLVERS = ("auto",) + SOLVERS + tuple(s for s in CONE_SOLVERS if s not in SOLVERS)


@register
@dataclasses.dataclass(frozen=True)
class MoreauJean(Scheme):
    """Scheme options (all static: changing one recompiles).

    theta: θ ∈ [½, 1] — ½ the midpoint rule, 1 the implicit-position Euler.
    solver: "auto" (NSGS with friction, PGS without), "nsgs", "pgs" (frictionless
      only) or "lemke" (the exact reference; the friction LCP of the planar Moreau–Jean scheme).
      Spatial friction (Coulomb cones) takes "auto" or "nsgs" (the cones' Gauss–Seidel), or
      "newton" (the cones' semismooth Newton: for long chains of contacts, such as a column of
      stacked bodies, where Gauss–Seidel needs many sweeps; gradients implicit, reverse mode only).
    iterations: sweeps of the iterative solvers (fixed count: differentiable, vmap-friendly;
      a system with a single contact uses one sweep when ω = 1, which is already exact), or
      at most that many steps of the cones' Newton.
    omega: relaxation of the iterative solvers, in (0, 2). None (default): 1, except for the
      sweeps a spatial cone problem needs beyond its first chunk in the implicit mode, which
      over-relax where the cone unknowns do not outnumber the velocities
      (``jaxcontact.stepping.cone_contacts.later_relaxation``): a column of stacked bodies is
      slow in its chain's smoothest modes, which ω = 1 damps slowly.
    tol: convergence tolerance on the solver residual (None: the dtype default).
    separating: the law of an active contact that is already separating at the
      step start (γ_NA > 0; possible once a contact has penetrated, e.g. a ball
      settling on the ground). "conservative" (the default of the θ-point rule):
      ξ_N = γ_NE + γ_NA, so the contact can at most reverse that velocity, which
      adds no energy. "newton" (the default of the Siconos rule): Newton's law and
      Siconos' NewtonImpactNSL literally, ξ_N = γ_NE + ε_N γ_NA, which can add
      ½ P_N (1 − ε_N) γ_NA of energy in such a step. Closing contacts
      (γ_NA ≤ 0) follow Newton's law in both. None: the force rule's default.
    activation_tol: a contact is active when g_N(q_M) ≤ activation_tol (with the
      Siconos rule: when Siconos' prediction g + ½ h ġ at the step start is).
      None: for the θ-point rule a rounding guard 64 ε_mach max(1, ‖q_M‖∞) —
      without it a body resting or sliding on a surface (g_N = 0 up to rounding)
      drops in and out of the active set at random and chatters; for the Siconos
      rule 0, Siconos' default ``_constraintActivationThreshold``.
    force_rule: "theta-point" (default): the forces once at (q_M, u_A, t_M), as
      above. "siconos": Siconos 4.4's MoreauJeanOSI step, for a Siconos user who
      ports a model and wants Siconos' numbers — forces blended
      (1 − θ) f(t_A) + θ f(t_E) with the iteration matrix M + hθ C + h²θ² K
      (K and C implicit), contacts active by Siconos' prediction
      g(q_A) + ½ h ġ(q_A, u_A) ≤ 0, Newton's law literal (``separating`` "newton"),
      q_E summed in Siconos' order; see :mod:`jaxcontact.stepping.siconos_rule`.
      Identical to Siconos (to rounding) for ``linear_system`` models
      (LagrangianLinearTIDS + LagrangianLinearTIR); for nonlinear forces it is the
      first iteration of Siconos' Newton loop. The mass, force and contact
      Jacobians are then taken at q_A + h u_A (the loop's start) and every solve
      uses the iteration matrix (LU), so the ``structured`` path and
      ``diagonal_mass`` do not apply.
    diagonal_mass: promise that M(q) is diagonal (planar bodies in absolute
      coordinates): M⁻¹ is then a division instead of a Cholesky
      factorisation. Off-diagonal entries are ignored, so only set it when true.
      A system that declares ``LagrangianSystem.diagonal_mass`` (every planar
      mechanism does) gets the division whatever this option says: the unrolled
      Cholesky with all its right-hand sides would dominate a planar step's flops
      (XLA re-emits the forward substitution inside every back-substitution kernel).
    diagnostics: compute ‖Φ‖, ‖Φ̇‖ and the energy at every step's end state
      (one more evaluation of Φ, M and V per step; turn off for throughput).
    projection: None (default), or a :class:`jaxcontact.stepping.projection.Projection`, the
      part every scheme holds: after the step, (q_E, u_E) projected onto Φ = 0 and
      Φ_q u + Φ_t = 0 in the mass metric (the four-bar projection paper's correction) and
      the resting contacts put onto their surface, so the next step's LCP sees a
      consistent state. ``Projection()`` is what the paper's studies use.
    baumgarte: None, or a function (params, h) → (α, β) of array leaves: the
      bilateral rows then enforce Φ_q u_E + Φ_t = the implicit-Euler Baumgarte
      target (:func:`jaxcontact.stepping.baumgarte.baumgarte_velocity_target`)
      from Φ, Φ̇ at the step start, instead of 0. See :func:`baumgarte_rates`.
    soft_activation: None (default: the hard law), or the name of a parameter leaf
      ``p[name]`` holding a width τ > 0 (m): contacts are then switched on smoothly
      by their gap (:func:`jaxcontact.stepping.contact_solve.soften_normal_rows`), the
      smoothing knob of parameter identification. τ is an array leaf, so an annealing
      schedule τ → 0 does not recompile.
    differentiation: "unroll" (default) or "implicit" — how gradients pass the PGS
      contact solve (frictionless systems); see :mod:`jaxcontact.lcp.implicit`. For Coulomb
      cones, "unroll" runs exactly ``iterations`` sweeps, "implicit" sweeps until Siconos' error
      ≤ ``tol`` (at most ``iterations``) with gradients by the implicit function theorem.
    """

    theta: float = 0.5
    solver: str = "auto"
    iterations: int = 50
    omega: float | None = None
    tol: float | None = None
    separating: str | None = None
    activation_tol: float | None = None
    diagonal_mass: bool = False
    diagnostics: bool = True
    projection: Projection | None = None
    baumgarte: Callable | None = None
    soft_activation: str | None = None
    differentiation: str = "unroll"
    force_rule: str = "theta-point"
    impact_location: str = "step"

    name: ClassVar[str] = "moreau-jean"
    summary: ClassVar[str] = "rigid contacts, impulses"
    contact_kinds: ClassVar[frozenset] = frozenset({"rigid"})
    soft_activation_available: ClassVar[bool] = True
    impact_location_available: ClassVar[bool] = True
    spatial: ClassVar[bool] = True

    def __post_init__(self):
        if not 0.5 <= float(self.theta) <= 1.0:
            raise ValueError(f"theta = {self.theta} must lie in [0.5, 1] (θ < ½ is unstable)")
        if self.solver not in ALL_SOLVERS:
            raise ValueError(f"solver = {self.solver!r} must be one of {ALL_SOLVERS}")
        if not isinstance(self.iterations, int) or self.iterations < 1:
            raise ValueError(f"iterations = {self.iterations!r} must be a positive int")
        if self.omega is not None and not 0.0 < float(self.omega) < 2.0:
            raise ValueError(f"omega = {self.omega} must lie in (0, 2)")
        if self.separating not in (None, "conservative", "newton"):
            raise ValueError(
                f"separating = {self.separating!r} must be 'conservative', 'newton' or None (the force rule's default)"
            )
        if self.force_rule not in FORCE_RULES:
            raise ValueError(f"force_rule = {self.force_rule!r} must be one of {FORCE_RULES}")
        check_part(self.projection)
        if self.baumgarte is not None and not callable(self.baumgarte):
            raise ValueError(f"baumgarte = {self.baumgarte!r} must be None or a function (params, h) -> (alpha, beta)")
        if self.soft_activation is not None and not isinstance(self.soft_activation, str):
            raise ValueError(f"soft_activation = {self.soft_activation!r} must be None or a parameter name")
        if self.differentiation not in ("unroll", "implicit"):
            raise ValueError(f"differentiation = {self.differentiation!r} must be 'unroll' or 'implicit'")
        if self.impact_location not in IMPACT_LOCATIONS:
            raise ValueError(f"impact_location = {self.impact_location!r} must be one of {IMPACT_LOCATIONS}")
        if self.impact_location == "interpolated" and (self.force_rule == "siconos" or self.soft_activation):
            raise ValueError(
                "impact_location = 'interpolated' locates impacts of the hard θ-point law: it cannot be "
                "combined with force_rule = 'siconos' or soft_activation"
            )

    @property
    def separating_law(self) -> str:
        """The law of separating active contacts: ``separating``, or the force rule's default."""
        if self.separating is not None:
            return self.separating
        return "newton" if self.force_rule == "siconos" else "conservative"

    def solver_for(self, system: LagrangianSystem) -> str:
        """The contact solver this scheme uses on ``system`` ("auto" resolved); ValueError for PGS with friction."""
        friction = system.slip_velocity is not None
        if friction and system.tangent_directions == 2:
            if self.solver not in ("auto", *CONE_SOLVERS):
                raise ValueError(
                    f"the moreau-jean scheme with solver = {self.solver!r} cannot solve spatial Coulomb "
                    f"friction (cones), and this system has spatial frictional contacts; use solver "
                    f"'nsgs' (the cones' nonsmooth Gauss–Seidel) or 'newton' (their semismooth Newton)"
                )
            return "nsgs" if self.solver == "auto" else self.solver
        if self.solver not in ("auto",) + SOLVERS:
            raise ValueError(
                f"the moreau-jean scheme's solver = {self.solver!r} solves Coulomb cones (spatial "
                f"friction) only, and this system has none; use one of {('auto',) + SOLVERS}"
            )
        if self.solver == "auto":
            return "nsgs" if friction else "pgs"
        if self.solver == "pgs" and friction:
            raise ValueError(
                "the moreau-jean scheme with solver = 'pgs' cannot solve Coulomb friction, and this "
                "system has frictional contacts (the friction LCP has zero diagonal entries); "
                "use solver 'nsgs' or 'lemke'"
            )
        return self.solver

    def mass_path(self, system: LagrangianSystem) -> str:
        """How a step solves with M on ``system``: "iteration-lu" (Siconos' rule: its iteration matrix by LU),
        "structured" (M diagonal and Φ_q's pattern declared: the Schur complement entry by entry),
        "diagonal" (M⁻¹ a division), "blocks" (the system's ``mass_blocks``: a Cholesky per block) or
        "cholesky"."""
        if self.force_rule == "siconos":
            return "iteration-lu"
        if not (self.diagonal_mass or system.diagonal_mass):
            return "cholesky" if system.mass_blocks is None else "blocks"
        return "structured" if system.constraint_columns is not None else "diagonal"

    def plan(self, system: LagrangianSystem) -> dict[str, str]:
        """The path this scheme takes on ``system``: the contact solve, the mass solve, impacts, projection."""
        solver = self.solver_for(system)
        coupling = cone_coupling(self, system)  # D's pattern, where the step knows it
        if system.gaps is None:
            contacts = "none"
        elif system.slip_velocity is not None and system.tangent_directions == 2:
            contacts = f"{solver} on Coulomb cones"
            if solver == "newton":
                contacts += f" ({newton_solver(coupling).name})"
            if system.contact_names and factored_delassus(self, system, 3 * len(system.contact_names)):
                contacts += " with W by its factors"
        else:
            friction = system.slip_velocity is not None
            contacts = f"{solver} on the {'planar friction problem' if friction else 'normal LCP'}"
        if by_declared_rows(self, system):
            contacts += " with W by its declared rows"
            blocks = coupling is not None and block_columns(coupling) is not None
            if blocks and staged_sweeps(solver, self.differentiation):
                contacts += " and D by block rows"
        return super().plan(system) | {
            "contacts": f"{contacts}, {self.differentiation} gradients",
            "mass": MASS_PATHS[self.mass_path(system)],
            "impacts": "at the gap crossing" if self.impact_location == "interpolated" else "on the step grid",
        }

    # The scheme interface (:class:`jaxcontact.stepping.base.Scheme`); the methods call this
    # module's functions, which stay the primary API.
    @property
    def differentiation_modes(self) -> frozenset:
        # Implicit LCP gradients are a custom VJP: reverse mode only. The cones' Newton has no unrolled form.
        unrolled = self.differentiation == "unroll" and self.solver != "newton"
        return frozenset({"forward", "reverse"} if unrolled else {"reverse"})

    def check(self, system: LagrangianSystem) -> None:
        """Refuse, naming the scheme, a system this scheme cannot treat (compliant contacts; friction with PGS)."""
        super().check(system)
        self.solver_for(system)  # friction/solver compatibility, as a clear error
        if system.velocity_map is not None:
            if self.force_rule != "theta-point":
                raise ValueError(
                    f"the moreau-jean scheme's force_rule = {self.force_rule!r} is not available for a "
                    f"system with a velocity map (spatial bodies): use force_rule 'theta-point'"
                )

    def samples_per_call(self, system: LagrangianSystem) -> int | None:
        """Spatial frictional contacts: their solve's
        (:func:`~jaxcontact.stepping.cone_contacts.samples_per_call`); else None."""
        if system.gaps is None or system.slip_velocity is None or system.tangent_directions != 2:
            return None
        return cone_samples_per_call(self.solver_for(system), self.differentiation)

    def for_forward_runs(self) -> MoreauJean:
        """The implicit contact solve: Coulomb cones are then swept until Siconos' error ≤ ``tol`` (under vmap,
        until every sample's problem has), not the fixed ``iterations`` that differentiation through the
        sweeps needs; PGS (frictionless planar contacts) runs the same sweeps either way."""
        return dataclasses.replace(self, differentiation="implicit")

    def with_soft_activation(self, key: str) -> MoreauJean:
        """A copy of the scheme with soft contact activation of the given kind (for identification)."""
        return dataclasses.replace(self, soft_activation=key)

    def with_impact_location(self, mode: str) -> MoreauJean:
        """A copy of the scheme with impacts located by ``mode`` ("step" or "interpolated")."""
        return dataclasses.replace(self, impact_location=mode)

    def init(self, system: LagrangianSystem, p, q0, u0, t0) -> State:
        """The scheme state at (q0, u0, t0) (see :func:`initial_state`)."""
        return initial_state(system, q0, u0, t0, p)

    def step(self, system: LagrangianSystem, p, state: State, dt) -> tuple[State, StepInfo]:
        """One step of size ``dt`` (see the module-level :func:`step`)."""
        if self.impact_location == "interpolated" and system.gaps is not None:
            return located_step(
                system,
                self,
                p,
                state,
                dt,
                lambda s, h, c, by_gap: step(system, self, p, s, h, closed=c, by_gap=by_gap),
                lambda g, q: is_active(self, g, q),
            )
        return step(system, self, p, state, dt)  # the module-level step function

    def active(self, system: LagrangianSystem, p, state: State):
        """Contacts closed at ``state`` (g_N ≤ the activation tolerance)."""
        if system.gaps is None:
            return jnp.zeros((0,), bool)
        return is_active(self, system.gaps(state.q, state.t, p), state.q)


@register_preset
@dataclasses.dataclass(frozen=True)
class MoreauJeanSiconos(MoreauJean):
    """Moreau–Jean with Siconos' MoreauJeanOSI step (``force_rule="siconos"``), named so a Siconos user finds it."""

    force_rule: str = "siconos"

    name: ClassVar[str] = "moreau-jean-siconos"
    summary: ClassVar[str] = "Siconos' MoreauJeanOSI step: K and C implicit, Siconos' contact prediction and Newton law"


class State(NamedTuple):
    """Scan carry: time, position, velocity, the last impulses (warm start) and the step count.

    Time is t0 + i·h (not a running sum, which drifts by rounding over long runs).
    """

    t: jax.Array
    q: jax.Array
    u: jax.Array
    P_N: jax.Array  # (k,)
    P_T: jax.Array  # (k,), or (2k,) with spatial contacts (t1, t2 of each contact)
    t0: jax.Array  # start time
    i: jax.Array  # steps taken (int32)


def n_contacts(system: LagrangianSystem, q, t, p) -> int:
    """Number of potential contacts k (static, from the gap function's output shape)."""
    if system.gaps is None:
        return 0
    return jax.eval_shape(system.gaps, q, t, p).shape[0]


def initial_state(system: LagrangianSystem, q0, u0, t0, p) -> State:
    """The Moreau–Jean state at (q0, u0, t0): zero warm-start impulses for every contact."""
    q0 = jnp.asarray(q0)
    k = n_contacts(system, q0, t0, p)
    z = jnp.zeros((k,), q0.dtype)
    z_T = jnp.zeros((k * system.tangent_directions,), q0.dtype)
    t0 = jnp.asarray(t0, q0.dtype)
    return State(t0, q0, jnp.asarray(u0, q0.dtype), z, z_T, t0, jnp.zeros((), jnp.int32))


def step(
    system: LagrangianSystem, scheme: MoreauJean, p, state: State, dt, *, closed=None, by_gap=None
) -> tuple[State, StepInfo]:
    """One Moreau–Jean step of size ``dt`` (pure; jit/vmap/grad-able). ``closed``: (k,) bool, the contacts
    to treat as active instead of deciding by gap (the sub-steps of a located impact); ``by_gap``: a (traced)
    bool that, where true, decides by gap after all (one traced step serves every sub-step).

    A step in which no contact is active at the θ-point is the step without contacts: their gaps' and slips'
    Jacobians, W and the contact solve are skipped (:func:`skips_open_steps`), and under vmap they are
    skipped for a batch none of whose samples has a contact active (:func:`jaxcontact.cones.branch.branch`).
    Every sample gets its own branch's result, so a batch still equals its samples run one by one.
    """
    if closed is None and skips_open_steps(scheme, system):
        h = jnp.asarray(dt, state.q.dtype)
        q_M = advance(system, state.q, state.u, (1.0 - scheme.theta) * h)
        t_M = state.t + (1.0 - scheme.theta) * h
        is_open = ~jnp.any(is_active(scheme, system.gaps(q_M, t_M, p), q_M))
        open_step = lambda p, state, h: _step(system, scheme, p, state, h, contacts=False)  # noqa: E731
        closed_step = lambda p, state, h: _step(system, scheme, p, state, h)  # noqa: E731
        return _finish(system, scheme, p, *branch(is_open, open_step, closed_step, p, state, h))
    return _finish(system, scheme, p, *_step(system, scheme, p, state, dt, closed=closed, by_gap=by_gap))


def skips_open_steps(scheme: MoreauJean, system: LagrangianSystem) -> bool:
    """Whether :func:`step` skips the contacts' assembly and solve while none is active: the θ-point rule
    decides activity by the gaps alone (Siconos' rule predicts it from velocities too; soft activation
    weighs contacts that are not closed)."""
    return system.gaps is not None and scheme.force_rule == "theta-point" and scheme.soft_activation is None


def _step(system, scheme, p, state, dt, *, closed=None, by_gap=None, contacts=True):
    """:func:`step` up to its projection and diagnostics (:func:`_finish`), the contacts decided as it says;
    ``contacts=False``: the step with none active."""
    q_A, u_A, t_A = state.q, state.u, state.t
    dtype = q_A.dtype
    h = jnp.asarray(dt, dtype)
    th = scheme.theta
    t_E = state.t0 + (state.i + 1) * h
    friction = system.slip_velocity is not None
    solver = scheme.solver_for(system)
    siconos = scheme.force_rule == "siconos"

    if siconos:
        # Siconos' first Newton iterate: everything at q_A + h u_A; M below is the iteration matrix.
        q_M, M, h_f = siconos_rule.newton_start(system, th, p, q_A, u_A, t_A, t_E, h)
        t_M = t_E
        sparse = False  # the iteration matrix by LU (mass_path "iteration-lu")
    else:
        q_M = advance(system, q_A, u_A, (1.0 - th) * h)
        t_M = t_A + (1.0 - th) * h
        h_f = h * system.forces(q_M, u_A, t_M, p)
        path = scheme.mass_path(system)
        solve_M = mass_solver(system, q_M, p, path in ("diagonal", "structured"))
        if system.gyroscopic:
            # Forces quadratic in u: evaluated again at the θ-point velocity of an explicit predictor.
            u_pred = u_A + solve_M(h_f)
            h_f = h * system.forces(q_M, (1.0 - th) * u_A + th * u_pred, t_M, p)
        # A declared Φ_q pattern with a diagonal M: the Schur complement entry by entry (structured.py).
        sparse = path == "structured"
    by_rows = contacts and by_declared_rows(scheme, system)
    kin = kinematics(system, q_M, t_M, p, constraints=not sparse, contacts=contacts and not by_rows)
    if by_rows:
        gap, gap_t, w_T, rows = contact_rows(system, q_M, t_M, p)
        kin = kin._replace(gap=gap)
        w_tilde = jnp.concatenate([gap_t, w_T])
    else:
        W = jnp.concatenate([kin.W_N, kin.W_T], axis=1) if friction else kin.W_N
        w_tilde = jnp.concatenate([kin.gap_t, kin.w_T]) if friction else kin.gap_t
        rows = DenseRows(W)
    k = kin.gap.shape[0]

    if by_rows:
        u_free, delassus_matrix, respond = _by_rows(system, scheme, p, kin, rows, solve_M, h_f, q_A, u_A, t_A, h)
    elif sparse:
        inv_m = solve_M(jnp.ones_like(h_f))  # M is diagonal here: M⁻¹ 1 is its inverse's diagonal
        u_tilde = u_A + h_f * inv_m
        X_W = W * inv_m[:, None]
        columns = system.constraint_columns
        _, phi_t, J = structured.sparse_jacobian(lambda qq, tt: system.constraints(qq, tt, p), q_M, t_M, columns)
        dphi_free = jnp.stack([sum((J[(i, c)] * u_tilde[c] for c in cols), phi_t[i]) for i, cols in enumerate(columns)])
        dphi_free = _less_baumgarte_target(dphi_free, system, scheme, p, q_A, u_A, t_A, h)
        u_free, MhatW = structured.schur_response(J, columns, inv_m, u_tilde, dphi_free, X_W)
    else:
        m = kin.phi.shape[0]
        # One factorisation, one solve for every right-hand side: [h f | Φ_qᵀ | W_N | W_T].
        rhs = jnp.concatenate([h_f[:, None], kin.phi_q.T, W], axis=1)
        if siconos:  # Siconos solves with the iteration matrix by LU (it need not be symmetric)
            X = jnp.linalg.solve(M, rhs)
        else:
            X = solve_M(rhs)
        u_tilde = u_A + X[:, 0]
        X_phi, X_W = X[:, 1 : 1 + m], X[:, 1 + m :]
        if m:
            G = kin.phi_q @ X_phi
            # G⁻¹ [Φ_q ũ + Φ_t | Φ_q M⁻¹ W] in one solve.
            dphi_free = _less_baumgarte_target(kin.phi_q @ u_tilde + kin.phi_t, system, scheme, p, q_A, u_A, t_A, h)
            Y = spd_solve(G, jnp.concatenate([dphi_free[:, None], kin.phi_q @ X_W], axis=1))
            u_free = u_tilde - X_phi @ Y[:, 0]
            MhatW = X_W - X_phi @ Y[:, 1:]
        else:
            u_free, MhatW = u_tilde, X_W
    if not by_rows:

        def delassus_matrix():
            return W.T @ MhatW

        def respond(P):
            return MhatW @ P

    if k:
        laws = system.laws(p)
        if siconos:
            # Siconos' y and ẏ at the step start decide the active set and enter Newton's law.
            gap_A, gap_dot_A, slip_A = siconos_rule.start_velocities(system, p, q_A, u_A, t_A)
            gamma_A = jnp.concatenate([gap_dot_A, slip_A]) if friction else gap_dot_A
            threshold = 0.0 if scheme.activation_tol is None else scheme.activation_tol
            active = siconos_rule.predicted_active(gap_A, gap_dot_A, h, threshold)
        else:
            gamma_A = rows.t(u_A) + w_tilde
            active = is_active(scheme, kin.gap, q_M)
            if closed is not None:
                active = closed if by_gap is None else jnp.where(by_gap, active, closed)
        eps_N = jnp.asarray(laws.restitution, dtype)
        if scheme.separating_law == "conservative":
            eps_N = jnp.where(gamma_A[:k] > 0, 1.0, eps_N)
        eps_T = jnp.repeat(jnp.asarray(laws.tangential_restitution, dtype), system.tangent_directions)
        eps = jnp.concatenate([eps_N, eps_T]) if friction else eps_N
        cones = friction and system.tangent_directions == 2
        coupling = cone_coupling(scheme, system) if cones else None
        if cones and not by_rows and factored_delassus(scheme, system, rows.k):
            # Fewer velocities than cone unknowns (a box on its vertices): the solve works on the factors.
            D = delassus.Factored(W, MhatW, jnp.zeros((rows.k,), dtype))
        else:
            D = delassus_matrix()
        c = rows.t(u_free) + w_tilde + eps * gamma_A
        if scheme.soft_activation is not None:
            D, active = soften_normal_rows(D, kin.gap, jnp.asarray(p[scheme.soft_activation], dtype), k)
        warm = jnp.concatenate([state.P_N, state.P_T]) if friction else state.P_N
        # One contact with ω = 1: a single (block) Gauss–Seidel sweep is already exact.
        unrelaxed = scheme.omega is None or float(scheme.omega) == 1.0
        sweeps = 1 if (k == 1 and unrelaxed and solver != "newton") else scheme.iterations
        if cones:
            sol = solve_cone_contacts(
                D,
                c,
                jnp.asarray(laws.friction, dtype),
                active,
                state.P_N,
                state.P_T,
                iterations=sweeps,
                omega=scheme.omega,
                tol=scheme.tol,
                differentiation=scheme.differentiation,
                solver=solver,
                linear_solver=newton_solver(coupling),
                blocks=None if coupling is None else block_columns(coupling),
                later_omega=later_relaxation(scheme.omega, k, system.n_u),
            )
        else:
            sol = solve_contacts(
                D,
                c,
                jnp.asarray(laws.friction, dtype),
                active,
                warm,
                solver=solver,
                iterations=sweeps,
                omega=1.0 if scheme.omega is None else scheme.omega,
                tol=scheme.tol,
                friction=friction,
                differentiation=scheme.differentiation,
            )
        P = jnp.concatenate([sol.P_N, sol.P_T]) if friction else sol.P_N
        u_E = u_free + respond(P)
        P_N, P_T = sol.P_N, sol.P_T
        residual, converged, iters = sol.residual, sol.converged, sol.iterations
    else:
        u_E = u_free
        P_N, P_T = jnp.zeros_like(state.P_N), jnp.zeros_like(state.P_T)
        active = jnp.zeros(state.P_N.shape, bool)
        residual, converged, iters = jnp.zeros((), dtype), jnp.ones((), bool), jnp.zeros((), jnp.int32)

    q_E = siconos_rule.position_update(q_A, u_A, u_E, h, th) if siconos else advance(system, q_M, u_E, th * h)
    # A singular M or G (e.g. redundant constraints) shows up as NaN: report it, never raise in jit.
    converged = converged & jnp.all(jnp.isfinite(u_E))
    zero = jnp.zeros((), dtype)  # the diagnostics, filled by _finish
    info = StepInfo(P_N, P_T, active, residual, converged, iters, zero, zero, zero)
    return State(t_E, q_E, u_E, P_N, P_T, state.t0, state.i + 1), info


def _finish(system, scheme, p, state: State, info: StepInfo) -> tuple[State, StepInfo]:
    """The end of every step, open or closed: the projection onto the constraints (after the step's
    finiteness check: the projection's own regularised solves stay finite), then the diagnostics."""
    q_E, u_E = state.q, state.u
    if scheme.projection is not None:
        q_E, u_E = scheme.projection.apply(system, p, q_E, u_E, state.t, state.P_N)
    if scheme.diagnostics:
        phi, phi_dot = constraint_residuals(system, q_E, u_E, state.t, p)
        info = info._replace(phi=phi, phi_dot=phi_dot, energy=energy(system, q_E, u_E, state.t, p))
    return state._replace(q=q_E, u=u_E), info


def _by_rows(system, scheme, p, kin, rows, solve_M, h_f, q_A, u_A, t_A, h):
    """(u_free, the Delassus matrix D() = Wᵀ M̂⁻¹ W, the response P ↦ M̂⁻¹ W P) with W as rows
    (:func:`jaxcontact.stepping.sparse_rows.contact_rows`): M⁻¹ is applied to [h f | Φ_qᵀ] only, and
    M̂⁻¹ = M⁻¹ − X G⁻¹ Xᵀ (X = M⁻¹ Φ_qᵀ, G = Φ_q X) enters D and the response through C = Wᵀ X (k, m)."""
    m = kin.phi.shape[0]
    X = solve_M(jnp.concatenate([h_f[:, None], kin.phi_q.T], axis=1))
    u_tilde = u_A + X[:, 0]
    X_phi = X[:, 1:]
    if not m:
        return u_tilde, lambda: rows.gram(solve_M), lambda P: solve_M(rows.apply(P))
    C = rows.cross(X_phi)
    dphi_free = _less_baumgarte_target(kin.phi_q @ u_tilde + kin.phi_t, system, scheme, p, q_A, u_A, t_A, h)
    # G⁻¹ [Φ_q ũ + Φ_t | Cᵀ] in one solve (Cᵀ = Φ_q M⁻¹ W).
    Y = spd_solve(kin.phi_q @ X_phi, jnp.concatenate([dphi_free[:, None], C.T], axis=1))
    u_free = u_tilde - X_phi @ Y[:, 0]
    return u_free, lambda: rows.gram(solve_M) - C @ Y[:, 1:], lambda P: solve_M(rows.apply(P)) - X_phi @ (Y[:, 1:] @ P)


def _less_baumgarte_target(dphi, system, scheme, p, q_A, u_A, t_A, h):
    """``dphi`` (the bilateral rows' rate at the free velocity) less their Φ̇ target from Φ and Φ̇ at the step
    start where the scheme has the ``baumgarte`` option, ``dphi`` as it is where not."""
    if scheme.baumgarte is None:
        return dphi
    t_A = jnp.asarray(t_A, q_A.dtype)
    phi_A, dphi_A = jax.jvp(lambda qq, tt: system.constraints(qq, tt, p), (q_A, t_A), (u_A, jnp.ones_like(t_A)))
    alpha, beta = scheme.baumgarte(p, h)
    return dphi - baumgarte_velocity_target(phi_A, dphi_A, h, alpha, beta)


def by_declared_rows(scheme: MoreauJean, system: LagrangianSystem) -> bool:
    """Whether a step builds W by the system's declared row patterns and D by pairs of their entries
    (:func:`jaxcontact.stepping.sparse_rows.contact_rows`): not by Siconos' LU of the iteration matrix, not
    on the structured path, whose diagonal M makes M⁻¹ W a division already, and not where the cone solve takes
    D by its factors (fewer velocities than cone unknowns: every row then reads most velocities)."""
    return (
        system.gaps is not None
        and scheme.mass_path(system) not in ("iteration-lu", "structured")
        and declares_contact_rows(system)
        and not _cones_by_factors(scheme, system)
    )


def cone_coupling(scheme: MoreauJean, system: LagrangianSystem):
    """(k, k) static bool: the contacts whose blocks meet in the step's Delassus matrix D
    (:func:`~jaxcontact.stepping.cone_contacts.contact_coupling`), where a step builds D by the declared rows and no
    bilateral constraint couples them: D = Wᵀ M⁻¹ W then pairs only rows with entries in one block of M, so in a
    column or a chain of contacts each meets its neighbours only. None elsewhere (D taken as dense)."""
    cones = system.slip_velocity is not None and system.tangent_directions == 2
    if not cones or system.constraints is not None or not by_declared_rows(scheme, system):
        return None
    structure = mass_structure(system, scheme.mass_path(system) == "diagonal")
    columns = tuple(system.gap_columns) + tuple(system.slip_columns)
    return contact_coupling(gram_pattern(columns, block_of(structure, system.n_u)))


def _cones_by_factors(scheme: MoreauJean, system: LagrangianSystem) -> bool:
    """Whether the step's cone solve takes D by its factors (:func:`factored_delassus`), known before the step
    from the declared gap rows (one a contact, three cone unknowns each)."""
    cones = system.slip_velocity is not None and system.tangent_directions == 2
    return cones and factored_delassus(scheme, system, 3 * len(system.gap_columns))


def factored_delassus(scheme: MoreauJean, system: LagrangianSystem, n: int) -> bool:
    """Whether the step hands the cone solve the Delassus matrix by its factors (NSGS, and fewer velocities
    than n cone unknowns: :func:`jaxcontact.cones.delassus.factored_pays`)."""
    return scheme.solver_for(system) == "nsgs" and delassus.factored_pays(system.n_u, n)


def is_active(scheme: MoreauJean, gap, q):
    """Contacts with g_N ≤ the activation tolerance at configuration q."""
    return gap_closed(gap, q, scheme.activation_tol)
