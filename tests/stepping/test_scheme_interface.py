"""The scheme interface: declared capabilities, ``check`` refusals naming the scheme, JSON identity."""

import argparse
import json

import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.commands.scheme_options import add_scheme_arguments, scheme_from_args
from jaxcontact.models import get_model
from jaxcontact.simulate import Fold, fold_steps, simulate
from jaxcontact.stepping import (
    PRESETS,
    SCHEMES,
    EventDriven,
    ImpactProjection,
    MoreauJean,
    MoreauJeanSiconos,
    Penalty,
    Scheme,
    scheme_named,
)


def test_the_cli_offers_the_registered_schemes_and_presets():  # one list: the registries
    p = argparse.ArgumentParser()
    add_scheme_arguments(p)
    (choices,) = [a.choices for a in p._actions if a.dest == "scheme"]
    assert list(choices) == [*SCHEMES, *PRESETS] and set(PRESETS) == {"moreau-jean-siconos", "impact-projection"}
    for name, cls in SCHEMES.items():
        assert issubclass(cls, Scheme) and cls.name == name and cls.family() == name
    for name, cls in PRESETS.items():
        assert cls.name == name and cls.family() == "moreau-jean" and scheme_named(name) is cls
    assert MoreauJeanSiconos() == MoreauJeanSiconos(force_rule="siconos") and MoreauJeanSiconos().theta == 0.5
    # a preset takes its scheme's command-line options and the options a study sets for its family
    args = p.parse_args(["--scheme", "moreau-jean-siconos", "--iterations", "7"])
    assert scheme_from_args(args, study_options={"moreau-jean": {"tol": 1e-4}}) == MoreauJeanSiconos(
        iterations=7, tol=1e-4
    )
    with pytest.raises(ValueError, match="scheme 'verlet' is not one of .*moreau-jean, .*impact-projection"):
        scheme_named("verlet")
    # --implicit: the penalty scheme's linearly implicit step, yes / no / auto; another scheme refuses it by name
    for word, value in (("yes", True), ("no", False), ("auto", None)):
        args = p.parse_args(["--scheme", "penalty", "--implicit", word])
        assert scheme_from_args(args) == Penalty(implicit=value)
    with pytest.raises(ValueError, match="--implicit is an option of the penalty scheme, not of the moreau-jean"):
        scheme_from_args(p.parse_args(["--implicit", "yes"]))


def test_declared_capabilities():
    assert MoreauJean.contact_kinds == {"rigid"} and Penalty.contact_kinds == {"compliant"}
    assert EventDriven.contact_kinds == {"rigid", "compliant"}
    assert MoreauJean().differentiation_modes == {"forward", "reverse"}
    assert MoreauJean(differentiation="implicit").differentiation_modes == {"reverse"}
    assert Penalty().differentiation_modes == {"forward", "reverse"}
    assert Penalty(method="tsit5").differentiation_modes == {"reverse"}
    assert EventDriven().differentiation_modes == {"reverse"}
    assert MoreauJean().with_soft_activation("tau").soft_activation == "tau"
    for scheme in (Penalty(), EventDriven()):
        with pytest.raises(ValueError, match=f"the {scheme.name} scheme has no soft contact activation.*moreau-jean"):
            scheme.with_soft_activation("tau")


@pytest.mark.parametrize(
    "model, scheme, message",
    [
        ("four-bar", Penalty(), "penalty scheme treats compliant contacts only.*rigid contacts"),
        ("slider-bar", MoreauJean(), "moreau-jean scheme treats rigid contacts only.*compliant contacts"),
        ("slider-bar", ImpactProjection(), "impact-projection scheme treats rigid contacts only"),
        ("sliding-block", MoreauJean(solver="pgs"), "moreau-jean scheme with solver = 'pgs' cannot solve Coulomb"),
    ],
)
def test_check_refuses_what_a_scheme_cannot_treat(model, scheme, message):
    m = get_model(model)
    with pytest.raises(ValueError, match=message):
        scheme.check(m.system)
    q0, u0 = m.initial_state(m.params)
    with pytest.raises(ValueError, match=message):
        simulate(m.system, m.params, q0, u0, dt=m.dt, n_steps=2, scheme=scheme)
    EventDriven().check(m.system)  # treats both kinds


def test_config_is_json_and_stable():
    for scheme in (MoreauJean(), Penalty(), EventDriven(), ImpactProjection()):
        c = scheme.config()
        assert c["scheme"] == scheme.name
        assert json.loads(json.dumps(c)) == c
        assert type(scheme)().config() == c  # no object addresses: a resumed study matches
    assert Penalty().config()["baumgarte"] == "baumgarte_rates(c=0.1)"


def test_fold_steps_runs_the_remainder_after_the_last_save():
    """7 steps saved every 3: two saves, and the 7th step still reaches the fold (a step counter)."""
    m = get_model("bouncing-ball")
    q0, u0 = m.initial_state(m.params)
    fold = Fold(
        init=lambda s0, info: jnp.zeros((), jnp.int32),
        update=lambda acc, s, info: acc + 1,
        save=lambda acc, s: (acc, s.t),
    )
    s0, acc, rows = fold_steps(
        m.system,
        MoreauJean(),
        m.params,
        q0,
        u0,
        jnp.asarray(1e-3),
        jnp.asarray(0.0),
        n_steps=7,
        save_every=3,
        fold=fold,
    )
    assert int(acc) == 7
    np.testing.assert_allclose(rows, [3e-3, 6e-3], rtol=1e-12)
