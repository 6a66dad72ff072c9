"""Nonsmooth Gauss–Seidel on a batch of problems laid out with the batch last ("lanes").

``jax.vmap`` of a per-problem sweep puts the batch axis first: contact i's
rows of W are then B strided (d, n) slices, its local solve a few tiny
kernels over (B, 3) arrays, and XLA on the CPU vectorises none of it. Here the
same sweep runs on arrays whose *last* axis is the batch — W (n, n, L),
r (n, L), μ (nc, L) — so that every operation of a contact update (its row
product, the stick solve, the slide's Newton steps, the cone projection) is
elementwise over L contiguous lanes: SIMD on a CPU, one wide kernel on a GPU.
A problem alone is the case L = 1.

:func:`iterate_lanes` is the sweep loop of :func:`jaxcontact.cones.nsgs` (and
:func:`~jaxcontact.cones.jacobi`) on lanes. Each lane stops as its own problem would: sweeps run in chunks of
``check_every`` while some lane's Siconos error is above ``tol`` (at most
``iterations``); a lane that has converged is frozen and keeps its own sweep
count, so a batched solve equals the problems solved one by one. (A batch
still runs as many chunks as its slowest lane needs; the frozen lanes then
cost a select each.)

:func:`in_lanes` runs such a kernel for one problem or, under ``jax.vmap``,
for the whole batch at once (a ``jax.custom_batching.custom_vmap`` rule that
moves the batch axis last); derivatives are those of the one-problem kernel.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax import lax
from jax.custom_batching import custom_vmap

from jaxcontact.cones import delassus
from jaxcontact.cones.laws import modified_velocity, project_cone
from jaxcontact.cones.local import local_solve_lanes, project_cone_lanes


def _project(x, mu):
    """Projection on the cones of (d, …) contact vectors."""
    if x.shape[0] == 3:
        return project_cone_lanes(x, mu)
    return jnp.moveaxis(project_cone(jnp.moveaxis(x, 0, -1), mu), -1, 0)


def matvec_lanes(W, r):
    """W r lane by lane: W dense (n, n, L) or block rows with values (nc, k, d, d, L); r (n, L)."""
    if delassus.is_blocks(W):
        nc, _, d, _, L = W.values.shape
        R = r.reshape(nc, d, L)
        return jnp.einsum("ikabl,ikbl->ial", W.values, R[W.cols]).reshape(nc * d, L)
    return jnp.einsum("ijl,jl->il", W, r)


def diagonal_lanes(W, nc: int, d: int):
    """The diagonal blocks W_ii lane by lane, (nc, d, d, L)."""
    if delassus.is_blocks(W):
        own = (W.cols == jnp.arange(nc)[:, None]).astype(W.values.dtype)
        return jnp.einsum("ik,ikabl->iabl", own, W.values)
    L = W.shape[-1]
    Wr = W.reshape(nc, d, nc, d, L)
    idx = jnp.arange(nc)
    return Wr[idx, :, idx, :, :]


def _row_lanes(W, i, r, nc, d):
    """(W r)_i lane by lane, (d, L): contact i's rows only."""
    if delassus.is_blocks(W):
        R = r.reshape(nc, d, -1)
        return jnp.einsum("kabl,kbl->al", W.values[i], R[W.cols[i]])
    rows = lax.dynamic_slice_in_dim(W, i * d, d, axis=0)  # (d, n, L): contiguous
    return jnp.einsum("ajl,jl->al", rows, r)


def gs_sweep_lanes(W, q, mu, diag, r, omega):
    """One nonsmooth Gauss–Seidel sweep over the contacts, every lane at once (ω (L,) per lane)."""
    nc = mu.shape[0]
    d = q.shape[0] // nc

    def contact(i, r):
        ri = lax.dynamic_slice_in_dim(r, i * d, d, axis=0)
        Bi = lax.dynamic_index_in_dim(diag, i, 0, keepdims=False)
        mi = lax.dynamic_index_in_dim(mu, i, 0, keepdims=False)
        c = _row_lanes(W, i, r, nc, d) - jnp.einsum("abl,bl->al", Bi, ri) + lax.dynamic_slice_in_dim(q, i * d, d, 0)
        new = local_solve_lanes(Bi, c, mi, ri)
        new = _project(ri + omega * (new - ri), mi)
        return lax.dynamic_update_slice_in_dim(r, new, i * d, axis=0)

    return lax.fori_loop(0, nc, contact, r)


def jacobi_sweep_lanes(W, q, mu, diag, r, omega):
    """One relaxed Jacobi sweep: every contact from the previous iterate, every lane at once."""
    nc, L = mu.shape
    d = q.shape[0] // nc
    R = r.reshape(nc, d, L)
    C = (matvec_lanes(W, r) + q).reshape(R.shape) - jnp.einsum("iabl,ibl->ial", diag, R)
    # The nc contacts of the L problems are nc L independent local problems: one set of lanes.
    lanes = lambda x: jnp.moveaxis(x, 0, -2).reshape(x.shape[1:-1] + (nc * L,))  # noqa: E731 (nc, …, L) → (…, nc L)
    new = local_solve_lanes(lanes(diag), lanes(C), mu.reshape(-1), lanes(R))
    new = jnp.moveaxis(new.reshape(d, nc, L), 0, 1)
    return jnp.moveaxis(_project(jnp.moveaxis(R + omega * (new - R), 1, 0), mu), 0, 1).reshape(r.shape)


def error_lanes(W, q, mu, r):
    """Siconos' error (:func:`~jaxcontact.cones.laws.fc3d_error`) of every lane, (L,); a non-finite one is ∞."""
    nc, L = mu.shape
    d = q.shape[0] // nc
    u = matvec_lanes(W, r) + q
    R, U = jnp.moveaxis(r.reshape(nc, d, L), 1, 0), jnp.moveaxis(u.reshape(nc, d, L), 1, 0)  # (d, nc, L)
    Uh = jnp.moveaxis(modified_velocity(jnp.moveaxis(U, 0, -1), mu), -1, 0)
    e = R - _project(R - Uh, mu)
    err = jnp.sqrt(jnp.sum(e * e, axis=(0, 1)))
    norm = lambda x: jnp.sqrt(jnp.sum(x * x, axis=0))  # noqa: E731
    scale = jnp.maximum(norm(q), jnp.maximum(norm(r), norm(u)))
    big = scale > jnp.finfo(q.dtype).eps
    err = jnp.where(big, err / jnp.where(big, scale, 1.0), err)
    return jnp.where(jnp.isfinite(err), err, jnp.inf)


def iterate_lanes(
    sweep,
    W,
    q,
    mu,
    r0,
    omega,
    *,
    tol,
    iterations: int,
    check_every: int,
    unroll: bool,
    rescue=None,
    rescue_after: int = 0,
    rescue_lanes: float = 0.0,
):
    """Sweeps of every lane's problem: (r (n, L), work (L,) int32: sweeps, plus Newton steps of a rescue).

    ``sweep(W, q, mu, diag, r, omega)`` is :func:`gs_sweep_lanes` or :func:`jacobi_sweep_lanes`.
    ``unroll``: exactly ``iterations`` sweeps (a ``lax.scan``, differentiable through the sweeps);
    otherwise chunks of ``check_every`` sweeps until each lane's error ≤ ``tol`` or ``iterations``
    sweeps, a converged lane frozen with its own count (module docstring).

    ``rescue``: None, or a one-problem solver ``(W, q, mu, r0) -> (r, steps)`` (the cones' Newton) for the
    stragglers: after ``rescue_after`` sweeps, the ⌈``rescue_lanes`` L⌉ lanes furthest from their tolerance
    (at least one) are gathered into a small batch of their own and solved by it, warm-started from their
    sweeps; a lane takes its result where that is closer to the cone law, and the sweeps then go on for
    whatever has not converged. The batch then runs the sweeps most of its lanes need, not the slowest
    lane's, and Gauss–Seidel's slow lanes (redundant contacts, whose impulses it moves only slowly along
    the null space of W) get the solver that suits them. A batch with more stragglers than that leaves
    the rest to the sweeps.
    """
    nc = mu.shape[0]
    L = q.shape[-1]
    diag = diagonal_lanes(W, nc, q.shape[0] // nc)
    step = lambda r: sweep(W, q, mu, diag, r, omega)  # noqa: E731
    if unroll:
        r, _ = lax.scan(lambda r, _: (step(r), None), r0, None, length=iterations)
        return r, jnp.full((L,), iterations, jnp.int32)
    chunk = max(1, min(check_every, iterations)) if iterations else 1

    def sweeps_until(state, limit):
        def cond(state):
            _, k, done, _ = state
            return (k < limit) & ~jnp.all(done)

        def body(state):
            r, k, done, work = state
            n = jnp.minimum(chunk, limit - k)  # the last chunk stops at ``limit``
            new = lax.fori_loop(0, n, lambda _, r: step(r), r)
            r = jnp.where(done[None], r, new)
            work = work + jnp.where(done, 0, n)
            return r, k + n, done | (error_lanes(W, q, mu, r) <= tol), work

        return lax.while_loop(cond, body, state)

    state = (r0, jnp.int32(0), error_lanes(W, q, mu, r0) <= tol, jnp.zeros((L,), jnp.int32))
    if rescue is not None and rescue_after < iterations:
        state = sweeps_until(state, rescue_after)
        state = lax.cond(
            jnp.all(state[2]), lambda s: s, lambda s: _rescue(rescue, W, q, mu, s, tol, rescue_lanes), state
        )
    r, _, _, work = sweeps_until(state, iterations)
    return r, work


def _rescue(rescue, W, q, mu, state, tol, fraction):
    """The rescue of :func:`iterate_lanes`: its solver on the lanes furthest from converged, gathered."""
    r, k, done, work = state
    L = q.shape[-1]
    size = max(1, min(L, math.ceil(fraction * L)))
    err = error_lanes(W, q, mu, r)
    _, idx = lax.top_k(jnp.where(done, -1.0, jnp.where(jnp.isfinite(err), err, jnp.finfo(err.dtype).max)), size)
    pick = lambda x: jnp.moveaxis(x[..., idx], -1, 0)  # noqa: E731 (…, L) → (size, …)
    Wk = delassus.BlockRows(W.cols, pick(W.values)) if delassus.is_blocks(W) else pick(W)
    rk, steps = jax.vmap(rescue)(Wk, pick(q), pick(mu), pick(r))
    tried = r.at[:, idx].set(rk.T)
    err_tried = error_lanes(W, q, mu, tried)
    better = ~done & (err_tried < err)
    r = jnp.where(better[None], tried, r)
    work = work + jnp.where(better, jnp.zeros_like(work).at[idx].set(steps.astype(work.dtype)), 0)
    return r, k, done | (better & (err_tried <= tol)), work


def _to_lanes(x, batched, size):
    """Move a vmapped argument's batch axis last (broadcasting an unbatched one)."""
    x = x if batched else jnp.broadcast_to(x, (size,) + jnp.shape(x))
    return jnp.moveaxis(x, 0, -1)


def _lanes_of(W, Wb, size):
    if delassus.is_blocks(W):
        return delassus.BlockRows(W.cols, _to_lanes(W.values, Wb.values, size))
    return _to_lanes(W, Wb, size)


def _one_lane(W):
    if delassus.is_blocks(W):
        return delassus.BlockRows(W.cols, W.values[..., None])
    return W[..., None]


def in_lanes(kernel, W, q, mu, r0, omega):
    """``kernel(W, q, mu, r0, omega)`` on lanes for one problem; under vmap, for the whole batch in one call.

    ``kernel`` takes lane arrays — W (n, n, L) or block rows with a lane axis on the values, q and
    r0 (n, L), μ (nc, L), ω (L,) — and returns (r (n, L), counts (L,)); here the arguments are one
    problem's (ω a scalar). Block rows whose column pattern differs across a batch run problem by
    problem.
    """

    def single(W, q, mu, r0, omega):
        r, k = kernel(_one_lane(W), q[:, None], mu[:, None], r0[:, None], omega[None])
        return r[:, 0], k[0]

    @custom_vmap
    def run(W, q, mu, r0, omega):
        return single(W, q, mu, r0, omega)

    @run.def_vmap
    def rule(size, in_batched, W, q, mu, r0, omega):
        Wb, qb, mub, rb, ob = in_batched
        if delassus.is_blocks(W) and Wb.cols:
            axes = jax.tree.map(lambda b: 0 if b else None, tuple(in_batched))
            return jax.vmap(single, in_axes=axes)(W, q, mu, r0, omega), (True, True)
        r, k = kernel(
            _lanes_of(W, Wb, size),
            _to_lanes(q, qb, size),
            _to_lanes(mu, mub, size),
            _to_lanes(r0, rb, size),
            _to_lanes(omega, ob, size),
        )
        return (jnp.moveaxis(r, -1, 0), k), (True, True)

    @jax.custom_jvp
    def differentiable(W, q, mu, r0, omega):
        return run(W, q, mu, r0, omega)

    @differentiable.defjvp
    def jvp(primals, tangents):
        # custom_vmap has no derivative of its own: the one-problem kernel's (batched the ordinary way).
        return jax.jvp(single, primals, tangents)

    return differentiable(W, q, mu, r0, omega)
