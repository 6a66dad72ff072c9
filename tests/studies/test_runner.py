"""Runner: chunked == unchunked, resume after an interruption, refusal of another study, devices."""

import json
import os
import subprocess
import sys
import textwrap
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcontact.studies.runner import (
    CHUNK_PER_DEVICE,
    ChunkStore,
    DamagedChunkWarning,
    StudyInterrupted,
    StudyMismatchError,
    batch_mesh,
    batch_sharding,
    chunk_size_for,
    compile_batched,
    in_sub_batches,
    inputs_digest,
    run_chunks,
    run_samples,
    saved_samples,
)


def evaluate(s):
    """A per-sample function with a scalar, a series and a flag (a damped oscillator in closed form)."""
    t = jnp.linspace(0.0, 1.0, 6)
    x = jnp.exp(-s["c"] * t) * jnp.cos(s["w"] * t)
    return {"peak": jnp.max(jnp.abs(x[1:])), "x": x, "ok": s["w"] > 0}


def _inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    return {"c": rng.uniform(0.1, 2.0, n), "w": rng.uniform(1.0, 10.0, n)}


def _reference(inputs):
    return {k: np.asarray(v) for k, v in jax.jit(jax.vmap(evaluate))(inputs).items()}


def test_chunked_equals_unchunked_with_padding():
    inputs = _inputs(103)
    ref = _reference(inputs)
    r = run_samples(evaluate, inputs, chunk_size=16, progress=False)
    assert r.chunk_size == 16 and r.n_computed == 103 and r.n_loaded == 0
    for k in ref:
        assert r.outputs[k].shape == ref[k].shape
        np.testing.assert_array_equal(r.outputs[k], ref[k])
    whole = run_samples(evaluate, inputs, chunk_size=1000, progress=False)
    assert whole.chunk_size == 103  # never larger than N needs
    np.testing.assert_array_equal(whole.outputs["x"], ref["x"])


@pytest.mark.parametrize(
    "n, width, parts, size", [(10, 4, 3, 4), (12, 4, 3, 4), (9, 4, 3, 3), (3, 4, 1, 3), (7, 1, 7, 1)]
)
def test_sub_batches_give_the_samples_run_at_once(n, width, parts, size):
    inputs = _inputs(n, seed=n)
    out = jax.jit(in_sub_batches(evaluate, width))(inputs)
    ref = _reference(inputs)
    for k in ref:
        np.testing.assert_array_equal(np.asarray(out[k]), ref[k])
    # The narrowest equal sub-batches, one after another (10 samples by at most 4: three of 4, two of them padding).
    scans = [e for e in jax.make_jaxpr(in_sub_batches(evaluate, width))(inputs).eqns if e.primitive.name == "scan"]
    assert [(e.params["length"], e.invars[-1].aval.shape) for e in scans] == (
        [(parts, (parts, size))] if parts > 1 else []
    )


def test_run_samples_in_sub_batches_equals_the_whole_batch():
    inputs = _inputs(37, seed=3)
    whole = run_samples(evaluate, inputs, chunk_size=16, progress=False)
    sub = run_samples(evaluate, inputs, chunk_size=16, progress=False, samples_per_call=5)
    for k in whole.outputs:
        np.testing.assert_array_equal(sub.outputs[k], whole.outputs[k])
    with pytest.raises(ValueError, match=r"samples per call = 0 must be None or an int ≥ 1"):
        in_sub_batches(evaluate, 0)


class Interrupt(Exception):
    pass


def test_resume_after_interruption_recomputes_nothing(tmp_path):
    inputs = _inputs(100)
    ref = _reference(inputs)
    config = {"study": "oscillator", "n": 100}
    mesh = batch_mesh()
    sharding = batch_sharding(mesh)
    chunk = chunk_size_for(16, 100, mesh.devices.size)
    compiled = {}
    seen = []

    def batch_fn(x, fail_at=None):
        if "f" not in compiled:
            compiled["f"], _ = compile_batched(evaluate, x, sharding)
        seen.append(float(x["c"][0]))
        if fail_at is not None and len(seen) == fail_at:
            raise Interrupt("killed during chunk 3")
        return {k: np.asarray(v) for k, v in compiled["f"](x).items()}

    store = ChunkStore(tmp_path, config=config, inputs_sha256=inputs_digest(inputs), n_samples=100, chunk_size=chunk)
    with pytest.raises(Interrupt):
        run_chunks(lambda x: batch_fn(x, fail_at=4), inputs, chunk_size=chunk, store=store, progress=False)
    written = sorted(f for f in os.listdir(tmp_path) if f.endswith(".npz"))
    assert written == [f"chunk_{i:05d}.npz" for i in range(3)]  # chunks 0-2 done, chunk 3 lost, no temp files
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    first_chunks = list(seen[:3])

    seen.clear()
    store = ChunkStore(tmp_path, config=config, inputs_sha256=inputs_digest(inputs), n_samples=100, chunk_size=chunk)
    out, n_computed, n_loaded, _ = run_chunks(batch_fn, inputs, chunk_size=chunk, store=store, progress=False)
    assert n_loaded == 3 * chunk and n_computed == 100 - 3 * chunk
    assert not set(seen) & set(first_chunks)  # nothing already written was evaluated again
    assert len(seen) == int(np.ceil(100 / chunk)) - 3
    for k in ref:
        np.testing.assert_array_equal(out[k], ref[k])

    # A third run loads everything and computes nothing.
    r = run_samples(evaluate, inputs, chunk_size=16, out_dir=tmp_path, config=config, progress=False)
    assert r.n_computed == 0 and r.n_loaded == 100 and np.isnan(r.samples_per_second)
    np.testing.assert_array_equal(r.outputs["peak"], ref["peak"])


def test_refuses_a_different_study(tmp_path):
    inputs = _inputs(40)
    run_samples(evaluate, inputs, chunk_size=8, out_dir=tmp_path, config={"seed": 0}, progress=False)
    with pytest.raises(StudyMismatchError, match=r"different study \(seed: 0 there, 1 now\); refusing to resume"):
        run_samples(evaluate, inputs, chunk_size=8, out_dir=tmp_path, config={"seed": 1}, progress=False)
    with pytest.raises(StudyMismatchError, match=r"the sampled inputs differ"):
        run_samples(evaluate, _inputs(40, seed=1), chunk_size=8, out_dir=tmp_path, config={"seed": 0}, progress=False)
    with pytest.raises(StudyMismatchError, match=r"chunk_size: 8 there, 16 now"):
        run_samples(evaluate, inputs, chunk_size=16, out_dir=tmp_path, config={"seed": 0}, progress=False)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["config"] == {"seed": 0} and manifest["n_chunks"] == 5


def _damage_truncate(path):
    path.write_bytes(path.read_bytes()[:10])


def _damage_flip(path):
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))


def _damage_alter(path):
    """Rewrite the chunk as a perfectly valid npz with other values (same keys and shapes)."""
    with np.load(path) as z:
        data = {k: z[k] for k in z.files}
    data["peak"] = data["peak"] * 10.0
    np.savez(path, **data)


@pytest.mark.parametrize(
    "damage", [_damage_truncate, _damage_flip, _damage_alter], ids=["truncated", "flipped", "altered"]
)
def test_damaged_chunk_is_named_set_aside_and_recomputed(tmp_path, damage):
    inputs = _inputs(24)
    ref = run_samples(evaluate, inputs, chunk_size=8, out_dir=tmp_path, config={}, progress=False)
    damage(tmp_path / "chunk_00001.npz")
    with pytest.warns(DamagedChunkWarning, match=r"chunk_00001\.npz: .*moved to chunk_00001\.npz\.damaged"):
        r = run_samples(evaluate, inputs, out_dir=tmp_path, config={}, progress=False)
    assert r.n_loaded == 16 and r.n_computed == 8
    assert (tmp_path / "chunk_00001.npz.damaged").exists()
    for k in ref.outputs:
        np.testing.assert_array_equal(r.outputs[k], ref.outputs[k])
    # the recomputed chunk is vouched for again: a third run loads everything, warns about nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error", DamagedChunkWarning)
        again = run_samples(evaluate, inputs, out_dir=tmp_path, config={}, progress=False)
    assert again.n_computed == 0


def test_unreadable_manifest_recomputes_every_chunk(tmp_path):
    inputs = _inputs(16)
    run_samples(evaluate, inputs, chunk_size=8, out_dir=tmp_path, config={}, progress=False)
    (tmp_path / "manifest.json").write_text("{not json")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = run_samples(evaluate, inputs, chunk_size=8, out_dir=tmp_path, config={}, progress=False)
    messages = [str(w.message) for w in rec if issubclass(w.category, DamagedChunkWarning)]
    assert "manifest.json: unreadable" in messages[0] and len(messages) == 3
    assert all("not recorded in the manifest" in m for m in messages[1:])  # no manifest vouches for them
    assert r.n_computed == 16 and (tmp_path / "manifest.json.damaged").exists()


def test_chunk_size_belongs_to_the_study(tmp_path):
    """A resume adopts the recorded chunk size (whatever the device count); a different --chunk is refused
    with the option to give."""
    inputs = _inputs(40)
    run_samples(evaluate, inputs, chunk_size=8, out_dir=tmp_path, config={}, progress=False)
    r = run_samples(evaluate, inputs, out_dir=tmp_path, config={}, progress=False)
    assert r.chunk_size == 8 and r.n_loaded == 40
    with pytest.raises(
        StudyMismatchError,
        match=r"chunk_size: 8 there, 16 now\) \(to resume, give --chunk 8 or no "
        r"--chunk\)",
    ):
        run_samples(evaluate, inputs, chunk_size=16, out_dir=tmp_path, config={}, progress=False)


def test_interrupt_reports_saved_samples(tmp_path):
    inputs = _inputs(40)
    mesh = batch_mesh()
    compiled = compile_batched(evaluate, jax.tree.map(lambda a: a[:8], inputs), batch_sharding(mesh))[0]
    calls = []

    def batch_fn(x):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return {k: np.asarray(v) for k, v in compiled(x).items()}

    store = ChunkStore(tmp_path, config={}, inputs_sha256=inputs_digest(inputs), n_samples=40, chunk_size=8)
    with pytest.raises(StudyInterrupted) as e:
        run_chunks(batch_fn, inputs, chunk_size=8, store=store, progress=False)
    assert (e.value.n_saved, e.value.n_samples) == (16, 40) and isinstance(e.value, KeyboardInterrupt)
    assert saved_samples(tmp_path) == (16, 40)


def test_the_compile_before_the_first_chunk_is_announced(capsys):
    # A gradient study compiles for minutes before its progress bar shows: a line says what is happening.
    inputs = _inputs(6)
    order = []
    batch_fn = lambda x: order.append("chunk") or {"c": x["c"]}  # noqa: E731
    warmup = lambda x: order.append(capsys.readouterr().err)  # noqa: E731
    run_chunks(batch_fn, inputs, chunk_size=4, progress=True, desc="pce-grad toy", warmup=warmup)
    assert order[0] == "pce-grad toy: compiling one program for chunks of 4 samples\n" and order[1:] == ["chunk"] * 2
    run_chunks(batch_fn, inputs, chunk_size=4, progress=False, desc="pce-grad toy", warmup=warmup)
    assert "compiling" not in capsys.readouterr().err  # --quiet is quiet


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match=r"chunk size = 0 must be an int ≥ 1"):
        run_samples(evaluate, _inputs(4), chunk_size=0, progress=False)
    with pytest.raises(ValueError, match=r"same leading \(batch\) axis"):
        run_samples(evaluate, {"c": np.ones(4), "w": np.ones(5)}, progress=False)
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(ValueError, match=r"not writable"):
        run_samples(evaluate, _inputs(4), out_dir=blocked / "sub", config={}, progress=False)


def test_chunk_size_is_not_rounded_to_the_device_count():
    assert chunk_size_for(1000, 10_000, 4) == 1000
    assert chunk_size_for(1001, 10_000, 4) == 1001  # padded to 1004 when it runs on 4 devices
    assert chunk_size_for(1000, 10, 4) == 10


def test_a_new_study_splits_its_samples_evenly_over_the_fewest_chunks():
    assert chunk_size_for(None, 1025, 1) == 513  # two chunks of 513, not 1 024 and a padded 1
    assert chunk_size_for(None, 10_002, 2) == 2001  # 1 024 per device: five chunks of 2 001
    assert chunk_size_for(None, 100, 2) == 100
    assert chunk_size_for(1024, 1025, 1) == 1024  # a size asked for is kept
    for n, devices in ((1, 1), (1024, 1), (1025, 1), (4100, 2), (10_002, 2), (100_000, 4)):
        chunk, most = chunk_size_for(None, n, devices), CHUNK_PER_DEVICE * devices
        n_chunks = -(-n // chunk)
        assert chunk <= most and n_chunks == -(-n // most)  # the fewest chunks the default allows
        assert n_chunks * chunk - n < n_chunks  # padding below one sample per chunk


FOUR_DEVICES = textwrap.dedent("""
    import os, sys, json
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=" + sys.argv[1]
    import jax
    jax.config.update("jax_enable_x64", True)
    import numpy as np
    sys.path.insert(0, sys.argv[2])
    from tests.studies.test_runner import evaluate, _inputs
    from jaxcontact.studies.runner import run_samples
    r = run_samples(evaluate, _inputs(150), chunk_size=30, progress=False)
    np.savez(sys.argv[3], **r.outputs)
    print(json.dumps({"devices": jax.device_count(), "chunk": r.chunk_size}))
""")


def test_same_numbers_on_four_devices(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    results = {}
    for ndev in (1, 4):
        out = tmp_path / f"out{ndev}.npz"
        proc = subprocess.run(
            [sys.executable, "-c", FOUR_DEVICES, str(ndev), root, str(out)], capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stderr
        info = json.loads(proc.stdout.strip().splitlines()[-1])
        assert info["devices"] == ndev
        assert info["chunk"] == 30  # padded to 32 on 4 devices
        with np.load(out) as z:
            results[ndev] = {k: z[k] for k in z.files}
    for k in results[1]:
        np.testing.assert_array_equal(results[4][k], results[1][k])


LAPACK_ON_TWO_DEVICES = textwrap.dedent("""
    import os, sys, json, warnings
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    import jax, jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    from jax.scipy.linalg import cho_factor, cho_solve
    from jaxcontact.studies.runner import run_samples

    def solve(s):  # a 13 x 13 SPD solve: LAPACK potrf/trsm custom calls on CPU
        a = jnp.eye(13) * (2.0 + s["x"]) + 0.1
        return {"y": cho_solve(cho_factor(a), jnp.ones(13))[0]}

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = run_samples(solve, {"x": jnp.linspace(0.0, 1.0, 64)}, chunk_size=32, progress=False)
    print(json.dumps({"devices": jax.device_count(), "used": r.n_devices, "y0": float(r.outputs["y"][0]),
                      "warned": any("LAPACK" in str(x.message) for x in w)}))
""")


def test_program_calling_lapack_runs_on_one_of_two_devices_and_says_so():
    """jax 0.10.2's LAPACK calls can hang on several CPU host devices: the runner falls back to one."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run(
        [sys.executable, "-c", LAPACK_ON_TWO_DEVICES], capture_output=True, text=True, timeout=300, cwd=root
    )
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    assert info["devices"] == 2 and info["used"] == 1 and info["warned"]
    a = np.eye(13) * 2.0 + 0.1
    assert abs(info["y0"] - np.linalg.solve(a, np.ones(13))[0]) < 1e-12


SPLIT_ON_TWO_DEVICES = textwrap.dedent("""
    import os, sys, json, warnings
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    import jax, jax.numpy as jnp, numpy as np
    jax.config.update("jax_enable_x64", True)
    from jax.scipy.linalg import cho_factor, cho_solve
    from jaxcontact.studies.runner import SplitProgram

    def scaled(x, a):  # x a batch of rows, a shared by all
        return (x * a).sum(axis=1), x + a

    def solved(x, a):  # a 13 x 13 SPD solve per row: LAPACK custom calls on CPU
        one = lambda r: cho_solve(cho_factor(jnp.eye(13) * (2.0 + r[0]) + a[0]), jnp.ones(13))[0]
        return (jax.vmap(one)(x),)

    x, a = np.arange(24.0).reshape(8, 3), np.array([0.1, 2.0, 3.0])
    plain = SplitProgram(scaled, (True, False))
    s, y = plain(x, a)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lapack = SplitProgram(solved, (True, False), desc="the solve")
        (z,) = lapack(x, a)
    print(json.dumps({"devices": [plain.devices, lapack.devices], "s": s.tolist(), "y": y.tolist(),
                      "z": z.tolist(), "warned": [str(m.message) for m in w if "LAPACK" in str(m.message)]}))
""")


def test_split_program_runs_each_devices_share_and_lapack_on_one_device():
    """A batched program split over two host devices gives the one-device numbers; one that calls LAPACK runs on
    one device and says so, as a study does."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run(
        [sys.executable, "-c", SPLIT_ON_TWO_DEVICES], capture_output=True, text=True, timeout=300, cwd=root
    )
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    x, a = np.arange(24.0).reshape(8, 3), np.array([0.1, 2.0, 3.0])
    assert info["devices"] == [2, 1]
    np.testing.assert_array_equal(info["s"], (x * a).sum(axis=1))
    np.testing.assert_array_equal(info["y"], x + a)
    want = [np.linalg.solve(np.eye(13) * (2.0 + r[0]) + 0.1, np.ones(13))[0] for r in x]
    np.testing.assert_allclose(info["z"], want, rtol=1e-12)
    assert info["warned"] == [
        "the solve: the compiled program calls LAPACK, which can hang on several CPU host "
        "devices; running it on one device"
    ]
