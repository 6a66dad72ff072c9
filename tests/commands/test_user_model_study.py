"""A user model (FILE.py:FUNCTION) that declares its parameters' units and bounds and a default study runs
``jaxcontact mc`` with no --param and prints the units; one that declares nothing behaves as before."""

from __future__ import annotations

import os

from jaxcontact.cli import main

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "user_model.py")


def test_a_declared_default_study_runs_without_param_and_prints_units(tmp_path, capsys):
    rc = main(["mc", f"{EXAMPLE}:pendulum", "--check", "--out", str(tmp_path / "mc")])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert out.startswith(f"{EXAMPLE}:pendulum: 64 simulations"), out  # the declared n
    assert "parameters: restitution=uniform(0.3, 0.9) [1], l=uniform(0.3, 0.5) [m]" in out, out


def test_a_model_that_declares_nothing_still_needs_param(tmp_path, capsys):
    rc = main(["mc", f"{EXAMPLE}:soft_pendulum", "--scheme", "penalty", "--check", "--out", str(tmp_path / "mc")])
    err = capsys.readouterr().err
    assert rc == 2 and "no uncertain parameter" in err and "--param" in err, err


def test_a_declared_bound_is_enforced_on_the_distribution(tmp_path, capsys):
    rc = main(["mc", f"{EXAMPLE}:pendulum", "--param", "l=uniform(0.05,0.5)", "--check", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and "outside the allowed range [0.1, 1.0] of l" in err, err


def test_params_lists_a_user_models_declared_units_rules_and_ranges(capsys):
    assert main(["params", f"{EXAMPLE}:pendulum"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[2:-1]}
    assert rows["l"][2:] == ["m", "l", ">", "0", "[0.1,", "1]"]
    assert rows["m"][2:5] == ["kg", "m", ">"] and rows["restitution"][2] == "1"  # from the builder's fields
