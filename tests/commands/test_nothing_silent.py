"""Nothing silent: Ctrl-C, a full disk on resume, two runs on one folder, the compile cache.

Ctrl-C and the compile cache are checked as a user meets them (subprocesses);
the disk and lock checks run ``jaxcontact.cli.main`` in this process, where
they refuse (or pass ``--check``) before anything compiles.
"""

import contextlib
import fcntl
import io
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from jaxcontact import cli
from jaxcontact.commands import checks

TIMEOUT = 300


def _popen(args, cwd, env=None):
    return subprocess.Popen(
        [sys.executable, "-m", "jaxcontact.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        # As from a terminal, where Ctrl-C acts: a suite run as a background job starts with SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _main(argv) -> tuple[int, str]:
    """Run the command line in this process (no compile cache: it would change this process's jax config)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = cli.main([*argv, "--no-compile-cache"])
    return rc, err.getvalue()


# ---------------------------------------------------------------- Ctrl-C


def test_ctrl_c_while_compiling_exits_130_every_time(tmp_path):
    # Interpreter teardown raced XLA's threads and died of SIGSEGV (-11) in about one try of three.
    args = ["mc", "four-bar", "--n", "8", "--devices", "1", "--no-plots", "--quiet", "--no-compile-cache"]
    for k in range(4):
        proc = _popen([*args, "--out", f"o{k}"], tmp_path)
        plan = proc.stdout.readline()  # printed just before the study compiles
        assert plan.startswith("four-bar:"), (plan, proc.stderr.read())
        time.sleep(0.5)  # not a timing: lands the signal inside the compile, where the crash happened most
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 130, (k, proc.returncode, err)
        assert "interrupted:" in err and "Traceback" not in err, err


def test_ctrl_c_while_a_fit_compiles_exits_130(tmp_path):
    np.savez(tmp_path / "d.npz", t=np.linspace(0.0, 0.5, 51), y=np.ones((51, 1)))
    for k in range(2):
        proc = _popen(
            [
                "identify",
                "bouncing-ball",
                "--data",
                "d.npz",
                "--fit",
                "restitution",
                "--no-plots",
                "--no-compile-cache",
                "--out",
                f"f{k}",
            ],
            tmp_path,
        )
        assert proc.stdout.readline().startswith("bouncing-ball: fitting")
        time.sleep(0.5)  # not a timing: lands the signal inside the compile
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 130, (k, proc.returncode, err)
        assert "jaxcontact identify: interrupted" in err and "Traceback" not in err, err
        assert not (tmp_path / f"f{k}" / "fit.json").exists()


def test_ctrl_c_inside_a_long_compiled_run_exits_130_at_once(tmp_path):
    # One compiled call of 1e10 steps (many minutes): Python's own handler would wait for it to return.
    args = ["simulate", "bouncing-ball", "--t-final", "1e6", "--dt", "1e-4", "--save-every", "10000000"]
    proc = _popen([*args, "--allow-large", "--no-plots", "--no-compile-cache", "--out", "o"], tmp_path)
    time.sleep(10)  # not a timing: lets the import and the compile finish, so the signal lands in the run
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, err)
    assert "interrupted" in err and "Traceback" not in err, err
    assert not (tmp_path / "o" / "trajectory.npz").exists()


# ---------------------------------------------------------------- a full disk


def _fake_saved_chunks(chunks, n_samples, chunk_size, saved_chunks):
    """A study folder whose manifest vouches for ``saved_chunks`` chunks (as ``saved_samples`` reads it)."""
    chunks.mkdir(parents=True)
    (chunks / "manifest.json").write_text(
        json.dumps(
            {"n_samples": n_samples, "chunk_size": chunk_size, "checksums": {str(i): "0" for i in range(saved_chunks)}}
        )
    )
    for i in range(saved_chunks):
        (chunks / f"chunk_{i:05d}.npz").write_bytes(b"")


def test_a_resume_needs_disk_for_what_is_left_and_is_advised_to_make_room(tmp_path, monkeypatch):
    study = ["mc", "bouncing-ball", "--n", "8", "--no-sobol", "--devices", "1", "--out", str(tmp_path / "s"), "--check"]
    sizes = []
    real_check = checks.check_size
    monkeypatch.setattr(checks, "check_size", lambda size, *a, **k: sizes.append(size) or real_check(size, *a, **k))
    monkeypatch.setattr(checks, "_free_disk", lambda folder: float("inf"))
    assert _main(study)[0] == 0
    full = sizes[-1].disk_bytes

    # half the samples saved: samples.npz (all) plus the missing half of the chunks = 3/4 of a fresh start
    _fake_saved_chunks(tmp_path / "s" / "chunks", n_samples=8, chunk_size=4, saved_chunks=1)
    monkeypatch.setattr(checks, "_free_disk", lambda folder: 0.9 * full)
    rc, err = _main(study)
    assert rc == 0, err
    assert sizes[-1].disk_bytes == pytest.approx(0.75 * full)

    monkeypatch.setattr(checks, "_free_disk", lambda folder: 0.5 * full)
    rc, err = _main(study)
    assert rc == 2 and err.count("\n") == 1, err
    assert "free space on that disk" in err and "--n" not in err and "--allow-large" in err

    rc, err = _main([*study, "--allow-large"])
    assert rc == 0, err
    assert err.startswith("warning:") and "running anyway (--allow-large)" in err


def test_a_new_study_too_large_for_the_disk_can_still_be_forced(tmp_path, monkeypatch):
    monkeypatch.setattr(checks, "_free_disk", lambda folder: 1.0)
    study = ["mc", "bouncing-ball", "--n", "8", "--no-sobol", "--devices", "1", "--out", str(tmp_path / "s"), "--check"]
    rc, err = _main(study)
    assert rc == 2 and "more than the 1 B free" in err and "smaller --n" in err and "--allow-large" in err
    rc, err = _main([*study, "--allow-large"])
    assert rc == 0 and "running anyway" in err


# ---------------------------------------------------------------- one writer per folder


@contextlib.contextmanager
def _held_lock(folder, pid="4242"):
    """Another run's lock on ``folder``: an open file description holding flock (as another process would)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / checks.LOCK_FILE, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        f.write(pid)
        f.flush()
        yield


def test_a_second_mc_run_on_a_busy_folder_is_refused_by_name(tmp_path):
    out = tmp_path / "busy"
    with _held_lock(out):
        rc, err = _main(
            [
                "mc",
                "bouncing-ball",
                "--n",
                "4",
                "--no-sobol",
                "--devices",
                "1",
                "--no-plots",
                "--quiet",
                "--out",
                str(out),
            ]
        )
    assert rc == 2, err
    assert f"study folder {str(out)!r} is in use by another jaxcontact run (pid 4242)" in err
    assert err.count("\n") == 1 and not (out / "chunks").exists()


def test_a_second_identify_run_on_a_busy_folder_is_refused(tmp_path):
    np.savez(tmp_path / "d.npz", t=np.linspace(0.0, 0.5, 51), y=np.ones((51, 1)))
    out = tmp_path / "fit"
    with _held_lock(out, pid="77"):
        rc, err = _main(
            [
                "identify",
                "bouncing-ball",
                "--data",
                str(tmp_path / "d.npz"),
                "--fit",
                "restitution",
                "--no-plots",
                "--out",
                str(out),
            ]
        )
    assert rc == 2 and "is in use by another jaxcontact run (pid 77)" in err, err
    assert not (out / "fit.json").exists()


def test_a_lock_left_by_a_dead_process_does_not_block(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / checks.LOCK_FILE).write_text(dead.stdout.strip())  # its file stays, its flock went with it
    checks.lock_folder(str(tmp_path))
    try:
        assert (tmp_path / checks.LOCK_FILE).read_text() == str(os.getpid())
        with pytest.raises(ValueError, match=f"in use by another jaxcontact run \\(pid {os.getpid()}\\)"):
            checks.lock_folder(str(tmp_path))  # held now, even against this process's second try
    finally:
        checks.release_locks()
    checks.lock_folder(str(tmp_path))  # released: free again
    checks.release_locks()


def test_a_command_releases_its_folder_when_it_ends(tmp_path):
    # A command run twice in one process (a test, a notebook) must not find its own earlier run in the way.
    @checks.releases_locks
    def run(args):
        checks.lock_folder(str(tmp_path))
        if args == "fail":
            raise RuntimeError("the command failed")
        return 0

    assert run("ok") == 0
    with pytest.raises(RuntimeError):
        run("fail")
    assert run("ok") == 0


# ---------------------------------------------------------------- compile cache


def test_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("JAXCONTACT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cli.compile_cache_dir() == str(tmp_path / "xdg" / "jaxcontact" / "jax-cache")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cli.compile_cache_dir() == str(tmp_path / "home" / ".cache" / "jaxcontact" / "jax-cache")
    monkeypatch.setenv("JAXCONTACT_CACHE_DIR", str(tmp_path / "mine"))
    assert cli.compile_cache_dir() == str(tmp_path / "mine")


def test_compiled_programs_are_kept_between_runs_unless_told_not_to(tmp_path):
    run = ["simulate", "bouncing-ball", "--t-final", "0.2", "--no-plots"]
    cache = tmp_path / "cache"
    for k in range(2):
        proc = _popen([*run, "--out", f"o{k}"], tmp_path, env={"JAXCONTACT_CACHE_DIR": str(cache)})
        out, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0 and "Traceback" not in err, err
        assert any(cache.iterdir()), "nothing was cached"
    off = tmp_path / "off"
    proc = _popen([*run, "--out", "o2", "--no-compile-cache"], tmp_path, env={"JAXCONTACT_CACHE_DIR": str(off)})
    assert proc.communicate(timeout=TIMEOUT) and proc.returncode == 0
    assert not off.exists()


def test_an_unwritable_cache_folder_warns_and_runs(tmp_path):
    (tmp_path / "afile").write_text("")
    proc = _popen(
        ["simulate", "bouncing-ball", "--t-final", "0.1", "--no-plots", "--out", "o"],
        tmp_path,
        env={"JAXCONTACT_CACHE_DIR": str(tmp_path / "afile" / "cache")},
    )
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert "warning: compile cache off:" in err and "--no-compile-cache" in err


_CTRL_C_IN_A_GC_CALLBACK = """
import gc, os, signal, sys, time
from jaxcontact import cli
cli._watch_interrupts()
fired = []
def callback(phase, info):
    if phase == "start" and not fired:
        fired.append(True)
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(200000):  # Python runs the handler here, inside the callback
            pass
gc.callbacks.append(callback)
try:
    gc.collect()
    gc.callbacks.remove(callback)
    time.sleep(10)
    sys.exit("the interrupt was lost")
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_ctrl_c_inside_a_garbage_collector_callback_is_not_lost():
    """The collector prints and drops what its callbacks raise (JAX frees device buffers in one): a Ctrl-C
    whose handler runs there is sent again and interrupts the main thread after the callback."""
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_IN_A_GC_CALLBACK],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert done.returncode == 130, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr
