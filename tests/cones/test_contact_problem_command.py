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
    assert main(["contact-problem", f, "--solver", "nsgs", "--iterations", "1", "--tol", "1e-14", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "Rover4396" in out and "False" in out


def _error_line(capsys, argv):
    """Run the command on bad input: exit status 2 and exactly one line on stderr, returned."""
    assert main(["contact-problem", *argv]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    return line


def test_errors_are_named(tmp_path, capsys):
    assert "no such problem file" in _error_line(capsys, [str(tmp_path / "missing.dat")])
    assert "--sparse applies to nsgs and jacobi" in _error_line(
        capsys, [str(bundled_dir() / "Rover4396.dat"), "--sparse"]
    )
    assert "give problem files" in _error_line(capsys, [])


def test_bad_files_exit_2_naming_the_file(tmp_path, capsys):
    not_hdf5 = tmp_path / "garbage.hdf5"
    not_hdf5.write_text("not an HDF5 file")
    line = _error_line(capsys, [str(not_hdf5)])
    assert str(not_hdf5) in line and "not a readable FCLIB HDF5 local problem" in line
    h5py = pytest.importorskip("h5py")
    incomplete = tmp_path / "incomplete.hdf5"
    with h5py.File(incomplete, "w") as f:
        f.create_group("fclib_local")  # no spacedim, W, vectors
    assert str(incomplete) in _error_line(capsys, [str(incomplete)])
    binary = tmp_path / "binary.dat"
    binary.write_bytes(bytes(range(128, 256)))
    line = _error_line(capsys, [str(binary)])
    assert str(binary) in line and "not a text file" in line
    truncated = tmp_path / "truncated.dat"
    truncated.write_text("3 1 0 3 3")
    assert str(truncated) in _error_line(capsys, [str(truncated)])


def test_sparse_lu_newton_takes_block_rows(capsys):
    f = str(bundled_dir() / "OneObject-i100000-316.hdf5.dat")
    assert main(["contact-problem", f, "--solver", "newton-sparse-lu", "--json", "--repeat", "1"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["storage"] == "blocks" and row["converged"] and row["residual"] <= 1e-8
