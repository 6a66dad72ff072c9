"""A new user's mistakes, typed on the command line (subprocess): each ends in one clear line, never a traceback.

Every probe here is refused (exit code 2) or warned about before any
compilation; ``--check`` validates, prints the plan and stops, so the probes
that need a valid command cost one Python start and no compile. The runs that
must compute (resume after damage, Ctrl-C) are in ``test_resume.py``.
"""

import os
import shlex
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cli(*args, cwd, expect=2):
    """Run ``jaxcontact ARGS`` in ``cwd``; assert the exit code and that no traceback was printed."""
    proc = subprocess.run(
        [sys.executable, "-m", "jaxcontact.cli", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == expect, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def error_line(proc) -> str:
    """The one error line (argparse's or the command's)."""
    lines = [ln for ln in proc.stderr.splitlines() if "error:" in ln]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_mc_with_a_trillion_samples_is_refused_before_building_them(tmp_path):
    err = error_line(cli("mc", "bouncing-ball", "--n", "1000000000000", "--out", "o", cwd=tmp_path))
    assert "more than half the machine's memory" in err and "smaller --n" in err
    assert not (tmp_path / "o").exists()  # a refused command leaves no folder behind


@pytest.mark.parametrize("command", ["simulate", "mc"])
def test_a_step_of_a_picosecond_is_refused_with_the_step_count(tmp_path, command):
    err = error_line(cli(command, "bouncing-ball", "--dt", "1e-12", "--out", "o", cwd=tmp_path))
    assert "time steps in all" in err and "larger --dt" in err


def test_a_study_writing_gigabytes_needs_allow_large(tmp_path):
    err = error_line(cli("mc", "bouncing-ball", "--n", "64", "--dt", "1e-7", "--out", "o", cwd=tmp_path))
    assert "GB" in err and ("--allow-large" in err or "memory" in err)
    # many steps but little output (only the step count is unusual): --allow-large accepts it
    ok = cli(
        "mc",
        "bouncing-ball",
        "--n",
        "1000",
        "--dt",
        "1e-6",
        "--t-final",
        "100",
        "--save-every",
        "100000",
        "--out",
        "o",
        "--allow-large",
        "--check",
        cwd=tmp_path,
        expect=0,
    )
    assert "1e+11 time steps in all" in ok.stdout


@pytest.mark.parametrize("command", ["simulate", "identify"])
def test_output_to_a_file_or_an_unwritable_folder_is_refused_first(tmp_path, command):
    np.savez(tmp_path / "d.npz", t=np.linspace(0, 1, 11), y=np.ones(11))
    (tmp_path / "afile").write_text("")
    extra = ("--data", "d.npz", "--fit", "restitution") if command == "identify" else ()
    err = error_line(cli(command, "bouncing-ball", *extra, "--out", "afile", cwd=tmp_path))
    assert "--out 'afile' is a file, not a folder" in err
    if command == "simulate":  # the same check serves every command; once is enough for this one
        # /proc refuses new folders even to root (chmod does not stop root)
        err = error_line(cli(command, "bouncing-ball", "--out", "/proc/jaxcontact-out", cwd=tmp_path))
        assert "--out '/proc/jaxcontact-out': the folder cannot be created or written" in err


def test_identify_refuses_another_models_trajectory(tmp_path):
    from jaxcontact.models.four_bar import DEFAULTS

    t = np.linspace(0.0, 0.2, 21)
    q = np.zeros((21, 9))
    np.savez(tmp_path / "fourbar.npz", t=t, q=q, u=q, dt=0.01, **{f"param_{k}": v for k, v in DEFAULTS.items()})
    err = error_line(cli("identify", "bouncing-ball", "--data", "fourbar.npz", "--fit", "restitution", cwd=tmp_path))
    assert "was written for a model with parameters" in err and "not bouncing-ball" in err
    np.savez(tmp_path / "nine.npz", t=t, q=q, u=q, dt=0.01)  # without the parameters: the shape tells
    err = error_line(cli("identify", "bouncing-ball", "--data", "nine.npz", "--fit", "restitution", cwd=tmp_path))
    assert "q has shape (21, 9), but bouncing-ball has 1 coordinates ['y']" in err


def test_identify_data_files(tmp_path):
    t = np.linspace(0.0, 1.0, 101)
    (tmp_path / "text.npz").write_text("t,y\n0,1\n")
    np.savez(tmp_path / "lengths.npz", t=t, y=np.ones(90))
    np.savez(tmp_path / "nodt.npz", t=t, y=np.ones(101))
    (tmp_path / "folder").mkdir()
    fit = ("--fit", "restitution", "--out", "o")
    err = error_line(cli("identify", "bouncing-ball", "--data", "text.npz", *fit, cwd=tmp_path))
    assert "--data 'text.npz' is not an npz archive" in err
    err = error_line(cli("identify", "bouncing-ball", "--data", "folder", *fit, cwd=tmp_path))
    assert "--data 'folder' is a folder" in err
    err = error_line(cli("identify", "bouncing-ball", "--data", "lengths.npz", *fit, cwd=tmp_path))
    assert "y has shape (90,) but t has 101 times" in err
    # no dt in the file: the spacing of t (0.01 s), not the model's default step (1e-3 s)
    ok = cli("identify", "bouncing-ball", "--data", "nodt.npz", *fit, "--check", cwd=tmp_path, expect=0)
    assert "dt = 0.01 s from the spacing of t" in ok.stdout


def test_mc_option_conflicts_and_bad_counts(tmp_path):
    err = error_line(cli("mc", "bouncing-ball", "--bootstrap", "0", cwd=tmp_path))
    assert "argument --bootstrap: 0 must be an integer ≥ 1" in err
    err = error_line(
        cli(
            "mc",
            "bouncing-ball",
            "--set",
            "restitution=0.7",
            "--param",
            "restitution=uniform(0.6,0.9)",
            "--out",
            "o",
            cwd=tmp_path,
        )
    )
    assert "restitution: given both by --set (fixed) and --param (uncertain)" in err


def test_plan_says_the_saltelli_count_and_warns_about_a_large_step_and_float32(tmp_path):
    ok = cli(
        "mc",
        "bouncing-ball",
        "--n",
        "16",
        "--only",
        "--param",
        "restitution=uniform(0.6,0.95)",
        "--param",
        "height=uniform(0.5,1.5)",
        "--param",
        "mass=uniform(1,2)",
        "--param",
        "radius=uniform(0,0.1)",
        "--check",
        "--out",
        "o",
        cwd=tmp_path,
        expect=0,
    )
    assert "18 simulations (Saltelli design for Sobol indices: 3 base rows × (d + 2 = 6), asked --n 16)" in ok.stdout
    ok = cli("simulate", "bouncing-ball", "--dt", "10", "--check", "--out", "o", cwd=tmp_path, expect=0)
    assert "warning: dt = 10 s is large for bouncing-ball" in ok.stderr
    ok = cli(
        "mc",
        "four-bar",
        "--dtype",
        "float32",
        "--dt",
        "1e-5",
        "--t-final",
        "0.1",
        "--n",
        "64",
        "--check",
        "--out",
        "o",
        cwd=tmp_path,
        expect=0,
    )
    assert "warning: float32 on four-bar at dt = 1e-05 s" in ok.stderr


def test_help_lists_models_and_every_option_has_help(tmp_path):
    out = cli("mc", "--help", cwd=tmp_path, expect=0).stdout
    assert "four-bar" in out and "bouncing-ball" in out and "jaxcontact params MODEL" in " ".join(out.split())
    assert cli("--version", cwd=tmp_path, expect=0).stdout.startswith("jaxcontact ")
    models = cli("models", cwd=tmp_path, expect=0).stdout
    assert "slider-crank-clearance" in models and "default `mc` study: yes" in models
    params = cli("params", "bouncing-ball", cwd=tmp_path, expect=0).stdout
    assert "restitution  0.9      1     restitution in [0, 1]  [0, 1]" in params
    assert "mass         1        kg    mass > 0" in params

    import argparse

    from jaxcontact import cli as cli_module

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    for name in cli_module.COMMANDS:
        mod = __import__(f"jaxcontact.commands.{name}", fromlist=["x"])
        p = sub.add_parser(mod.NAME)
        mod.add_arguments(p)
        missing = [a.dest for a in p._actions if a.help is None]
        assert not missing, f"{mod.NAME}: options without help: {missing}"


def test_params_of_an_unknown_model_is_refused(capsys):
    from jaxcontact import cli as cli_module

    assert cli_module.main(["params", "no-such-model"]) == 2
    assert "unknown model 'no-such-model'" in capsys.readouterr().err


def _readme_commands():
    """The README's indented command lines, a line ending in a backslash joined to the next as the shell does."""
    text = open(os.path.join(ROOT, "README.md")).read().replace("\\\n", "")
    return [ln.strip() for ln in text.splitlines() if ln.startswith("    ") and "jaxcontact " in ln]


def test_readme_command_lines_are_shell_safe():
    lines = _readme_commands()
    assert len(lines) >= 8
    for line in lines:
        proc = subprocess.run(["bash", "-n", "-c", line], capture_output=True, text=True)
        assert proc.returncode == 0, (line, proc.stderr)
        words = shlex.split(line, comments=True)
        assert not [w for w in words if w.startswith("--param") and "(" not in line.split("--param", 1)[1]]
