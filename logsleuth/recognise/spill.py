"""The events table on disk, past a memory budget (``--memory-budget``).

While the inputs are read, each batch of events is held in memory until the batches held add up to
the budget. Past it, they and every later batch go to Parquet files in a temporary directory, and
the table the later stages get is an :class:`EventsOnDisk`: the same rows, in the same order, with
the same columns and types, read back by lazy Polars queries that load only the columns and rows a
question needs (``lazy()``, ``filter``, ``select``, ``height``, ``slice`` ...). What a stage asks of
it that it does not answer lazily is answered by loading the rows it stands for (``__getattr__``),
so every DataFrame question still gets the DataFrame answer.

``filter``, ``with_columns`` and the like give another lazy table; putting a changed table in time
order (``events.in_time_order``, after the rotated segments are named or a client's clock is
corrected) streams it back to disk, finds the order from three narrow columns (time, file, line)
and, when the rows are not in it already, rewrites the parts by gathering from each the rows a
slice of the order needs, so no step holds the table. docs/architecture.md, "Past the memory
budget", says what is still held.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
from pathlib import Path

import polars as pl

PART_ROWS = 1 << 17  # rows per part once the table is rewritten (in time order)
_COMPRESSION = "lz4"


def parse_budget(text: str) -> int | None:
    """'256M', '1G', '500k', '0' (spill at once), 'off'/'none' (never spill) -> bytes (None: never)."""
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    if t in ("off", "none", "no", "unlimited"):
        return None
    mult = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}.get(t[-1:], 1)
    num = t[:-1] if t[-1:] in "kmgt" and t[-1:] else t
    try:
        value = float(num)
    except ValueError:
        value = -1.0
    if not num or value < 0 or value != value or value * mult > 2**62:
        from logsleuth.errors import LogsleuthError

        raise LogsleuthError(f"--memory-budget {text!r}: expected a size such as 256M, 1G, 0 (always on disk) or off")
    return int(value * mult)


class Spill:
    """A temporary directory of Parquet parts (removed at exit)."""

    def __init__(self) -> None:
        from logsleuth.ingest.texts import sweep, utf8_dir

        base = os.environ.get("LOGSLEUTH_SPILL_DIR") or None
        utf8_dir(base or tempfile.gettempdir(), "LOGSLEUTH_SPILL_DIR" if base else "TMPDIR")
        sweep(base)  # what killed runs left (the process id in the name says whose)
        try:
            self.dir = Path(tempfile.mkdtemp(prefix=f"logsleuth-events-{os.getpid()}-", dir=base))
        except OSError as e:
            raise _no_room(base or tempfile.gettempdir(), e) from None
        self._n = 0
        atexit.register(shutil.rmtree, self.dir, True)

    def path(self) -> Path:
        self._n += 1
        return self.dir / f"part-{self._n:06d}.parquet"

    def write(self, frame: pl.DataFrame) -> Path:
        path = self.path()
        try:
            frame.write_parquet(path, compression=_COMPRESSION, statistics=False)
        except OSError as e:
            raise _no_room(str(self.dir), e) from None
        return path


def _no_room(where: str, e: OSError):
    from logsleuth.errors import RunError

    return RunError(
        f"the events past --memory-budget go to disk, and {where} cannot take them ({e.strerror or e}): "
        "set LOGSLEUTH_SPILL_DIR to a directory with room, or raise --memory-budget"
    )


def _written(frame: pl.DataFrame) -> pl.DataFrame:
    """A part as it is written: a column with no value in it is left out (reading the parts inserts
    it, as nulls of its type; most vocabulary fields are absent from most parts)."""
    if not frame.height:
        return frame
    empty = frame.select(pl.all().null_count() == pl.len()).row(0)
    return frame if not any(empty) else frame.select([c for c, e in zip(frame.columns, empty) if not e])


def _estimated(frame: pl.DataFrame) -> int:
    return int(frame.estimated_size())


class Budget:
    """The bytes of events one run holds in memory (``limit``: None, no limit), shared by the
    holders of its inputs, and the run's spill directory once it is past the limit."""

    def __init__(self, limit: int | None):
        import threading

        self.limit = limit
        self.held = 0
        self.spill: Spill | None = None
        self._lock = threading.Lock()  # two inputs are read at a time

    def take(self, n: int) -> bool:
        """Count ``n`` more bytes held; False once the run is past its limit (spill from now on)."""
        with self._lock:
            if self.spill is not None:
                return False
            self.held += n
            if self.limit is not None and self.held > self.limit:
                self.spill = Spill()
                return False
            return True


class Holder:
    """The batches of events of one input: held in memory while the run's budget lasts, on disk
    (Parquet parts, in order) past it."""

    def __init__(self, budget: Budget):
        self.budget = budget
        self.frames: list[pl.DataFrame] = []
        self.parts: list[Path] = []
        # what makes a batch final before it is written (the reader sets it when the input's clock
        # is settled from its start: its times made final, its provisional columns dropped), so
        # that spill.finish need not rewrite the parts; None: made final in finish (``.change``)
        self.settle = None
        self.schemas: dict[tuple, pl.DataFrame] = {}  # of the settled batches, with the columns _written left out

    @property
    def spill(self) -> Spill | None:
        return self.budget.spill if self.parts else None

    def add(self, frame: pl.DataFrame) -> None:
        if self.budget.take(_estimated(frame)):
            self.frames.append(frame)
            return
        spill = self.budget.spill
        assert spill is not None
        settle = self.settle
        for f in [*self.frames, frame]:  # this input's batches held so far go first, in order
            if settle is not None:
                f = settle(f)
                self.schemas.setdefault(tuple(f.schema.items()), pl.DataFrame(schema=f.schema))
                f = _written(f)
            self.parts.append(spill.write(f))
        self.frames.clear()

    def __bool__(self) -> bool:
        return bool(self.frames or self.parts)

    def view(self) -> "EventsOnDisk":
        assert self.budget.spill is not None
        schema = unified_schema(self.parts)
        if self.schemas:  # a column no part has a value in is still one of the input's
            schema = dict(pl.concat([*self.schemas.values(), pl.DataFrame(schema=schema)], how="diagonal_relaxed").schema)
        out = EventsOnDisk(self.budget.spill, list(self.parts), schema)
        out.settled = self.settle is not None
        return out


def _schema(path) -> dict:
    """A part's schema from its footer. Paths are never globs (a '[' in TMPDIR is a character)."""
    return dict(pl.scan_parquet(path, glob=False).collect_schema())


def unified_schema(parts: list[Path]) -> dict:
    """The schema a diagonal, relaxed concat of the parts would have (read from their footers)."""
    empties = [pl.DataFrame(schema=_schema(p)) for p in parts]
    return dict(pl.concat(empties, how="diagonal_relaxed").schema) if empties else {}


def _aligned(frame: pl.DataFrame, schema: dict) -> pl.DataFrame:
    cols = [
        (pl.col(c).cast(t) if frame.schema[c] != t else pl.col(c)) if c in frame.columns else pl.lit(None, dtype=t).alias(c)
        for c, t in schema.items()
    ]
    return frame.select(cols)


def _collect(lf: pl.LazyFrame) -> pl.DataFrame:
    if not os.environ.get("LOGSLEUTH_SPILL_TRACE"):
        return lf.collect()
    if os.environ.get("LOGSLEUTH_SPILL_TRACE") == "count":  # how many queries each line of code asks
        import traceback

        f = traceback.extract_stack()[-3]
        print(f"spill: query at {f.filename.rsplit('logsleuth/', 1)[-1]}:{f.lineno}", file=__import__("sys").stderr)
        return lf.collect()
    import traceback

    # the questions whose answer took the most memory while it was worked out, and who asked
    import threading

    def rss() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    before, top, done = rss(), [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.005):
            top[0] = max(top[0], rss())

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    out = lf.collect()
    done.set()
    t.join()
    grew = (max(top[0], rss()) - before) / 2**20
    if grew > 8:
        where = [f"{f.filename.rsplit('logsleuth/', 1)[-1]}:{f.lineno}" for f in traceback.extract_stack()[-5:-1]]
        print(f"spill: +{grew:.0f} MB while answering {out.estimated_size() / 2**20:.0f} MB ({out.height} x {out.width}) at {' < '.join(reversed(where))}",
              file=__import__("sys").stderr)
    return out


class LazyTable:
    """Rows of the events table as a lazy Polars query (see the module's doc): a DataFrame's
    questions answered by collecting only what each needs. Narrowing steps (``filter``,
    ``with_columns``, ``with_row_index``, ``drop``) give another LazyTable; questions (``select``,
    ``sort``, ``row``, ``height`` ...) give what a DataFrame gives."""

    def __init__(self, lf: pl.LazyFrame, spill: Spill, schema: dict | None = None, height: int | None = None):
        self._lf = lf
        self.spill = spill
        self._schema = pl.Schema(schema) if schema is not None else None
        self._height = height
        self._empty: pl.DataFrame | None = None

    def lazy(self) -> pl.LazyFrame:
        return self._lf

    def collect(self) -> pl.DataFrame:
        return _collect(self.lazy())

    def _derived(self, lf: pl.LazyFrame, height: int | None = None) -> "LazyTable":
        return LazyTable(lf, self.spill, height=height)

    # --- answered without loading the table ---------------------------------------------------

    @property
    def height(self) -> int:
        if self._height is None:
            self._height = int(_collect(self.lazy().select(pl.len())).item())
        return self._height

    def __len__(self) -> int:
        return self.height

    def is_empty(self) -> bool:
        return self.height == 0

    @property
    def schema(self) -> pl.Schema:
        if self._schema is None:
            self._schema = self.lazy().collect_schema()
        return self._schema

    @property
    def columns(self) -> list[str]:
        return list(self.schema.names())

    @property
    def width(self) -> int:
        return len(self.schema)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.height, self.width)

    def filter(self, *predicates, **constraints) -> "LazyTable":
        return self._derived(self.lazy().filter(*predicates, **constraints))

    def with_columns(self, *exprs, **named) -> "LazyTable":
        return self._derived(self.lazy().with_columns(*exprs, **named), self._height)

    def with_row_index(self, name: str = "index", offset: int = 0) -> "LazyTable":
        return self._derived(self.lazy().with_row_index(name, offset), self._height)

    def drop(self, *columns, strict: bool = True) -> "LazyTable":
        return self._derived(self.lazy().drop(*columns, strict=strict), self._height)

    def select(self, *exprs, **named) -> pl.DataFrame:
        return _collect(self.lazy().select(*exprs, **named))

    def sort(self, *by, **kw) -> pl.DataFrame:
        return _collect(self.lazy().sort(*by, **kw))

    def unique(self, *a, **kw) -> pl.DataFrame:
        return _collect(self.lazy().unique(*a, **kw))

    def join(self, other, *a, **kw) -> pl.DataFrame:
        other = other.lazy() if isinstance(other, (pl.DataFrame, LazyTable)) else other
        return _collect(self.lazy().join(other, *a, **kw))

    def join_asof(self, other, *a, **kw) -> pl.DataFrame:
        other = other.lazy() if isinstance(other, (pl.DataFrame, LazyTable)) else other
        return _collect(self.lazy().join_asof(other, *a, **kw))

    def group_by(self, *by, **kw) -> "_GroupBy":
        return _GroupBy(self, by, kw)

    def slice(self, offset: int, length: int | None = None) -> pl.DataFrame:
        return _collect(self.lazy().slice(offset, length))

    def head(self, n: int = 5) -> pl.DataFrame:
        return _collect(self.lazy().head(n))

    def tail(self, n: int = 5) -> pl.DataFrame:
        return _collect(self.lazy().tail(n))

    def row(self, index: int, *, named: bool = False):
        i = index if index >= 0 else self.height + index
        frame = _collect(self.lazy().slice(i, 1))
        if frame.height == 0:
            raise IndexError(f"row index {index} is out of bounds")
        return frame.row(0, named=named)

    def clear(self, n: int = 0) -> pl.DataFrame:
        if self._empty is None:
            self._empty = pl.DataFrame(schema=self.schema)
        return self._empty.clear(n)

    def get_column(self, name: str) -> pl.Series:
        return _collect(self.lazy().select(name)).to_series()

    def __getitem__(self, key):
        if isinstance(key, str):
            return self.get_column(key)
        if isinstance(key, list) and all(isinstance(k, str) for k in key):
            return self.select(key)
        return self.collect()[key]

    def __contains__(self, name: str) -> bool:
        return name in self.schema

    def __iter__(self):
        raise TypeError("iterate over a LazyTable's columns: collect() it first")

    def iter_slices(self, n_rows: int = 10_000):
        """The rows in order, ``n_rows`` at a time."""
        for at in range(0, self.height, n_rows):
            yield self.slice(at, n_rows)

    def stored(self) -> "EventsOnDisk":
        """These rows as parts on disk (streamed: the query is not held)."""
        path = self.spill.path()
        try:
            self.lazy().sink_parquet(path, compression=_COMPRESSION, statistics=False)
        except OSError as e:
            raise _no_room(str(self.spill.dir), e) from None
        return EventsOnDisk(self.spill, [path], dict(self.schema))

    # --- anything else: the rows loaded --------------------------------------------------------

    def __getattr__(self, name: str):
        if name.startswith("__") or name.startswith("_"):
            raise AttributeError(name)
        if os.environ.get("LOGSLEUTH_SPILL_TRACE"):  # which questions load the rows (to make them lazy)
            import traceback

            where = [f"{f.filename.rsplit('logsleuth/', 1)[-1]}:{f.lineno}" for f in traceback.extract_stack()[-4:-1]]
            print(f"spill: {name} loads the rows at {' < '.join(reversed(where))}", file=__import__("sys").stderr)
        return getattr(self.collect(), name)


class EventsOnDisk(LazyTable):
    """The events table as Parquet parts, in order."""

    def __init__(self, spill: Spill, parts: list[Path], schema: dict, height: int | None = None, consts: list[dict] | None = None):
        self.parts = parts
        # per part, the columns whose one value is the part's (an input's ``file`` and ``path``):
        # not written in it, added as constants when it is read
        self.consts = consts
        super().__init__(_scan(parts, dict(schema), consts), spill, schema, height)

    def stored(self) -> "EventsOnDisk":
        return self

    change = None  # a change of each part still to be made (spill.finish makes it): see later()
    settled = False  # its parts were written final (Holder.settle): finish keeps them as they are
    ends = None
    _starts: list[int] | None = None

    def _part_starts(self) -> list[int]:
        """Where each part begins, and the end (the row counts in the parts' footers)."""
        if self._starts is None:
            heights = [pl.scan_parquet(p, glob=False).select(pl.len()).collect().item() for p in self.parts]
            self._starts = [0, *itertools.accumulate(heights)]
        return self._starts

    def with_row_index(self, name: str = "index", offset: int = 0) -> "LazyTable":
        """The rows numbered by the scans of the parts (a row index above the constant columns
        would keep a filter from reading only the rows it keeps: every row of the columns it
        asks for read first)."""
        if not self.consts or not any(self.consts):
            return super().with_row_index(name, offset)
        lf = _scan(self.parts, dict(self.schema), self.consts, (name, offset, self._part_starts()))
        return self._derived(lf, self._height)

    def at(self, positions: pl.Series) -> pl.DataFrame:
        """The rows at these positions (sorted, unique), with ``_gi`` (the position): read from the
        parts that hold them only, a run of neighbouring rows at a time (a slice of a part reads its
        pages, not the part), instead of a scan of every part that keeps a few rows."""
        self._part_starts()
        assert self._starts is not None
        starts, full = pl.Series(self._starts[:-1], dtype=pl.Int64), dict(self.schema)
        idx = positions.cast(pl.Int64)
        which = (starts.search_sorted(idx, side="right") - 1).to_list()
        pieces, runs = [], []  # (part, first row in it, rows)
        for k, i in zip(which, idx.to_list()):
            if runs and runs[-1][0] == k and runs[-1][1] + runs[-1][2] == i - self._starts[k]:
                runs[-1][2] += 1
            else:
                runs.append([k, i - self._starts[k], 1])
        for k, off, n in runs:
            got = self._with_consts(k, pl.scan_parquet(self.parts[k], glob=False).slice(off, n).collect())
            pieces.append(_aligned(got, full).with_columns(_gi=pl.int_range(off + self._starts[k], off + self._starts[k] + n, dtype=pl.UInt32)))
        return pl.concat(pieces) if pieces else pl.DataFrame(schema=full).with_columns(_gi=pl.lit(None, dtype=pl.UInt32))

    def part_frames(self, columns: list[str] | None = None):
        """The rows in order, a part at a time (aligned to the table's schema, or these of its columns)."""
        schema = {c: t for c, t in self.schema.items() if columns is None or c in columns}
        for k, part in enumerate(self.parts):
            got = pl.read_parquet(part, columns=[c for c in _schema(part) if c in schema], glob=False)
            yield _aligned(self._with_consts(k, got, schema), schema)

    def _with_consts(self, k: int, frame: pl.DataFrame, schema: dict | None = None) -> pl.DataFrame:
        """Part ``k``'s rows with its constant columns (those of ``schema``, when given)."""
        if not self.consts or not self.consts[k]:
            return frame
        types = self.schema
        return frame.with_columns(**{c: pl.lit(v, dtype=types[c]) for c, v in self.consts[k].items() if schema is None or c in schema})

    def later(self, gone) -> "EventsOnDisk":
        """This table with ``change`` still to be made on each part and then these columns dropped
        (spill.finish does both, in the one rewrite of the run's table)."""
        gone = [c for c in gone if c in self.schema]
        if not gone and self.change is None:  # (a settled input's parts were written without them)
            return self
        first = self.change or (lambda f: f)
        self.change = lambda f: (lambda g: g.drop([c for c in gone if c in g.columns]))(first(f))
        return self

    def rewrite(self, change, order: pl.Series | None = None) -> "EventsOnDisk":
        """The table with ``change`` applied to each part, and its rows in the order ``order`` gives
        when given (positions in this table)."""
        parts: list[Path] = []
        schema: dict | None = None
        if order is None:
            for frame in self.part_frames():
                frame = change(frame)
                schema = schema or dict(frame.schema)
                if frame.height:
                    parts.append(self.spill.write(frame))
        else:
            starts = pl.Series(self._part_starts()[:-1], dtype=pl.Int64)
            cache: dict[int, pl.DataFrame] = {}
            full = dict(self.schema)
            for at in range(0, len(order), PART_ROWS):
                idx = order.slice(at, PART_ROWS).cast(pl.Int64)
                which = (starts.search_sorted(idx, side="right") - 1).cast(pl.Int64)
                pieces = []
                for k in which.unique(maintain_order=True).to_list():
                    if k not in cache:
                        if len(cache) >= 4:
                            cache.pop(next(iter(cache)))
                        cache[k] = _aligned(self._with_consts(k, pl.read_parquet(self.parts[k], glob=False)), full)
                    sel = (which == k).arg_true()
                    pieces.append(cache[k][idx.gather(sel) - starts[k]].with_columns(_k=sel))
                frame = change(pl.concat(pieces).sort("_k").drop("_k"))
                schema = schema or dict(frame.schema)
                parts.append(self.spill.write(frame))
            cache.clear()
        if schema is None:
            schema = dict(change(pl.DataFrame(schema=self.schema)).schema)
        return EventsOnDisk(self.spill, parts, schema)


def _scan(parts: list[Path], schema: dict, consts: list[dict] | None, index: tuple[str, int, list[int]] | None = None) -> pl.LazyFrame:
    """The parts as one lazy frame of ``schema``: a column a part lacks read as nulls, and each
    part's constant columns (``consts``) added to it; parts that share them scanned as one.
    ``index``: (name, offset, where each part starts) — a row index made by the scans themselves
    (first column), so that a filter on the rows still reads only the rows it keeps."""
    if not parts:
        lf = pl.LazyFrame(schema=schema)
        return lf if index is None else lf.with_row_index(index[0], index[1])
    if not consts or not any(consts):
        consts = [{}] * len(parts)
    runs: list[tuple[dict, list[Path], int]] = []
    for k, (part, c) in enumerate(zip(parts, consts)):
        if runs and runs[-1][0] == c:
            runs[-1][1].append(part)
        else:
            runs.append((c or {}, [part], k))
    frames = []
    for c, ps, k in runs:
        stored = {n: t for n, t in schema.items() if n not in c}
        kw = {} if index is None else {"row_index_name": index[0], "row_index_offset": index[1] + index[2][k]}
        lf = pl.scan_parquet(ps, schema=stored, missing_columns="insert", extra_columns="ignore", glob=False, **kw)
        if c:
            lf = lf.with_columns(**{n: pl.lit(v, dtype=schema[n]) for n, v in c.items()}).select(([index[0]] if index else []) + list(schema))
        frames.append(lf)
    return frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical")


class _GroupBy:
    """``EventsOnDisk.group_by``: each aggregation collected (a DataFrame, as a DataFrame's gives)."""

    def __init__(self, view: "LazyTable", by, kw):
        self._view, self._by, self._kw = view, by, kw

    def __getattr__(self, name: str):
        fn = getattr(self._view.lazy().group_by(*self._by, **self._kw), name)
        return lambda *a, **k: _collect(fn(*a, **k))

    def __iter__(self):  # the groups as frames: the rows loaded
        return iter(self._view.collect().group_by(*self._by, **self._kw))


def finish(tables: list, complete) -> pl.DataFrame | EventsOnDisk:
    """The run's table from each input's events, in input order: each a (table, {column: value}
    naming its rows' input) — the table a DataFrame or, past the budget, EventsOnDisk. In memory:
    one chunk per column, made a column at a time. When any input went to disk: its parts written
    final (``settled``, with the types the table has) are kept as they are, named as they are read
    (``EventsOnDisk.consts``); every other part, and the inputs held in memory, are named, aligned
    to one schema and ``complete``-d, and written (a part whose times were not final yet: rewritten)."""
    from logsleuth.ingest.reader import concat_aligned

    disk = next((t for t, _ in tables if not isinstance(t, pl.DataFrame)), None)
    if disk is None:
        frames = [t.with_columns(**{c: pl.lit(v, dtype=pl.String) for c, v in names.items()}) for t, names in tables]
        tables.clear()
        return complete(concat_aligned(frames))
    spill = disk.spill
    # (part or frame, the schema of its input's parts, its input's names, the change still to make, settled)
    parts: list[tuple[Path | pl.DataFrame, dict, dict, object, bool]] = []
    for t, names in tables:
        if isinstance(t, pl.DataFrame):
            parts.append((t, dict(t.schema), names, None, False))
        else:
            parts += [(p, dict(t.schema), names, t.change, t.settled and t.change is None) for p in t.parts]
    tables.clear()

    def made(frame: pl.DataFrame, schema: dict, names: dict, change) -> pl.DataFrame:
        frame = _aligned(frame, schema)
        frame = change(frame) if change is not None else frame
        return frame.with_columns(**{c: pl.lit(v, dtype=pl.String) for c, v in names.items()})

    # the schema of the parts once made: each distinct (part schema, input) made, on a row of nulls
    # (the parts' footers tell their schemas; reading a row of each part cost 12 ms a part)
    shapes: dict = {}
    for p, schema_in, names, change, _ in parts:
        schema = dict(p.schema) if isinstance(p, pl.DataFrame) else _schema(p)
        key = (tuple(schema.items()), tuple(schema_in.items()), tuple(names.items()), id(change))
        if key not in shapes:
            shapes[key] = pl.DataFrame(schema=made(pl.DataFrame(schema=schema).clear(1), schema_in, names, change).schema)  # (a row of nulls)
    named = dict(pl.concat(list(shapes.values()), how="diagonal_relaxed").schema)
    final = dict(complete(pl.DataFrame(schema=named)).schema)
    out: list[Path] = []
    consts: list[dict] = []
    for p, schema_in, names, change, settled in parts:
        if settled and isinstance(p, Path) and all(final.get(c) == t for c, t in _schema(p).items()):
            out.append(p)  # written final: kept as it is, its input's names added when read
            consts.append({c: v for c, v in names.items() if c in final})
            continue
        frame = complete(_aligned(made(pl.read_parquet(p, glob=False) if isinstance(p, Path) else p, schema_in, names, change), named))
        if frame.height:
            out.append(spill.write(_written(frame)))
            consts.append({})
        if isinstance(p, Path):
            p.unlink()
    return EventsOnDisk(spill, out, final, consts=consts)


def time_order(table: LazyTable, keys: list[str]) -> EventsOnDisk:
    """The table on disk in (keys) order, nulls last, ties in their order (``events.in_time_order``)."""
    view = table.stored()
    if _in_order(view, keys):
        return view
    order = view.select(pl.arg_sort_by(keys, nulls_last=True, maintain_order=True)).to_series()
    if order.is_sorted():
        return view
    return view.rewrite(lambda f: f, order)


def _in_order(view: EventsOnDisk, keys: list[str]) -> bool:
    """Are the rows in (keys) order already (nulls last; rows that tie as they are, as the stable
    sort leaves them)? Asked of a part and the last row of the one before it at a time: rows are in
    order when every two neighbours are. The order of the whole table (three columns of every row,
    and the sort's working memory: +230 MB for 2.7M events) is worked out only when they are not."""
    last: pl.DataFrame | None = None
    for frame in view.part_frames(keys):
        if frame.height == 0:
            continue
        both = frame if last is None else pl.concat([last, frame])
        if not both.select(pl.arg_sort_by(keys, nulls_last=True, maintain_order=True)).to_series().is_sorted():
            return False
        last = frame.tail(1)
    return True
