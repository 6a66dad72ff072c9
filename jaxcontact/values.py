"""Parameter values of a builder (planar Mechanism, spatial Assembly): names, small expressions, callables,
literals.

Every physical value a builder method takes (a mass, a length, a restitution,
a torque …) is a *value spec*, resolved against the parameter dict ``p`` at
call time, inside the jitted function — so it is an array leaf that can be
overridden by name and batched, never a compile-time constant:

* ``"m1"`` — the parameter named ``m1``;
* ``"m1*l1**2/12"``, ``"-l2/2"``, ``"omega*t"`` — an expression over parameter
  names (numbers, ``+ - * / **``, unary minus, ``pi``, and the functions in
  :data:`FUNCTIONS`). Names are checked when the mechanism is built. ``t``
  (time) is allowed only where a value may vary in time (drivers, loads);
* a callable ``p -> value`` (or ``(t, p) -> value`` where time is allowed) for
  anything an expression cannot say;
* a number. For the *physical scalars* of an element (mass, inertia, radius,
  restitution, friction, stiffness …) the builder registers a literal as a
  parameter of its own, named ``<element>_<field>`` (``ball_mass``), so it too
  is a leaf. Literals in point coordinates and directions stay constants: they
  are the drawing of the mechanism; name them (``"l1/2"``) to vary them.
"""

from __future__ import annotations

import ast
import math
import numbers
import operator
from collections.abc import Callable, Mapping
from typing import Any

import jax.numpy as jnp

FUNCTIONS: dict[str, Callable] = {
    "sqrt": jnp.sqrt,
    "sin": jnp.sin,
    "cos": jnp.cos,
    "tan": jnp.tan,
    "atan2": jnp.arctan2,
    "exp": jnp.exp,
    "log": jnp.log,
    "abs": jnp.abs,
    "minimum": jnp.minimum,
    "maximum": jnp.maximum,
}
CONSTANTS: dict[str, float] = {"pi": math.pi}
_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def is_number(x) -> bool:
    """True for a real Python/numpy number (bool excluded)."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


class UnknownParameter(KeyError):
    """A value referenced a parameter name that the dict does not hold."""


class _StrictParams(Mapping):
    """A read-only view of the params that records reads and names unknown keys."""

    def __init__(self, params: Mapping):
        self._p = params
        self.read: set[str] = set()

    def __getitem__(self, key):
        if key not in self._p:
            raise UnknownParameter(key)
        self.read.add(key)
        return self._p[key]

    def __iter__(self):
        return iter(self._p)

    def __len__(self):
        return len(self._p)


def _compile(node, text: str, where: str, time_ok: bool, names: set[str]):
    """AST node → closure ``(p, t) -> value`` (only arithmetic, names, whitelisted calls)."""
    if isinstance(node, ast.Constant) and is_number(node.value):
        c = float(node.value)
        return lambda p, t: c
    if isinstance(node, ast.Name):
        name = node.id
        if name == "t":
            if not time_ok:
                raise ValueError(
                    f"{where}: expression {text!r} uses time t, which is not allowed here "
                    "(only drivers and applied loads may vary in time)"
                )
            return lambda p, t: t
        if name in CONSTANTS:
            c = CONSTANTS[name]
            return lambda p, t: c
        names.add(name)
        return lambda p, t: p[name]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        op = _BINOPS[type(node.op)]
        a = _compile(node.left, text, where, time_ok, names)
        b = _compile(node.right, text, where, time_ok, names)
        return lambda p, t: op(a(p, t), b(p, t))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNOPS:
        op = _UNOPS[type(node.op)]
        a = _compile(node.operand, text, where, time_ok, names)
        return lambda p, t: op(a(p, t))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in FUNCTIONS
        and not node.keywords
    ):
        fn = FUNCTIONS[node.func.id]
        args = [_compile(a, text, where, time_ok, names) for a in node.args]
        return lambda p, t: fn(*(a(p, t) for a in args))
    raise ValueError(
        f"{where}: expression {text!r} uses unsupported syntax ({ast.dump(node)[:60]}); allowed: "
        f"parameter names, numbers, + - * / **, pi, t (drivers and loads), {sorted(FUNCTIONS)}"
    )


class Value:
    """One value spec, parsed when the element is created, resolved as ``value(p, t)``.

    ``where`` names the element and field for error messages ("body 'bar1' mass").
    ``time_ok``: the value may depend on time (``t`` in expressions; callables take ``(t, p)``).
    """

    __slots__ = ("spec", "where", "time_ok", "names", "_fn", "text", "uses_time")

    def __init__(self, spec: Any, where: str, time_ok: bool = False):
        self.spec, self.where, self.time_ok = spec, where, time_ok
        if isinstance(spec, Value):
            spec = spec.spec
            self.spec = spec
        if is_number(spec):
            c = float(spec)
            self._fn = lambda p, t: c
            self.names: frozenset[str] | None = frozenset()
            self.text = repr(c)
            self.uses_time = False
        elif isinstance(spec, str):
            try:
                tree = ast.parse(spec.strip(), mode="eval")
            except SyntaxError as err:
                raise ValueError(
                    f"{where}: {spec!r} is neither a parameter name nor a valid expression ({err.msg})"
                ) from None
            names: set[str] = set()
            self._fn = _compile(tree.body, spec, where, time_ok, names)
            self.names = frozenset(names)
            self.text = spec.strip()
            self.uses_time = time_ok and "t" in _free_names(spec)
        elif callable(spec):
            fn = spec
            self._fn = (lambda p, t: fn(t, p)) if time_ok else (lambda p, t: fn(p))
            self.names = None  # known only after a call (see ``check``)
            self.text = getattr(spec, "__name__", "<callable>")
            self.uses_time = time_ok  # unknown: assume it does
        else:
            raise ValueError(f"{where}: {spec!r} is not a number, a parameter name or expression, or a callable")

    @classmethod
    def parameter(cls, name: str, where: str) -> Value:
        """A direct reference to parameter ``name`` (any string, not parsed as an expression)."""
        v = cls(0.0, where)
        v.spec, v.names, v.text, v.uses_time = name, frozenset([name]), name, False
        v._fn = lambda p, t: p[name]
        return v

    @property
    def parameter_name(self) -> str | None:
        """The parameter's name when the value is exactly one parameter (``"m1"``, a registered literal), else
        None: only then do the rule and unit of the field it fills belong to that parameter."""
        return self.text if self.names == frozenset([self.text]) else None

    def __call__(self, p: Mapping, t=0.0):
        return self._fn(p, t)

    @property
    def is_constant_in_time(self) -> bool:
        """True when the value certainly does not depend on t (a time callable: unknown, so False)."""
        return not self.uses_time

    def check(self, params: Mapping):
        """Evaluate at t = 0 against ``params``; unknown names raise ValueError naming them."""
        if self.names is not None:
            unknown = sorted(self.names - set(params))
            if unknown:
                raise ValueError(
                    f"{self.where}: unknown parameter(s) {unknown} in {self.text!r}; known parameters: {sorted(params)}"
                )
            return self(params, 0.0)
        strict = _StrictParams(params)
        try:
            return self(strict, 0.0)
        except UnknownParameter as err:
            raise ValueError(
                f"{self.where}: unknown parameter {err.args[0]!r} read by {self.text}; "
                f"known parameters: {sorted(params)}"
            ) from None

    def __repr__(self):
        return self.text


def _free_names(text: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(text.strip(), mode="eval")) if isinstance(n, ast.Name)}
