"""Long terminal output through a pager, as git does: only when stdout is a terminal and the text is
longer than the screen; ``$LOGSLEUTH_PAGER``, else the config file's ``pager``, else ``$PAGER``, else ``less``, with ``LESS=FRX``
(quit at the end of one screen, keep colours, leave the text on the screen) unless ``LESS`` is
set. ``LOGSLEUTH_PAGER=`` (empty) or ``cat`` turns it off, like ``--no-pager``."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys


CONFIGURED: str | None = None  # the config file's ``pager`` ("" for none): after LOGSLEUTH_PAGER, before PAGER


def command() -> str | None:
    """The pager to run, or None for none."""
    for var in ("LOGSLEUTH_PAGER", "config", "PAGER"):
        value = CONFIGURED if var == "config" else os.environ.get(var)
        if value is not None:
            cmd = value.strip()
            return None if cmd in ("", "cat") else cmd
    return "less" if shutil.which("less") else None


def _runnable(cmd: str) -> bool:
    try:
        words = shlex.split(cmd)
    except ValueError:
        return False
    if not words:
        return False
    if any(c in cmd for c in "|&;<>()$`\\\"'*?[#~=%"):  # a shell command line: the shell will tell
        return shutil.which("sh") is not None
    return shutil.which(words[0]) is not None


def page(text: str, height: int) -> bool:
    """Show ``text`` (with its ANSI colours) through the pager when it is longer than ``height``
    lines; False when no pager ran (the caller writes it itself)."""
    cmd = command()
    if cmd is None or text.count("\n") < height or not _runnable(cmd):
        return False
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    words = shlex.split(cmd)
    shell = any(c in cmd for c in "|&;<>()$`\\\"'*?[#~=%")
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    old = signal.getsignal(signal.SIGINT)
    try:
        proc = subprocess.Popen(cmd if shell else words, shell=shell, stdin=subprocess.PIPE, env=env)
    except OSError:
        return False
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the pager's to handle, as in git
    except (ValueError, OSError):
        pass
    try:
        assert proc.stdin is not None
        proc.stdin.write(text.encode(sys.stdout.encoding or "utf-8", "backslashreplace"))
        proc.stdin.close()
    except (BrokenPipeError, OSError):  # the reader quit early: fine
        pass
    finally:
        proc.wait()
        try:
            signal.signal(signal.SIGINT, old)
        except (ValueError, OSError, TypeError):
            pass
    return True
