//! The packs' matcher: records' texts in, events out (recognise/matcher.py is its Python surface).
//!
//! For a batch of records: one Aho-Corasick pass (overlapping) over each text finds the packs'
//! literals, so the patterns that may match it; each such pattern's logger scope is checked and
//! its regex run (captures only when it has fields). Out come the events — (record, pattern) in
//! record order — and one string column per captured field, built here (arrow.rs), so no string
//! crosses into Python one at a time.
//!
//! The events of one record (a text two patterns match, a Java and a C++ client's wording of one
//! message) come in the packs' order of their patterns; the Polars matcher this replaced gave them
//! in the order of a hash join, which nothing defined.
use aho_corasick::{AhoCorasick, AhoCorasickKind};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use regex::Regex;

use crate::arrow::{import_u8, Column, StringColumn, Strings};
use crate::{compile, group};

/// Rows of text by index (None: a null): an imported column, or a plain vector in tests.
pub trait Rows: Sync {
    fn count(&self) -> usize;
    fn row(&self, i: usize) -> Option<&str>;
}

impl Rows for Strings {
    fn count(&self) -> usize {
        self.len()
    }
    fn row(&self, i: usize) -> Option<&str> {
        self.get(i)
    }
}

impl Rows for Vec<Option<&str>> {
    fn count(&self) -> usize {
        self.len()
    }
    fn row(&self, i: usize) -> Option<&str> {
        self[i]
    }
}

/// A pattern as given; its regexes are compiled the first time it has a candidate (a run's few
/// dozen patterns, not the packs' 250: a one-line log costs no 0.1 s of compiling), and kept while
/// they are among the COMPILED_KEPT used last (a compiled pattern is ~90 KB: `patterns check` of a
/// user's pack of thousands would otherwise grow with the pack).
struct Pat {
    spec: PatSpec,
    fields: Vec<String>,
}

const COMPILED_KEPT: usize = 512;

/// The compiled patterns kept, by pattern index, and their order of use (oldest first).
#[derive(Default)]
struct Kept {
    by_index: HashMap<u32, Arc<Compiled>>,
    order: VecDeque<u32>,
}

struct Compiled {
    regex: Regex,
    /// the form for a record whose message the layout did not isolate (None: not anchored)
    boundary: Option<Regex>,
    scope: Option<Regex>,
    require_scope: bool,
    /// each field's group index in `regex` and in `boundary`
    groups: Vec<(usize, usize)>,
}

impl Pat {
    fn compile(&self) -> Result<Compiled, String> {
        let (regex, boundary, scope, require_scope, fields) = &self.spec;
        let err = |e: PyErr| e.to_string();
        let regex = compile(regex).map_err(err)?;
        let boundary = boundary.as_deref().map(compile).transpose().map_err(err)?;
        let mut groups = Vec::with_capacity(fields.len());
        for f in fields {
            let g = group_index(&regex, f).map_err(err)?;
            let b = match &boundary {
                Some(b) => group_index(b, f).map_err(err)?,
                None => g,
            };
            groups.push((g, b));
        }
        let scope = scope.as_deref().map(compile).transpose().map_err(err)?;
        Ok(Compiled { regex, boundary, scope, require_scope: *require_scope, groups })
    }
}

fn group_index(re: &Regex, name: &str) -> PyResult<usize> {
    group(re, name).ok_or_else(|| PyValueError::new_err(format!("logsleuth core: the regex has no group named {name:?}")))
}

/// The literal automaton of one case and, per literal, the patterns that require it.
struct Literals {
    ac: AhoCorasick,
    owners: Vec<Vec<u32>>,
}

impl Literals {
    fn new(lits: &[String], owners: Vec<Vec<u32>>, ci: bool) -> PyResult<Option<Literals>> {
        if lits.is_empty() {
            return Ok(None);
        }
        if owners.len() != lits.len() {
            return Err(PyValueError::new_err("logsleuth core: one owner list per literal"));
        }
        // a DFA: every text searched here holds a literal (the prefilter chose it) and the search
        // is overlapping, where the automaton's speed is all there is (measured ~2x the default)
        let ac = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::DFA))
            .ascii_case_insensitive(ci)
            .build(lits)
            .map_err(|e| PyValueError::new_err(format!("logsleuth core: literals: {e}")))?;
        Ok(Some(Literals { ac, owners }))
    }
}

/// `Matcher(patterns, cs_literals, cs_owners, ci_literals, ci_owners)`: `patterns` a list of
/// `(regex, boundary_regex or None, scope_regex or None, require_scope, fields)`; the literals
/// sorted and unique, each with the indices of the patterns that require it.
#[pyclass(module = "logsleuth._core", frozen)]
pub struct Matcher {
    pats: Vec<Pat>,
    kept: Mutex<Kept>,
    cs: Option<Literals>,
    ci: Option<Literals>,
}

type PatSpec = (String, Option<String>, Option<String>, bool, Vec<String>);

#[pymethods]
impl Matcher {
    #[new]
    fn new(
        patterns: Vec<PatSpec>,
        cs_literals: Vec<String>,
        cs_owners: Vec<Vec<u32>>,
        ci_literals: Vec<String>,
        ci_owners: Vec<Vec<u32>>,
    ) -> PyResult<Matcher> {
        let pats: Vec<Pat> =
            patterns.into_iter().map(|spec| Pat { fields: spec.4.clone(), spec }).collect();
        let n = pats.len() as u32;
        if cs_owners.iter().chain(ci_owners.iter()).flatten().any(|&p| p >= n) {
            return Err(PyValueError::new_err("logsleuth core: an owner is not a pattern"));
        }
        Ok(Matcher {
            pats,
            kept: Mutex::new(Kept::default()),
            cs: Literals::new(&cs_literals, cs_owners, false)?,
            ci: Literals::new(&ci_literals, ci_owners, true)?,
        })
    }

    /// `match_records(texts, loggers, isolated)` -> `(records, patterns, fields)`: `texts` and
    /// `loggers` Arrow C streams (`series.__arrow_c_stream__()`) of String columns (`loggers`
    /// None when no pattern has a scope), `isolated` one of the layout's "message isolated" flag
    /// per record, Boolean or UInt8, a null false (None: no record is positioned, every pattern
    /// runs its own regex). Out, as columns for `pl.Series(...)`: the events' record and pattern
    /// indices (UInt32, record order) and `[(field, column)]` of the fields some event has.
    #[pyo3(signature = (texts, loggers, isolated))]
    #[allow(clippy::type_complexity)]
    fn match_records<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        loggers: Option<&Bound<'py, PyAny>>,
        isolated: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(Column, Column, Vec<(String, Column)>)> {
        let texts = Strings::import(texts)?;
        let loggers = loggers.map(Strings::import).transpose()?;
        let isolated = isolated.map(import_u8).transpose()?;
        if loggers.as_ref().is_some_and(|l| l.len() != texts.len()) || isolated.as_ref().is_some_and(|i| i.len() != texts.len()) {
            return Err(PyValueError::new_err("match_records: columns of different lengths"));
        }
        let (events, fields) = py
            .detach(|| self.run(&texts, loggers.as_ref().map(|l| l as &dyn Rows), isolated.as_deref()))
            .map_err(PyValueError::new_err)?;
        let recs: Vec<u32> = events.iter().map(|e| e.rec).collect();
        let pats: Vec<u32> = events.iter().map(|e| e.pat).collect();
        let fields = fields.into_iter().map(|c| (c.name().to_string(), c.finish())).collect();
        Ok((Column::u32s("_rec", &recs), Column::u32s("_p", &pats), fields))
    }

    fn __len__(&self) -> usize {
        self.pats.len()
    }
}

struct Event<'t> {
    rec: u32,
    pat: u32,
    /// the captures of the pattern's fields, in its field order
    values: Vec<Option<&'t str>>,
}

impl Matcher {
    /// Pattern `p` compiled (kept among the COMPILED_KEPT used last).
    fn compiled(&self, p: u32) -> Result<Arc<Compiled>, String> {
        let mut kept = self.kept.lock().map_err(|_| "logsleuth core: the matcher's cache is poisoned".to_string())?;
        if let Some(c) = kept.by_index.get(&p).cloned() {
            kept.order.retain(|&q| q != p);
            kept.order.push_back(p);
            return Ok(c);
        }
        let c = Arc::new(self.pats[p as usize].compile()?);
        kept.by_index.insert(p, c.clone());
        kept.order.push_back(p);
        while kept.order.len() > COMPILED_KEPT {
            if let Some(old) = kept.order.pop_front() {
                kept.by_index.remove(&old);
            }
        }
        Ok(c)
    }

    /// (pattern, record) candidates: per pattern, in the order first seen, its records ascending.
    fn candidates(&self, texts: &dyn Rows) -> Vec<(u32, Vec<u32>)> {
        let n = self.pats.len();
        let mut rank: Vec<Option<usize>> = vec![None; n];
        let mut order: Vec<u32> = Vec::new();
        let mut recs: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut last: Vec<i64> = vec![-1; n]; // the last record added per pattern (one side's records ascend)
        for lits in [&self.cs, &self.ci].into_iter().flatten() {
            last.iter_mut().for_each(|x| *x = -1);
            for r in 0..texts.count() {
                let Some(t) = texts.row(r) else { continue };
                for m in lits.ac.find_overlapping_iter(t) {
                    for &p in &lits.owners[m.pattern().as_usize()] {
                        let pi = p as usize;
                        if rank[pi].is_none() {
                            rank[pi] = Some(order.len());
                            order.push(p);
                        }
                        if last[pi] != r as i64 {
                            last[pi] = r as i64;
                            recs[pi].push(r as u32);
                        }
                    }
                }
            }
        }
        order
            .into_iter()
            .map(|p| {
                let mut v = std::mem::take(&mut recs[p as usize]);
                v.sort_unstable();
                v.dedup();
                (p, v)
            })
            .collect()
    }

    fn in_scope(p: &Compiled, loggers: Option<&dyn Rows>, r: usize) -> bool {
        let Some(scope) = &p.scope else { return true };
        match loggers.and_then(|l| l.row(r)) {
            Some(name) => scope.is_match(name),
            None => !p.require_scope, // a record without a logger is not excluded, unless it must have one
        }
    }

    #[allow(clippy::type_complexity)]
    fn run<'t>(&self, texts: &'t dyn Rows, loggers: Option<&dyn Rows>, isolated: Option<&[u8]>) -> Result<(Vec<Event<'t>>, Vec<StringColumn>), String> {
        let mut events: Vec<Event<'t>> = Vec::new();
        let mut hit_order: Vec<u32> = Vec::new(); // the patterns with an event, in candidate order
        for (p, recs) in self.candidates(texts) {
            let pat = self.compiled(p)?;
            let pat = pat.as_ref();
            let before = events.len();
            let mut rlocs = pat.regex.capture_locations();
            let mut blocs = pat.boundary.as_ref().unwrap_or(&pat.regex).capture_locations();
            for r in recs {
                let ri = r as usize;
                if !Self::in_scope(pat, loggers, ri) {
                    continue;
                }
                let Some(t) = texts.row(ri) else { continue };
                let (re, boundary) = match (&pat.boundary, isolated) {
                    (Some(b), Some(iso)) if iso[ri] == 0 => (b, true),
                    _ => (&pat.regex, false),
                };
                if pat.groups.is_empty() {
                    if re.is_match(t) {
                        events.push(Event { rec: r, pat: p, values: Vec::new() });
                    }
                    continue;
                }
                let locs = if boundary { &mut blocs } else { &mut rlocs };
                if re.captures_read(locs, t).is_some() {
                    let values = pat
                        .groups
                        .iter()
                        .map(|&(g, b)| locs.get(if boundary { b } else { g }).map(|(s, e)| &t[s..e]))
                        .collect();
                    events.push(Event { rec: r, pat: p, values });
                }
            }
            if events.len() > before {
                hit_order.push(p);
            }
        }
        // record order; a record's events in the packs' order of their patterns
        events.sort_by_key(|e| (e.rec, e.pat));
        // the field columns, in the order their patterns came; per event the value or null
        let mut names: Vec<&str> = Vec::new();
        for &p in &hit_order {
            for f in &self.pats[p as usize].fields {
                if !names.contains(&f.as_str()) {
                    names.push(f);
                }
            }
        }
        // per pattern, where each of its fields goes
        let slot: Vec<Vec<usize>> = self
            .pats
            .iter()
            .map(|pat| pat.fields.iter().map(|f| names.iter().position(|n| n == f).unwrap_or(usize::MAX)).collect())
            .collect();
        // each column's bytes, reserved up front (its values are not copied as it grows)
        let mut bytes = vec![0usize; names.len()];
        for e in &events {
            for (k, v) in e.values.iter().enumerate() {
                let s = slot[e.pat as usize][k];
                if s != usize::MAX {
                    bytes[s] += v.map_or(0, str::len);
                }
            }
        }
        let mut columns: Vec<StringColumn> = names.iter().zip(&bytes).map(|(n, &b)| StringColumn::with_bytes(n, events.len(), b)).collect();
        let mut row: Vec<Option<&str>> = vec![None; names.len()];
        for e in &events {
            row.iter_mut().for_each(|v| *v = None);
            for (k, v) in e.values.iter().enumerate() {
                let s = slot[e.pat as usize][k];
                if s != usize::MAX {
                    row[s] = *v;
                }
            }
            for (c, v) in columns.iter_mut().zip(row.iter()) {
                c.push(*v);
            }
        }
        Ok((events, columns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(regex: &str, boundary: Option<&str>, scope: Option<&str>, require: bool, fields: &[&str]) -> PatSpec {
        (regex.into(), boundary.map(Into::into), scope.map(Into::into), require, fields.iter().map(|f| f.to_string()).collect())
    }

    fn matcher() -> Matcher {
        // 0: "Closed producer" with a field; 1: the same words, other pack, no field; 2: "timeout" any case,
        // scoped to loggers ending in NetworkClient; 3: anchored at the message start
        Matcher::new(
            vec![
                spec(r"Closed producer (?P<producer_id>\d+)", None, None, false, &["producer_id"]),
                spec(r"Closed producer", None, None, false, &[]),
                spec(r"(?i)timeout after (?P<ms>\d+)?ms", None, Some(r"NetworkClient$"), true, &["ms"]),
                spec(r"^Started (?P<what>\w+)", Some(r"(?:^|[\s|>\]):-])Started (?P<what>\w+)"), None, false, &["what"]),
            ],
            vec!["Closed producer".into(), "Started".into()],
            vec![vec![0, 1], vec![3]],
            vec!["timeout after".into()],
            vec![vec![2]],
        )
        .unwrap()
    }

    #[test]
    fn events_in_record_order_then_pack_order_with_their_captures() {
        let m = matcher();
        let texts: Vec<Option<&str>> = vec![Some("x Closed producer 7"), None, Some("TIMEOUT AFTER ms"), Some("Closed producer")];
        let loggers: Vec<Option<&str>> = vec![None, None, Some("o.a.k.c.NetworkClient"), None];
        let (ev, cols) = m.run(&texts, Some(&loggers), None).unwrap();
        let got: Vec<(u32, u32)> = ev.iter().map(|e| (e.rec, e.pat)).collect();
        assert_eq!(got, vec![(0, 0), (0, 1), (2, 2), (3, 1)]);
        let names: Vec<&str> = cols.iter().map(|c| c.name()).collect();
        assert_eq!(names, vec!["producer_id", "ms"]);
        assert_eq!(cols[0].values(), vec![Some("7"), None, None, None]);
        assert_eq!(cols[1].values(), vec![None, None, None, None]);
        assert_eq!(ev[0].values, vec![Some("7")]);
        assert_eq!(ev[2].values, vec![None]); // a group that took no part is null, not ""
    }

    #[test]
    fn a_scope_that_must_hold_excludes_records_without_a_logger() {
        let m = matcher();
        let texts: Vec<Option<&str>> = vec![Some("timeout after 5ms"), Some("timeout after 5ms")];
        let loggers: Vec<Option<&str>> = vec![None, Some("other.Logger")];
        assert!(m.run(&texts, Some(&loggers), None).unwrap().0.is_empty());
    }

    #[test]
    fn an_anchored_pattern_runs_its_boundary_form_where_the_message_was_not_isolated() {
        let m = matcher();
        let texts: Vec<Option<&str>> = vec![Some("host | Started pump"), Some("host | Started pump"), Some("Started pump")];
        let (ev, _) = m.run(&texts, None, Some(&[1, 0, 1])).unwrap();
        let got: Vec<(u32, Option<&str>)> = ev.iter().map(|e| (e.rec, e.values[0])).collect();
        assert_eq!(got, vec![(1, Some("pump")), (2, Some("pump"))]);
    }
}
