"""Reliability side by side with OpenTURNS (an optional test dependency: skipped where it is not installed).

OpenTURNS's FORM (SQP on the same independent standard normal transform) must give the same design point, and
its subset simulation an estimate consistent with ours within the two methods' standard errors.
"""

import math

import numpy as np
import pytest

from jaxcontact.studies.distributions import LogNormal, Normal, TruncNormal, Uniform
from jaxcontact.studies.reliability import form, subset_simulation

from .test_reliability import OSC, _four_branch, _oscillator

ot = pytest.importorskip("openturns")


def _ot_form(function, distribution):
    event = ot.ThresholdEvent(ot.CompositeRandomVector(function, ot.RandomVector(distribution)), ot.LessOrEqual(), 0.0)
    solver = ot.SQP()
    for set_tol in ("Constraint", "Absolute", "Relative", "Residual"):
        getattr(solver, f"setMaximum{set_tol}Error")(1e-12)
    algo = ot.FORM(solver, event, distribution.getMean())
    algo.run()
    return algo.getResult()


def test_form_on_the_oscillator_matches_openturns():
    function = ot.SymbolicFunction(
        ["m", "c1", "c2", "r", "F1", "t1"], ["3*r - abs(2*F1/(m*((c1+c2)/m))*sin(sqrt((c1+c2)/m)*t1/2))"]
    )
    distribution = ot.JointDistribution([ot.Normal(d.mu, d.sigma) for d in OSC])
    theirs = _ot_form(function, distribution)
    ours = form(_oscillator, OSC)
    assert ours.extras["beta"] == pytest.approx(theirs.getHasoferReliabilityIndex(), abs=1e-9)
    np.testing.assert_allclose(ours.extras["importance_factors"], list(theirs.getImportanceFactors()), atol=1e-6)


def test_form_with_bounded_and_skewed_marginals_matches_openturns():
    # Uniform, truncated normal and lognormal inputs: the marginal maps, not g, make this limit state curved in u.
    ours_m = [Uniform(0.6, 0.95), TruncNormal(0.8, 0.1, 0.6, 0.9), LogNormal(-1.0, 0.5)]
    theirs_m = [ot.Uniform(0.6, 0.95), ot.TruncatedNormal(0.8, 0.1, 0.6, 0.9), ot.LogNormal(-1.0, 0.5)]
    theirs = _ot_form(ot.SymbolicFunction(["a", "b", "c"], ["2.7 - a - b - c"]), ot.JointDistribution(theirs_m))
    ours = form(lambda x: 2.7 - x[0] - x[1] - x[2], ours_m)
    assert ours.extras["converged"]
    assert ours.extras["beta"] == pytest.approx(theirs.getHasoferReliabilityIndex(), abs=1e-7)
    np.testing.assert_allclose(ours.extras["x_star"], list(theirs.getPhysicalSpaceDesignPoint()), atol=1e-6)


def test_subset_simulation_on_the_four_branch_system_agrees_with_openturns():
    k = 7.0
    function = ot.SymbolicFunction(
        ["u1", "u2"],
        [
            "min(min(3+(u1-u2)^2/10-(u1+u2)/sqrt(2), 3+(u1-u2)^2/10+(u1+u2)/sqrt(2)),"
            f" min((u1-u2)+{k}/sqrt(2), (u2-u1)+{k}/sqrt(2)))"
        ],
    )
    event = ot.ThresholdEvent(ot.CompositeRandomVector(function, ot.RandomVector(ot.Normal(2))), ot.LessOrEqual(), 0.0)
    ot.RandomGenerator.SetSeed(11)
    algo = ot.SubsetSampling(event)
    algo.setMaximumOuterSampling(4000)
    algo.setBlockSize(1)
    algo.setConditionalProbability(0.1)
    algo.run()
    theirs = algo.getResult()
    p_ot = theirs.getProbabilityEstimate()
    se_ot = p_ot * theirs.getCoefficientOfVariation()
    ours = subset_simulation(_four_branch, [Normal(0.0, 1.0)] * 2, n_per_level=4000, seed=11)
    assert abs(ours.probability - p_ot) <= 3 * math.hypot(ours.standard_error, se_ot)
    # Both c.o.v. estimates come from Au & Beck's formula: they should be of one size at one N.
    assert 0.5 < ours.cov / theirs.getCoefficientOfVariation() < 2.0
