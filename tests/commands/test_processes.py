"""``jaxcontact mc`` over several processes (jax.distributed on 127.0.0.1), as a user runs it.

The default four-bar study (reduced n, chunks of 8) is run once by one process;
then by two processes (``--processes 2``) whose summary.json must be equal to
the one-process summary (timing aside) and whose samples.npz must be the same
bytes. Then a two-process run started by hand (``--coordinator``,
``--num-processes``, ``--process-id``) is killed with SIGKILL after its first
chunks are written; rerunning the study must complete it from the saved chunks
with the same summary.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time

STUDY = (
    "mc",
    "four-bar",
    "--n",
    "40",
    "--t-final",
    "0.2",
    "--chunk",
    "8",
    "--devices",
    "1",
    "--bootstrap",
    "50",
    "--no-plots",
    "--quiet",
)
TIMEOUT = 240


def _cli(args):
    return [sys.executable, "-m", "jaxcontact.cli", *args]


def _run(args, cwd):
    proc = subprocess.run(_cli(args), cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    return proc


def _summary(path):
    s = json.loads(path.read_text())
    s.pop("timing")
    return s


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_give_one_process_numbers_and_a_killed_study_resumes(tmp_path):
    _run([*STUDY, "--out", "one"], tmp_path)
    one = _summary(tmp_path / "one" / "summary.json")

    _run([*STUDY, "--processes", "2", "--out", "two"], tmp_path)
    assert _summary(tmp_path / "two" / "summary.json") == one
    assert (tmp_path / "two" / "samples.npz").read_bytes() == (tmp_path / "one" / "samples.npz").read_bytes()
    chunks = tmp_path / "two" / "chunks"
    assert (chunks / "manifest.json").exists() and (chunks / "manifest.p1.json").exists()

    # Started by hand as on a cluster; both processes are killed -9 once each has written a chunk.
    coordinator = f"127.0.0.1:{_free_port()}"
    procs = [
        subprocess.Popen(
            _cli(
                [
                    *STUDY,
                    "--out",
                    "killed",
                    "--coordinator",
                    coordinator,
                    "--num-processes",
                    "2",
                    "--process-id",
                    str(k),
                ]
            ),
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for k in range(2)
    ]
    try:
        killed = tmp_path / "killed" / "chunks"
        # chunk 2 belongs to process 0 and follows its chunk 0 (written and recorded); chunk 3 likewise for process 1
        signs = [killed / "chunk_00002.npz", killed / "chunk_00003.npz"]
        deadline = time.time() + TIMEOUT
        while not all(p.exists() for p in signs) and all(p.poll() is None for p in procs) and time.time() < deadline:
            time.sleep(0.02)
        running = [p.poll() is None for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
    assert all(running), "the study finished before it could be killed; make it longer"
    assert not (tmp_path / "killed" / "summary.json").exists()

    done = _run([*STUDY, "--processes", "2", "--out", "killed"], tmp_path)
    assert _summary(tmp_path / "killed" / "summary.json") == one
    assert "samples resumed from disk" in done.stdout
    resumed = int(done.stdout.split(" samples resumed from disk")[0].split()[-1])
    assert resumed >= 8  # process 0's chunk 0 at least


def test_process_options_are_refused_by_name(capsys):
    from jaxcontact.cli import main

    cases = [
        (["--coordinator", "127.0.0.1:1"], "--coordinator, --num-processes and --process-id go together"),
        (
            ["--coordinator", "127.0.0.1:1", "--num-processes", "2", "--process-id", "2"],
            "--process-id 2 must be < --num-processes 2",
        ),
        (["--coordinator", "nohost", "--num-processes", "2", "--process-id", "0"], "must be HOST:PORT"),
        (
            ["--processes", "2", "--coordinator", "127.0.0.1:1", "--num-processes", "2", "--process-id", "0"],
            "do not combine it with --coordinator",
        ),
        (["--processes", "2", "--method", "pce"], "run --method mc studies only"),
    ]
    for extra, message in cases:
        assert main(["mc", "four-bar", "--out", "unused", *extra]) == 2
        assert message in capsys.readouterr().err
