//! The records of a scanned chunk, parsed (the regex half; ingest/records.py's `from_parser` does the rest).
//!
//! For the records the reader asks for (by index, from `scan`), the layout's head regex (or its
//! whole regex) is run on each record's first line and the message cut out, and the continuation
//! lines are joined: out come the record columns as Arrow arrays (arrow.rs), made from the chunk's
//! bytes with no Python string and no Polars column of lines. What stays in Python is the rest
//! (records.finish: levels made canonical, the guess for records the layout did not isolate, times).
//!
//! The regex texts are the layout's (records.parser_args): the head capture (`^(?P<_head>…)…`),
//! the message the text after `_head`, less the tail regex's match at the end (`(?P<_tail>…)$`)
//! when the layout has one; a layout with no place for the message runs its whole regex (`(?s)…`). A field the layout lacks is null, a line the head does
//! not match has its whole text as the message (not isolated).
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use regex::Regex;
use std::borrow::Cow;

use crate::arrow::{import_i64, Column, StringColumn};
use crate::{compile, group, line_bytes};

/// Where a head field comes from.
#[derive(Clone, Copy)]
enum Src {
    Absent,
    Full(usize),
    Head(usize),
    Tail(usize),
}

const NAMES: [&str; 4] = ["ts", "level", "logger", "thread"];

/// `RecordParser(head_regex, tail_regex, full_regex, fields, ansi=False)`: `full_regex` (the
/// whole-line regex) when the layout has no place for the message, else `head_regex` and
/// `tail_regex` (None: no tail); none of them for the message-only fallback (every first line is
/// its record's message, not isolated, no field); `fields` the layout's field names.
#[pyclass(module = "logsleuth._core", frozen)]
pub struct RecordParser {
    head: Option<Regex>,
    tail: Option<Regex>,
    full: Option<Regex>,
    head_group: usize,
    tail_group: usize,
    msg: Src,
    srcs: [Src; 4],
    /// the input has ANSI escapes: a line is read with them removed (`crate::ansi_text`), and
    /// `raw` is the line as it is (escapes and leading NULs kept), not the text read
    ansi: bool,
}


/// One record's first line parsed: its fields (`NAMES` order) and its message (None: not isolated).
type Parsed<'t> = ([Option<&'t str>; 4], Option<&'t str>);

impl RecordParser {
    fn parse<'t>(&self, text: &'t str) -> Parsed<'t> {
        let mut out: [Option<&str>; 4] = [None; 4];
        if let Some(full) = &self.full {
            let Some(c) = full.captures(text) else { return (out, None) };
            for (o, src) in out.iter_mut().zip(self.srcs.iter()) {
                if let Src::Full(g) = src {
                    *o = c.get(*g).map(|m| m.as_str());
                }
            }
            let msg = match self.msg {
                Src::Full(g) => c.get(g).map(|m| m.as_str()),
                _ => None,
            };
            return (out, msg);
        }
        // no regex (the message-only fallback): the line is the message, not isolated
        let Some(head) = self.head.as_ref() else { return (out, None) };
        let Some(h) = head.captures(text) else { return (out, None) };
        let Some(hm) = h.get(self.head_group) else { return (out, None) };
        // the message: the text after `_head` (the head is anchored: it starts the text)
        let rest = &text[hm.end() - hm.start()..];
        let t = self.tail.as_ref().and_then(|t| t.captures(rest));
        for (o, src) in out.iter_mut().zip(self.srcs.iter()) {
            *o = match *src {
                Src::Head(g) => h.get(g).map(|m| m.as_str()),
                Src::Tail(g) => t.as_ref().and_then(|t| t.get(g)).map(|m| m.as_str()),
                _ => None,
            };
        }
        let msg = match t.as_ref().and_then(|t| t.get(self.tail_group)) {
            Some(tm) => &rest[..rest.len() - tm.as_str().len()],
            None => rest,
        };
        (out, Some(msg))
    }
}

#[pymethods]
impl RecordParser {
    #[new]
    #[pyo3(signature = (head_regex, tail_regex, full_regex, fields, ansi=false))]
    fn new(head_regex: Option<&str>, tail_regex: Option<&str>, full_regex: Option<&str>, fields: Vec<String>, ansi: bool) -> PyResult<RecordParser> {
        let head = head_regex.map(compile).transpose()?;
        let tail = tail_regex.map(compile).transpose()?;
        let full = full_regex.map(compile).transpose()?;
        if full.is_none() && head.is_none() && tail.is_some() {
            return Err(PyValueError::new_err("RecordParser: a tail regex without a head regex"));
        }
        let has = |n: &str| fields.iter().any(|f| f == n);
        let src = |n: &str| -> Src {
            if !has(n) {
                return Src::Absent;
            }
            if let Some(f) = &full {
                return group(f, n).map_or(Src::Absent, Src::Full);
            }
            let h = head.as_ref().and_then(|h| group(h, n));
            match (h, tail.as_ref().and_then(|t| group(t, n))) {
                (Some(g), _) => Src::Head(g),
                (None, Some(g)) => Src::Tail(g),
                _ => Src::Absent,
            }
        };
        let srcs = [src(NAMES[0]), src(NAMES[1]), src(NAMES[2]), src(NAMES[3])];
        let msg = match &full {
            Some(f) => group(f, "msg").map_or(Src::Absent, Src::Full),
            None => Src::Absent,
        };
        let head_group = head.as_ref().and_then(|h| group(h, "_head")).unwrap_or(0);
        let tail_group = tail.as_ref().and_then(|t| group(t, "_tail")).unwrap_or(0);
        Ok(RecordParser { head, tail, full, head_group, tail_group, msg, srcs, ansi })
    }

    /// `records(buf, line_starts, record_lines, records, heads_only, line_base, rid_base)` ->
    /// `[(name, column)]`: for the given records (an Int64 column's Arrow C stream of ascending
    /// record indices in the chunk, from `scan`), `rid`, `line`
    /// (numbered from `rid_base`/`line_base`), `raw` (the first line's text), `ts_text`, `level`,
    /// `logger`, `thread`, `msg` (the first line's message, or its whole text), `isolated`, and
    /// unless `heads_only` `line_end` and `_cont` (the continuation lines joined by `\n`, null
    /// when there are none). `exact`: `buf` is a buffer of unwrapped texts (`LineScanner.scan_texts`):
    /// line k is its bytes up to the `\n` before `line_starts[k + 1]`, read as it is, and `raw` is
    /// null (the caller has the lines as they were).
    #[pyo3(signature = (buf, line_starts, record_lines, records, heads_only, line_base, rid_base, exact=false))]
    #[allow(clippy::too_many_arguments)]
    fn records(
        &self,
        py: Python<'_>,
        buf: &[u8],
        line_starts: &[u8],
        record_lines: &[u8],
        records: &Bound<'_, PyAny>,
        heads_only: bool,
        line_base: i64,
        rid_base: i64,
        exact: bool,
    ) -> PyResult<Vec<(String, Column)>> {
        let starts = crate::read_u64s(line_starts);
        let recs = crate::read_u64s(record_lines);
        let want = import_i64(records)?;
        if starts.is_empty() || *starts.last().unwrap() as usize > buf.len() {
            return Err(PyValueError::new_err("records: bad line offsets"));
        }
        if want.iter().any(|&r| r < 0 || r as usize >= recs.len()) {
            return Err(PyValueError::new_err("records: no such record"));
        }
        // (the chunk was checked to be UTF-8 by the scan; checked again here, line by line, only
        // on the lines read: a whole 8 MB chunk per call was measured at 0.1 s of a dense run)
        let text = &buf[..*starts.last().unwrap() as usize];
        let lines = starts.len() - 1;
        // line k as read_lines gives it (raw), and as the layout reads it
        let raw_line = |k: usize| -> PyResult<&str> {
            let b = if exact { &text[starts[k] as usize..(starts[k + 1] as usize).saturating_sub(1).max(starts[k] as usize)] } else { line_bytes(text, &starts, k) };
            std::str::from_utf8(b).map_err(|e| PyValueError::new_err(format!("not UTF-8: {e}")))
        };
        let ansi = self.ansi && !exact;
        let line = |k: usize| -> PyResult<Cow<'_, str>> {
            let t = raw_line(k)?;
            Ok(if exact { Cow::Borrowed(t) } else if ansi { crate::ansi_text(t) } else { Cow::Borrowed(t.trim_start_matches('\0')) })
        };
        py.detach(|| -> PyResult<Vec<(String, Column)>> {
            let n = want.len();
            // record r's lines: its first, and up to (not with) the next record's first
            let lines_of = |r: usize| -> (usize, usize) {
                let a = recs[r] as usize;
                let b = if heads_only { a + 1 } else if r + 1 < recs.len() { recs[r + 1] as usize } else { lines };
                (a, b.min(lines))
            };
            // the bytes of the records asked for (their first lines; their other lines)
            let (mut head_bytes, mut cont_bytes) = (0usize, 0usize);
            for &r in &want {
                let (a, b) = lines_of(r as usize);
                let b = b.max(a + 1);
                head_bytes += (starts[a + 1] - starts[a]) as usize;
                cont_bytes += (starts[b] - starts[a + 1]) as usize;
            }
            let (mut rid, mut first, mut last, mut iso) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
            // (raw is those bytes but the line ends, the joined lines those of the other lines but
            // theirs: room reserved for them is used; the fields and the message, parts of the
            // first lines, grow: room reserved and not used made the heap larger, 345 -> 395 MB
            // peak RSS on the dense 24M log)
            let mut raw = StringColumn::with_bytes("raw", n, if exact { 0 } else { head_bytes });
            let mut fields: Vec<StringColumn> = NAMES.iter().map(|f| StringColumn::new(if *f == "ts" { "ts_text" } else { f }, n)).collect();
            let mut msg = StringColumn::new("msg", n);
            let mut cont = StringColumn::with_bytes("_cont", n, if heads_only { 0 } else { cont_bytes });
            let mut joined = String::new();
            for &r in &want {
                let r = r as usize;
                let (a, b) = lines_of(r);
                let t = line(a)?;
                let t = t.as_ref();
                let (vals, m) = self.parse(t);
                rid.push(rid_base + r as i64);
                first.push(line_base + a as i64);
                last.push(line_base + b.max(a + 1) as i64 - 1);
                raw.push(if exact { None } else { Some(if ansi { raw_line(a)? } else { t }) });
                for (c, v) in fields.iter_mut().zip(vals.iter()) {
                    c.push(*v);
                }
                msg.push(Some(m.unwrap_or(t)));
                iso.push(m.is_some());
                if !heads_only {
                    if b > a + 1 {
                        joined.clear();
                        for k in a + 1..b {
                            if k > a + 1 {
                                joined.push('\n');
                            }
                            joined.push_str(&line(k)?);
                        }
                        cont.push(Some(&joined));
                    } else {
                        cont.push(None);
                    }
                }
            }
            let mut out = vec![("rid".to_string(), Column::i64s("rid", &rid)), ("line".to_string(), Column::i64s("line", &first)), ("raw".to_string(), raw.finish())];
            for c in fields {
                out.push((c.name().to_string(), c.finish()));
            }
            out.push(("msg".to_string(), msg.finish()));
            out.push(("isolated".to_string(), Column::bools("isolated", &iso)));
            if !heads_only {
                out.push(("line_end".to_string(), Column::i64s("line_end", &last)));
                out.push(("_cont".to_string(), cont.finish()));
            }
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_and_full_forms() {
        let p = RecordParser::new(
            Some(r"^(?P<_head>\[(?P<ts>\d\d:\d\d)\] (?P<level>[A-Z]+) )"),
            Some(r"(?P<_tail> \((?P<logger>[\w.]+)\))$"),
            None,
            vec!["ts".into(), "level".into(), "msg".into(), "logger".into()],
            false,
        )
        .unwrap();
        assert_eq!(p.parse("[10:11] INFO hello (a.B)"), ([Some("10:11"), Some("INFO"), Some("a.B"), None], Some("hello")));
        assert_eq!(p.parse("[10:11] INFO no tail"), ([Some("10:11"), Some("INFO"), None, None], Some("no tail")));
        assert_eq!(p.parse("at x.y"), ([None; 4], None));
        let f = RecordParser::new(None, None, Some(r#"(?s)^time="(?P<ts>[^"]+)" level=(?P<level>\w+) msg="(?P<msg>.*)"$"#), vec!["ts".into(), "level".into(), "msg".into()], false).unwrap();
        assert_eq!(f.parse(r#"time="t1" level=info msg="m""#), ([Some("t1"), Some("info"), None, None], Some("m")));
        // the message-only fallback: no regex, nothing isolated
        let none = RecordParser::new(None, None, None, vec!["msg".into()], false).unwrap();
        assert_eq!(none.parse("anything"), ([None; 4], None));
    }

    #[test]
    fn ansi_escapes_removed_as_the_polars_path_removes_them() {
        assert_eq!(crate::ansi_text("\x1b[32mINFO\x1b[0;39m x"), "INFO x");
        assert_eq!(crate::ansi_text("\x1b[0m\0\0a"), "a"); // NULs the escapes hid go too
        assert_eq!(crate::ansi_text("\0\x1b[31ma\r"), "a\r"); // (a `\r` not at the line's end stays)
        assert_eq!(crate::ansi_text("\x1b[1;2;3 never ends"), "\x1b[1;2;3 never ends");
        assert_eq!(crate::ansi_text("\x1b[12\x1b[3mx\x1b"), "\x1b[12x\x1b");
    }
}
