"""Inputs in object stores and other fsspec file systems: ``s3://``, ``gs://``, ``abfs://``,
``hdfs://``, ``file://``, ``memory://`` (tests). A URL is listed here (a glob, a prefix read as a
directory, or one object), and each object is fetched to a local temporary file (unlinked once
open) when it is read, keeping its name (the URL) and its modification time (the date of time-only
stamps). fsspec is imported only here, and only when a URL is given: a plain local
run never imports it (tests/test_cluster.py checks).

Fetching whole objects costs local disk for the object being read (per worker on a cluster); the
reader then reads the copy exactly as it reads a local file (compression, encoding, layouts), so a
URL input and the same file given as a path give the same events."""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from logsleuth.errors import LogsleuthError

URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
EXTRA = "pip install 'logsleuth-broker[dask]'"


def is_url(name: object) -> bool:
    return isinstance(name, str) and URL.match(name) is not None


@dataclass(frozen=True)
class Remote:
    """One object to read: its URL (the input's name), size in bytes (None: not said), and
    modification time (POSIX seconds; None: not said)."""

    url: str
    size: int | None
    mtime: float | None


def _fsspec():
    try:
        import fsspec
    except ImportError:
        raise LogsleuthError(f"URL inputs need fsspec, which comes with the dask extra: {EXTRA}") from None
    return fsspec


def _fs(url: str, storage_options: dict):
    fsspec = _fsspec()
    try:
        return fsspec.core.url_to_fs(url, **storage_options)
    except ImportError as e:  # s3fs, gcsfs, adlfs ... not installed
        raise LogsleuthError(f"{_shown(url)}: {_first_line(e)}") from None
    except (ValueError, TypeError) as e:  # an unknown protocol, a bad option
        raise LogsleuthError(f"{_shown(url)}: not a URL logsleuth can read ({_first_line(e)})") from None


def _shown(url: str) -> str:
    from logsleuth.safe import visible

    return visible(url)[:500]


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:300]


def failure(url: str, e: BaseException) -> LogsleuthError:
    """An object store's exception as the one line users see."""
    name = type(e).__name__
    if isinstance(e, FileNotFoundError):
        return LogsleuthError(f"{_shown(url)}: no such object or prefix")
    if isinstance(e, PermissionError):
        return LogsleuthError(f"{_shown(url)}: permission denied ({_first_line(e)})")
    if "Credentials" in name or "credentials" in str(e).lower():
        return LogsleuthError(f"{_shown(url)}: no credentials for this store ({_first_line(e)}; give them as the store's "
                              "environment variables or --storage-option KEY=VALUE)")
    return LogsleuthError(f"{_shown(url)}: cannot be read ({name}: {_first_line(e)})")


def _mtime(info: dict) -> float | None:
    import datetime as dt

    for key in ("mtime", "LastModified", "last_modified", "updated", "modified", "created"):
        v = info.get(key)
        if v is None:
            continue
        if isinstance(v, (int, float)):
            return float(v)
        if isinstance(v, dt.datetime):
            return (v if v.tzinfo else v.replace(tzinfo=dt.timezone.utc)).timestamp()
        if isinstance(v, str):
            try:
                return dt.datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp()
            except ValueError:
                continue
    return None


def _remote(fs, path: str, info: dict) -> Remote:
    size = info.get("size")
    return Remote(fs.unstrip_protocol(path), int(size) if isinstance(size, int) else None, _mtime(info))


def expand(url: str, storage_options: dict | None = None, not_logs: frozenset | set = frozenset()) -> list[Remote]:
    """The objects a URL names, sorted by name: a glob (``s3://b/logs/**/*.log``), a prefix read as
    a directory (every object under it whose name may be a log, as a local directory is walked), or
    one object. Nothing there is an error. ``not_logs``: the suffixes a directory walk leaves out."""
    fs, path = _fs(url, storage_options or {})
    try:
        if set(path) & set("*?["):
            found = fs.glob(path, detail=True)
            items = [(p, i) for p, i in sorted(found.items()) if i.get("type") != "directory"]
            if not items:
                raise LogsleuthError(f"{_shown(url)}: no objects match")
        elif fs.isdir(path):
            found = fs.find(path, detail=True)
            items = [(p, i) for p, i in sorted(found.items())
                     if i.get("type") != "directory" and not any(part.startswith(".") for part in p[len(path):].split("/") if part)
                     and Path(p).suffix.lower() not in not_logs]
            if not items:
                raise LogsleuthError(f"{_shown(url)}: no logs under this prefix")
        else:
            items = [(path, fs.info(path))]
    except LogsleuthError:
        raise
    except Exception as e:  # the store's own errors: not found, denied, no credentials, unreachable
        raise failure(url, e) from None
    return [_remote(fs, p, i) for p, i in items]


def open_copy(remote: Remote, storage_options: dict | None = None) -> tuple[io.FileIO, int | None]:
    """The object fetched to a temporary file (where the run's other temporary files go) and opened;
    the file's name is removed at once, so nothing is left behind however the run ends (the open
    file is read, then closed)."""
    from logsleuth.ingest.texts import base_dir

    fs, path = _fs(remote.url, storage_options or {})
    fd, tmp = tempfile.mkstemp(prefix="logsleuth-fetched-", dir=base_dir())
    os.close(fd)
    try:
        try:
            fs.get_file(path, tmp)
        except Exception as e:
            raise failure(remote.url, e) from None
        fh = io.FileIO(tmp, "rb")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return fh, (os.fstat(fh.fileno()).st_size or None)


def open_ranged(remote: Remote, storage_options: dict | None = None):
    """The object opened for reading in place, block by block (a byte range of a big object is
    read by a task of its own: fetching the whole object for each would read it once per range)."""
    fs, path = _fs(remote.url, storage_options or {})
    try:
        fh = fs.open(path, "rb", block_size=8 * 2**20)
    except Exception as e:
        raise failure(remote.url, e) from None
    return fh, remote.size


def parse_storage_options(items: list[str] | None) -> dict:
    """``--storage-option KEY=VALUE`` (repeatable) -> fsspec's storage options. Values are text;
    ``true``/``false`` and whole numbers become booleans and integers (``anon=true``)."""
    out: dict = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise LogsleuthError(f"--storage-option {item!r}: expected KEY=VALUE")
        v: object = value
        if value.lower() in ("true", "false"):
            v = value.lower() == "true"
        elif re.fullmatch(r"-?\d+", value):
            v = int(value)
        out[key.strip()] = v
    return out
