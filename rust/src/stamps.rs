//! `iso_stamps(ts_text, space, t_sep, comma, zone)`: the records' ISO-shaped stamps as microseconds, where
//! every stamp of the column has the one canonical shape whose reading by Polars is not in doubt.
//!
//! `records.finish` reads a layout's stamps with `timeparse.stamp_expr`: the layout's `normalize`
//! regex replacements (`T` → space after the date, `,` → `.` before the fraction), then Polars'
//! `str.to_datetime(fmt, strict=False)` (chrono's strftime parsing) — 0.44 CPU-s of a dense 1.5M-line
//! log's run. For the formats `%Y-%m-%d %H:%M:%S%.f` (`zone` false), `%Y-%m-%d %H:%M:%S%.f%#z` and
//! `%Y-%m-%dT%H:%M:%S%.f%#z` (`zone` true), with the normalize rules the layout has (`t_sep`: the T rule; `comma`: the comma
//! rule), a stamp of exactly this shape gives one datetime whatever the parser's leniencies:
//!
//! `YYYY-MM-DD` then a space (with `space`) or `T` (with `t_sep`: the T rule, or a format with `T`), `HH:MM:SS`, optionally `.` (or `,` with `comma`)
//! and 1–9 digits, then with `zone` an offset `Z`, `±HHMM` or `±HH:MM` (hours 00–23, minutes
//! 00–59), and nothing else; a year from 1970 to 9999, a real calendar day, hour 00–23, minute and
//! second 00–59 (no leap second); the fraction truncated to microseconds.
//!
//! Anything else (another shape, a leap second, a year before 1970, whitespace around) is not decided
//! here: the whole column is then left to Polars (`None`), so the result is Polars' own either way.
//! tests/test_compiled_core.py compares both on generated stamps.
use pyo3::prelude::*;

use crate::arrow::{Column, Strings};

#[inline]
fn digits(b: &[u8], at: usize, n: usize) -> Option<i64> {
    let mut v = 0i64;
    for k in 0..n {
        let c = *b.get(at + k)?;
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as i64;
    }
    Some(v)
}

/// Days from 1970-01-01 to the given civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// One stamp in the canonical shape as microseconds since the epoch (UTC with `zone`, else the
/// wall clock's), or None when it is not in that shape.
pub fn canonical(s: &str, space: bool, t_sep: bool, comma: bool, zone: bool) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    if !((space && b[10] == b' ') || (t_sep && b[10] == b'T')) {
        return None;
    }
    let (y, mo, d) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    let (h, mi, se) = (digits(b, 11, 2)?, digits(b, 14, 2)?, digits(b, 17, 2)?);
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 59 {
        return None;
    }
    let mut i = 19;
    let mut micros = 0i64;
    if i < b.len() && (b[i] == b'.' || (comma && b[i] == b',')) {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let n = i - start;
        if n == 0 || n > 9 {
            return None;
        }
        for k in 0..6 {
            micros = micros * 10 + if k < n { (b[start + k] - b'0') as i64 } else { 0 };
        }
    }
    let mut offset_s = 0i64;
    if zone {
        match b.get(i) {
            Some(b'Z') if i + 1 == b.len() => i += 1,
            Some(&sign @ (b'+' | b'-')) => {
                let oh = digits(b, i + 1, 2)?;
                let om = if b.len() == i + 5 {
                    digits(b, i + 3, 2)?
                } else if b.len() == i + 6 && b[i + 3] == b':' {
                    digits(b, i + 4, 2)?
                } else {
                    return None;
                };
                if oh > 23 || om > 59 {
                    return None;
                }
                offset_s = (oh * 3600 + om * 60) * if sign == b'-' { -1 } else { 1 };
                i = b.len();
            }
            _ => return None,
        }
    }
    if i != b.len() {
        return None;
    }
    let secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset_s;
    Some(secs * 1_000_000 + micros)
}

/// The column's stamps (`canonical`), as (microseconds, valid) columns; None when a stamp is not
/// in the canonical shape (the column is then Polars' to read). Nulls stay null.
#[pyfunction]
#[pyo3(signature = (ts_text, space, t_sep, comma, zone))]
pub fn iso_stamps(py: Python<'_>, ts_text: &Bound<'_, PyAny>, space: bool, t_sep: bool, comma: bool, zone: bool) -> PyResult<Option<(Column, Column)>> {
    let col = Strings::import(ts_text)?;
    let n = col.len();
    Ok(py.detach(|| {
        let mut values = Vec::with_capacity(n);
        let mut valid = Vec::with_capacity(n);
        for i in 0..n {
            match col.get(i) {
                None => {
                    values.push(0);
                    valid.push(false);
                }
                Some(s) => {
                    values.push(canonical(s, space, t_sep, comma, zone)?);
                    valid.push(true);
                }
            }
        }
        Some((Column::i64s("us", &values), Column::bools("valid", &valid)))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canonical_shape_and_nothing_else() {
        let base = 1_714_608_000_000_000i64; // 2024-05-02T00:00:00Z
        assert_eq!(canonical("2024-05-02 00:00:00", true, false, false, false), Some(base));
        assert_eq!(canonical("2024-05-02T00:00:00,123+0000", true, true, true, true), Some(base + 123_000));
        assert_eq!(canonical("2024-05-02 00:00:00.123456789+0530", true, false, false, true), Some(base + 123_456 - 19_800_000_000));
        assert_eq!(canonical("2024-05-02 00:00:00-08:00", true, false, false, true), Some(base + 28_800_000_000));
        assert_eq!(canonical("2024-05-02 00:00:00Z", true, false, false, true), Some(base));
        for bad in ["2024-05-02T00:00:00", "2024-05-02 00:00:00,5", "2024-02-30 00:00:00", "2024-05-02 24:00:00", "2024-05-02 23:59:60",
                    "2024-05-02 00:00:00.", "2024-05-02 00:00:00.1234567891", "1969-12-31 23:59:59", "2024-05-02  00:00:00", "2024-05-02 00:00:00 "] {
            assert_eq!(canonical(bad, true, false, false, false), None, "{bad}");
        }
        for bad in ["2024-05-02 00:00:00", "2024-05-02 00:00:00+2400", "2024-05-02 00:00:00+00:0", "2024-05-02 00:00:00+000", "2024-05-02 00:00:00Zx"] {
            assert_eq!(canonical(bad, true, true, true, true), None, "{bad}");
        }
        assert_eq!(canonical("2024-02-29 12:00:00", true, false, false, false), Some(1_709_208_000_000_000));
        assert_eq!(canonical("2024-05-02 00:00:00Z", false, true, false, true), None); // a format with T: no space
        assert_eq!(canonical("2024-05-02T00:00:00.1+00:00", false, true, false, true), Some(base + 100_000));
    }
}
