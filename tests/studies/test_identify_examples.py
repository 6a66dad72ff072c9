"""examples/identify_contact.py: each case recovers its parameters within 1 % from guesses 30 % off."""

import importlib.util
import pathlib

import numpy as np
import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "identify_contact.py"
_SPEC = importlib.util.spec_from_file_location("example_identify_contact", _PATH)
EXAMPLE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(EXAMPLE)


@pytest.mark.slow  # 15–100 s each on the shared 2-core machine (the four-bar's reverse mode compiles slowly)
@pytest.mark.parametrize("case, within", [("ball", 10), ("block", 10), ("four-bar", 60)])
def test_example_case_recovers_truth_from_30_percent_off(tmp_path, case, within):
    res, truth = EXAMPLE.run_case(case, str(tmp_path), progress=None)
    for n, v in truth.items():
        assert abs(res.estimates[n] - v) < 0.01 * abs(v), (n, res.estimates[n], v)
    assert EXAMPLE.iterations_to(res, truth) <= within
    assert np.all(np.isfinite(res.loss_history)) and np.all(np.isfinite(res.param_history))
    for png in ("convergence", "fit_vs_data"):
        assert (tmp_path / f"{case}_{png}.png").stat().st_size > 10_000
