//! The `events` command's NDJSON and grep lines, written from the events' columns (Arrow's C stream
//! interface, arrow.rs) straight to the output's file descriptor in one pass: no Polars expression
//! per escape, no Python string per line.
//!
//! Byte for byte what the Python writers they replace wrote (render/events.py):
//! * a JSON string as `json.dumps(s, ensure_ascii=False)` writes it: `"` `\` and the C0 controls
//!   escaped (`\n \r \t \b \f` by name, the others as `\u00XX`), everything else as it is;
//! * on a terminal, also what `safe.json_visible` escapes (DEL, C1, bidi, zero-width, line and
//!   paragraph separators, BOM, interlinear annotation) as `\uXXXX`;
//! * a float as Python's `repr` (`json.dumps` of a float): shortest round-trip digits, positional
//!   for exponents -4..=15, else `1e-05` / `1.5e+16`; `NaN`, `Infinity`, `-Infinity`;
//! * a grep line's text on a terminal as `safe.visible` shows it (`\xNN` up to U+00FF, `\uXXXX`
//!   above, a newline as `\n`; tabs kept).
use std::io::Write;
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::arrow::{import_any, AnyColumn, Strings, Values};

/// Output is handed to the descriptor in pieces of about this size.
const FLUSH: usize = 1 << 20;

/// Is `c` (at or above U+007F) one `safe._UNSAFE` names? (Surrogates never occur in `&str`.)
#[inline]
fn unsafe_wide(c: u32) -> bool {
    matches!(c, 0x7f..=0x9f | 0x61c | 0x180e | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x2069 | 0xfeff | 0xfff9..=0xfffb)
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[inline]
fn push_u4(out: &mut Vec<u8>, c: u32) {
    out.extend_from_slice(&[b'\\', b'u', HEX[(c >> 12) as usize & 15], HEX[(c >> 8) as usize & 15], HEX[(c >> 4) as usize & 15], HEX[c as usize & 15]]);
}

/// The UTF-8 character starting at `b[i]` (a lead byte at or above 0x80): its code point and length.
#[inline]
fn decode(b: &[u8], i: usize) -> (u32, usize) {
    let x = b[i] as u32;
    if x < 0xe0 {
        (((x & 0x1f) << 6) | (b[i + 1] as u32 & 0x3f), 2)
    } else if x < 0xf0 {
        (((x & 0x0f) << 12) | ((b[i + 1] as u32 & 0x3f) << 6) | (b[i + 2] as u32 & 0x3f), 3)
    } else {
        (((x & 0x07) << 18) | ((b[i + 1] as u32 & 0x3f) << 12) | ((b[i + 2] as u32 & 0x3f) << 6) | (b[i + 3] as u32 & 0x3f), 4)
    }
}

/// Are none of these eight bytes a control character, `"` or a backslash (nor, on a terminal, at or
/// above 0x7f)? Word-at-a-time tests: each is exact for "is there any such byte".
#[inline]
fn plain8(w: u64, terminal: bool) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH; // a zero byte
    let below_20 = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    let mut hit = below_20 | zero(w ^ (ONES * b'"' as u64)) | zero(w ^ (ONES * b'\\' as u64));
    if terminal {
        hit |= (w & HIGH) | zero(w ^ (ONES * 0x7f));
    }
    hit == 0
}

/// `s` as a JSON string literal (`json.dumps(s, ensure_ascii=False)`; `terminal`: then
/// `safe.json_visible`).
pub fn json_string(out: &mut Vec<u8>, s: &str, terminal: bool) {
    let b = s.as_bytes();
    out.push(b'"');
    let (mut run, mut i) = (0, 0);
    while i < b.len() {
        // eight bytes at a time while none of them needs a look (most text)
        while i + 8 <= b.len() && plain8(u64::from_le_bytes(b[i..i + 8].try_into().unwrap()), terminal) {
            i += 8;
        }
        if i >= b.len() {
            break;
        }
        let x = b[i];
        if x >= 0x20 && x != b'"' && x != b'\\' && (x < 0x7f || !terminal) {
            i += 1;
            continue;
        }
        if x >= 0x7f {
            let (c, n) = if x == 0x7f { (0x7f, 1) } else { decode(b, i) };
            if unsafe_wide(c) {
                out.extend_from_slice(&b[run..i]);
                push_u4(out, c);
                run = i + n;
            }
            i += n;
            continue;
        }
        out.extend_from_slice(&b[run..i]);
        match x {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => push_u4(out, x as u32),
        }
        i += 1;
        run = i;
    }
    out.extend_from_slice(&b[run..]);
    out.push(b'"');
}

/// `s` as `safe.visible` shows it (`keep_newlines=False`).
pub fn visible(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    let (mut run, mut i) = (0, 0);
    while i < b.len() {
        let x = b[i];
        if (0x20..0x7f).contains(&x) || x == b'\t' {
            i += 1;
            continue;
        }
        let (c, n) = if x < 0x80 { (x as u32, 1) } else { decode(b, i) };
        if c < 0x20 || unsafe_wide(c) {
            out.extend_from_slice(&b[run..i]);
            if c == 0x0a {
                out.extend_from_slice(b"\\n");
            } else if c <= 0xff {
                out.extend_from_slice(&[b'\\', b'x', HEX[(c >> 4) as usize], HEX[c as usize & 15]]);
            } else {
                push_u4(out, c);
            }
            run = i + n;
        }
        i += n;
    }
    out.extend_from_slice(&b[run..]);
}

pub fn int(out: &mut Vec<u8>, v: i64) {
    let mut buf = [0u8; 20];
    let mut k = buf.len();
    let mut u = v.unsigned_abs();
    loop {
        k -= 1;
        buf[k] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[k..]);
}

/// `v` as Python's `repr(v)` (what `json.dumps` writes for a float).
pub fn float(out: &mut Vec<u8>, v: f64) {
    if v.is_nan() {
        return out.extend_from_slice(b"NaN");
    }
    if v.is_infinite() {
        return out.extend_from_slice(if v > 0.0 { b"Infinity" } else { b"-Infinity" });
    }
    if v == 0.0 {
        return out.extend_from_slice(if v.is_sign_negative() { b"-0.0" } else { b"0.0" });
    }
    // Rust's `{:e}` is the shortest representation that reads back as `v` (as Python's repr):
    // "-1.2345e-7"; its digits and exponent, laid out as Python lays them out
    let e = format!("{:e}", v);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let digits: Vec<u8> = mant.bytes().filter(|c| *c != b'.').collect();
    let n = digits.len() as i32;
    let decpt = exp + 1; // digits[..decpt] are the integer part
    if neg {
        out.push(b'-');
    }
    if -4 < decpt && decpt <= 16 {
        if decpt <= 0 {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-decpt) as usize));
            out.extend_from_slice(&digits);
        } else if decpt >= n {
            out.extend_from_slice(&digits);
            out.extend(std::iter::repeat_n(b'0', (decpt - n) as usize));
            out.extend_from_slice(b".0");
        } else {
            out.extend_from_slice(&digits[..decpt as usize]);
            out.push(b'.');
            out.extend_from_slice(&digits[decpt as usize..]);
        }
    } else {
        out.push(digits[0]);
        if n > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.push(b'0');
        }
        int(out, a as i64);
    }
}

/// One column of the output.
enum Col {
    Str(Strings),
    Num(Values),
}

/// What a field is written as.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// a JSON string (escaped)
    Json,
    /// JSON text made by the caller, written as it is (but for the terminal's escapes)
    Verbatim,
    /// grep: text as it is (on a terminal, as `safe.visible` shows it)
    Text,
    /// grep: text as it is, always (the event name: the pack's, as before)
    Plain,
}

struct Field {
    prefix: Vec<u8>,
    col: Col,
    kind: Kind,
    /// a null leaves the field (and its prefix) out; else it is written as `null` (JSON) or nothing
    optional: bool,
}

fn rows(col: &Col) -> usize {
    match col {
        Col::Str(s) => s.len(),
        Col::Num(v) => v.valid.len(),
    }
}

/// Where the lines go: a file descriptor (not closed here), or bytes handed back.
struct Sink {
    fd: Option<ManuallyDrop<std::fs::File>>,
    buf: Vec<u8>,
}

fn os_error(e: std::io::Error) -> PyErr {
    match e.raw_os_error() {
        Some(code) => {
            // the text Python's os.strerror gives (Rust's adds " (os error N)")
            let text = e.to_string();
            let text = text.strip_suffix(&format!(" (os error {code})")).unwrap_or(&text).to_string();
            PyOSError::new_err((code, text))
        }
        None => PyOSError::new_err(e.to_string()),
    }
}

impl Sink {
    fn new(fd: i32) -> Sink {
        let fd = (fd >= 0).then(|| ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) }));
        Sink { fd, buf: Vec::with_capacity(FLUSH + (FLUSH >> 2)) }
    }

    /// The buffer to the descriptor (`always`, or once it holds `FLUSH` bytes). A write a signal
    /// interrupted (EINTR, or a partial write: the reader of a full pipe is not reading) runs
    /// Python's handlers before it blocks again, as Python's own buffered writes do: Ctrl-C and
    /// SIGTERM still end the run.
    fn flush(&mut self, always: bool) -> PyResult<()> {
        if let Some(f) = self.fd.as_mut() {
            if always || self.buf.len() >= FLUSH {
                let mut done = 0;
                while done < self.buf.len() {
                    match f.write(&self.buf[done..]) {
                        Ok(0) => return Err(os_error(std::io::ErrorKind::WriteZero.into())),
                        Ok(n) => {
                            done += n;
                            if done < self.buf.len() {
                                Python::attach(|py| py.check_signals())?;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Python::attach(|py| py.check_signals())?,
                        Err(e) => return Err(os_error(e)),
                    }
                }
                self.buf.clear();
            }
        }
        Ok(())
    }
}

fn import(fields: Vec<(String, Bound<'_, PyAny>, char, bool)>) -> PyResult<Vec<Field>> {
    let mut out = Vec::with_capacity(fields.len());
    for (prefix, capsule, kind, optional) in fields {
        let kind = match kind {
            'j' => Kind::Json,
            'v' => Kind::Verbatim,
            't' => Kind::Text,
            'p' => Kind::Plain,
            other => return Err(PyValueError::new_err(format!("write_lines: unknown kind {other:?}"))),
        };
        let col = match import_any(&capsule)? {
            AnyColumn::Strings(s) => Col::Str(s),
            AnyColumn::Values(v) if kind == Kind::Json => Col::Num(v),
            AnyColumn::Values(_) => return Err(PyValueError::new_err("write_lines: a text field must be a String column")),
        };
        out.push(Field { prefix: prefix.into_bytes(), col, kind, optional });
    }
    Ok(out)
}

/// `write_lines(fd, fields, end, terminal)`: one line per row of the fields' columns, each field
/// its `prefix` then its value, then `end`; to `fd`, or returned as bytes when `fd` is -1. Each
/// field is `(prefix, column's arrow_array_stream capsule, kind, optional)`: kind `j` a JSON
/// value (a String column as a JSON string, Int64, Float64 or Boolean as JSON writes them, a null
/// as `null`), `v` JSON text as it is, `t` text as it is (for grep; on a terminal made visible),
/// `p` text as it is always; `optional`: a null leaves the field out, prefix and all.
#[pyfunction]
#[pyo3(signature = (fd, fields, end, terminal))]
pub fn write_lines<'py>(py: Python<'py>, fd: i32, fields: Vec<(String, Bound<'py, PyAny>, char, bool)>, end: String, terminal: bool) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let fields = import(fields)?;
    let n = fields.first().map(|f| rows(&f.col)).unwrap_or(0);
    if fields.iter().any(|f| rows(&f.col) != n) {
        return Err(PyValueError::new_err("write_lines: the columns differ in length"));
    }
    let mut sink = Sink::new(fd);
    py.detach(|| -> PyResult<()> {
        let end = end.as_bytes();
        for i in 0..n {
            let out = &mut sink.buf;
            for f in &fields {
                match &f.col {
                    Col::Str(s) => match s.get(i) {
                        Some(v) => {
                            out.extend_from_slice(&f.prefix);
                            match f.kind {
                                Kind::Json => json_string(out, v, terminal),
                                Kind::Verbatim if terminal => json_visible(out, v),
                                Kind::Text if terminal => visible(out, v),
                                _ => out.extend_from_slice(v.as_bytes()),
                            }
                        }
                        None if f.optional => {}
                        None => {
                            out.extend_from_slice(&f.prefix);
                            if matches!(f.kind, Kind::Json | Kind::Verbatim) {
                                out.extend_from_slice(b"null");
                            }
                        }
                    },
                    Col::Num(v) => {
                        if !v.valid[i] {
                            if !f.optional {
                                out.extend_from_slice(&f.prefix);
                                out.extend_from_slice(b"null");
                            }
                            continue;
                        }
                        out.extend_from_slice(&f.prefix);
                        let x = v.bits[i];
                        match v.format.as_slice() {
                            b"l" => int(out, x as i64),
                            b"g" => float(out, f64::from_bits(x)),
                            _ => out.extend_from_slice(if x != 0 { b"true" } else { b"false" }),
                        }
                    }
                }
            }
            out.extend_from_slice(end);
            sink.flush(false)?;
        }
        sink.flush(true)
    })?;
    Ok(if fd < 0 { Some(PyBytes::new(py, &sink.buf)) } else { None })
}

/// JSON text made by the caller, with `safe.json_visible`'s escapes.
fn json_visible(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    let (mut run, mut i) = (0, 0);
    while i < b.len() {
        if b[i] < 0x7f {
            i += 1;
            continue;
        }
        let (c, n) = if b[i] == 0x7f { (0x7f, 1) } else { decode(b, i) };
        if unsafe_wide(c) {
            out.extend_from_slice(&b[run..i]);
            push_u4(out, c);
            run = i + n;
        }
        i += n;
    }
    out.extend_from_slice(&b[run..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(s: &str, t: bool) -> String {
        let mut o = Vec::new();
        json_string(&mut o, s, t);
        String::from_utf8(o).unwrap()
    }

    fn fl(v: f64) -> String {
        let mut o = Vec::new();
        float(&mut o, v);
        String::from_utf8(o).unwrap()
    }

    fn vis(s: &str) -> String {
        let mut o = Vec::new();
        visible(&mut o, s);
        String::from_utf8(o).unwrap()
    }

    #[test]
    fn json_strings_as_json_dumps() {
        assert_eq!(js("a\"b\\c\n\r\t\x08\x0c\x00\x1f\x7f\u{2028}é\u{1F600}", false), "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0000\\u001f\x7f\u{2028}é\u{1F600}\"");
        assert_eq!(js("\x7f\u{85}\u{2028}\u{202e}\u{feff}\u{fffb}\u{fffc}é\u{1F600}", true), "\"\\u007f\\u0085\\u2028\\u202e\\ufeff\\ufffb\u{fffc}é\u{1F600}\"");
        assert_eq!(js("", false), "\"\"");
    }

    /// json_string against a character-by-character reference, with each kind of character at
    /// every position of a string longer than two words (the eight-byte steps and the rest).
    #[test]
    fn json_strings_word_at_a_time_as_character_by_character() {
        fn reference(s: &str, terminal: bool) -> String {
            let mut o = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => o.push_str("\\\""),
                    '\\' => o.push_str("\\\\"),
                    '\n' => o.push_str("\\n"),
                    '\r' => o.push_str("\\r"),
                    '\t' => o.push_str("\\t"),
                    '\x08' => o.push_str("\\b"),
                    '\x0c' => o.push_str("\\f"),
                    c if (c as u32) < 0x20 || (terminal && unsafe_wide(c as u32)) => o.push_str(&format!("\\u{:04x}", c as u32)),
                    c => o.push(c),
                }
            }
            o.push('"');
            o
        }
        let specials = ['"', '\\', '\n', '\x00', '\x1f', ' ', '\x7f', '\u{85}', 'é', '\u{2028}', '\u{feff}', '\u{1F600}', '~', '!'];
        for terminal in [false, true] {
            for len in [0usize, 1, 7, 8, 9, 16, 23] {
                for at in 0..len.max(1) {
                    for &c in &specials {
                        let mut s: String = "abcdefghijklmnopqrstuvw".chars().take(len).collect();
                        if len > 0 {
                            s.replace_range(s.char_indices().nth(at).map(|(i, ch)| i..i + ch.len_utf8()).unwrap(), &c.to_string());
                        }
                        assert_eq!(js(&s, terminal), reference(&s, terminal), "{s:?} terminal={terminal}");
                    }
                }
            }
        }
    }

    #[test]
    fn floats_as_python_repr() {
        for (v, s) in [
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1e-7, "1e-07"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (0.1, "0.1"),
            (120018.0, "120018.0"),
            (1.5e300, "1.5e+300"),
            (-2.5e-7, "-2.5e-07"),
            (0.30000000000000004, "0.30000000000000004"),
            (123456789.12345679, "123456789.12345679"),
            (1.2345678901234567e19, "1.2345678901234567e+19"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(fl(v), s, "{v:e}");
        }
    }

    #[test]
    fn visible_as_safe_visible() {
        assert_eq!(vis("a\tb\nc\x1b[2J\x07\u{9b}\u{202e}\u{200b}é日"), "a\tb\\nc\\x1b[2J\\x07\\x9b\\u202e\\u200bé日");
    }

    #[test]
    fn ints() {
        for v in [0i64, 7, -7, i64::MAX, i64::MIN, 1234567890] {
            let mut o = Vec::new();
            int(&mut o, v);
            assert_eq!(String::from_utf8(o).unwrap(), v.to_string());
        }
    }
}
