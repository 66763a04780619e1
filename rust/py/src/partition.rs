//! Partitions in Python: `PartitionInfo` and the conversion of a partition spec (a dict of
//! partition key to value) for `Admin.create_partition` / `drop_partition` /
//! `list_partitions` (in `connection.rs`). Thin: the core checks the spec against the table's
//! partition keys and forms names ([`fluss_writer::partition`]); here only the Python types are
//! converted (a spec is `str` to `str`, in the dict's order).

use fluss_writer::{PartitionInfo, PartitionSpec};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert::utf8;
use crate::entry::entry_points;

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

fn spec_str(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    let s = obj
        .cast::<PyString>()
        .map_err(|_| pyo3::exceptions::PyTypeError::new_err(format!("a partition spec maps str to str; {what} is a {}", type_name(obj))))?;
    Ok(utf8(s, &format!("partition spec {what}"), |m| crate::error::client(fluss_writer::ClientCode::InvalidTable, m))?.into_owned())
}

/// A partition spec from a dict `{"key": "value", ...}` (keys and values are str).
pub fn spec_from_py(obj: &Bound<'_, PyAny>) -> PyResult<PartitionSpec> {
    let d = obj.cast::<PyDict>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "a partition spec is a dict of partition key to value (str to str), not {}",
            type_name(obj)
        ))
    })?;
    let mut pairs = Vec::with_capacity(d.len());
    for (k, v) in d.iter() {
        let key = spec_str(&k, "a key")?;
        let value = spec_str(&v, &format!("the value of {key:?}"))?;
        pairs.push((key, value));
    }
    Ok(PartitionSpec::new(pairs))
}

/// One partition of a table, as `Admin.list_partitions` returns it.
#[pyclass(name = "PartitionInfo", module = "fluss_writer", frozen, eq)]
#[derive(PartialEq)]
pub struct PyPartitionInfo {
    pub inner: PartitionInfo,
}

entry_points! {
impl PyPartitionInfo {
    /// The server's id of the partition (a recreated partition gets a new id).
    #[getter]
    fn partition_id(&self) -> i64 {
        self.inner.partition_id
    }
    /// The partition's name: its values joined by `$` in partition-key order.
    #[getter]
    fn partition_name(&self) -> String {
        self.inner.partition_name.clone()
    }
    /// The partition's values by partition key (a new dict on each access).
    #[getter]
    fn spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.inner.spec.entries() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let name = PyString::new(py, &self.inner.partition_name).repr()?;
        let spec = self.spec(py)?.repr()?;
        Ok(format!("PartitionInfo(partition_id={}, partition_name={name}, spec={spec})", self.inner.partition_id))
    }
}
}
