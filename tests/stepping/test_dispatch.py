"""Dispatch by tables and the path a scheme reports: contact solvers by name, a scheme's plan for a system."""

import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.lcp.pgs import pgs
from jaxcontact.models import get_model
from jaxcontact.stepping import MoreauJean, MoreauJeanSiconos, Penalty, Projection
from jaxcontact.stepping.contact_solve import FRICTIONAL, FRICTIONLESS, SOLVERS, solve_contacts

D = jnp.array([[2.0, 0.5], [0.5, 1.0]])
C = jnp.array([-1.0, 0.5])
KW = dict(iterations=20, omega=1.0, tol=1e-12)


def test_the_tables_name_the_solvers():
    assert SOLVERS == ("nsgs", "pgs", "lemke") and set(FRICTIONAL) == {"nsgs", "lemke"}
    assert FRICTIONLESS["nsgs"] is FRICTIONLESS["pgs"]  # without friction NSGS is PGS


def test_a_table_entry_is_the_solver_it_names():
    active = jnp.array([True, True])
    sol = solve_contacts(D, C, jnp.zeros(2), active, jnp.zeros(2), solver="pgs", friction=False, **KW)
    ref = pgs(D, C, iterations=20, omega=1.0, z0=jnp.zeros(2), tol=1e-12)
    np.testing.assert_array_equal(sol.P_N, ref.z)
    lemke = solve_contacts(D, C, jnp.zeros(2), active, jnp.zeros(2), solver="lemke", friction=False, **KW)
    np.testing.assert_allclose(lemke.P_N, ref.z, atol=1e-10)


@pytest.mark.parametrize(
    "solver, friction, message",
    [
        ("pgs", True, "solver 'pgs' cannot solve a frictional problem; use one of \\('nsgs', 'lemke'\\)"),
        (
            "newton",
            False,
            "solver 'newton' cannot solve a frictionless problem; use one of \\('nsgs', 'pgs', 'lemke'\\)",
        ),
    ],
)
def test_an_unknown_solver_is_refused_by_name(solver, friction, message):
    n = 4 if friction else 2
    with pytest.raises(ValueError, match=message):
        solve_contacts(
            jnp.eye(n),
            jnp.ones(n),
            jnp.zeros(2),
            jnp.ones(2, bool),
            jnp.zeros(n),
            solver=solver,
            friction=friction,
            **KW,
        )


def test_a_scheme_reports_the_path_it_takes():
    four_bar = get_model("four-bar").system  # diagonal M, declared constraint pattern, a wall with friction
    plan = MoreauJean(projection=Projection()).plan(four_bar)
    assert plan["scheme"] == "moreau-jean" and plan["projection"] == repr(Projection())
    assert plan["contacts"] == "nsgs on the planar friction problem, unroll gradients"
    assert (
        plan["mass"].startswith("diagonal M, Schur complement on the declared")
        and MoreauJean().mass_path(four_bar) == "structured"
    )
    assert MoreauJeanSiconos().plan(four_bar)["mass"] == "Siconos' iteration matrix by LU"
    assert plan["impacts"] == "on the step grid"
    assert MoreauJean(impact_location="interpolated").plan(four_bar)["impacts"] == "at the gap crossing"
    sphere = get_model("sphere-on-plane").system  # spatial friction: Coulomb cones, the contact's rows declared
    assert (
        MoreauJean(solver="newton").plan(sphere)["contacts"]
        == "newton on Coulomb cones (dense LU) with W by its declared rows, unroll gradients"
    )
    assert MoreauJean().plan(sphere)["contacts"].startswith("nsgs on Coulomb cones")
    # A box on its eight vertices: 6 velocities for 24 cone unknowns, so the solve takes D by its factors instead.
    box = MoreauJean().plan(get_model("box-toss").system)["contacts"]
    assert "with W by its factors" in box and "declared rows" not in box
    assert Penalty().plan(get_model("slider-bar").system)["integrator"] == "rk4 (fixed step)"
    with pytest.raises(ValueError, match="solver = 'pgs' cannot solve spatial Coulomb friction"):
        MoreauJean(solver="pgs").plan(sphere)  # the plan asks the same rule as the step
