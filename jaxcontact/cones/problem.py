"""The 3D frictional contact problem and readers for Siconos' and FCLIB's files.

Problem: nc contacts, unknowns per contact in Siconos' interleaved order
r = (r_N, r_T1, r_T2)₁, (…)₂, …, local velocity u = W r + q, friction
coefficients μ (nc,). :class:`ContactProblem` holds W dense and, when the
file gives it so, also by 3 × 3 blocks (:class:`BlockMatrix`: block row,
block column, values), the storage of the sparse sweeps.

Siconos text format (``FrictionContactProblem``, written by
``frictionContact_printInFile`` and read by
``frictionContact_new_from_filename`` in Siconos numerics), whitespace
separated::

    dim            # 3 (2 for planar problems)
    nc
    storage        # 0 dense, 1 sparse block (SparseBlockStructuredMatrix)
    size0 size1    # of W, 3 nc × 3 nc
    dense:   size0 size1 again, then the values column by column
             (Siconos reads them straight into column-major storage)
    sparse:  nbblock, blocknumber0, blocknumber1,
             blocksize0[blocknumber0]  (cumulative row sizes),
             blocksize1[blocknumber1]  (cumulative column sizes),
             filled1, filled2,
             index1_data[filled1]      (row pointers of a compressed-row
                                        layout of the blocks),
             index2_data[filled2]      (block column of each block),
             then per block its number and its values, column-major
    q              # 3 nc values
    mu             # nc values

Checked entry by entry against the W that Siconos 4.4 itself builds from
each file (``tests/cones/test_problem.py``).

FCLIB HDF5 (``/fclib_local``): W as a CSparse matrix (m, n, nz = −2
compressed rows, −1 compressed columns, ≥ 0 triplets; p, i, x),
``vectors/q``, ``vectors/mu``, ``spacedim``; same unknown order.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import NamedTuple

import numpy as np


class BlockMatrix(NamedTuple):
    """A square matrix of d × d blocks: ``values[k]`` sits at block (rows[k], cols[k])."""

    rows: np.ndarray  # (nnzb,) int
    cols: np.ndarray  # (nnzb,) int
    values: np.ndarray  # (nnzb, d, d)

    def dense(self, nb: int) -> np.ndarray:
        """The dense (nb·d × nb·d) matrix of these blocks."""
        d = self.values.shape[-1]
        W = np.zeros((nb * d, nb * d), self.values.dtype)
        for r, c, v in zip(self.rows, self.cols, self.values):
            W[r * d : (r + 1) * d, c * d : (c + 1) * d] += v
        return W


class ContactProblem(NamedTuple):
    """Frictional contact problem u = W r + q, unknowns interleaved per contact."""

    name: str
    W: np.ndarray  # (d nc, d nc)
    q: np.ndarray  # (d nc,)
    mu: np.ndarray  # (nc,)
    blocks: BlockMatrix | None = None  # W by d × d blocks when the file stores it so

    @property
    def dim(self) -> int:
        return self.q.shape[0] // max(self.mu.shape[0], 1)

    @property
    def nc(self) -> int:
        return self.mu.shape[0]


def dense_to_blocks(W: np.ndarray, d: int) -> BlockMatrix:
    """The nonzero d × d blocks of a dense matrix."""
    nb = W.shape[0] // d
    B = W.reshape(nb, d, nb, d).transpose(0, 2, 1, 3)
    rows, cols = np.nonzero(np.any(B != 0, axis=(2, 3)))
    return BlockMatrix(rows, cols, B[rows, cols])


def problem_name(path) -> str:
    """File name without ``.dat`` / ``.hdf5`` (``BoxesStack1-i100000-32.hdf5.dat`` → ``BoxesStack1-i100000-32``)."""
    return Path(path).name.removesuffix(".dat").removesuffix(".hdf5")


class _Tokens:
    def __init__(self, path: Path):
        self.path = path
        try:
            self.tokens = path.read_text().split()
        except UnicodeDecodeError:
            raise ValueError(f"{path}: not a text file (Siconos problems are text; FCLIB ones end in .hdf5)") from None
        self.k = 0

    def next(self, kind=float, what="a number"):
        if self.k >= len(self.tokens):
            raise ValueError(f"{self.path}: file ends where {what} was expected")
        t = self.tokens[self.k]
        self.k += 1
        try:
            return kind(t)
        except ValueError:
            raise ValueError(f"{self.path}: expected {what} at token {self.k - 1}, got {t!r}") from None

    def ints(self, n, what):
        return np.array([self.next(int, what) for _ in range(n)], dtype=np.int64)

    def floats(self, n, what):
        if self.k + n > len(self.tokens):
            raise ValueError(
                f"{self.path}: expected {n} values of {what}, the file has {len(self.tokens) - self.k} tokens left"
            )
        try:
            out = np.array(self.tokens[self.k : self.k + n], dtype=float)
        except ValueError:
            raise ValueError(f"{self.path}: non-numeric token among the values of {what}") from None
        self.k += n
        return out


def _read_sbm(tok: _Tokens, n: int, d: int) -> BlockMatrix:
    path = tok.path
    nbblock = tok.next(int, "nbblock")
    nb0, nb1 = tok.next(int, "blocknumber0"), tok.next(int, "blocknumber1")
    size0 = tok.ints(nb0, "blocksize0")
    size1 = tok.ints(nb1, "blocksize1")
    if (
        nb0 * d != n
        or nb1 * d != n
        or np.any(size0 != d * np.arange(1, nb0 + 1))
        or np.any(size1 != d * np.arange(1, nb1 + 1))
    ):
        raise ValueError(f"{path}: sparse-block W must have {n // d} × {n // d} blocks of size {d} × {d}")
    filled1, filled2 = tok.next(int, "filled1"), tok.next(int, "filled2")
    if filled1 != nb0 + 1 or filled2 != nbblock:
        raise ValueError(
            f"{path}: sparse-block header: filled1 = {filled1} (expected {nb0 + 1}), "
            f"filled2 = {filled2} (expected nbblock = {nbblock})"
        )
    index1 = tok.ints(filled1, "index1_data")
    index2 = tok.ints(filled2, "index2_data")
    if index1[0] != 0 or index1[-1] != nbblock or np.any(np.diff(index1) < 0) or np.any((index2 < 0) | (index2 >= nb1)):
        raise ValueError(f"{path}: sparse-block row pointers or block columns out of range")
    rows = np.repeat(np.arange(nb0), np.diff(index1))
    values = np.empty((nbblock, d, d))
    for k in range(nbblock):
        num = tok.next(int, "a block number")
        if num != k:
            raise ValueError(f"{path}: block {k} is numbered {num}")
        values[k] = tok.floats(d * d, f"block {k}").reshape(d, d).T  # column-major
    return BlockMatrix(rows, index2, values)


def read_siconos(path) -> ContactProblem:
    """Parse a Siconos ``FrictionContactProblem`` text file (dense or sparse block)."""
    path = Path(path)
    tok = _Tokens(path)
    d = tok.next(int, "the contact dimension")
    nc = tok.next(int, "the number of contacts")
    storage = tok.next(int, "the storage type")
    if d not in (2, 3) or nc < 0:
        raise ValueError(f"{path}: contact dimension must be 2 or 3 and nc >= 0; got {d}, {nc}")
    n = d * nc
    size = (tok.next(int, "rows of W"), tok.next(int, "columns of W"))
    if size != (n, n):
        raise ValueError(f"{path}: W must be {n}×{n} for nc = {nc}; header says {size[0]}×{size[1]}")
    blocks = None
    if storage == 0:
        size = (tok.next(int, "rows of W"), tok.next(int, "columns of W"))
        if size != (n, n):
            raise ValueError(f"{path}: dense block header must be '{n} {n}'; got {size}")
        W = tok.floats(n * n, "W").reshape(n, n).T  # one column after the other
    elif storage == 1:
        blocks = _read_sbm(tok, n, d)
        W = blocks.dense(nc)
    else:
        raise ValueError(f"{path}: storage type {storage} is not read (0 dense, 1 sparse block)")
    q = tok.floats(n, "q")
    mu = tok.floats(nc, "mu")
    return _checked(ContactProblem(problem_name(path), W, q, mu, blocks), path)


def _csparse(g, path) -> np.ndarray:
    m, n, nz = (int(np.asarray(g[k]).ravel()[0]) for k in ("m", "n", "nz"))
    p = np.asarray(g["p"], np.int64).ravel()
    i = np.asarray(g["i"], np.int64).ravel()
    x = np.asarray(g["x"], float).ravel()
    W = np.zeros((m, n))
    if nz == -2:  # compressed rows: p row pointers, i column indices
        if p.size != m + 1:
            raise ValueError(f"{path}: compressed-row W needs {m + 1} row pointers, has {p.size}")
        r = np.repeat(np.arange(m), np.diff(p))
        np.add.at(W, (r, i[: p[-1]]), x[: p[-1]])
    elif nz == -1:  # compressed columns
        if p.size != n + 1:
            raise ValueError(f"{path}: compressed-column W needs {n + 1} column pointers, has {p.size}")
        c = np.repeat(np.arange(n), np.diff(p))
        np.add.at(W, (i[: p[-1]], c), x[: p[-1]])
    elif nz >= 0:  # triplets: i rows, p columns
        np.add.at(W, (i[:nz], p[:nz]), x[:nz])
    else:
        raise ValueError(f"{path}: W storage nz = {nz} is not CSparse (−2 rows, −1 columns, ≥ 0 triplets)")
    return W


def read_fclib(path) -> ContactProblem:
    """Parse an FCLIB HDF5 local problem (``/fclib_local``)."""
    import h5py

    path = Path(path)
    try:
        with h5py.File(path, "r") as f:
            if "fclib_local" not in f:
                raise ValueError(f"{path}: no /fclib_local group (only FCLIB local problems are read)")
            g = f["fclib_local"]
            d = int(np.asarray(g["spacedim"]).ravel()[0])
            W = _csparse(g["W"], path)
            q = np.asarray(g["vectors/q"], float).ravel()
            mu = np.asarray(g["vectors/mu"], float).ravel()
    except (OSError, KeyError) as e:
        # h5py's messages (no HDF5 signature, a missing dataset) do not name the file.
        raise ValueError(f"{path}: not a readable FCLIB HDF5 local problem: {e}") from None
    if W.shape != (q.size, q.size) or q.size != d * mu.size:
        raise ValueError(f"{path}: W {W.shape}, q ({q.size},), mu ({mu.size},) do not fit dimension {d}")
    return _checked(ContactProblem(problem_name(path), W, q, mu, dense_to_blocks(W, d)), path)


def _checked(p: ContactProblem, path) -> ContactProblem:
    for label, x in (("W", p.W), ("q", p.q), ("mu", p.mu)):
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{path}: {label} has non-finite values")
    if np.any(p.mu < 0):
        raise ValueError(f"{path}: friction coefficients must be >= 0; mu[{int(np.argmin(p.mu))}] = {p.mu.min()}")
    return p


def read_problem(path) -> ContactProblem:
    """Read a ``*.hdf5`` (FCLIB) or Siconos text file (any other name)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such problem file: {path}")
    return read_fclib(path) if path.suffix in (".hdf5", ".h5") else read_siconos(path)


def bundled_dir() -> Path:
    """The bundled copies of Siconos' 3D frictional contact test problems."""
    return Path(str(resources.files("jaxcontact") / "data" / "fc3d_siconos"))


def bundled_files() -> list[Path]:
    """Every bundled problem file (``*.dat`` and ``*.hdf5``), sorted by name."""
    d = bundled_dir()
    return sorted(p for p in d.iterdir() if p.suffix in (".dat", ".hdf5"))


def pad_problem(W, q, mu, nc_total: int):
    """Embed a problem in one of ``nc_total`` contacts (to compile a solver once for many sizes).

    The added contacts are decoupled and separated (W block = I, q = (s, 0…),
    μ = 0): every solver gives them r = 0, u = (s, 0…) without touching the
    others. Slice ``[:d nc]`` of r and u to get the original problem's.
    s = 1e-8 ‖q‖ / √(added contacts) leaves ‖q‖, ‖r‖ and ‖u‖ — the normalisation of
    Siconos' error — as they are to rounding, so the padded problem's error, and a
    solver's ``converged`` on it, speak for the original problem (a dummy with
    q = (1, 0…) would inflate ‖q‖ and let a solver stop early).
    """
    W, q, mu = (np.asarray(x, float) for x in (W, q, mu))
    nc = mu.shape[0]
    d = q.shape[0] // nc
    if nc_total < nc:
        raise ValueError(f"pad_problem: nc_total = {nc_total} is smaller than the problem's nc = {nc}")
    n = d * nc_total
    Wp = np.eye(n)
    Wp[: d * nc, : d * nc] = W
    norm_q = float(np.linalg.norm(q))
    s = 1e-8 * norm_q / np.sqrt(max(nc_total - nc, 1)) if norm_q > 0 else 1.0
    qp = np.tile(s * np.eye(d)[0], nc_total)
    qp[: d * nc] = q
    mup = np.zeros(nc_total)
    mup[:nc] = mu
    return Wp, qp, mup
