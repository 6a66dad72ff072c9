"""cones.branch.unless and branch: the value where ok, the fallback elsewhere, one element or a batch."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.cones.branch import branch, unless


def fallback(x, y):
    return {"a": jnp.sin(x) * y, "b": jnp.stack([x, y])}


def pick(ok, x, y):
    return unless(ok, {"a": x, "b": jnp.stack([y, x])}, fallback, x, y)


def test_batched_equals_one_by_one():
    x = jnp.linspace(0.1, 2.0, 7)
    y = jnp.linspace(-1.0, 1.0, 7)
    for ok in (x > 1.0, jnp.ones(7, bool), jnp.zeros(7, bool)):
        out = jax.jit(jax.vmap(pick))(ok, x, y)
        for i in range(7):
            one = pick(ok[i], x[i], y[i])
            np.testing.assert_array_equal(out["a"][i], one["a"])
            np.testing.assert_array_equal(out["b"][i], one["b"])
            want = jnp.sin(x[i]) * y[i] if not ok[i] else x[i]
            np.testing.assert_allclose(one["a"], want)


def test_unbatched_arguments_and_nested_vmap():
    x = jnp.linspace(0.1, 2.0, 6).reshape(2, 3)
    out = jax.vmap(jax.vmap(lambda ok, x: pick(ok, x, 0.5)))(x > 1.0, x)
    want = jnp.where(x > 1.0, x, jnp.sin(x) * 0.5)
    np.testing.assert_allclose(out["a"], want)


def test_derivatives_are_those_of_the_plain_branch():
    """Forward and reverse mode, one element and batched: the derivative of the branch taken."""
    x = jnp.linspace(0.1, 2.0, 7)
    y = jnp.linspace(-1.0, 1.0, 7)
    ok = x > 1.0
    loss = lambda ok, x, y: jnp.sum(pick(ok, x, y)["a"] ** 2) + jnp.sum(pick(ok, x, y)["b"])
    want_x = np.where(ok, 2 * x + 1, 2 * jnp.sin(x) * y**2 * jnp.cos(x) + 1)
    want_y = np.where(ok, 1.0, 2 * jnp.sin(x) ** 2 * y + 1)
    for grad in (jax.grad, lambda f, argnums: jax.jacfwd(f, argnums=argnums)):
        gx, gy = jax.jit(jax.vmap(grad(loss, argnums=(1, 2))))(ok, x, y)
        np.testing.assert_allclose(gx, want_x, rtol=1e-12)
        np.testing.assert_allclose(gy, want_y, rtol=1e-12)
        for i in (0, 6):
            g1 = grad(loss, argnums=(1, 2))(ok[i], x[i], y[i])
            np.testing.assert_allclose(g1, (want_x[i], want_y[i]), rtol=1e-12)


def test_under_vmap_a_side_runs_only_if_some_member_takes_it():
    runs = {"twice": 0, "thrice": 0}

    def side(name, factor):
        def fn(x):
            jax.debug.callback(lambda: runs.__setitem__(name, runs[name] + 1))
            return factor * x

        return fn

    f = jax.jit(jax.vmap(lambda ok, x: branch(ok, side("twice", 2.0), side("thrice", 3.0), x)))
    x = jnp.arange(1.0, 5.0)
    for ok, ran in (([1, 1, 1, 1], {"twice"}), ([0, 0, 0, 0], {"thrice"}), ([1, 0, 1, 0], {"twice", "thrice"})):
        runs.update(twice=0, thrice=0)
        ok = jnp.asarray(ok, bool)
        out = f(ok, x)
        jax.effects_barrier()
        assert {name for name, n in runs.items() if n} == ran
        np.testing.assert_array_equal(out, jnp.where(ok, 2.0 * x, 3.0 * x))


def test_under_vmap_each_side_is_traced_once():
    """The plain branch and the batched rule share one trace of each side (a side may be a whole time step)."""
    traces = {"twice": 0, "thrice": 0}

    def side(name, factor):
        def fn(x):
            traces[name] += 1
            return factor * jnp.sin(x)

        return fn

    def steps(ok, x):  # in a loop's body, as a time step's branch is
        return jax.lax.scan(lambda x, _: (branch(ok, side("twice", 2.0), side("thrice", 3.0), x), None), x, length=2)[0]

    x = jnp.arange(1.0, 5.0)
    out = jax.jit(jax.vmap(steps))(x > 2.0, x)
    factor = jnp.where(x > 2.0, 2.0, 3.0)
    np.testing.assert_allclose(out, factor * jnp.sin(factor * jnp.sin(x)))
    assert traces == {"twice": 1, "thrice": 1}
