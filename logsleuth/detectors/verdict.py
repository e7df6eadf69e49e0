"""A finding's declared verdict: severity rules, confidence weights paired with their reasons,
thresholds and wording, in one TOML file beside the detector's module, named after the finding id
(``detectors/kafka/kafka.isr-shrink.toml``). The detector's mechanism computes a typed facts object
(a dataclass); this module turns facts into the finding's severity, confidence and words. Nothing in
it knows a finding: what differs is data. docs/architecture.md ("Facts, verdict, words") and
docs/findings/README.md say how to add one.

The file::

    id = "kafka.isr-shrink"
    title = "Kafka broker: in-sync replica sets shrank"     # the detector's one-line title
    doc = "docs/findings/kafka.isr-shrink.md"

    [thresholds]                  # units in the names: _s, _ms, _bytes, _ratio, _count
    episode_gap_s = 600

    minimum = "shrinks > 0"       # optional: the least evidence the finding is stated from (a condition);
                                  # facts that do not meet it make no finding (Verdict.meets_minimum)

    [[severity]]                  # the first rule that holds decides; the last has no `when`
    when = "clients_hit or min_isr == 1"
    is = "medium"
    [[severity]]
    is = "low"

    [confidence]
    base = 0.8                    # then each weight that holds, in order: add (or set), and its reason
    cap = 0.95
    [[confidence.weight]]
    when = "clients_hit"
    add = 0.05
    reason = "+ client logs show the node failing meanwhile"

    [words]                       # phrases: a template, or parts joined (each part's `when` must hold;
    who = [                       #  `choose` takes the first of its parts that holds)
      { choose = [ { when = "node != none", text = "broker {node}" }, { text = "a replica" } ] },
    ]
    title = "ISR shrank on {partitions|plural('partition')}, dropping {who} ({first|time})"

    [[remediation]]               # item lists: remediation, ruled_out, references (each item's `when`)
    text = "Find out why {who} stopped fetching"

    [evidence]                    # the notes of the lines quoted
    first = "first ISR shrink dropping {who}"

A weight may carry its own ``cap`` / ``floor`` (the value after it is kept within them). A file with
``overlay = true`` is not a finding: it has no severity rules, and ``Verdict.adjust(value, facts)``
applies its weights to a confidence another verdict gave (``kafka/kafka.broker-side.toml``: what a
broker's own logs change in a client finding).

A condition is a small expression over the facts, the thresholds and ``item`` (in an ``each``):
names (``a.b`` reads a field or key), numbers, strings, ``true``/``false``/``none``, ``+ - * /``,
``== != < <= > >= in``, ``not``/``and``/``or``, parentheses and ``len(x)``, ``min(…)``, ``max(…)``,
``any(x)``. A comparison with ``none`` on either side (other than ``==``/``!=``) is false.

A template is text with ``{name|filter|filter(args)}`` placeholders: a name of the facts, of a
threshold, of ``item``, or of another ``[words]`` entry. A string value is made visible
(control characters and escapes neutralised: log text is untrusted); a datetime becomes a
time in the reader's zone (``words.Time``); lists are joined with ", ". Filters: ``time``,
``time_ms``, ``tod`` (time of day), ``duration`` (seconds), ``plural('one'[, 'many'])`` (a number or
a list's length, with the word), ``word('one'[, 'many'])`` (the word alone), ``count``,
``list([n])`` (", "-joined, "and N more" past n), ``cap``, ``fixed(d)``, ``int``, ``pct([d])``,
``default('text')``, ``each('words entry'[, 'sep'])`` and those the detector registers
(``Verdict.filters``). ``{{`` and ``}}`` are braces.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import functools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from logsleuth.detectors.words import Text, Time, TimeOfDay, TimesOfDay
from logsleuth.safe import visible

SEVERITIES = ("critical", "high", "medium", "low", "info")
UNIT_SUFFIXES = ("_s", "_ms", "_bytes", "_ratio", "_count", "_pct", "_lines", "_min")


class VerdictError(Exception):
    """A finding's TOML is wrong (a developer's error: the corpus lint test finds these)."""


# ----------------------------------------------------------------------------- conditions


@functools.lru_cache(maxsize=None)
def _grammar():
    """The condition grammar, built with pyparsing's usual whitespace skipping: the layout
    compiler (ingest/layouts/convpattern.py) turns the default off for the whole process when it is
    imported, so it is set for the build and put back after."""
    import pyparsing as pp

    saved = "".join(sorted(pp.ParserElement.DEFAULT_WHITE_CHARS))
    pp.ParserElement.set_default_whitespace_chars(" \t\r\n")
    try:
        return _build_grammar(pp)
    finally:
        pp.ParserElement.set_default_whitespace_chars(saved)


def _build_grammar(pp):
    LPAR, RPAR, COMMA = map(pp.Suppress, "(),")
    number = pp.pyparsing_common.number.copy()
    string = pp.QuotedString("'", esc_char="\\") | pp.QuotedString('"', esc_char="\\")
    keyword = pp.Keyword("true") | pp.Keyword("false") | pp.Keyword("none")
    reserved = pp.Keyword("and") | pp.Keyword("or") | pp.Keyword("not") | pp.Keyword("in") | keyword
    name = pp.Combine(~reserved + pp.Word(pp.alphas + "_", pp.alphanums + "_") + pp.ZeroOrMore("." + pp.Word(pp.alphanums + "_")))
    expr = pp.Forward()
    call = pp.Group(pp.one_of("len min max any") + LPAR + pp.Group(pp.Optional(pp.DelimitedList(expr))) + RPAR)
    atom = (
        number.set_parse_action(lambda t: ("num", t[0]))
        | string.set_parse_action(lambda t: ("str", t[0]))
        | keyword.set_parse_action(lambda t: ("const", {"true": True, "false": False, "none": None}[t[0]]))
        | call.set_parse_action(lambda t: ("call", t[0][0], [_unwrap(a) for a in t[0][1]]))
        | name.set_parse_action(lambda t: ("name", t[0]))
    )
    not_in = pp.Group(pp.Keyword("not") + pp.Keyword("in")).set_parse_action(lambda: "not in")
    expr <<= pp.infix_notation(atom, [
        (pp.one_of("* /"), 2, pp.OpAssoc.LEFT, lambda t: _fold(t[0])),
        (pp.one_of("+ -"), 2, pp.OpAssoc.LEFT, lambda t: _fold(t[0])),
        (not_in | pp.one_of("== != <= >= < >") | pp.Keyword("in"), 2, pp.OpAssoc.LEFT, lambda t: _fold(t[0])),
        (pp.Keyword("not"), 1, pp.OpAssoc.RIGHT, lambda t: ("not", _unwrap(t[0][1]))),
        (pp.Keyword("and"), 2, pp.OpAssoc.LEFT, lambda t: _fold(t[0])),
        (pp.Keyword("or"), 2, pp.OpAssoc.LEFT, lambda t: _fold(t[0])),
    ])
    return expr


def _unwrap(x):
    """A nested group's node (pyparsing hands a parenthesised or higher-precedence operand over as a
    one-element list around the node its parse action made)."""
    while not isinstance(x, (tuple, str)) and len(x) == 1:
        x = x[0]
    return x


def _fold(tokens: list) -> tuple:
    node = _unwrap(tokens[0])
    for i in range(1, len(tokens), 2):
        node = ("op", tokens[i], node, _unwrap(tokens[i + 1]))
    return node


@functools.lru_cache(maxsize=None)
def parse_condition(text: str) -> tuple:
    import pyparsing as pp

    try:
        return _unwrap(_grammar().parse_string(text, parse_all=True)[0])
    except pp.ParseException as e:
        raise VerdictError(f"condition {text!r}: {e}") from None


def names_in(node: tuple) -> set[str]:
    """The names a condition reads (for the lint of the declared facts)."""
    kind = node[0]
    if kind == "name":
        return {node[1]}
    if kind == "op":
        return names_in(node[2]) | names_in(node[3])
    if kind == "not":
        return names_in(node[1])
    if kind == "call":
        return set().union(*(names_in(a) for a in node[2])) if node[2] else set()
    return set()


_MISSING = object()


def lookup(scope: "Scope", name: str) -> Any:
    head, *rest = name.split(".")
    v = scope.get(head)
    if v is _MISSING:
        raise VerdictError(f"unknown name {head!r}")
    for r in rest:
        if v is None:
            return None
        if isinstance(v, dict):
            v = v.get(r)
        else:
            v = getattr(v, r, None)
    return v


def _compare(op: str, a: Any, b: Any) -> bool:
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if op in ("in", "not in"):
        if b is None:
            return op == "not in"
        return (a in b) if op == "in" else (a not in b)
    if a is None or b is None:
        return False
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def evaluate(node: tuple, scope: "Scope") -> Any:
    kind = node[0]
    if kind in ("num", "str", "const"):
        return node[1]
    if kind == "name":
        return lookup(scope, node[1])
    if kind == "not":
        return not evaluate(node[1], scope)
    if kind == "call":
        args = [evaluate(a, scope) for a in node[2]]
        fn = node[1]
        if fn == "len":
            return len(args[0] or ())
        if fn == "any":
            return any(args[0] or ())
        vals = [a for a in (args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args) if a is not None]
        return (min if fn == "min" else max)(vals) if vals else None
    op, left = node[1], node[2]
    if op == "and":
        return evaluate(left, scope) and evaluate(node[3], scope)
    if op == "or":
        return evaluate(left, scope) or evaluate(node[3], scope)
    a, b = evaluate(left, scope), evaluate(node[3], scope)
    if op in ("+", "-", "*", "/"):
        if a is None or b is None:
            return None
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b if b else None}[op]()
    return _compare(op, a, b)


def holds(condition: str | None, scope: "Scope") -> bool:
    if condition is None:
        return True
    return bool(evaluate(parse_condition(condition), scope))


# ----------------------------------------------------------------------------- templates

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]+)\}")
_FILTER = re.compile(r"^\s*([a-z_]+)\s*(?:\((.*)\))?\s*$", re.S)


@functools.lru_cache(maxsize=None)
def parse_template(text: str) -> tuple:
    """('lit', str) and ('ph', name, ((filter, args), ...)) pieces."""
    out: list[tuple] = []
    pos = 0
    for m in _PLACEHOLDER.finditer(text):
        if m.start() > pos:
            out.append(("lit", text[pos:m.start()]))
        if m.group(0) in ("{{", "}}"):
            out.append(("lit", m.group(0)[0]))
        else:
            name, *filters = [x.strip() for x in _split_pipes(m.group(1))]
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*", name):
                raise VerdictError(f"template {text!r}: {name!r} is not a name")
            parsed = []
            for f in filters:
                fm = _FILTER.match(f)
                if not fm:
                    raise VerdictError(f"template {text!r}: bad filter {f!r}")
                args: tuple = ()
                if fm.group(2) is not None and fm.group(2).strip():
                    try:
                        args = ast.literal_eval("(" + fm.group(2) + ",)")
                    except (ValueError, SyntaxError):
                        raise VerdictError(f"template {text!r}: bad arguments in {f!r}") from None
                parsed.append((fm.group(1), args))
            out.append(("ph", name, tuple(parsed)))
        pos = m.end()
    if pos < len(text):
        out.append(("lit", text[pos:]))
    return tuple(out)


def _split_pipes(s: str) -> list[str]:
    """'a|list(4, ' | ')' -> ['a', "list(4, ' | ')"]: pipes inside quotes or parentheses stay."""
    parts: list[str] = []
    cur: list[str] = []
    depth, quote = 0, None
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def template_names(text: str) -> set[str]:
    return {p[1] for p in parse_template(text) if p[0] == "ph"}


def as_text(v: Any) -> Text:
    """A value placed in prose: log-derived strings made visible, times kept as times."""
    if v is None:
        return Text()
    if isinstance(v, Text):
        return v
    if isinstance(v, (Time, TimeOfDay, TimesOfDay)):
        return Text(v)
    if isinstance(v, dt.datetime):
        return Text(Time(v))
    if isinstance(v, bool):
        return Text("yes" if v else "no")
    if isinstance(v, str):
        return Text(visible(v))
    if isinstance(v, (list, tuple)):
        return Text.join(", ", [as_text(x) for x in v])
    return Text(str(v))


def _count(v: Any) -> int:
    if isinstance(v, (list, tuple, set, dict)):
        return len(v)
    return int(v or 0)


def _fmt_duration(seconds: float | None) -> str:
    from logsleuth.detectors.base import fmt_duration

    return fmt_duration(seconds)


def _list(v: Any, n: int | None = None, sep: str = ", ") -> Text:
    items = list(v or [])
    shown = items if n is None else items[:n]
    out = Text.join(sep, [as_text(x) for x in shown])
    if n is not None and len(items) > n:
        out = out + f" and {len(items) - n} more"
    return out


BUILTIN_FILTERS: dict[str, Callable[..., Any]] = {
    "time": lambda v: Time(v),
    "time_ms": lambda v: Time(v, ms=True),
    "tod": lambda v, digits=0: TimeOfDay(v, digits) if v is not None else None,
    "duration": lambda v: _fmt_duration(v),
    "plural": lambda v, one, many=None: f"{_count(v)} {one if _count(v) == 1 else (many or one + 's')}",
    "word": lambda v, one, many=None: one if _count(v) == 1 else (many or one + "s"),
    "count": lambda v: _count(v),
    "list": _list,
    "cap": lambda v: as_text(v).capitalized(),
    "fixed": lambda v, d=2: None if v is None else f"{float(v):.{d}f}",
    "int": lambda v: None if v is None else str(int(v)),
    "pct": lambda v, d=0: None if v is None else f"{float(v) * 100:.{d}f}%",
    "default": lambda v, text: text if v is None or v == "" or v == [] else v,
}


# ----------------------------------------------------------------------------- the verdict


class Scope:
    """Names a condition or template reads: ``item`` (in an each), the facts, the thresholds, and
    the ``[words]`` entries (rendered on demand)."""

    def __init__(self, verdict: "Verdict", facts: Any, extra: dict | None = None):
        self.verdict = verdict
        self.facts = facts
        self.extra = extra or {}

    def get(self, name: str) -> Any:
        if name in self.extra:
            return self.extra[name]
        f = self.facts
        if isinstance(f, dict):
            if name in f:
                return f[name]
        elif f is not None and hasattr(f, name):
            return getattr(f, name)
        if name in self.verdict.thresholds:
            return self.verdict.thresholds[name]
        if name in self.verdict.words_spec:
            return self.verdict.phrase(name, self.facts, self.extra)
        return _MISSING

    def with_item(self, item: Any) -> "Scope":
        return Scope(self.verdict, self.facts, {**self.extra, "item": item})


@dataclass
class Verdict:
    id: str
    title: str
    doc: str
    thresholds: dict[str, Any]
    severity_rules: list[dict]
    confidence_spec: dict
    words_spec: dict[str, Any]
    items: dict[str, list[dict]]  # remediation, ruled_out, references
    evidence_notes: dict[str, str]
    source: Path
    minimum: str | None = None  # the least evidence the finding is stated from (a condition over the facts)
    overlay: bool = False  # not a finding: weights and words applied to another finding's (``adjust``, ``phrase``)
    filters: dict[str, Callable[..., Any]] = field(default_factory=dict)

    ITEM_LISTS = ("remediation", "ruled_out", "references")

    @classmethod
    def load(cls, module_file: str, finding_id: str) -> "Verdict":
        path = Path(module_file).with_name(f"{finding_id}.toml")
        try:
            with open(path, "rb") as f:
                d = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise VerdictError(f"{path}: {e}") from None
        if d.get("id") != finding_id:
            raise VerdictError(f"{path}: id {d.get('id')!r} is not {finding_id!r}")
        v = cls(
            id=finding_id,
            title=d.get("title", ""),
            doc=d.get("doc", f"docs/findings/{finding_id}.md"),
            thresholds=dict(d.get("thresholds", {})),
            severity_rules=list(d.get("severity", [])),
            confidence_spec=dict(d.get("confidence", {})),
            words_spec=dict(d.get("words", {})),
            items={k: list(d.get(k, [])) for k in cls.ITEM_LISTS},
            evidence_notes=dict(d.get("evidence", {})),
            source=path,
            minimum=d.get("minimum"),
            overlay=bool(d.get("overlay", False)),
        )
        v.check()
        return v

    # --- checks: the shape at load, every condition and template parsed by the corpus lint
    # (tests/test_findings_corpus.py). Parsing all of them at load cost 0.5 CPU-s of every run
    # (366 conditions through pyparsing); a condition is parsed when first evaluated (cached).

    def check(self, parse: bool = False) -> None:
        where = str(self.source)
        if not self.overlay and (not self.severity_rules or "when" in self.severity_rules[-1]):
            raise VerdictError(f"{where}: the last [[severity]] rule must have no `when` (it is the default)")
        for r in self.severity_rules:
            if r.get("is") not in SEVERITIES:
                raise VerdictError(f"{where}: severity {r.get('is')!r} is not one of {', '.join(SEVERITIES)}")
        for k in self.thresholds:
            if not k.endswith(UNIT_SUFFIXES):
                raise VerdictError(f"{where}: threshold {k!r} names no unit ({', '.join(UNIT_SUFFIXES)})")
        if not parse:
            return
        for cond in self.conditions():
            parse_condition(cond)
        for t in self.templates():
            parse_template(t)

    def conditions(self) -> list[str]:
        out = [self.minimum] if self.minimum else []
        out += [r["when"] for r in self.severity_rules if "when" in r]
        out += [w["when"] for w in self.confidence_spec.get("weight", []) if "when" in w]
        for spec in self.words_spec.values():
            out += [c for p in _parts(spec) for c in _part_conditions(p)]
        for items in self.items.values():
            out += [i["when"] for i in items if "when" in i]
        return out

    def templates(self) -> list[str]:
        out = [w["reason"] for w in self.confidence_spec.get("weight", []) if w.get("reason")]
        for spec in self.words_spec.values():
            out += [t for p in _parts(spec) for t in _part_texts(p)]
        for items in self.items.values():
            out += [i["text"] for i in items]
        out += list(self.evidence_notes.values())
        return out

    def names(self) -> set[str]:
        """Every name the conditions and templates read (minus words entries and thresholds)."""
        used: set[str] = set()
        for c in self.conditions():
            used |= names_in(parse_condition(c))
        for t in self.templates():
            used |= template_names(t)
        return {n.split(".")[0] for n in used} - set(self.words_spec) - set(self.thresholds) - {"item"}

    # --- the verdict

    def parts(self, facts: Any) -> dict[str, Any]:
        """What every finding takes from its verdict, as ``Finding`` keyword arguments: id, severity,
        title, root cause, confidence with its reasons, remediation, references, ruled out."""
        confidence, reasons = self.confidence(facts)
        return {
            "id": self.id, "severity": self.severity(facts), "title": self.phrase("title", facts),
            "root_cause": self.phrase("root_cause", facts), "confidence": confidence, "confidence_reasons": reasons,
            "remediation": self.item_list("remediation", facts), "references": self.item_list("references", facts),
            "ruled_out": self.item_list("ruled_out", facts),
        }

    def meets_minimum(self, facts: Any) -> bool:
        """Whether the facts hold the least evidence the finding is stated from (``minimum``)."""
        return holds(self.minimum, Scope(self, facts))

    def severity(self, facts: Any) -> str:
        scope = Scope(self, facts)
        for r in self.severity_rules:
            if holds(r.get("when"), scope):
                return r["is"]
        raise VerdictError(f"{self.source}: no severity rule holds")  # unreachable: the last has no when

    def confidence(self, facts: Any) -> tuple[float, list[Text]]:
        """The confidence (base, then each weight that holds, in order, clamped to [floor, cap]) and
        the reasons of the weights that held."""
        return self.adjust(float(self.confidence_spec.get("base", 0.5)), facts)

    def adjust(self, value: float, facts: Any) -> tuple[float, list[Text]]:
        """``value`` changed by each weight that holds, in order (an overlay's weights change the
        confidence another verdict gave), clamped to [floor, cap]; with the reasons that held."""
        spec = self.confidence_spec
        scope = Scope(self, facts)
        reasons: list[Text] = []
        for w in spec.get("weight", []):
            if not holds(w.get("when"), scope):
                continue
            if "each" in w:
                for item in lookup(scope, w["each"]) or []:
                    s = scope.with_item(item)
                    value = self._apply(value, w)
                    if w.get("reason"):
                        reasons.append(self.render(w["reason"], s))
                continue
            value = self._apply(value, w)
            if w.get("reason"):
                reasons.append(self.render(w["reason"], scope))
        value = min(value, float(spec.get("cap", 1.0)))
        value = max(value, float(spec.get("floor", 0.0)))
        return value, reasons

    @staticmethod
    def _apply(value: float, w: dict) -> float:
        """A weight: ``set`` or ``add``, then its own ``cap`` / ``floor`` when it has them."""
        value = float(w["set"]) if "set" in w else value + float(w.get("add", 0.0))
        if "cap" in w:
            value = min(value, float(w["cap"]))
        if "floor" in w:
            value = max(value, float(w["floor"]))
        return value

    def phrase(self, name: str, facts: Any, extra: dict | None = None) -> Text:
        """A ``[words]`` entry rendered from the facts."""
        if name not in self.words_spec:
            raise VerdictError(f"{self.source}: no [words] entry {name!r}")
        scope = Scope(self, facts, extra)
        return self._parts(self.words_spec[name], scope)

    def _parts(self, spec: Any, scope: Scope) -> Text:
        if isinstance(spec, str):
            return self.render(spec, scope)
        out = Text()
        for p in spec:
            if isinstance(p, str):
                out = out + self.render(p, scope)
            elif "choose" in p:
                for c in p["choose"]:
                    if holds(c.get("when"), scope):
                        out = out + self._parts([c], scope)
                        break
            elif holds(p.get("when"), scope):
                if "each" in p:
                    items = lookup(scope, p["each"]) or []
                    out = out + Text.join(p.get("sep", ""), [self.render(p["text"], scope.with_item(i)) for i in items])
                else:
                    out = out + self.render(p["text"], scope)
        return out

    def item_list(self, name: str, facts: Any) -> list[Text]:
        """remediation, ruled_out or references: the items whose `when` holds (an item with `each`
        gives one per element of that list, as ``item``)."""
        scope = Scope(self, facts)
        out: list[Text] = []
        for i in self.items.get(name, []):
            if not holds(i.get("when"), scope):
                continue
            if "each" in i:
                out += [self.render(i["text"], scope.with_item(x)) for x in (lookup(scope, i["each"]) or [])]
            else:
                out.append(self.render(i["text"], scope))
        return out

    def note(self, name: str, facts: Any, **extra: Any) -> Text:
        """The note of a quoted line (``[evidence]``)."""
        if name not in self.evidence_notes:
            raise VerdictError(f"{self.source}: no [evidence] note {name!r}")
        return self.render(self.evidence_notes[name], Scope(self, facts, extra))

    def render(self, template: str, scope: Scope) -> Text:
        out: list = []
        for piece in parse_template(template):
            if piece[0] == "lit":
                out.append(piece[1])
                continue
            _, name, filters = piece
            v = lookup(scope, name)
            for fname, args in filters:
                if fname == "each":
                    v = Text.join(args[1] if len(args) > 1 else ", ", [self.phrase(args[0], scope.facts, {**scope.extra, "item": x}) for x in (v or [])])
                    continue
                fn = self.filters.get(fname) or BUILTIN_FILTERS.get(fname)
                if fn is None:
                    raise VerdictError(f"{self.source}: unknown filter {fname!r} in {template!r}")
                v = fn(v, *args)
            out.append(as_text(v))
        return Text(*out)

    # --- the doc page's table

    def confidence_table(self) -> str:
        """The "why this confidence" table of the finding's doc page (Markdown), from the file."""
        spec = self.confidence_spec
        rows = [] if self.overlay else [f"| start | {spec.get('base', 0.5):+.2f} | every finding starts here |"]
        for w in spec.get("weight", []):
            change = f"= {float(w['set']):.2f}" if "set" in w else f"{float(w.get('add', 0.0)):+.2f}"
            if "cap" in w:
                change += f", at most {float(w['cap']):.2f}"
            if "floor" in w:
                change += f", at least {float(w['floor']):.2f}"
            if "each" in w:
                change += f" per {w['each']}"
            when = w.get("when", "always").replace("|", "\\|")
            reason = (w.get("reason") or "").replace("|", "\\|")
            rows.append(f"| `{when}` | {change} | {reason} |")
        bounds = []
        if "cap" in spec:
            bounds.append(f"at most {float(spec['cap']):.2f}")
        if "floor" in spec:
            bounds.append(f"at least {float(spec['floor']):.2f}")
        out = ["| when | change | reason shown |", "|---|---|---|", *rows]
        if self.minimum:
            out.append("")
            out.append(f"Minimum evidence (below it, no finding): `{self.minimum}`.")
        if bounds:
            out.append("")
            out.append("Then it is kept " + " and ".join(bounds) + ".")
        return "\n".join(out)


def _parts(spec: Any) -> list:
    return [spec] if isinstance(spec, str) else list(spec)


def _part_conditions(p: Any) -> list[str]:
    if isinstance(p, str):
        return []
    if "choose" in p:
        return [c for x in p["choose"] for c in _part_conditions(x)]
    return [p["when"]] if "when" in p else []


def _part_texts(p: Any) -> list[str]:
    if isinstance(p, str):
        return [p]
    if "choose" in p:
        return [t for x in p["choose"] for t in _part_texts(x)]
    return [p["text"]]


def fact_names(facts_type: type) -> set[str]:
    """The fields of a facts dataclass (and its properties), for the lint."""
    names = {f.name for f in dataclasses.fields(facts_type)}
    names |= {n for n, v in vars(facts_type).items() if isinstance(v, property)}
    for base in facts_type.__mro__[1:]:
        names |= {n for n, v in vars(base).items() if isinstance(v, property)}
    return names
