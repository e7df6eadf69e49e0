"""Outputs written whole or not at all: every ``-o`` file and directory is written under a
temporary name beside it and renamed into place only when complete, so a full disk, a killed run or
two runs writing the same name never leave a truncated report, and the old one stays when the new
one cannot be written (docs/robustness.md). A path that is not a regular file (``/dev/stdout``, a
FIFO, a terminal) is written directly: there is nothing to replace."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from logsleuth.errors import LogsleuthError


def _special(path: Path) -> bool:
    try:
        return not stat.S_ISREG(os.stat(path).st_mode) and not stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _fail(path: Path, e: BaseException, existed: bool) -> LogsleuthError:
    why = getattr(e, "strerror", None) or str(e).splitlines()[0] if str(e) else type(e).__name__
    kept = f"; the old {path.name} is left as it was" if existed else ""
    return LogsleuthError(f"{path}: cannot write ({why}){kept}")


def write_text(path: Path, text: str, encoding: str = "utf-8", errors: str = "strict") -> None:
    write_bytes(path, text.encode(encoding, errors))


def write_bytes(path: Path, data: bytes) -> None:
    with replacing_file(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data)


@contextlib.contextmanager
def replacing_file(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed over ``path`` when the block ends
    without an error, removed otherwise. Any error (Python's or Polars') is one line naming ``path``."""
    path = Path(path)
    existed = path.exists()
    if _special(path):  # /dev/stdout, a FIFO: write it directly
        try:
            yield path
        except Exception as e:
            raise _fail(path, e, False) from None
        return
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".{os.getpid()}.tmp", dir=path.parent if str(path.parent) else ".")
        os.close(fd)
    except OSError as e:
        raise _fail(path, e, existed) from None
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, _mode_for(path))
        os.replace(tmp, path)
    except LogsleuthError:
        tmp.unlink(missing_ok=True)
        raise
    except Exception as e:  # OSError, polars' ComputeError on a full disk, …
        tmp.unlink(missing_ok=True)
        raise _fail(path, e, existed) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def replacing_dir(path: Path, check: Callable[[Path], None] | None = None) -> Iterator[Path]:
    """A temporary directory beside ``path`` to fill; it becomes ``path`` when the block ends
    without an error (``path`` must not exist or be an empty directory), removed otherwise."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=f".{os.getpid()}.tmp", dir=parent))
    except OSError as e:
        raise _fail(path, e, False) from None
    try:
        yield tmp
        os.chmod(tmp, _mode_for(path) | 0o111 if path.exists() else 0o777 & ~_umask())
        if path.exists():
            path.rmdir()  # empty (checked by the caller): replaced by the new one
        os.replace(tmp, path)
    except LogsleuthError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    except Exception as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _fail(path, e, False) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
