"""The ``jaxcontact`` command line: one sub-command per module in ``jaxcontact.commands``.

Each command module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``; listing it in ``COMMANDS`` is all it takes to appear here.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import signal
import sys
import threading
import warnings
from typing import NoReturn

COMMANDS = ("simulate", "mc", "identify", "predict", "models", "params", "contact_problem", "lcp_demo")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("jaxcontact")
    except PackageNotFoundError:  # run from a source tree without installing
        return "unknown (not installed)"


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings as one line (``warning: …``), not the source line that raised them."""
    print(f"warning: {message}", file=sys.stderr if file is None else file)


def compile_cache_dir() -> str:
    """Where compiled programs are kept between runs: ``$JAXCONTACT_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/jaxcontact/jax-cache`` (``~/.cache`` when XDG_CACHE_HOME is unset)."""
    if os.environ.get("JAXCONTACT_CACHE_DIR"):
        return os.environ["JAXCONTACT_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jaxcontact", "jax-cache")


# A study compiles one program per chunk shape in seconds to minutes; smaller programs (setup, statistics)
# compile in tenths of a second, and keeping those too makes a repeated command start at once.
CACHE_MIN_COMPILE_SECONDS = 0.1


def use_compile_cache(folder: str) -> None:
    """Keep XLA's compiled programs in ``folder`` (JAX's persistent compilation cache), so the same command
    compiles once. A folder that cannot be written turns the cache off with a warning: the run goes on."""
    from jaxcontact.commands import checks

    try:
        checks.prove_writable(folder)
    except OSError as e:
        print(
            f"warning: compile cache off: {folder!r} cannot be created or written ({e.strerror or e}); set "
            "JAXCONTACT_CACHE_DIR to another folder, or give --no-compile-cache",
            file=sys.stderr,
        )
        return
    import jax

    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", CACHE_MIN_COMPILE_SECONDS)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def _add_common_options(p: argparse.ArgumentParser) -> None:
    """Options every command takes."""
    p.add_argument(
        "--no-compile-cache",
        action="store_true",
        help="do not keep compiled programs between runs (default: kept in $JAXCONTACT_CACHE_DIR, else "
        "$XDG_CACHE_HOME/jaxcontact/jax-cache or ~/.cache/jaxcontact/jax-cache)",
    )


def _leave(rc: int) -> NoReturn:
    """End this process now after Ctrl-C: the interpreter's normal teardown races XLA's compiler and runtime
    threads, still running, and can die of SIGSEGV after the "interrupted" line. Everything a command keeps
    is on disk by then (a study's chunks are written atomically, before their manifest entry)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)


# How long the main thread has to answer Ctrl-C itself (its "interrupted" line says what a command kept)
# before the watchdog ends the process: a compiled call holds the main thread until it returns.
INTERRUPT_GRACE_SECONDS = 2.0


def _watch_interrupts() -> None:
    """End the process at Ctrl-C even while the main thread is inside a long compiled call.

    Python runs its SIGINT handler only between bytecodes of the main thread, so a KeyboardInterrupt waits
    until XLA returns, which for a study's chunk or a long simulation can be minutes. The C-level handler
    writes the signal number to a wakeup pipe at once; a daemon thread (XLA releases the GIL while it
    compiles and runs) reads it and, if the main thread has not begun to handle the interrupt within
    ``INTERRUPT_GRACE_SECONDS``, prints the interrupted line and leaves with 130. What is on disk stays:
    studies write each chunk atomically before its manifest entry. A process started with SIGINT ignored
    (a background job of a script) keeps ignoring it, as Python itself does."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    handled = threading.Event()

    def on_sigint(signum, frame):
        if _inside_gc_callback(frame):
            # The collector prints and drops what its callbacks raise (JAX frees buffers in one): the interrupt
            # would be lost. The signal is sent again, to land after the callback has returned.
            threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT)).start()
            return
        handled.set()
        raise KeyboardInterrupt

    def watch():
        while True:
            if signal.SIGINT not in os.read(read_fd, 64):
                continue
            if handled.wait(INTERRUPT_GRACE_SECONDS):
                return  # the main thread answers it (a command may need time to stop its workers)
            from jaxcontact.commands import checks

            note = (
                checks.interrupt_note()
                or "jaxcontact: interrupted during a compiled computation; nothing was written after the last message"
            )
            print("\n" + note, file=sys.stderr)
            _leave(130)

    signal.signal(signal.SIGINT, on_sigint)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    threading.Thread(target=watch, name="jaxcontact-interrupt-watch", daemon=True).start()


def _inside_gc_callback(frame) -> bool:
    """Whether ``frame`` runs inside one of the garbage collector's callbacks (``gc.callbacks``)."""
    codes = {getattr(cb, "__code__", None) for cb in gc.callbacks} - {None}
    while frame is not None:
        if frame.f_code in codes:
            return True
        frame = frame.f_back
    return False


def main(argv=None) -> int:
    """Parse the command line and run the chosen sub-command; returns its exit status.

    Without ``argv`` it runs as the process's own command line: an interrupted command (exit status 130)
    then ends the process at once (``_leave``) instead of returning."""
    if argv is None:
        _watch_interrupts()
        try:
            rc = main(sys.argv[1:])
        except KeyboardInterrupt:  # Ctrl-C before a command started (while parsing or importing)
            print("\njaxcontact: interrupted before the command started; nothing was written", file=sys.stderr)
            rc = 130
        if rc == 130:
            _leave(rc)
        return rc
    argv = list(argv)
    parser = argparse.ArgumentParser(prog="jaxcontact", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"jaxcontact {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = {}
    for mod_name in COMMANDS:
        mod = importlib.import_module(f"jaxcontact.commands.{mod_name}")
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        _add_common_options(p)
        modules[mod.NAME] = mod
    args = parser.parse_args(argv)
    args.argv = argv  # the command line as typed, for the "resume with" hint
    warnings.showwarning = _show_warning
    from jaxcontact.commands import checks

    checks.forget_created()
    checks.note_on_interrupt(None)
    if not args.no_compile_cache:
        use_compile_cache(compile_cache_dir())
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
            print(
                f"jaxcontact {args.command}: error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), file=sys.stderr
            )
            return 1
        if line is None:
            raise
        # An error in the user's own model file: its line, not jaxcontact's traceback, is what to fix.
        print(f"jaxcontact {args.command}: {line}", file=sys.stderr)
        checks.discard_created()
        return 2


if __name__ == "__main__":
    sys.exit(main())
