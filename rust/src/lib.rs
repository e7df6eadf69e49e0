//! logsleuth._core: the compiled part of the reading path (docs/architecture.md, "Reading core").
//!
//! One pass over a chunk of whole lines of UTF-8 text finds the records (a record starts at a line
//! the layout's start regex or the dated-stamp regex accepts, or at the input's first line), the
//! lines that hold one of the packs' literals (searched over the unsplit buffer by Aho-Corasick
//! automata, never line by line), and so the records to parse. Lines are split exactly as
//! Polars' `read_lines` splits them: on `\n`, one trailing `\r` removed, the last piece a line when
//! it is not empty. Only the records Python asks for afterwards are parsed (`records.rs`) into Arrow
//! columns: no per-line Python object, no column of every line.
//!
//! The start regexes are the layouts' texts (the same the layout detection runs with Polars, compiled
//! by the same engine, the `regex` crate), and the literals the patterns' required literals (the
//! case-insensitive ones ASCII-case-insensitively, as the matcher finds them). An input with ANSI
//! escapes is read as its text with the escapes removed (`ansi_text`; the scan runs over a buffer of
//! those texts), the records' `raw` the line as it is.
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use regex::Regex;
use std::borrow::Cow;

mod arrow;
mod stamps;
mod matcher;
mod records;
mod writer;

/// The line of text at `buf[s..e]` (e excludes the `\n`): one trailing `\r` off, leading NULs off
/// (what `read_lines` and the unwrapping of a line without envelope leave for the layout to read);
/// with `exact` as it is (a buffer of texts made already: `clean_text`).
#[inline]
fn text_of(buf: &str, s: usize, e: usize, exact: bool) -> &str {
    let mut line = &buf[s..e];
    if exact {
        return line;
    }
    if let Some(x) = line.strip_suffix('\r') {
        line = x;
    }
    line.trim_start_matches('\0')
}

/// The first `n` characters of `s`.
#[inline]
fn head(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The ANSI colour and cursor escapes removed from a line before the layout reads it (the text of
/// envelopes.ANSI_RE, which Polars removes from an envelope's texts: the same engine).
const ANSI_RE: &str = r"\x1b\[[0-9;?]*[A-Za-z]";

fn ansi_re() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| Regex::new(ANSI_RE).expect("the ANSI regex"))
}

/// A line (as `read_lines` gives it: its `\n` and one trailing `\r` off) as the layout reads it
/// when the input has ANSI escapes: the escapes removed, then leading NULs off (envelopes.unwrap:
/// `raw.str.replace_all(ANSI_RE, "")`, then `strip_chars_start("\0")`).
pub(crate) fn ansi_text(line: &str) -> Cow<'_, str> {
    if memchr::memchr(0x1b, line.as_bytes()).is_none() {
        return Cow::Borrowed(line.trim_start_matches('\0'));
    }
    match ansi_re().replace_all(line, "") {
        Cow::Borrowed(t) => Cow::Borrowed(t.trim_start_matches('\0')),
        Cow::Owned(t) if t.starts_with('\0') => Cow::Owned(t.trim_start_matches('\0').to_owned()),
        t => t,
    }
}

/// Every line's start in `buf` (lines split as `read_lines` splits them).
fn line_starts_of(buf: &[u8]) -> Vec<u64> {
    let n = buf.len();
    let mut starts: Vec<u64> = Vec::with_capacity(n / 64 + 2);
    if n > 0 {
        starts.push(0);
        for i in memchr::memchr_iter(b'\n', buf) {
            if i + 1 < n {
                starts.push((i + 1) as u64);
            }
        }
    }
    starts
}

/// The texts of the lines of `text` (at `starts`) as the layout reads them with ANSI escapes
/// (`ansi_text`), each followed by `\n`: a buffer of as many lines, line k the text of line k.
fn clean_text(text: &str, starts: &[u64]) -> String {
    let buf = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 1);
    for k in 0..starts.len() {
        let line = std::str::from_utf8(line_bytes(buf, starts, k)).unwrap_or("");
        out.push_str(&ansi_text(line));
        out.push('\n');
    }
    out
}

/// A regex of the packs or layouts (the same texts Polars is given), or a one-line ValueError.
pub(crate) fn compile(re: &str) -> PyResult<Regex> {
    Regex::new(re).map_err(|e| PyValueError::new_err(format!("logsleuth core: bad regex: {e}")))
}

/// The index of the capture group `name` in `re`.
pub(crate) fn group(re: &Regex, name: &str) -> Option<usize> {
    re.capture_names().position(|n| n == Some(name))
}

/// The bytes of line `k` (of the offsets `starts`, one more entry: the end) as `read_lines` gives
/// it: its `\n` off, one trailing `\r` off. The layout reads it with its leading NULs off too.
pub(crate) fn line_bytes<'b>(buf: &'b [u8], starts: &[u64], k: usize) -> &'b [u8] {
    let (s, mut e) = (starts[k] as usize, starts.get(k + 1).map_or(buf.len(), |&e| e as usize));
    if e > s && buf[e - 1] == b'\n' {
        e -= 1;
    }
    if e > s && buf[e - 1] == b'\r' {
        e -= 1;
    }
    &buf[s..e]
}

fn u64s<'py>(py: Python<'py>, v: &[u64]) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(v.len() * 8);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    PyBytes::new(py, &out)
}

pub(crate) fn read_u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

struct Scan {
    /// byte offset of each line's start; one more entry: the end of the processed part
    line_starts: Vec<u64>,
    /// index (into line_starts) of each record's first line
    rec_lines: Vec<u64>,
    /// records holding a line with a literal
    wanted: Vec<u64>,
    /// lines processed (records complete); the rest is carried to the next chunk
    done_lines: usize,
    /// lines in the buffer
    total_lines: usize,
}

/// What makes a line a candidate: the packs' literals, as automata (DFAs: one case-sensitive, one
/// ASCII-case-insensitive — the matcher's own literal stage is ASCII-case-insensitive too, so a
/// line only Unicode case folding would select could give no event anyway).
pub struct Select(Vec<aho_corasick::AhoCorasick>);

impl Select {
    pub fn new(cs: &[String], ci: &[String]) -> PyResult<Select> {
        let mut acs = Vec::new();
        for (lits, ci) in [(cs, false), (ci, true)] {
            if !lits.is_empty() {
                acs.push(
                    aho_corasick::AhoCorasick::builder()
                        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
                        .ascii_case_insensitive(ci)
                        .build(lits)
                        .map_err(|e| PyValueError::new_err(format!("logsleuth core: literals: {e}")))?,
                );
            }
        }
        Ok(Select(acs))
    }

    /// The start of the first hit of automaton `k` at or after `pos` in `hay`.
    #[inline]
    fn next_hit(&self, k: usize, hay: &str, pos: usize) -> Option<usize> {
        self.0[k].find(aho_corasick::Input::new(hay).span(pos..hay.len())).map(|m| m.start())
    }

    fn parts(&self) -> usize {
        self.0.len()
    }
}

/// What a record start is, beside the first line of the input.
struct Starts<'a> {
    /// a line starts a record when this regex matches it
    start: Option<&'a Regex>,
    /// ... or this one matches its first `head_chars` characters
    stamp: Option<&'a Regex>,
    head_chars: usize,
    /// ... or its entry here is not 0 (what the envelope says: a line it stamped, a structured
    /// logger's object; one byte per line of the buffer)
    forced: Option<&'a [u8]>,
}

/// The scan of `text`, whose lines start at `starts` (each line followed by one `\n`, the last
/// one's optional; a buffer of texts made here, `exact`, may hold `\n` inside a line).
#[allow(clippy::too_many_arguments)]
fn scan_impl(
    text: &str,
    mut starts: Vec<u64>,
    first_is_input_start: bool,
    how: &Starts,
    select: &Select,
    last: bool,
    exact: bool,
) -> Scan {
    let buf = text.as_bytes();
    let n = buf.len();
    let lines = starts.len();
    let (start, stamp, head_chars) = (how.start, how.stamp, how.head_chars);
    let end_of = |k: usize| -> usize {
        if k + 1 < lines {
            starts[k + 1] as usize - 1
        } else if n > 0 && buf[n - 1] == b'\n' {
            n - 1
        } else {
            n
        }
    };
    // record starts
    let mut rec_lines: Vec<u64> = Vec::new();
    for (k, &s) in starts.iter().enumerate() {
        let t = text_of(text, s as usize, end_of(k), exact);
        let is_start = (k == 0 && first_is_input_start)
            || how.forced.is_some_and(|f| f.get(k).is_some_and(|&x| x != 0))
            || start.is_some_and(|r| r.is_match(t))
            || stamp.is_some_and(|r| r.is_match(head(t, head_chars)));
        if is_start {
            rec_lines.push(k as u64);
        }
    }
    // the last record continues in the next chunk unless this is the input's end
    let (done_records, done_lines) = if last {
        (rec_lines.len(), lines)
    } else if rec_lines.is_empty() {
        (0, 0)
    } else {
        let l = rec_lines.len() - 1;
        (l, rec_lines[l] as usize)
    };
    rec_lines.truncate(done_records);
    let limit = if done_lines < lines { starts[done_lines] as usize } else { n };
    // lines holding a literal: each automaton searched over the unsplit text, one hit per line
    // (measured on a 64 MB chunk of a dense broker log, the packs' 269 literals: 0.13 s as two DFAs
    // against 0.18 s as five regex alternations of literals, Teddy-searched; the automaton's
    // default, a contiguous NFA, was slower than both)
    let mut hit = vec![false; done_lines];
    let hay = &text[..limit];
    for part in 0..select.parts() {
        let mut pos = 0usize;
        while pos < limit {
            let m = match select.next_hit(part, hay, pos) {
                Some(m) => m,
                None => break,
            };
            let k = match starts.binary_search(&(m as u64)) {
                Ok(k) => k,
                Err(k) => k - 1,
            };
            hit[k] = true;
            pos = end_of(k) + 1;
        }
    }
    let mut wanted: Vec<u64> = Vec::new();
    for (r, &first) in rec_lines.iter().enumerate() {
        let next = if r + 1 < rec_lines.len() { rec_lines[r + 1] as usize } else { done_lines };
        if hit[first as usize..next].iter().any(|&h| h) {
            wanted.push(r as u64);
        }
    }
    starts.truncate(done_lines);
    starts.push(limit as u64);
    Scan { line_starts: starts, rec_lines, wanted, done_lines, total_lines: lines }
}

/// `LineScanner(start_regex, stamp_regex, head_chars, (cs_literals, ci_literals), tod_regex=None,
/// tod_group=0, ansi=False)`: the regexes (a line starts a record when `start_regex` matches it or
/// `stamp_regex` matches its first `head_chars` characters; either may be None) and literal
/// automata of one input, compiled once and used for every chunk (`scan`); `ansi`: its lines are
/// read with their ANSI escapes removed.
#[pyclass(module = "logsleuth._core", frozen)]
struct LineScanner {
    start: Option<Regex>,
    stamp: Option<Regex>,
    head_chars: usize,
    select: Select,
    /// a time-only layout's stamp regex and its group: each record's stamp text (the day's
    /// rollovers are counted over every record, not only the ones parsed)
    tod: Option<(Regex, usize)>,
    /// the input has ANSI escapes: each line is read with them removed (`ansi_text`)
    ansi: bool,
}

impl LineScanner {
    fn starts<'a>(&'a self, forced: Option<&'a [u8]>) -> Starts<'a> {
        Starts { start: self.start.as_ref(), stamp: self.stamp.as_ref(), head_chars: self.head_chars, forced }
    }

    /// Each record's stamp text (the `tod_regex`'s group on its first line as `text_at` gives it).
    fn tod_column<'t>(&self, s: &Scan, text_at: impl Fn(usize) -> &'t str) -> Option<arrow::Column> {
        self.tod.as_ref().map(|(re, g)| {
            let mut col = arrow::StringColumn::new("_tod_text", s.rec_lines.len());
            for &k in &s.rec_lines {
                col.push(re.captures(text_at(k as usize)).and_then(|c| c.get(*g)).map(|m| m.as_str()));
            }
            col.finish()
        })
    }
}

#[pymethods]
impl LineScanner {
    #[new]
    #[pyo3(signature = (start_regex, stamp_regex, head_chars, literals, tod_regex=None, tod_group=0, ansi=false))]
    fn new(
        start_regex: Option<&str>,
        stamp_regex: Option<&str>,
        head_chars: usize,
        literals: (Vec<String>, Vec<String>),
        tod_regex: Option<&str>,
        tod_group: usize,
        ansi: bool,
    ) -> PyResult<LineScanner> {
        Ok(LineScanner {
            start: start_regex.map(compile).transpose()?,
            stamp: stamp_regex.map(compile).transpose()?,
            head_chars,
            select: Select::new(&literals.0, &literals.1)?,
            tod: tod_regex.map(|r| compile(r).map(|re| (re, tod_group))).transpose()?,
            ansi,
        })
    }

    /// `scan(buf, first_is_input_start, last)` -> `(lines, total, line_starts, record_lines,
    /// wanted)`: `lines` complete-record lines processed (of `total` in the buffer; the rest,
    /// from byte `line_starts[lines]` on, is the unfinished last record: the caller carries it
    /// into the next chunk), the u64 buffers of each line's byte offset (plus the end) and of
    /// each record's first line, the records with a literal (an Int64 column for `pl.Series`),
    /// and with a `tod_regex` each record's stamp text (its first line's `tod_group`: a String
    /// column, null where the line has none), else None. Raises ValueError when `buf` is not UTF-8.
    #[allow(clippy::type_complexity)]
    fn scan<'py>(
        &self,
        py: Python<'py>,
        buf: &[u8],
        first_is_input_start: bool,
        last: bool,
    ) -> PyResult<(usize, usize, Bound<'py, PyBytes>, Bound<'py, PyBytes>, arrow::Column, Option<arrow::Column>)> {
        let (s, tod) = py.detach(|| -> PyResult<(Scan, Option<arrow::Column>)> {
            let text = std::str::from_utf8(buf).map_err(|e| PyValueError::new_err(format!("not UTF-8: {e}")))?;
            if !self.ansi {
                let s = scan_impl(text, line_starts_of(buf), first_is_input_start, &self.starts(None), &self.select, last, false);
                // (line offsets fall on line starts of a valid UTF-8 text: the slice is UTF-8)
                let tod = self.tod_column(&s, |k| std::str::from_utf8(line_bytes(buf, &s.line_starts, k)).unwrap_or("").trim_start_matches('\0'));
                return Ok((s, tod));
            }
            // ANSI escapes: the lines' texts (escapes removed) scanned as a buffer of their own, line
            // k of it the text of line k here; the offsets handed back are this buffer's
            let starts = line_starts_of(buf);
            let clean = clean_text(text, &starts);
            let mut s = scan_impl(&clean, line_starts_of(clean.as_bytes()), first_is_input_start, &self.starts(None), &self.select, last, true);
            let tod = self.tod_column(&s, |k| &clean[s.line_starts[k] as usize..s.line_starts[k + 1] as usize - 1]);
            let limit = if s.done_lines < starts.len() { starts[s.done_lines] } else { buf.len() as u64 };
            s.line_starts = starts;
            s.line_starts.truncate(s.done_lines);
            s.line_starts.push(limit);
            Ok((s, tod))
        })?;
        let wanted: Vec<i64> = s.wanted.iter().map(|&r| r as i64).collect();
        Ok((s.done_lines, s.total_lines, u64s(py, &s.line_starts), u64s(py, &s.rec_lines), arrow::Column::i64s("rid", &wanted), tod))
    }

    /// `scan_texts(texts, forced, first_is_input_start, last)` -> `(lines, total, buf, line_starts,
    /// record_lines, wanted, tod)`: `scan` of an input with an envelope, whose lines' texts
    /// Polars unwrapped (`texts`: a String column's Arrow C stream, one row per line; a text
    /// may hold `\n`). They are copied into one buffer (`buf`), each followed by `\n`, line k of
    /// it row k; `line_starts` are offsets into it. `forced`: a Boolean column's Arrow C stream,
    /// one row per line, true where the envelope starts a record (or None). The records are parsed
    /// from `buf` with `exact`.
    #[allow(clippy::type_complexity)]
    fn scan_texts<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        forced: Option<&Bound<'py, PyAny>>,
        first_is_input_start: bool,
        last: bool,
    ) -> PyResult<(usize, usize, Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, arrow::Column, Option<arrow::Column>)> {
        let rows = arrow::Strings::import(texts)?;
        let forced = forced.map(arrow::import_u8).transpose()?;
        let forced = forced.as_deref();
        if forced.is_some_and(|f| f.len() != rows.len()) {
            return Err(PyValueError::new_err("scan_texts: one forced flag per line"));
        }
        let (buf, s, tod) = py.detach(|| {
            let n = rows.len();
            let mut bytes = 0usize;
            for i in 0..n {
                bytes += rows.get(i).map_or(0, str::len) + 1;
            }
            let mut buf = String::with_capacity(bytes);
            let mut starts: Vec<u64> = Vec::with_capacity(n + 1);
            for i in 0..n {
                starts.push(buf.len() as u64);
                buf.push_str(rows.get(i).unwrap_or(""));
                buf.push('\n');
            }
            let s = scan_impl(&buf, starts, first_is_input_start, &self.starts(forced), &self.select, last, true);
            let tod = self.tod_column(&s, |k| &buf[s.line_starts[k] as usize..s.line_starts[k + 1] as usize - 1]);
            (buf, s, tod)
        });
        let wanted: Vec<i64> = s.wanted.iter().map(|&r| r as i64).collect();
        Ok((
            s.done_lines,
            s.total_lines,
            PyBytes::new(py, buf.as_bytes()),
            u64s(py, &s.line_starts),
            u64s(py, &s.rec_lines),
            arrow::Column::i64s("rid", &wanted),
            tod,
        ))
    }
}

/// `is_utf8(buf)`: whether `buf` is valid UTF-8.
#[pyfunction]
fn is_utf8(py: Python<'_>, buf: &[u8]) -> bool {
    py.detach(|| std::str::from_utf8(buf).is_ok())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LineScanner>()?;
    m.add_function(wrap_pyfunction!(is_utf8, m)?)?;
    m.add_class::<matcher::Matcher>()?;
    m.add_class::<arrow::Column>()?;
    m.add_class::<records::RecordParser>()?;
    m.add_function(wrap_pyfunction!(writer::write_lines, m)?)?;
    m.add_function(wrap_pyfunction!(stamps::iso_stamps, m)?)?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, last: bool) -> Scan {
        let start = Regex::new(r"^\d{4}-").unwrap();
        let select = Select::new(&["lit".to_string()], &[]).unwrap();
        let how = Starts { start: Some(&start), stamp: None, head_chars: 0, forced: None };
        scan_impl(text, line_starts_of(text.as_bytes()), true, &how, &select, last, false)
    }

    #[test]
    fn lines_split_as_polars_read_lines() {
        // '\n' ends a line, a last piece without one is a line, a trailing '\n' adds none
        assert_eq!(run("a\r\nb\n\nc", true).total_lines, 4);
        assert_eq!(run("a\n", true).total_lines, 1);
        assert_eq!(run("\n", true).total_lines, 1);
        assert_eq!(run("", true).total_lines, 0);
    }

    #[test]
    fn texts_with_newlines_inside_and_forced_starts() {
        // a buffer of texts (scan_texts): line 1 holds a `\n` (a stack in a JSON key), line 2 is
        // started by the envelope only; a literal inside line 1's second part selects record 0
        let text = "2024-01-01 a\nat lit\n  x\nplain\n2024-01-02 b\n";
        let starts = vec![0, 20, 24, 30];
        let start = Regex::new(r"^\d{4}-").unwrap();
        let select = Select::new(&["lit".to_string()], &[]).unwrap();
        let forced = [0u8, 0, 1, 0];
        let how = Starts { start: Some(&start), stamp: None, head_chars: 0, forced: Some(&forced) };
        let s = scan_impl(text, starts, false, &how, &select, true, true);
        assert_eq!((s.total_lines, s.rec_lines.clone(), s.wanted.clone()), (4, vec![0, 2, 3], vec![0]));
    }

    #[test]
    fn records_candidates_and_the_carried_record() {
        let text = "2024-01-01 a\n  at lit\n2024-01-02 b\n2024-01-03 lit\n  more\n";
        let all = run(text, true);
        assert_eq!(all.rec_lines, vec![0, 2, 3]);
        assert_eq!(all.wanted, vec![0, 2]); // the hit on a continuation line selects its record
        let part = run(text, false);
        assert_eq!((part.done_lines, part.rec_lines.clone(), part.wanted.clone()), (3, vec![0, 2], vec![0]));
        assert_eq!(*part.line_starts.last().unwrap() as usize, text.find("2024-01-03").unwrap());
    }
}
