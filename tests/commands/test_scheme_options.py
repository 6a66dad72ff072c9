"""Every command takes --scheme with its options and user model files, and refuses what cannot run."""

import os

import numpy as np
import pytest

from jaxcontact.cli import main

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "user_model.py")


def _data(tmp_path):
    path = tmp_path / "data.npz"
    np.savez(path, t=np.linspace(0.0, 0.1, 11), y=np.zeros(11))
    return str(path)


@pytest.mark.parametrize(
    "argv, names",
    [
        (["simulate", "four-bar", "--scheme", "penalty"], ("four-bar", "penalty")),
        (["mc", "slider-bar", "--scheme", "moreau-jean", "--n", "4"], ("slider-bar", "moreau-jean")),
        (["mc", "four-bar", "--scheme", "penalty", "--n", "4"], ("four-bar", "penalty")),
        (["identify", "bouncing-ball", "--scheme", "penalty", "--fit", "restitution"], ("bouncing-ball", "penalty")),
        (["identify", "slider-bar", "--fit", "friction"], ("slider-bar", "moreau-jean")),
    ],
)
def test_every_command_refuses_a_scheme_that_cannot_treat_the_model(argv, names, tmp_path, capsys):
    extra = ["--data", _data(tmp_path)] if argv[0] == "identify" else []
    rc = main(argv + extra + ["--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 2 and all(n in err for n in names), err
    assert "contacts" in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["simulate", "mc", "identify"])
def test_an_option_of_another_scheme_is_refused_by_name(command, tmp_path, capsys):
    extra = ["--data", _data(tmp_path), "--fit", "restitution"] if command == "identify" else []
    rc = main([command, "bouncing-ball", "--scheme", "event-driven", "--theta", "0.7", "--out", str(tmp_path)] + extra)
    assert (
        rc == 2
        and "--theta is an option of the moreau-jean scheme, not of the event-driven scheme" in capsys.readouterr().err
    )


def test_user_model_file_runs_in_simulate_and_mc(tmp_path, capsys):
    out = tmp_path / "sim"
    assert main(["simulate", f"{EXAMPLE}:pendulum", "--t-final", "0.6", "--out", str(out), "--no-plots"]) == 0
    q = np.load(out / "trajectory.npz")["q"]
    assert q.shape == (601, 3) and np.min(q[:, 1] - 0.2 * np.sin(-q[:, 2])) > -1e-3  # the tip stays above the floor
    assert (
        main(
            [
                "mc",
                "--model",
                f"{EXAMPLE}:soft_pendulum",
                "--scheme",
                "penalty",
                "--param",
                "stiffness=uniform(5e5,2e6)",
                "--outcome",
                "peak_impulse",
                "--outcome",
                "min:bar.theta",
                "--n",
                "4",
                "--no-sobol",
                "--dt",
                "1e-4",
                "--t-final",
                "0.4",
                "--out",
                str(tmp_path / "mc"),
                "--no-plots",
                "--quiet",
            ]
        )
        == 0
    )
    assert "failed samples: 0 of 4" in capsys.readouterr().out


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nowhere.py:pendulum", "model file 'nowhere.py' does not exist"),
        (f"{EXAMPLE}:nothing", "defines no function 'nothing'"),
        (f"{EXAMPLE}:_initial_state", "_initial_state cannot be called with the parameters []"),
        ("{tmp}/not_a_model.py:build", "build(...) must return a jaxcontact.models.Model; got dict"),
    ],
)
def test_a_broken_user_model_is_named(spec, message, tmp_path, capsys):
    (tmp_path / "not_a_model.py").write_text("def build(**overrides):\n    return dict(overrides)\n")
    assert main(["simulate", spec.format(tmp=tmp_path), "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert main(["simulate", f"{EXAMPLE}:pendulum", "--set", "mass=2", "--out", str(tmp_path)]) == 2
    assert "unknown parameter(s) ['mass']" in capsys.readouterr().err


def test_every_default_study_plans_with_check(tmp_path, capsys):
    """`mc MODEL --check` builds each default study's model, outcomes and scheme (the plan) without running it —
    outcomes that need the step (peak_force) or the model's observables included."""
    from jaxcontact.models import REGISTRY, get_model

    for name in [n for n in REGISTRY if get_model(n).study is not None]:  # default studies live on the models
        rc = main(["mc", name, "--check", "--out", str(tmp_path / name)])
        out, err = capsys.readouterr()
        assert rc == 0, (name, err)
        assert out.startswith(f"{name}: ") and "simulations" in out, out
