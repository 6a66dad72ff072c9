"""Nonsmooth Gauss–Seidel on a batch of spatial cone problems as one GPU kernel (Pallas, Triton).

On a GPU the sweeps of :mod:`jaxcontact.cones.lanes` are latency-bound, not arithmetic-bound: every
contact update of a sweep is a loop iteration of its own (a few kernels, and a branch whose predicate the
host reads), every chunk of sweeps a ``while`` whose predicate the host reads, so a step costs tens of
microseconds per contact update whatever the batch, and a batch pays its slowest problem's sweeps in such
units. Here the whole solve of a block of ``BLOCK`` problems is one program of one kernel: each GPU
thread runs one problem's sweeps (with W by its factors, carrying its velocity v = X r), contact after
contact, checking Siconos' error after every sweep; the block stops when its last
problem has reached ``tol`` or ``limit`` sweeps. The arithmetic is that of the lanes code: the contact's
local solve is :func:`~jaxcontact.cones.local.candidate_components` (take-off, stick, the fast slide),
the relaxation and the projection on the cone. Where the fast slide is not exact (a lane whose slide
the Newton steps from the stick direction miss), the candidate replaces the old value only if its local
error is not larger — the lanes code's rule, without its tabulated search, which has no one-dimensional
form. A problem the sweeps leave unsolved is reported so (``done``), and
:func:`~jaxcontact.cones.lanes.iterate_lanes` hands it to the cones' Newton.

Values inside the kernel are one-dimensional (``BLOCK`` lanes; a Triton tensor's sizes are powers of
two), so every vector is a tuple of components and the arrays are read row by row. The loops over
contacts and unknowns stay loops inside the kernel (the impulses are read and written in the output
array), so the kernel's code does not grow with the number of contacts.

``interpret=True`` runs the same kernel through Pallas' interpreter (any backend: the CPU tests).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

from jaxcontact.cones import delassus
from jaxcontact.cones.local import (
    candidate_components,
    exact_fast_slide,
    local_error_components,
    product_components,
    project_components,
)

BLOCK = 64  # problems per program: two warps of 32 threads


def _exact(easy, B, c, mu, rs):
    return exact_fast_slide(B, c, mu, rs)


def _contact_solve(B, c, mu, r_old):
    """One contact's new value per lane: the candidate, kept where exact or no worse than r_old."""
    r, exact = candidate_components(B, c, mu, _exact)
    err = lambda x: local_error_components(x, [a + b for a, b in zip(product_components(B, x), c)], mu)  # noqa: E731
    keep = exact | (err(r) <= err(r_old))
    return tuple(jnp.where(keep, r[k], r_old[k]) for k in range(3))


def _kernel(nc, n_u, factored, tol, limit, *refs):
    if factored:
        H, X, s, q, mu, om, diag, r_in, done_in, work_in, r, done_out, work_out = refs
    else:
        Wd, q, mu, om, diag, r_in, done_in, work_in, r, done_out, work_out = refs
    n = 3 * nc
    lanes = pl.ds(pl.program_id(0) * BLOCK, BLOCK)
    omega = om[lanes]
    zero = jnp.zeros((BLOCK,), omega.dtype)

    # The impulses live in the output array, read and written contact by contact; the loops over contacts
    # and unknowns are loops of the kernel, not unrolled, so its code does not grow with the contacts.
    def copy(j, carry):
        r[j, lanes] = r_in[j, lanes]
        return carry

    lax.fori_loop(0, n, copy, 0)

    def velocity():
        """v = X r with W by its factors (n_u lanes arrays); nothing with W dense."""
        if not factored:
            return ()

        def add(j, v):
            rj = r[j, lanes]
            return tuple(v[a] + X[a, j, lanes] * rj for a in range(n_u))

        return lax.fori_loop(0, n, add, (zero,) * n_u)

    def rows(i, v):
        """(W r)_i: contact i's three rows of W r."""
        if factored:
            return [
                sum(H[a, 3 * i + b, lanes] * v[a] for a in range(n_u)) + s[3 * i + b, lanes] * r[3 * i + b, lanes]
                for b in range(3)
            ]

        def add(j, acc):
            rj = r[j, lanes]
            return tuple(acc[b] + Wd[3 * i + b, j, lanes] * rj for b in range(3))

        return list(lax.fori_loop(0, n, add, (zero,) * 3))

    def impulse(i):
        return [r[3 * i + b, lanes] for b in range(3)]

    def error(v):
        """Siconos' error per lane (:func:`~jaxcontact.cones.lanes.error_lanes`), ∞ where not finite."""

        def add(i, acc):
            sq, rr, uu, qq = acc
            ri = impulse(i)
            qi = [q[3 * i + b, lanes] for b in range(3)]
            ui = [x + y for x, y in zip(rows(i, v), qi)]
            e = local_error_components(ri, ui, mu[i, lanes])
            dot = lambda x: x[0] * x[0] + x[1] * x[1] + x[2] * x[2]  # noqa: E731
            return sq + e * e, rr + dot(ri), uu + dot(ui), qq + dot(qi)

        sq, rr, uu, qq = lax.fori_loop(0, nc, add, (zero,) * 4)
        scale = jnp.sqrt(jnp.maximum(qq, jnp.maximum(rr, uu)))
        big = scale > jnp.finfo(omega.dtype).eps
        err = jnp.sqrt(sq)
        err = jnp.where(big, err / jnp.where(big, scale, 1.0), err)
        return jnp.where(jnp.abs(err) < jnp.inf, err, jnp.inf)

    def sweep(done, v):
        """One sweep from v = X r; v is carried through the contacts' updates."""

        def update(i, v):
            ri = impulse(i)
            B = [[diag[i, a, b, lanes] for b in range(3)] for a in range(3)]
            own = product_components(B, ri)
            c = [x - o + q[3 * i + b, lanes] for b, (x, o) in enumerate(zip(rows(i, v), own))]
            mi = mu[i, lanes]
            new = _contact_solve(B, c, mi, ri)
            new = project_components([ri[b] + omega * (new[b] - ri[b]) for b in range(3)], mi)
            new = [jnp.where(done, ri[b], new[b]) for b in range(3)]
            for b in range(3):
                r[3 * i + b, lanes] = new[b]
            if factored:
                v = tuple(v[a] + sum(X[a, 3 * i + b, lanes] * (new[b] - ri[b]) for b in range(3)) for a in range(n_u))
            return v

        lax.fori_loop(0, nc, update, v)

    def cond(state):
        k, done, _, _ = state
        return (k < limit) & (jnp.sum(jnp.where(done, 0, 1)) > 0)

    def body(state):
        k, done, work, v = state
        sweep(done, v)
        work = work + jnp.where(done, 0, 1)
        # v recomputed from r, not the one carried through the sweep: it does not drift over many sweeps; the
        # next sweep starts from it.
        v = velocity()
        return k + 1, done | (error(v) <= tol), work, v

    start = (jnp.int32(0), done_in[lanes] > 0, work_in[lanes], velocity())
    _, done, work, _ = lax.while_loop(cond, body, start)
    done_out[lanes] = jnp.where(done, 1, 0).astype(jnp.int32)
    work_out[lanes] = work


def gs_sweeps_fused(W, q, mu, diag, r, omega, done, work, *, tol, limit: int, interpret: bool = False):
    """Gauss–Seidel sweeps of every lane not ``done`` until its error ≤ ``tol`` or ``limit`` sweeps, in one kernel.

    Lane arrays (:mod:`jaxcontact.cones.lanes`): W dense (n, n, L) or
    :class:`~jaxcontact.cones.delassus.Factored` with lanes last, q and r (n, L), μ (nc, L), diag the
    diagonal blocks (nc, 3, 3, L), ω (L,), done (L,) bool, work (L,) int32. Returns (r, done, work): work
    adds each lane's sweeps. Forward only (the caller's implicit rule differentiates the result).
    """
    nc, L = mu.shape
    n = q.shape[0]
    factored = delassus.is_factored(W)
    n_u = W.H.shape[0] if factored else 0
    pad = (-L) % BLOCK

    def lanes(x):  # padding lanes copy the last problem, and start done
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, pad)], mode="edge") if pad else x

    arrays = (W.H, W.X, W.s) if factored else (W,)
    args = [lanes(a) for a in arrays] + [lanes(q), lanes(mu), lanes(omega), lanes(diag), lanes(r)]
    args += [jnp.pad(done.astype(jnp.int32), (0, pad), constant_values=1), lanes(work)]
    Lp = L + pad
    kernel = functools.partial(_kernel, nc, n_u, factored, float(tol), int(limit))
    out_shape = (
        jax.ShapeDtypeStruct((n, Lp), q.dtype),
        jax.ShapeDtypeStruct((Lp,), jnp.int32),
        jax.ShapeDtypeStruct((Lp,), jnp.int32),
    )
    r, d, w = pl.pallas_call(
        kernel,
        out_shape=out_shape,
        grid=(Lp // BLOCK,),
        interpret=interpret,
        compiler_params=None if interpret else plt.CompilerParams(num_warps=BLOCK // 32, num_stages=1),
        name="cones_gs_fused",
    )(*lax.stop_gradient(args))
    return r[:, :L], d[:L] > 0, w[:L]
