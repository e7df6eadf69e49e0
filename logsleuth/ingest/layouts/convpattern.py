"""Compile a log4j 1 / log4j2 / logback *conversion pattern* into a line regex (pyparsing grammar).

``%d{ISO8601} [%t] %-5level %logger{36} - %msg%n`` becomes a regex with named groups
(``ts``, ``thread``, ``level``, ``logger``, ``msg``, ...) that the Rust regex engine in Polars runs,
plus a :class:`TimeSpec` that says how to parse ``ts``. Everything after ``%n`` (``%wEx``,
``%throwable``) is printed on later lines, which become continuation lines of the record.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

import pyparsing as pp

from logsleuth.errors import PatternError
from logsleuth.ingest.layouts.datefmt import compile_date
from logsleuth.ingest.timeparse import TimeSpec

MAX_PATTERN = 2000


@dataclass(frozen=True)
class CompiledLayout:
    regex: str  # the whole line: named groups, anchored ^...$
    start_regex: str  # the part before the message: a cheap "is this line a record start" test
    fields: tuple[str, ...]
    time: TimeSpec | None
    tail_regex: str = ""  # what follows the message on the line (Kafka's " (%c)"), without "$"


# ----------------------------------------------------------------------------- grammar

pp.ParserElement.set_default_whitespace_chars("")

_modifier = pp.Regex(r"-?\d*(?:\.-?\d+)?")
_keyword = pp.Regex(r"[A-Za-z]+")
# an option: a brace group, nested brace groups balanced (a log4j2 wrapper's first option is a
# whole sub-pattern: %highlight{%d{HH:mm:ss}{UTC} %-5level}); a backslash escapes the next character
_option = pp.Forward()
_option <<= pp.Combine(pp.Literal("{") + pp.ZeroOrMore(pp.Regex(r"(?:\\.|[^{}\\])+", re.S) | _option) + pp.Literal("}"))
_pattern_in_parens = pp.Forward()
_conversion = (
    pp.Literal("%").suppress()
    + pp.Opt(_modifier, default="")("mod")
    + pp.Opt(_keyword, default="")("kw")
    + pp.Opt(pp.Group(pp.Literal("(").suppress() + _pattern_in_parens + pp.Literal(")").suppress()))("sub")
    + pp.Group(pp.ZeroOrMore(_option))("opts")
)


def _sub(t) -> list | None:
    if "sub" not in t:
        return None
    g = t["sub"]
    while len(g) == 1 and isinstance(g[0], pp.ParseResults):
        g = g[0]
    return list(g)


_conversion.set_parse_action(lambda t: ("conv", t.mod, t.kw, _sub(t), list(t.opts)))
_percent = pp.Literal("%%").set_parse_action(lambda: ("lit", "%"))
_escape = pp.Regex(r"\\[nrt\\()%{}]").set_parse_action(lambda t: ("lit", {"n": "", "r": "", "t": "\t"}.get(t[0][1], t[0][1])))
_property = pp.Regex(r"\$\{([A-Za-z0-9_.]+)(?::-((?:[^{}]|\{[^{}]*\})*))?\}").set_parse_action(
    lambda t: ("prop", re.match(r"\$\{([A-Za-z0-9_.]+)(?::-(.*))?\}$", t[0], re.S).groups())
)
_lit_top = pp.Regex(r"(?:[^%$\\]|\$(?!\{)|\\(?![nrt\\()%{}]))+").set_parse_action(lambda t: ("lit", t[0]))
_lit_inner = pp.Regex(r"(?:[^%$\\()]|\$(?!\{)|\\(?![nrt\\()%{}]))+").set_parse_action(lambda t: ("lit", t[0]))
_paren_lit = pp.Regex(r"[()]").set_parse_action(lambda t: ("lit", t[0]))

_nested_parens = pp.Forward()
_nested_parens <<= (
    pp.Literal("(").set_parse_action(lambda: ("lit", "("))
    + _pattern_in_parens
    + pp.Literal(")").set_parse_action(lambda: ("lit", ")"))
)
_pattern_in_parens <<= pp.ZeroOrMore(_percent | _escape | _property | _conversion | _lit_inner | _nested_parens)
_pattern_top = pp.ZeroOrMore(_percent | _escape | _property | _conversion | _lit_top | _paren_lit) + pp.StringEnd()


# ----------------------------------------------------------------------------- conversion words

_DATE = {"d", "date"}
_THREAD = {"t", "thread", "tn", "threadName"}
_LEVEL = {"p", "le", "level"}
_LOGGER = {"c", "lo", "logger"}
_MSG = {"m", "msg", "message"}
_CLASS = {"C", "class"}
_METHOD = {"M", "method"}
_FILE = {"F", "file"}
_LINE = {"L", "line"}
_LOCATION = {"l", "location"}
_MDC = {"X", "mdc", "MDC"}
_PID = {"pid", "processId"}
_NUMBERS = {"r", "relative", "sn", "sequenceNumber", "T", "tid", "threadId", "N", "nano", "i", "lineno"}
_NOTHING = {
    "ex", "exception", "throwable", "xEx", "xException", "xThrowable", "rEx", "rException",
    "rThrowable", "wEx", "wex", "nopex", "nopexception", "n", "caller", "prefix", "kvp",
}
_WRAPPERS = {
    "highlight", "style", "clr", "black", "red", "green", "yellow", "blue", "magenta", "cyan",
    "white", "gray", "grey", "boldRed", "boldGreen", "boldYellow", "boldBlue", "boldMagenta",
    "boldCyan", "boldWhite", "faint", "",
    "truncate", "trunc",
}
# wrappers whose output is their content changed (escaped, cut, rewritten): the content's fields
# are matched leniently, as whatever the log shows
_TRANSFORMING = {"enc", "encode", "maxLen", "maxLength", "replace"}
_OPTIONAL_WRAPPERS = {"notEmpty", "varsNotEmpty", "variablesNotEmpty", "equals", "equalsIgnoreCase"}
_OPAQUE = {"K", "map", "MAP", "marker", "markerSimpleName", "u", "uuid", "fqcn", "endOfBatch", "hostName", "host", "contextName", "cn", "property", "sequence", "mdcv", "ndc", "x", "NDC", "kvpl", "exceptionMessage", "em"}


class _Builder:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.fields: list[str] = []
        self.time: TimeSpec | None = None
        self.msg_index: int | None = None
        self.ended = False
        self.lenient = False  # inside %replace/%enc/%maxLen: fields match any text

    def group(self, name: str, core: str) -> str:
        if name in self.fields:
            return f"(?:{core})"
        self.fields.append(name)
        return f"(?P<{name}>{core})"

    def add(self, text: str) -> None:
        if not self.ended:
            self.parts.append(text)


def _pad(core: str, mod: str) -> str:
    m = re.fullmatch(r"(-?)(\d*)(?:\.(-?)(\d+))?", mod or "")
    if not m or not m.group(2):
        return core
    return f"{core} *" if m.group(1) == "-" else f" *{core}"


def _emit(b: _Builder, items: list, optional: bool = False) -> None:
    for item in items:
        if b.ended:
            # printed on later lines (after %n): contributes nothing, but must still be valid
            # (a trailing lone '%' or an unknown word there is a typo, not something to ignore)
            _emit(_Builder(), [item])
            continue
        kind = item[0]
        if kind == "lit":
            b.add(re.escape(item[1]))
        elif kind == "prop":
            name, default = item[1]
            if name.upper() == "PID":
                b.add(_pad(b.group("pid", r"\d+"), ""))
            elif default is None:
                b.add(r".*?")
            elif default.strip() == "":
                b.add(r"(?:\[[^\]]*\] ?)?")
            else:
                _emit(b, _parse(default, inner=False))
        else:
            _, mod, kw, sub, opts = item
            _conversion_regex(b, mod, kw, sub, opts)


def _conversion_regex(b: _Builder, mod: str, kw: str, sub: list | None, opts: list[str]) -> None:
    if sub is None and opts and kw and (kw in _WRAPPERS or kw in _TRANSFORMING or kw in _OPTIONAL_WRAPPERS):
        # log4j2's brace form: %highlight{%-5level}{ERROR=red}: the first brace group is the
        # sub-pattern, the others are options
        sub, opts = _parse(opts[0][1:-1], inner=True), opts[1:]
    opt_vals = [_resolve_props(o[1:-1]) for o in opts]

    def core(regex: str) -> str:
        return r".*?" if b.lenient else regex
    if kw in _DATE:
        pattern = opt_vals[0].strip() if opt_vals and opt_vals[0].strip() else None
        zone = opt_vals[1].strip() if len(opt_vals) > 1 and opt_vals[1].strip() else None
        if pattern and pattern.startswith('"'):  # logback quotes a pattern that holds a comma
            m = re.fullmatch(r'"([^"]*)"\s*(?:,\s*(.+))?', pattern)
            if m:
                pattern, zone = m.group(1), zone or m.group(2)
        elif pattern:
            head, sep, tail = pattern.rpartition(",")
            if (
                sep
                and re.fullmatch(r"\s*(?:[A-Za-z][A-Za-z0-9/_+-]*|GMT[+-]\d{1,2}(?::?\d{2})?)\s*", tail)
                and not re.fullmatch(r"\s*S+\s*", tail)
            ):
                pattern, zone = head.strip(), zone or tail.strip()
        regex, spec = compile_date(pattern, zone)
        if "ts" not in b.fields:
            b.time = spec
        b.add(_pad(b.group("ts", regex), mod))
    elif kw in _MSG:
        if b.msg_index is None:
            b.msg_index = len(b.parts)
            b.add(b.group("msg", ".*"))
        else:
            b.add(".*?")
    elif kw == "n":
        b.ended = True
    elif kw in _NOTHING:
        return
    elif kw in _THREAD:
        b.add(_pad(b.group("thread", core(r".*?")), mod))
    elif kw in _LEVEL:
        b.add(_pad(b.group("level", core(r"[A-Za-z]+")), mod))
    elif kw in _LOGGER:
        b.add(_pad(b.group("logger", core(r"[^\s(]\S*")), mod))  # not "(": a JBoss thread after [%c], not a logger
    elif kw in _CLASS:
        b.add(_pad(b.group("class", core(r"\S+")), mod))
    elif kw in _METHOD:
        b.add(_pad(b.group("method", core(r"[^\s(]+")), mod))
    elif kw in _FILE:
        b.add(_pad(b.group("srcfile", core(r"[^\s:()]+")), mod))
    elif kw in _LINE:
        b.add(_pad(b.group("srcline", core(r"\d+|\?")), mod))
    elif kw in _LOCATION:
        b.add(_pad(b.group("location", core(r"\S+")), mod))
    elif kw in _MDC:
        if opt_vals and opt_vals[0].strip():
            key = re.sub(r"\W", "_", opt_vals[0].split(":-")[0].strip())[:40] or "key"
            b.add(_pad(b.group(f"mdc_{key}", core(r".*?")), mod))
        else:
            b.add(r".*?")
    elif kw in _PID:
        b.add(_pad(b.group("pid", core(r"\d+")), mod))
    elif kw in _NUMBERS:
        b.add(_pad(core(r"\d+"), mod))
    elif kw == "esb":
        b.add(r"(?:\[[^\]]*\] )?")
    elif kw in _OPAQUE:
        b.add(r".*?")
    elif kw == "replace" and sub is None:
        b.add(r".*?")  # logback's old %replace without a sub-pattern
    elif kw in _WRAPPERS or kw in _OPTIONAL_WRAPPERS or kw in _TRANSFORMING:
        if sub is None:
            if kw == "":
                raise PatternError("a '%' must be followed by a conversion word (use %% for a literal %)")
            raise PatternError(f"%{kw} needs a sub-pattern: %{kw}(...) or %{kw}{{...}}")
        if kw in _OPTIONAL_WRAPPERS:
            inner = _Builder()
            inner.fields = b.fields
            inner.lenient = b.lenient
            _emit(inner, sub)
            if b.msg_index is None and inner.msg_index is not None:
                b.msg_index = len(b.parts)
            body = "".join(inner.parts)
            # %equals{pattern}{test}{substitution} prints the substitution instead of the pattern
            subst = opt_vals[1] if kw.startswith("equals") and len(opt_vals) > 1 else ""
            if subst and "%" not in subst:
                body = f"(?:{body})|{re.escape(subst)}"
            b.add("(?:" + body + ")?")
            if inner.time is not None and b.time is None:
                b.time = inner.time
            b.ended = b.ended or inner.ended
        else:
            before = len(b.parts)
            was_lenient = b.lenient
            b.lenient = was_lenient or kw in _TRANSFORMING
            try:
                _emit(b, sub)
            finally:
                b.lenient = was_lenient
            if mod and re.fullmatch(r"-?\d+(?:\.-?\d+)?", mod) and len(b.parts) > before:
                grouped = "".join(b.parts[before:])
                del b.parts[before:]
                b.add(_pad(f"(?:{grouped})", mod))
    else:
        raise PatternError(f"unknown conversion word %{kw}")


def _tighten(part: str) -> str:
    """Same language, fewer ambiguities (so Rust's one-pass engine can run the captures): padding
    next to a literal space becomes one run of spaces, and a lazy field closed by ']' stops at it."""
    return part.replace(" *\\ ", " +").replace("\\  *", " +").replace(">.*?)\\]", ">[^\\]]*)\\]")


def _resolve_props(text: str) -> str:
    """``${NAME:-default}`` inside an option -> its default (Spring Boot's date format)."""
    return re.sub(r"\$\{[A-Za-z0-9_.]+(?::-([^{}]*))?\}", lambda m: m.group(1) or "", text)


_CONV_HEAD = re.compile(r"%(-?\d*(?:\.-?\d+)?)([A-Za-z]*)")


def _check_brackets(pattern: str) -> None:
    """Braces must balance everywhere, and the parentheses of a sub-pattern (``%highlight(...)``)
    too; otherwise the grammar would read the stray bracket as literal text and the layout would
    silently match nothing (``%d{yyyy-MM-dd HH:mm:ss [%t] ...`` loses every timestamp). One
    message naming the bracket and its column. A backslash escapes the next character (a literal brace is written with a backslash before it)."""
    stack: list[tuple[str, int, str]] = []  # (bracket, 1-based column, the conversion it follows)
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "%":
            if pattern.startswith("%%", i):
                i += 2
                continue
            m = _CONV_HEAD.match(pattern, i)
            end = m.end() if m else i + 1
            if end >= n and not (m and m.group(2)):
                raise PatternError(
                    f"a '%' at the end of the pattern (column {i + 1}) must be followed by a conversion word (use %% for a literal %)"
                )
            word = "%" + (m.group(2) if m else "")
            if end < n and pattern[end] in "{(":
                stack.append((pattern[end], end + 1, word))
                end += 1
            i = end
            continue
        if c == "{" or (c == "(" and stack and stack[-1][0] == "("):
            stack.append((c, i + 1, ""))
        elif c == "}":
            if not stack or stack[-1][0] != "{":
                raise PatternError(
                    f"unbalanced braces: the '}}' at column {i + 1} closes no '{{' (write \\}} for a literal brace)"
                )
            stack.pop()
        elif c == ")" and stack and stack[-1][0] == "(":
            stack.pop()
        i += 1
    if stack:
        bracket, col, word = stack[-1]
        after = f" after {word}" if word else ""
        where = f"the '{bracket}'{after} (column {col})"
        kind = "braces" if bracket == "{" else "parentheses"
        closing = "}" if bracket == "{" else ")"
        raise PatternError(
            f"unbalanced {kind}: {where} is never closed (a '{closing}' is missing)"
        )


# pyparsing's grammar objects are shared and not thread-safe (the first call of a parse action
# works out its arity by trial, catching TypeError): two inputs read side by side may compile a
# layout at the same time, so parsing is one at a time
_PARSE_LOCK = threading.Lock()


def _parse(pattern: str, inner: bool = False) -> list:
    try:
        with _PARSE_LOCK:
            return list(_pattern_top.parse_string(pattern, parse_all=True))
    except pp.ParseBaseException as e:
        raise PatternError(f"cannot parse conversion pattern at column {e.col}: {e.msg}") from None
    except RecursionError:
        raise PatternError("conversion pattern is nested too deeply") from None


def compile_pattern(pattern: str) -> CompiledLayout:
    """A conversion pattern -> :class:`CompiledLayout`. Raises :class:`PatternError` only."""
    if not isinstance(pattern, str) or not pattern.strip():
        raise PatternError("empty conversion pattern")
    if len(pattern) > MAX_PATTERN:
        raise PatternError(f"conversion pattern longer than {MAX_PATTERN} characters")
    _check_brackets(pattern)
    items = _parse(pattern)
    b = _Builder()
    try:
        _emit(b, items)
    except RecursionError:
        raise PatternError("conversion pattern is nested too deeply") from None
    if "msg" not in b.fields:
        raise PatternError("conversion pattern has no %m / %msg / %message")
    # the message group is greedy: make what follows it optional so a line whose tail differs
    # (or a message that contains the separator) still parses
    idx = b.msg_index if b.msg_index is not None else len(b.parts)
    head = _tighten("".join(b.parts[:idx]))
    msg = b.parts[idx] if idx < len(b.parts) else ""
    tail = _tighten("".join(b.parts[idx + 1 :]))
    if tail:
        msg = msg.replace(".*", ".*?", 1) if msg.endswith(">.*)") else msg
        regex = f"^{head}{msg}(?:{tail})?$"
    else:
        regex = f"^{head}{msg}$"
    start = f"^{head}"
    return CompiledLayout(regex=regex, start_regex=start, fields=tuple(b.fields), time=b.time, tail_regex=tail)
