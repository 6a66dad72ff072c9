"""``jaxcontact mc`` as a user runs it (subprocess): damaged chunks, another device count, Ctrl-C.

One tiny study (8 bouncing-ball simulations of 0.5 s in 4 chunks of 2) is run
on 2 host devices; its chunk files are then truncated, bit-flipped and
rewritten with other values, and the study is resumed on 1 device: each damaged
chunk must be named, set aside and recomputed, and the summary must equal the
first run's. A larger study is interrupted with SIGINT (Ctrl-C) after its
first chunks: one line must say how many samples are saved and the command that
resumes it, and that command must finish the study from the saved chunks
(tests/studies/test_montecarlo.py checks that a resumed study equals an
uninterrupted one).
"""

import json
import signal
import subprocess
import sys
import time

import numpy as np

STUDY = ("mc", "bouncing-ball", "--n", "8", "--t-final", "0.5", "--bootstrap", "50", "--no-plots", "--quiet")


def _run(args, cwd, expect=0):
    proc = subprocess.run(
        [sys.executable, "-m", "jaxcontact.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == expect, (proc.stdout, proc.stderr)
    return proc


def _summary(path):
    s = json.loads(path.read_text())
    s.pop("timing")
    return s


def test_damaged_chunks_are_recomputed_and_the_study_resumes_on_another_device_count(tmp_path):
    _run([*STUDY, "--chunk", "2", "--devices", "2", "--out", "s"], tmp_path)
    first = _summary(tmp_path / "s" / "summary.json")
    chunks = tmp_path / "s" / "chunks"
    assert json.loads((chunks / "manifest.json").read_text())["chunk_size"] == 2

    c0 = chunks / "chunk_00000.npz"
    c0.write_bytes(c0.read_bytes()[:10])  # truncated
    c1 = chunks / "chunk_00001.npz"
    raw = bytearray(c1.read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # one byte flipped
    c1.write_bytes(bytes(raw))
    c2 = chunks / "chunk_00002.npz"
    with np.load(c2) as z:
        data = {k: z[k] for k in z.files}
    data["peak_impulse"] = data["peak_impulse"] * 10.0  # a valid file with other values
    np.savez(c2, **data)

    # no --chunk: the study's recorded chunk size is used on 1 device
    proc = _run([*STUDY, "--devices", "1", "--out", "s"], tmp_path)
    for i in range(3):
        assert f"chunk_0000{i}.npz: checksum differs from the manifest's" in proc.stderr
        assert (chunks / f"chunk_0000{i}.npz.damaged").exists()
    assert "2 samples resumed from disk" in proc.stdout  # chunk 3 only
    assert _summary(tmp_path / "s" / "summary.json") == first


def test_ctrl_c_says_what_is_saved_and_how_to_resume(tmp_path):
    args = [
        "mc",
        "bouncing-ball",
        "--n",
        "6000",
        # Long enough that the study cannot end between chunk 1's file appearing and the signal arriving.
        "--t-final",
        "30",
        "--save-every",
        "3000",
        "--chunk",
        "200",
        "--devices",
        "1",
        "--bootstrap",
        "50",
        "--no-plots",
        "--out",
        "big",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "jaxcontact.cli", *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As from a terminal, where Ctrl-C acts: a suite run as a background job starts with SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # chunk 1's file appears only after chunk 0 is written and recorded in the manifest (chunk 0's own file
    # appears before its manifest entry, so signalling then could find nothing saved yet).
    first = tmp_path / "big" / "chunks" / "chunk_00001.npz"
    deadline = time.time() + 300
    while not first.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("interrupted:")]
    assert len(lines) == 1, err
    line = lines[0]
    saved = int(line.split()[1])
    assert saved >= 200 and saved % 200 == 0 and " of 6000 samples saved in big/chunks" in line
    resume = line.split("resume with: ")[1]
    assert resume == "jaxcontact " + " ".join(args)
    done = _run(resume.split()[1:] + ["--quiet"], tmp_path)
    assert f"{saved} samples resumed from disk" in done.stdout
