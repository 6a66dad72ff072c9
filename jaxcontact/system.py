"""Nonsmooth Lagrangian systems: the interface every time-stepping scheme consumes.

Equations of motion (docs/theory/equations.md), with generalized coordinates q (n,), velocities u (n,):

    M(q, p) u̇ = h(q, u, t, p) + Φ_q(q, t, p)ᵀ λ + W_N λ_N + W_T λ_T

* Φ(q, t, p) = 0 — bilateral constraints (m,), Jacobian Φ_q (m, n), Φ_t = ∂Φ/∂t.
* g_N(q, t, p) ≥ 0 — contact gaps (k,). W_Nᵀ = ∂g_N/∂q (k, n), so the normal
  relative velocity is γ_N = W_Nᵀ u + ∂g_N/∂t.
* γ_T(q, u, t, p) — tangential (slip) velocity of each contact (k,), affine in
  u: W_Tᵀ = ∂γ_T/∂u and w̃_T = γ_T(q, 0, t, p).
* Contact laws per contact as parameter leaves (:class:`ContactLaws`).
* Compliant contacts (docs/theory/compliant.md), kept apart from the rigid ones: gaps
  g_C(q, t, p) (kc,), optional slip velocities, :class:`CompliantLaws`; their
  forces come from :func:`compliant_contact_forces`, added by the schemes that
  use them (penalty, event-driven).

Coordinates and velocities may differ in number (spatial bodies: 7 coordinates — position
and unit quaternion — but 6 velocities, the body-frame angular velocity among them). Then
q̇ = T(q) u (``velocity_map``), M, h and every Jacobian are with respect to u
(W_Nᵀ = ∂g_N/∂q · T(q), Φ_q likewise), and a scheme advances q by ``advance(q, u, h)``
(:func:`advance`; for a quaternion the exponential map, which stays on the unit sphere).
Without these the velocities are q̇ and every formula above holds as written.

Users write Φ, g_N and γ_T; every Jacobian comes from ``jax.jacfwd`` here.
Structure (sizes, functions) is static; every physical value lives in the
parameter pytree ``p`` so one compiled program serves a batch of variations.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.contact_laws import (
    DAMPING_MODELS,
    FRICTION_MODELS,
    compliant_normal_force,
    regularized_friction,
    regularized_friction_vector,
)

Params = Any


class ContactLaws(NamedTuple):
    """Per-contact law parameters, each of shape (k,).

    restitution: Newton normal restitution ε_N ∈ [0, 1].
    tangential_restitution: ε_T ∈ [0, 1] (0: no tangential rebound).
    friction: Coulomb coefficient μ ≥ 0 (0: frictionless); the dynamic (slip) coefficient.
    static_friction: μ0 ≥ μ bounding a sticking contact (schemes that tell stick from
      slip: the event-driven scheme), or None: μ0 = μ (Moreau–Jean's LCP uses μ only).
    """

    restitution: jax.Array
    tangential_restitution: jax.Array
    friction: jax.Array
    static_friction: jax.Array | None = None


class CompliantLaws(NamedTuple):
    """Per-contact parameters of compliant (penalty) contacts, each of shape (kc,).

    Normal force F_N = K δ^n + D(δ) δ̇ (:func:`jaxcontact.contact_laws.compliant_normal_force`):
    stiffness K ≥ 0, exponent n > 0 (1.5: Hertz), damping c ≥ 0.
    Friction: dynamic μ = ``friction`` ≥ 0 and static μ0 = ``static_friction`` ≥ μ (used by
    schemes that resolve sticking: the event-driven scheme; the regularized laws have no static friction and
    use μ), ``slip_width`` v_r (exponential) or v1 (linear) > 0, ``slip_width0`` v0 ∈ [0, v1)
    (linear model only; give zeros otherwise).
    """

    stiffness: jax.Array
    exponent: jax.Array
    damping: jax.Array
    friction: jax.Array
    static_friction: jax.Array
    slip_width: jax.Array
    slip_width0: jax.Array


class RowForces(NamedTuple):
    """Forces that act through a few velocity rows: the generalized force Hᵀ F(q, H u, p), in the form a scheme
    can linearise cheaply (its Jacobians are r × r and r × n, r the rows): a system's ``viscous`` forces, or its
    compliant contacts (:func:`compliant_contact_law`).

    velocities: ``(q, u, p) -> w (r,)``, affine in u with linear part H(q) u: the velocities the law reads (a
      lubricated journal's: the pin's velocity relative to its hole, and the mean spin).
    law: ``(q, w, p) -> F (r,)``, the forces conjugate to w (for a viscous force, positively homogeneous of
      degree one in w: F(q, s w) = s F(q, w) for s > 0).
    """

    velocities: Callable[..., jax.Array]
    law: Callable[..., jax.Array]


@dataclasses.dataclass(frozen=True, eq=False)
class LagrangianSystem:
    """Static description of a nonsmooth Lagrangian system (hashable by identity).

    Attributes:
      n_dof: number of generalized coordinates n.
      mass: ``M(q, p) -> (n, n)``, symmetric positive definite.
      forces: ``h(q, u, t, p) -> (n,)`` — applied, elastic, damping and gyroscopic forces.
      constraints: ``Φ(q, t, p) -> (m,)`` or None (no bilateral constraint).
      gaps: ``g_N(q, t, p) -> (k,)`` or None (no contact).
      slip_velocity: ``γ_T(q, u, t, p) -> (k,)`` affine in u, or None (frictionless).
      laws: ``p -> ContactLaws`` with (k,) leaves; required when ``gaps`` is given.
      potential: ``V(q, t, p) -> scalar`` for the energy diagnostic, or None
        (energy then reports kinetic energy only).
      names: optional names of the coordinates, for printing and plots.
      compliant_gaps: ``g(q, t, p) -> (kc,)`` gaps of compliant contacts (open when
        positive, penetration δ = −g), separate from the rigid ``gaps``; or None.
      compliant_slip_velocity: ``γ_T(q, u, t, p) -> (kc,)`` affine in u, or None (frictionless).
      compliant_laws: ``p -> CompliantLaws`` with (kc,) leaves; required with ``compliant_gaps``.
      compliant_damping: static "hunt_crossley" (D = c δ^n) or "paper" (D = c δ).
      friction_regularization: static "exponential" or "linear" (regularized Coulomb, docs/theory/compliant.md).
      diagonal_mass: M(q, p) is diagonal for every q and p (planar bodies in absolute
        coordinates): schemes then divide by its diagonal instead of factorising it.
      mass_blocks: a partition of the velocities into blocks (tuples of indices) such that M(q, p)
        has no entry between two blocks for every q and p (bodies whose inertia couples only their own
        coordinates: ANCF beams, a rigid body's block), or None. Schemes then factorise one small
        block at a time instead of all of M; a wrong partition gives wrong motion.
      mass_block_values: ``(q, p) -> tuple`` of the blocks of M on ``mass_blocks`` without M itself, one
        (count, size, size) array per block size in the order of :func:`mass_block_groups` (sizes ascending,
        the blocks of a size in their order in ``mass_blocks``), or None (the blocks are read from ``mass``).
        ``mass`` must hold the same blocks (a wrapper that replaces one replaces both); schemes that solve by
        blocks then never assemble the n × n matrix, whose cost grows as n² (:meth:`LagrangianSystem.block_masses`).
      constraint_columns: for each row of Φ, the coordinates it may depend on (a superset of
        the row's non-zero entries of Φ_q for every q, t and p), or None (dense). With
        ``diagonal_mass``, Moreau–Jean then builds and factorises G = Φ_q M⁻¹ Φ_qᵀ entry by
        entry (:mod:`jaxcontact.stepping.structured`); a wrong pattern gives wrong motion.
      gap_columns: for each row of ``gaps``, the coordinates it may depend on (a superset of the row's
        non-zero entries of ∂g_N/∂q for every q, t and p), or None (dense); with a velocity map, the velocities
        it may depend on through q̇ = T(q) u (the non-zero entries of ∂g_N/∂q T(q)). The projections then build
        W_N by one forward tangent per colour of columns and its Gram matrix W_Nᵀ M⁻¹ W_N from the pairs of rows
        that share a block of M: their cost grows with the contacts, not with the contacts times n. A wrong
        pattern gives wrong motion.
      slip_columns: for each row of ``slip_velocity`` (contact-major, ``tangent_directions`` rows a contact), the
        velocities it may read (a superset of the row's non-zero entries of ∂γ_T/∂u for every q, t and p), or
        None (dense). With ``gap_columns`` too, Moreau–Jean builds W = [W_N, W_T] by one tangent per colour
        and the Delassus matrix Wᵀ M̂⁻¹ W from the pairs of entries in one block of M, as the projections do,
        instead of k solves with M and a dense O(nk²) product. A wrong pattern gives wrong motion.
      n_velocities: number of velocities when it differs from n_dof (None: n_dof). M is
        (n_u, n_u), h and u are (n_u,).
      velocity_map: ``q̇ = T(q) u`` as ``(q, u) -> (n_dof,)``, linear in u; required when
        n_velocities ≠ n_dof. Every Jacobian (Φ_q, W_N) is then taken with respect to u.
      position_update: ``(q, u, h) -> q``, the coordinates after moving for a time h at the
        constant velocity u (for a quaternion the exponential map); None: q + h T(q) u. At h = 0
        it must return q brought onto its manifold (renormalised quaternions): schemes that
        integrate q̇ = T(q) u in the coordinates (RK4) retract their result with it (:func:`retract`).
      tangent_directions: 1 — planar contacts, ``slip_velocity`` returns (k,); 2 — spatial
        contacts, ``slip_velocity`` returns (k, 2), the slip along two tangent directions,
        and the contact law is Coulomb's cone.
      velocity_names: optional names of the velocities when they are not the coordinates' rates.
      constraint_names: optional names of the rows of Φ (a joint and its direction), for errors and plots.
      contact_names: optional names of the rows of ``gaps`` (a contact, and its point when it has several).
      gyroscopic: h contains terms quadratic in u (ω × Iω of spatial bodies): Moreau–Jean then
        evaluates h at a predicted θ-point velocity instead of u_A, which keeps a free rigid
        body's energy and angular momentum to O(h²) (explicit in u_A it drifts at O(h)).
      viscous: the part of ``forces`` that is viscous (:class:`RowForces`: lubricated journals' films, whose
        damping can be stiff beyond any explicit step), or None; ``forces`` includes it. The penalty scheme
        then steps implicitly in it (``Penalty(implicit=…)``).
    """

    n_dof: int
    mass: Callable[..., jax.Array]
    forces: Callable[..., jax.Array]
    constraints: Callable[..., jax.Array] | None = None
    gaps: Callable[..., jax.Array] | None = None
    slip_velocity: Callable[..., jax.Array] | None = None
    laws: Callable[[Params], ContactLaws] | None = None
    potential: Callable[..., jax.Array] | None = None
    names: tuple[str, ...] = ()
    compliant_gaps: Callable[..., jax.Array] | None = None
    compliant_slip_velocity: Callable[..., jax.Array] | None = None
    compliant_laws: Callable[[Params], CompliantLaws] | None = None
    compliant_damping: str = "hunt_crossley"
    friction_regularization: str = "exponential"
    diagonal_mass: bool = False
    mass_blocks: tuple[tuple[int, ...], ...] | None = None
    mass_block_values: Callable[..., tuple[jax.Array, ...]] | None = None
    constraint_columns: tuple[tuple[int, ...], ...] | None = None
    gap_columns: tuple[tuple[int, ...], ...] | None = None
    slip_columns: tuple[tuple[int, ...], ...] | None = None
    n_velocities: int | None = None
    velocity_map: Callable[..., jax.Array] | None = None
    position_update: Callable[..., jax.Array] | None = None
    tangent_directions: int = 1
    gyroscopic: bool = False
    viscous: RowForces | None = None
    velocity_names: tuple[str, ...] = ()
    constraint_names: tuple[str, ...] = ()
    contact_names: tuple[str, ...] = ()

    @property
    def n_u(self) -> int:
        """Number of velocities (``n_velocities``, or ``n_dof`` when coordinates and velocities match)."""
        return self.n_dof if self.n_velocities is None else self.n_velocities

    def block_masses(self, q, p) -> tuple[jax.Array, ...]:
        """The blocks of M(q, p) on ``mass_blocks``, grouped as :func:`mass_block_groups` groups them: the
        system's ``mass_block_values`` when it declares them, else read from the assembled M."""
        if self.mass_blocks is None:
            raise ValueError("block_masses: the system declares no mass_blocks")
        if self.mass_block_values is not None:
            return tuple(self.mass_block_values(q, p))
        M = self.mass(q, p)
        return tuple(M[idx[:, :, None], idx[:, None, :]] for idx in mass_block_groups(self.mass_blocks))

    @property
    def kinematic_map(self) -> bool:
        """Whether q̇ ≠ u: the system has a velocity map (spatial bodies)."""
        return self.velocity_map is not None

    def __post_init__(self):
        if not isinstance(self.n_dof, int) or self.n_dof < 1:
            raise ValueError(f"n_dof must be a positive int; got {self.n_dof!r}")
        if self.n_velocities is not None and (not isinstance(self.n_velocities, int) or self.n_velocities < 1):
            raise ValueError(f"n_velocities must be None or a positive int; got {self.n_velocities!r}")
        if self.n_u != self.n_dof and self.velocity_map is None:
            raise ValueError(
                f"n_velocities = {self.n_u} differs from n_dof = {self.n_dof}: the system needs a "
                f"velocity_map (q, u) -> q̇"
            )
        if self.position_update is not None and self.velocity_map is None:
            raise ValueError("position_update given without velocity_map: with q̇ = u the update is q + h u")
        if self.tangent_directions not in (1, 2):
            raise ValueError(
                f"tangent_directions = {self.tangent_directions!r} must be 1 (planar contacts) "
                f"or 2 (spatial contacts, Coulomb cones)"
            )
        if self.gaps is not None and self.laws is None:
            raise ValueError("a system with contacts (gaps) needs contact laws (laws=p -> ContactLaws)")
        if self.slip_velocity is not None and self.gaps is None:
            raise ValueError("slip_velocity given without gaps: friction needs a normal contact")
        if self.names and len(self.names) != self.n_dof:
            raise ValueError(f"names has {len(self.names)} entries for n_dof = {self.n_dof}")
        if self.compliant_gaps is not None and self.compliant_laws is None:
            raise ValueError(
                "a system with compliant contacts (compliant_gaps) needs compliant_laws (p -> CompliantLaws)"
            )
        if self.compliant_slip_velocity is not None and self.compliant_gaps is None:
            raise ValueError("compliant_slip_velocity given without compliant_gaps")
        if self.compliant_damping not in DAMPING_MODELS:
            raise ValueError(f"compliant_damping = {self.compliant_damping!r} must be one of {DAMPING_MODELS}")
        if self.mass_blocks is not None:
            if self.diagonal_mass:
                raise ValueError("declare diagonal_mass or mass_blocks, not both (a diagonal M is its own blocks)")
            blocks = self.mass_blocks
            ok = isinstance(blocks, tuple) and all(
                isinstance(b, tuple) and b and all(isinstance(c, int) and not isinstance(c, bool) for c in b)
                for b in blocks
            )
            if not ok or sorted(c for b in blocks for c in b) != list(range(self.n_u)):
                raise ValueError(
                    f"mass_blocks must be non-empty tuples of velocity indices holding each of 0 … {self.n_u - 1} "
                    f"exactly once; got {self.mass_blocks!r}"
                )
        if self.mass_block_values is not None and self.mass_blocks is None:
            raise ValueError("mass_block_values given without mass_blocks (the partition its blocks are on)")
        if self.constraint_columns is not None:
            if self.constraints is None:
                raise ValueError("constraint_columns given without constraints")
            bad = [
                c for row in self.constraint_columns for c in row if not isinstance(c, int) or not 0 <= c < self.n_dof
            ]
            if bad or not all(isinstance(row, tuple) and row for row in self.constraint_columns):
                raise ValueError(
                    f"constraint_columns must be non-empty tuples of coordinate indices in "
                    f"[0, {self.n_dof}); got {self.constraint_columns!r}"
                )
        for field, of in (("gap_columns", "gaps"), ("slip_columns", "slip_velocity")):
            pattern = getattr(self, field)
            if pattern is None:
                continue
            if getattr(self, of) is None:
                raise ValueError(f"{field} given without {of}")
            # Without a velocity map the coordinates are the velocities (q̇ = u); with one, a row's pattern is
            # of the velocities it reads through q̇ = T(q) u.
            n, what = (self.n_dof, "coordinate") if self.velocity_map is None else (self.n_u, "velocity")
            bad = [c for row in pattern for c in row if not isinstance(c, int) or not 0 <= c < n]
            if bad or not isinstance(pattern, tuple) or not all(isinstance(row, tuple) and row for row in pattern):
                raise ValueError(
                    f"{field} must be a tuple of non-empty tuples of {what} indices in [0, {n}); got {pattern!r}"
                )
        if self.friction_regularization not in FRICTION_MODELS:
            raise ValueError(
                f"friction_regularization = {self.friction_regularization!r} must be one of {FRICTION_MODELS}"
            )

    def __repr__(self):
        parts = [f"n_dof={self.n_dof}"]
        for f in ("constraints", "gaps", "slip_velocity", "potential", "compliant_gaps", "compliant_slip_velocity"):
            if getattr(self, f) is not None:
                parts.append(f)
        return f"LagrangianSystem({', '.join(parts)})"


@functools.cache
def mass_block_groups(blocks: tuple[tuple[int, ...], ...]) -> tuple[np.ndarray, ...]:
    """The blocks of a ``mass_blocks`` partition grouped by size: one (count, size) index array per size,
    sizes ascending, the blocks of a size in their order in the partition."""
    sizes = sorted({len(b) for b in blocks})
    return tuple(np.asarray([b for b in blocks if len(b) == s], dtype=np.int32) for s in sizes)


class Kinematics(NamedTuple):
    """Everything a stepper needs at one configuration (fixed shapes).

    phi (m,), phi_q (m, n_u), phi_t (m,); gap (k,), W_N (n_u, k), gap_t (k,);
    W_T (n_u, k·d_T), w_T (k·d_T,) with d_T = ``tangent_directions`` (spatial contacts:
    columns t1, t2 of contact 0, then of contact 1, …). Empty (size-0) arrays when a part is absent.
    """

    phi: jax.Array
    phi_q: jax.Array
    phi_t: jax.Array
    gap: jax.Array
    W_N: jax.Array
    gap_t: jax.Array
    W_T: jax.Array
    w_T: jax.Array


def value_and_jacobian(f, *args, argnums=0):
    """f(*args) and its Jacobian in ``args[argnums]`` (a tuple of Jacobians for a tuple of argnums) in one
    forward-mode pass whose primal is the value: f's program is traced and compiled once, not once per output."""
    jac, val = jax.jacfwd(lambda *a: (f(*a),) * 2, argnums=argnums, has_aux=True)(*args)
    return val, jac


def _value_and_jacobians(f, q, t, p, T=None):
    """f(q, t, p), ∂f/∂q (· T when given: the Jacobian in the velocities) and ∂f/∂t, by one forward pass of
    n + 1 tangents."""
    val, (jq, jt) = value_and_jacobian(lambda q, t: f(q, t, p), q, t, argnums=(0, 1))
    return val, (jq if T is None else jq @ T), jt


def velocity_matrix(system: LagrangianSystem, q):
    """T(q) (n_dof, n_u) with q̇ = T(q) u, or None when q̇ = u."""
    if system.velocity_map is None:
        return None
    return jax.jacfwd(system.velocity_map, argnums=1)(q, jnp.zeros((system.n_u,), q.dtype))


def coordinate_rate(system: LagrangianSystem, q, u):
    """q̇ = T(q) u (u itself when the system has no velocity map)."""
    return u if system.velocity_map is None else system.velocity_map(q, u)


def advance(system: LagrangianSystem, q, u, h):
    """The coordinates after a time h at the constant velocity u (``position_update``, or q + h T(q) u)."""
    if system.position_update is not None:
        return system.position_update(q, u, h)
    return q + h * coordinate_rate(system, q, u)


def retract(system: LagrangianSystem, q):
    """q brought onto the coordinates' manifold (unit quaternions) by a zero-time position update; q itself
    without a velocity map. Schemes that integrate q̇ = T(q) u additively (RK4 in the coordinates) end their
    step with it, so the O(h⁵) drift of |quaternion| off 1 does not accumulate."""
    if system.velocity_map is None:
        return q
    return advance(system, q, jnp.zeros((system.n_u,), q.dtype), jnp.zeros((), q.dtype))


def kinematics(system: LagrangianSystem, q, t, p, constraints: bool = True, contacts: bool = True) -> Kinematics:
    """Constraint values and Jacobians, contact gaps and Jacobians at (q, t), with respect to u.

    ``constraints=False`` leaves the bilateral part empty, ``contacts=False`` the contact part (for a caller that
    builds it another way).
    """
    n = system.n_u
    dt = q.dtype
    t = jnp.asarray(t, dt)
    T = velocity_matrix(system, q)
    empty_vec, empty_mat = jnp.zeros((0,), dt), jnp.zeros((0, n), dt)
    if system.constraints is not None and constraints:
        phi, phi_q, phi_t = _value_and_jacobians(system.constraints, q, t, p, T)
    else:
        phi, phi_q, phi_t = empty_vec, empty_mat, empty_vec
    if system.gaps is not None and contacts:
        gap, gq, gt = _value_and_jacobians(system.gaps, q, t, p, T)
        W_N = gq.T
        k = gap.shape[0]
        d = system.tangent_directions
        if system.slip_velocity is not None:
            u0 = jnp.zeros((n,), dt)
            slip = lambda uu: jnp.reshape(system.slip_velocity(q, uu, t, p), (-1,))  # noqa: E731
            w_T, slip_u = value_and_jacobian(slip, u0)
            W_T = slip_u.T
        else:
            w_T, W_T = jnp.zeros((k * d,), dt), jnp.zeros((n, k * d), dt)
    else:
        gap, gt, w_T = empty_vec, empty_vec, empty_vec
        W_N = W_T = empty_mat.T
    return Kinematics(phi, phi_q, phi_t, gap, W_N, gt, W_T, w_T)


def energy(system: LagrangianSystem, q, u, t, p) -> jax.Array:
    """Kinetic energy ½ uᵀ M u plus the potential V(q, t, p) when the system has one, plus the
    elastic energy Σ K δ^(n+1)/(n+1) stored in compressed compliant contacts (damping and
    regularized friction dissipate, so with them this total decreases)."""
    if system.mass_block_values is not None:  # ½ Σ u_bᵀ M_b u_b, without assembling M
        blocks = zip(system.block_masses(q, p), mass_block_groups(system.mass_blocks))
        e = 0.5 * sum(jnp.einsum("bi,bij,bj->", u[idx], Mb, u[idx]) for Mb, idx in blocks)
    else:
        e = 0.5 * u @ (system.mass(q, p) @ u)
    if system.potential is not None:
        e = e + system.potential(q, t, p)
    if system.compliant_gaps is not None:
        laws = system.compliant_laws(p)
        delta = -system.compliant_gaps(q, jnp.asarray(t, q.dtype), p)
        closed = delta > 0
        d = jnp.where(closed, delta, 1.0)  # safe power and gradient at δ ≤ 0
        n1 = laws.exponent + 1.0
        e = e + jnp.sum(jnp.where(closed, laws.stiffness * d**n1 / n1, 0.0))
    return e


def compliant_contact_forces(system: LagrangianSystem, q, u, t, p, friction: str = "regularized"):
    """Forces of the compliant contacts at (q, u, t).

    F_N = compliant normal law at δ = −g_C, δ̇ = −ġ_C (:mod:`jaxcontact.contact_laws`);
    with ``friction`` = "regularized" (static) and slip velocities given, F_T is the
    regularized Coulomb force of ``system.friction_regularization`` with the dynamic μ;
    "none" gives F_T = 0 (the event-driven scheme adds friction by its LCP instead).

    Spatial contacts (``tangent_directions`` 2): the slips are (kc, 2) and F_T (kc, 2) is the
    isotropic regularized law (:func:`jaxcontact.contact_laws.regularized_friction_vector`).

    Returns:
      (Q (n_u,), F_N (kc,), F_T (kc,) or (kc, 2)): the generalized force Q = W_C F_N + W_T F_T with
      W_Cᵀ = ∂g_C/∂q (· T(q) with a velocity map) and W_Tᵀ = ∂γ_T/∂u (by one vjp each), and the contact forces.
    """
    if friction not in ("regularized", "none"):
        raise ValueError(f"friction = {friction!r} must be 'regularized' or 'none'")
    if system.compliant_gaps is None:
        z = jnp.zeros((0,), q.dtype)
        return jnp.zeros_like(u), z, z
    t = jnp.asarray(t, q.dtype)
    gap_fn = lambda qq, tt: system.compliant_gaps(qq, tt, p)  # noqa: E731
    gap, gap_dot = jax.jvp(gap_fn, (q, t), (coordinate_rate(system, q, u), jnp.ones_like(t)))
    if system.velocity_map is None:
        _, pull_back = jax.vjp(lambda qq: gap_fn(qq, t), q)
    else:  # the force in the velocities: (∂g/∂q T(q))ᵀ F_N, pulled back through u ↦ ∂g/∂q T(q) u
        _, pull_back = jax.vjp(lambda uu: jax.jvp(lambda qq: gap_fn(qq, t), (q,), (system.velocity_map(q, uu),))[1], u)
    if _has_friction(system, friction):
        slip, pull_back_T = jax.vjp(lambda uu: system.compliant_slip_velocity(q, uu, t, p), u)
        F_N, F_T = compliant_law(system, p, gap, gap_dot, slip)
        return pull_back(F_N)[0] + pull_back_T(F_T)[0], F_N, F_T
    F_N, _ = compliant_law(system, p, gap, gap_dot, None)
    F_T = jnp.zeros_like(F_N) if system.tangent_directions == 1 else jnp.zeros(F_N.shape + (2,), F_N.dtype)
    return pull_back(F_N)[0], F_N, F_T


def _has_friction(system: LagrangianSystem, friction: str) -> bool:
    return friction == "regularized" and system.compliant_slip_velocity is not None


def compliant_law(system: LagrangianSystem, p, gap, gap_dot, slip):
    """(F_N, F_T) of the compliant contacts from their gaps, gap rates and slip velocities (None: no friction,
    F_T None): the normal law at δ = −g, δ̇ = −ġ and the regularized Coulomb law (isotropic on a tangent plane
    for spatial contacts)."""
    laws = system.compliant_laws(p)
    F_N = compliant_normal_force(-gap, -gap_dot, laws.stiffness, laws.exponent, laws.damping, system.compliant_damping)
    if slip is None:
        return F_N, None
    law = regularized_friction_vector if system.tangent_directions == 2 else regularized_friction
    return F_N, law(slip, F_N, laws.friction, system.friction_regularization, laws.slip_width, laws.slip_width0)


def compliant_contact_law(system: LagrangianSystem, t, friction: str = "regularized") -> RowForces | None:
    """The compliant contacts' forces in the form Hᵀ F(q, w) of :class:`RowForces`, for a scheme that takes
    their Jacobians (w = the gap rates, then the slip velocities; F = F_N, then F_T), or None without any.
    ``velocities`` is affine in u where a gap or a slip moves with time (its linear part is H)."""
    if system.compliant_gaps is None:
        return None
    t = jnp.asarray(t)
    frictional = _has_friction(system, friction)

    def velocities(q, u, p):
        gap_dot = jax.jvp(
            lambda qq, tt: system.compliant_gaps(qq, tt, p),
            (q, t.astype(q.dtype)),
            (coordinate_rate(system, q, u), jnp.ones((), q.dtype)),
        )[1]
        if not frictional:
            return gap_dot
        return jnp.concatenate(
            [gap_dot, jnp.reshape(system.compliant_slip_velocity(q, u, t.astype(q.dtype), p), (-1,))]
        )

    def law(q, w, p):
        gap = system.compliant_gaps(q, t.astype(q.dtype), p)
        kc = gap.shape[0]
        slip = None
        if frictional:
            slip = w[kc:] if system.tangent_directions == 1 else jnp.reshape(w[kc:], (kc, 2))
        F_N, F_T = compliant_law(system, p, gap, w[:kc], slip)
        return F_N if F_T is None else jnp.concatenate([F_N, jnp.reshape(F_T, (-1,))])

    return RowForces(velocities, law)
