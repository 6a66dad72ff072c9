"""Polynomial chaos: bases, truncation, sparse regression with leave-one-out, gradients, Sobol indices."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from jaxcontact.studies.distributions import Fixed, LogNormal, Normal, ParamSpace, TruncNormal, Uniform
from jaxcontact.studies.pce import (
    PCE,
    PCEWarning,
    design_matrix,
    fit_pce,
    germ_of,
    germs_of,
    multi_indices,
    orthonormal_1d,
)
from jaxcontact.studies.sampling import unit_points
from jaxcontact.studies.sensitivity import ishigami, ishigami_gradient, ishigami_indices

ISHIGAMI = ParamSpace.parse([f"x{i}=uniform({-np.pi!r},{np.pi!r})" for i in (1, 2, 3)])


@pytest.mark.parametrize(
    "family, nodes",
    [("legendre", np.polynomial.legendre.leggauss(30)), ("hermite", np.polynomial.hermite_e.hermegauss(30))],
)
def test_orthonormal_under_the_law(family, nodes):
    # Gauss quadrature of the family's own weight, normalised to a probability: ∫ψ_j ψ_k = δ_jk.
    x, w = nodes
    w = w / w.sum()
    P, _ = orthonormal_1d(family, x, 12)
    np.testing.assert_allclose(P.T @ (w[:, None] * P), np.eye(13), atol=1e-12)


@pytest.mark.parametrize("family", ["legendre", "hermite"])
def test_derivatives_match_finite_differences(family):
    x = np.linspace(-0.9, 0.9, 7)
    h = 1e-6
    _, dP = orthonormal_1d(family, x, 9)
    fd = (orthonormal_1d(family, x + h, 9)[0] - orthonormal_1d(family, x - h, 9)[0]) / (2 * h)
    np.testing.assert_allclose(dP, fd, rtol=1e-6, atol=1e-6)


def test_multivariate_gradient_rows_match_finite_differences():
    germs = germs_of(ParamSpace.parse(["a=uniform(0,1)", "b=normal(1,2)", "c=lognormal(0,0.3)"]))
    alphas = multi_indices(3, 4)
    xi = np.array([[0.3, -0.7, 0.2], [-0.5, 1.1, -1.4]])
    _, dPsi = design_matrix(germs, alphas, xi, gradient=True)
    h = 1e-6
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        fd = (design_matrix(germs, alphas, xi + e) - design_matrix(germs, alphas, xi - e)) / (2 * h)
        np.testing.assert_allclose(dPsi[:, j], fd, rtol=1e-6, atol=1e-7)


def test_truncation_sets():
    assert len(multi_indices(3, 5)) == 56  # C(3 + 5, 3): total degree
    A = multi_indices(3, 6, q=0.5)
    assert np.all(np.sum(np.sqrt(A), axis=1) ** 2 <= 6 + 1e-9)
    assert len(A) < len(multi_indices(3, 6)) and [0, 0, 6] in A.tolist() and [3, 3, 0] not in A.tolist()
    assert A[0].tolist() == [0, 0, 0] and np.all(np.diff(A.sum(axis=1)) >= 0)


@pytest.mark.parametrize(
    "dist, family",
    [
        (Uniform(2.0, 5.0), "legendre"),
        (Normal(1.0, 0.5), "hermite"),
        (LogNormal(-1.0, 0.4), "hermite"),
        (TruncNormal(0.8, 0.1, 0.6, 0.95), "legendre"),
    ],
)
def test_germ_maps_the_law_to_its_standard_variable(dist, family):
    g = germ_of("p", dist)
    assert g.family == family
    u = np.linspace(0.01, 0.99, 41)
    xi = (2 * u - 1) if family == "legendre" else stats.norm.ppf(u)
    # The map sends the standard variable's quantiles to the law's quantiles: an isoprobabilistic transform.
    np.testing.assert_allclose(g.to_physical(xi), dist.ppf(u), rtol=1e-10)
    np.testing.assert_allclose(g.to_standard(dist.ppf(u)), xi, rtol=1e-8, atol=1e-10)
    h = 1e-6
    np.testing.assert_allclose(
        g.dx_dxi(xi[5:-5]), (g.to_physical(xi[5:-5] + h) - g.to_physical(xi[5:-5] - h)) / (2 * h), rtol=1e-6
    )


def test_fixed_and_unknown_laws_are_refused_by_name():
    with pytest.raises(ValueError, match="wall=fixed.*takes no polynomial chaos dimension"):
        germ_of("wall", Fixed(0.1))
    with pytest.raises(ValueError, match="mass: no polynomial chaos family.*supported: uniform"):
        germ_of("mass", stats.gamma(2.0))


def _ishigami_fit(n, gradient, seed=0):
    germs = germs_of(ISHIGAMI)
    values = ISHIGAMI.ppf(unit_points(n, 3, "lhs", seed))
    x = np.stack([values[k] for k in ISHIGAMI.uncertain], axis=1)
    xi = np.stack([g.to_standard(x[:, j]) for j, g in enumerate(germs)], axis=1)
    dy = None
    if gradient:  # the chain rule to the standard variable: ∂y/∂ξ = ∂y/∂x · dx/dξ
        dy = ishigami_gradient(x) * np.stack([g.dx_dxi(xi[:, j]) for j, g in enumerate(germs)], axis=1)
    return fit_pce(germs, xi, ishigami(x), dy)


# Sample counts from bench/accuracy/pce_ishigami.py (10 LHS designs each): every design is within 1e-3 from
# 60 samples with values alone and from 30 with values and gradients.
@pytest.mark.parametrize("n, gradient", [(60, False), (30, True)])
def test_ishigami_sobol_indices_to_1e3(n, gradient):
    S1, ST = ishigami_indices()
    np.testing.assert_allclose(S1, [0.3139, 0.4424, 0.0], atol=1e-4)
    np.testing.assert_allclose(ST, [0.5576, 0.4424, 0.2437], atol=1e-4)
    for seed in range(3):
        with warnings.catch_warnings():
            # At 60 samples the 10-fold cross-validation (each fold fitted on 54) is pessimistic: the
            # fit may call itself unreliable although its indices are right (bench/RESULTS.md).
            warnings.simplefilter("ignore", PCEWarning)
            fit = _ishigami_fit(n, gradient, seed)
        s1, st = fit.sobol()
        np.testing.assert_allclose(s1, S1, atol=1e-3)
        np.testing.assert_allclose(st, ST, atol=1e-3)
        assert fit.gradient is gradient and fit.n_samples == n
        # Moments from the coefficients: mean a/2, variance a²/8 + bπ⁴/5 + b²π⁸/18 + 1/2.
        a, b = 7.0, 0.1
        V = a**2 / 8 + b * np.pi**4 / 5 + b**2 * np.pi**8 / 18 + 0.5
        assert fit.mean == pytest.approx(a / 2, abs=1e-3 * np.sqrt(V))
        assert fit.variance == pytest.approx(V, rel=5e-3)  # the issue asks 1e-3 of the indices; moments ride along


def test_ishigami_plain_fit_at_the_gradient_count_is_worse_and_says_so():
    # 30 samples without gradients: the indices miss 1e-3 on some design, and every such fit
    # reports a cross-validated Q² under the threshold rather than passing as reliable.
    S1, ST = ishigami_indices()
    missed = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PCEWarning)
        for seed in range(3):
            fit = _ishigami_fit(30, False, seed)
            s1, st = fit.sobol()
            err = max(np.abs(s1 - S1).max(), np.abs(st - ST).max())
            missed += err > 1e-3
            if err > 1e-2:
                assert not fit.reliable
    assert missed >= 1


def test_leave_one_out_is_exact_deletion():
    # The block formula (I − H_ii)⁻¹ r_i equals refitting without sample i (here with gradient rows).
    from jaxcontact.studies.pce import omp_loo

    rng = np.random.default_rng(1)
    n, P, block = 15, 8, 3
    A = rng.normal(size=(n * block, P))
    y = rng.normal(size=n * block)
    path = omp_loo(A, y, block, max_terms=6)
    sel = path.order[: path.best]
    e = []
    for i in range(n):
        keep = np.ones(n * block, bool)
        keep[i * block : (i + 1) * block] = False
        c = np.linalg.lstsq(A[keep][:, sel], y[keep], rcond=None)[0]
        e.append(y[i * block] - A[i * block, sel] @ c)
    assert path.loo[path.best - 1] == pytest.approx(np.mean(np.square(e)) / y[::block].var(), rel=1e-10)


def test_a_jump_is_flagged_unreliable():
    # y jumps by 1 where ξ_1 crosses 0.2 (one more impact, say) on top of a small smooth part.
    space = ParamSpace.parse(["e=uniform(0.6,0.95)", "w=uniform(0.04,0.08)"])
    germs = germs_of(space)
    xi = 2 * unit_points(64, 2, "lhs", 0) - 1
    y = (xi[:, 0] > 0.2) + 0.1 * xi[:, 1]
    with pytest.warns(PCEWarning, match="staircase: polynomial chaos cross-validated Q² = .* it may jump"):
        fit = fit_pce(germs, xi, y, name="staircase")
    assert not fit.reliable and fit.q2 < 0.95
    smooth = fit_pce(germs, xi, np.exp(0.5 * xi[:, 0]) + 0.1 * xi[:, 1], name="smooth")
    assert smooth.reliable and smooth.q2 > 0.999


def test_inputs_are_checked():
    germs = germs_of(ISHIGAMI)
    xi = np.zeros((10, 3))
    with pytest.raises(ValueError, match="y: values contain NaN"):
        fit_pce(germs, xi, np.full(10, np.nan), name="y")
    with pytest.raises(ValueError, match="gradients must have shape \\(10, 3\\)"):
        fit_pce(germs, xi, np.zeros(10), np.zeros((10, 2)))
    with pytest.raises(ValueError, match="points have 2 columns but there are 3 inputs"):
        fit_pce(germs, np.zeros((10, 2)), np.zeros(10))


def test_sobol_from_coefficients():
    germs = germs_of(ParamSpace.parse(["a=uniform(0,1)", "b=uniform(0,1)"]))
    alphas = multi_indices(2, 2)  # [0,0], [0,1], [1,0], [0,2], [1,1], [2,0]
    coef = np.array([5.0, 1.0, 2.0, 0.0, 1.0, 0.0])
    fit = PCE(germs, alphas, coef, 0.0, 0.0, 2, 1.0, 10, False)
    S1, ST = fit.sobol()
    np.testing.assert_allclose(S1, [4 / 6, 1 / 6])
    np.testing.assert_allclose(ST, [5 / 6, 2 / 6])
    assert fit.mean == 5.0 and fit.variance == 6.0


def _same_basis_as_chaospy(ref):
    # Least squares on the full total-degree basis, as chaospy.fit_regression does, then our indices.
    space = ISHIGAMI
    germs = germs_of(space)
    x = -np.pi + 2 * np.pi * unit_points(ref["n_samples"], 3, ref["sampler"], ref["seed"])
    xi = np.stack([g.to_standard(x[:, j]) for j, g in enumerate(germs)], axis=1)
    alphas = multi_indices(3, ref["order"])
    coef = np.linalg.lstsq(design_matrix(germs, alphas, xi), ishigami(x), rcond=None)[0]
    return PCE(germs, alphas, coef, 0.0, 0.0, ref["order"], 1.0, len(x), False).sobol()


CHAOSPY_ISHIGAMI = Path(__file__).resolve().parents[1] / "data" / "pce_chaospy_ishigami.json"


def test_chaospy_indices_on_the_same_basis_and_samples():
    # chaospy's numbers stored by bench/references/pce_chaospy.py (its Sens_m/Sens_t take ~30 s; the slow test below
    # recomputes them). Same basis, same samples: the same indices to rounding.
    ref = json.loads(CHAOSPY_ISHIGAMI.read_text())
    S1, ST = _same_basis_as_chaospy(ref)
    np.testing.assert_allclose(S1, ref["S1"], atol=1e-9)
    np.testing.assert_allclose(ST, ref["ST"], atol=1e-9)
    # chaospy's degree-6 least squares is far from the analytic indices (a truncation error of ~0.05);
    # our sparse fit of the same 200 samples is within 1e-3 of them.
    S1a, STa = ishigami_indices()
    assert np.abs(np.array(ref["ST"]) - STa).max() > 0.02
    fit = _ishigami_fit(200, False)
    s1, st = fit.sobol()
    assert max(np.abs(s1 - S1a).max(), np.abs(st - STa).max()) < 1e-3


@pytest.mark.slow
def test_chaospy_live():
    import chaospy

    ref = json.loads(CHAOSPY_ISHIGAMI.read_text())
    x = -np.pi + 2 * np.pi * unit_points(ref["n_samples"], 3, ref["sampler"], ref["seed"])
    joint = chaospy.J(*[chaospy.Uniform(-np.pi, np.pi) for _ in range(3)])
    model = chaospy.fit_regression(chaospy.generate_expansion(ref["order"], joint, normed=True), x.T, ishigami(x))
    S1, ST = _same_basis_as_chaospy(ref)
    np.testing.assert_allclose(chaospy.Sens_m(model, joint), S1, atol=1e-9)
    np.testing.assert_allclose(chaospy.Sens_t(model, joint), ST, atol=1e-9)


def _two_inputs(n):
    """Two uniform inputs' germs and an LHS design of n points in their standard variables."""
    return germs_of(ParamSpace.parse(["e=uniform(0.6,0.95)", "w=uniform(0.04,0.08)"])), 2 * unit_points(
        n, 2, "lhs", 0
    ) - 1


def test_a_staircase_with_a_passing_q2_is_flagged_by_its_coefficient_decay():
    # A count of events, floor(4 (ξ_1 + 1)): 256 samples fit it to Q² > 0.95, but the coefficients
    # of a jump do not decay, so the expansion's last degrees keep a share of the variance.
    from jaxcontact.studies.pce import MAX_TAIL_SHARE

    germs, xi = _two_inputs(256)
    with pytest.warns(
        PCEWarning,
        match=r"count: polynomial chaos coefficients do not decay: the last 3 degrees "
        r"carry .* of the variance \(> 0.001\) although Q² = 0.9",
    ):
        count = fit_pce(germs, xi, np.floor(4 * (xi[:, 0] + 1)), name="count")
    assert count.q2 > 0.95 and count.tail_share > MAX_TAIL_SHARE and not count.reliable
    for y in (np.exp(0.5 * xi[:, 0]) + 0.1 * xi[:, 1], np.sin(2 * xi[:, 0]) * np.cos(xi[:, 1])):
        smooth = fit_pce(germs, xi, y, name="smooth")
        assert smooth.reliable and smooth.tail_share < 1e-12 and smooth.unreliable_because is None
    # an exact low-degree polynomial is not judged by its decay (its top degree may carry everything)
    cubic = fit_pce(germs, xi, xi[:, 0] ** 3 + xi[:, 1], name="cubic")
    assert cubic.reliable


def test_the_printed_line_of_an_unreliable_fit_gives_its_reason():
    from jaxcontact.commands.mc import pce_line

    germs, xi = _two_inputs(256)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PCEWarning)
        fit = fit_pce(germs, xi, np.floor(4 * (xi[:, 0] + 1)))
    entry = {
        "q2": fit.q2,
        "degree": fit.degree,
        "n_terms": fit.n_terms,
        "reliable": fit.reliable,
        "unreliable_because": fit.unreliable_because,
    }
    assert "UNRELIABLE (coefficients do not decay: the last 3 degrees carry" in pce_line("impacts", entry)
