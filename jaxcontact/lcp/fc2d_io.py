"""Reader for Siconos numerics' planar frictional-contact files (``FrictionContactProblem``, dim 2).

Layout, whitespace separated::

    2              # dimension of the contact space
    nc             # number of contacts
    storage        # 0 dense, 2 a CSparse text dump (compressed columns)
    rows cols      # of the Delassus matrix, 2 nc × 2 nc
    dense:  rows cols, then the matrix, one *column* per text line
    sparse: a format tag, the CSparse banner, ``rows-by-cols, nzmax: … nnz: N, …``,
            then per column ``col j : locations a to b`` and ``i : value`` lines
    q              # 2 nc values
    mu             # nc values

Dense values are in column-major order: Siconos reads them straight into
its column-major storage, so each text line is a column of W (checked
against Siconos 4.5's own reader: for the slider–crank file its W(0, 1) is
the first entry of the second line). The slider–crank matrices are slightly
non-symmetric, so the orientation matters (a relative 3e-7 in r); read this
way, our solution matches Siconos' enumerative solver to 1e-13.

Siconos orders unknowns per contact, (N₁, T₁, N₂, T₂, …). jaxcontact's planar
friction solvers (:mod:`jaxcontact.lcp.friction2d`) use the block order of
the planar friction LCP, [N₁ … N_nc, T₁ … T_nc]; :func:`read_fc2d` permutes to it, so a
problem read here goes straight into ``nsgs`` / ``friction_lcp``.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import numpy as np


class FC2DProblem(NamedTuple):
    """A planar frictional contact problem in block order ([normal; tangent])."""

    name: str
    W: np.ndarray  # (2 nc, 2 nc) Delassus matrix
    q: np.ndarray  # (2 nc,) free local velocity
    mu: np.ndarray  # (nc,) friction coefficients


def block_permutation(nc: int) -> np.ndarray:
    """Indices p with ``x_blocks = x_interleaved[p]`` (Siconos' per-contact order → [N; T])."""
    return np.concatenate([np.arange(0, 2 * nc, 2), np.arange(1, 2 * nc, 2)])


_COL = re.compile(r"^\s*col\s+(\d+)\s*:\s*locations\s+(-?\d+)\s+to\s+(-?\d+)\s*$")
_ENTRY = re.compile(r"^\s*(\d+)\s*:\s*(\S+)\s*$")
_SIZE = re.compile(r"(\d+)-by-(\d+),\s*nzmax:\s*(\d+)\s+nnz:\s*(\d+)")


def _read_csparse(path, lines, start, n):
    """Parse a CSparse compressed-column dump from ``lines[start:]``; return (W, next line index)."""
    i = start
    while i < len(lines) and not _SIZE.search(lines[i]):
        if "triplet" in lines[i]:
            raise ValueError(f"{path}: CSparse triplet dumps are not supported (compressed columns only)")
        i += 1
    if i == len(lines):
        raise ValueError(f"{path}: no CSparse 'rows-by-cols, nzmax: … nnz: …' line found")
    rows, cols, _, nnz = (int(g) for g in _SIZE.search(lines[i]).groups())
    if (rows, cols) != (n, n):
        raise ValueError(f"{path}: CSparse matrix is {rows}×{cols}, expected {n}×{n}")
    W = np.zeros((n, n))
    col, count = None, 0
    i += 1
    while i < len(lines):
        m = _COL.match(lines[i])
        if m:
            col = int(m.group(1))
        else:
            e = _ENTRY.match(lines[i])
            if not e:
                break
            if col is None:
                raise ValueError(f"{path}: matrix entry before any 'col' line at line {i + 1}")
            W[int(e.group(1)), col] = float(e.group(2))
            count += 1
        i += 1
    if count != nnz:
        raise ValueError(f"{path}: read {count} nonzeros, header says nnz = {nnz} (truncated dump?)")
    return W, i


def read_fc2d(path) -> FC2DProblem:
    """Parse one Siconos fc2d file (dense or CSparse); raise ValueError naming the file on a bad layout."""
    path = Path(path)
    lines = path.read_text().splitlines()
    head = " ".join(lines[:8]).split()

    def integer(k):
        try:
            return int(head[k])
        except (IndexError, ValueError):
            raise ValueError(f"{path}: expected an integer header field at token {k}") from None

    dim, nc, storage, rows, cols = (integer(k) for k in range(5))
    n = 2 * nc
    if dim != 2:
        raise ValueError(f"{path}: contact dimension must be 2 for a planar problem; got {dim}")
    if (rows, cols) != (n, n):
        raise ValueError(f"{path}: W must be {n}×{n} for nc = {nc}; header says {rows}×{cols}")
    if storage == 0:
        tokens = path.read_text().split()
        if (int(tokens[5]), int(tokens[6])) != (n, n):
            raise ValueError(f"{path}: dense block header must be '{n} {n}'")
        values = np.array(tokens[7 : 7 + n * n + n + nc], dtype=float)
        if values.size != n * n + n + nc:
            raise ValueError(f"{path}: expected {n * n + n + nc} numbers after the header, got {values.size}")
        W = values[: n * n].reshape(n, n).T  # one column per line (module docstring)
        rest = values[n * n :]
    elif storage == 2:
        W, i = _read_csparse(path, lines, 5, n)
        rest = np.array(" ".join(lines[i:]).split(), dtype=float)
        if rest.size < n + nc:
            raise ValueError(f"{path}: expected {n} values of q and {nc} of mu after W, got {rest.size}")
    else:
        raise ValueError(f"{path}: storage type {storage} is not read (0 dense, 2 CSparse)")
    q, mu = rest[:n], rest[n : n + nc]
    p = block_permutation(nc)
    return FC2DProblem(path.stem, W[np.ix_(p, p)], q[p], mu)


def bundled_dir() -> Path:
    """The bundled copies of Siconos' small fc2d problems (the slider–crank)."""
    return Path(str(resources.files("jaxcontact") / "data" / "fc2d_siconos"))


def load_bundled(directory=None) -> list[FC2DProblem]:
    """Every ``*.dat`` problem of a directory (the bundled one by default), sorted by name."""
    d = Path(directory) if directory is not None else bundled_dir()
    files = sorted(d.glob("*.dat"))
    if not files:
        raise FileNotFoundError(f"no *.dat files in {d}")
    return [read_fc2d(f) for f in files]
