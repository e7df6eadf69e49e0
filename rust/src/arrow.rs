//! Arrow's C data interface, the two ends the core needs (no arrow crate: its build is heavier
//! than the whole core).
//!
//! In: a Polars String column, through the PyCapsule protocol (`series.__arrow_c_stream__()`),
//! read as borrowed `&str` rows (Polars exports `string_view`; `large_string` and `string` are
//! read too). Out: a large-string column (`U`) built here, handed to Polars the same way
//! (`pl.Series(obj)` on an object with `__arrow_c_stream__`), so no string crosses into Python
//! one by one.
//!
//! Specification: https://arrow.apache.org/docs/format/CDataInterface.html and
//! https://arrow.apache.org/docs/format/CStreamInterface.html
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

#[repr(C)]
pub struct ArrowSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut ArrowSchema,
    dictionary: *mut ArrowSchema,
    release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    private_data: *mut c_void,
}

#[repr(C)]
pub struct ArrowArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut ArrowArray,
    dictionary: *mut ArrowArray,
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
}

#[repr(C)]
pub struct ArrowArrayStream {
    get_schema: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int>,
    get_next: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int>,
    get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    private_data: *mut c_void,
}

fn empty_schema() -> ArrowSchema {
    ArrowSchema {
        format: ptr::null(),
        name: ptr::null(),
        metadata: ptr::null(),
        flags: 0,
        n_children: 0,
        children: ptr::null_mut(),
        dictionary: ptr::null_mut(),
        release: None,
        private_data: ptr::null_mut(),
    }
}

fn empty_array() -> ArrowArray {
    ArrowArray {
        length: 0,
        null_count: 0,
        offset: 0,
        n_buffers: 0,
        n_children: 0,
        buffers: ptr::null_mut(),
        children: ptr::null_mut(),
        dictionary: ptr::null_mut(),
        release: None,
        private_data: ptr::null_mut(),
    }
}

// ------------------------------------------------------------------------------------------------
// In: the rows of a string column

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    View,
    Large,
    Small,
}

/// One imported chunk (its release called on drop).
struct Chunk {
    array: ArrowArray,
}

impl Drop for Chunk {
    fn drop(&mut self) {
        if let Some(r) = self.array.release {
            unsafe { r(&mut self.array) }
        }
    }
}

/// A string column's rows, borrowed from the exporter's buffers for as long as this lives.
pub struct Strings {
    kind: Kind,
    chunks: Vec<Chunk>,
    /// (chunk, row in chunk) of each row: rows are addressed by their index in the whole column
    starts: Vec<usize>,
    len: usize,
}

// SAFETY: the imported arrays are immutable while held (the exporter's release is called once, on
// drop), so their rows may be read from any thread.
unsafe impl Send for Strings {}
unsafe impl Sync for Strings {}

unsafe fn buffer<T>(a: &ArrowArray, i: usize) -> *const T {
    *a.buffers.add(i) as *const T
}

/// The format and the arrays of the stream in `capsule` (an `arrow_array_stream` PyCapsule).
fn import_stream(capsule: &Bound<'_, PyAny>) -> PyResult<(Vec<u8>, Vec<Chunk>)> {
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| PyValueError::new_err("expected an arrow_array_stream capsule"))?;
    let stream = capsule.pointer_checked(Some(c"arrow_array_stream"))?.as_ptr() as *mut ArrowArrayStream;
    unsafe {
        let mut schema = empty_schema();
        let get_schema = (*stream).get_schema.ok_or_else(|| PyValueError::new_err("arrow stream: released"))?;
        if get_schema(stream, &mut schema) != 0 {
            return Err(PyValueError::new_err("arrow stream: get_schema failed"));
        }
        let format = CStr::from_ptr(schema.format).to_bytes().to_vec();
        if let Some(r) = schema.release {
            r(&mut schema);
        }
        let get_next = (*stream).get_next.ok_or_else(|| PyValueError::new_err("arrow stream: released"))?;
        let mut chunks = Vec::new();
        loop {
            let mut array = empty_array();
            if get_next(stream, &mut array) != 0 {
                return Err(PyValueError::new_err("arrow stream: get_next failed"));
            }
            if array.release.is_none() {
                break;
            }
            chunks.push(Chunk { array });
        }
        // (the stream itself is released when the capsule is collected: its destructor)
        Ok((format, chunks))
    }
}

/// A UInt8 or Boolean column's values (a null is 0), from its Arrow C stream.
pub fn import_u8(capsule: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let (format, chunks) = import_stream(capsule)?;
    let mut out = Vec::new();
    for c in &chunks {
        let a = &c.array;
        let (n, o) = (a.length as usize, a.offset as usize);
        unsafe {
            let validity: *const u8 = buffer(a, 0);
            let valid = |j: usize| validity.is_null() || (*validity.add(j / 8) >> (j % 8)) & 1 == 1;
            match format.as_slice() {
                b"C" => {
                    let v: *const u8 = buffer(a, 1);
                    out.extend((o..o + n).map(|j| if valid(j) { *v.add(j) } else { 0 }));
                }
                b"b" => {
                    let v: *const u8 = buffer(a, 1);
                    out.extend((o..o + n).map(|j| (valid(j) && (*v.add(j / 8) >> (j % 8)) & 1 == 1) as u8));
                }
                other => {
                    return Err(PyValueError::new_err(format!(
                        "arrow stream: a UInt8 or Boolean column was expected, got format {:?}",
                        String::from_utf8_lossy(other)
                    )))
                }
            }
        }
    }
    Ok(out)
}

/// An Int64 column's values (no nulls), from its Arrow C stream.
pub fn import_i64(capsule: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let (format, chunks) = import_stream(capsule)?;
    if format != b"l" {
        return Err(PyValueError::new_err(format!("arrow stream: an Int64 column was expected, got format {:?}", String::from_utf8_lossy(&format))));
    }
    let mut out = Vec::new();
    for c in &chunks {
        let a = &c.array;
        if a.null_count != 0 {
            return Err(PyValueError::new_err("arrow stream: an Int64 column without nulls was expected"));
        }
        unsafe {
            let v: *const i64 = buffer(a, 1);
            out.extend_from_slice(std::slice::from_raw_parts(v.add(a.offset as usize), a.length as usize));
        }
    }
    Ok(out)
}

/// A numeric or Boolean column's values and their validity, from its Arrow C stream: Int64 (`l`)
/// and Float64 (`g`) values as their 8 bytes (`i64::from_le_bytes` / `f64::from_bits` them), a
/// Boolean (`b`) as 0 or 1. Returns the format too.
pub struct Values {
    pub format: Vec<u8>,
    pub bits: Vec<u64>,
    pub valid: Vec<bool>,
}

fn values_of(format: Vec<u8>, chunks: Vec<Chunk>) -> PyResult<Values> {
    if !matches!(format.as_slice(), b"l" | b"g" | b"b") {
        return Err(PyValueError::new_err(format!(
            "arrow stream: an Int64, Float64 or Boolean column was expected, got format {:?}",
            String::from_utf8_lossy(&format)
        )));
    }
    let (mut bits, mut valid) = (Vec::new(), Vec::new());
    for c in &chunks {
        let a = &c.array;
        let (n, o) = (a.length as usize, a.offset as usize);
        unsafe {
            let validity: *const u8 = buffer(a, 0);
            valid.extend((o..o + n).map(|j| validity.is_null() || (*validity.add(j / 8) >> (j % 8)) & 1 == 1));
            if format == b"b" {
                let v: *const u8 = buffer(a, 1);
                bits.extend((o..o + n).map(|j| ((*v.add(j / 8) >> (j % 8)) & 1) as u64));
            } else {
                let v: *const u64 = buffer(a, 1);
                bits.extend_from_slice(std::slice::from_raw_parts(v.add(o), n));
            }
        }
    }
    Ok(Values { format, bits, valid })
}

/// A column of either kind.
pub enum AnyColumn {
    Strings(Strings),
    Values(Values),
}

/// A String, Int64, Float64 or Boolean column, from its Arrow C stream.
pub fn import_any(capsule: &Bound<'_, PyAny>) -> PyResult<AnyColumn> {
    let (format, chunks) = import_stream(capsule)?;
    if matches!(format.as_slice(), b"vu" | b"U" | b"u") {
        Ok(AnyColumn::Strings(Strings::of(format, chunks)?))
    } else {
        Ok(AnyColumn::Values(values_of(format, chunks)?))
    }
}

impl Strings {
    /// The rows of the stream in `capsule` (an `arrow_array_stream` PyCapsule of a String column).
    pub fn import(capsule: &Bound<'_, PyAny>) -> PyResult<Strings> {
        let (format, chunks) = import_stream(capsule)?;
        Strings::of(format, chunks)
    }

    fn of(format: Vec<u8>, chunks: Vec<Chunk>) -> PyResult<Strings> {
        {
            let kind = match format.as_slice() {
                b"vu" => Kind::View,
                b"U" => Kind::Large,
                b"u" => Kind::Small,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "arrow stream: a string column was expected, got format {:?}",
                        String::from_utf8_lossy(other)
                    )))
                }
            };
            let mut starts = Vec::with_capacity(chunks.len());
            let mut len = 0usize;
            for c in &chunks {
                starts.push(len);
                len += c.array.length as usize;
            }
            Ok(Strings { kind, chunks, starts, len })
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Row `i` (None when null). The exporter's UTF-8 is trusted: Polars strings are valid UTF-8.
    pub fn get(&self, i: usize) -> Option<&str> {
        let c = match self.starts.binary_search(&i) {
            Ok(mut c) => {
                while c + 1 < self.starts.len() && self.starts[c + 1] == i {
                    c += 1; // (empty chunks share a start)
                }
                c
            }
            Err(c) => c - 1,
        };
        let a = &self.chunks[c].array;
        let j = (i - self.starts[c]) as i64 + a.offset;
        unsafe {
            let validity: *const u8 = buffer(a, 0);
            if !validity.is_null() && (*validity.add((j / 8) as usize) >> (j % 8)) & 1 == 0 {
                return None;
            }
            let bytes: &[u8] = match self.kind {
                Kind::View => {
                    let view: *const u8 = buffer::<u8>(a, 1).add(16 * j as usize);
                    let n = u32::from_le_bytes(*(view as *const [u8; 4])) as usize;
                    if n <= 12 {
                        std::slice::from_raw_parts(view.add(4), n)
                    } else {
                        let b = u32::from_le_bytes(*(view.add(8) as *const [u8; 4])) as usize;
                        let o = u32::from_le_bytes(*(view.add(12) as *const [u8; 4])) as usize;
                        std::slice::from_raw_parts(buffer::<u8>(a, 2 + b).add(o), n)
                    }
                }
                Kind::Large => {
                    let off: *const i64 = buffer(a, 1);
                    let (s, e) = (*off.add(j as usize) as usize, *off.add(j as usize + 1) as usize);
                    std::slice::from_raw_parts(buffer::<u8>(a, 2).add(s), e - s)
                }
                Kind::Small => {
                    let off: *const i32 = buffer(a, 1);
                    let (s, e) = (*off.add(j as usize) as usize, *off.add(j as usize + 1) as usize);
                    std::slice::from_raw_parts(buffer::<u8>(a, 2).add(s), e - s)
                }
            };
            Some(std::str::from_utf8_unchecked(bytes))
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Out: columns built here

/// A column built here, handed to Polars once (`pl.Series(column)`: the object speaks
/// `__arrow_c_stream__`): a string-view (`vu`) or large-string (`U`), UInt32 (`I`), Int64 (`l`) or
/// Boolean (`b`) array.
#[pyclass(module = "logsleuth._core")]
pub struct Column {
    format: &'static CStr,
    length: i64,
    nulls: i64,
    /// validity (empty: no nulls), then the format's buffers
    buffers: Vec<Vec<u8>>,
    name: CString,
    taken: bool,
}

impl Column {
    pub fn i64s(name: &str, values: &[i64]) -> Column {
        let mut data = Vec::with_capacity(values.len() * 8);
        for v in values {
            data.extend_from_slice(&v.to_le_bytes());
        }
        Column { format: c"l", length: values.len() as i64, nulls: 0, buffers: vec![Vec::new(), data], name: cname(name), taken: false }
    }

    pub fn bools(name: &str, values: &[bool]) -> Column {
        let mut data = vec![0u8; values.len().div_ceil(8)];
        for (i, &v) in values.iter().enumerate() {
            if v {
                data[i / 8] |= 1 << (i % 8);
            }
        }
        Column { format: c"b", length: values.len() as i64, nulls: 0, buffers: vec![Vec::new(), data], name: cname(name), taken: false }
    }

    pub fn u32s(name: &str, values: &[u32]) -> Column {
        let mut data = Vec::with_capacity(values.len() * 4);
        for v in values {
            data.extend_from_slice(&v.to_le_bytes());
        }
        Column { format: c"I", length: values.len() as i64, nulls: 0, buffers: vec![Vec::new(), data], name: cname(name), taken: false }
    }
}

fn cname(name: &str) -> CString {
    CString::new(name.replace('\0', "")).unwrap_or_default()
}

/// A large-string column under construction: `push` the rows, then `finish`.
pub struct StringColumn {
    data: Vec<u8>,
    offsets: Vec<u8>,
    validity: Vec<u8>,
    rows: usize,
    nulls: i64,
    name: String,
}

impl StringColumn {
    pub fn new(name: &str, capacity: usize) -> StringColumn {
        StringColumn::with_bytes(name, capacity, 0)
    }

    /// With room for `bytes` of values reserved up front: a bound the caller knows (the records'
    /// bytes), so the values are not copied as the buffer grows. Room reserved and not written is
    /// address space only (the pages are not touched).
    pub fn with_bytes(name: &str, capacity: usize, bytes: usize) -> StringColumn {
        let mut offsets = Vec::with_capacity((capacity + 1) * 8);
        offsets.extend_from_slice(&0i64.to_le_bytes());
        StringColumn { data: Vec::with_capacity(bytes), offsets, validity: Vec::with_capacity(capacity / 8 + 1), rows: 0, nulls: 0, name: name.to_string() }
    }

    pub fn push(&mut self, value: Option<&str>) {
        let i = self.rows;
        if i.is_multiple_of(8) {
            self.validity.push(0);
        }
        match value {
            Some(v) => {
                self.data.extend_from_slice(v.as_bytes());
                *self.validity.last_mut().unwrap() |= 1 << (i % 8);
            }
            None => self.nulls += 1,
        }
        self.offsets.extend_from_slice(&(self.data.len() as i64).to_le_bytes());
        self.rows += 1;
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    #[cfg(test)]
    pub fn values(&self) -> Vec<Option<&str>> {
        let off = |k: usize| i64::from_le_bytes(self.offsets[8 * k..8 * k + 8].try_into().unwrap()) as usize;
        (0..self.rows)
            .map(|i| ((self.validity[i / 8] >> (i % 8)) & 1 == 1).then(|| std::str::from_utf8(&self.data[off(i)..off(i + 1)]).unwrap()))
            .collect()
    }

    /// The column as a `string_view` array (`vu`), Polars' own string layout, so the import is not a
    /// conversion: 16 bytes a row (the string itself when it is at most 12 bytes, else its length,
    /// first 4 bytes and place in the one data buffer); `large_string` when the data passes 4 GB.
    pub fn finish(self) -> Column {
        let validity = if self.nulls > 0 { self.validity } else { Vec::new() };
        let off = |k: usize| i64::from_le_bytes(self.offsets[8 * k..8 * k + 8].try_into().unwrap()) as usize;
        if self.data.len() > u32::MAX as usize {
            return Column { format: c"U", length: self.rows as i64, nulls: self.nulls, buffers: vec![validity, self.offsets, self.data], name: cname(&self.name), taken: false };
        }
        let mut views = vec![0u8; self.rows * 16];
        for i in 0..self.rows {
            let (s, e) = (off(i), off(i + 1));
            let v = &mut views[16 * i..16 * i + 16];
            let n = e - s;
            v[..4].copy_from_slice(&(n as u32).to_le_bytes());
            if n <= 12 {
                v[4..4 + n].copy_from_slice(&self.data[s..e]);
            } else {
                v[4..8].copy_from_slice(&self.data[s..s + 4]);
                // v[8..12]: buffer index 0
                v[12..16].copy_from_slice(&(s as u32).to_le_bytes());
            }
        }
        let sizes = (self.data.len() as i64).to_le_bytes().to_vec();
        Column {
            format: c"vu",
            length: self.rows as i64,
            nulls: self.nulls,
            buffers: vec![validity, views, self.data, sizes],
            name: cname(&self.name),
            taken: false,
        }
    }
}

/// What an exported array owns until Polars releases it.
struct Owned {
    buffers: Vec<Vec<u8>>,
    pointers: Vec<*const c_void>,
}

unsafe extern "C" fn release_array(a: *mut ArrowArray) {
    if a.is_null() || (*a).release.is_none() {
        return;
    }
    drop(Box::from_raw((*a).private_data as *mut Owned));
    (*a).release = None;
}

unsafe extern "C" fn release_schema(s: *mut ArrowSchema) {
    if s.is_null() || (*s).release.is_none() {
        return;
    }
    drop(CString::from_raw((*s).name as *mut c_char));
    (*s).release = None;
}

/// The stream's state: the one array (None once handed over), its format and name.
struct StreamState {
    buffers: Option<Vec<Vec<u8>>>,
    format: &'static CStr,
    length: i64,
    nulls: i64,
    name: CString,
}

unsafe extern "C" fn stream_schema(st: *mut ArrowArrayStream, out: *mut ArrowSchema) -> c_int {
    let state = &*((*st).private_data as *const StreamState);
    *out = empty_schema();
    (*out).format = state.format.as_ptr();
    (*out).name = state.name.clone().into_raw();
    (*out).flags = 2; // ARROW_FLAG_NULLABLE
    (*out).release = Some(release_schema);
    0
}

unsafe extern "C" fn stream_next(st: *mut ArrowArrayStream, out: *mut ArrowArray) -> c_int {
    let state = &mut *((*st).private_data as *mut StreamState);
    *out = empty_array();
    if let Some(buffers) = state.buffers.take() {
        // only the validity may be null (no nulls); an empty buffer of another kind is a dangling,
        // non-null pointer. (Vec<u8> comes from malloc, 16-byte aligned: offsets and values are read
        // as i64/u32 in place.)
        let pointers = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| if i == 0 && b.is_empty() { ptr::null() } else { b.as_ptr() as *const c_void })
            .collect();
        let mut owned = Box::new(Owned { buffers, pointers });
        (*out).length = state.length;
        (*out).null_count = state.nulls;
        (*out).n_buffers = owned.buffers.len() as i64;
        (*out).buffers = owned.pointers.as_mut_ptr();
        (*out).release = Some(release_array);
        (*out).private_data = Box::into_raw(owned) as *mut c_void;
    }
    0 // (no array left: the released-marked empty array ends the stream)
}

unsafe extern "C" fn stream_error(_: *mut ArrowArrayStream) -> *const c_char {
    ptr::null()
}

unsafe extern "C" fn release_stream(st: *mut ArrowArrayStream) {
    if st.is_null() || (*st).release.is_none() {
        return;
    }
    drop(Box::from_raw((*st).private_data as *mut StreamState));
    (*st).release = None;
}

unsafe extern "C" fn drop_capsule_stream(capsule: *mut pyo3::ffi::PyObject) {
    let p = pyo3::ffi::PyCapsule_GetPointer(capsule, c"arrow_array_stream".as_ptr()) as *mut ArrowArrayStream;
    if p.is_null() {
        pyo3::ffi::PyErr_Clear();
        return;
    }
    if let Some(r) = (*p).release {
        r(p);
    }
    drop(Box::from_raw(p));
}

#[pymethods]
impl Column {
    /// The column as an Arrow C stream of one array (taken once: the column is empty afterwards).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(&mut self, py: Python<'py>, requested_schema: Option<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let _ = requested_schema;
        if self.taken {
            return Err(PyValueError::new_err("Column: already handed over"));
        }
        self.taken = true;
        let mut buffers = std::mem::take(&mut self.buffers);
        if self.length == 0 && self.format == c"U" && buffers[1].is_empty() {
            buffers[1] = 0i64.to_le_bytes().to_vec();
        }
        // (string_view: the C interface gives the variadic buffers' count as n_buffers - 3)
        let state = StreamState { buffers: Some(buffers), format: self.format, length: self.length, nulls: self.nulls, name: self.name.clone() };
        let stream = Box::new(ArrowArrayStream {
            get_schema: Some(stream_schema),
            get_next: Some(stream_next),
            get_last_error: Some(stream_error),
            release: Some(release_stream),
            private_data: Box::into_raw(Box::new(state)) as *mut c_void,
        });
        unsafe {
            let cap = pyo3::ffi::PyCapsule_New(Box::into_raw(stream) as *mut c_void, c"arrow_array_stream".as_ptr(), Some(drop_capsule_stream));
            Bound::from_owned_ptr_or_err(py, cap)
        }
    }

    fn __len__(&self) -> usize {
        self.length as usize
    }
}
