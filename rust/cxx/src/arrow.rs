//! Arrow C Data Interface import: `ArrowArray` + `ArrowSchema` (one struct array = one record
//! batch) and `ArrowArrayStream` (every batch of the stream, written as one operation).
//!
//! The callee moves from the C structs first thing (their `release` becomes NULL), also when the
//! call then fails, so the caller never has to guess who releases them.

use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{RecordBatch, RecordBatchReader, StructArray};
use cxx::UniquePtr;
use fluss_writer::{Error, Result};

use crate::bridge::ffi::{CallbackBase, FfiStatus};
use crate::handles::{notify, writer_append_batch, RWriteResult, RWriter};

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
        return Err(Error::invalid_row("AppendArrowBatch: the ArrowArray or ArrowSchema pointer is null"));
    };
    if a.is_released() {
        return Err(Error::invalid_row("AppendArrowBatch: the ArrowArray was already released"));
    }
    let data = from_ffi(a, &s)?;
    if !matches!(data.data_type(), arrow_schema::DataType::Struct(_)) {
        return Err(Error::invalid_row(format!("AppendArrowBatch: expected a struct array (a record batch), got {}", data.data_type())));
    }
    Ok(RecordBatch::from(StructArray::from(data)))
}

/// Take ownership of a C stream and concatenate its batches.
///
/// # Safety
/// `stream` is null or points to a valid `ArrowArrayStream`.
unsafe fn import_stream(stream: usize) -> Result<RecordBatch> {
    let stream = stream as *mut FFI_ArrowArrayStream;
    if stream.is_null() {
        return Err(Error::invalid_row("AppendArrowBatch: the ArrowArrayStream pointer is null"));
    }
    let reader = ArrowArrayStreamReader::from_raw(stream)?;
    let schema = reader.schema();
    let batches = reader.collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(arrow_select::concat::concat_batches(&schema, &batches)?)
}

pub(crate) unsafe fn writer_append_arrow(
    w: &RWriter,
    array: usize,
    schema: usize,
    cb: UniquePtr<CallbackBase>,
    result: *mut RWriteResult,
) -> FfiStatus {
    let n = notify(cb, result);
    let batch = crate::status::guard(|| import_batch(array, schema));
    writer_append_batch(w, batch, n)
}

pub(crate) unsafe fn writer_append_arrow_stream(
    w: &RWriter,
    stream: usize,
    cb: UniquePtr<CallbackBase>,
    result: *mut RWriteResult,
) -> FfiStatus {
    let n = notify(cb, result);
    let batch = crate::status::guard(|| import_stream(stream));
    writer_append_batch(w, batch, n)
}
