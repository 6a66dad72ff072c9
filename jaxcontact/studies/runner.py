"""Evaluate a per-sample function over N samples: chunked, sharded over devices, resumable.

    result = run_samples(fn, inputs, chunk_size=1024, out_dir="out/chunks", config={...})

``fn(sample) -> dict[str, array]`` is written for ONE sample (a pytree of
per-sample leaves); the runner vmaps it, jit-compiles it once for a fixed chunk
shape and evaluates ``inputs`` (a pytree whose leaves have a leading axis N)
chunk by chunk:

* **memory bounded**: only one chunk of inputs and outputs lives on the devices;
  the last chunk is padded (repeating its last sample) to the chunk size so a
  single compiled program serves every chunk, and the padding is dropped. A new
  study's default chunks split its N samples evenly (:func:`chunk_size_for`), so
  the padding is less than one sample per chunk.
* **sharded**: each chunk is split over all devices along the batch axis with a
  ``NamedSharding`` on a 1-D mesh ``("batch",)``, padded to a multiple of the
  device count. On one CPU, several XLA host devices
  (``XLA_FLAGS=--xla_force_host_platform_device_count=2``, set before jax is
  imported) keep more than one core busy. Samples are independent, so results
  do not depend on the device count (tests check it with 4 host devices).
  With ``samples_per_call``, each device runs its share in sub-batches of at
  most that many samples, one after another (:func:`in_sub_batches`).
* **chunks belong to the study**: the chunk size (samples) is chosen when a
  study starts (default ``CHUNK_PER_DEVICE`` per device of that run) and
  recorded in the manifest; a resume adopts it, so a study started on 2
  devices resumes on 1 (or 8) with the same chunk files and numbers.
* **resumable and verified**: with ``out_dir``, each finished chunk is written to
  ``out_dir/chunk_00012.npz`` atomically (temporary file, fsync, ``os.replace``)
  and its sha256 recorded in ``manifest.json``, which also holds a hash of the
  study config and of the inputs. Rerunning the same study loads the chunks
  whose checksum matches and computes the others; a truncated, corrupted or
  altered chunk (or one the manifest does not vouch for) is named in a
  ``DamagedChunkWarning``, renamed ``chunk_00012.npz.damaged`` and recomputed.
  A different study in the same folder is refused with a message saying what
  differs and which option to change.
* **interruptible**: Ctrl-C (KeyboardInterrupt) during the chunk loop becomes
  ``StudyInterrupted`` (a KeyboardInterrupt) carrying how many samples are saved.
* **progress**: a tqdm bar counts samples (rate in samples/s, ETA); compile
  time is measured apart from run time (ahead-of-time ``lower().compile()``).

Several processes (one host or several): start every process with

    jax.distributed.initialize(coordinator_address="host0:1234",
                               num_processes=P, process_id=i)

before calling the runner (``jaxcontact mc --coordinator host0:1234
--num-processes P --process-id i`` does it; on SLURM the arguments are found
automatically: ``jax.distributed.initialize()``). Every process calls
``run_samples`` with the same inputs (generated from the same seed, so each
sample's inputs depend only on its global index). Chunks are assigned
statically: process i computes chunks i, i + P, i + 2P, … on its own devices,
so the samples need no collective at all (no gloo traffic, no collective
timeout), and the numbers do not depend on P. Each process writes only its own
chunk files and its own manifest (``manifest.json`` for process 0,
``manifest.p<i>.json`` for the others): no two processes ever write one file,
and a process killed with ``kill -9`` leaves every recorded chunk complete.
When its chunks are done a process waits at a barrier of the distributed
runtime (bounded by ``BARRIER_SECONDS``), then reads the other processes'
chunks, verified against their manifests; every process returns all outputs.
Rerunning the study (with any process count) resumes from every manifest.
``out_dir`` must be on a file system all processes share.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MANIFEST = "manifest.json"
BARRIER_SECONDS = 3600  # how long a process waits for the others' chunks before giving up with an error
MANIFEST_VERSION = 2  # 2: per-chunk sha256 checksums; the chunk size belongs to the study


class StudyMismatchError(ValueError):
    """The output folder holds chunks of a different study."""


class DamagedChunkWarning(RuntimeWarning):
    """A chunk file failed its check (unreadable, wrong checksum or unrecorded); it is set aside and recomputed."""


class StudyInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: ``n_saved`` of ``n_samples`` samples are in finished chunks under ``folder``."""

    def __init__(self, n_saved: int, n_samples: int, folder: str | None):
        super().__init__(f"interrupted with {n_saved} of {n_samples} samples saved")
        self.n_saved, self.n_samples, self.folder = n_saved, n_samples, folder


class RunResult(NamedTuple):
    """Outputs of every sample (name -> (N, ...) numpy) and how the run went.

    n_computed / n_loaded: samples evaluated in this call / read back from
    finished chunks, by this process (several processes: not the others' chunks); compile_seconds apart from
    run_seconds (evaluation, transfer and writing); n_devices and chunk_size (samples per chunk) as used.
    """

    outputs: dict
    n_samples: int
    n_computed: int
    n_loaded: int
    compile_seconds: float
    run_seconds: float
    n_devices: int
    chunk_size: int

    @property
    def samples_per_second(self) -> float:
        """Throughput of this call's evaluation (excluding compilation); NaN if nothing was computed."""
        return self.n_computed / self.run_seconds if self.n_computed and self.run_seconds > 0 else float("nan")


def batch_mesh(devices=None) -> Mesh:
    """A 1-D mesh with axis ``"batch"`` over ``devices`` (default: all devices of all hosts)."""
    devices = jax.devices() if devices is None else list(devices)
    return Mesh(np.asarray(devices), ("batch",))


def batch_sharding(mesh: Mesh) -> NamedSharding:
    """Split the leading (batch) axis over the mesh; other axes replicated."""
    return NamedSharding(mesh, PartitionSpec("batch"))


# Default samples per device when a study starts: each device then runs kernels over a batch large enough
# to amortise its per-kernel cost, and a step's costs that do not grow with the batch (the contact solve's
# loop control, its gathered stragglers' Newton) are shared by many samples (measurements: bench/RESULTS.md).
CHUNK_PER_DEVICE = 1024


def chunk_size_for(requested: int | None, n_samples: int, n_devices: int) -> int:
    """The chunk size (samples) of a new study: ``requested`` (at most N), or by default at most
    ``CHUNK_PER_DEVICE`` per device with the N samples split evenly over the fewest chunks that allows
    (1 025 samples on one device: two chunks of 513, not 1 024 and one padded to 1 024).

    It is not rounded to the device count: each chunk is padded to a multiple of
    the device count when it runs, so the same chunks serve any device count.
    """
    if requested is None:
        n_chunks = -(-int(n_samples) // (CHUNK_PER_DEVICE * n_devices))
        return -(-int(n_samples) // max(1, n_chunks))
    if isinstance(requested, bool) or not isinstance(requested, (int, np.integer)) or requested < 1:
        raise ValueError(f"chunk size = {requested!r} must be an int ≥ 1")
    return min(int(requested), int(n_samples))


def _leading_size(inputs) -> int:
    leaves = jax.tree.leaves(inputs)
    if not leaves:
        raise ValueError("inputs must hold at least one array with a leading batch axis")
    sizes = {np.shape(x)[0] if np.ndim(x) else None for x in leaves}
    if len(sizes) != 1 or None in sizes:
        raise ValueError(
            f"every input leaf needs the same leading (batch) axis; got leading sizes {sorted(map(str, sizes))}"
        )
    n = sizes.pop()
    if n < 1:
        raise ValueError(f"number of samples N = {n} must be ≥ 1")
    return int(n)


def inputs_digest(inputs) -> str:
    """sha256 of the inputs' structure, dtypes, shapes and bytes (identifies a study's samples)."""
    h = hashlib.sha256()
    paths = jax.tree_util.tree_leaves_with_path(inputs)
    for path, leaf in paths:
        a = np.ascontiguousarray(np.asarray(leaf))
        h.update(f"{jax.tree_util.keystr(path)}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def config_digest(config: Any) -> str:
    """sha256 of a JSON-serializable study config (keys sorted)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def manifest_name(process: int) -> str:
    """The manifest a process writes: ``manifest.json`` for process 0, ``manifest.p<i>.json`` for process i."""
    return MANIFEST if process == 0 else f"manifest.p{process}.json"


def _is_manifest_name(name: str) -> bool:
    return name == MANIFEST or (
        name.startswith("manifest.p") and name.endswith(".json") and name[len("manifest.p") : -len(".json")].isdigit()
    )


def read_manifest(folder, name: str = MANIFEST) -> dict | None:
    """A manifest of a chunk folder (default process 0's), or None when there is none (or it is unreadable)."""
    try:
        with open(os.path.join(os.fspath(folder), name)) as f:
            m = json.load(f)
        return m if isinstance(m, dict) else None
    except (OSError, ValueError):
        return None


def saved_samples(folder) -> tuple[int, int]:
    """(samples in chunks the manifest vouches for, samples of the study); (0, 0) without a manifest."""
    m = read_manifest(folder)
    if m is None:
        return 0, 0
    n, c = int(m.get("n_samples", 0)), max(1, int(m.get("chunk_size", 1)))
    recorded = set(m.get("checksums", {}))
    for name in os.listdir(os.fspath(folder)):
        other = read_manifest(folder, name) if name != MANIFEST and _is_manifest_name(name) else None
        if other is not None and other.get("inputs_sha256") == m.get("inputs_sha256"):
            recorded |= set(other.get("checksums", {}))
    done = [int(i) for i in recorded if os.path.exists(os.path.join(os.fspath(folder), f"chunk_{int(i):05d}.npz"))]
    return sum(min(n, (i + 1) * c) - i * c for i in done), n


def study_chunk_size(folder) -> int | None:
    """The chunk size recorded by a study already started in ``folder`` (None: no readable manifest)."""
    m = read_manifest(folder)
    c = None if m is None else m.get("chunk_size")
    return int(c) if isinstance(c, int) and c >= 1 else None


class ChunkStore:
    """Finished chunks of one study in a folder, with a manifest that identifies the study and checksums chunks."""

    def __init__(
        self,
        folder,
        *,
        config,
        inputs_sha256: str,
        n_samples: int,
        chunk_size: int,
        write: bool = True,
        process: int = 0,
    ):
        self.folder = os.fspath(folder)
        self.write = write
        self.manifest_name = manifest_name(process)
        self.manifest = {
            "version": MANIFEST_VERSION,
            "config_sha256": config_digest(config),
            "inputs_sha256": inputs_sha256,
            "n_samples": int(n_samples),
            "chunk_size": int(chunk_size),
            "n_chunks": int(math.ceil(n_samples / chunk_size)),
            "config": config,
            "checksums": {},
        }
        path = os.path.join(self.folder, self.manifest_name)
        if os.path.exists(path):
            old = read_manifest(self.folder)
            if old is None:
                # An unreadable manifest cannot vouch for any chunk: keep it aside, recompute every chunk.
                self._set_aside(path, "unreadable (not JSON)")
            else:
                self._check_same_study(old, path)
                if old.get("version") == MANIFEST_VERSION and isinstance(old.get("checksums"), dict):
                    self.manifest["checksums"] = {str(k): str(v) for k, v in old["checksums"].items()}
        self.merge_other_manifests()
        if write:
            _check_writable(self.folder)
            self._write_manifest()

    def merge_other_manifests(self) -> None:
        """Adopt the checksums recorded by the other processes' manifests of this study (see the module doc)."""
        for name in sorted(os.listdir(self.folder)) if os.path.isdir(self.folder) else []:
            if name == self.manifest_name or not _is_manifest_name(name):
                continue
            other = read_manifest(self.folder, name)
            if other is None or other.get("version") != MANIFEST_VERSION:
                continue
            self._check_same_study(other, os.path.join(self.folder, name))
            for k, v in (other.get("checksums") or {}).items():
                self.manifest["checksums"].setdefault(str(k), str(v))

    def _check_same_study(self, old: dict, path: str) -> None:
        new = self.manifest
        diffs = []
        if old.get("config_sha256") != new["config_sha256"]:
            oc, nc = old.get("config", {}), new["config"]
            keys = sorted(k for k in set(oc) | set(nc) if oc.get(k) != nc.get(k)) if isinstance(oc, dict) else []
            detail = "; ".join(f"{k}: {oc.get(k)!r} there, {nc.get(k)!r} now" for k in keys) or "config differs"
            diffs.append(detail)
        if old.get("inputs_sha256") != new["inputs_sha256"]:
            diffs.append("the sampled inputs differ")
        for k in ("n_samples", "chunk_size"):
            if old.get(k) != new[k]:
                diffs.append(f"{k}: {old.get(k)} there, {new[k]} now")
        if diffs:
            hint = (
                f" (to resume, give --chunk {old.get('chunk_size')} or no --chunk)"
                if old.get("chunk_size") != new["chunk_size"] and len(diffs) == 1
                else ""
            )
            raise StudyMismatchError(
                f"{path} belongs to a different study ({'; '.join(diffs)}){hint}; refusing to resume it. "
                f"Use another output folder, rerun with the settings recorded there, or delete {self.folder} "
                "to start over."
            )

    def _write_manifest(self) -> None:
        _atomic_write_bytes(
            os.path.join(self.folder, self.manifest_name),
            json.dumps(self.manifest, indent=1, sort_keys=True, default=str).encode(),
        )

    def _set_aside(self, path: str, why: str) -> None:
        aside = path + ".damaged"
        warnings.warn(
            f"{path}: {why}; moved to {os.path.basename(aside)}"
            + (" and recomputed" if path.endswith(".npz") else ", every chunk is recomputed"),
            DamagedChunkWarning,
            stacklevel=3,
        )
        if self.write:
            os.replace(path, aside)

    def path(self, i: int) -> str:
        """File of chunk ``i``."""
        return os.path.join(self.folder, f"chunk_{i:05d}.npz")

    def load(self, i: int, start: int, stop: int) -> dict | None:
        """Chunk i's outputs, or None when it is missing or fails its check (then it is set aside)."""
        p = self.path(i)
        if not os.path.exists(p):
            return None
        expected = self.manifest["checksums"].get(str(i))
        try:
            with open(p, "rb") as f:
                raw = f.read()
        except OSError as e:
            self._set_aside(p, f"unreadable ({e.strerror or e})")
            return None
        if expected is None:
            why = "not recorded in the manifest (written by an interrupted run or an older version)"
        elif hashlib.sha256(raw).hexdigest() != expected:
            why = "checksum differs from the manifest's (truncated, corrupted or altered)"
        else:
            why = None
            try:
                with np.load(io.BytesIO(raw)) as z:
                    data = {k: z[k] for k in z.files}
            except Exception as e:  # noqa: BLE001 - numpy/zipfile raise many types for a damaged archive
                why = f"not a readable npz ({type(e).__name__})"
            else:
                if int(data.pop("__start__", -1)) != start or int(data.pop("__stop__", -1)) != stop:
                    why = f"does not hold samples {start}..{stop - 1}"
        if why is not None:
            self.manifest["checksums"].pop(str(i), None)
            self._set_aside(p, why)
            return None
        return data

    def save(self, i: int, start: int, stop: int, outputs: dict) -> None:
        """Write chunk ``i`` (samples start:stop) atomically: a temporary file, fsync, rename."""
        if not self.write:
            return
        buf = io.BytesIO()
        np.savez(buf, __start__=np.int64(start), __stop__=np.int64(stop), **outputs)
        raw = buf.getvalue()
        _atomic_write_bytes(self.path(i), raw, prefix=f".chunk_{i:05d}.")
        # Recorded after the file is in place: a chunk the manifest names is always complete.
        self.manifest["checksums"][str(i)] = hashlib.sha256(raw).hexdigest()
        self._write_manifest()

    def n_saved(self) -> int:
        """Samples in the chunks saved and vouched for by the manifest."""
        n, c = self.manifest["n_samples"], self.manifest["chunk_size"]
        return sum(min(n, (int(i) + 1) * c) - int(i) * c for i in self.manifest["checksums"])


def _check_writable(folder: str) -> None:
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise ValueError(f"output folder {folder!r} is not writable: {e.strerror or e}") from None


def _atomic_write_bytes(path: str, data: bytes, prefix: str = ".tmp.") -> None:
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def compile_batched(fn: Callable, chunk_example, sharding: NamedSharding, samples_per_call: int | None = None):
    """vmap(fn) on each device's share of a chunk (``shard_map``), compiled ahead of time for one chunk's
    shapes; returns (callable, seconds). ``samples_per_call``: None, or the most samples a device evaluates at
    once (:func:`in_sub_batches`).

    Each device runs its own samples alone. A per-sample function whose batched form works on the whole batch
    (the contact solve's loops run until the batch's last problem is solved, and gather its stragglers) would,
    split by the compiler instead, make the devices agree at every iteration of such a loop.
    """
    return _compile_split(in_sub_batches(fn, samples_per_call), (chunk_example,), (sharding,), sharding)


def in_sub_batches(fn: Callable, width: int | None = None) -> Callable:
    """``fn`` over a batch (pytree, leading axis): ``jax.vmap(fn)``, or with ``width``, vmapped over sub-batches
    of at most ``width`` samples one after another (``lax.map``). The batch is padded with its last sample to
    equal sub-batches (one compiled body), and the padding dropped.

    A per-sample function whose batched cost per sample grows with the batch (a scheme's
    :meth:`~jaxcontact.stepping.base.Scheme.samples_per_call`) runs its sub-batches each at the width it runs
    best; the results are those of the samples run one by one.
    """
    if width is not None and width < 1:
        raise ValueError(f"samples per call = {width!r} must be None or an int ≥ 1")
    whole = jax.vmap(fn)
    if width is None:
        return whole

    def run(batch):
        n = _leading_size(batch)
        if n <= width:
            return whole(batch)
        parts = -(-n // width)
        size = -(-n // parts)  # the narrowest equal sub-batches: at most parts - 1 samples of padding

        def split(x):
            x = jnp.concatenate([x, jnp.repeat(x[-1:], parts * size - n, axis=0)], axis=0)
            return x.reshape((parts, size) + x.shape[1:])

        out = lax.map(whole, jax.tree.map(split, batch))
        return jax.tree.map(lambda y: y.reshape((parts * size,) + y.shape[2:])[:n], out)

    return run


def _compile_split(fn, args, in_shardings, out_sharding):
    """fn(*args) with each argument split or replicated over the mesh as its sharding says, every device running
    its share alone (``shard_map``), compiled ahead of time for ``args``' shapes; returns (callable, seconds)."""
    structs = tuple(
        jax.tree.map(lambda x, s=s: jax.ShapeDtypeStruct(np.shape(x), np.asarray(x).dtype, sharding=s), a)
        for a, s in zip(args, in_shardings)
    )
    local = jax.shard_map(
        fn,
        mesh=out_sharding.mesh,
        in_specs=tuple(s.spec for s in in_shardings),
        out_specs=out_sharding.spec,
        check_vma=False,
    )
    t0 = time.perf_counter()
    compiled = jax.jit(local, in_shardings=in_shardings, out_shardings=out_sharding).lower(*structs).compile()
    return compiled, time.perf_counter() - t0


class SplitProgram:
    """``fn(*args)``, whose arguments marked ``batched`` share a leading axis of independent members (a batch
    of experiments), run with each of ``devices`` (default: this process's) computing its share of the batch
    alone; called with host arrays, returns host arrays (every output batched).

    Compiled once per argument shapes, ahead of time; the batch must be a multiple of the device count
    (:attr:`devices` says how many). A program that calls LAPACK runs on one device, with a warning, as a
    study's does (:func:`run_samples`). Results do not depend on the device count.
    """

    def __init__(self, fn: Callable, batched: tuple, devices=None, desc: str = "program"):
        self.fn, self.batched, self.desc = fn, tuple(batched), desc
        self._mesh = batch_mesh(jax.local_devices() if devices is None else devices)
        self._compiled = {}

    @property
    def devices(self) -> int:
        """How many devices share a batch."""
        return int(self._mesh.devices.size)

    def _shardings(self, mesh):
        split, whole = batch_sharding(mesh), NamedSharding(mesh, PartitionSpec())
        return tuple(split if b else whole for b in self.batched), split

    def __call__(self, *args):
        args = _canonical(args)
        key = str(jax.tree.map(lambda a: (a.shape, a.dtype.str), args))
        if key not in self._compiled:

            def compile_on(mesh):
                ins, out = self._shardings(mesh)
                return _compile_split(self.fn, args, ins, out)

            compiled, _, self._mesh = _compile_on_safe_devices(compile_on, self._mesh, self.desc)
            self._compiled[key] = (compiled, self._shardings(self._mesh)[0])
        compiled, ins = self._compiled[key]
        placed = tuple(_place(a, s) for a, s in zip(args, ins))
        return jax.tree.map(np.asarray, _fetch_tree(compiled(*placed)))


def _compile_on_safe_devices(compile_on, mesh: Mesh, desc: str):
    """compile_on(mesh) → (compiled, seconds), compiled again for one device if it calls LAPACK on several:
    LAPACK custom calls can hang when several CPU host devices run them (bench/RESULTS.md names the jax version),
    so such a program runs on one device (same numbers, one core) and a warning says so. Returns (compiled,
    seconds, the mesh it runs on)."""
    compiled, seconds = compile_on(mesh)
    if mesh.devices.size > 1 and calls_lapack(compiled):
        warnings.warn(
            f"{desc}: the compiled program calls LAPACK, which can hang on several CPU host devices; running it on "
            "one device",
            RuntimeWarning,
            stacklevel=4,
        )
        mesh = batch_mesh(mesh.devices.flat[:1])
        compiled, more = compile_on(mesh)
        seconds += more
    return compiled, seconds, mesh


def calls_lapack(compiled) -> bool:
    """Whether a compiled program calls LAPACK (custom calls ``lapack_*``, e.g. Cholesky of a full mass matrix)."""
    # the custom call's target, not any "lapack_" in the text: the HLO's metadata names Python functions too
    return 'custom_call_target="lapack_' in compiled.as_text()


def _place(chunk, sharding: NamedSharding):
    """Host arrays -> global arrays sharded on the batch axis (each process supplies its own shards)."""
    return jax.tree.map(lambda a: jax.make_array_from_callback(a.shape, sharding, lambda idx, a=a: a[idx]), chunk)


def _fetch(outputs) -> dict:
    return {k: np.asarray(v) for k, v in _fetch_tree(outputs).items()}


def _fetch_tree(outputs):
    """Outputs split over the devices of several processes gathered whole on each."""
    if not all(v.is_fully_addressable for v in jax.tree.leaves(outputs)):
        from jax.experimental import multihost_utils

        outputs = multihost_utils.process_allgather(outputs, tiled=True)
    return outputs


def _canonical(inputs):
    """Host numpy leaves in the dtype jax will use (float64 only with jax_enable_x64)."""
    return jax.tree.map(lambda x: np.asarray(x, dtype=jax.dtypes.canonicalize_dtype(np.asarray(x).dtype)), inputs)


def _pad(chunk, size: int):
    """Pad every leaf to ``size`` rows by repeating the last row (valid values: no NaN in padding)."""

    def pad(a):
        extra = size - a.shape[0]
        return a if extra == 0 else np.concatenate([a, np.repeat(a[-1:], extra, axis=0)], axis=0)

    return jax.tree.map(pad, chunk)


def run_chunks(
    batch_fn: Callable,
    inputs,
    *,
    chunk_size: int,
    store: ChunkStore | None = None,
    progress: bool = True,
    desc: str = "samples",
    warmup: Callable | None = None,
    process: int = 0,
    n_processes: int = 1,
) -> tuple[dict, int, int, float]:
    """The chunk loop: ``batch_fn(padded_chunk) -> dict of (chunk_size, ...) arrays``.

    Loads chunks already in ``store``, computes the others in order, writes each
    as soon as it is done. With ``n_processes`` > 1 this process computes only
    chunks i ≡ ``process`` (mod ``n_processes``), then waits for the others at a
    barrier and reads their chunks from ``store``. ``warmup(padded_chunk)`` (e.g. compilation) runs before the
    progress bar starts, so the bar's rate is the evaluation rate. Returns
    (outputs, n_computed, n_loaded, run_seconds).
    """
    from tqdm.auto import tqdm

    n = _leading_size(inputs)
    n_chunks = int(math.ceil(n / chunk_size))
    parts: list[dict | None] = [None] * n_chunks
    n_loaded = 0
    if store is not None:
        # Only this process's chunks: another's may be set aside and rewritten by its owner meanwhile.
        for i in range(process, n_chunks, n_processes):
            start, stop = i * chunk_size, min(n, (i + 1) * chunk_size)
            parts[i] = store.load(i, start, stop)
            n_loaded += (stop - start) if parts[i] is not None else 0
    n_computed = 0
    t0 = time.perf_counter()
    try:
        todo = [i for i in range(n_chunks) if parts[i] is None and i % n_processes == process]
        if warmup is not None and todo:
            if progress:  # compiling a study (a gradient one most) can take minutes before the bar appears
                print(f"{desc}: compiling one program for chunks of {chunk_size} samples", file=sys.stderr, flush=True)
            start = todo[0] * chunk_size
            warmup(_pad(jax.tree.map(lambda a: a[start : start + chunk_size], inputs), chunk_size))
        with tqdm(
            total=n,
            initial=n_loaded,
            unit="sample",
            unit_scale=True,
            desc=desc,
            disable=not progress,
            dynamic_ncols=True,
            smoothing=0,
        ) as bar:
            for i in todo:
                start, stop = i * chunk_size, min(n, (i + 1) * chunk_size)
                chunk = _pad(jax.tree.map(lambda a: a[start:stop], inputs), chunk_size)
                out = batch_fn(chunk)
                out = {k: np.asarray(v)[: stop - start] for k, v in out.items()}
                if store is not None:
                    store.save(i, start, stop, out)
                parts[i] = out
                n_computed += stop - start
                bar.update(stop - start)
    except KeyboardInterrupt as e:
        if isinstance(e, StudyInterrupted):
            raise
        saved = store.n_saved() if store is not None else 0
        raise StudyInterrupted(saved, n, store.folder if store is not None else None) from None
    run_seconds = time.perf_counter() - t0
    if n_processes > 1:
        _barrier(f"chunks of study {store.manifest['inputs_sha256'][:16]}")
        store.merge_other_manifests()
        for i in range(n_chunks):
            if parts[i] is None:
                start, stop = i * chunk_size, min(n, (i + 1) * chunk_size)
                parts[i] = store.load(i, start, stop)
                if parts[i] is None:
                    raise RuntimeError(
                        f"chunk {i} (samples {start}..{stop - 1}) of process "
                        f"{i % n_processes} is missing or damaged in {store.folder} after every "
                        "process finished; rerun the study to recompute it"
                    )
    keys = list(parts[0])
    for i, p in enumerate(parts):
        if list(p) != keys:
            raise StudyMismatchError(
                f"chunk {i} has outputs {sorted(p)}, chunk 0 has {sorted(keys)}; "
                "the folder mixes results of different evaluation functions"
            )
    outputs = {k: np.concatenate([p[k] for p in parts], axis=0) for k in keys}
    return outputs, n_computed, n_loaded, run_seconds


def _barrier(name: str) -> None:
    """Wait until every process of ``jax.distributed`` arrives here (bounded by ``BARRIER_SECONDS``)."""
    from jax._src import distributed

    client = distributed.global_state.client
    if client is None:
        raise RuntimeError(
            "several processes but jax.distributed is not initialised; call "
            "jax.distributed.initialize(...) before the study"
        )
    client.wait_at_barrier(name.replace(" ", "_"), timeout_in_ms=BARRIER_SECONDS * 1000)


def run_samples(
    fn: Callable,
    inputs,
    *,
    chunk_size: int | None = None,
    out_dir=None,
    config: Any = None,
    progress: bool = True,
    devices=None,
    desc: str = "samples",
    programs: dict | None = None,
    samples_per_call: int | None = None,
) -> RunResult:
    """Evaluate the per-sample ``fn`` on every sample of ``inputs`` (see the module docstring).

    fn: one sample (pytree of per-sample leaves) -> dict name -> array (per sample).
    inputs: pytree of arrays with a common leading axis N.
    chunk_size: samples per chunk, split over the devices (None: the size recorded by a study already
      started in ``out_dir``, else ``CHUNK_PER_DEVICE`` per device).
    out_dir: folder for chunk files and the manifest (None: keep nothing on disk).
    config: JSON-serializable description of the study (model, outcomes, time
      grid, …) — part of the identity checked on resume, with the inputs' hash.
    programs: a dict the caller keeps between calls with the same ``fn`` (a sequential algorithm running
      one batch after another): each compiled program is stored in it by its chunk's shapes and reused,
      instead of compiled again.
    samples_per_call: None, or the most samples a device evaluates at once (:func:`in_sub_batches`; a scheme's
      :meth:`~jaxcontact.stepping.base.Scheme.samples_per_call`); the results do not depend on it.
    """
    inputs = _canonical(inputs)
    n = _leading_size(inputs)
    process, n_processes = jax.process_index(), jax.process_count()
    if n_processes > 1 and out_dir is None:
        raise ValueError("a study over several processes needs out_dir (the processes exchange chunks through it)")
    # Several processes: each runs its own chunks on its own devices (see the module doc).
    mesh = batch_mesh(jax.local_devices() if devices is None and n_processes > 1 else devices)
    n_dev = mesh.devices.size
    recorded = study_chunk_size(out_dir) if out_dir is not None and chunk_size is None else None
    chunk = recorded if recorded is not None else chunk_size_for(chunk_size, n, n_dev)
    store = None
    if out_dir is not None:
        store = ChunkStore(
            out_dir, config=config, inputs_sha256=inputs_digest(inputs), n_samples=n, chunk_size=chunk, process=process
        )
    sharding = batch_sharding(mesh)
    compiled = None
    compile_seconds = 0.0

    def ensure_compiled(chunk_inputs):
        nonlocal compiled, compile_seconds, sharding, n_dev
        # Pad the chunk to a multiple of the device count (the chunk itself is the study's, whatever the devices).
        padded = _pad(chunk_inputs, int(math.ceil(chunk / n_dev) * n_dev))
        shapes = str(jax.tree.map(lambda a: (a.shape, a.dtype.str), padded))
        if compiled is None and programs is not None and shapes in programs:
            compiled, sharding, n_dev = programs[shapes]
        if compiled is None:

            def compile_on(m):
                example = padded if m.devices.size > 1 else chunk_inputs
                return compile_batched(fn, example, batch_sharding(m), samples_per_call)

            compiled, compile_seconds, on = _compile_on_safe_devices(compile_on, mesh, desc)
            sharding, n_dev = batch_sharding(on), on.devices.size
            if programs is not None:
                programs[shapes] = (compiled, sharding, n_dev)
        return chunk_inputs if n_dev == 1 else padded

    def batch_fn(chunk_inputs):
        padded = ensure_compiled(chunk_inputs)
        out = _fetch(compiled(_place(padded, sharding)))
        return {k: v[:chunk] for k, v in out.items()}

    outputs, n_computed, n_loaded, seconds = run_chunks(
        batch_fn,
        inputs,
        chunk_size=chunk,
        store=store,
        progress=progress,
        desc=desc,
        warmup=ensure_compiled,
        process=process,
        n_processes=n_processes,
    )
    return RunResult(outputs, n, n_computed, n_loaded, compile_seconds, seconds - compile_seconds, n_dev, chunk)
