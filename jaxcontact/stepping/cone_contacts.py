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
import numpy as np

from jaxcontact.cones import BandedLU, DenseLU, delassus, newton, nsgs
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
# The relaxation of the sweeps a step's problem needs beyond its first chunk (``nsgs``'s ``later_omega``,
# :func:`later_relaxation`). The slow problems of a column or chain of contacts are slow in the chain's
# smoothest modes, which over-relaxation damps faster; ω = 1 keeps the first sweep, which solves most
# warm-started steps. On a column of spheres 1.2 to 1.5 measured about alike and 1.7 slower (bench/RESULTS.md).
LATER_OMEGA = 1.3
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


def staged_sweeps(solver: str, differentiation: str) -> bool:
    """Whether a step's spatial cone solve runs NSGS' staged sweeps (implicit mode, not the fused GPU kernel of
    :func:`fused_for`, which takes D dense): where D by block rows (:func:`block_columns`) is read."""
    if solver != "nsgs" or differentiation != "implicit":
        return False
    return jax.default_backend() != "gpu" if FUSED == "auto" else FUSED is False


# The most samples a device steps at once through the staged sweeps (a study's sub-batches,
# :func:`samples_per_call`). A batch's sweeps, and the local solves' branches, run wherever one lane needs them,
# so a wider batch sweeps more lanes that need nothing, and its lane arrays outgrow a CPU's caches; a narrower one
# pays the loops' fixed cost per step for fewer samples (bench/RESULTS.md).
SAMPLES_PER_CALL = 64


def samples_per_call(solver: str, differentiation: str) -> int | None:
    """The most samples a device should step at once with this cone solve: :data:`SAMPLES_PER_CALL` on the staged
    sweeps (:func:`staged_sweeps`), else None (the fused GPU kernel and the fixed sweeps run a batch at full
    width)."""
    return SAMPLES_PER_CALL if staged_sweeps(solver, differentiation) else None


def per_contact_order(k: int) -> np.ndarray:
    """Indices taking [N (k); T (2k)] rows to the per-contact order (N, T1, T2)₀, (N, T1, T2)₁, … (static)."""
    i = np.arange(k)
    return np.stack([i, k + 2 * i, k + 2 * i + 1], axis=1).reshape(-1)


def later_relaxation(omega, k: int, n_u: int) -> float | None:
    """NSGS' relaxation of a step's later sweeps (``later_omega``) for k contacts on n_u velocities:
    :data:`LATER_OMEGA` where the scheme leaves ω to the solver (None) and the 3k cone unknowns do not
    outnumber the velocities; None (ω for every sweep) elsewhere. Where they do (a box on its vertices), W has
    a null space along which Gauss–Seidel creeps, and over-relaxing slows that creep down."""
    return LATER_OMEGA if omega is None and 3 * k <= n_u else None


def _nsgs(W, q, mu, warm, *, iterations, omega, tol, differentiation, linear_solver, later_omega):
    implicit = differentiation == "implicit"
    fused = fused_for(W, q, mu, differentiation)
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
        rescue_after=RESCUE_AFTER if implicit else None,
        rescue_solver=linear_solver,
        later_omega=later_omega if implicit and not fused else None,
        fused=fused,
    )


def _newton(W, q, mu, warm, *, iterations, omega, tol, differentiation, linear_solver, later_omega):
    return newton(W, q, mu, iterations=iterations, r0=warm, tol=tol, linear_solver=linear_solver)


# A step's cone problem is small and dense (D from the mass matrix): the dense LU, unless the step knows D's
# pattern (``newton_solver``).
CONE_NEWTON_SOLVER = DenseLU()


def newton_solver(coupling) -> DenseLU | BandedLU:
    """The Newton systems' solver for a step's cone problem: the LU within D's band in the per-contact order
    (:func:`per_contact_band` of the contacts' static ``coupling``, :func:`contact_coupling`) where that pays
    (:meth:`BandedLU.pays`), else (or where ``coupling`` is None: D's pattern unknown) the dense LU."""
    if coupling is None:
        return CONE_NEWTON_SOLVER
    band = per_contact_band(coupling)
    return BandedLU(*band) if BandedLU.pays(3 * coupling.shape[0], *band) else CONE_NEWTON_SOLVER


def contact_coupling(pattern) -> np.ndarray:
    """(k, k) static bool: the contacts whose blocks meet in a Delassus pattern (3k, 3k) static bool, rows
    [N (k); T (2k)]; every contact meets itself."""
    k = pattern.shape[0] // 3
    order = per_contact_order(k)
    blocks = np.asarray(pattern)[np.ix_(order, order)].reshape(k, 3, k, 3).any(axis=(1, 3))
    return blocks | np.eye(k, dtype=bool)


def per_contact_band(coupling) -> tuple[int, int]:
    """(lower, upper): the band of D in the cone problem's per-contact order, for the contacts' ``coupling``
    (:func:`contact_coupling`): contact blocks 3 × 3, so a neighbour's block reaches 3 diagonals further."""
    i, j = np.nonzero(coupling)
    return int(3 * np.max(i - j) + 2), int(3 * np.max(j - i) + 2)


def block_columns(coupling) -> np.ndarray | None:
    """(k, kmax) static: for each contact the contacts its row of D meets (``coupling``, :func:`contact_coupling`),
    padded with −1, where that layout (:class:`~jaxcontact.cones.delassus.BlockRows`) pays: each contact meets
    at most half the contacts. None where it does not."""
    count = coupling.sum(axis=1)
    kmax = int(count.max())
    if 2 * kmax > coupling.shape[0]:
        return None
    cols = np.full((coupling.shape[0], kmax), -1)
    for i, row in enumerate(coupling):
        cols[i, : count[i]] = np.flatnonzero(row)
    return cols


def _by_block_rows(D, cols: np.ndarray):
    """D (3k, 3k), per-contact order, as :class:`~jaxcontact.cones.delassus.BlockRows` on the static block
    columns ``cols`` (:func:`block_columns`; a padding slot is a zero block at the row's own contact)."""
    k = cols.shape[0]
    own = np.where(cols < 0, np.arange(k)[:, None], cols)
    values = D.reshape(k, 3, k, 3).transpose(0, 2, 1, 3)[np.arange(k)[:, None], own]
    values = jnp.where(jnp.asarray(cols < 0)[:, :, None, None], 0.0, values)
    return delassus.BlockRows(jnp.asarray(own, jnp.int32), values)


# solver name -> solve of the per-contact-ordered, masked problem (a cones ContactSolution)
CONE_SOLVERS = {"nsgs": _nsgs, "newton": _newton}


def solve_cone_contacts(
    D,
    c,
    mu,
    active,
    warm_N,
    warm_T,
    *,
    iterations,
    omega,
    tol,
    differentiation="unroll",
    solver="nsgs",
    linear_solver=CONE_NEWTON_SOLVER,
    blocks=None,
    later_omega=None,
) -> ContactSolution:
    """Solve ξ = D P + c on Coulomb cones for the active contacts.

    D (3k, 3k), or :class:`~jaxcontact.cones.delassus.Factored` with columns in that order (NSGS then
    sweeps on the factors), c (3k,): rows and columns ordered [N (k); T1, T2 per contact (2k)];
    mu, active (k,); warm_N (k,), warm_T (2k,): the previous step's impulses.
    ``differentiation``: "unroll" (exactly ``iterations`` sweeps, differentiable in both
    modes) or "implicit" (sweeps until Siconos' error ≤ tol, gradients by the implicit
    function theorem, reverse mode). ``solver``: "nsgs" or "newton" (at most ``iterations``
    Newton steps until the error ≤ tol; implicit gradients whatever ``differentiation``
    says, ``omega`` unused). ``omega``: NSGS' relaxation (None: 1); ``later_omega``: None, or NSGS' relaxation of
    the sweeps after the first chunk in the implicit mode's staged sweeps (:func:`later_relaxation`; not in the
    unrolled mode or the fused GPU kernel). Returns P_N (k,), P_T (2k,) and the solver's
    residual (Siconos' error), sweeps and convergence flag. ``linear_solver``: how Newton (the solver, or
    NSGS' rescue) solves its systems (:func:`newton_solver`). ``blocks``: None, or D's static block columns
    (:func:`block_columns`), on which the implicit mode's staged sweeps read D by block rows (a contact's
    update then reads the blocks it meets, not its whole row).
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
    if blocks is not None and staged_sweeps(solver, differentiation) and not delassus.is_factored(Dp):
        Dp = _by_block_rows(Dp, blocks)
    sol = CONE_SOLVERS[solver](
        Dp,
        cp,
        mu,
        warm,
        iterations=iterations,
        omega=omega,
        tol=tol,
        differentiation=differentiation,
        linear_solver=linear_solver,
        later_omega=later_omega,
    )
    r = sol.r.reshape(k, 3)
    return ContactSolution(r[:, 0], r[:, 1:].reshape(-1), sol.residual, sol.iterations, sol.converged)
