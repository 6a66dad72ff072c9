"""Random malformed ``--set`` and ``--param`` strings: always one error line and exit code 2, never a traceback.

The command line is parsed by ``jaxcontact.cli.main`` in this process (a
subprocess per example would cost a JAX start each); any exception other than
argparse's ``SystemExit(2)`` fails the test, exactly as a traceback would.
``--check`` makes sure nothing is ever computed, and ``--devices 1`` keeps the
XLA device count of this process untouched.
"""

import contextlib
import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxcontact import cli

NAMES = ("mass", "radius", "height", "restitution", "gravity")
name = st.sampled_from(NAMES)
unknown_name = st.from_regex(r"\A[a-z_][a-z0-9_]{0,8}\Z").filter(lambda s: s not in NAMES)
not_a_number = st.text(min_size=1, max_size=8).filter(lambda s: not _is_float(s) and "\x00" not in s)
no_equals = st.text(min_size=0, max_size=20).filter(lambda s: "=" not in s and "\x00" not in s)
number = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e3, max_value=1e3).map(repr)


def _is_float(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


malformed_set = st.one_of(
    no_equals,
    st.builds(lambda v: f"={v}", number),  # no name
    st.builds(lambda n, v: f"{n}={v}", name, not_a_number),  # value not a number
    st.builds(lambda n, v: f"{n}={v}", name, st.sampled_from(["nan", "inf", "-inf", "1e999"])),  # not finite
    st.builds(lambda n, v: f"{n}={v}", unknown_name, number),  # no such parameter
    st.builds(lambda v: f"mass={v}", st.sampled_from(["0", "-1", "-0.5"])),  # breaks mass > 0
    st.builds(lambda v: f"restitution={v}", st.sampled_from(["1.5", "-0.1", "2"])),  # breaks [0, 1]
)

DISTS = {"uniform": 2, "normal": 2, "truncnormal": 4, "lognormal": 2, "fixed": 1}
args_of = st.lists(number, min_size=0, max_size=6)
malformed_param = st.one_of(
    no_equals,
    st.builds(lambda n, d, a: f"{n}={d}({','.join(a)})", name, st.sampled_from(sorted(DISTS)), args_of).filter(
        lambda s: s.count(",") + 1 != DISTS[s.split("=")[1].split("(")[0]] or s.endswith("()")
    ),  # wrong arity
    st.builds(lambda n, d: f"{n}={d}(0,1)", name, unknown_name.filter(lambda d: d not in DISTS)),  # no such dist
    st.builds(lambda n, x: f"{n}=uniform({x},1)", name, not_a_number.filter(lambda s: "," not in s and ")" not in s)),
    st.builds(lambda n, a, b: f"{n}=uniform({max(a, b)},{min(a, b)})", name, st.integers(0, 9), st.integers(0, 9)),
    st.builds(lambda n: f"{n}=normal(0,1)", st.sampled_from(["mass", "restitution", "radius"])),  # support too wide
    st.builds(lambda n: f"{n}=uniform(0.1,0.2)", unknown_name),  # no such parameter
    st.builds(lambda n: f"{n}=uniform(0.1,0.2", name),  # unclosed
)


def _exit_code(argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = cli.main(argv)
        except SystemExit as e:  # argparse
            rc = e.code
    return rc, err.getvalue()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sets=st.lists(malformed_set, min_size=1, max_size=2), command=st.sampled_from(["simulate", "mc"]))
def test_malformed_set_is_a_clean_error(tmp_path_factory, sets, command):
    out = tmp_path_factory.getbasetemp() / "malformed"
    extra = ["--devices", "1"] if command == "mc" else []
    rc, err = _exit_code(
        [command, "bouncing-ball", *[f"--set={s}" for s in sets], *extra, "--check", "--out", str(out)]
    )
    assert rc == 2, (sets, err)
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    assert len(lines) == 1 and "Traceback" not in err, err


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(param=malformed_param)
def test_malformed_param_is_a_clean_error(tmp_path_factory, param):
    out = tmp_path_factory.getbasetemp() / "malformed"
    rc, err = _exit_code(["mc", "bouncing-ball", f"--param={param}", "--devices", "1", "--check", "--out", str(out)])
    assert rc == 2, (param, err)
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    assert len(lines) == 1 and "Traceback" not in err, err
