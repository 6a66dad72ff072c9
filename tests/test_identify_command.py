"""``jaxcontact identify``: fit the ball's restitution to the trajectory.npz that ``simulate`` writes."""

import argparse
import json

import pytest


def _parser(cmd):
    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    return parser


def test_identify_reads_simulate_output_and_writes_fit_json_and_plots(tmp_path, capsys):
    from jaxcontact.commands import identify, simulate

    data = tmp_path / "ball"
    assert (
        simulate.run(
            _parser(simulate).parse_args(
                [
                    "bouncing-ball",
                    "--set",
                    "restitution=0.6",
                    "--dt",
                    "5e-3",
                    "--t-final",
                    "1.0",
                    "--out",
                    str(data),
                    "--no-plots",
                ]
            )
        )
        == 0
    )
    out = tmp_path / "fit"
    p = _parser(identify)
    rc = identify.run(
        p.parse_args(
            [
                "bouncing-ball",
                "--data",
                str(data / "trajectory.npz"),
                "--fit",
                "restitution=0.42",
                "--steps",
                "15",
                "--every",
                "5",
                "--starts",
                "4",
                "--impact-location",
                "step",
                "--out",
                str(out),
            ]
        )
    )
    assert rc == 0
    res = json.loads((out / "fit.json").read_text())
    assert res["estimates"]["restitution"] == pytest.approx(0.6, rel=1e-4)
    assert res["iterations"] == 15 and len(res["loss_history"]) == 15 and res["wall_time_s"] > 0
    lo, hi = res["interval95"]["restitution"]
    assert lo <= res["estimates"]["restitution"] <= hi
    assert (out / "convergence.png").stat().st_size > 10_000 and (out / "fit_vs_data.png").stat().st_size > 10_000
    out_text = capsys.readouterr().out
    assert "iter" in out_text
    # noise-free data are fitted exactly (zero residual): no interval is claimed, and fit.json says why
    assert "restitution = 0.6 (exact fit, noise-free data: no interval)" in out_text
    assert res["exact_fit"] == {"restitution": True} and res["dt"] == 5e-3
    rc = identify.run(p.parse_args(["bouncing-ball", "--data", str(data / "trajectory.npz"), "--fit", "stiffness"]))
    assert rc == 2 and "stiffness" in capsys.readouterr().err
    rc = identify.run(
        p.parse_args(
            [
                "bouncing-ball",
                "--data",
                str(data / "trajectory.npz"),
                "--fit",
                "restitution",
                "--scheme",
                "penalty",
                "--impact-location",
                "interpolated",
            ]
        )
    )
    assert rc == 2 and "--impact-location is an option of the moreau-jean scheme" in capsys.readouterr().err


@pytest.mark.slow  # a fit through located impacts and its loss scan: ~30 s of CPU
def test_identify_locates_impacts_by_default(tmp_path):
    import numpy as np

    from jaxcontact.commands import identify
    from tests.stepping.test_impact_location import ball_exact

    t = np.arange(376) * 4e-3  # the analytic ball (ε = 0.73, r = 0.1 m, from 1.3 m): impacts between the steps
    np.savez(tmp_path / "ball.npz", t=t, y=ball_exact(t)[:, None])
    rc = identify.run(
        _parser(identify).parse_args(
            [
                "bouncing-ball",
                "--set",
                "radius=0.1",
                "--set",
                "height=1.3",
                "--data",
                str(tmp_path / "ball.npz"),
                "--observe",
                "y",
                "--fit",
                "restitution=0.6",
                "--steps",
                "20",
                "--no-plots",
                "--out",
                str(tmp_path / "f"),
            ]
        )
    )
    assert rc == 0
    res = json.loads((tmp_path / "f" / "fit.json").read_text())
    assert res["estimates"]["restitution"] == pytest.approx(0.73, abs=1e-6)


@pytest.mark.slow  # ~60 s: reverse mode through the event-driven scheme
def test_identify_static_and_dynamic_friction_with_the_event_driven_scheme(tmp_path):
    from jaxcontact.commands import identify, simulate

    data = tmp_path / "block"
    assert (
        simulate.run(
            _parser(simulate).parse_args(["pushed-block", "--scheme", "event-driven", "--out", str(data), "--no-plots"])
        )
        == 0
    )
    out = tmp_path / "fit"
    rc = identify.run(
        _parser(identify).parse_args(
            [
                "pushed-block",
                "--data",
                str(data / "trajectory.npz"),
                "--scheme",
                "event-driven",
                "--observe",
                "x",
                "--fit",
                "static_friction=0.28",
                "--fit",
                "friction=0.21",
                "--bounds",
                "static_friction=0.01,0.75",
                "--bounds",
                "friction=0.01,0.75",
                "--grid-start",
                "40",
                "--steps",
                "20",
                "--no-plots",
                "--out",
                str(out),
            ]
        )
    )
    assert rc == 0
    est = json.loads((out / "fit.json").read_text())["estimates"]
    assert est == pytest.approx({"static_friction": 0.4, "friction": 0.3}, rel=1e-3)


def test_identify_default_scheme_locates_impacts_and_projects_resting_contacts_where_it_can():
    from jaxcontact.commands.identify import identify_default
    from jaxcontact.models import get_model
    from jaxcontact.stepping import MoreauJean
    from jaxcontact.stepping.projection import Projection

    ball = get_model("bouncing-ball")
    assert identify_default(MoreauJean(), ball) == MoreauJean(impact_location="interpolated", projection=Projection())
    assert identify_default(MoreauJean(), ball, projection=False) == MoreauJean(impact_location="interpolated")
    siconos = MoreauJean(force_rule="siconos")  # cannot locate impacts: keeps its own law
    assert identify_default(siconos, ball) == siconos
    box = get_model("box-toss")  # spatial contacts: located through q̇ = T(q) u, projected through the position update
    assert identify_default(MoreauJean(), box) == MoreauJean(impact_location="interpolated", projection=Projection())
    top = get_model("tippe-top")  # declares that its resting contact must not be projected
    assert identify_default(MoreauJean(), top) == MoreauJean(
        impact_location="interpolated", projection=Projection(resting_contacts=False)
    )
