"""Value specs: names, expressions, callables, literals; errors that name the bad value."""

import jax.numpy as jnp
import pytest

from jaxcontact.values import Value

P = {"l1": jnp.asarray(0.2), "m1": jnp.asarray(0.1), "omega": jnp.asarray(3.0)}


def test_name_expression_callable_number():
    assert float(Value("l1", "x")(P)) == 0.2
    assert float(Value("m1*l1**2/12", "x")(P)) == pytest.approx(0.1 * 0.04 / 12, rel=1e-15)
    assert float(Value("-l1/2", "x")(P)) == -0.1
    assert float(Value("sqrt(l1**2 + m1**2) + cos(pi)", "x")(P)) == pytest.approx((0.05) ** 0.5 - 1.0, rel=1e-15)
    assert float(Value(lambda p: 2 * p["l1"], "x")(P)) == 0.4
    assert float(Value(1.5, "x")(P)) == 1.5
    assert float(Value("omega*t", "x", time_ok=True)(P, 2.0)) == 6.0
    assert float(Value(lambda t, p: p["omega"] * t, "x", time_ok=True)(P, 0.5)) == 1.5


def test_time_dependence_flag():
    assert Value("l1", "x", time_ok=True).is_constant_in_time
    assert not Value("omega*t", "x", time_ok=True).is_constant_in_time
    assert not Value(lambda t, p: 1.0, "x", time_ok=True).is_constant_in_time
    assert Value(2.0, "x", time_ok=True).is_constant_in_time


def test_errors_name_the_value():
    with pytest.raises(ValueError, match=r"body 'b' mass.*uses time t"):
        Value("m1*t", "body 'b' mass")
    with pytest.raises(ValueError, match=r"'l1/\*2'"):
        Value("l1/*2", "point")
    with pytest.raises(ValueError, match=r"unsupported syntax"):
        Value("l1.x", "point")
    with pytest.raises(ValueError, match=r"unsupported syntax"):
        Value("open('f')", "point")
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['l9'\]"):
        Value("l9 + l1", "revolute 'A' x").check(P)
    with pytest.raises(ValueError, match=r"unknown parameter 'nope'"):
        Value(lambda p: p["nope"], "mass").check(P)
    with pytest.raises(ValueError, match=r"is not a number"):
        Value([1.0], "mass")
    with pytest.raises(ValueError, match=r"is not a number"):
        Value(True, "mass")


def test_repr_is_the_text():
    assert repr(Value("m1*l1**2/12", "x")) == "m1*l1**2/12"
    assert repr(Value(0.5, "x")) == "0.5"
