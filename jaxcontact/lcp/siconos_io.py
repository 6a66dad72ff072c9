"""Reader for Siconos numerics' LCP text files (the bundled test collection).

Dense layout (storage type 0), whitespace separated::

    n
    0            # storage type: 0 dense (1 is sparse-block, not read here)
    rows
    cols
    rows cols
    M            # rows × cols values, column by column (each text line is a column)
    q            # n values
    free text    # optional comment, ignored
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import NamedTuple

import numpy as np


class LCPProblem(NamedTuple):
    name: str
    M: np.ndarray
    q: np.ndarray


def read_lcp(path) -> LCPProblem:
    """Parse one dense Siconos LCP file; raise ValueError naming the file on a bad layout."""
    path = Path(path)
    tokens = path.read_text().split()
    name = path.stem.removeprefix("lcp_")

    def number(i):
        try:
            return float(tokens[i])
        except (IndexError, ValueError):
            raise ValueError(
                f"{path}: expected a number at token {i}, got {tokens[i] if i < len(tokens) else 'end of file'!r}"
            ) from None

    n, storage, rows, cols = (int(number(i)) for i in range(4))
    if storage != 0:
        raise ValueError(f"{path}: storage type {storage} is not dense (0); only dense files are read")
    if (rows, cols) != (n, n) or (int(number(4)), int(number(5))) != (n, n):
        raise ValueError(f"{path}: M must be {n}×{n}; header says {rows}×{cols}")
    start = 6
    # Siconos writes and reads dense matrices column-major (checked with its own
    # linearComplementarity_newFromFilename): for the non-symmetric problems
    # (Murty, CPS, Pang, …) a row-major read would solve the transposed LCP.
    M = np.array([number(start + i) for i in range(n * n)]).reshape(n, n).T
    q = np.array([number(start + n * n + i) for i in range(n)])
    return LCPProblem(name, M, q)


def collection_dir() -> Path:
    """The bundled copy of Siconos' LCP test collection."""
    return Path(str(resources.files("jaxcontact") / "data" / "lcp_siconos"))


def load_collection(directory=None) -> list[LCPProblem]:
    """Every dense problem of the collection, sorted by name (block files skipped)."""
    d = Path(directory) if directory is not None else collection_dir()
    files = sorted(f for f in d.glob("lcp_*.dat") if not f.stem.endswith("_block"))
    if not files:
        raise FileNotFoundError(f"no lcp_*.dat files in {d}")
    return [read_lcp(f) for f in files]
