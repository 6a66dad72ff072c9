"""Command-line arguments shared by ``simulate``, ``mc`` and ``identify``: the model and the scheme.

The model is a built-in name or a user file, ``path/to/file.py:function`` (a function
returning a :class:`jaxcontact.models.Model`), given as the positional argument or as
``--model``. The scheme is ``--scheme NAME``, one of the registered schemes and presets
(:data:`jaxcontact.stepping.SCHEMES`, :data:`jaxcontact.stepping.PRESETS`: the list lives
there, once), with its options; an option the chosen scheme does not have is refused by name.
"""

from __future__ import annotations

import argparse
import dataclasses

from jaxcontact.commands import checks

# option dest -> the scheme field it sets (the schemes that have the field take the option)
_SCHEME_OPTIONS = {
    "theta": "theta",
    "solver": "solver",
    "iterations": "iterations",
    "impact_location": "impact_location",
    "integrator": "method",
    "implicit": "implicit",
}
# --implicit's words -> the penalty scheme's ``implicit`` (auto: where the system declares viscous forces)
_IMPLICIT = {"auto": None, "yes": True, "no": False}


def add_model_argument(p: argparse.ArgumentParser, what: str = "model") -> None:
    """The model, positional or ``--model``: a built-in name or FILE.py:FUNCTION."""
    from jaxcontact.models import REGISTRY

    p.add_argument(
        "model",
        nargs="?",
        default=None,
        help=f"{what}: a built-in name ({', '.join(sorted(REGISTRY))}), a user file FILE.py:FUNCTION "
        "(a function returning a jaxcontact.models.Model), or an MJCF/URDF file (.xml, .urdf)",
    )
    p.add_argument(
        "--model",
        dest="model_spec",
        default=None,
        metavar="NAME|FILE.py:FUNCTION|FILE.xml",
        help="the model, instead of the positional argument",
    )


def model_name(args) -> str:
    """The model named on the command line (positional or ``--model``, exactly one)."""
    if args.model is not None and args.model_spec is not None and args.model != args.model_spec:
        raise ValueError(f"two models given ({args.model!r} and --model {args.model_spec!r}): give one")
    name = args.model_spec or args.model
    if name is None:
        raise ValueError("no model given: name a built-in model or --model FILE.py:FUNCTION")
    return name


def default_out(command: str, name: str) -> str:
    """Default output folder: ``<command>-<model>`` (a user file's function name, a model file's stem)."""
    import os

    from jaxcontact.io.mjcf import is_model_file

    stem = os.path.splitext(os.path.basename(name))[0] if is_model_file(name) else name.rpartition(":")[2]
    return f"{command}-{stem}"


def add_experiment_arguments(p, verb: str) -> None:
    """``--tosses`` and ``--substeps`` of the commands that read a multi-experiment npz (``verb``: what is done
    to the chosen experiments, for the help)."""
    p.add_argument(
        "--tosses",
        default=None,
        metavar="START:STOP",
        help=f"experiments to {verb}: START:STOP[:STEP] or I,J,K (default all)",
    )
    p.add_argument(
        "--substeps",
        type=checks.positive_int,
        default=10,
        help="simulation steps per measurement sample (default 10: h = 1/1480 s at 148 Hz)",
    )


def add_scheme_arguments(p: argparse.ArgumentParser, default: str = "moreau-jean") -> None:
    """``--scheme`` and each scheme's options (an option of another scheme is refused later, by name)."""
    from jaxcontact.stepping import PRESETS, SCHEMES
    from jaxcontact.stepping.impact_location import IMPACT_LOCATIONS
    from jaxcontact.stepping.moreau_jean import ALL_SOLVERS
    from jaxcontact.stepping.penalty import METHODS

    schemes = {**SCHEMES, **PRESETS}
    p.add_argument(
        "--scheme",
        choices=tuple(schemes),
        default=None,
        help="time stepping: "
        + ", ".join(f"{name} ({cls.summary})" for name, cls in schemes.items())
        + f"; default {default}",
    )
    p.add_argument("--theta", type=checks.unit_float, default=None, help="moreau-jean: θ of the θ-method (default 0.5)")
    p.add_argument(
        "--solver",
        choices=ALL_SOLVERS,
        default=None,
        help="moreau-jean: contact solver (default auto: NSGS with friction, PGS without; newton: the "
        "semismooth Newton on Coulomb cones, spatial friction only)",
    )
    p.add_argument(
        "--iterations",
        type=checks.positive_int,
        default=None,
        help="moreau-jean: sweeps of the iterative contact solver (default 50)",
    )
    p.add_argument(
        "--impact-location",
        choices=IMPACT_LOCATIONS,
        default=None,
        help="moreau-jean: impacts on the step grid (step, the default of simulate and mc) or at the gap "
        "crossing inside the step (interpolated: motion continuous in restitution and friction; "
        "the default of identify)",
    )
    p.add_argument(
        "--integrator",
        choices=METHODS,
        default=None,
        help="penalty: fixed-step rk4 (default) or an adaptive diffrax solver inside each step",
    )
    p.add_argument(
        "--implicit",
        choices=tuple(_IMPLICIT),
        default=None,
        help="penalty: step linearly implicitly in the films and compliant contacts (a Rosenbrock-W method on "
        "RK4's tableau): yes, no, or auto (the default: where the model has lubricated joints)",
    )


def scheme_from_args(args, default: str = "moreau-jean", study_options: dict | None = None):
    """The scheme of ``--scheme`` (``default`` when not given) with the options given for it; an option the
    scheme does not have is an error. ``study_options``: registered scheme name -> options a study sets for
    that scheme and its presets (the options given on the command line take precedence)."""
    from jaxcontact.stepping import SCHEMES, scheme_named

    name = args.scheme or default
    cls = scheme_named(name)
    options = dict((study_options or {}).get(cls.family(), {}))
    fields = {f.name for f in dataclasses.fields(cls)}
    for dest, field in _SCHEME_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        if field not in fields:
            owners = [n for n, s in SCHEMES.items() if field in {f.name for f in dataclasses.fields(s)}]
            raise ValueError(
                f"--{dest.replace('_', '-')} is an option of the {', '.join(owners)} scheme, not of the {name} scheme"
            )
        options[field] = _IMPLICIT[value] if dest == "implicit" else value
    return cls(**options)
