"""Nonsmooth Gauss–Seidel (NSGS) and Jacobi sweeps for frictional contact on cones.

NSGS (Jean & Moreau; Siconos' ``fc3d_nsgs``): contacts in order, each solved
exactly (:mod:`jaxcontact.cones.local`) with the others frozen at their
newest values. One contact's free velocity is a row product of W: O(row)
with :class:`~jaxcontact.cones.delassus.BlockRows` (O(nnz) per sweep), O(d nc)
with a dense W.

Jacobi: every contact solved at once from the previous iterate (one W r
product and nc independent local solves per sweep — the variant that maps
to a GPU), then relaxed, r ← r + ω (r_local − r). Without relaxation it
oscillates when a contact's neighbours weigh more than its own block; the
default ω = 1 / G with the block Gershgorin number
G = max_i Σ_j ‖W_ii⁻¹ W_ij‖_F (≥ 1, the own block counted) damps exactly
that coupling. The fixed points do not depend on ω.

Stopping: with ``differentiation="implicit"`` (default) sweeps run in chunks of
``check_every`` (growing with the count) until Siconos' error ≤ tol or ``iterations`` sweeps
(``lax.while_loop``s; under vmap the unsolved problems are regrouped into narrower
batches as the count grows, :func:`~jaxcontact.cones.lanes.iterate_lanes`); gradients then come from the
implicit function theorem at the result (:mod:`jaxcontact.cones.implicit`). With ``"unroll"``
exactly ``iterations`` sweeps run in a ``lax.scan``, differentiable through
the sweeps.

Layout: both sweeps run on problems laid out with the batch last
(:mod:`jaxcontact.cones.lanes`), one problem being a batch of one; under
vmap a batch is solved in one call, each problem stopping as it would alone.
``rescue_after`` (:func:`nsgs`) hands the problems the sweeps have not solved
after that many sweeps to the cones' Newton: from the warm start ``r0``, then from the sweeps' iterate where
that left a problem unsolved; the sweeps then go on.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax

from jaxcontact.cones import delassus
from jaxcontact.cones.implicit import implicit_solution
from jaxcontact.cones.lanes import gs_sweep_lanes, in_lanes, iterate_lanes, jacobi_sweep_lanes
from jaxcontact.cones.laws import project_cone
from jaxcontact.cones.linear_solvers import BandedLU, DenseLU
from jaxcontact.cones.newton import newton_iterate
from jaxcontact.cones.solution import ContactSolution, make_solution, prepare

DIFFERENTIATION_MODES = ("implicit", "unroll")
# The stragglers' rescue (``rescue_after``): the step budget of the cones' Newton (a straggler is a problem
# Gauss–Seidel has not solved in ``rescue_after`` sweeps; the sweeps go on for whatever the Newton steps leave).
RESCUE_STEPS = 30
RESCUE_LINE_SEARCH = 20
RESCUE_SOLVER = DenseLU()


def _run(
    name,
    sweep_fn,
    W,
    q,
    mu,
    *,
    iterations,
    omega,
    r0,
    tol,
    check_every,
    differentiation,
    default_omega,
    rescue_after=None,
    rescue_solver=RESCUE_SOLVER,
    later_omega=None,
    fused=False,
):
    if differentiation not in DIFFERENTIATION_MODES:
        raise ValueError(f"{name}: differentiation must be one of {DIFFERENTIATION_MODES}; got {differentiation!r}")
    if isinstance(check_every, bool) or not isinstance(check_every, int) or check_every < 1:
        raise ValueError(f"{name}: check_every must be a static int >= 1; got {check_every!r}")
    W, q, mu, r0, tol, nc, d = prepare(W, q, mu, r0, name=name, tol=tol, iterations=iterations)
    if omega is not None and not isinstance(omega, jax.core.Tracer):
        o = float(omega)
        if not 0 < o < 2:
            raise ValueError(f"{name}: omega must be in (0, 2); got {omega!r}")
    if later_omega is not None and (
        isinstance(later_omega, bool) or not isinstance(later_omega, (int, float)) or not 0 < later_omega < 2
    ):
        raise ValueError(f"{name}: later_omega must be None or a static float in (0, 2); got {later_omega!r}")
    if rescue_after is not None and (
        isinstance(rescue_after, bool) or not isinstance(rescue_after, int) or rescue_after < 0
    ):
        raise ValueError(f"{name}: rescue_after must be None or a static int >= 0; got {rescue_after!r}")
    if not isinstance(rescue_solver, (DenseLU, BandedLU)):
        raise ValueError(f"{name}: rescue_solver must be DenseLU() or BandedLU(lower, upper); got {rescue_solver!r}")
    r0 = project_cone(r0.reshape(nc, d), mu).reshape(-1)

    def newton_rescue(W, q, mu, r0):
        return newton_iterate(
            delassus.to_dense(W),
            q,
            mu,
            r0,
            tol=tol,
            iterations=RESCUE_STEPS,
            line_search=RESCUE_LINE_SEARCH,
            linear_solver=rescue_solver,
        )

    rescue = newton_rescue if rescue_after is not None and differentiation == "implicit" else None
    if fused not in (True, False, "interpret"):
        raise ValueError(f"{name}: fused must be True, False or 'interpret'; got {fused!r}")
    if fused and (differentiation != "implicit" or d != 3 or delassus.is_blocks(W)):
        raise ValueError(
            f"{name}: fused sweeps solve spatial cones (d = 3) with W dense or factored, differentiated "
            f"implicitly; got d = {d}, W {'by block rows' if delassus.is_blocks(W) else 'dense or factored'}, "
            f"differentiation = {differentiation!r}"
        )
    if later_omega is not None and (fused or differentiation == "unroll"):
        raise ValueError(
            f"{name}: later_omega applies to the staged sweeps (implicit mode, not fused); got later_omega = "
            f"{later_omega!r} with differentiation = {differentiation!r}, fused = {fused!r}"
        )
    if fused is True and jax.default_backend() != "gpu":
        raise ValueError(
            f"{name}: fused=True compiles its kernel with Triton, for a GPU; JAX's backend here is "
            f"{jax.default_backend()!r} (fused='interpret' runs the kernel on any backend, slowly)"
        )

    def solve(W, q, mu, r0):
        om = default_omega(W, delassus.diagonal_blocks(W, nc), nc, d) if omega is None else omega
        kernel = functools.partial(
            iterate_lanes,
            sweep_fn,
            tol=tol,
            iterations=iterations,
            check_every=check_every,
            unroll=differentiation == "unroll",
            rescue=rescue,
            rescue_after=rescue_after or 0,
            later_omega=None if later_omega is None else float(later_omega),
            fused=bool(fused),
            interpret=fused == "interpret",
        )
        return in_lanes(kernel, W, q, mu, r0, jnp.asarray(om, q.dtype))

    if differentiation == "unroll":
        r, k = solve(W, q, mu, r0)
        return make_solution(W, q, mu, r, k, tol)
    return implicit_solution(solve, W, q, mu, r0, tol=tol)


def nsgs(
    W,
    q,
    mu,
    *,
    iterations: int = 1000,
    omega=None,
    r0=None,
    tol=None,
    check_every: int = 10,
    differentiation: str = "implicit",
    rescue_after: int | None = None,
    rescue_solver: DenseLU | BandedLU = RESCUE_SOLVER,
    later_omega: float | None = None,
    fused: bool | str = False,
) -> ContactSolution:
    """Nonsmooth block Gauss–Seidel for the frictional contact problem on cones.

    Args:
      W: (d nc, d nc) Delassus matrix, unknowns interleaved per contact
        (r_N, r_T…), or :class:`~jaxcontact.cones.delassus.BlockRows`, or
        :class:`~jaxcontact.cones.delassus.Factored` (a sweep then carries the velocity X r).
      q: (d nc,) free velocity; mu: (nc,) friction coefficients ≥ 0. d = 3
        (space) or 2 (plane).
      iterations: maximum sweeps (static int).
      omega: relaxation in (0, 2); default 1.
      r0: warm start (projected on the cones); zeros by default.
      tol: Siconos-error threshold for stopping and ``converged``
        (default 1e-8 in float64, 1e-4 in float32).
      check_every: sweeps between error checks (static).
      differentiation: ``"implicit"`` or ``"unroll"`` (module docstring).
      rescue_after: None, or (implicit mode) the sweeps after which every problem not yet solved (under
        vmap, each member of the batch as it would alone) is handed to the cones' semismooth Newton
        (:func:`~jaxcontact.cones.newton`, at most ``RESCUE_STEPS`` steps, from r0, then from the sweeps'), the
        sweeps going on afterwards for whatever it leaves (:func:`~jaxcontact.cones.lanes.iterate_lanes`).
        ``iterations`` caps the sweeps; the reported count adds the Newton steps.
      rescue_solver: how that Newton solves its systems: ``DenseLU()`` (default) or ``BandedLU(lower,
        upper)`` where W vanishes beyond a band (:mod:`~jaxcontact.cones.linear_solvers`).
      later_omega: None (default: ``omega`` throughout), or the relaxation in (0, 2) (a static float) of the
        sweeps a problem needs beyond its first ``check_every`` (the later stages of
        :func:`~jaxcontact.cones.lanes.iterate_lanes`; implicit mode, not with ``fused``). Over-relaxing
        them speeds up the slow problems of a chain of contacts, whose smoothest modes ω = 1 damps slowly,
        without touching the problems one chunk solves.
      fused: True runs the sweeps of a batch in one GPU kernel per solve (:mod:`jaxcontact.cones.fused`:
        spatial cones, W dense or factored, implicit mode; with ``rescue_after`` the unsolved problems get
        Newton after ``FUSED_RESCUE_AFTER`` sweeps); it compiles with Triton, so it needs a GPU backend.
        "interpret": the same kernel through Pallas' interpreter (slow; the CPU tests). False (default):
        the staged sweeps of :func:`~jaxcontact.cones.lanes.iterate_lanes`.
    """
    return _run(
        "nsgs",
        gs_sweep_lanes,
        W,
        q,
        mu,
        iterations=iterations,
        omega=omega,
        r0=r0,
        tol=tol,
        check_every=check_every,
        differentiation=differentiation,
        rescue_after=rescue_after,
        rescue_solver=rescue_solver,
        later_omega=later_omega,
        fused=fused,
        default_omega=lambda W, diag, nc, d: jnp.asarray(1.0, diag.dtype),
    )


def block_gershgorin_omega(W, diag, nc, d):
    """ω = 1 / max_i Σ_j ‖W_ii⁻¹ W_ij‖_F (a numerical setting: no gradient)."""
    W = lax.stop_gradient(delassus.to_dense(W) if delassus.is_factored(W) else W)
    inv = jnp.linalg.inv(lax.stop_gradient(diag))
    if delassus.is_blocks(W):
        M = jnp.einsum("iab,ikbc->ikac", inv, W.values)
        G = jnp.sum(jnp.sqrt(jnp.sum(M * M, axis=(2, 3))), axis=1)
    else:
        Wb = W.reshape(nc, d, nc, d).transpose(0, 2, 1, 3)
        M = jnp.einsum("iab,ijbc->ijac", inv, Wb)
        G = jnp.sum(jnp.sqrt(jnp.sum(M * M, axis=(2, 3))), axis=1)
    G = jnp.max(G)
    return jnp.where(jnp.isfinite(G) & (G >= 1.0), 1.0 / G, 1.0)


def jacobi(
    W,
    q,
    mu,
    *,
    iterations: int = 5000,
    omega=None,
    r0=None,
    tol=None,
    check_every: int = 20,
    differentiation: str = "implicit",
) -> ContactSolution:
    """Relaxed block Jacobi: every contact solved at once from the previous iterate.

    Arguments as :func:`nsgs`; ``omega`` defaults to the block Gershgorin
    relaxation (module docstring).
    """
    return _run(
        "jacobi",
        jacobi_sweep_lanes,
        W,
        q,
        mu,
        iterations=iterations,
        omega=omega,
        r0=r0,
        tol=tol,
        check_every=check_every,
        differentiation=differentiation,
        default_omega=block_gershgorin_omega,
    )
