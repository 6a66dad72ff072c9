"""jaxcontact.params: a model's parameters in one table (defaults, rules, units, bounds), what the builders know
about the fields they fill, and the layering the table makes possible (studies never import models)."""

from __future__ import annotations

import os
import re

import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.params import NONNEGATIVE, POSITIVE, Param, ParamTable, law_rule

ROOT = os.path.join(os.path.dirname(__file__), "..")

TABLE = ParamTable(
    [
        Param("mass", 1.0, rule=POSITIVE),
        Param("restitution", 0.5, rule=law_rule("restitution")),
        Param("wall", 0.1, unit="cm", bounds=(0.0, 0.3)),
        Param("angle", np.zeros(2)),
    ]
)


def test_apply_gives_float_array_leaves_with_the_overrides():
    p = TABLE.apply({"restitution": 0.8})
    assert list(p) == ["mass", "restitution", "wall", "angle"]
    assert all(isinstance(v, jnp.ndarray) and v.dtype == jnp.result_type(float) for v in p.values())
    assert float(p["restitution"]) == 0.8 and float(p["mass"]) == 1.0 and p["angle"].shape == (2,)
    assert set(TABLE.defaults) == set(TABLE) and float(TABLE.defaults["wall"]) == pytest.approx(0.1)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"masss": 2.0}, r"unknown parameter\(s\) \['masss'\]; valid names: \['angle', 'mass', 'restitution'"),
        ({"mass": float("nan")}, r"parameter mass = nan must be finite"),
        ({"mass": -1.0}, r"parameter mass = -1.0 breaks the rule mass > 0"),
        ({"restitution": 1.5}, r"parameter restitution = 1.5 breaks the rule restitution in \[0, 1\]"),
    ],
)
def test_apply_refuses_by_name_with_the_rule(overrides, message):
    with pytest.raises(ValueError, match=message):
        TABLE.apply(overrides)


def test_the_table_matches_the_models_apply_overrides_message_for_message():
    from jaxcontact.models import apply_overrides

    defaults, rules = {"m": 1.0, "e": 0.5}, {"m": (lambda v: v > 0, "> 0")}
    for bad in ({"m": 0.0}, {"x": 1.0}, {"e": float("inf")}):
        with pytest.raises(ValueError) as a:
            apply_overrides(defaults, bad, rules)
        with pytest.raises(ValueError) as b:
            ParamTable.of(defaults, rules).apply(bad)
        assert str(a.value) == str(b.value)


def test_check_holds_for_every_entry_of_a_batch():
    TABLE.check({"mass": np.array([0.5, 1.0, 2.0]), "restitution": np.array([0.0, 1.0, 0.3])})
    with pytest.raises(ValueError, match=r"parameter mass = \[ 0.5 -1.   2. \] breaks the rule mass > 0"):
        TABLE.check({"mass": np.array([0.5, -1.0, 2.0])})
    TABLE.check({"not_in_the_table": np.array([-1.0])})  # left to its owner


def test_units_declared_first_then_the_conventions_by_name():
    assert TABLE.unit("wall") == "cm"  # declared
    assert TABLE.unit("mass") == "kg" and TABLE.unit("restitution") == "1"  # conventions by name
    assert TABLE.unit("angle") == "?" and TABLE.unit("absent") == "?"


def test_bounds_declared_first_then_the_conventions_by_name():
    assert TABLE.bounds("wall") == (0.0, 0.3)
    assert TABLE.bounds("restitution") == (0.0, 1.0) and TABLE.bounds("wall_friction") == (0.0, float("inf"))
    assert TABLE.bounds("angle") is None


def test_of_refuses_declarations_for_unknown_names_and_updated_replaces():
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['z'\]"):
        ParamTable.of({"a": 1.0}, units={"z": "m"})
    t = TABLE.updated(Param("mass", 2.0, rule=NONNEGATIVE), Param("new", 3.0))
    assert list(t) == ["mass", "restitution", "wall", "angle", "new"]
    assert t.rule_text("mass") == "mass >= 0" and t.rule_text("new") == "finite"


def test_the_planar_builder_knows_each_fields_rule_and_unit():
    from jaxcontact.planar import Mechanism

    mech = Mechanism("ball")
    ball = mech.body("ball", mass="m", inertia="0.4*m*r**2")
    mech.gravity("g")
    floor = mech.line(point=(0.0, 0.0), normal=(0.0, 1.0))
    mech.circle_contact("floor", ball, (0.0, 0.0), "r", floor, restitution="e", friction=0.3)
    t = mech.param_table({"m": 1.0, "r": 0.1, "g": 9.81, "e": 0.5})
    assert [t.unit(k) for k in ("m", "r", "g", "e", "floor_friction")] == ["kg", "m", "m/s²", "1", "1"]
    assert t.rule_text("m") == "m > 0" and t.rule_text("e") == "e in [0, 1]" and t.rule_text("r") == "r > 0"
    with pytest.raises(ValueError, match=r"parameter m = -1.0 breaks the rule m > 0"):
        t.apply({"m": -1.0})


def test_the_spatial_builder_knows_each_fields_rule_and_unit_and_builds_like_the_planar_one():
    from jaxcontact.spatial import Assembly, SpherePlane

    asm = Assembly(gravity="gravity")
    ball = asm.add_body("ball", mass="mass", inertia=("0.4*mass*radius**2",) * 3)
    asm.add_contact(SpherePlane("ground", restitution="restitution", friction="friction", body=ball, radius="radius"))
    defaults = {"mass": 2.0, "radius": 0.1, "gravity": 9.81, "restitution": 0.5, "friction": 0.3}
    t = asm.param_table(defaults)
    assert [t.unit(k) for k in defaults] == ["kg", "m", "m/s²", "1", "1"]
    assert t.rule_text("mass") == "mass > 0" and t.rule_text("restitution") == "restitution in [0, 1]"
    system, params = asm.build(defaults)
    assert system.n_dof == 7 and set(params) == set(defaults) and params["mass"].dtype == jnp.result_type(float)
    with pytest.raises(ValueError, match=r"body 'ball' mass = -1.0 breaks the rule > 0"):
        asm.build({**defaults, "mass": -1.0})


def test_every_built_in_model_carries_its_table_and_its_own_default_study():
    from jaxcontact.models import REGISTRY, get_model

    with_study = set()
    for name in REGISTRY:
        m = get_model(name)
        assert set(m.params) <= set(m.param_table), name
        assert m.source == name and m.build is not None
        if m.study is not None:
            with_study.add(name)
            assert m.study.params and m.study.outcomes
    assert {"four-bar", "bouncing-ball", "slider-crank-clearance", "spatial-slider-crank"} <= with_study
    assert get_model("slider-bar").param_table.unit("damping") == "N·s/m²"  # declared in its own file


def _imports(folder, pattern):
    hits = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "jaxcontact", folder)):
        for f in files:
            if f.endswith(".py"):
                text = open(os.path.join(dirpath, f), encoding="utf-8").read()
                hits += [f"{f}: {line}" for line in text.splitlines() if re.search(pattern, line)]
    return hits


def test_studies_never_import_the_models_and_the_spatial_builder_never_the_planar_one():
    """A study takes the Model object; the builders share their value machinery from a neutral module."""
    assert _imports("studies", r"import.*models") == []
    assert _imports("spatial", r"planar") == []
