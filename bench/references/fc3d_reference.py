"""Write Siconos 4.4's reference solutions of the bundled 3D frictional contact problems.

    python bench/references/fc3d_reference.py            # → tests/data/fc3d_siconos_reference.npz

Runs ``bench/peers/siconos/siconos_fc3d.py`` under Debian's ``/usr/bin/python3`` (which has
python3-siconos) on every bundled problem: the Siconos text files directly
(Siconos reads them itself), the FCLIB HDF5 files after reading them here
with :func:`jaxcontact.cones.problem.read_fclib` and handing over dense
arrays. The tests read the stored arrays, so CI needs no Siconos.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from jaxcontact.cones.problem import bundled_files, read_fclib

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "data" / "fc3d_siconos_reference.npz"


def main() -> int:
    files = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in bundled_files():
            if f.suffix == ".hdf5":
                p = read_fclib(f)
                npz = Path(tmp) / f"{p.name}.npz"
                np.savez(npz, W=p.W, q=p.q, mu=p.mu)
                files.append(str(npz))
            else:
                files.append(str(f))
        cmd = [
            "/usr/bin/python3",
            str(ROOT / "bench" / "peers" / "siconos" / "siconos_fc3d.py"),
            "--out",
            str(OUT),
            *files,
        ]
        return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
