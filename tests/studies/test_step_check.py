"""The step check of a Monte Carlo study: extreme samples rerun at half the step, flagged where it decides them."""

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxcontact.models import Model
from jaxcontact.params import ParamTable
from jaxcontact.stepping.moreau_jean import MoreauJean
from jaxcontact.stepping.penalty import Penalty
from jaxcontact.studies.distributions import ParamSpace
from jaxcontact.studies.montecarlo import StudySpec, format_summary, run_study
from jaxcontact.studies.outcomes import FREE_FLIGHT_FLOOR, outcome
from jaxcontact.studies.step_check import (
    COARSE,
    FAILS,
    SENSITIVE,
    TOLERANCE,
    UNSETTLED,
    chosen_samples,
    format_step_check,
    step_check,
)
from jaxcontact.system import CompliantLaws, LagrangianSystem

DT = 1e-3


def _ball() -> Model:
    """A point mass dropped from 0.5 m onto a linear spring ground of stiffness ``k``: explicit RK4 at
    ``DT`` resolves k = 1e3 N/m (ω h = 0.03) and not k = 1e7 (ω h = 3.2, past RK4's bound of 2.8)."""
    table = ParamTable.of({"k": 1e3})

    def laws(p):
        one = jnp.ones((1,))
        return CompliantLaws(p["k"] * one, one, 0 * one, 0 * one, 0 * one, one, 0 * one)

    system = LagrangianSystem(
        n_dof=1,
        mass=lambda q, p: jnp.ones((1, 1), q.dtype),
        forces=lambda q, u, t, p: jnp.full((1,), -9.81, q.dtype),
        compliant_gaps=lambda q, t, p: q[:1],
        compliant_laws=laws,
        names=("y",),
    )
    return Model(
        "compliant-ball",
        system,
        table.defaults,
        lambda p: (jnp.full((1,), 0.5), jnp.zeros((1,))),
        dt=DT,
        t_final=0.8,
        description="a ball on a spring ground",
        table=table,
    )


def _study(law: str, scheme=Penalty(), **kw) -> StudySpec:
    space = ParamSpace.parse([f"k={law}"])
    return StudySpec(_ball(), space, 16, ("rebound:y", "min:y"), sensitivity=False, scheme=scheme, **kw)


def test_samples_too_stiff_for_the_step_are_flagged_and_the_resolved_ones_are_not(tmp_path):
    spec = dataclasses.replace(_study("lognormal(11.5,4)"), n=32)  # k from 60 to 6e8 N/m
    summary = run_study(spec, str(tmp_path), progress=False, plot=False)
    check = summary["step_check"]
    z = np.load(tmp_path / "samples.npz")
    k, rebound = z["param:k"], z["out:rebound:y"]
    # The spring conserves energy: the ball must rise back to 0.5 m. The samples that do not are the stiff ones
    # the step does not resolve (and the softest, still in contact at the end).
    wrong = set(np.flatnonzero(np.abs(rebound - 0.5) > 0.05))
    flagged = {f["sample"] for f in check["flagged"]}
    assert flagged and flagged <= wrong
    assert int(np.argmax(k)) in flagged
    # Both flagged springs (ωh = 25 and 8.1 at dt) are still past RK4's bound at dt/2, so the change goes on at
    # dt/4 (shrinking): the study needs a quarter of the step at least.
    assert {f["kind"] for f in check["flagged"]} == {UNSETTLED}
    assert "rerun with --dt 0.00025 or smaller" in format_summary(summary)
    assert set(np.flatnonzero(z["step_check:flagged"])) == flagged
    assert set(np.flatnonzero(z["step_check:rerun"])) == set(check["samples"])
    assert any(i not in wrong for i in check["samples"])  # resolved samples were checked too, and passed
    assert "WARNING step check" in format_summary(summary)


def test_a_study_the_step_resolves_passes_and_says_by_how_much(tmp_path):
    summary = run_study(_study("uniform(1e3,2e3)"), str(tmp_path), progress=False, plot=False)
    check = summary["step_check"]
    assert check["flagged"] == [] and len(check["samples"]) >= 4
    # rebound:y hardly varies with k: its step error passes its spread, but not 1 % of its value
    rebound = check["outcomes"]["rebound:y"]["largest"]
    assert rebound["of_spread"] > TOLERANCE and rebound["of_value"] < 1e-3
    assert check["outcomes"]["min:y"]["largest"]["of_spread"] < 0.01 * TOLERANCE
    text = format_summary(summary)
    assert "step check: " in text and "WARNING" not in text


def test_no_check_where_the_scheme_does_not_ask_or_the_user_declines(tmp_path):
    assert not MoreauJean.step_checked and Penalty.step_checked
    summary = run_study(_study("uniform(1e3,2e3)", step_check=False), str(tmp_path), progress=False, plot=False)
    assert "step_check" not in summary


def test_the_chosen_samples_are_each_outcomes_ends_among_the_valid_ones_and_random_others():
    a = np.array([5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 8.0, 4.0, 6.0, 0.5])
    b = -a
    valid = np.ones(10, bool)
    valid[2] = False  # the largest a is not valid
    rows = chosen_samples({"a": a, "b": b}, valid, seed=0)
    assert {6, 9} <= set(rows) and 2 not in rows  # a's valid ends: 8.0 at 6, 0.5 at 9 (b's are the same)
    assert len(rows) == 2 + 4 and len(set(rows)) == len(rows)


def test_a_sample_that_fails_or_moves_at_half_the_step_is_flagged_and_a_quarter_step_says_why():
    x = np.linspace(0.0, 1.0, 11)  # spread (5–95 %) 0.9
    z = np.zeros(11)
    z[3] = 5.0  # an outcome only sample 3 loads: judged by its own size
    valid = np.ones(11, bool)

    def at(k):
        # dt/2: sample 10 moves x by 0.5 (> 0.25 · 0.9, > 1 % of 1), sample 3 loses z, sample 0 fails; sample 5
        # moves x by 0.009 (1.8 % of its value, 1 % of the spread): not flagged.
        # dt/4: sample 10's x moves by 0.4 again (sensitive to the step), sample 3's z stays lost (settled).
        def run(sample):
            i = sample["i"]
            x_k = {2: 0.5, 4: 0.9}[k]
            return {
                "x": jnp.where(i == 10, x_k, i / 10.0 + jnp.where(i == 5, 0.009, 0.0)),
                "z": jnp.zeros(()),
                "state_finite": i != 0,
            }

        return run

    check = step_check(at, {"i": np.arange(11)}, {"x": x, "z": z}, valid, dt=0.1, seed=1)
    assert 5 in check["samples"]
    kinds = {(f["sample"], f.get("outcome")): f["kind"] for f in check["flagged"]}
    assert kinds == {(10, "x"): SENSITIVE, (3, "z"): COARSE, (0, None): FAILS}
    assert check["dt_half"] == 0.05
    text = "\n".join(format_step_check(check, {}))
    assert "WARNING step check" in text and "rerun with --dt 0.05 or smaller" in text
    assert "sample 3: z 5 → 0 → 0" in text and "sample 0: fails at the half step" in text
    assert "note, step check: an outcome of 1 of the" in text and "sample 10: x 1 → 0.5 → 0.9" in text


def test_an_outcome_that_hardly_leaves_zero_is_not_judged_below_its_floor():
    # A share of the steps, 4e-4 at dt and 5e-4 at dt/2 for sample 2: a quarter of its value and of its spread,
    # and a ten-thousandth of the run. Without a floor it is flagged; with the free-flight floor it is not, and a
    # change past the floor still is.
    share = np.array([2e-4, 3e-4, 4e-4, 2.5e-4, 3.5e-4, 2e-4])
    valid = np.ones(share.size, bool)

    def at(jump):
        def make(k):
            def run(sample):
                i = sample["i"]
                return {"share": jnp.asarray(share)[i] + jnp.where(i == 2, jump, 0.0), "state_finite": i >= 0}

            return run

        return make

    flagged = lambda check: {(f["sample"], f["outcome"]) for f in check["flagged"]}  # noqa: E731
    check = step_check(at(1e-4), {"i": np.arange(share.size)}, {"share": share}, valid, dt=0.1, seed=0)
    assert flagged(check) == {(2, "share")}
    floors = {"share": FREE_FLIGHT_FLOOR}
    check = step_check(at(1e-4), {"i": np.arange(share.size)}, {"share": share}, valid, dt=0.1, seed=0, floors=floors)
    assert check["flagged"] == [] and check["tolerance"]["floor"] == floors
    assert "no outcome moved by more than" in "\n".join(format_step_check(check, {}))
    check = step_check(at(3e-3), {"i": np.arange(share.size)}, {"share": share}, valid, dt=0.1, seed=0, floors=floors)
    assert flagged(check) == {(2, "share")}


def test_free_flight_shares_declare_the_floor_and_other_outcomes_none():
    system = _ball().system
    assert outcome("free_flight", system).floor == FREE_FLIGHT_FLOOR > 0
    assert outcome("free_flight:0", system).floor == FREE_FLIGHT_FLOOR
    assert outcome("min:y", system).floor == 0.0
