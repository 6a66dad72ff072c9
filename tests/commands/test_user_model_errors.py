"""An exception raised in a user's model file ends in one line naming the file and line, exit status 2."""

import pytest

from jaxcontact.cli import main

HEADER = "from jaxcontact.models import get_model\n"


def _one_line(capsys, argv):
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    return line


@pytest.mark.parametrize(
    "body, fn, line, error",
    [
        # raised while the file is imported
        (HEADER + "raise RuntimeError('no such table')\n", "model", 2, "RuntimeError: no such table"),
        # raised by the model function, two lines into it
        (HEADER + "def model(**kw):\n    x = 1\n    return x / 0\n", "model", 4, "ZeroDivisionError: division by zero"),
        # raised by a helper of the file called from the model function: the deepest frame in the file
        (
            HEADER + "def helper(p):\n    return p['missing']\n\ndef model(**kw):\n    return helper({})\n",
            "model",
            3,
            "KeyError: 'missing'",
        ),
        (HEADER + "def model(**kw)\n    return 1\n", "model", 2, "SyntaxError: "),
    ],
)
def test_error_in_a_user_model_is_one_line_with_file_and_line(tmp_path, monkeypatch, capsys, body, fn, line, error):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text(body)
    got = _one_line(capsys, ["simulate", f"mine.py:{fn}", "--out", "out"])
    assert got.startswith(f"jaxcontact simulate: error in user model mine.py:{line}: {error}"), got
    assert not (tmp_path / "out").exists()


def test_a_file_outside_the_working_folder_is_named_in_full(tmp_path, monkeypatch, capsys):
    (tmp_path / "models").mkdir()
    (tmp_path / "work").mkdir()
    model = tmp_path / "models" / "bad.py"
    model.write_text("def model(**kw):\n    raise RuntimeError('bad')\n")
    monkeypatch.chdir(tmp_path / "work")
    got = _one_line(capsys, ["mc", f"{model}:model", "--param", "x=uniform(0,1)", "--n", "4", "--out", "o"])
    assert got == f"jaxcontact mc: error in user model {model}:2: RuntimeError: bad"


def test_a_rewritten_model_file_is_loaded_again_whatever_its_modification_time(tmp_path):
    """A user model file rewritten gives the new contents' model, also where its modification time is the first
    version's (set back here, as a rewrite within one tick of the file system's clock leaves it)."""
    import os

    from jaxcontact.models import get_model

    mine = tmp_path / "mine.py"
    body = HEADER + "def model(**kw):\n    return get_model('bouncing-ball', restitution={}, **kw)\n"
    mine.write_text(body.format(0.3))
    stamp = os.stat(mine).st_mtime_ns
    assert float(get_model(f"{mine}:model").params["restitution"]) == 0.3
    mine.write_text(body.format(0.6))
    os.utime(mine, ns=(stamp, stamp))
    assert float(get_model(f"{mine}:model").params["restitution"]) == 0.6
