"""Pattern packs: data files (``patterns/packs/*.toml``) that turn records into typed events.

A pack covers one system/component (Pulsar broker, Pulsar Java client, Kafka Java producer,
sarama). Each pattern names the event it emits, its severity, an optional logger scope, one regex
with named groups from the field vocabulary (``patterns/fields.toml``), the versions whose text it
matches, and samples: real-looking log lines with the fields each must yield. The format is
documented in docs/patterns.md. Loading checks everything that can be checked without running a
sample; :mod:`logsleuth.recognise.packcheck` runs the samples.
"""

from __future__ import annotations

import sys

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import polars as pl

from logsleuth.cache import parsed_toml
from logsleuth.errors import PackError
from logsleuth.resources import patterns_dir

try:  # Python 3.11+
    import re._constants as _c
    import re._parser as _sre
except ImportError:  # pragma: no cover
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _sre  # type: ignore[no-redef]

SEVERITIES = ("debug", "info", "notice", "warning", "error", "critical")
TYPES = {"str": pl.String, "int": pl.Int64, "float": pl.Float64}
INT_MAX, INT_MIN = 2**63 - 1, -(2**63)

# decimal digits of other scripts (a regex's \d matches them all): read as the ASCII digit they are
_DIGIT_ZEROS = [0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66,
                0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0xFF10]
_DIGITS_FROM = [chr(z + d) for z in _DIGIT_ZEROS for d in range(10)]
_DIGITS_TO = [str(d) for _ in _DIGIT_ZEROS for d in range(10)]


def cast_field(expr: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """A captured field as its vocabulary type. Numbers in other scripts' digits are read as the
    number they are; an integer wider than 64 bits is clamped to the Int64 range (and counted by
    :func:`clamped_count`) instead of becoming null and making its finding vanish."""
    if dtype not in (pl.Int64, pl.Float64):
        return expr.cast(dtype, strict=False)
    text = expr.cast(pl.String).str.replace_many(_DIGITS_FROM, _DIGITS_TO)
    if dtype == pl.Float64:
        return text.cast(pl.Float64, strict=False)
    n = text.cast(pl.Int64, strict=False)
    whole = text.str.strip_chars()
    return (
        pl.when(n.is_null() & whole.str.contains(r"^\+?[0-9]{19,}$")).then(pl.lit(INT_MAX, dtype=pl.Int64))
        .when(n.is_null() & whole.str.contains(r"^-[0-9]{19,}$")).then(pl.lit(INT_MIN, dtype=pl.Int64))
        .otherwise(n)
    )


def clamped_notes(events: pl.DataFrame, packs: "PackSet", inputs: list) -> None:
    """Note on each input how many integer field values sit at the Int64 bounds (clamped by
    :func:`cast_field`): one pass over all events."""
    if events.height == 0:
        return
    schema = events.schema
    cols = [f for f in packs.vocabulary if schema.get(f) == pl.Int64]
    if not cols:
        return
    at_bound = pl.any_horizontal([pl.col(c).is_in([INT_MAX, INT_MIN]).fill_null(False) for c in cols])
    hit = events.filter(at_bound)
    if hit.height == 0:
        return
    counts = dict(hit.group_by("path").len().iter_rows())
    for rep in inputs:
        n = counts.get(rep.name)
        if n:
            rep.stats.note(f"{n:,} event(s) hold a number wider than 64 bits, clamped to ±9223372036854775807")


MIN_LITERAL = 4
RESERVED = {
    "path", "line", "line_end", "ts", "ts_text", "level", "logger", "thread", "host", "raw", "msg",
    "text", "message", "system", "component", "pack", "pattern", "event", "severity", "file",
}


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    description: str


@dataclass(frozen=True)
class PackSample:
    line: str
    fields: dict
    also: tuple[str, ...] = ()  # other patterns this sample is meant to match too


@dataclass(frozen=True)
class Pattern:
    id: str
    pack: str
    system: str
    component: str
    event: str
    severity: str
    regex: str
    fields: tuple[str, ...]
    contains: tuple[str, ...]
    ignore_case: bool
    scope: tuple[str, ...]
    versions: str
    description: str
    samples: tuple[PackSample, ...]
    source: str
    require_scope: bool = False  # a text any program may print: only with a logger in the scope

    @property
    def scope_regex(self) -> str | None:
        return logger_scope_regex(self.scope) if self.scope else None

    @property
    def anchored(self) -> bool:
        """Written against the start of the message (``^…``): its position is the matcher's job."""
        return self.boundary_regex != self.regex

    @property
    def boundary_regex(self) -> str:
        """The regex for a record whose message the layout did not isolate (an unknown layout, a
        wrapper in front of a known one): every ``^`` that anchors a top-level alternative becomes
        "at the start of the text or after a message boundary on the first line" (whitespace,
        ``|``, ``>``, ``]``, ``)``, ``-``, ``:``), so the text is found wherever it sits in the line."""
        return boundary_form(self.regex)


@dataclass
class Pack:
    id: str
    system: str
    component: str
    description: str
    versions: list[str]
    source: str
    patterns: list[Pattern] = field(default_factory=list)


@dataclass
class PackSet:
    packs: list[Pack]
    vocabulary: dict[str, Field]
    replaced: list[tuple[str, str]] = field(default_factory=list)  # (built-in pattern id, the user's pack file replacing it)

    @property
    def patterns(self) -> list[Pattern]:
        return [p for pack in self.packs for p in pack.patterns]

    def pattern(self, pid: str) -> Pattern:
        for p in self.patterns:
            if p.id == pid:
                return p
        raise PackError(f"no pattern with id {pid!r} (see 'logsleuth patterns list')")

    def field_type(self, name: str) -> pl.DataType:
        return TYPES[self.vocabulary[name].type]


# ----------------------------------------------------------------------------- vocabulary


@lru_cache(maxsize=4)
def load_vocabulary(path: Path | None = None) -> dict[str, Field]:
    path = path or patterns_dir() / "fields.toml"
    try:
        data = parsed_toml(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise PackError(f"{path}: cannot read the field vocabulary ({e})") from None
    out: dict[str, Field] = {}
    for name, spec in data.get("field", {}).items():
        t = spec.get("type", "str")
        if t not in TYPES:
            raise PackError(f"{path.name}: field {name}: type must be one of {', '.join(TYPES)}")
        if name in RESERVED:
            raise PackError(f"{path.name}: field {name}: the name is reserved for a record column")
        out[name] = Field(name, t, spec.get("description", ""))
    return out


# ----------------------------------------------------------------------------- regex checks


def rust_regex_error(regex: str) -> str | None:
    """Why Polars' Rust engine rejects ``regex`` (None if it compiles)."""
    try:
        pl.select(pl.lit("").str.contains(regex))
    except Exception as e:  # polars raises ComputeError
        text = str(e)
        if "look-around" in text or "look-behind" in text or "look-ahead" in text:
            return (
                "the regex uses look-around ((?=, (?!, (?<=, (?<!), which the Rust regex engine does not "
                "support (it guarantees linear time); rewrite it without"
            )
        if "backreference" in text:
            return "the regex uses a backreference (\\1, \\k<name>), which the Rust regex engine does not support"
        text = text.split("This error occurred", 1)[0]  # Polars appends the whole expression
        lines = [x.strip() for x in text.strip().splitlines() if x.strip()]
        why = [x[len("error:"):].strip() for x in lines if x.startswith("error:")]
        detail = why[0] if why else (lines[0] if lines else "unknown error")
        if detail.startswith("regex error:"):
            detail = detail[len("regex error:"):].strip()
        return f"the regex does not compile: {detail[:300]}"
    return None


# characters no literal of the prefilter holds: it searches each line of a record (the reading
# core over a chunk's unsplit bytes), and no line holds a line end; a NUL is padding
from logsleuth.ingest.compiled import LINE_BREAKERS  # noqa: E402


def required_literals(regex: str) -> tuple[list[str], bool] | None:
    """Literal text every match must contain (any one of the list), and whether it is case-insensitive.

    Found by walking Python's parse of the regex: the longest run of literal characters that every
    match goes through, or a set of alternatives from a top-level alternation. A run ends at a
    newline, CR or NUL (LINE_BREAKERS): a pattern of a multi-line message is found by a literal
    of one of its lines.
    """
    try:
        parsed = _sre.parse(regex)
    except Exception:
        return None
    ignore_case = bool(parsed.state.flags & re.IGNORECASE)
    best = _req(list(parsed))
    if not best:
        return None
    return (sorted({s.lower() for s in best}) if ignore_case else best), ignore_case


def _score(alts: list[str]) -> tuple[int, int]:
    return (min(len(s) for s in alts), -len(alts))


def _req(seq: list) -> list[str] | None:
    cands: list[list[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            cands.append(["".join(run)])
            run.clear()

    for op, av in seq:
        if op is _c.LITERAL and chr(av) not in LINE_BREAKERS:
            run.append(chr(av))
            continue
        flush()
        if op is _c.SUBPATTERN:
            r = _req(list(av[-1]))
            if r:
                cands.append(r)
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT) or getattr(_c, "POSSESSIVE_REPEAT", None) is op:
            lo, _hi, sub = av
            if lo >= 1:
                r = _req(list(sub))
                if r:
                    cands.append(r)
        elif op is _c.BRANCH:
            rs = [_req(list(b)) for b in av[1]]
            if rs and all(rs):
                cands.append([s for r in rs for s in r])  # type: ignore[union-attr]
    flush()
    if not cands:
        return None
    return max(cands, key=_score)


# a message boundary: the start of the record, after one of these characters on its first line,
# or the start of a later line (an unstamped message folded into the record before it)
BOUNDARY = r"(?:[^\n]*?(?:[^\S\n]|[|>\]):\-])|(?s:.*?)\n)??"


@lru_cache(maxsize=4096)
def boundary_form(regex: str) -> str:
    """``regex`` with each top-level ``^`` (after leading inline flags) searched at a boundary."""
    flags = re.match(r"^(?:\(\?[a-zA-Z]+\))*", regex).group(0)  # type: ignore[union-attr]
    body = regex[len(flags):]
    alts = _top_level_alternatives(body)
    if not any(a.startswith("^") for a in alts):
        return regex
    out = [f"^{BOUNDARY}(?:{a[1:]})" if a.startswith("^") else a for a in alts]
    return flags + "|".join(out)


def _top_level_alternatives(regex: str) -> list[str]:
    parts, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if regex[i + 1 : i + 2] == "]" or regex[i + 1 : i + 3] == "^]":
                i += 2 if regex[i + 1] == "]" else 3
                continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(regex[start:i])
            start = i + 1
        i += 1
    parts.append(regex[start:])
    return parts


def logger_scope_regex(names: tuple[str, ...]) -> str:
    """Match a logger name as printed in full, abbreviated by logback (``o.a.k.c.p.internals.Sender``)
    or cut to its last segments (``%c{1}`` -> ``Sender``)."""
    alts = []
    for name in names:
        segs = [s for s in name.split(".") if s]
        if not segs:
            continue
        inner = ""
        for seg in segs[:-1]:
            inner = f"(?:{inner}{_abbrev(seg)}\\.)?"
        alts.append(inner + re.escape(segs[-1]))
    # a layout may print the line or method after the class: Class:123, Class:method:123, Class.method()
    return "^(?:" + "|".join(alts) + r")(?:[:#(][^\s]*|\.[a-z_$][\w$]*(?:\(\))?(?::\d+)?)?$"


def _abbrev(seg: str) -> str:
    out = ""
    for ch in reversed(seg[1:]):
        out = f"(?:{re.escape(ch)}{out})?"
    return re.escape(seg[0]) + out


# ----------------------------------------------------------------------------- loading


def _line_end(regex: str) -> str:
    """A final ``$`` means the end of the logged line, not of the record: a record may carry
    continuation lines (a stack trace, an unprefixed stdout line), and ``.`` stops at a newline."""
    if regex.endswith("$") and not regex.endswith("\\$"):
        return regex[:-1] + "(?m:$)"
    return regex


def _err(where: str, what: str) -> PackError:
    return PackError(f"{where}: {what}")


MAX_PACK_BYTES = 16 * 1024 * 1024  # a pack is text someone wrote: a larger file is not one


def read_pack_text(path: Path) -> str:
    """A pack file's text: a regular file (a FIFO in a pack directory would wait forever for a
    writer), not huge, UTF-8 (a Latin-1 pack is one line naming the byte, not a traceback)."""
    import os
    import stat

    try:
        st = os.stat(path)
    except OSError as e:
        raise PackError(f"{path}: cannot read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        raise PackError(f"{path}: not a regular file (a pack is a *.toml text file)")
    if st.st_size > MAX_PACK_BYTES:
        raise PackError(f"{path}: {st.st_size:,} bytes is too large for a pack (at most {MAX_PACK_BYTES:,})")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(MAX_PACK_BYTES + 1)
    except OSError as e:
        raise PackError(f"{path}: cannot read ({e.strerror or e})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PackError(f"{path}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); save the pack as UTF-8") from None


def _parsed_toml(text: str) -> dict:
    """``tomllib.loads(text)``, remembered by the text's hash when it is plain JSON data (every
    pack is): parsing the built-in packs' TOML is ~30 ms of each run's start-up, reading the
    remembered JSON ~1 ms."""
    import hashlib
    import json

    from logsleuth.cache import memo

    def plain() -> dict | None:
        data = tomllib.loads(text)
        try:
            return data if json.loads(json.dumps(data)) == data else None
        except (TypeError, ValueError):  # a TOML date or time: not JSON, parsed each time
            return None

    if len(text) > 1 << 20:  # a large user pack is not worth a place in every run's cache
        return tomllib.loads(text)
    data = memo("pack-toml", hashlib.sha1(text.encode("utf-8")).hexdigest(), plain, "logsleuth.recognise.packs")
    return data if data is not None else tomllib.loads(text)


def load_pack(path: Path, vocabulary: dict[str, Field]) -> Pack:
    try:
        data = _parsed_toml(read_pack_text(path))
    except OSError as e:
        raise PackError(f"{path}: cannot read ({e.strerror or e})") from None
    except (tomllib.TOMLDecodeError, RecursionError) as e:
        raise PackError(f"{path}: not valid TOML ({e})") from None
    name = path.name
    for key in ("id", "system", "description"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise _err(name, f"the pack needs a {key!r} string")
    if not isinstance(data.get("component", ""), str):
        raise _err(name, "component must be a string")
    versions = data.get("versions", [])
    if not isinstance(versions, list) or not all(isinstance(v, (str, int, float)) for v in versions):
        raise _err(name, "versions must be a list of strings")
    entries = data.get("pattern", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise _err(name, "patterns must be tables: [[pattern]]")
    pack = Pack(
        id=data["id"],
        system=data["system"],
        component=data.get("component", ""),
        description=data["description"],
        versions=[str(v) for v in versions],
        source=str(path),
    )
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        pid = entry.get("id")
        where = f"{name}: pattern {pid or '#' + str(i + 1)}"
        if not isinstance(pid, str) or not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", pid):
            raise _err(where, "needs an 'id' of lower-case letters, digits, '.', '_' or '-'")
        if pid in seen:
            raise _err(where, "duplicate id")
        seen.add(pid)
        pack.patterns.append(_pattern(entry, pack, where, vocabulary))
    if not pack.patterns:
        raise _err(name, "the pack has no [[pattern]]")
    return pack


def _pattern(entry: dict, pack: Pack, where: str, vocabulary: dict[str, Field]) -> Pattern:
    for key in ("event", "regex", "versions"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise _err(where, f"needs a {key!r} string")
    severity = entry.get("severity", "info")
    if severity not in SEVERITIES:
        raise _err(where, f"severity must be one of {', '.join(SEVERITIES)}")
    regex = _line_end(entry["regex"])
    groups = tuple(dict.fromkeys(re.findall(r"\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>", regex)))
    for g in groups:
        if g not in vocabulary:
            raise _err(where, f"group {g!r} is not in the field vocabulary (patterns/fields.toml)")
    for key, kind, what in (("types", dict, "a table"), ("description", str, "a string"), ("ignore_case", bool, "true or false")):
        if key in entry and not isinstance(entry[key], kind):
            raise _err(where, f"{key} must be {what}")
    types = entry.get("types", {})
    for g, t in types.items():
        if g not in groups:
            raise _err(where, f"types: {g!r} is not a group of the regex")
        if t != vocabulary[g].type:
            raise _err(where, f"types: {g!r} is {vocabulary[g].type} in the vocabulary, not {t}")
    contains = entry.get("contains")
    ignore_case = False
    if contains is None:
        from logsleuth.cache import memo

        lits = memo("literals", regex, lambda: required_literals(regex), "logsleuth.recognise.packs")
        found = (list(lits[0]), bool(lits[1])) if lits else None
        if found is None:
            problem = rust_regex_error(regex)
            if problem:
                raise _err(where, problem)
        if found is None or min(len(s) for s in found[0]) < MIN_LITERAL:
            raise _err(
                where,
                f"cannot find {MIN_LITERAL}+ characters of literal text every match contains; "
                "add contains = [\"...\"] (used to prefilter lines before the regex runs)",
            )
        contains, ignore_case = found
    elif not isinstance(contains, list) or not contains or not all(isinstance(s, str) and len(s) >= MIN_LITERAL for s in contains):
        raise _err(where, f"contains must be a list of strings of {MIN_LITERAL}+ characters")
    elif any(c in s for s in contains for c in LINE_BREAKERS):
        raise _err(where, "contains: a literal cannot hold a newline, CR or NUL (each line of a record is searched for it): "
                          "give text from one line")
    scope = entry.get("scope", [])
    if isinstance(scope, str):
        scope = [scope]
    if not isinstance(scope, list) or not all(isinstance(x, str) for x in scope):
        raise _err(where, "scope must be a logger name or a list of them")
    require_scope = entry.get("require_scope", False)
    if not isinstance(require_scope, bool) or (require_scope and not scope):
        raise _err(where, "require_scope must be true or false, and true needs a scope")
    raw_samples = entry.get("sample", [])
    if not isinstance(raw_samples, list):
        raise _err(where, "samples must be tables: [[pattern.sample]]")
    samples = []
    for j, s in enumerate(raw_samples):
        if not isinstance(s, dict) or not isinstance(s.get("line"), str):
            raise _err(where, f"sample {j + 1} needs a 'line' string")
        fields = s.get("fields", {})
        if not isinstance(fields, dict):
            raise _err(where, f"sample {j + 1}: fields must be a table")
        for k in fields:
            if k not in groups:
                raise _err(where, f"sample {j + 1}: {k!r} is not a group of the regex")
        also = s.get("also", [])
        if not isinstance(also, list) or not all(isinstance(x, str) for x in also):
            raise _err(where, f"sample {j + 1}: also must be a list of pattern ids")
        samples.append(PackSample(s["line"], dict(fields), tuple(also)))
    if not samples:
        raise _err(where, "every pattern needs at least one [[pattern.sample]]")
    return Pattern(
        id=entry["id"],
        pack=pack.id,
        system=pack.system,
        component=pack.component,
        event=entry["event"],
        severity=severity,
        regex=regex,
        fields=groups,
        contains=tuple(contains),
        ignore_case=ignore_case or bool(entry.get("ignore_case", False)),
        scope=tuple(scope),
        versions=entry["versions"],
        description=entry.get("description", ""),
        samples=tuple(samples),
        source=pack.source,
        require_scope=require_scope,
    )


def check_regexes(packs: list[Pack]) -> None:
    """Every regex must compile on Polars' Rust engine: one batch, then one by one to name the culprit."""
    import hashlib

    from logsleuth.cache import memo

    pats = [p for pack in packs for p in pack.patterns]
    if not pats:
        return

    def all_compile() -> bool:
        try:
            pl.select([pl.lit("").str.contains(p.regex).alias(str(i)) for i, p in enumerate(pats)])
            return True
        except Exception:
            return False

    key = hashlib.sha1("\x00".join(p.regex for p in pats).encode("utf-8", "surrogatepass")).hexdigest()  # not the regexes themselves (~35 KB)
    if memo("rust-ok", key, all_compile, "logsleuth.recognise.packs"):
        return
    for p in pats:
        problem = rust_regex_error(p.regex)
        if problem:
            raise PackError(f"{Path(p.source).name}: pattern {p.id}: {problem}")


def pack_problems(d: Path) -> list[str]:
    """Every load-time problem of every pack in a directory (not just the first): for
    ``patterns check DIR``."""
    if not d.is_dir():
        return [f"{d}: not a directory (packs are *.toml files in a directory)"]
    files = sorted(d.glob("*.toml"))
    if not files:
        return [f"{d}: no *.toml packs in this directory"]
    vocab = load_vocabulary()
    out: list[str] = []
    for f in files:
        try:
            pack = load_pack(f, vocab)
            check_regexes([pack])
        except PackError as e:
            out.append(str(e))
    return out


def load_packs(extra_dirs: list[Path] | None = None) -> PackSet:
    """Built-in packs, then the user's (``--patterns DIR``); a user pattern with a built-in id replaces it."""
    vocab = load_vocabulary()
    packs = [load_pack(p, vocab) for p in sorted((patterns_dir() / "packs").glob("*.toml"))]
    builtin_ids: dict[str, Pack] = {}
    for pack in packs:
        for p in pack.patterns:
            if p.id in builtin_ids:
                raise PackError(f"{Path(pack.source).name}: pattern {p.id}: duplicate id (also in {Path(builtin_ids[p.id].source).name})")
            builtin_ids[p.id] = pack
    replaced: list[tuple[str, str]] = []
    for d in extra_dirs or []:
        if not d.is_dir():
            raise PackError(f"{d}: --patterns needs a directory of *.toml packs")
        files = sorted(d.glob("*.toml"))
        if not files:
            raise PackError(f"{d}: no *.toml packs in this directory")
        user_ids: dict[str, str] = {}
        for f in files:
            pack = load_pack(f, vocab)
            for p in pack.patterns:
                if p.id in user_ids:
                    raise PackError(f"{f.name}: pattern {p.id}: duplicate id (also in {user_ids[p.id]})")
                user_ids[p.id] = f.name
                if p.id in builtin_ids:  # override: drop the built-in one (said on stderr and in the report)
                    replaced.append((p.id, str(f)))
                    owner = builtin_ids.pop(p.id)
                    owner.patterns = [q for q in owner.patterns if q.id != p.id]
            packs.append(pack)
    check_regexes(packs)
    if replaced:
        from logsleuth.safe import visible

        shown = ", ".join(f"{pid} (by {visible(src)})" for pid, src in replaced[:5]) + (f" and {len(replaced) - 5} more" if len(replaced) > 5 else "")
        print(f"logsleuth: note: your packs replace built-in patterns: {shown}", file=sys.stderr)
    return PackSet([p for p in packs if p.patterns], vocab, replaced)
