"""A branch that stays a branch under vmap.

``lax.cond`` with a batched predicate becomes a ``select``: both sides run for
every batch member. The solvers' rare, costly fallbacks (the tabulated slide
search of a contact, the Levenberg–Marquardt step of Newton) and a time step's
contacts while none is active (Moreau–Jean's open steps) would then be paid at
every step of every member of a batch. :func:`unless` runs the
fallback on the whole batch only when some member needs it (a
``jax.custom_batching.custom_vmap`` rule). Such a rule has no derivative of its
own; :func:`unless` gives it one (a ``custom_jvp`` whose tangent is that of the
plain ``lax.cond``), so a solver loop that is differentiated through (unrolled
sweeps) keeps the cheap batched branch in its forward runs, and pays for both
sides under vmap only where a derivative is taken.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.custom_batching import custom_vmap


def _plain(fallback, ok, value, args):
    return lax.cond(ok, lambda: value, lambda: fallback(*args))


def _broadcast(x, batched, size):
    return x if batched else jnp.broadcast_to(x, (size,) + jnp.shape(x))


def _batched_unless(fallback, ok, value, args):
    @custom_vmap
    def run(ok, value, args):
        return _plain(fallback, ok, value, args)

    @run.def_vmap
    def rule(size, in_batched, ok, value, args):
        ok_b, value_b, args_b = in_batched
        ok = _broadcast(ok, ok_b, size)
        value = jax.tree.map(lambda x, b: _broadcast(x, b, size), value, value_b)
        args = jax.tree.map(lambda x, b: _broadcast(x, b, size), args, args_b)

        def some_need():
            other = jax.vmap(lambda *a: fallback(*a))(*args)
            pick = lambda v, o: jnp.where(ok.reshape((size,) + (1,) * (v.ndim - 1)), v, o)
            return jax.tree.map(pick, value, other)

        out = lax.cond(jnp.all(ok), lambda: value, some_need)
        return out, jax.tree.map(lambda _: True, out)

    return run(ok, value, args)


def unless(ok, value, fallback, *args):
    """``value`` where ``ok``, else ``fallback(*args)`` (same structure); under vmap the fallback runs only if
    some member is not ok.

    ``fallback`` must be a pure, jit-able function of ``args`` only. Differentiable: the
    derivative is that of ``lax.cond(ok, value, fallback(*args))`` (see the module docstring).
    """

    @jax.custom_jvp
    def pick(ok, value, args):
        return _batched_unless(fallback, ok, value, args)

    @pick.defjvp
    def pick_jvp(primals, tangents):
        ok, value, args = primals
        _, t_value, t_args = tangents
        plain = lambda value, args: _plain(fallback, ok, value, args)
        return jax.jvp(plain, (value, args), (t_value, t_args))

    return pick(jnp.asarray(ok), value, tuple(args))
