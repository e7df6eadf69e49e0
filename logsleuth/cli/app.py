"""The ``logsleuth`` command line: the app, its commands, and error handling in one place.

Thin: each command module parses its options, calls the pipeline, and hands the result to a
renderer. Heavy modules (polars, the pipeline) are imported inside the commands so ``--help`` stays
fast. Exit codes: 0 done, 1 "nothing found" (events) or a finding at/above ``--fail-on`` (analyze),
2 bad input or usage, 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from logsleuth import __version__
from logsleuth.cli import analyze, config, events, inspect, man, patterns, show, templates, timeline
from logsleuth.cli.examples import epilog, root_epilog
from logsleuth.cli.lean import install as _lean_options
from logsleuth.errors import LogsleuthError

_lean_options()  # option values coerced without importing pydantic (cli/lean.py)

_SETTINGS = dict(
    name="logsleuth",
    help="Log forensics for message-broker incidents (Pulsar, Kafka Java producer, sarama).",
    epilog=root_epilog(),
    no_args_is_help=True,
    add_completion=True,  # --install-completion, --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app = typer.Typer(**_SETTINGS)  # type: ignore[arg-type]



# each command, by name, as it is added to an app (in the order 'logsleuth --help' lists them)
_ADD = {
    "inspect": lambda a: a.command(epilog=epilog("inspect"))(inspect.inspect),
    "events": lambda a: a.command(epilog=epilog("events"))(events.events),
    "analyze": lambda a: a.command(epilog=epilog("analyze"))(analyze.analyze),
    "report": lambda a: a.command(epilog=epilog("report"))(analyze.report),
    "timeline": lambda a: a.command(epilog=epilog("timeline"))(timeline.timeline),
    "templates": lambda a: a.command(epilog=epilog("templates"))(templates.templates),
    "show": lambda a: a.command(epilog=epilog("show"))(show.show),
    "patterns": lambda a: a.add_typer(patterns.app, name="patterns"),
    "config": lambda a: a.command(epilog=epilog("config"))(config.config),
    "man": lambda a: a.command(epilog=epilog("man"))(man.man),
}
for _add in _ADD.values():
    _add(app)


def _version(value: bool) -> None:
    if value:
        print(f"logsleuth {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version.")] = False,
) -> None:
    pass


def _app_for(args: list[str]) -> typer.Typer:
    """The app that runs these arguments: for ``logsleuth COMMAND ...``, one with only that command
    (typer builds every command's click object, options and help on each run: ~25 ms for the ten,
    most of which the run never uses); the whole app for everything else (the root's help and
    options, an unknown command and its suggestions, shell completion, and ``man``, which reads the
    whole command tree)."""
    name = args[0] if args else None
    if name not in _ADD or name == "man" or "_LOGSLEUTH_COMPLETE" in os.environ:
        return app
    one = typer.Typer(**_SETTINGS)  # type: ignore[arg-type]
    _ADD[name](one)
    one.callback()(_root)
    return one


def main(argv: list[str] | None = None) -> None:
    """Entry point: every failure becomes one line on stderr and an exit code."""
    try:  # typer >= 0.2x carries its own copy of click
        from typer._click.exceptions import ClickException
    except ImportError:  # pragma: no cover
        from click.exceptions import ClickException

    debug = bool(os.environ.get("LOGSLEUTH_DEBUG"))
    _closed_streams()
    if not debug:
        _quiet_python()
    code = 0
    from logsleuth.cli import options

    args = list(argv if argv is not None else sys.argv[1:])
    _new_run(args)
    own = argv is None  # the program itself, not a caller in its own process (tests, embedding): its handlers stay its own
    if own:
        _terminate_cleanly()
    try:
        rv = _app_for(args)(args=argv, standalone_mode=False, prog_name="logsleuth")
        code = rv if isinstance(rv, int) else 0
    except Terminated as e:  # SIGTERM, SIGHUP: the temporary directories go as at a normal exit
        _ignore_sigint(own)
        code = 128 + e.signum
    except typer.Exit as e:
        code = e.exit_code
    except (typer.Abort, KeyboardInterrupt):
        _ignore_sigint(own)
        code = 130
    except ClickException as e:  # usage errors: one line too, like every other error
        ctx = getattr(e, "ctx", None)
        if type(e).__name__ == "NoArgsIsHelpError" and ctx is not None:  # 'logsleuth' alone: the help
            print(ctx.get_help())
            sys.exit(0)
        where = ctx.command_path if ctx is not None and getattr(ctx, "command_path", None) else "logsleuth"
        print(f"logsleuth: error: {_one_line(e.format_message())} (see '{where} --help')", file=sys.stderr)
        code = e.exit_code
    except LogsleuthError as e:
        print(f"logsleuth: error: {_one_line(str(e))}", file=sys.stderr)
        code = e.exit_code
    except BrokenPipeError:
        _quiet_stdout()
        code = 0
    except _ClosedStdout:
        print("logsleuth: error: cannot write the output: standard output is closed", file=sys.stderr)
        code = 2
    except OSError as e:  # the output cannot be written (/dev/full, a disk full, an I/O error) and the like
        if debug:
            raise
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        what = "cannot write the output: " if not where and _is_write_error(e) else ""
        print(f"logsleuth: error: {_one_line(where + what + (e.strerror or str(e)).lower())}", file=sys.stderr)
        _quiet_stdout()
        code = 2
    except SystemExit as e:
        if not _stdout_pipe_closed():
            raise
        code = 0  # typer turned a broken pipe (`logsleuth events ... | head -1`) into exit 1
    except Exception as e:  # never a traceback for the user; LOGSLEUTH_DEBUG=1 shows it
        if debug:
            raise
        print(f"logsleuth: internal error: {type(e).__name__}: {_one_line(str(e))} (set LOGSLEUTH_DEBUG=1 for details)", file=sys.stderr)
        code = 2
    if code in (0, 1) and options.unread_inputs():  # the others were read, but a script must notice (as with rg)
        code = 2
    if code == 130:
        _ignore_sigint(own)
        print("logsleuth: interrupted", file=sys.stderr)
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError, _ClosedStdout):
        _quiet_stdout()
    except OSError as e:  # what was buffered could not be written (/dev/full)
        if code == 0 or code == 1:
            print(f"logsleuth: error: cannot write the output: {(e.strerror or str(e)).lower()}", file=sys.stderr)
            code = 2
        _quiet_stdout()
    if own:
        _quick_exit()
    sys.exit(code)


def _quick_exit() -> None:
    """The program's own exit without the interpreter's final garbage collection over everything a
    run imported (Polars alone: ~40 ms of CPU, a tenth of a small run): the objects alive now are
    moved out of the collector's reach (``gc.freeze``). Everything that cleans up still runs as
    before: atexit handlers (the cache, the progress line, the spill directories), weakref
    finalizers (the texts store's directory) and the flush of the standard streams; only objects
    caught in reference cycles are not collected, which the process's end frees anyway. Not for a
    caller that runs ``main(argv)`` in its own process: its objects stay collectable."""
    import gc

    gc.freeze()


def _new_run(argv: list[str]) -> None:
    """Nothing of an earlier run in this process carries over (the tests run many): the inputs it
    could not read, its config file, and its view (display zone, colours, command line)."""
    from logsleuth.cli import options
    from logsleuth.render import view

    options.RUN_OPTIONS.clear()
    config.reset()
    view.begin(argv)


class _ClosedStdout(OSError):
    pass


class _Closed:
    """Stands for a standard stream that is closed (``logsleuth ... >&-``): Python gives ``None``
    there, and every write to it would be an AttributeError. Writing is an error said in one line;
    a command that writes nothing to it (``-o FILE``) works."""

    encoding = "utf-8"
    errors = "strict"

    def write(self, _text: str) -> int:
        raise _ClosedStdout(9, "standard output is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise _ClosedStdout(9, "standard output is closed")

    @property
    def buffer(self):
        return self

    def reconfigure(self, **_kw) -> None:
        pass


class _ClosedErr(_Closed):
    def write(self, text: str) -> int:  # nowhere to say anything: said to nobody
        return len(text)


def _closed_streams() -> None:
    if sys.stdout is None:
        sys.stdout = _Closed()  # type: ignore[assignment]
    if sys.stderr is None:
        sys.stderr = _ClosedErr()  # type: ignore[assignment]


def _is_write_error(e: OSError) -> bool:
    import errno

    return e.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG, errno.EBADF)


def _quiet_python() -> None:
    """What Python itself would print besides our one line: warnings, "Exception ignored in ..."
    (a generator closed while Ctrl-C unwinds, a flush into a closed pipe at exit), and
    UnicodeEncodeError on a terminal whose encoding cannot show a character (escaped instead)."""
    import warnings

    warnings.simplefilter("ignore")
    sys.unraisablehook = lambda _unraisable: None
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwind like Ctrl-C, so the spill and texts directories are
    removed (atexit and the stores' finalizers run) and the exit code says which signal (128 + n)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _terminate_cleanly() -> None:
    import signal

    def handler(signum, _frame):
        for s in (signal.SIGTERM, signal.SIGHUP):
            try:
                signal.signal(s, signal.SIG_IGN)  # once is enough: the clean-up must not be interrupted
            except (ValueError, OSError):
                pass
        raise Terminated(signum)

    for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)):
        if s is None:
            continue
        try:
            if signal.getsignal(s) in (signal.SIG_DFL, None):
                signal.signal(s, handler)
        except (ValueError, OSError):  # not the main thread (embedded, tests)
            pass


def _ignore_sigint(own: bool = True) -> None:
    """After the first Ctrl-C, a second one (or one Polars re-raises) must not interrupt the exit.
    Only in the program itself: a caller that runs ``main(argv)`` in its own process (the tests do)
    keeps its Ctrl-C, and so do the processes it starts afterwards (SIG_IGN is inherited across
    exec: a test suite's later subprocesses ignored Ctrl-C)."""
    import signal

    if not own:
        return
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):  # not the main thread
        pass


def _stdout_pipe_closed() -> bool:
    """Was that SystemExit a broken pipe? typer/click wrap stdout in PacifyFlushWrapper, rich points
    stdout at /dev/null before they exit 1."""
    if type(sys.stdout).__name__ == "PacifyFlushWrapper":
        return True
    try:
        out, null = os.fstat(sys.stdout.fileno()), os.stat(os.devnull)
        return (out.st_dev, out.st_ino) == (null.st_dev, null.st_ino)
    except (OSError, ValueError, AttributeError):
        return False


def _one_line(text: str) -> str:
    from logsleuth.safe import visible

    return visible(text.strip().splitlines()[0] if text.strip() else text)[:500]


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
