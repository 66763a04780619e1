//! Arrow C Data Interface import: `ArrowArray` + `ArrowSchema` (one struct array = one record
//! batch) and `ArrowArrayStream` (every batch of the stream, written as one operation).
//!
//! The callee moves from the C structs first thing (their `release` becomes NULL), also when the
//! call then fails, so the caller never has to guess who releases them.
//!
//! The imported structs are checked before arrow-rs reads them (arrow-rs trusts its input: a
//! null format or children pointer, a children count that differs from the schema's or a
//! negative length would be undefined behaviour or a panic there): released or null structs,
//! null or non-UTF-8 formats, negative or absurd lengths and offsets, null counts above the
//! length, buffer counts that do not match the type, null pointers for buffers the data needs,
//! array and schema children counts that differ, children shorter than their parent, negative
//! string offsets, and dictionaries present on one side only. After the import the array is
//! validated in full (`ArrayData::validate_full`: offsets in range and monotonic, UTF-8, child
//! lengths, dictionary keys). Every failure is `INVALID_ROW` with a path to the bad node and
//! nothing is written. What no consumer can check: the interface carries no buffer sizes, so a
//! producer whose buffers are shorter than its lengths say is undefined behaviour in any Arrow
//! consumer.

use std::ffi::{c_char, c_void, CStr};

use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, StructArray};
use arrow_schema::DataType;
use fluss_writer::{ClientCode, Error, Result};

use crate::bridge::ffi::{FfiCallback, FfiColumn, FfiStatus};
use crate::handles::{completion_target, writer_append_batch, RWriteResult, RWriter};
use crate::values::ffi_column;

/// Take ownership of a C array and schema and build a record batch from them.
///
/// # Safety
/// `array` and `schema` are null or point to valid C Data Interface structs.
unsafe fn import_batch(array: usize, schema: usize) -> Result<RecordBatch> {
    let array = array as *mut FFI_ArrowArray;
    let schema = schema as *mut FFI_ArrowSchema;
    // Move out of both first, whatever happens next.
    let a = if array.is_null() { None } else { Some(FFI_ArrowArray::from_raw(array)) };
    let s = if schema.is_null() { None } else { Some(FFI_ArrowSchema::from_raw(schema)) };
    let (Some(a), Some(s)) = (a, s) else {
        return Err(Error::invalid_row("WriteArrowBatch: the ArrowArray or ArrowSchema pointer is null"));
    };
    if a.is_released() {
        return Err(Error::invalid_row("WriteArrowBatch: the ArrowArray was already released"));
    }
    // SAFETY: both are valid C structs owned by us now (layout-identical to the Raw mirrors).
    let raw_s = &*(&s as *const FFI_ArrowSchema as *const RawSchema);
    let raw_a = &*(&a as *const FFI_ArrowArray as *const RawArray);
    check_schema(raw_s, "batch", 0)?;
    let dt = DataType::try_from(&s).map_err(|e| Error::invalid_row(format!("WriteArrowBatch: bad ArrowSchema: {e}")))?;
    check_array(raw_a, raw_s, &dt, "batch", 0)?;
    let data = from_ffi(a, &s)?;
    data.validate_full().map_err(|e| Error::invalid_row(format!("WriteArrowBatch: invalid ArrowArray: {e}")))?;
    if !matches!(data.data_type(), arrow_schema::DataType::Struct(_)) {
        return Err(Error::invalid_row(format!("WriteArrowBatch: expected a struct array (a record batch), got {}", data.data_type())));
    }
    Ok(RecordBatch::from(StructArray::from(data)))
}

/// `struct ArrowArrayStream`, read-only (its callbacks are checked before arrow-rs calls them).
#[repr(C)]
struct RawStream {
    get_schema: Option<unsafe extern "C" fn(*mut RawStream, *mut RawSchema) -> i32>,
    get_next: Option<unsafe extern "C" fn(*mut RawStream, *mut RawArray) -> i32>,
    get_last_error: Option<unsafe extern "C" fn(*mut RawStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut RawStream)>,
    private_data: *mut c_void,
}

// ===== checks of the raw C structs (before arrow-rs reads them) =====

/// `struct ArrowSchema` of the C Data Interface, read-only.
#[repr(C)]
struct RawSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *const *const RawSchema,
    dictionary: *const RawSchema,
    release: Option<unsafe extern "C" fn(*mut RawSchema)>,
    private_data: *mut c_void,
}

/// `struct ArrowArray` of the C Data Interface, read-only.
#[repr(C)]
struct RawArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *const *const c_void,
    children: *const *const RawArray,
    dictionary: *const RawArray,
    release: Option<unsafe extern "C" fn(*mut RawArray)>,
    private_data: *mut c_void,
}

// The mirrors must match arrow-rs's structs (which follow the specification).
const _: () = assert!(std::mem::size_of::<RawSchema>() == std::mem::size_of::<FFI_ArrowSchema>());
const _: () = assert!(std::mem::size_of::<RawArray>() == std::mem::size_of::<FFI_ArrowArray>());

/// Deeper nesting than this is rejected (no Fluss type nests deeper).
const MAX_DEPTH: usize = 32;
/// More children than this is rejected (Fluss tables are far narrower).
const MAX_CHILDREN: i64 = 1 << 16;
/// Rows (length + offset) of one array: what 32-bit offsets can address.
const MAX_ROWS: i64 = i32::MAX as i64;

fn bad(path: &str, what: impl std::fmt::Display) -> Error {
    Error::invalid_row(format!("WriteArrowBatch: {path}: {what}"))
}

/// # Safety
/// `s` points to a struct the producer claims is an `ArrowSchema`; only its pointers are checked
/// before they are followed.
unsafe fn check_schema(s: &RawSchema, path: &str, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(bad(path, format!("nested deeper than {MAX_DEPTH}")));
    }
    if s.release.is_none() {
        return Err(bad(path, "the ArrowSchema is released"));
    }
    if s.format.is_null() {
        return Err(bad(path, "the ArrowSchema format is null"));
    }
    if CStr::from_ptr(s.format).to_str().is_err() {
        return Err(bad(path, "the ArrowSchema format is not UTF-8"));
    }
    if !s.name.is_null() && CStr::from_ptr(s.name).to_str().is_err() {
        return Err(bad(path, "the ArrowSchema name is not UTF-8"));
    }
    if !(0..=MAX_CHILDREN).contains(&s.n_children) {
        return Err(bad(path, format!("ArrowSchema n_children {} is out of range", s.n_children)));
    }
    if s.n_children > 0 && s.children.is_null() {
        return Err(bad(path, "ArrowSchema children is null"));
    }
    for i in 0..s.n_children as usize {
        let c = *s.children.add(i);
        let p = format!("{path}.child[{i}]");
        if c.is_null() {
            return Err(bad(&p, "the ArrowSchema child is null"));
        }
        check_schema(&*c, &p, depth + 1)?;
    }
    if !s.dictionary.is_null() {
        check_schema(&*s.dictionary, &format!("{path}.dictionary"), depth + 1)?;
    }
    Ok(())
}

/// The buffers the C Data Interface has for `dt` (validity included): `(count, at_least)`.
fn expected_buffers(dt: &DataType) -> (i64, bool) {
    let l = arrow_data::layout(dt);
    let n = l.buffers.len() as i64 + i64::from(l.can_contain_null_mask);
    if l.variadic {
        (n + 1, true) // + the variadic lengths buffer; any number of data buffers
    } else {
        (n, false)
    }
}

/// # Safety
/// `a` and `s` passed [`check_schema`] (for `s`) and are the producer's structs.
unsafe fn check_array(a: &RawArray, s: &RawSchema, dt: &DataType, path: &str, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(bad(path, format!("nested deeper than {MAX_DEPTH}")));
    }
    if a.release.is_none() {
        return Err(bad(path, "the ArrowArray is released"));
    }
    if a.length < 0 || a.offset < 0 {
        return Err(bad(path, format!("negative length {} or offset {}", a.length, a.offset)));
    }
    let rows = a.length.checked_add(a.offset).filter(|r| *r <= MAX_ROWS);
    let Some(rows) = rows else {
        return Err(bad(path, format!("length {} + offset {} is out of range", a.length, a.offset)));
    };
    if a.null_count < -1 || a.null_count > a.length {
        return Err(bad(path, format!("null_count {} for length {}", a.null_count, a.length)));
    }
    // Children.
    if a.n_children != s.n_children {
        return Err(bad(path, format!("the ArrowArray has {} children, its ArrowSchema {}", a.n_children, s.n_children)));
    }
    if a.n_children > 0 && a.children.is_null() {
        return Err(bad(path, "ArrowArray children is null"));
    }
    let child_types: Vec<(DataType, bool)> = match dt {
        DataType::Struct(fields) => fields.iter().map(|f| (f.data_type().clone(), true)).collect(),
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => {
            vec![(f.data_type().clone(), false)]
        }
        _ => Vec::new(),
    };
    if child_types.len() as i64 != a.n_children {
        return Err(bad(path, format!("type {dt} has {} children, the ArrowArray {}", child_types.len(), a.n_children)));
    }
    for (i, (ct, same_rows)) in child_types.iter().enumerate() {
        let c = *a.children.add(i);
        let p = format!("{path}.child[{i}]");
        if c.is_null() {
            return Err(bad(&p, "the ArrowArray child is null"));
        }
        let c = &*c;
        let cs = &**s.children.add(i);
        if *same_rows && c.length.checked_add(c.offset).is_none_or(|r| r < rows) {
            return Err(bad(&p, format!("{} rows, fewer than its parent's {rows}", c.length.saturating_add(c.offset))));
        }
        check_array(c, cs, ct, &p, depth + 1)?;
    }
    // Buffers.
    let (want, at_least) = expected_buffers(dt);
    if a.n_buffers < want || (!at_least && a.n_buffers != want) || a.n_buffers > MAX_CHILDREN {
        return Err(bad(path, format!("{} buffers, type {dt} has {want}{}", a.n_buffers, if at_least { " or more" } else { "" })));
    }
    if a.n_buffers > 0 && a.buffers.is_null() {
        return Err(bad(path, "ArrowArray buffers is null"));
    }
    let has_validity = arrow_data::layout(dt).can_contain_null_mask;
    for i in 0..a.n_buffers as usize {
        let b = *a.buffers.add(i);
        if !b.is_null() || rows == 0 {
            continue;
        }
        if has_validity && i == 0 {
            if a.null_count > 0 {
                return Err(bad(path, format!("null_count {} but no validity buffer", a.null_count)));
            }
            continue;
        }
        return Err(bad(path, format!("buffer {i} is null for {rows} rows of {dt}")));
    }
    // String/binary offsets: the last one sizes the data buffer.
    if rows > 0 {
        let offsets = |i: usize| *a.buffers.add(i);
        match dt {
            DataType::Utf8 | DataType::Binary | DataType::List(_) | DataType::Map(_, _) => {
                let o = offsets(1) as *const i32;
                let (first, last) = (*o, *o.add(rows as usize));
                if first < 0 || last < first {
                    return Err(bad(path, format!("offsets {first}..{last} are invalid")));
                }
            }
            DataType::LargeUtf8 | DataType::LargeBinary | DataType::LargeList(_) => {
                let o = offsets(1) as *const i64;
                let (first, last) = (*o, *o.add(rows as usize));
                if first < 0 || last < first || last > i64::from(i32::MAX) * 64 {
                    return Err(bad(path, format!("offsets {first}..{last} are invalid")));
                }
            }
            DataType::Utf8View | DataType::BinaryView => {
                let n = a.n_buffers as usize;
                let lengths = offsets(n - 1) as *const i64;
                for k in 0..n.saturating_sub(3) {
                    if *lengths.add(k) < 0 {
                        return Err(bad(path, format!("variadic buffer {k} has a negative length")));
                    }
                }
            }
            _ => {}
        }
    }
    // Dictionary: on both sides or neither.
    match (a.dictionary.is_null(), s.dictionary.is_null(), dt) {
        (true, true, _) => Ok(()),
        (false, false, DataType::Dictionary(_, v)) => {
            check_array(&*a.dictionary, &*s.dictionary, v, &format!("{path}.dictionary"), depth + 1)
        }
        _ => Err(bad(path, "the dictionary is present in only one of ArrowArray and ArrowSchema")),
    }
}

/// Take ownership of a C stream and concatenate its batches.
///
/// # Safety
/// `stream` is null or points to a valid `ArrowArrayStream`.
unsafe fn import_stream(stream: usize) -> Result<RecordBatch> {
    let stream = stream as *mut FFI_ArrowArrayStream;
    if stream.is_null() {
        return Err(Error::invalid_row("WriteArrowBatch: the ArrowArrayStream pointer is null"));
    }
    if (*(stream as *const RawStream)).release.is_none() {
        return Err(Error::invalid_row("WriteArrowBatch: the ArrowArrayStream is released"));
    }
    // Moved from first (released when `owned` drops), whatever happens next.
    let mut owned = FFI_ArrowArrayStream::from_raw(stream);
    let raw = &mut *(&mut owned as *mut FFI_ArrowArrayStream as *mut RawStream);
    let (Some(get_schema), Some(get_next)) = (raw.get_schema, raw.get_next) else {
        return Err(Error::invalid_row("WriteArrowBatch: the ArrowArrayStream has a null get_schema or get_next"));
    };
    let last_error = |raw: &mut RawStream, what: &str, rc: i32| {
        let text = match raw.get_last_error {
            Some(f) => {
                let p = f(raw);
                if p.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(p).to_string_lossy().into_owned()
                }
            }
            None => String::new(),
        };
        Error::invalid_row(format!("WriteArrowBatch: the stream's {what} failed (error {rc}): {text}"))
    };
    // The same checks as a single batch: the schema once, every array before arrow-rs reads it.
    let mut schema = FFI_ArrowSchema::empty();
    let rc = get_schema(raw, &mut schema as *mut FFI_ArrowSchema as *mut RawSchema);
    if rc != 0 {
        return Err(last_error(raw, "get_schema", rc));
    }
    let raw_s = &*(&schema as *const FFI_ArrowSchema as *const RawSchema);
    check_schema(raw_s, "stream schema", 0)?;
    let dt = DataType::try_from(&schema).map_err(|e| Error::invalid_row(format!("WriteArrowBatch: bad stream schema: {e}")))?;
    if !matches!(dt, DataType::Struct(_)) {
        return Err(Error::invalid_row(format!("WriteArrowBatch: expected a stream of struct arrays (record batches), got {dt}")));
    }
    let arrow_schema = std::sync::Arc::new(arrow_schema::Schema::try_from(&schema)?);
    let mut batches = Vec::new();
    loop {
        let mut array = FFI_ArrowArray::empty();
        let rc = get_next(raw, &mut array as *mut FFI_ArrowArray as *mut RawArray);
        if rc != 0 {
            return Err(last_error(raw, "get_next", rc));
        }
        if array.is_released() {
            break; // end of stream
        }
        let path = format!("stream batch {}", batches.len());
        check_array(&*(&array as *const FFI_ArrowArray as *const RawArray), raw_s, &dt, &path, 0)?;
        let data = from_ffi(array, &schema)?;
        data.validate_full().map_err(|e| Error::invalid_row(format!("WriteArrowBatch: {path}: invalid ArrowArray: {e}")))?;
        let batch = RecordBatch::from(StructArray::from(data));
        batches.push(batch.with_schema(arrow_schema.clone())?);
    }
    fluss_writer::concat_arrow_batches(&arrow_schema, batches)
}

/// `Schema::FromArrow`: the columns of a C `ArrowSchema` of a record batch (a struct, one child
/// per column: its name, type and nullability), typed by the core's Arrow -> Fluss rule
/// (`fluss_writer::Schema::columns_from_arrow`, nested types included). The struct is only read:
/// the caller still owns and releases it. Every failure is `INVALID_TABLE`.
///
/// # Safety
/// `schema` is null or points to a C Data Interface struct (its pointers are checked before
/// they are followed, as for a batch).
pub(crate) unsafe fn schema_from_arrow(schema: usize, out: &mut Vec<FfiColumn>) -> FfiStatus {
    crate::status::status(crate::status::guard(|| {
        let invalid = |m: String| Error::client(ClientCode::InvalidTable, format!("Schema::FromArrow: {m}"));
        let raw = schema as *const RawSchema;
        if raw.is_null() {
            return Err(invalid("the ArrowSchema pointer is null".into()));
        }
        // The checks of a batch's schema, reported as what they are here.
        check_schema(&*raw, "schema", 0).map_err(|e| invalid(e.message().trim_start_matches("WriteArrowBatch: ").to_string()))?;
        // SAFETY: checked above; arrow-rs reads it through a reference and does not release it.
        let s = &*(raw as *const FFI_ArrowSchema);
        let arrow = arrow_schema::Schema::try_from(s).map_err(|e| invalid(format!("bad ArrowSchema: {e}")))?;
        let columns = fluss_writer::Schema::columns_from_arrow(&arrow)?;
        *out = columns.iter().map(ffi_column).collect();
        Ok(())
    }))
}

/// `Schema::ToArrow`: the Arrow schema of `columns` (and `primary_key`, whose columns are NOT
/// NULL) as the core maps it (`fluss_writer::Schema::to_arrow`), written into `*out` as a C
/// `ArrowSchema` the caller releases. `*out` is overwritten, not released first.
///
/// # Safety
/// `out` is null or points to writable memory for one `ArrowSchema`.
#[allow(clippy::ptr_arg)] // cxx passes rust::Vec as &Vec
pub(crate) unsafe fn schema_to_arrow(columns: &Vec<FfiColumn>, primary_key: &Vec<String>, out: usize) -> FfiStatus {
    crate::status::status(crate::status::guard(|| {
        let out = out as *mut FFI_ArrowSchema;
        if out.is_null() {
            return Err(Error::client(ClientCode::InvalidTable, "Schema::ToArrow: the ArrowSchema pointer is null"));
        }
        let schema = fluss_writer::Schema::new(crate::values::columns(columns)?, primary_key.clone())?;
        let ffi = FFI_ArrowSchema::try_from(schema.to_arrow().as_ref()).map_err(|e| Error::internal(format!("Schema::ToArrow: {e}")))?;
        // SAFETY: `out` is writable (the caller's contract); nothing there is read or dropped.
        std::ptr::write(out, ffi);
        Ok(())
    }))
}

pub(crate) unsafe fn writer_append_arrow(
    w: &RWriter,
    array: usize,
    schema: usize,
    cb: FfiCallback,
    result: *mut RWriteResult,
) -> FfiStatus {
    let n = completion_target(cb, result);
    let batch = crate::status::guard(|| import_batch(array, schema));
    writer_append_batch(w, batch, n)
}

pub(crate) unsafe fn writer_append_arrow_stream(w: &RWriter, stream: usize, cb: FfiCallback, result: *mut RWriteResult) -> FfiStatus {
    let n = completion_target(cb, result);
    let batch = crate::status::guard(|| import_stream(stream));
    writer_append_batch(w, batch, n)
}
