//! The single conversion from the core's `Error` to a Python exception (and back, for
//! exceptions raised by a completion's `error` attribute). Every other module uses [`to_py`],
//! [`invalid_row`] or [`wrong_type`].

use fluss_writer::{ClientCode, Error};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::exceptions;

/// Build the exception instance for a core error (not raised).
pub fn exception_instance<'py>(py: Python<'py>, e: &Error) -> PyResult<Bound<'py, PyAny>> {
    let ex = exceptions::get(py);
    let cls = match ex.by_code.get(&e.code()) {
        Some(c) => c.bind(py),
        None => ex.server.bind(py),
    };
    let inst = cls.call1((e.to_string(),))?;
    set_attrs(&inst, e)?;
    Ok(inst)
}

fn set_attrs(inst: &Bound<'_, PyAny>, e: &Error) -> PyResult<()> {
    inst.setattr("code", code_object(inst.py(), e.code())?)?;
    inst.setattr("code_name", e.code_name())?;
    inst.setattr("retriable", e.is_retriable())?;
    inst.setattr("message", e.message())?;
    Ok(())
}

static ERROR_CODE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A code as Python sees it: the `fluss_writer.ErrorCode` member for a code of the core's table
/// (python/fluss_writer/_error_codes.py is generated from it), a plain `int` for a code the
/// table lacks (a newer server's; the message carries the number).
pub fn code_object(py: Python<'_>, code: i32) -> PyResult<Bound<'_, PyAny>> {
    if fluss_writer::code_info(code).is_none() {
        return Ok(code.into_pyobject(py)?.into_any());
    }
    let enum_class = ERROR_CODE
        .get_or_try_init(py, || -> PyResult<Py<PyAny>> { Ok(py.import("fluss_writer._error_codes")?.getattr("ErrorCode")?.unbind()) })?;
    enum_class.bind(py).call1((code,))
}

/// The core error as a `PyErr`.
pub fn to_py(e: Error) -> PyErr {
    Python::attach(|py| match exception_instance(py, &e) {
        Ok(inst) => PyErr::from_value(inst),
        Err(err) => err,
    })
}

/// An `InvalidRowError` (a `ValueError`) with this message.
pub fn invalid_row(message: impl Into<String>) -> PyErr {
    to_py(Error::invalid_row(message))
}

/// An `InvalidRowTypeError` (a `TypeError` and an `InvalidRowError`) with this message.
pub fn wrong_type(message: impl Into<String>) -> PyErr {
    let e = Error::invalid_row(message);
    Python::attach(|py| {
        let cls = exceptions::get(py).invalid_row_type.bind(py);
        match cls.call1((e.to_string(),)).and_then(|inst| set_attrs(&inst, &e).map(|_| inst)) {
            Ok(inst) => PyErr::from_value(inst),
            Err(err) => err,
        }
    })
}

/// A client error with this code.
pub fn client(code: ClientCode, message: impl Into<String>) -> PyErr {
    to_py(Error::client(code, message))
}

/// `Result<T, Error>` -> `PyResult<T>`.
pub trait IntoPyResult<T> {
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Error> {
    #[inline]
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
