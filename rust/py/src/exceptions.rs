//! The exception hierarchy, built once at import from the core's code list.
//!
//! ```text
//! FlussWriterError(Exception)            .code .code_name .retriable .message
//! ├── <Name>Error                        one per ClientCode, named from ClientCode::name
//! │   ├── InvalidRowError(…, ValueError)   (INVALID_ROW)
//! │   │   └── InvalidRowTypeError(…, TypeError)  wrong Python type for a column
//! │   ├── InvalidConfigError(…, ValueError)  (INVALID_CONFIG: a bad key, value or argument)
//! │   ├── TimeoutError(…, builtins.TimeoutError)  (TIMEOUT)
//! │   ├── IoError(…, OSError)              (IO)
//! │   └── …  (CapacityExhaustedError, CalledFromCallbackError, ForkedProcessError, …)
//! └── ServerError                        any Fluss server code (passed through unchanged)
//! ```
//!
//! Class names derive from `ClientCode::name` (`CAPACITY_EXHAUSTED` -> `CapacityExhaustedError`);
//! tests-py/errors/test_drift.py checks that the Rust list, the `.pyi` and the classes agree.

use std::collections::HashMap;

use fluss_writer::ClientCode;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

/// The classes, by code.
pub struct Exceptions {
    pub base: Py<PyType>,
    pub server: Py<PyType>,
    pub invalid_row_type: Py<PyType>,
    pub by_code: HashMap<i32, Py<PyType>>,
    /// (class name, code) in code order, for the module and the drift test.
    pub names: Vec<(String, i32)>,
}

static EXCEPTIONS: PyOnceLock<Exceptions> = PyOnceLock::new();

/// `CAPACITY_EXHAUSTED` -> `CapacityExhaustedError`.
pub fn class_name(code: ClientCode) -> String {
    let mut out = String::new();
    for part in code.name().split('_') {
        let mut chars = part.chars();
        if let Some(f) = chars.next() {
            out.push(f);
            out.extend(chars.map(|c| c.to_ascii_lowercase()));
        }
    }
    out.push_str("Error");
    out
}

fn make_class<'py>(py: Python<'py>, name: &str, bases: Vec<Bound<'py, PyAny>>, doc: &str) -> PyResult<Py<PyType>> {
    let dict = PyDict::new(py);
    dict.set_item("__module__", "fluss_writer")?;
    dict.set_item("__doc__", doc)?;
    let t = py.get_type::<PyType>().call1((name, PyTuple::new(py, bases)?, dict))?;
    Ok(t.cast_into::<PyType>()?.unbind())
}

pub fn get(py: Python<'_>) -> &Exceptions {
    EXCEPTIONS.get_or_init(py, || build(py).expect("cannot build the fluss_writer exception classes"))
}

fn build(py: Python<'_>) -> PyResult<Exceptions> {
    let exc = py.get_type::<pyo3::exceptions::PyException>().into_any();
    let base = make_class(
        py,
        "FlussWriterError",
        vec![exc],
        "Base of every fluss_writer error. Attributes: code (int: a ClientCode, or a Fluss server \
         code), code_name (str), retriable (bool: retrying the same operation can succeed), message (str).",
    )?;
    let b = base.bind(py);
    b.setattr("code", 0)?;
    b.setattr("code_name", "")?;
    b.setattr("retriable", false)?;
    b.setattr("message", "")?;
    let server = make_class(
        py,
        "ServerError",
        vec![b.clone().into_any()],
        "An error answered by a Fluss server (or the embedded engine acting as one); code is the \
         Fluss error code, unchanged.",
    )?;
    let mut by_code = HashMap::new();
    let mut names = Vec::new();
    let mut invalid_row_type = None;
    for c in ClientCode::ALL {
        let name = class_name(c);
        // A class whose meaning (and for two, whose name) a builtin shares also derives from it,
        // so `except TimeoutError` / `except OSError` / `except ValueError` catch it.
        let mut bases = vec![b.clone().into_any()];
        match c {
            ClientCode::InvalidRow | ClientCode::InvalidConfig => bases.push(py.get_type::<pyo3::exceptions::PyValueError>().into_any()),
            ClientCode::Timeout => bases.push(py.get_type::<pyo3::exceptions::PyTimeoutError>().into_any()),
            ClientCode::Io => bases.push(py.get_type::<pyo3::exceptions::PyOSError>().into_any()),
            _ => {}
        }
        let cls = make_class(py, &name, bases, &format!("Client error {} ({}).", c.name(), c as i32))?;
        cls.bind(py).setattr("code", crate::error::code_object(py, c as i32)?)?;
        cls.bind(py).setattr("code_name", c.name())?;
        cls.bind(py).setattr("retriable", c.is_retriable())?;
        if c == ClientCode::InvalidRow {
            let t = make_class(
                py,
                "InvalidRowTypeError",
                vec![cls.bind(py).clone().into_any(), py.get_type::<pyo3::exceptions::PyTypeError>().into_any()],
                "A row value has a Python type that the column cannot take (INVALID_ROW).",
            )?;
            invalid_row_type = Some(t);
        }
        names.push((name, c as i32));
        by_code.insert(c as i32, cls);
    }
    Ok(Exceptions { base, server, invalid_row_type: invalid_row_type.expect("INVALID_ROW exists"), by_code, names })
}

/// Add every class to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let e = get(py);
    m.add("FlussWriterError", e.base.clone_ref(py))?;
    m.add("ServerError", e.server.clone_ref(py))?;
    m.add("InvalidRowTypeError", e.invalid_row_type.clone_ref(py))?;
    for (name, code) in &e.names {
        m.add(name.as_str(), e.by_code[code].clone_ref(py))?;
    }
    let codes: Vec<(String, i32, bool, String)> =
        ClientCode::ALL.iter().map(|c| (c.name().to_string(), *c as i32, c.is_retriable(), class_name(*c))).collect();
    m.add("CLIENT_CODES", codes)?;
    let server: Vec<(String, i32, bool)> =
        fluss_writer::FlussCode::named().map(|(c, n)| (n.to_string(), c, fluss_writer::FlussCode::is_retriable(c))).collect();
    m.add("SERVER_CODES", server)?;
    Ok(())
}
