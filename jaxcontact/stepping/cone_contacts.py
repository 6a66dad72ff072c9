"""The per-step contact problem of Moreau–Jean with spatial friction: Coulomb cones.

The stepper builds the local velocities ξ = D P + c of k contacts with the normal rows
first and then the two tangent rows of each contact, P = [P_N (k); P_T1,0, P_T2,0, P_T1,1, …],
as for planar contacts (:mod:`jaxcontact.stepping.contact_solve`). Here the rows are
reordered per contact, (N, T1, T2)₀, (N, T1, T2)₁, … (Siconos' order, the one of
:mod:`jaxcontact.cones`), and the problem — find P with K* ∋ ξ̂ ⟂ P ∈ K, Coulomb's cone
‖P_T‖ ≤ μ P_N in De Saxcé's form — goes to the cones' nonsmooth Gauss–Seidel solver
(:func:`jaxcontact.cones.nsgs`, the default) or to their semismooth Newton on the
Alart–Curnier function (:func:`jaxcontact.cones.newton`, ``solver="newton"``: a few
dense solves where Gauss–Seidel needs many sweeps, as on a column of stacked spheres,
whose chain of contacts passes a correction one contact per sweep), warm-started from the
previous step's impulses.

Contacts that are not active get an identity block and a separating free velocity
c = (1, 0, 0): every solver gives them P = 0, so the problem keeps a fixed shape.
Newton's restitution enters through c (ε_N γ_NA on the normal rows), so the cone
condition is on ξ_N = γ_NE + ε_N γ_NA, as in Siconos' NewtonImpactFrictionNSL.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxcontact.cones import DenseLU, delassus, newton, nsgs
from jaxcontact.stepping.contact_solve import ContactSolution

# Sweeps between two error checks of the implicit mode, in its first stage (the chunks then grow with the
# stages of :func:`jaxcontact.cones.lanes.iterate_lanes`). A step's problem, warm-started from the last step's
# impulses, is often solved in one sweep: a batch whose problems need one sweep then runs one, not a chunk.
CHECK_EVERY = 1
# Sweeps after which the implicit mode hands a step's unsolved problems to the cones' Newton (``nsgs``'s
# ``rescue_after``): most warm-started steps are solved in a sweep or two, and the few that are not (a box
# resting on redundant vertex contacts, whose impulses Gauss–Seidel moves only slowly along the null space of
# W) would otherwise set the number of sweeps of every sample of a batch.
RESCUE_AFTER = 9
# ``nsgs``'s ``fused`` for the implicit mode. "auto": a batch's sweeps run in one GPU kernel per step
# (:mod:`jaxcontact.cones.fused`) where JAX's backend is a GPU and the kernel applies (spatial cones, W dense
# or by its factors), the staged loops elsewhere; on a GPU the kernel's study runs and compiles faster
# (bench/RESULTS.md). True or False forces one; "interpret" runs the kernel through Pallas' interpreter (the
# CPU tests).
FUSED = "auto"


def fused_for(W, q, mu, differentiation):
    """``nsgs``'s ``fused`` for one step's problem (W, q per contact, μ): :data:`FUSED`, "auto" resolved."""
    if differentiation != "implicit":
        return False
    if FUSED != "auto":
        return FUSED
    return jax.default_backend() == "gpu" and q.shape[-1] == 3 * mu.shape[-1] and not delassus.is_blocks(W)


def per_contact_order(k: int):
    """Indices taking [N (k); T (2k)] rows to the per-contact order (N, T1, T2)₀, (N, T1, T2)₁, …."""
    i = jnp.arange(k)
    return jnp.stack([i, k + 2 * i, k + 2 * i + 1], axis=1).reshape(-1)


def _nsgs(W, q, mu, warm, *, iterations, omega, tol, differentiation):
    rescue = RESCUE_AFTER if differentiation == "implicit" else None
    return nsgs(
        W,
        q,
        mu,
        iterations=iterations,
        omega=omega,
        r0=warm,
        tol=tol,
        check_every=CHECK_EVERY,
        differentiation=differentiation,
        rescue_after=rescue,
        fused=fused_for(W, q, mu, differentiation),
    )


def _newton(W, q, mu, warm, *, iterations, omega, tol, differentiation):
    return newton(W, q, mu, iterations=iterations, r0=warm, tol=tol, linear_solver=CONE_NEWTON_SOLVER)


# A step's cone problem is small and dense (D from the mass matrix): the dense LU.
CONE_NEWTON_SOLVER = DenseLU()
# solver name -> solve of the per-contact-ordered, masked problem (a cones ContactSolution)
CONE_SOLVERS = {"nsgs": _nsgs, "newton": _newton}


def solve_cone_contacts(
    D, c, mu, active, warm_N, warm_T, *, iterations, omega, tol, differentiation="unroll", solver="nsgs"
) -> ContactSolution:
    """Solve ξ = D P + c on Coulomb cones for the active contacts.

    D (3k, 3k), or :class:`~jaxcontact.cones.delassus.Factored` with columns in that order (NSGS then
    sweeps on the factors), c (3k,): rows and columns ordered [N (k); T1, T2 per contact (2k)];
    mu, active (k,); warm_N (k,), warm_T (2k,): the previous step's impulses.
    ``differentiation``: "unroll" (exactly ``iterations`` sweeps, differentiable in both
    modes) or "implicit" (sweeps until Siconos' error ≤ tol, gradients by the implicit
    function theorem, reverse mode). ``solver``: "nsgs" or "newton" (at most ``iterations``
    Newton steps until the error ≤ tol; implicit gradients whatever ``differentiation``
    says, ``omega`` unused). Returns P_N (k,), P_T (2k,) and the solver's
    residual (Siconos' error), sweeps and convergence flag.
    """
    k = active.shape[0]
    order = per_contact_order(k)
    act = jnp.repeat(active, 3)
    if delassus.is_factored(D):
        # The contacts' columns of both factors: an inactive contact's are zero, its diagonal 1.
        cols = lambda F: jnp.where(act[None, :], F[:, order], 0.0)  # noqa: E731
        Dp = delassus.Factored(cols(D.H), cols(D.X), jnp.where(act, D.s[order], 1.0))
    else:
        Dp = D[order][:, order]
        Dp = jnp.where(act[:, None] & act[None, :], Dp, 0.0) + jnp.diag(jnp.where(act, 0.0, 1.0).astype(c.dtype))
    cp = jnp.where(act, c[order], jnp.tile(jnp.asarray([1.0, 0.0, 0.0], c.dtype), k))
    warm = jnp.concatenate([warm_N[:, None], warm_T.reshape(k, 2)], axis=1).reshape(-1)
    warm = jnp.where(act, warm, 0.0)
    mu = jnp.where(active, mu, 0.0)
    sol = CONE_SOLVERS[solver](
        Dp, cp, mu, warm, iterations=iterations, omega=omega, tol=tol, differentiation=differentiation
    )
    r = sol.r.reshape(k, 3)
    return ContactSolution(r[:, 0], r[:, 1:].reshape(-1), sol.residual, sol.iterations, sol.converged)
