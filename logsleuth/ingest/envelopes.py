"""Envelopes: wrappers around the log text, removed before layout detection.

* ``cri`` — Kubernetes CRI files: ``2024-05-02T10:15:31.123456789Z stdout F <text>``; partial lines
  (tag ``P``, the kubelet splits lines longer than 16 KiB) are joined to the lines that complete
  them (:func:`join_partials`), numbered by their first physical line
* ``fluentd-out_file`` — fluentd's ``out_file`` default format: ``<time>\t<tag>\t<record JSON>``
  (the text is in the record's ``log``/``message``/``msg``)
* ``docker-ts`` — ``docker logs -t``: an RFC 3339 (nano) stamp and a space before the text; taken
  only when the text inside is read no worse (with the collectors' fixed 7-9-digit stamps) or
  clearly better (any other stamp: an application's own ISO stamp) than the whole line
  (``layouts.detect._earns``)
* wrappers (``wrappers.py``, ``patterns/wrappers.toml``) — what a tool put in front of each line
  (``docker compose logs``, ``kubectl logs --prefix``, syslog, a Markdown quote, ...): peeled first
* ``json`` — one JSON object per line with the text in ``log``/``msg``/``message``/... (docker
  json-file, fluentd/fluent-bit with ``kubernetes`` fields, zap, logrus)

An outer prefix (cri/docker-ts) may wrap a JSON line. Detection looks at the first lines of a
file; unwrapping then runs as Polars expressions on every line. Lines that do not fit the detected
envelope pass through unchanged. The envelope's timestamp, level, logger and host are kept and
used when the inner text does not carry them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import polars as pl

from logsleuth.ingest import wrappers as wrap
from logsleuth.ingest.timeparse import parse_any_time, parse_iso

RFC3339 = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})"
# CRI: <RFC 3339 stamp> <stream> <F: full line | P: a part, continued on the stream's next line> <text>
CRI_HEAD = rf"^{RFC3339} (stdout|stderr) ([FP]) "
CRI_RE = rf"^(?P<ets>{RFC3339}) (?:stdout|stderr) [FP] (?P<inner>.*)$"
CRI_PARTIAL_RE = rf"^{RFC3339} (?:stdout|stderr) P "
# fluentd out_file: time (time_format default: ISO 8601 with an offset), TAB, tag, TAB, the record as JSON
FLUENTD_RE = r"^(?P<ets>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?\d{2}))\t(?P<tag>[^\t]*)\t(?P<inner>\{.*)$"
DOCKER_TS_RE = rf"^(?P<ets>{RFC3339}) (?P<inner>.*)$"
# what `docker logs -t` and `kubectl logs --timestamps` print (Go's RFC3339NanoFixed: 9 fraction
# digits, moby api/server/httputils, kubelet kuberuntime/logs) and GitHub Actions' raw logs (7)
FIXED_TS_RE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7,9}(?:Z|[+-]\d{2}:\d{2}) "
ANSI_RE = r"\x1b\[[0-9;?]*[A-Za-z]"

TEXT_KEYS = ("log", "msg", "message", "MESSAGE", "Message", "text", "@message")
TIME_KEYS = ("time", "ts", "@timestamp", "timestamp", "T", "datetime", "date", "_SOURCE_REALTIME_TIMESTAMP", "__REALTIME_TIMESTAMP")
LEVEL_KEYS = ("level", "severity", "lvl", "levelname", "log.level", "Level", "L")
LOGGER_KEYS = ("logger", "logger_name", "loggerName", "name", "N", "log.logger")
ERROR_KEYS = ("error", "err", "errorVerbose", "exception")
STACK_KEYS = ("stacktrace", "stack_trace", "stack")
HOST_PATHS = ("$.kubernetes.pod_name", "$.kubernetes.host", "$.host", "$.hostname", "$._HOSTNAME")

SAMPLE = 500
# JSON text keys tried, in this order, on a line that lacks the detected one (one file may hold
# records of several sources: fluentd out_file with `log` from containers and `message` from syslog)
FALLBACK_TEXT_KEYS = ("log", "message", "msg")


@dataclass(frozen=True)
class Envelope:
    wrappers: tuple[str, ...] = ()  # ids of wrappers.toml peeled first, outermost first
    outer: str | None = None  # "cri" | "docker-ts" | "fluentd-out_file" | None
    json_text: str | None = None  # key of the log text inside a JSON envelope
    json_time: str | None = None
    json_level: str | None = None
    json_logger: str | None = None
    json_error: str | None = None
    json_stack: str | None = None
    json_host: str | None = None  # JSON path
    ansi: bool = False
    nested: "Envelope | None" = None  # JSON inside the JSON's text (zap's lines in docker's json-file)

    @property
    def name(self) -> str:
        parts = [*self.wrappers] + [p for p in (self.outer, "json" if self.json_text else None) if p]
        name = "+".join(parts) if parts else "none"
        if self.json_text:
            name += f" ({self.json_text})"
        if self.nested is not None:
            name += f"+{self.nested.name}"
        return name

    @property
    def is_none(self) -> bool:
        return self.outer is None and self.json_text is None and not self.wrappers


NONE = Envelope()
OUTERS = (("cri", CRI_RE), ("fluentd-out_file", FLUENTD_RE), ("docker-ts", DOCKER_TS_RE))
OUTER_RE = dict(OUTERS)


def _rate(lines: list[str], regex: str) -> float:
    if not lines:
        return 0.0
    cre = re.compile(regex)
    return sum(1 for x in lines if cre.match(x)) / len(lines)


def fixed_stamps(lines: pl.Series) -> bool:
    """Do most of these (non-empty) lines begin with the fixed 7-9-digit stamp of a log collector
    (``docker logs -t``, ``kubectl logs --timestamps``, GitHub Actions), rather than with the
    millisecond stamp an application prints itself?"""
    lines = lines.filter(lines.str.strip_chars() != "")
    return lines.len() > 0 and lines.str.contains(FIXED_TS_RE).sum() >= 0.5 * lines.len()


def _json_objects(lines: list[str]) -> list[dict]:
    """The lines that are JSON objects, parsed."""
    objs = []
    for x in lines:
        s = x.strip()
        if not s.startswith("{"):
            continue
        try:
            o = json.loads(s)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python's stack
            continue
        if isinstance(o, dict):
            objs.append(o)
    return objs


def _json_shape(lines: list[str], min_share: float = 0.5, min_objects: int = 1) -> dict | None:
    """The keys of the JSON objects among ``lines`` when at least ``min_share`` of the lines and
    ``min_objects`` lines are such objects."""
    objs = _json_objects(lines)
    if len(objs) < max(min_objects, 1) or len(objs) < min_share * len(lines):
        return None

    def pick(keys: tuple[str, ...], want_str: bool = True) -> str | None:
        for k in keys:
            n = sum(1 for o in objs if k in o and (isinstance(o[k], str) or not want_str))
            if n >= 0.5 * len(objs):
                return k
        return None

    text = pick(TEXT_KEYS)
    if text is None:  # records from several sources, e.g. `log` on some lines and `message` on others
        has = {k: sum(1 for o in objs if isinstance(o.get(k), str)) for k in FALLBACK_TEXT_KEYS}
        if sum(1 for o in objs if any(isinstance(o.get(k), str) for k in FALLBACK_TEXT_KEYS)) >= 0.5 * len(objs):
            text = max(FALLBACK_TEXT_KEYS, key=lambda k: has[k])
    if text is None:
        return None
    host = None
    for path in HOST_PATHS:
        keys = path[2:].split(".")

        def get(o, keys=keys):
            for k in keys:
                if not isinstance(o, dict) or k not in o:
                    return None
                o = o[k]
            return o

        if sum(1 for o in objs if isinstance(get(o), str)) >= 0.5 * len(objs):
            host = path
            break
    return {
        "json_text": text,
        "json_time": pick(TIME_KEYS, want_str=False),
        "json_level": pick(LEVEL_KEYS),
        "json_logger": pick(tuple(k for k in LOGGER_KEYS if k != text)),
        "json_error": next((k for k in ERROR_KEYS if any(isinstance(o.get(k), str) for o in objs)), None),
        "json_stack": next((k for k in STACK_KEYS if any(isinstance(o.get(k), str) for o in objs)), None),
        "json_host": host,
    }


def candidates(sample: list[str]) -> list[Envelope]:
    """Envelopes that fit the first lines of a file, most likely first (always ends with none)."""
    lines = [x for x in sample[:SAMPLE] if x.strip()]
    ansi = any("\x1b[" in x for x in lines)
    out: list[Envelope] = []
    for outer, regex in OUTERS:
        if lines and _rate(lines, regex) >= 0.5:
            cre = re.compile(regex)
            inner = [m.group("inner") for m in map(cre.match, lines) if m]
            shape = _json_shape(inner)
            if shape:
                out.append(Envelope(outer=outer, ansi=ansi, **shape))
            out.append(Envelope(outer=outer, ansi=ansi))
            break  # cri lines also look like docker-ts lines; the first that fits wins
    shape = _json_shape(lines)
    if shape:
        # JSON inside the JSON (zap's lines in docker's json-file): two such lines in the head are
        # enough (a Go service's std-log lines may far outnumber them); unwrapping it costs a pass
        # over the lines, so only a file that shows some pays it
        inner = _json_shape(_texts(lines, shape["json_text"]), min_share=0.0, min_objects=2)
        if inner:
            out.append(Envelope(ansi=ansi, **shape, nested=Envelope(**inner)))
        out.append(Envelope(ansi=ansi, **shape))
    else:
        # a few structured logger's objects (with a level) among plain lines: a zap application
        # beside sarama's std logger; the other lines pass through unchanged
        few = _json_shape(lines, min_share=0.0, min_objects=2)
        if few and few["json_level"]:
            out.append(Envelope(ansi=ansi, **few))
    out.append(Envelope(ansi=ansi))
    return out


def _texts(lines: list[str], key: str) -> list[str]:
    """The text under ``key`` of each JSON line (for JSON inside JSON)."""
    return [o[key].strip() for o in _json_objects(lines) if isinstance(o.get(key), str) and o[key].strip()]


def _path(key: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"$.{key}"
    return "$['" + key.replace("'", "\\'") + "']"


def unwrap(frame: pl.DataFrame, env: Envelope, year: int | None = None) -> pl.DataFrame:
    """Add ``text`` (what the layout parses) and ``env_ts``/``env_naive``/``env_level``/``env_logger``/
    ``env_host``. ``year``: for a wrapper's stamp without one (syslog)."""
    base = pl.col("raw").str.replace_all(ANSI_RE, "") if env.ansi else pl.col("raw")
    env_ts = pl.lit(None, dtype=pl.Datetime("us", "UTC"))
    env_naive = pl.lit(None, dtype=pl.Datetime("us"))
    env_level = pl.lit(None, dtype=pl.String)
    env_logger = pl.lit(None, dtype=pl.String)
    env_host = pl.lit(None, dtype=pl.String)
    cols: dict[str, pl.Expr] = {}
    if env.wrappers:
        frame = wrap.peel(frame, base, env.wrappers, year)
        base, env_ts, env_naive, env_host = pl.col("_wtext"), pl.col("_wets"), pl.col("_wnaive"), pl.col("_whost")
    text = base
    if env.outer:
        regex = OUTER_RE[env.outer]
        # (a column, computed once: as an expression used for the text and the stamp, Polars ran
        # the regex twice; docker-ts 500k lines: unwrap 1.39 -> 0.8 CPU-s)
        frame = frame.with_columns(_outer=base.str.extract_groups(regex))
        parts = pl.col("_outer")
        inner = parts.struct.field("inner")
        text = pl.when(inner.is_not_null()).then(inner).otherwise(base)
        ets = parts.struct.field("ets")
        env_ts = pl.coalesce(parse_any_time(ets) if env.outer == "fluentd-out_file" else parse_iso(ets), env_ts)
    if env.json_text:
        frame, text, env_ts, env_level, env_logger, env_host = _json_step(frame, text, env, env_ts, env_level, env_logger, env_host, "")
        if env.nested is not None:  # JSON inside JSON: a JSON logger's lines inside docker's json-file lines
            frame, text, env_ts, env_level, env_logger, env_host = _json_step(
                frame, text, env.nested, env_ts, env_level, env_logger, env_host, "2")
    # NUL padding left by a crash (a preallocated or truncated file) ends where the next write
    # begins: a line that starts with NULs is read from its first other byte (raw keeps them)
    if frame.height and frame.select(pl.col("raw").str.starts_with("\x00").any()).item():
        text = text.str.strip_chars_start("\x00")
    cols.update(text=text, env_ts=env_ts, env_naive=env_naive, env_level=env_level, env_logger=env_logger, env_host=env_host)
    out = frame.with_columns(**cols)
    temp = ("_inner", "_obj", "_jt", "_err", "_st", "_jts", "_inner2", "_obj2", "_jt2", "_err2", "_st2", "_jts2", "_wtext", "_wets", "_wnaive", "_whost", "_outer")
    return out.drop([c for c in temp if c in out.columns])


def _json_step(frame: pl.DataFrame, text: pl.Expr, env: "Envelope", env_ts: pl.Expr, env_level: pl.Expr, env_logger: pl.Expr,
               env_host: pl.Expr, k: str) -> tuple[pl.DataFrame, pl.Expr, pl.Expr, pl.Expr, pl.Expr, pl.Expr]:
    """One JSON envelope's unwrapping of ``text`` (its helper columns suffixed ``k``): the text, and the
    time, level, logger and host it carries over those of the envelopes around it. A line that is
    not a JSON object passes through unchanged."""
    frame = frame.with_columns(**{f"_inner{k}": text})
    whole = pl.col(f"_inner{k}")
    if k and not frame.select(whole.str.starts_with("{").any()).item():  # no JSON inside this chunk's JSON
        return frame, whole, env_ts, env_level, env_logger, env_host
    # only JSON objects are parsed (a mixed stream's other lines pass): as a column, computed once
    frame = frame.with_columns(**{f"_obj{k}": pl.when(whole.str.starts_with("{")).then(whole)})
    src = pl.col(f"_obj{k}")
    # each JSON lookup once, as a column (an expression used twice would be evaluated twice);
    # error and stack keys are looked for on every line (the first lines may have none)
    frame = frame.with_columns(**{
        f"_jt{k}": src.str.json_path_match(_path(env.json_text)),
        f"_err{k}": pl.coalesce([_optional_key(src, key) for key in ERROR_KEYS if key != env.json_text]),
        f"_st{k}": pl.coalesce([_optional_key(src, key) for key in STACK_KEYS if key != env.json_text]),
        f"_jts{k}": src.str.json_path_match(_path(env.json_time)) if env.json_time else pl.lit(None, dtype=pl.String),
    })
    fallback = [key for key in FALLBACK_TEXT_KEYS if key != env.json_text]
    lacking = pl.col(f"_jt{k}").is_null() & whole.str.starts_with("{")
    if fallback and frame.select(lacking.any()).item():  # lines without the detected text key
        frame = frame.with_columns(**{
            f"_jt{k}": pl.coalesce([pl.col(f"_jt{k}")] + [_optional_key(pl.when(lacking).then(src), key) for key in fallback])
        })
    frame = frame.with_columns(pl.col(f"_jt{k}").str.strip_suffix("\n").str.strip_suffix("\r"))
    jt, err, st = pl.col(f"_jt{k}"), pl.col(f"_err{k}"), pl.col(f"_st{k}")
    jt = pl.when(err.is_not_null()).then(pl.concat_str([jt, pl.lit(": "), err])).otherwise(jt)
    jt = pl.when(st.is_not_null()).then(pl.concat_str([jt, pl.lit("\n"), st])).otherwise(jt)
    text = pl.when(whole.str.starts_with("{") & pl.col(f"_jt{k}").is_not_null()).then(jt).otherwise(whole)
    if env.ansi:
        text = text.str.replace_all(ANSI_RE, "")
    if env.json_time:
        jts = parse_any_time(pl.col(f"_jts{k}"))
        env_ts = pl.coalesce(jts, env_ts)
    if env.json_level:
        env_level = pl.coalesce(src.str.json_path_match(_path(env.json_level)), env_level)
    if env.json_logger:
        env_logger = pl.coalesce(src.str.json_path_match(_path(env.json_logger)), env_logger)
    if env.json_host:
        env_host = pl.coalesce(src.str.json_path_match(env.json_host), env_host)
    return frame, text, env_ts, env_level, env_logger, env_host


def _stream() -> pl.Expr:
    """stdout / stderr of a CRI line ("" when the line has no CRI head)."""
    return pl.col("raw").str.extract(CRI_HEAD, 1).fill_null("")


def join_partials(frame: pl.DataFrame, env: Envelope) -> pl.DataFrame:
    """CRI partial lines back into whole lines, on ``raw`` before :func:`unwrap`.

    ``<ts> stdout P <a>``, ``<ts> stdout P <b>``, ``<ts> stdout F <c>`` become one row: the first
    line's number and its raw line with ``<b><c>`` appended (the kubelet cuts at 16 KiB and adds no
    newline). Each stream is joined on its own: a stderr line written between a stdout part and its
    completion stays a line of its own. The row count shrinks; a trailing ``P`` run (finished in
    the next chunk) should be held back by the caller (:func:`split_partial_tail`). Vectorised; a
    no-op without ``P`` lines."""
    if env.outer != "cri" or frame.height == 0:
        return frame
    flags = frame.select(_p=pl.col("raw").str.contains(CRI_PARTIAL_RE))["_p"]
    if not flags.any():
        return frame
    f = frame.with_columns(_p=flags, _s=_stream())
    # the previous line of the same stream was a part: this line continues it
    f = f.with_columns(_after_p=pl.col("_p").shift(1).over("_s").fill_null(False))
    inv = f.filter(pl.col("_p") | pl.col("_after_p")).with_columns(_g=(~pl.col("_after_p")).cast(pl.Int64).cum_sum().over("_s"))
    piece = pl.when(pl.col("_after_p")).then(pl.col("raw").str.replace(CRI_HEAD, "")).otherwise(pl.col("raw"))
    joined = inv.group_by("_s", "_g", maintain_order=True).agg(pl.col("line").first(), _joined=piece.str.join(""))
    out = f.filter(~pl.col("_after_p")).join(joined.select("line", "_joined"), on="line", how="left", maintain_order="left")
    return out.with_columns(raw=pl.coalesce(pl.col("_joined"), pl.col("raw"))).select(frame.columns)


def split_partial_tail(frame: pl.DataFrame, env: Envelope) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """(frame without its unfinished CRI parts, those lines or None): a stream whose last line in
    the chunk is a ``P`` part is finished in the next chunk, so everything from the start of that
    run of parts on is held back — and the cut must not fall inside another stream's run of parts
    either (stderr's parts begun before stdout's last part, finished after it): the cut is the last
    place at or before the unfinished runs' first line that no run of parts spans. One pass: each
    stream's logical lines grouped as :func:`join_partials` groups them."""
    if env.outer != "cri" or frame.height == 0:
        return frame, None
    flags = frame.select(_p=pl.col("raw").str.contains(CRI_PARTIAL_RE))["_p"]
    if not flags.any():  # the common case: no parts, nothing else to compute
        return frame, None
    after_p = pl.col("_p").shift(1).over("_s").fill_null(False)  # this line continues its stream's line before
    runs = (
        frame.select(_p=flags, _s=_stream()).with_row_index("_i")
        .with_columns(_g=(~after_p).cast(pl.Int64).cum_sum().over("_s"))
        .group_by("_s", "_g")
        .agg(start=pl.col("_i").min(), end=pl.col("_i").max(), done=~pl.col("_p").last())
    )
    open_starts = runs.filter(~pl.col("done"))["start"]
    if open_starts.len() == 0:
        return frame, None
    first_open = int(open_starts.min())  # type: ignore[arg-type]
    # a cut at position c (the lines before c kept) splits a finished run when start < c <= end
    spans = runs.filter(pl.col("done") & (pl.col("end") > pl.col("start")))
    if not spans.select(((pl.col("start") < first_open) & (first_open <= pl.col("end"))).any()).item():
        return frame.slice(0, first_open), frame.slice(first_open)  # (the usual case: no run spans it)
    # the positions each run forbids, counted with +1 at start + 1 and -1 at end + 1
    marks = pl.concat([spans.select(pos=pl.col("start") + 1, d=pl.lit(1, pl.Int64)), spans.select(pos=pl.col("end") + 1, d=pl.lit(-1, pl.Int64))])
    cover = (
        pl.DataFrame({"pos": pl.int_range(0, first_open + 1, dtype=pl.Int64, eager=True)})
        .join(marks.group_by("pos").agg(pl.col("d").sum()), on="pos", how="left", maintain_order="left")
        .select("pos", inside=pl.col("d").fill_null(0).cum_sum())
    )
    cut = int(cover.filter(pl.col("inside") == 0)["pos"].max())  # type: ignore[arg-type]  (0 always is)
    return frame.slice(0, cut), frame.slice(cut)


def _optional_key(src: pl.Expr, key: str) -> pl.Expr:
    """A top-level key most lines lack: only lines that contain ``"key"`` are JSON-parsed (a
    JSON path match costs ~1.7 µs a line; the substring test a few ns)."""
    return pl.when(src.str.contains(f'"{key}"', literal=True)).then(src).str.json_path_match(_path(key))
