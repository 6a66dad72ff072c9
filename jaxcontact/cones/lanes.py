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
:func:`~jaxcontact.cones.jacobi`) on lanes. Each lane stops as its own problem would, with its own sweep
count; the lanes still unconverged after each stage are gathered into narrower groups
(:func:`stage_limits`), so a batch pays about the sweeps its lanes need, not its slowest lane's count
times its width, and a batched solve equals the problems solved one by one. A group's sweeps visit only the
contacts that are not idle in all its lanes (:func:`idle_lanes`: a step's inactive contacts), or by factors each
lane's own, which changes no bit of the result.

W comes dense (n, n, L), by block rows, or by its factors (:class:`~jaxcontact.cones.delassus.Factored`:
a Gauss–Seidel sweep then carries the velocity v = X r). Products over lanes are written as products and
sums over the leading axes, never as ``einsum``: XLA would run those as batched matrix products and copy
the operands into batch-major layout first, on every call.

:func:`in_lanes` runs such a kernel for one problem or, under ``jax.vmap``,
for the whole batch at once (a ``jax.custom_batching.custom_vmap`` rule that
moves the batch axis last); derivatives are those of the one-problem kernel.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.custom_batching import custom_vmap

from jaxcontact.cones import delassus
from jaxcontact.cones.fused import gs_sweeps_fused
from jaxcontact.cones.laws import modified_velocity, project_cone
from jaxcontact.cones.local import local_solve_lanes, project_cone_lanes


def _project(x, mu):
    """Projection on the cones of (d, …) contact vectors."""
    if x.shape[0] == 3:
        return project_cone_lanes(x, mu)
    return jnp.moveaxis(project_cone(jnp.moveaxis(x, 0, -1), mu), -1, 0)


# Up to this many terms, :func:`_lane_sum` adds them one by one.
LANE_SUM_UNROLL = 32


def _lane_sum(x, axes, unroll=True):
    """Σ over ``axes`` (none of them the last): a product summed lane by lane.

    Written as a product and a sum over leading axes, not an ``einsum``: XLA would run an einsum whose
    batch axis is the last as a batched matrix product and copy its operands into batch-major layout
    first, every call (inside the sweeps, every contact update). Up to ``LANE_SUM_UNROLL`` terms the sum
    is a chain of elementwise additions, which XLA fuses with the product into one loop over the lanes (its
    CPU reduction kernels handle these short sums over leading axes slowly).
    """
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    x = jnp.moveaxis(x, axes, tuple(range(len(axes))))
    terms = x.reshape((-1,) + x.shape[len(axes) :])
    if not unroll or terms.shape[0] > LANE_SUM_UNROLL:
        return jnp.sum(terms, axis=0)
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def matvec_lanes(W, r):
    """W r lane by lane: W dense (n, n, L), block rows with values (nc, k, d, d, L) or factored (H, X
    (n_u, n, L), s (n, L)); r (n, L)."""
    if delassus.is_blocks(W):
        nc, _, d, _, L = W.values.shape
        R = r.reshape(nc, d, L)
        return _lane_sum(W.values * R[W.cols][:, :, None], (1, 3)).reshape(nc * d, L)
    if delassus.is_factored(W):
        # v = X r by a reduction, an array of its own: as a chain of additions XLA would fuse it into the
        # product with Hᵀ and recompute it for every row.
        v = _lane_sum(W.X * r[None], 1, unroll=False)
        return _lane_sum(W.H * v[:, None], 0) + W.s * r
    # A reduction, an array of its own: as a chain of additions XLA fuses the whole product into each of the
    # result's consumers (the error's norms and projections) and recomputes it there.
    return _lane_sum(W * r[None], 1, unroll=False)


def diagonal_lanes(W, nc: int, d: int):
    """The diagonal blocks W_ii lane by lane, (nc, d, d, L)."""
    if delassus.is_blocks(W):
        own = (W.cols == jnp.arange(nc)[:, None]).astype(W.values.dtype)
        return _lane_sum(own[:, :, None, None, None] * W.values, 1)
    if delassus.is_factored(W):
        n_u, _, L = W.H.shape
        H, X = W.H.reshape(n_u, nc, d, 1, L), W.X.reshape(n_u, nc, 1, d, L)
        return _lane_sum(H * X, 0) + W.s.reshape(nc, d, 1, L) * jnp.eye(d, dtype=W.s.dtype)[:, :, None]
    L = W.shape[-1]
    Wr = W.reshape(nc, d, nc, d, L)
    idx = jnp.arange(nc)
    return Wr[idx, :, idx, :, :]


def _row_lanes(W, i, r, nc, d):
    """(W r)_i lane by lane, (d, L): contact i's rows only."""
    if delassus.is_blocks(W):
        R = r.reshape(nc, d, -1)
        return _lane_sum(W.values[i] * R[W.cols[i]][:, None], (0, 2))
    rows = lax.dynamic_slice_in_dim(W, i * d, d, axis=0)  # (d, n, L): contiguous
    return _lane_sum(rows * r[None], 1)


def _contact_update(i, ri, others, q, mu, Bi, omega):
    """Contact i's new value in a Gauss–Seidel sweep: ``others`` = (W r)_i − W_ii r_i, with Bi = W_ii, its local
    solve, the relaxation and the projection on its cone (i a contact, or one per lane, :func:`_rows_of`)."""
    d = ri.shape[0]
    mi = _rows_of(mu, i, 1, 0)[0]
    new = local_solve_lanes(Bi, others + _rows_of(q, i, d, 0), mi, ri)
    return _project(ri + omega * (new - ri), mi)


def _rows_of(x, i, d: int, axis: int):
    """Rows i d … i d + d − 1 of ``x`` along ``axis`` (the lanes last): i a contact (a slice) or one contact per
    lane, (L,) (a gather, each lane its own rows)."""
    if jnp.ndim(i) == 0:
        return lax.dynamic_slice_in_dim(x, i * d, d, axis=axis)
    shape = [1] * x.ndim
    shape[axis], shape[-1] = d, i.shape[0]
    rows = (i[None, :] * d + jnp.arange(d, dtype=i.dtype)[:, None]).reshape(shape)
    return jnp.take_along_axis(x, rows, axis=axis, mode="clip")


def _put_rows(x, i, new):
    """``x`` (n, L) with rows i d … i d + d − 1 set to ``new`` (d, L): i a contact or one per lane."""
    d = new.shape[0]
    if jnp.ndim(i) == 0:
        return lax.dynamic_update_slice_in_dim(x, new, i * d, axis=0)
    n = x.shape[0]
    hit = (jnp.arange(n) // d)[:, None] == i[None, :]
    return jnp.where(hit, new[jnp.arange(n) % d], x)


def idle_contacts(W, q, r, nc: int, d: int):
    """(nc,) bool: the contacts a Gauss–Seidel sweep leaves as they are in every lane (:func:`idle_lanes`)."""
    return jnp.all(idle_lanes(W, q, r, nc, d), axis=-1)


def idle_lanes(W, q, r, nc: int, d: int):
    """(nc, L) bool: the contacts a Gauss–Seidel sweep leaves as they are, lane by lane. Contact i is idle where
    r_i = 0, its free normal velocity separates (q_N > 0) and no other contact reaches it (its rows of W are zero
    off its own block; by factors, its columns of H are zero): its local problem is then solved by r_i = 0 (the
    take-off) whatever the others do, and r_i = 0 moves no other. The inactive contacts of a step's cone problem
    are so (:func:`jaxcontact.stepping.cone_contacts.solve_cone_contacts` masks them to that)."""
    L = q.shape[-1]
    if delassus.is_factored(W):
        coupled = jnp.any(W.H.reshape(-1, nc, d, L) != 0, axis=(0, 2))
    elif delassus.is_blocks(W):
        off = (W.cols != jnp.arange(nc)[:, None])[:, :, None, None, None]
        coupled = jnp.any(off & (W.values != 0), axis=(1, 2, 3))
    else:
        off = ~jnp.eye(nc, dtype=bool)[:, None, :, None, None]
        coupled = jnp.any(off & (W.reshape(nc, d, nc, d, L) != 0), axis=(1, 2, 3))
    R, Q = r.reshape(nc, d, L), q.reshape(nc, d, L)
    return ~coupled & jnp.all(R == 0, axis=1) & (Q[:, 0] > 0)


def live_order(idle):
    """(order, count): the contacts that are not ``idle`` first, in their own order, and how many a sweep visits.
    ``idle`` (nc,): one order (nc,) for every lane, count the live contacts; (nc, L): an order per lane (nc, L),
    count the most live contacts of a lane. A sweep over ``order[:count]`` is the sweep over every contact
    (:func:`gs_sweep_lanes`): past its own live contacts, a lane visits idle ones, which change nothing."""
    # The stable argsort of ``idle``, by counting: each contact's place is the number of live contacts before it
    # (a live one), or of all live ones and the idle ones before it (an idle one); the order is that map inverted.
    # XLA's CPU sort calls its comparator element by element, slower per lane than this whole count.
    nc = idle.shape[0]
    live = (~idle).astype(jnp.int32)
    index = jnp.arange(nc, dtype=jnp.int32).reshape((nc,) + (1,) * (idle.ndim - 1))
    earlier = (index[None] < index[:, None]).astype(jnp.int32)  # [i, k]: k comes before i
    live_before = _lane_sum(earlier * live[None], 1)
    n_live = _lane_sum(live, 0)
    place = jnp.where(idle, n_live + index - live_before, live_before)
    order = _lane_sum(jnp.where(place[:, None] == index[None], index[:, None], 0), 0).astype(jnp.int32)
    return order, jnp.max(n_live).astype(jnp.int32)


def _over_contacts(nc: int, live, contact, state):
    """``contact(i, state)`` for i over every contact in order, or over ``live`` = (order, count) only."""
    if live is None:
        return lax.fori_loop(0, nc, contact, state)
    order, count = live
    return lax.fori_loop(0, count, lambda j, s: contact(order[j], s), state)


def gs_sweep_lanes(W, q, mu, diag, r, omega, live=None):
    """One nonsmooth Gauss–Seidel sweep over the contacts, every lane at once (ω (L,) per lane); ``live``: None,
    or (order, count) of :func:`live_order`, the contacts to visit (the others are idle, :func:`idle_contacts`)."""
    if delassus.is_factored(W):
        return _gs_sweep_factored(W, q, mu, diag, r, omega, live)
    nc = mu.shape[0]
    d = q.shape[0] // nc

    def contact(i, r):
        ri = lax.dynamic_slice_in_dim(r, i * d, d, axis=0)
        Bi = lax.dynamic_index_in_dim(diag, i, 0, keepdims=False)
        new = _contact_update(i, ri, _row_lanes(W, i, r, nc, d) - _lane_sum(Bi * ri[None], 1), q, mu, Bi, omega)
        return lax.dynamic_update_slice_in_dim(r, new, i * d, axis=0)

    return _over_contacts(nc, live, contact, r)


def _gs_sweep_factored(W, q, mu, diag, r, omega, live):
    """:func:`gs_sweep_lanes` with W = Hᵀ X + diag(s): the sweep carries the velocity v = X r (n_u, L), so a
    contact reads its columns of H and X, not a row of W."""
    nc = mu.shape[0]
    d = q.shape[0] // nc

    def contact(i, state):  # i: a contact, or one per lane (live_order of idle_lanes)
        r, v = state
        ri = _rows_of(r, i, d, 0)
        Hi = _rows_of(W.H, i, d, 1)  # (n_u, d, L)
        Xi = _rows_of(W.X, i, d, 1)
        Bi = _rows_of(diag, i, 1, 0)[0]
        own = _rows_of(W.s, i, d, 0) * ri - _lane_sum(Bi * ri[None], 1)
        new = _contact_update(i, ri, _lane_sum(Hi * v[:, None], 0) + own, q, mu, Bi, omega)
        v = v + _lane_sum(Xi * (new - ri)[None], 1)
        return _put_rows(r, i, new), v

    # v by a reduction, as in :func:`matvec_lanes` (as additions XLA fuses it into its consumers).
    return _over_contacts(nc, live, contact, (r, _lane_sum(W.X * r[None], 1, unroll=False)))[0]


def jacobi_sweep_lanes(W, q, mu, diag, r, omega, live=None):
    """One relaxed Jacobi sweep: every contact from the previous iterate, every lane at once (``live`` unused:
    the contacts are updated together, so skipping the idle ones saves nothing)."""
    nc, L = mu.shape
    d = q.shape[0] // nc
    R = r.reshape(nc, d, L)
    C = (matvec_lanes(W, r) + q).reshape(R.shape) - _lane_sum(diag * R[:, None], 2)
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


def _first_chunk(check_every: int, iterations: int) -> int:
    """Sweeps between the first checks: ``check_every``, at most ``iterations``, at least 1."""
    return max(1, min(check_every, iterations)) if iterations else 1


def stage_limits(check_every: int, iterations: int, rescue_after: int | None = None) -> tuple[int, ...]:
    """The sweep counts at which :func:`iterate_lanes` regroups its unconverged lanes (static).

    One chunk of ``check_every`` sweeps, then limits growing by ``STAGE_GROWTH`` (a multiple of the chunk, so
    every lane's chunks start where they would alone), the last ``iterations``. With a ``rescue_after``, that is a
    limit and the last before ``iterations``: the rescue's stage sweeps on to the end (a later stage would
    compile another copy of the sweep, for the few problems that the rescue and its sweeps leave).
    """
    chunk = _first_chunk(check_every, iterations)
    limits = {iterations}
    k = chunk
    while k < iterations:
        limits.add(k)
        k *= STAGE_GROWTH
    if rescue_after is not None and 0 < rescue_after < iterations:
        limits = {k for k in limits if k < rescue_after} | {rescue_after, iterations}
    return tuple(sorted(limits))


# Each stage of :func:`iterate_lanes` goes on with the lanes still unconverged, gathered into groups of
# 1 / STAGE_SHRINK the previous stage's width, and lets them sweep STAGE_GROWTH times as long. Each stage
# compiles its own copy of the sweep: few stages keep the compile short.
STAGE_GROWTH = 9
STAGE_SHRINK = 16
# The narrowest group of a later stage, where the second stage's is at least as wide: a group's loop and its
# Newton rescue pay a fixed cost per step that the lanes of a group share, while a wider group waits on its
# slowest lane.
GROUP_MIN_WIDTH = 16


def stage_width(L: int, j: int) -> int:
    """The width of stage j's groups in a batch of L lanes (static): L / STAGE_SHRINKʲ, rounded up, but from
    the third stage on no narrower than ``GROUP_MIN_WIDTH`` or the second stage's width, whichever is less."""
    width = -(-L // STAGE_SHRINK**j)
    return max(width, min(GROUP_MIN_WIDTH, -(-L // STAGE_SHRINK))) if j >= 2 else width


def merged_stages(L: int, count: int) -> tuple[tuple[int, int], ...]:
    """The stages of :func:`iterate_lanes` (``count`` of them) that run as one, (first, last) each (static): the
    consecutive stages of one width (:func:`stage_width`). Their groups would gather the same lanes again, each
    stage with its own compiled copy of the sweep; one run sweeps on through their ranges instead."""
    runs = []
    for j in range(count):
        if runs and stage_width(L, j) == stage_width(L, runs[-1][0]):
            runs[-1] = (runs[-1][0], j)
        else:
            runs.append((j, j))
    return tuple(runs)


def _gather_lanes(x, idx):
    """Lanes ``idx`` of an array, block rows or factors (lanes last); an index past the end reads the last."""
    if delassus.is_blocks(x):
        return delassus.BlockRows(x.cols, _gather_lanes(x.values, idx))
    if delassus.is_factored(x):
        return delassus.Factored(*(_gather_lanes(a, idx) for a in x))
    return jnp.take(x, idx, axis=-1, mode="clip")


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
    later_omega: float | None = None,
    fused: bool = False,
    interpret: bool = False,
):
    """Sweeps of every lane's problem: (r (n, L), work (L,) int32: sweeps, plus Newton steps of a rescue).

    ``sweep(W, q, mu, diag, r, omega, live)`` is :func:`gs_sweep_lanes` or :func:`jacobi_sweep_lanes`.
    ``unroll``: exactly ``iterations`` sweeps (a ``lax.scan``, differentiable through the sweeps);
    otherwise chunks of ``check_every`` sweeps until each lane's error ≤ ``tol`` or ``iterations``
    sweeps, a converged lane frozen with its own count.

    Stages (:func:`stage_limits`): the whole batch sweeps one chunk; the lanes still unconverged then go on,
    gathered into groups of 1/``STAGE_SHRINK`` of the width, until the next limit (``STAGE_GROWTH`` chunks),
    those still unconverged into groups of 1/``STAGE_SHRINK``² until the next, and so on (with a floor,
    :func:`stage_width`), checking the error every chunk or every ``STAGE_GROWTH``-th of the sweeps already
    made, whichever is more: a batch pays about the sweeps its lanes need, not its slowest lane's count times its
    width, and the sweeps of the few hard problems run on narrow arrays. While more than half of the batch is
    unsolved, the first stage sweeps on through the later stages' ranges (up to the rescue) before it
    regroups. Consecutive stages whose groups are of one width (a narrow batch's, a problem alone) run as one
    (:func:`merged_stages`). Every lane sees the same chunks and checks as alone, whichever group it lands in,
    so a batched solve equals the problems solved one by one, counts and flags included.

    ``rescue``: None, or a one-problem solver ``(W, q, mu, r0) -> (r, steps)`` (the cones' Newton) for the
    stragglers: every lane not converged after ``rescue_after`` sweeps gets it from ``r0``, then from its
    sweeps' iterate where that left it unsolved (:data:`RESCUE_STARTS`), and takes each result where that is
    closer to the cone law; the sweeps then go on, in one stage, to ``iterations``.
    Gauss–Seidel's slow problems (redundant contacts, whose impulses it moves only slowly along the null
    space of W) get the solver that suits them.

    ``later_omega``: None, or the relaxation (a static float) of every stage after the first, the sweeps of
    the problems that one chunk left unsolved; the first chunk keeps ``omega``.

    ``fused``: Gauss–Seidel sweeps in one GPU kernel instead (:func:`_iterate_fused`; ``interpret`` runs that
    kernel through Pallas' interpreter).
    """
    nc = mu.shape[0]
    L = q.shape[-1]
    if unroll:
        diag = diagonal_lanes(W, nc, q.shape[0] // nc)
        step = lambda r: sweep(W, q, mu, diag, r, omega)  # noqa: E731
        r, _ = lax.scan(lambda r, _: (step(r), None), r0, None, length=iterations)
        return r, jnp.full((L,), iterations, jnp.int32)
    if fused:
        return _iterate_fused(W, q, mu, r0, omega, tol=tol, iterations=iterations, rescue=rescue, interpret=interpret)
    chunk = _first_chunk(check_every, iterations)
    rescue_at = rescue_after if rescue is not None and rescue_after < iterations else None
    done = error_lanes(W, q, mu, r0) <= tol
    r, work = r0, jnp.zeros((L,), jnp.int32)
    later = omega if later_omega is None else jnp.full_like(omega, later_omega)
    limits = stage_limits(check_every, iterations, rescue_at)
    starts = (0,) + limits[:-1]
    # A check costs about half a sweep: every chunk at first, later every STAGE_GROWTH-th of the count.
    stages = tuple((limit, max(chunk, start // STAGE_GROWTH)) for start, limit in zip(starts, limits))
    # The first stage may sweep on through the later stages' ranges up to the rescue (:func:`_group_sweeps`).
    reach = max(1, sum(1 for start in starts if start < (iterations if rescue_at is None else rescue_at)))
    k = jnp.int32(0)  # the sweeps every unsolved lane has made
    for a, b in merged_stages(L, len(starts)):
        # The rescue at ``rescue_after`` sweeps, at the start of the last stage: in this run if one of its stages.
        rescue_here = rescue if rescue_at is not None and rescue_at in starts[a : b + 1] else None
        sweeps_to = max(b + 1, reach) if a == 0 else b + 1
        run = functools.partial(_group_sweeps, sweep, tol, stages[a:sweeps_to], b + 1 - a, rescue_here, rescue_at)
        # ω of the first stage's range and of the later ones, per lane (2, L).
        omegas = jnp.stack([later if a else omega, later])
        grouped = functools.partial(_in_groups, run, stage_width(L, a), W, q, mu, omegas, r0)
        state = (r, done, work, k)
        if 0 < a and b < reach:  # skipped where the first stage swept through its ranges (its groups would gather idly)
            r, done, work, k = lax.cond(k < limits[b], grouped, lambda *s: s, *state)
        else:
            r, done, work, k = grouped(*state)
    return r, work


# Sweeps of the fused kernel before the stragglers' rescue: inside one kernel a sweep costs a few hundred
# operations per problem, so Gauss–Seidel gets many more sweeps than in the staged loops before Newton.
FUSED_RESCUE_AFTER = 50


def _iterate_fused(W, q, mu, r0, omega, *, tol, iterations, rescue, interpret):
    """:func:`iterate_lanes` with the sweeps in one kernel per call (:mod:`jaxcontact.cones.fused`): every lane
    sweeps until its error ≤ ``tol``, checking after every sweep; with a ``rescue``, the lanes still unsolved
    after ``FUSED_RESCUE_AFTER`` sweeps (at most half of ``iterations``) are gathered into groups of
    1 / ``STAGE_SHRINK`` of the batch, as the staged sweeps' second stage gathers them, and each group gets the
    rescue, then sweeps on to ``iterations``. A Newton step's dense solve costs a GPU several times more on
    the whole batch than on a narrow group, and the kernel's sweeps cost per sweep what the slowest lane of its
    launch needs, so the few stragglers run apart."""
    nc, L = mu.shape
    diag = diagonal_lanes(W, nc, 3)
    done = error_lanes(W, q, mu, r0) <= tol
    work = jnp.zeros((L,), jnp.int32)
    # The rescue comes after FUSED_RESCUE_AFTER sweeps, or half the budget where that is smaller.
    first = min(FUSED_RESCUE_AFTER, max(1, iterations // 2)) if rescue is not None else iterations
    r, done, work = gs_sweeps_fused(W, q, mu, diag, r0, omega, done, work, tol=tol, limit=first, interpret=interpret)
    if first >= iterations:
        return r, work

    def stragglers(W, q, mu, omega, warm, r, done, work, k):
        r, done, work = _rescue(rescue, tol, W, q, mu, warm, r, done, work)
        diag = diagonal_lanes(W, nc, 3)
        r, done, work = gs_sweeps_fused(
            W, q, mu, diag, r, omega, done, work, tol=tol, limit=iterations - first, interpret=interpret
        )
        return r, done, work, k

    width = max(1, -(-L // STAGE_SHRINK))
    r, done, work, _ = _in_groups(stragglers, width, W, q, mu, omega, r0, r, done, work, jnp.int32(first))
    return r, work


def _group_sweeps(sweep, tol, stages, own, rescue, rescue_at, W, q, mu, omega, warm, r, done, work, k):
    """Lanes that have swept ``k`` times (or are done): sweeps in chunks, and the rescue if given.

    ``stages``: ((limit, every), …), static. The sweeps go in chunks of each stage's ``every`` through the first
    ``own`` stages' ranges; then, while more than half of the lanes are unsolved, on through the next stages'
    ranges, so that every lane is checked at the sweep counts it would be alone. A batch whose problems all
    need more than a chunk (copies of one problem) thus sweeps on at full width instead of in narrow groups,
    each of which would pay a sweep's fixed cost. ``rescue``: None, or the rescue of :func:`iterate_lanes`,
    run on the unsolved lanes once they have swept ``rescue_at`` times (static). ``omega`` (2, L): the
    relaxation in the first stage's range and in the later ones'. Returns (r, done, work, the sweeps made).
    """
    nc = mu.shape[0]
    d = q.shape[0] // nc
    diag = diagonal_lanes(W, nc, d)

    def live_contacts(r):
        # Idle contacts stay idle while the group sweeps (W, q fixed, r_i = 0 kept): found once, skipped by every
        # sweep. By factors a sweep visits each lane's own live contacts (a contact's columns gathered lane by
        # lane): the problems of a batch rest on different contacts, and their union would be most of them.
        idle = idle_lanes(W, q, r, nc, d)
        return live_order(idle if delassus.is_factored(W) else jnp.all(idle, axis=-1))

    limits, everys = (jnp.asarray(x, jnp.int32) for x in zip(*stages))

    def cond(state):
        _, k, done, _, _, _ = state
        go = (k < stages[own - 1][0]) | ((k < stages[-1][0]) & (2 * jnp.sum(~done) > done.shape[0]))
        return go & ~jnp.all(done)

    def sweeps(state):
        r, k, done, work, rescued, live = state
        m = jnp.sum(k >= limits)  # the stage whose range holds k
        n = jnp.minimum(everys[m], limits[m] - k)  # a stage's last chunk stops at its limit (the rescue's is one)
        w = jnp.where(m == 0, omega[0], omega[1])
        new = lax.fori_loop(0, n, lambda _, r: sweep(W, q, mu, diag, r, w, live), r)
        r = jnp.where(done[None], r, new)
        work = work + jnp.where(done, 0, n)
        return r, k + n, done | (error_lanes(W, q, mu, r) <= tol), work, rescued, live

    def rescue_stragglers(state):
        r, k, done, work, _, _ = state
        r, done, work = _rescue_lanes(rescue, tol, W, q, mu, warm, r, done, work)
        return r, k, done, work, jnp.bool_(True), live_contacts(r)

    def body(state):
        if rescue is None:
            return sweeps(state)
        _, k, _, _, rescued, _ = state
        return lax.cond(~rescued & (k >= rescue_at), rescue_stragglers, sweeps, state)

    r, k, done, work, _, _ = lax.while_loop(cond, body, (r, k, done, work, jnp.bool_(False), live_contacts(r)))
    return r, done, work, k


def _in_groups(run, width, W, q, mu, omega, warm, r, done, work, k):
    """``run`` on the unconverged lanes, gathered ``width`` at a time (the last group padded with done lanes);
    on every lane as they are where ``width`` covers the batch (``run`` leaves its done lanes as they are).
    ``k``: the sweeps every unconverged lane has made; returns (r, done, work, k after ``run``)."""
    L = q.shape[-1]
    if width >= L:
        return run(W, q, mu, omega, warm, r, done, work, k)

    def cond(state):
        return jnp.any(state[0])

    def body(state):
        pending, r, done, work, kc = state
        (idx,) = jnp.nonzero(pending, size=width, fill_value=L)
        pad = idx >= L
        sub = lambda x: _gather_lanes(x, idx)  # noqa: E731
        rg, dg, wg, kg = run(sub(W), sub(q), sub(mu), sub(omega), sub(warm), sub(r), sub(done) | pad, sub(work), k)
        put = lambda x, v: x.at[..., idx].set(v, mode="drop")  # noqa: E731 (padding slots dropped)
        # A group's unsolved lanes stop where every group's do (its last limit); a group whose lanes are all
        # solved stops sooner, so the stage's count is the largest.
        return put(pending, False), put(r, rg), put(done, dg), put(work, wg), jnp.maximum(kc, kg)

    _, r, done, work, k = lax.while_loop(cond, body, (~done, r, done, work, k))
    return r, done, work, k


def _rescue(rescue, tol, W, q, mu, warm, r, done, work):
    """The rescue of :func:`iterate_lanes` on every lane not done (none run if all are): its solver, taken
    where it lowers the error."""
    return lax.cond(
        jnp.all(done),
        lambda *a: a[-3:],
        lambda *a: _rescue_lanes(rescue, tol, *a),
        W,
        q,
        mu,
        warm,
        r,
        done,
        work,
    )


# Where the stragglers' Newton starts, in turn: from the solve's warm start (the
# impulses of the step before), then from the sweeps' iterate where that left the problem unsolved. On
# redundant contacts Gauss–Seidel's iterate has drifted along the null space of W to splits where the
# Alart–Curnier Newton stalls, while the warm start is a split the step before converged to; each start solves
# problems the other leaves. A problem the first start solved starts the second from its solution, so its
# Newton stops at once: under vmap the second run costs nothing where the first solved every lane.
RESCUE_STARTS = ("warm", "iterate")


def _rescue_lanes(rescue, tol, W, q, mu, warm, r, done, work):
    """The rescue from each of :data:`RESCUE_STARTS` in turn ("warm": the solve's warm start, "iterate": the
    sweeps' r) on every lane not solved yet, each result taken where it lowers the lane's error; every Newton
    step run on a lane not ``done`` counts as its work."""
    pick = lambda x: jnp.moveaxis(x, -1, 0)  # noqa: E731 (…, L) → (L, …)
    blocks = delassus.is_blocks(W)
    Wk = delassus.BlockRows(W.cols, pick(W.values)) if blocks else jax.tree.map(pick, W)
    axes = (delassus.BlockRows(None, 0) if blocks else 0, 0, 0, 0)  # block columns: one for every lane
    err = error_lanes(W, q, mu, r)
    iterate, solved = r, done
    for name in RESCUE_STARTS:
        start = jnp.where(solved[None], r, iterate if name == "iterate" else warm)
        rk, steps = jax.vmap(rescue, in_axes=axes)(Wk, pick(q), pick(mu), pick(start))
        tried = rk.T
        err_tried = error_lanes(W, q, mu, tried)
        better = ~solved & (err_tried < err)
        r = jnp.where(better[None], tried, r)
        err = jnp.where(better, err_tried, err)
        solved = solved | (better & (err <= tol))
        work = work + jnp.where(~done, steps.astype(work.dtype), 0)
    return r, solved, work


def _to_lanes(x, batched, size):
    """Move a vmapped argument's batch axis last (broadcasting an unbatched one)."""
    x = x if batched else jnp.broadcast_to(x, (size,) + jnp.shape(x))
    return jnp.moveaxis(x, 0, -1)


def _lanes_of(W, Wb, size):
    if delassus.is_blocks(W):
        return delassus.BlockRows(W.cols, _to_lanes(W.values, Wb.values, size))
    return jax.tree.map(lambda x, b: _to_lanes(x, b, size), W, Wb)


def _one_lane(W):
    if delassus.is_blocks(W):
        return delassus.BlockRows(W.cols, W.values[..., None])
    return jax.tree.map(lambda x: x[..., None], W)


def in_lanes(kernel, W, q, mu, r0, omega):
    """``kernel(W, q, mu, r0, omega)`` on lanes for one problem; under vmap, for the whole batch in one call.

    ``kernel`` takes lane arrays — W (n, n, L), block rows with a lane axis on the values or factors
    with a lane axis on each, q and r0 (n, L), μ (nc, L), ω (L,) — and returns (r (n, L), counts (L,));
    here the arguments are one problem's (ω a scalar). Block rows whose column pattern differs across a
    batch run problem by problem.
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
