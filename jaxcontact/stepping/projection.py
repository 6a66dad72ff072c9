"""Projection of a drifted state back onto the constraint manifold (docs/theory/projection-baumgarte.md).

A time stepper that enforces the bilateral constraints at the velocity level
(Moreau–Jean) lets the positions drift off Φ(q, t) = 0 and lets closed
contacts sink into their obstacles. After the step, the state (q̃, ũ) is
corrected, position first, then velocity at the corrected position:

Position — the mass-metric closest point
    min ½ ‖q − q̃‖²_M   s.t.  Φ(q, t) = 0   (and contact rows, below),
with M = M(q̃, p) held fixed. Each iteration linearises the constraints at the
current iterate q_k and solves the saddle-point system

    [[M, Φ_qᵀ], [Φ_q, 0]] [q_{k+1} − q̃; η] = [0; −Φ(q_k) + Φ_q (q_k − q̃)]

by its Schur complement G = Φ_q M⁻¹ Φ_qᵀ:

    q_{k+1} = q̃ − M⁻¹ Φ_qᵀ G⁻¹ (Φ(q_k) − Φ_q (q_k − q̃)),   Φ_q = Φ_q(q_k).

The first iteration (q_0 = q̃) is exactly the 2015 projection-correction paper's step
``[[M, Φ_qᵀ],[Φ_q, 0]] [Δq; η] = [0; −Φ(q̃)]``. Later iterations keep the
offset q_k − q̃ in the right-hand side, i.e. each iterate is the M-projection
of q̃ itself (not of the previous iterate) onto the current linearisation.
A fixed point therefore satisfies the first-order conditions of the closest
point, M (q − q̃) ∈ range Φ_qᵀ and Φ(q) = 0, whereas restarting the plain
step from each iterate lands on *a* point of the manifold that differs from
the closest one by O(‖Φ(q̃)‖²) (measured on a bar pendulum with a drift of
1e-3: 5.2e-6 after six restarted steps, 1.3e-8 after two of ours; the
closest-point error after two iterations is O(‖Φ(q̃)‖³)). The cost is the
same; Φ(q_k) converges quadratically (Φ(q_2) = O(‖Φ(q̃)‖⁴)), so one or two
iterations suffice.

Velocity — one linear solve at the corrected q:
    min ½ ‖u − ũ‖²_M   s.t.  Φ_q u + Φ_t = target  (0 by default),
    u = ũ − M⁻¹ Φ_qᵀ G⁻¹ (Φ_q ũ + Φ_t − target).
The correction u − ũ is M-orthogonal to the tangent space {v : Φ_q v = 0}.
``target`` is the hook for velocity-level Baumgarte stabilisation
(:func:`jaxcontact.stepping.baumgarte.baumgarte_velocity_target`).

Unilateral contacts (``contacts=True``; ignored by systems without gaps):

* position, ``contact_mode="equality"`` (default): contacts penetrating at q̃
  (g_N(q̃) < 0) get the extra equality rows g_N(q) = 0 — constraint-stabilised
  time stepping. Open contacts (g_N(q̃) ≥ 0) are not touched. Exact and smooth
  (the rows join the bilateral ones in one Schur complement), but a penetrating contact that the bilateral correction
  alone would have opened is put on the surface instead of left open, and two
  contacts whose lifts are coupled may get an adhesive (negative) multiplier;
  both effects are of the size of the drift.
* position, ``contact_mode="inequality"``: every contact gets the linearised
  row g_N(q_k) + W_Nᵀ (q − q_k) ≥ 0, so each iteration is the true M-projection
  onto the linearised feasible set — a small LCP in the contact multipliers
  (Delassus matrix Wᵀ M̂ W with the bilateral constraints eliminated,
  M̂ = M⁻¹ − M⁻¹Φ_qᵀG⁻¹Φ_qM⁻¹), solved by :func:`jaxcontact.lcp.pgs.pgs` with a
  fixed number of sweeps (exact after one sweep for a single contact).
* velocity, ``contact_mode="inequality"`` (default): the closed contacts get
  γ_N = W_Nᵀ u + ∂g_N/∂t ≥ 0, again an LCP. An *equality* γ_N = 0 would be
  wrong here: right after an impact a contact is closed (the position was
  just projected onto g_N = 0) but separating (γ_N⁺ = −ε γ_N⁻ > 0); an equality
  would glue it and kill the bounce. Restricting equalities to the contacts
  with γ_N < 0 is still not the projection when contacts are coupled (fixing
  one can pull another into approach, or need an adhesive impulse). The LCP
  leaves contacts with γ_N ≥ 0 alone unless the coupling requires otherwise.
  ``"equality"`` (γ_N = 0 on every closed contact) is offered for
  comparison and for persistent contacts.
  A contact is closed when it is in ``closed`` (a boolean (k,) mask) or,
  without a mask, when g_N(q) ≤ ``gap_tol``.

Contacts in a time stepper. Which contacts to put back, and when, decides
whether the corrected scheme is stable; measured on the four-bar hitting a wall
with Moreau–Jean at h = 0.01 s (ε = 0.8, T = 10 N·m, 3 s simulated):

* Bilateral projection only: ‖Φ‖ ≤ 4e-15 at every step, but the linkage comes
  to rest 9.8 mm inside the wall (without any projection: 10.4 mm inside,
  ‖Φ‖ = 1.5e-2).
* Every penetrating contact lifted after every step (``position_candidates``
  None): a limit cycle, never at rest — impacts every 4 steps with a 1.5 cm
  rebound, energy constant. At h = 0.01 point a penetrates up to 2.2 cm
  within a step; lifting it back along the normal against the motor adds
  the motor's work over that distance (≈ T Δθ1, about 1–2 J per lift) while
  the velocity is kept, which balances the restitution loss. Lifting only
  contacts that carried an impulse does the same.
* Projecting the velocity of a penetrating, approaching contact that carried
  no impulse (it was open at the step's midpoint, where Moreau–Jean decides
  activity) would pre-empt Newton's law: a perfectly plastic impact.
* Lifting only *resting* contacts (:func:`resting_contacts`: an impulse and
  |γ_N| ≤ rest_speed at the step's end) and setting their normal velocity to
  zero (``velocity_contact_mode="equality"``): the impacts follow Newton's
  law, the chatter decays as in the uncorrected scheme, and the linkage then
  rests exactly on the wall (gap 0 to 1e-16, ‖Φ‖ ≤ 4e-15 at every step), for
  rest_speed from 1e-3 to 1 m/s. The zero normal velocity matters: a resting
  contact lifted with a tiny separating velocity is inactive at the next
  midpoint, and one free step under the motor sends it 9 mm back in. For the
  same reason the lift must land within the stepper's activation tolerance
  (64 eps): from the 7–10 mm that Moreau–Jean rests inside the wall, two
  Newton iterations leave a gap of 8e-10 m (‖Φ‖ 1e-8) and the cycle
  restarts every 34 steps; three leave 1e-17 — use position_iterations=3.
  Point a against a reference at h = 1e-4 (same scheme, resting policy),
  over 2 s: mean error 3.3e-3 m with this policy, 1.1e-2 with bilateral
  projection only, 1.7e-2 uncorrected; the maximum (6.3e-2 m for all three)
  is an impact-timing error at h = 0.01 that no projection changes.

So :func:`project` takes both masks from the caller; its docstring shows the
stepper call.
Rank loss. At a singular configuration Φ_q loses rank (e.g. a one-DOF linkage
at a dead point, two links aligned) and G is singular. Every Schur complement
is factorised as G + δ I with δ = ``regularization`` · max diag G (the dtype's
100·eps by default; δ = ``regularization`` when G = 0). Where G is regular
this changes the step by a relative O((δ/σ_min(G))²) (one step of
iterative refinement follows the shifted solve), which the next iteration
removes. Where G is singular it is a Levenberg–Marquardt (damped
least-squares) step: the consistent part of the constraint error is removed,
the inconsistent part (no direction of motion can reduce it to first order)
is left, and the step length stays bounded by O(‖Φ‖/√δ) (the refinement
at most doubles it). The output is finite, never NaN, and so are gradients
(Cholesky of a positive definite matrix).
*Near* a singular configuration (within ~√δ) that bound is loose and plain
Newton itself misbehaves: at a tangency (two links stretched straight, a
point on two touching circles) the root is double, the linearisation
attributes the residual to the nearly-null direction and the step overshoots
by up to ~‖Φ‖/σ_min (measured: a point 1e-6 off the tangency and 1e-3 off
the root is thrown 0.5 away). ``damping`` (Levenberg–Marquardt, δ_k grows
with ‖Φ(q_k)‖, quadratic convergence kept) removes this: the same point
lands within 1e-6 of the root. It is off by default, as the paper's scheme
has none and regular configurations do not need it; the velocity projection
needs no damping (its right-hand side Φ_q ũ lies in the range of Φ_q, so its
correction is bounded by ‖ũ‖_M whatever the rank; a rheonomic Φ_t outside
that range is treated like the position's inconsistent part). The same
regularisation is used for the equality contact rows (a contact direction
that the bilateral constraints already fix, or redundant contacts).

Everything is a pure function of arrays: static options are Python values
(iteration counts, modes), physical values come from the parameter pytree p.
jit, vmap and reverse-mode differentiation go through the fixed iterations.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from jaxcontact.lcp.pgs import pgs
from jaxcontact.lcp.rows import decouple_rows
from jaxcontact.stepping.kernels import gaps_and_rates, mass_solver, regularization_shift, regularized_solve
from jaxcontact.stepping.manifold_projection import project_on_manifold
from jaxcontact.stepping.sparse_rows import DenseRows, gap_rows
from jaxcontact.system import LagrangianSystem, value_and_jacobian

CONTACT_MODES = ("equality", "inequality")


# ----------------------------------------------------------------------------- checks


def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a static int >= {minimum}; got {value!r}")


def _check_options(system, q, *, contact_mode, contact_iterations, regularization):
    if not isinstance(system, LagrangianSystem):
        raise TypeError(f"system must be a LagrangianSystem; got {type(system).__name__}")
    if jnp.ndim(q) != 1 or jnp.shape(q)[0] != system.n_dof:
        raise ValueError(f"q must have shape ({system.n_dof},) (call under vmap for batches); got {jnp.shape(q)}")
    if contact_mode not in CONTACT_MODES:
        raise ValueError(f"contact_mode must be one of {CONTACT_MODES}; got {contact_mode!r}")
    _check_int("contact_iterations", contact_iterations, 1)
    if regularization is not None and not (isinstance(regularization, float) and regularization > 0):
        raise ValueError(f"regularization must be a positive float or None; got {regularization!r}")


# ----------------------------------------------------------------------------- linear algebra


def _safe_norm(x):
    """‖x‖₂ with a finite gradient at x = 0 (double where)."""
    s = jnp.sum(x * x)
    pos = s > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, s, 1.0)), 0.0)


def _affine_projection(solve_M, x0, J, r, W, s, mask, *, mode, contact_iterations, reg, lm=None):
    """argmin ½‖x − x0‖²_M subject to affine constraints, all relative to x0.

    Bilateral rows:  J (x − x0) + r = 0                       (J (m, n), r (m,))
    Contact rows:    s + Wᵀ (x − x0) = 0 ("equality") or ≥ 0 ("inequality")
                     for the rows where ``mask`` is True       (W the k rows' operator, s (k,)).

    "equality": all rows at once, one Schur complement of the stacked rows
    [J; Wᵀ] (rows outside the mask decoupled: zero row, unit diagonal, zero
    right-hand side). "inequality": the bilateral rows are eliminated first
    (Schur complement G), then the contact multipliers solve an LCP on the
    Delassus matrix A = Wᵀ M̂ W. W enters through its products alone
    (:mod:`jaxcontact.stepping.sparse_rows`), M through ``solve_M`` (:func:`mass_solver`).
    """
    m, k = J.shape[0], W.k
    Y = solve_M(J.T) if m else jnp.zeros((x0.shape[0], 0), x0.dtype)  # M⁻¹ Φ_qᵀ  (n, m)
    if k == 0 or mask is None:
        if m == 0:
            return x0
        return x0 - Y @ regularized_solve(J @ Y, r, reg, lm)
    WY, WW = W.cross(Y), W.gram(solve_M)  # Wᵀ M⁻¹ Φ_qᵀ (k, m), Wᵀ M⁻¹ W (k, k)
    if mode == "equality":
        rows = jnp.concatenate([jnp.ones((m,), bool), mask])
        G = jnp.block([[J @ Y, WY.T], [WY, WW]])
        scale = jnp.max(jnp.where(rows, jnp.diagonal(G), 0.0), initial=0.0)
        G, rhs = decouple_rows(G, jnp.concatenate([r, s]), rows, diagonal=jnp.where(scale > 0, scale, 1.0), outside=0.0)
        eta = regularized_solve(G, rhs, reg, lm)
        return x0 - Y @ eta[:m] - solve_M(W.apply(eta[m:]))
    x, A = x0, WW
    if m:
        G = J @ Y
        x = x0 - Y @ regularized_solve(G, r, reg, lm)
        C = regularized_solve(G, WY.T, reg)  # G⁻¹ Φ_q M⁻¹ W  (m, k)
        A = WW - WY @ C  # Wᵀ M̂ W
    b = s + W.t(x - x0)  # contact rows after the bilateral step
    scale = jnp.max(jnp.where(mask, jnp.diagonal(A), 0.0), initial=0.0)
    scale = jnp.where(scale > 0, scale, 1.0)
    # Rows outside the mask are decoupled (identity·scale, right-hand side 1): λ = 0 there.
    lam = jnp.where(mask, pgs(*decouple_rows(A, b, mask, diagonal=scale), iterations=contact_iterations).z, 0.0)
    dx = solve_M(W.apply(lam))  # M̂ W λ
    return x + (dx - Y @ (C @ lam) if m else dx)


# ----------------------------------------------------------------------------- position


def project_position(
    system: LagrangianSystem,
    q,
    t,
    p,
    *,
    iterations: int = 2,
    contacts: bool = True,
    contact_mode: str = "equality",
    contact_iterations: int = 20,
    regularization: float | None = None,
    damping=None,
    candidates=None,
):
    """Project q onto Φ(q, t, p) = 0 (and the contacts) in the metric M(q, p).

    Args:
      system: the :class:`~jaxcontact.system.LagrangianSystem`.
      q: (n,) drifted configuration q̃.
      t: time at which the constraints must hold (rheonomic Φ).
      p: parameter pytree.
      iterations: Newton iterations (static; each is one linearisation of Φ
        and one Schur-complement solve). 0 returns q unchanged.
      contacts: also project contacts (see the module docstring); ignored
        when the system has no gaps.
      contact_mode: "equality" (contacts with g_N(q̃) < 0 put onto g_N = 0) or
        "inequality" (all contacts kept at g_N ≥ 0 by an LCP per iteration).
      contact_iterations: PGS sweeps of the "inequality" mode (static).
      regularization: relative Tikhonov shift of the Schur complements
        (default 100·eps of the dtype); see "Rank loss" in the module docstring.
      damping: None (plain Newton, the paper's) or a Levenberg–Marquardt factor κ
        ≥ 0 (float or array leaf) in units of 1 / (M-norm length), i.e.
        1/(m·√kg) in SI: the bilateral Schur complement is shifted by
        κ · √(max diag G) · ‖Φ(q_k)‖ as well (a shift that vanishes on the
        manifold, so the fixed point is unchanged), which keeps steps small near
        singular configurations at the price of a slightly slower (still
        quadratic) convergence; κ ≈ 1 / (√m̄ · ℓ) for a mass m̄ and length ℓ
        typical of the mechanism.
      candidates: boolean (k,) mask of the contacts that may be projected
        (None: all). See "Contacts in a time stepper" in the module docstring.

    Returns:
      The corrected configuration, shape (n,).
    """
    _check_options(
        system, q, contact_mode=contact_mode, contact_iterations=contact_iterations, regularization=regularization
    )
    _check_int("iterations", iterations, 0)
    use_contacts = contacts and system.gaps is not None
    if iterations == 0 or (system.constraints is None and not use_contacts):
        return q
    reg = regularization_shift(q.dtype, regularization)
    t = jnp.asarray(t, q.dtype)
    q_tilde = q
    solve_M = mass_solver(system, q_tilde, p)
    n = system.n_dof

    def bilateral(x):
        if system.constraints is None:
            return jnp.zeros((0,), q.dtype), jnp.zeros((0, n), q.dtype)
        return value_and_jacobian(lambda y: system.constraints(y, t, p), x)

    def gaps(x):
        return gap_rows(system, x, t, p)

    mask = None
    if use_contacts:
        g0 = system.gaps(q_tilde, t, p)
        mask = g0 < 0 if contact_mode == "equality" else jnp.ones(g0.shape, bool)
        if candidates is not None:
            candidates = jnp.asarray(candidates, bool)
            if candidates.shape != g0.shape:
                raise ValueError(f"candidates must be a boolean mask of shape {g0.shape}; got {candidates.shape}")
            mask = mask & candidates

    qk = q_tilde
    for _ in range(iterations):  # a static, small count: unrolled
        d = qk - q_tilde
        phi, J = bilateral(qk)
        r = phi - J @ d
        if use_contacts:
            g, W = gaps(qk)
            s = g - W.t(d)
        else:
            W, s = DenseRows(jnp.zeros((n, 0), q.dtype)), jnp.zeros((0,), q.dtype)
        qk = _affine_projection(
            solve_M,
            q_tilde,
            J,
            r,
            W,
            s,
            mask,
            mode=contact_mode,
            contact_iterations=contact_iterations,
            reg=reg,
            lm=None if damping is None else damping * _safe_norm(phi),
        )
    return qk


# ----------------------------------------------------------------------------- velocity


def project_velocity(
    system: LagrangianSystem,
    q,
    u,
    t,
    p,
    *,
    contacts: bool = True,
    contact_mode: str = "inequality",
    closed=None,
    gap_tol=1e-9,
    contact_iterations: int = 20,
    target=None,
    regularization: float | None = None,
):
    """Project u onto Φ_q u + Φ_t = target (and closed contacts) in the metric M(q, p).

    Args:
      system, q, t, p: as in :func:`project_position` (q should already be on
        the manifold: call this after the position projection).
      u: (n,) velocity ũ to correct.
      contacts: also correct closed contacts; ignored without gaps.
      contact_mode: "inequality" (γ_N ≥ 0 on closed contacts, by PGS; the
        default, see the module docstring for why) or "equality" (γ_N = 0).
      closed: boolean (k,) mask of closed contacts; None means g_N(q) ≤ gap_tol.
      gap_tol: gap below which a contact counts as closed when ``closed`` is
        None, in the system's length unit (an array leaf is fine).
      contact_iterations: PGS sweeps of the "inequality" mode (static).
      target: (m,) right-hand side of the bilateral velocity rows (None: 0);
        the hook for velocity-level Baumgarte stabilisation.
      regularization: as in :func:`project_position`.

    Returns:
      The corrected velocity, shape (n,).
    """
    _check_options(
        system, q, contact_mode=contact_mode, contact_iterations=contact_iterations, regularization=regularization
    )
    if jnp.shape(u) != jnp.shape(q):
        raise ValueError(f"u must have the shape of q {jnp.shape(q)}; got {jnp.shape(u)}")
    use_contacts = contacts and system.gaps is not None
    if system.constraints is None and not use_contacts:
        return u
    reg = regularization_shift(u.dtype, regularization)
    t = jnp.asarray(t, u.dtype)
    n = system.n_dof
    solve_M = mass_solver(system, q, p)
    if system.constraints is not None:
        J = jax.jacfwd(system.constraints, argnums=0)(q, t, p)
        phi_t = jax.jacfwd(system.constraints, argnums=1)(q, t, p)
        r = J @ u + phi_t
        if target is not None:
            r = r - target
    else:
        J, r = jnp.zeros((0, n), u.dtype), jnp.zeros((0,), u.dtype)
    W, s, mask = DenseRows(jnp.zeros((n, 0), u.dtype)), jnp.zeros((0,), u.dtype), None
    if use_contacts:
        g, W = gap_rows(system, q, t, p)
        g_t = jax.jacfwd(system.gaps, argnums=1)(q, t, p)
        s = W.t(u) + g_t  # γ_N(ũ)
        mask = (g <= gap_tol) if closed is None else jnp.asarray(closed, bool)
        if mask.shape != g.shape:
            raise ValueError(f"closed must be a boolean mask of shape {g.shape}; got {mask.shape}")
    return _affine_projection(
        solve_M, u, J, r, W, s, mask, mode=contact_mode, contact_iterations=contact_iterations, reg=reg
    )


# ----------------------------------------------------------------------------- both


def resting_contacts(system: LagrangianSystem, q, u, t, p, impulses, rest_speed):
    """Contacts in persistent contact after a step: boolean (k,) mask.

    A contact is resting when its normal velocity at the end of the step is
    small, |γ_N(q, u, t)| ≤ ``rest_speed`` (a velocity, an array leaf is fine),
    and it carried an impulse in the step (P_N > 0) or is inside its obstacle
    (g_N < 0). These are the contacts that :func:`project` may put back on their
    surface without pumping energy (see "Contacts in a time stepper" in the
    module docstring). Redundant contacts need the second condition: a box
    resting on a face is held by impulses on some of its four vertices only (the
    split is not unique), and lifting those alone tilts it into the plane.
    """
    if system.gaps is None:
        return jnp.zeros((0,), bool)
    gap, gamma = gaps_and_rates(system, p, q, u, t)
    return ((jnp.asarray(impulses) > 0) | (gap < 0)) & (jnp.abs(gamma) <= rest_speed)


def project(
    system: LagrangianSystem,
    q,
    u,
    t,
    p,
    *,
    position_iterations: int = 2,
    contacts: bool = True,
    position_candidates=None,
    velocity_closed=None,
    position_contact_mode: str = "equality",
    velocity_contact_mode: str = "inequality",
    contact_iterations: int = 20,
    regularization: float | None = None,
    damping=None,
):
    """Position projection, then velocity projection at the corrected position.

    Args:
      system, q, u, t, p: as in :func:`project_position` / :func:`project_velocity`.
      position_iterations: Newton iterations of the position step (static).
      contacts: project penetrating contacts onto their surface at the position level.
      position_candidates: boolean (k,) mask of the contacts that may be put
        back on their surface (None: every penetrating one).
      velocity_closed: boolean (k,) mask of the contacts whose normal velocity is
        projected too, or None for none.
      position_contact_mode, velocity_contact_mode, contact_iterations, regularization, damping: as in
        the two functions.

    In a Moreau–Jean stepper use the resting contacts for both masks and an
    equality at the velocity level (see "Contacts in a time stepper" in the
    module docstring)::

        rest = resting_contacts(system, q_E, u_E, t_E, p, P_N, rest_speed)
        q_E, u_E = project(system, q_E, u_E, t_E, p, position_iterations=3,
                           position_candidates=rest, velocity_closed=rest,
                           velocity_contact_mode="equality")

    Returns:
      (q, u): Φ(q) = 0, Φ_q u + Φ_t = 0, the chosen contacts on their surface.
    """
    q_new = project_position(
        system,
        q,
        t,
        p,
        iterations=position_iterations,
        contacts=contacts,
        contact_mode=position_contact_mode,
        contact_iterations=contact_iterations,
        regularization=regularization,
        damping=damping,
        candidates=position_candidates,
    )
    use_velocity_contacts = velocity_closed is not None and system.gaps is not None
    u_new = project_velocity(
        system,
        q_new,
        u,
        t,
        p,
        contacts=use_velocity_contacts,
        contact_mode=velocity_contact_mode,
        closed=velocity_closed if use_velocity_contacts else None,
        contact_iterations=contact_iterations,
        regularization=regularization,
    )
    return q_new, u_new


# ----------------------------------------------------------------------------- the scheme part


@dataclasses.dataclass(frozen=True)
class Projection:
    """Projection after a step, as a part any scheme can hold (``scheme.projection``; static options).

    After a step that ends at (q_E, u_E, t_E) with normal impulses P_N, :meth:`apply`
    projects the state onto Φ = 0 and Φ_q u + Φ_t = 0 in the mass metric and, with
    ``resting_contacts``, puts the resting rigid contacts (:func:`resting_contacts`:
    an impulse in the step and |γ_N| ≤ ``rest_speed``) onto their surface with γ_N = 0 —
    the policy that keeps Newton's law at impacts (see "Contacts in a time stepper" in
    the module docstring). The same call serves every scheme: Moreau–Jean's P_N are
    impulses, the force-based schemes report their forces integrated over the step.

    position_iterations: Newton iterations of the position projection. 3, not the paper's
      1–2: with 2, a lifted contact is left ~1e-9 m inside the wall, beyond Moreau–Jean's
      activation tolerance, and chatters.
    resting_contacts: also lift the resting contacts (ignored without rigid contacts).
    rest_speed: the normal speed (m/s) under which a contact that carried an impulse
      counts as resting (a numerical threshold, not a physical value).
    """

    position_iterations: int = 3
    resting_contacts: bool = True
    rest_speed: float = 1e-2

    def __post_init__(self):
        _check_int("position_iterations", self.position_iterations, 1)
        if not float(self.rest_speed) > 0.0:
            raise ValueError(f"rest_speed = {self.rest_speed} must be > 0")

    def apply(self, system: LagrangianSystem, p, q, u, t, impulses):
        """(q, u) projected (see the class docstring); unchanged when there is nothing to project."""
        contacts = self.resting_contacts and system.gaps is not None and jnp.shape(impulses)[0] > 0
        if system.constraints is None and not contacts:
            return q, u
        rest = resting_contacts(system, q, u, t, p, impulses, self.rest_speed) if contacts else None
        if system.velocity_map is not None:  # spatial bodies: corrections through the position update
            return project_on_manifold(system, q, u, t, p, iterations=self.position_iterations, resting=rest)
        return project(
            system,
            q,
            u,
            t,
            p,
            position_iterations=self.position_iterations,
            contacts=contacts,
            position_candidates=rest,
            velocity_closed=rest,
            velocity_contact_mode="equality",
        )


def check_part(projection) -> None:
    """Refuse, by value, a scheme's ``projection`` option that is not None or a :class:`Projection`."""
    if projection is not None and not isinstance(projection, Projection):
        raise ValueError(f"projection = {projection!r} must be None or a Projection (e.g. Projection())")
