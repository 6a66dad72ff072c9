"""``jaxcontact contact-problem``: one line (or JSON record) per file, honest flags, named errors."""

import json

import pytest

from jaxcontact.cli import main
from jaxcontact.cones import bundled_dir


def test_json_report(capsys):
    f = str(bundled_dir() / "Rover4396.dat")
    assert main(["contact-problem", f, "--json", "--repeat", "1"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["contacts"] == 2 and row["solver"] == "newton" and row["converged"]
    assert row["residual"] <= 1e-8 and row["iterations"] >= 1 and row["time_s"] > 0


def test_table_and_unconverged(capsys):
    f = str(bundled_dir() / "Rover4396.dat")
    assert main(["contact-problem", f, "--solver", "nsgs", "--iterations", "1", "--tol", "1e-14",
                 "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "Rover4396" in out and "False" in out


def test_errors_are_named(tmp_path):
    with pytest.raises(SystemExit, match="no such problem file"):
        main(["contact-problem", str(tmp_path / "missing.dat")])
    with pytest.raises(SystemExit, match="--sparse applies to nsgs and jacobi"):
        main(["contact-problem", str(bundled_dir() / "Rover4396.dat"), "--sparse"])
    with pytest.raises(SystemExit, match="give problem files"):
        main(["contact-problem"])


def test_sparse_lu_newton_takes_block_rows(capsys):
    f = str(bundled_dir() / "OneObject-i100000-316.hdf5.dat")
    assert main(["contact-problem", f, "--solver", "newton-sparse-lu", "--json", "--repeat", "1"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["storage"] == "blocks" and row["converged"] and row["residual"] <= 1e-8
