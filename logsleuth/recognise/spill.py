"""The events table on disk, past a memory budget (``--memory-budget``).

While the inputs are read, each batch of events is held in memory until the batches held add up to
the budget. Past it, they and every later batch go to Parquet files in a temporary directory, and
the table the later stages get is an :class:`EventsOnDisk`: the same rows, in the same order, with
the same columns and types, read back by lazy Polars queries that load only the columns and rows a
question needs (``lazy()``, ``filter``, ``select``, ``height``, ``slice`` ...). What a stage asks of
it that it does not answer lazily is answered by loading the rows it stands for (``__getattr__``),
so every DataFrame question still gets the DataFrame answer.

A change of the whole table (``with_columns``: the rotated segments' names, a client clock's skew)
and putting it in time order (``in_time_order``) rewrite the parts, part by part; the order is found
from three narrow columns (time, file, line) and the rows are moved by gathering from the parts a
slice of the order touches, so no step holds the table.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import polars as pl

DEFAULT_BUDGET = 256 * 2**20
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
        base = os.environ.get("LOGSLEUTH_SPILL_DIR") or None
        self.dir = Path(tempfile.mkdtemp(prefix="logsleuth-events-", dir=base))
        self._n = 0
        atexit.register(shutil.rmtree, self.dir, True)

    def write(self, frame: pl.DataFrame) -> Path:
        self._n += 1
        path = self.dir / f"part-{self._n:06d}.parquet"
        frame.write_parquet(path, compression=_COMPRESSION, statistics=False)
        return path


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

    @property
    def spill(self) -> Spill | None:
        return self.budget.spill if self.parts else None

    def add(self, frame: pl.DataFrame) -> None:
        if self.budget.take(_estimated(frame)):
            self.frames.append(frame)
            return
        spill = self.budget.spill
        assert spill is not None
        for f in self.frames:  # this input's batches held so far go first, in order
            self.parts.append(spill.write(f))
        self.frames.clear()
        self.parts.append(spill.write(frame))

    def __bool__(self) -> bool:
        return bool(self.frames or self.parts)

    def view(self) -> "EventsOnDisk":
        assert self.budget.spill is not None
        return EventsOnDisk(self.budget.spill, list(self.parts), unified_schema(self.parts))


def unified_schema(parts: list[Path]) -> dict:
    """The schema a diagonal, relaxed concat of the parts would have (read from their footers)."""
    empties = [pl.DataFrame(schema=pl.read_parquet_schema(p)) for p in parts]
    return dict(pl.concat(empties, how="diagonal_relaxed").schema) if empties else {}


def _aligned(frame: pl.DataFrame, schema: dict) -> pl.DataFrame:
    cols = [
        (pl.col(c).cast(t) if frame.schema[c] != t else pl.col(c)) if c in frame.columns else pl.lit(None, dtype=t).alias(c)
        for c, t in schema.items()
    ]
    return frame.select(cols)


class EventsOnDisk:
    """The events table as Parquet parts in order (see the module's doc). ``where``: the rows of
    the table this view stands for (None: all of them)."""

    def __init__(self, spill: Spill, parts: list[Path], schema: dict, where: pl.Expr | None = None, height: int | None = None):
        self.spill = spill
        self.parts = parts
        self._schema = pl.Schema(schema)
        self.where = where
        self._height = height

    # --- what is answered without loading the table -------------------------------------------

    def lazy(self) -> pl.LazyFrame:
        if not self.parts:
            return pl.LazyFrame(schema=self._schema)
        lf = pl.scan_parquet(self.parts, schema=dict(self._schema), missing_columns="insert", extra_columns="ignore")
        return lf.filter(self.where) if self.where is not None else lf

    def collect(self) -> pl.DataFrame:
        return self.lazy().collect()

    @property
    def height(self) -> int:
        if self._height is None:
            self._height = int(self.lazy().select(pl.len()).collect().item())
        return self._height

    def __len__(self) -> int:
        return self.height

    def is_empty(self) -> bool:
        return self.height == 0

    @property
    def columns(self) -> list[str]:
        return list(self._schema.names())

    @property
    def schema(self) -> pl.Schema:
        return self._schema

    @property
    def width(self) -> int:
        return len(self._schema)

    def filter(self, *predicates, **constraints) -> "EventsOnDisk":
        e = pl.all_horizontal(*predicates) if predicates else pl.lit(True)
        for k, v in constraints.items():
            e = e & (pl.col(k) == v)
        where = e if self.where is None else self.where & e
        return EventsOnDisk(self.spill, self.parts, dict(self._schema), where.fill_null(False))

    def select(self, *exprs, **named) -> pl.DataFrame:
        return self.lazy().select(*exprs, **named).collect()

    def group_by(self, *by, **kw) -> "_GroupBy":
        return _GroupBy(self, by, kw)

    def slice(self, offset: int, length: int | None = None) -> pl.DataFrame:
        return self.lazy().slice(offset, length).collect()

    def head(self, n: int = 5) -> pl.DataFrame:
        return self.lazy().head(n).collect()

    def get_column(self, name: str) -> pl.Series:
        return self.lazy().select(name).collect().to_series()

    def __getitem__(self, key):
        if isinstance(key, str):
            return self.get_column(key)
        if isinstance(key, list) and all(isinstance(k, str) for k in key):
            return self.select(key)
        return self.collect()[key]

    def part_frames(self):
        """The rows in order, a part at a time (aligned to the view's schema, its filter applied)."""
        schema = dict(self._schema)
        for part in self.parts:
            frame = _aligned(pl.read_parquet(part, columns=[c for c in pl.read_parquet_schema(part) if c in schema]), schema)
            yield frame.filter(self.where) if self.where is not None else frame

    def iter_slices(self, n_rows: int = 10_000):
        """The rows in order, ``n_rows`` at a time (each part read once)."""
        for frame in self.part_frames():
            yield from frame.iter_slices(n_rows)

    # --- changes of the whole table: a rewrite, part by part ---------------------------------------

    def with_columns(self, *exprs, **named) -> "EventsOnDisk":
        return self.rewrite(lambda f: f.with_columns(*exprs, **named))

    def dropped(self, names) -> "EventsOnDisk":
        """Without these columns (those it has): the parts are read without them from now on."""
        gone = [c for c in names if c in self._schema]
        if not gone:
            return self
        schema = {c: t for c, t in self._schema.items() if c not in gone}
        return EventsOnDisk(self.spill, self.parts, schema, self.where, self._height)

    def rewrite(self, change, order: pl.Series | None = None) -> "EventsOnDisk":
        """The table with ``change`` applied to each part (rows in the order ``order`` gives, when
        given: positions in this view's rows). The view's filter is applied first."""
        parts: list[Path] = []
        schema: dict | None = None
        if order is None:
            for frame in self.part_frames():
                frame = change(frame)
                schema = schema or dict(frame.schema)
                if frame.height:
                    parts.append(self.spill.write(frame))
        else:
            if self.where is not None:
                raise ValueError("rewrite in a new order: of the whole table only")
            sources = self.parts
            heights = [pl.scan_parquet(p).select(pl.len()).collect().item() for p in sources]
            starts = pl.Series([sum(heights[:i]) for i in range(len(heights))], dtype=pl.Int64)
            cache: dict[int, pl.DataFrame] = {}
            for at in range(0, len(order), PART_ROWS):
                idx = order.slice(at, PART_ROWS).cast(pl.Int64)
                which = (starts.search_sorted(idx, side="right") - 1).cast(pl.Int64)
                pieces = []
                for k in which.unique(maintain_order=True).to_list():
                    if k not in cache:
                        if len(cache) >= 4:
                            cache.pop(next(iter(cache)))
                        cache[k] = _aligned(pl.read_parquet(sources[k]), dict(self._schema))
                    sel = (which == k).arg_true()
                    local = idx.gather(sel) - starts[k]
                    pieces.append(cache[k][local].with_columns(_k=sel))
                frame = change(pl.concat(pieces).sort("_k").drop("_k"))
                schema = schema or dict(frame.schema)
                parts.append(self.spill.write(frame))
            cache.clear()
        if schema is None:
            schema = dict(change(pl.DataFrame(schema=self._schema)).schema)
        return EventsOnDisk(self.spill, parts, schema)

    # --- anything else: the rows this view stands for, loaded -------------------------------------

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.collect(), name)


class _GroupBy:
    """``EventsOnDisk.group_by``: each aggregation collected (a DataFrame, as a DataFrame's gives)."""

    def __init__(self, view: "EventsOnDisk", by, kw):
        self._view, self._by, self._kw = view, by, kw

    def __getattr__(self, name: str):
        fn = getattr(self._view.lazy().group_by(*self._by, **self._kw), name)
        return lambda *a, **k: fn(*a, **k).collect()

    def __iter__(self):  # the groups as frames: the rows loaded
        return iter(self._view.collect().group_by(*self._by, **self._kw))


def finish(tables: list, complete) -> pl.DataFrame | EventsOnDisk:
    """The run's table from each input's events (a DataFrame, or an EventsOnDisk past the budget),
    in input order: in memory (one chunk per column, made a column at a time), or, when any input
    went to disk, every input's parts aligned to one schema and ``complete``-d, each in turn."""
    from logsleuth.ingest.reader import concat_aligned

    disk = next((t for t in tables if isinstance(t, EventsOnDisk)), None)
    if disk is None:
        return complete(concat_aligned(tables))
    spill = disk.spill
    parts: list[Path] = []
    for t in tables:
        parts += t.parts if isinstance(t, EventsOnDisk) else [spill.write(t)]
    tables.clear()
    view = EventsOnDisk(spill, parts, unified_schema(parts))
    return view.rewrite(complete)


def time_order(view: EventsOnDisk, keys: list[str]) -> EventsOnDisk:
    """The view in (keys) order, nulls last, ties in their order (``events.in_time_order``)."""
    order = view.select(pl.arg_sort_by(keys, nulls_last=True, maintain_order=True)).to_series()
    if order.is_sorted():
        return view
    return view.rewrite(lambda f: f, order)
