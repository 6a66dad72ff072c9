"""The ``jaxcontact`` command line: one sub-command per module in ``jaxcontact.commands``.

Each command module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``; listing it in ``COMMANDS`` is all it takes to appear here.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings

COMMANDS = ("simulate", "mc", "identify", "models", "params", "contact_problem", "lcp_demo")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("jaxcontact")
    except PackageNotFoundError:  # run from a source tree without installing
        return "unknown (not installed)"


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as one line (``warning: …``), not the source line that raised them."""
    print(f"warning: {message}", file=sys.stderr if file is None else file)


def main(argv=None) -> int:
    """Parse the command line and run the chosen sub-command; returns its exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="jaxcontact", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"jaxcontact {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = {}
    for mod_name in COMMANDS:
        mod = importlib.import_module(f"jaxcontact.commands.{mod_name}")
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        modules[mod.NAME] = mod
    args = parser.parse_args(argv)
    args.argv = argv  # the command line as typed, for the "resume with" hint
    warnings.showwarning = _show_warning
    from jaxcontact.commands import checks

    checks.forget_created()
    try:
        rc = modules[args.command].run(args)
        if rc == 2 or getattr(args, "check", False):
            checks.discard_created()
        return rc
    except KeyboardInterrupt:
        # Commands that can resume (mc) say how; the others have nothing to keep.
        print(f"\njaxcontact {args.command}: interrupted; nothing was written after the last message", file=sys.stderr)
        return 130
    except Exception as e:
        from jaxcontact.models import user_model_error

        line = user_model_error(e)
        if line is None and isinstance(e, OSError):
            # The checks prove the output folder writable up front; a disk that fills up later still gets one line.
            print(f"jaxcontact {args.command}: error: {e.strerror or e}: {e.filename or ''}".rstrip(": "),
                  file=sys.stderr)
            return 1
        if line is None:
            raise
        # An error in the user's own model file: its line, not jaxcontact's traceback, is what to fix.
        print(f"jaxcontact {args.command}: {line}", file=sys.stderr)
        checks.discard_created()
        return 2


if __name__ == "__main__":
    sys.exit(main())
