"""Parameters: one home for what a model knows about each of its named values.

A :class:`Param` is a name with its default, unit, validity rule, study bounds
and one line of doc; a :class:`ParamTable` holds a model's parameters and answers
every question the rest of the package asks about them — the defaults as array
leaves, overrides applied and checked (:meth:`ParamTable.apply`), a batch of
values checked (:meth:`ParamTable.check`), a unit for a table or an axis, the
range a study's distribution must stay inside.

What a model does not declare falls back on conventions by name (the units of
:mod:`jaxcontact.units`, :data:`CONVENTIONAL_BOUNDS`), so a model that declares
nothing reads as it always did.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxcontact.units import conventional_unit

INF = math.inf


class Rule:
    """A validity rule on a value: ``text`` completes "name …" in messages, ``pred`` is elementwise (numpy)."""

    def __init__(self, text: str, pred: Callable[[Any], Any]):
        self.text, self.pred = text, pred

    def __repr__(self):
        return self.text


POSITIVE = Rule("> 0", lambda v: v > 0)
NONNEGATIVE = Rule(">= 0", lambda v: v >= 0)
UNIT_INTERVAL = Rule("in [0, 1]", lambda v: (v >= 0) & (v <= 1))
ANY = Rule("finite", lambda v: v == v)

# The valid range of each contact-law parameter: the one table every check reads (the
# simulation's input check, the builders, the models, study bounds, fit bounds).
LAW_RANGES: dict[str, tuple[float, float]] = {
    "restitution": (0.0, 1.0),
    "tangential_restitution": (0.0, 1.0),
    "friction": (0.0, INF),
}


def law_rule(field: str) -> tuple:
    """``(predicate, text)`` of ``LAW_RANGES[field]``, e.g. (0 ≤ v ≤ 1, "in [0, 1]")."""
    lo, hi = LAW_RANGES[field]
    text = f"in [{lo:g}, {hi:g}]" if hi != INF else f">= {lo:g}"
    return (lambda v: (v >= lo) & (v <= hi)), text


def law_range_rule(field: str) -> Rule:
    """The :class:`Rule` of a contact-law parameter, from :data:`LAW_RANGES`."""
    pred, text = law_rule(field)
    return Rule(text, pred)


# Study bounds by parameter-name pattern (fnmatch, first match): a distribution's support must stay
# inside them. They cover the contact-law names and the physically positive quantities of the
# built-in models; a model declares its own with ``Param(bounds=…)``.
CONVENTIONAL_BOUNDS: tuple[tuple[str, float, float], ...] = (
    ("*restitution*", *LAW_RANGES["restitution"]),
    ("*friction*", *LAW_RANGES["friction"]),
    ("*mass*", 0.0, INF),
    ("*length*", 0.0, INF),
    ("*radius*", 0.0, INF),
    ("*clearance*", 0.0, INF),
    ("*stiffness*", 0.0, INF),
    ("*inertia*", 0.0, INF),
    ("dt", 0.0, INF),
)


def conventional_bounds(name: str) -> tuple[float, float] | None:
    """The conventional [lo, hi] for a parameter name (first matching pattern), or None."""
    for pattern, lo, hi in CONVENTIONAL_BOUNDS:
        if fnmatch.fnmatchcase(name, pattern):
            return (lo, hi)
    return None


# The unit of each element field the builders know (planar Mechanism, spatial Assembly): a parameter that
# fills such a field directly takes its unit. Fields with no fixed unit (a driver's value, a stiffness whose
# unit follows its exponent) are absent.
FIELD_UNITS: dict[str, str] = {
    "mass": "kg",
    "inertia": "kg·m²",
    "g": "m/s²",
    "gravity": "m/s²",
    "restitution": "1",
    "tangential_restitution": "1",
    "friction": "1",
    "static_friction": "1",
    "exponent": "1",
    "slip_width": "m/s",
    "slip_width0": "m/s",
    "radius": "m",
    "radius_a": "m",
    "radius_b": "m",
    "pin_radius": "m",
    "hole_radius": "m",
    "socket_radius": "m",
    "clearance": "m",
    "rest_length": "m",
    "half_extents": "m",
    "half_length": "m",
    "half_length_a": "m",
    "half_length_b": "m",
    "pin_length": "m",
    "angle": "rad",
    "travel": "m",
}


def as_rule(rule) -> Rule | None:
    """A :class:`Rule` from a Rule, a ``(predicate, text)`` pair (the models' ``RULES`` entries) or None."""
    if rule is None or isinstance(rule, Rule):
        return rule
    pred, text = rule
    return Rule(text, pred)


class Param(NamedTuple):
    """One named parameter.

    default: its value (a number or an array; a leaf of the model's params);
    unit: SI unit text ("1" dimensionless; None: the conventional unit of the name, "?" if none);
    rule: the :class:`Rule` every value must obey (None: finite only);
    bounds: (lo, hi) a study's distribution must stay inside (None: the conventional bounds of the name);
    doc: one line for tables.
    """

    name: str
    default: Any
    unit: str | None = None
    rule: Rule | None = None
    bounds: tuple[float, float] | None = None
    doc: str = ""


class ParamTable(Mapping):
    """A model's parameters by name (a read-only mapping name -> :class:`Param`, in declaration order)."""

    def __init__(self, params: Iterable[Param]):
        self._params = {p.name: p._replace(rule=as_rule(p.rule)) for p in params}

    @classmethod
    def of(cls, defaults: Mapping, rules: Mapping | None = None, units: Mapping | None = None, bounds=None):
        """A table from the dicts a model file declares: defaults, rules (Rule or ``(pred, text)``), units, bounds."""
        rules, units, bounds = rules or {}, units or {}, bounds or {}
        unknown = sorted((set(rules) | set(units) | set(bounds)) - set(defaults))
        if unknown:
            raise ValueError(
                f"rules, units or bounds for unknown parameter(s) {unknown}; parameters: {sorted(defaults)}"
            )
        return cls(Param(k, v, units.get(k), rules.get(k), bounds.get(k)) for k, v in defaults.items())

    @classmethod
    def from_uses(cls, defaults: Mapping, uses: Iterable[tuple[str, str, Rule]]) -> ParamTable:
        """A builder's table: ``uses`` lists (parameter, element field, rule) for every field a parameter fills
        directly; the parameter takes the field's rule (several fields: all their rules) and unit
        (:data:`FIELD_UNITS`; fields that disagree: the conventions by name)."""
        rules: dict[str, list[Rule]] = {}
        units: dict[str, set] = {}
        for name, field, rule in uses:
            if name not in defaults:
                continue
            if rule is not None and rule.text != ANY.text and all(r.text != rule.text for r in rules.get(name, [])):
                rules.setdefault(name, []).append(rule)
            if field.split("[")[0] in FIELD_UNITS:
                units.setdefault(name, set()).add(FIELD_UNITS[field.split("[")[0]])
        return cls(
            Param(
                k,
                v,
                next(iter(units[k])) if len(units.get(k, ())) == 1 else None,
                _all_of(rules[k]) if k in rules else None,
            )
            for k, v in defaults.items()
        )

    def __getitem__(self, name: str) -> Param:
        return self._params[name]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __repr__(self):
        return f"ParamTable({list(self._params)})"

    def updated(self, *params: Param) -> ParamTable:
        """This table with ``params`` replacing same-named entries or appended."""
        return ParamTable([*{**self._params, **{p.name: p for p in params}}.values()])

    @property
    def defaults(self) -> dict:
        """name -> default as a float array leaf (the default dtype)."""
        return self.apply({})

    def unit(self, name: str) -> str:
        """The unit of ``name`` ("?" when neither the parameter nor the conventions know it)."""
        declared = self._params[name].unit if name in self._params else None
        return declared if declared is not None else conventional_unit(name)

    def bounds(self, name: str) -> tuple[float, float] | None:
        """The [lo, hi] a study's distribution of ``name`` must stay inside, or None (any)."""
        declared = self._params[name].bounds if name in self._params else None
        return declared if declared is not None else conventional_bounds(name)

    def rule_text(self, name: str) -> str:
        """``name <rule>`` for tables ("finite" when the parameter has no rule of its own)."""
        rule = self._params[name].rule if name in self._params else None
        return "finite" if rule is None else f"{name} {rule.text}"

    def apply(self, overrides: Mapping) -> dict:
        """The defaults with named overrides applied, as float array leaves; unknown names, non-finite
        values and broken rules raise ValueError naming the value and the rule."""
        unknown = sorted(set(overrides) - set(self._params))
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown}; valid names: {sorted(self._params)}")
        dtype = jnp.result_type(float)
        params = {k: jnp.asarray(overrides.get(k, p.default), dtype=dtype) for k, p in self._params.items()}
        self.check(params)
        return params

    def check(self, params: Mapping) -> None:
        """Every value in ``params`` (scalars or batches: the rule holds for every entry) must be finite and obey
        its parameter's rule; names the table does not hold are left to their owner."""
        for k, v in params.items():
            a = np.asarray(v)
            if not np.all(np.isfinite(a)):
                raise ValueError(f"parameter {k} = {a} must be finite")
            rule = self._params[k].rule if k in self._params else None
            if rule is not None and not np.all(rule.pred(a)):
                raise ValueError(f"parameter {k} = {a} breaks the rule {k} {rule.text}")


def _all_of(rules: list[Rule]) -> Rule:
    """One rule for a parameter several fields constrain: every one of theirs."""
    if len(rules) == 1:
        return rules[0]
    return Rule(" and ".join(r.text for r in rules), lambda v: np.logical_and.reduce([r.pred(v) for r in rules]))
