"""A branch that stays a branch under vmap.

``lax.cond`` with a batched predicate becomes a ``select``: both sides run for
every batch member. The solvers' rare, costly fallbacks (the tabulated slide
search of a contact, the Levenberg–Marquardt step of Newton) and a time step's
contacts while none is active (Moreau–Jean's open steps) would then be paid at
every step of every member of a batch. :func:`branch` runs each side on
the whole batch only when some member takes it (a
``jax.custom_batching.custom_vmap`` rule). Such a rule has no derivative of its
own; :func:`branch` gives it one (a ``custom_jvp`` whose tangent is that of the
plain ``lax.cond``), so a solver loop that is differentiated through (unrolled
sweeps) keeps the cheap batched branch in its forward runs, and pays for both
sides under vmap only where a derivative is taken.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.custom_batching import custom_vmap


def traced_once(fn):
    """``jax.jit(fn)``, whose trace of one shape serves every call site. JAX keys its trace cache on the context's
    abstract mesh, which some of its transformations (a ``custom_vmap`` rule, the batching of a loop) set to the
    empty mesh where others leave it unset: each call names the empty mesh where none is set, so the keys agree."""
    jitted = jax.jit(fn)

    @functools.wraps(fn)
    def call(*args):
        with jax.sharding.use_abstract_mesh(jax.sharding.get_abstract_mesh()):
            return jitted(*args)

    return call


def _plain(ok, when_ok, otherwise, args):
    return lax.cond(ok, when_ok, otherwise, *args)


def _broadcast(x, batched, size):
    return x if batched else jnp.broadcast_to(x, (size,) + jnp.shape(x))


def _batched_branch(ok, when_ok, otherwise, args):
    @custom_vmap
    def run(ok, args):
        return _plain(ok, when_ok, otherwise, args)

    @run.def_vmap
    def rule(size, in_batched, ok, args):
        ok_b, args_b = in_batched
        ok = _broadcast(ok, ok_b, size)
        args = jax.tree.map(lambda x, b: _broadcast(x, b, size), args, args_b)

        def side(fn, taken):
            # fn on the whole batch if some member takes it, else zeros of its shape: each side is traced once.
            on_batch = lambda: jax.vmap(lambda a: fn(*a))(args)  # noqa: E731
            zeros = lambda: jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), jax.eval_shape(on_batch))  # noqa: E731
            return lax.cond(jnp.any(taken), on_batch, zeros)

        pick = lambda v, o: jnp.where(ok.reshape((size,) + (1,) * (v.ndim - 1)), v, o)  # noqa: E731
        out = jax.tree.map(pick, side(when_ok, ok), side(otherwise, ~ok))
        return out, jax.tree.map(lambda _: True, out)

    return run(ok, args)


def branch(ok, when_ok, otherwise, *args):
    """``when_ok(*args)`` where ``ok``, else ``otherwise(*args)`` (the same structure); under vmap each side
    runs on the whole batch only if some member takes it, and each member keeps its own side's result.

    ``when_ok`` and ``otherwise`` must be pure, jit-able functions of ``args`` only. Differentiable: the
    derivative is that of ``lax.cond(ok, when_ok, otherwise, *args)`` (see the module docstring).
    """
    # The custom rules below trace each side several times; a side as one jitted function is traced once.
    when_ok, otherwise = traced_once(when_ok), traced_once(otherwise)

    @jax.custom_jvp
    def pick(ok, args):
        return _batched_branch(ok, when_ok, otherwise, args)

    @pick.defjvp
    def pick_jvp(primals, tangents):
        ok, args = primals
        _, t_args = tangents
        return jax.jvp(lambda args: _plain(ok, when_ok, otherwise, args), (args,), (t_args,))

    return pick(jnp.asarray(ok), tuple(args))


def unless(ok, value, fallback, *args):
    """``value`` where ``ok``, else ``fallback(*args)`` (same structure); under vmap the fallback runs only if
    some member is not ok (:func:`branch`).

    ``fallback`` must be a pure, jit-able function of ``args`` only. Differentiable: the
    derivative is that of ``lax.cond(ok, value, fallback(*args))`` (see the module docstring).
    """
    return branch(ok, lambda value, args: value, lambda value, args: fallback(*args), value, tuple(args))
