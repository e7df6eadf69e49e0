"""The reading stage on a Dask cluster (``--engine dask``): one task per input, largest first; each
task reads and recognises its input exactly as a plain run does (``events.collect`` of that one
input) and writes its events as Parquet parts to a store every worker and this machine can reach;
the driver (this process) gathers the inputs' reports, drops copies, reads the parts back into one
events table and hands over an ``EventSet`` as ``collect`` does, so correlation, the detectors and
every output are the same code as in a plain run. docs/scale.md says how to run it.

    STORE/events/system=<system>/part-<input>-<n>.parquet    parts of each input's events, per system
    STORE/events/system=<system>/part-<input>-r<k>-<n>.parquet    ... of range k of an input read in byte ranges

A plain file bigger than ``--split-size`` is read in byte ranges, a task each (ingest/sources.Span):
its envelope and layout are detected once here, the ranges' reports merged into the file's
(reader.merge_ranges) and their line numbers shifted by the lines of the ranges before, as the
parts are read back.

The store is ``--store DIR|URL``; without one, a temporary directory on this machine (a local
cluster's workers share its disk), removed at the end unless ``--keep-store``. Dask and fsspec are
imported only here, only with ``--engine dask`` (or a URL input): a plain run imports neither."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import polars as pl

from logsleuth import __version__
from logsleuth.errors import LogsleuthError, RunError
from logsleuth.ingest import remote
from logsleuth.ingest.inputs import InputReport, ReadOptions
from logsleuth.ingest.stats import ReadStats
from logsleuth.recognise import eventstore
from logsleuth.recognise.events import EventFilter, EventSet, copy_of, filtered

EXTRA = remote.EXTRA
THREADS = "threads"  # --scheduler threads: an in-process cluster (one process, a thread per worker)
CONNECT_TIMEOUT = "10s"
SPLIT_SIZE = 512 * 2**20  # --split-size's default


@dataclass
class Engine:
    """How the reading stage runs: ``local`` (this process) or ``dask``."""

    name: str = "local"
    scheduler: str | None = None  # tcp://host:8786, "threads", or None: $DASK_SCHEDULER_ADDRESS, else a local cluster
    workers: int | None = None  # a local cluster's worker processes (default: this machine's cores)
    store: str | None = None  # where the workers write the events (DIR or URL); None: a temporary directory here
    keep_store: bool = False
    storage_options: dict = field(default_factory=dict)  # fsspec's, for URL inputs and a URL store
    split_size: int | None = SPLIT_SIZE  # plain files bigger than this are read in byte ranges of this size (None: never)

    @property
    def address(self) -> str | None:
        return self.scheduler or os.environ.get("DASK_SCHEDULER_ADDRESS") or None


@dataclass(frozen=True)
class Task:
    """One input to read on a worker."""

    index: int  # its place among the inputs (the order a plain run reads them in)
    name: str  # what users see: the path as given or found, or the URL
    path: str | None  # a local path (absolute when the workers may be elsewhere)
    url: remote.Remote | None
    size: int
    from_directory: bool
    span: object | None = None  # one byte range of the input (ingest/sources.Span), or None: all of it
    follows: tuple | None = None  # a rotated segment's: (when the segment before it ends, its name), for time-only stamps

    @property
    def key(self) -> tuple[int, int]:
        return (self.index, self.span.index if self.span is not None else 0)  # type: ignore[attr-defined]


@dataclass
class Outcome:
    """What a task hands back (small: the events are in the store)."""

    index: int
    report: InputReport | None
    parts: list[tuple[str, str]]  # (system, part path relative to the store)
    error: str | None = None
    fatal: bool = False  # a problem of the whole run (RunError), or a worker of another version
    range: int = 0  # which byte range of the input (0: the first, or all of it)
    detection: object | None = None  # (a range's) the file's envelope and layout
    offsets: dict = field(default_factory=dict)  # (the merged ranges') part -> lines of the ranges before it


def need_dask():
    try:
        import distributed
    except ImportError:
        raise LogsleuthError(f"--engine dask needs the dask extra: {EXTRA}") from None
    return distributed


# --------------------------------------------------------------------------- planning (the driver)


def plan(paths: list[str], storage_options: dict, absolute: bool) -> list[Task | tuple[str, str, bool]]:
    """The inputs, in the order a plain run reads them: a Task each, or (name, error, from_directory)
    for a named input that is not there. ``absolute``: local paths made absolute (the workers may
    run in another directory)."""
    from logsleuth.ingest.reader import segments_in_order
    from logsleuth.ingest.sources import expand

    out: list = []
    # a rotated log's segments oldest first, as a plain run reads them (each is dated on its own here:
    # a time-only segment does not continue from the one before, docs/scale.md)
    sources, _ = segments_in_order(expand(list(paths), carry_on=len(paths) > 1, storage_options=storage_options))
    for i, src in enumerate(sources):
        if src.is_stdin:
            raise LogsleuthError("-: standard input cannot be read on a cluster (give files or URLs, or drop --engine dask)")
        if src.data is not None:
            raise LogsleuthError(f"{src.name}: an input held in memory cannot be read on a cluster")
        if src.error is not None:
            out.append((src.name, src.error, src.from_directory))
        elif src.remote is not None:
            r = src.remote
            out.append(Task(i, src.name, None, r, r.size or 0, src.from_directory))  # type: ignore[attr-defined]
        else:
            try:
                size = os.stat(src.path).st_size  # type: ignore[arg-type]
            except OSError:
                size = 0
            where = str(Path(src.path).absolute()) if absolute else str(src.path)  # type: ignore[arg-type]
            out.append(Task(i, src.name, where, None, size, src.from_directory))
    return out


# --------------------------------------------------------------------------- the task (a worker)


def _source(task: Task, storage_options: dict):
    from logsleuth.ingest.sources import Source

    if task.url is not None:
        src = Source(task.name, None, remote=task.url, storage_options=storage_options, span=task.span)
    else:
        src = Source(task.name, Path(task.path or task.name), span=task.span)
    src.follows = task.follows
    return src


def _store_fs(store: str, storage_options: dict):
    if remote.is_url(store):
        return remote._fs(store, storage_options)
    return None, store


def _write_part(frame: pl.DataFrame, store: str, rel: str, storage_options: dict) -> None:
    fs, base = _store_fs(store, storage_options)
    if fs is None:
        target = Path(base) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(target)
        return
    path = f"{base.rstrip('/')}/{rel}"
    fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
    with fs.open(path, "wb") as fh:
        frame.write_parquet(fh)


def read_task(task: Task, opts: ReadOptions, packs, store: str, storage_options: dict, version: str, templates: bool) -> Outcome:
    """Read and recognise one input, write its events to the store; runs on a worker."""
    if version != __version__:
        return Outcome(task.index, None, [], range=task.key[1], error=f"a worker runs logsleuth {__version__} and this machine {version}: "
                       "install the same version on the workers", fatal=True)
    from logsleuth.recognise.events import collect
    from logsleuth.recognise.eventstore import parquet_table

    try:
        result = collect([_source(task, storage_options)], opts, packs, None, templates=templates)
    except RunError as e:
        return Outcome(task.index, None, [], range=task.key[1], error=str(e), fatal=True)
    except LogsleuthError as e:
        return Outcome(task.index, None, [], range=task.key[1], error=str(e))
    except Exception as e:  # noqa: BLE001 - one input's failure, reported as that input's (the rest are read)
        return Outcome(task.index, None, [], range=task.key[1], error=f"{task.name}: could not be read on a worker ({type(e).__name__}: {remote._first_line(e)})")
    parts: list[tuple[str, str]] = []
    try:
        # a slice at a time with its texts (as eventstore.write): the whole table with its texts
        # would take GBs on a dense log
        for n, rows in enumerate(result.events.iter_slices(eventstore.WRITE_ROWS)):
            ev = parquet_table(rows, result.texts).with_columns(pl.col("system").fill_null("unknown"))
            for (system,), part in ev.group_by("system", maintain_order=True):
                piece = f"{task.index:06d}-r{task.span.index:05d}" if task.span is not None else f"{task.index:06d}"  # type: ignore[attr-defined]
                rel = f"events/system={system}/part-{piece}-{n:06d}.parquet"
                _write_part(part.drop("system"), store, rel, storage_options)
                parts.append((str(system), rel))
            del ev, rows
    except OSError as e:
        return Outcome(task.index, None, [], range=task.key[1], error=f"the store {remote._shown(store)} cannot be written by a worker ({remote._first_line(e)})", fatal=True)
    finally:  # a worker lives on after the task: what it spilled and the texts go now, not at its exit
        if result.texts is not None:
            result.texts.close()
        spilled = getattr(result.events, "spill", None)
        if spilled is not None:
            shutil.rmtree(spilled.dir, ignore_errors=True)
    rep = result.inputs[0]
    if task.span is not None:
        return Outcome(task.index, rep, parts, range=task.span.index, detection=task.span.detection)  # type: ignore[attr-defined]
    return Outcome(task.index, rep, parts)


# --------------------------------------------------------------------------- the run (the driver)


@contextlib.contextmanager
def _client(engine: Engine) -> Iterator:
    import logging

    distributed = need_dask()
    # Dask's own log lines (a heartbeat that fails while the cluster shuts down, with its traceback)
    # are not this run's output: what went wrong with an input or the cluster is said in one line
    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    addr = engine.address
    cores = os.cpu_count() or 1
    with contextlib.ExitStack() as stack:
        if addr and addr != THREADS:
            try:
                client = distributed.Client(addr, timeout=CONNECT_TIMEOUT, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as e:
                raise LogsleuthError(f"cannot reach the Dask scheduler at {remote._shown(addr)} ({remote._first_line(e)})") from None
            stack.callback(client.close)
            yield client, False
            return
        n = engine.workers or cores
        # the cluster's own scratch space (Dask's lock files and spill) in a directory of this run,
        # removed when the cluster is closed (Dask leaves dask-scratch-space/ in $TMPDIR otherwise)
        import dask

        from logsleuth.ingest.texts import base_dir, sweep

        sweep(base_dir())
        scratch = tempfile.mkdtemp(prefix=f"logsleuth-store-{os.getpid()}-dask-", dir=base_dir())
        stack.callback(shutil.rmtree, scratch, True)
        stack.enter_context(dask.config.set({"temporary-directory": scratch}))
        if addr == THREADS:
            cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=n, processes=False, dashboard_address=None,
                                               silence_logs=logging.CRITICAL, local_directory=scratch)
        else:
            threads = str(max(1, cores // n))  # Polars' own pool per worker, so n workers do not each take every core
            cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                               silence_logs=logging.CRITICAL, local_directory=scratch,
                                               env={"POLARS_MAX_THREADS": threads})
        stack.callback(cluster.close)
        client = distributed.Client(cluster, set_as_default=False)
        stack.callback(client.close)
        yield client, True


@contextlib.contextmanager
def _store(engine: Engine, on_this_machine: bool) -> Iterator[str]:
    if engine.store:
        if not remote.is_url(engine.store):
            p = Path(engine.store)
            if p.exists() and (not p.is_dir() or any(p.iterdir())):
                raise LogsleuthError(f"--store {remote._shown(engine.store)}: the directory is not empty (give a new or empty one)")
            p.mkdir(parents=True, exist_ok=True)
            yield str(p.absolute())
        else:
            yield engine.store
        return
    if not on_this_machine:
        raise LogsleuthError("a remote Dask cluster writes the events where this machine can read them: give --store URL "
                             "(e.g. s3://bucket/prefix) or a directory every worker and this machine share")
    from logsleuth.ingest.texts import base_dir, sweep

    where = base_dir()
    sweep(where)
    d = tempfile.mkdtemp(prefix=f"logsleuth-store-{os.getpid()}-", dir=where)
    try:
        yield d
    finally:
        if not engine.keep_store:
            shutil.rmtree(d, ignore_errors=True)
        else:
            print(f"logsleuth: note: the events store is kept in {d}", file=sys.stderr)


def _parts(store: str, parts: list[tuple[str, str]], storage_options: dict, offsets: dict[str, int]) -> list[tuple[str, pl.LazyFrame]]:
    """The parts the workers wrote, as an events directory is read: by system, then input."""
    fs, base = _store_fs(store, storage_options)
    out = []
    for system, rel in sorted(parts, key=lambda p: (p[0], p[1])):
        try:
            if fs is None:
                lf = pl.scan_parquet(Path(base) / rel, glob=False)
            else:
                with fs.open(f"{base.rstrip('/')}/{rel}", "rb") as fh:
                    lf = pl.read_parquet(fh).lazy()
        except Exception as e:  # noqa: BLE001 - a part gone or damaged between write and read
            raise RunError(f"the events store {remote._shown(store)}: {rel} cannot be read ({remote._first_line(e)})") from None
        if offsets.get(rel):  # a range's part: its lines counted from the range's first line
            lf = lf.with_columns([pl.col(c) + offsets[rel] for c in ("line", "line_end") if c in lf.collect_schema().names()])
        out.append((system, lf))
    return out


def _whole(got: list[Outcome]) -> Outcome:
    """The outcome of an input from its tasks' (in range order): its one task's, or its ranges' put
    together (the first range that failed makes the input unread, as a plain read stops at the
    first error)."""
    if len(got) == 1:  # read whole (a file split in ranges has two or more)
        return got[0]
    for o in got:
        if o.report is None:
            return o
    from logsleuth.ingest.reader import merge_ranges

    rep, bases = merge_ranges([o.report for o in got], got[0].detection)  # type: ignore[misc]
    offsets = {rel: base for o, base in zip(got, bases) for _, rel in o.parts if base}
    return Outcome(got[0].index, rep, [p for o in got for p in o.parts], offsets=offsets)


def collect(paths: list[str], opts: ReadOptions, packs, engine: Engine, flt: EventFilter | None = None, templates: bool = False) -> EventSet:
    """``events.collect`` with the inputs read on a Dask cluster: the same EventSet."""
    from logsleuth.ingest.reader import _warn_unmatched_globs
    from logsleuth.ingest.timeparse import local_zone

    if flt is not None:
        flt.check(packs)
    need_dask()
    with _client(engine) as (client, local_cluster):
        with _store(engine, local_cluster) as store:
            def side_by_side(calls: list) -> list:
                import uuid  # a key of its own per call (a key seen before would give that call's result)

                futures = [client.submit(fn, *args, pure=False, key=f"logsleuth-scan-{uuid.uuid4().hex}") for fn, *args in calls]
                return client.gather(futures)

            work = Plan.make(paths, opts, packs, store, engine.storage_options, engine.split_size, templates, side_by_side,
                             absolute=not local_cluster)
            outcomes = _run(client, work.tasks, work.opts, packs, store, engine.storage_options, templates)
            return _gathered(work.planned, outcomes, opts, packs, flt, store, engine.storage_options)


@dataclass
class Plan:
    """The reading stage as tasks any engine can run (docs/scale.md: Dask here, a Spark recipe):
    ``Plan.make`` on the driver; ``plan.run(task)`` on a worker (writes the task's events to the
    store, returns a small Outcome); ``plan.gather(outcomes)`` on the driver (the EventSet a plain
    run builds: write it with ``eventstore.write`` for ``analyze --events``)."""

    planned: list  # each input: a Task, or (name, error, from_directory)
    tasks: list[Task]  # what to run: a task per input, or per byte range of a big one
    opts: ReadOptions  # the workers' options (this machine's zone fixed)
    packs: object
    store: str
    storage_options: dict
    templates: bool = False

    @classmethod
    def make(cls, paths: list[str], opts: ReadOptions, packs, store: str, storage_options: dict | None = None,
             split_size: int | None = None, templates: bool = False, side_by_side=None, absolute: bool = True) -> "Plan":
        """``side_by_side(calls)``: runs ``[(fn, *args), ...]`` and returns their results in order
        (on the workers; default here, one after another): the first pass over the ranges of a big
        file with time-only stamps."""
        from logsleuth.ingest.reader import _warn_unmatched_globs
        from logsleuth.ingest.timeparse import local_zone

        storage_options = storage_options or {}
        planned = plan(list(paths), storage_options, absolute=absolute)
        if not planned:
            raise LogsleuthError("no input given")
        inputs = [t for t in planned if isinstance(t, Task)]
        _warn_unmatched_globs(opts, [t.name for t in inputs])
        worker_opts = dataclasses.replace(opts, progress=None, failed=[], one_of_many=True, machine_zone=opts.machine_zone or local_zone(),
                                          storage_options=storage_options)
        calls = side_by_side or (lambda cs: [fn(*args) for fn, *args in cs])
        inputs = chained(inputs, worker_opts, storage_options, calls)
        tasks = [r for t in inputs for r in split(t, worker_opts, split_size, storage_options, calls)]
        return cls(planned, tasks, worker_opts, packs, store, storage_options, templates)

    def run(self, task: Task) -> Outcome:
        return read_task(task, self.opts, self.packs, self.store, self.storage_options, __version__, self.templates)

    def gather(self, outcomes: list[Outcome], opts: ReadOptions | None = None, flt: EventFilter | None = None) -> EventSet:
        for o in outcomes:
            if o.fatal:
                raise RunError(o.error or "a worker failed")
        return _gathered(self.planned, {(o.index, o.range): o for o in outcomes}, opts or dataclasses.replace(self.opts, one_of_many=False),
                         self.packs, flt or EventFilter(), self.store, self.storage_options)


def chained(inputs: list[Task], opts: ReadOptions, storage_options: dict, side_by_side) -> list[Task]:
    """A rotated log's time-only segments without a date of their own (in their name or from --date)
    continue from where the segment before ends, as in a plain run (reader.iter_read): the segments
    before such a segment are scanned first, one after the other (a pass without matching each), and
    its task is told that end. Other inputs are left as they are."""
    from logsleuth.ingest import rotation
    from logsleuth.ingest.reader import head_detection
    from logsleuth.ingest.timeparse import FileClock, date_from_filename

    sets = rotation.group([t.name for t in inputs])
    if not sets:
        return inputs
    by_name = {t.name: t for t in inputs}
    for segs in sets.values():
        for k in range(1, len(segs)):
            t = by_name[segs[k]]
            if opts.date_for(t.name) or date_from_filename(t.name):
                continue
            try:
                det = head_detection(_source(t, storage_options), opts)
            except (LogsleuthError, OSError):
                continue  # its task says what is wrong with it
            if det is None or not FileClock(t.name, opts.zone_for(t.name)[0], det.layout.time).time_only:
                continue
            prev = by_name[segs[k - 1]]
            (rep,) = side_by_side([(scan_task, prev, opts, __version__)])  # dated as its own read will be
            if rep is not None and rep.last_ts is not None:
                by_name[t.name] = dataclasses.replace(t, follows=(rep.last_ts, prev.name))
    return [by_name[t.name] for t in inputs]


def split(task: Task, opts: ReadOptions, split_size: int | None, storage_options: dict, side_by_side) -> list[Task]:
    """An input bigger than the split size as one task per byte range (reader.byte_ranges), or
    as one task (said on stderr when it is big but cannot be split, and why). With time-only
    stamps each range is first scanned for its midnights (a task each, side by side), and every
    range is told the day it starts on (reader.day_states)."""
    if split_size is None or task.size <= split_size:
        return [task]
    from logsleuth.ingest.reader import byte_ranges
    from logsleuth.safe import visible

    try:
        spans = byte_ranges(_source(task, storage_options), opts, task.size, split_size)
    except (LogsleuthError, OSError):  # the task says what is wrong with the input, as for any other
        return [task]
    if isinstance(spans, str):
        print(f"logsleuth: note: {visible(task.name)} ({task.size / 2**20:,.1f} MiB) is read by one task: {spans}", file=sys.stderr)
        return [task]
    from logsleuth.ingest.reader import day_states
    from logsleuth.ingest.timeparse import FileClock

    det = spans[0].detection  # type: ignore[attr-defined]
    if FileClock(task.name, opts.zone_for(task.name)[0], det.layout.time).time_only:
        try:
            scans = side_by_side([(scan_task, dataclasses.replace(task, span=sp), opts, __version__) for sp in spans])  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - the input is read whole, and its task says what is wrong with it
            return [task]
        if any(sc is None for sc in scans):
            return [task]
        spans = day_states(_source(task, storage_options), opts, spans, scans)
    return [dataclasses.replace(task, span=sp, size=sp.end - sp.start) for sp in spans]  # type: ignore[attr-defined]


def scan_task(task: Task, opts: ReadOptions, version: str) -> InputReport | None:
    """A byte range's first pass for a file with time-only stamps: its records' times of day read
    from day 0, for reader.day_states (None: the range cannot be read; its read task will say why)."""
    if version != __version__:
        return None
    from logsleuth.ingest.reader import read_source, select_nothing

    try:
        _, rep = read_source(_source(task, opts.storage_options), opts, select=select_nothing)
    except Exception:  # noqa: BLE001
        return None
    rep.coverage = None
    return rep


def _run(client, tasks: list[Task], opts: ReadOptions, packs, store: str, storage_options: dict, templates: bool) -> dict[tuple[int, int], Outcome]:
    from distributed import as_completed

    # the packs travel once, as a task that unpickles them (not scattered data: that is lost with the
    # worker holding it and cannot be made again, and every read would be cancelled with it)
    import pickle

    shared = client.submit(pickle.loads, pickle.dumps(packs), pure=False, key=f"logsleuth-packs-{os.getpid()}-{id(packs)}")
    futures = {}
    for t in sorted(tasks, key=lambda t: -t.size):  # the largest first: it bounds the wall time
        fut = client.submit(read_task, t, opts, shared, store, storage_options, __version__, templates, pure=False,
                            key=f"logsleuth-read-{t.index}-{t.key[1]}-{os.getpid()}-{id(t)}")
        futures[fut] = t
    out: dict[tuple[int, int], Outcome] = {}
    with client.as_current():
        for fut in as_completed(list(futures)):
            t = futures[fut]
            try:
                got = fut.result()
            except Exception as e:  # noqa: BLE001 - the worker died on it (KilledWorker after Dask's retries), or the task was lost
                got = Outcome(t.index, None, [], range=t.key[1], error=f"{t.name}: could not be read on the cluster ({type(e).__name__}: {remote._first_line(e)})")
            if got.fatal:
                for other in futures:
                    other.cancel()
                raise RunError(got.error or "a worker failed")
            out[t.key] = got
    return out


def _gathered(planned: list, outcomes: dict[tuple[int, int], Outcome], opts: ReadOptions, packs, flt: EventFilter | None, store: str,
              storage_options: dict) -> EventSet:
    from logsleuth.ingest.reader import not_read  # as a plain run says an input it could not read

    reports: list[InputReport] = []
    parts: list[tuple[str, str]] = []
    offsets: dict[str, int] = {}  # a range's part -> the lines of the ranges before it
    seen: dict[tuple, str] = {}
    by_input: dict[int, list[Outcome]] = {}
    for key in sorted(outcomes):
        by_input.setdefault(key[0], []).append(outcomes[key])
    single = len(planned) == 1
    for i, item in enumerate(planned):
        if not isinstance(item, Task):
            name, error, from_directory = item
            rep = InputReport(name, ReadStats(), events=0, unmatched_records=0)  # as collect counts an input it could not read
            if single:
                raise LogsleuthError(error)
            not_read(rep, name, from_directory, LogsleuthError(error), opts)
            reports.append(rep)
            continue
        got = _whole(by_input[item.index])
        if got.report is None:
            if single and not item.from_directory:
                raise LogsleuthError(got.error or f"{item.name}: could not be read")
            rep = InputReport(item.name, ReadStats(), events=0, unmatched_records=0)
            not_read(rep, item.name, item.from_directory, LogsleuthError(got.error or "could not be read"), opts)
            reports.append(rep)
            continue
        rep = got.report
        reports.append(rep)
        if copy_of(rep, seen, flt):
            rep.events = rep.unmatched_records = None  # as collect leaves a copy: not counted (filtered() counts its events)
            continue
        parts.extend(got.parts)
        offsets.update(got.offsets)
    if len(opts.failed) == len(planned) > 1:
        raise LogsleuthError(f"none of the {len(planned)} inputs could be read")
    if all(r.skipped_input for r in reports):
        raise LogsleuthError("no text logs found (every input was binary or unreadable)")
    bad = lambda what: RunError(f"the events store {remote._shown(store)} is not what the workers wrote ({what})")  # noqa: E731
    out = eventstore.streamed(_parts(store, parts, storage_options, offsets), reports, packs, opts.memory_budget, bad)
    if flt is not None:
        filtered(out, flt)
    return out

