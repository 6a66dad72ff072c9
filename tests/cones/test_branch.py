"""cones.branch.unless: the value where ok, the fallback elsewhere, one element or a batch."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxcontact.cones.branch import unless


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
