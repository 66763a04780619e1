//! Vectorcall entry points for the per-record write methods (`append`, `append_detached`,
//! `upsert`, `delete`).
//!
//! Built for the stable ABI of Python 3.9 (abi3-py39), pyo3 registers methods as
//! `METH_VARARGS | METH_KEYWORDS`: every call builds a tuple of its positional arguments, and
//! `append(row, callback=cb)` also a dict of its keywords, which pyo3 then walks by name. On a
//! per-record path that was the largest single cost of passing a callback (a dict built and
//! freed per record). `METH_FASTCALL | METH_KEYWORDS` is part of the stable ABI from Python 3.10
//! on, so on 3.10 and later module init replaces those four methods with descriptors of that
//! convention: arguments arrive as a C array plus a tuple of keyword names, nothing is
//! allocated. The bodies are the `#[pymethods]` functions themselves (docs, text signatures,
//! errors and behaviour are theirs); on 3.9 pyo3's own wrappers stay.

use std::ffi::{c_int, CStr, CString};
use std::sync::atomic::{AtomicPtr, Ordering};

use pyo3::exceptions::{PySystemError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple, PyType};
use pyo3::PyClass;

use crate::writer::{PyAppendWriter, PyUpsertWriter};

/// `METH_FASTCALL` (0x0080, stable ABI since 3.10; not exported by pyo3-ffi for abi3-py39).
const METH_FASTCALL: c_int = 0x0080;

type FastCall =
    unsafe extern "C" fn(*mut ffi::PyObject, *const *mut ffi::PyObject, ffi::Py_ssize_t, *mut ffi::PyObject) -> *mut ffi::PyObject;

/// A parameter name. Keyword names compiled into calling code are interned, and so is this
/// one (at [`install`]), so a match is usually one pointer comparison.
struct Name {
    text: &'static CStr,
    interned: AtomicPtr<ffi::PyObject>,
}

impl Name {
    const fn new(text: &'static CStr) -> Name {
        Name { text, interned: AtomicPtr::new(std::ptr::null_mut()) }
    }

    /// # Safety
    /// `s` is a str object; the GIL is held.
    unsafe fn equals(&self, s: *mut ffi::PyObject) -> bool {
        ffi::PyUnicode_CompareWithASCIIString(s, self.text.as_ptr()) == 0
    }

    fn is(&self, s: *mut ffi::PyObject) -> bool {
        s == self.interned.load(Ordering::Relaxed)
    }

    fn intern(&self, py: Python<'_>) {
        // The interned string lives as long as the interpreter: one strong reference is kept.
        let s = PyString::intern(py, &self.text.to_string_lossy()).unbind();
        self.interned.store(s.into_ptr(), Ordering::Relaxed);
    }
}

static ROW: Name = Name::new(c"row");
static KEY: Name = Name::new(c"key");
static CALLBACK: Name = Name::new(c"callback");

/// Arguments of one call: up to two, by position or keyword.
struct Args<'a, 'py> {
    qualname: &'static str,
    /// How many of the names the method takes (each by position or by keyword).
    count: usize,
    vals: [Option<Borrowed<'a, 'py, PyAny>>; 2],
}

impl<'a, 'py> Args<'a, 'py> {
    /// Parse a vectorcall argument vector for `names[..count]` (the first one required).
    ///
    /// # Safety
    /// `args` holds `nargs` positional values followed by one value per entry of `kwnames` (a
    /// tuple of str, or null), all borrowed for the duration of the call.
    unsafe fn parse(
        py: Python<'py>,
        qualname: &'static str,
        names: [&'static Name; 2],
        count: usize,
        args: *const *mut ffi::PyObject,
        nargs: ffi::Py_ssize_t,
        kwnames: *mut ffi::PyObject,
    ) -> PyResult<Args<'a, 'py>> {
        let mut a = Args { qualname, count, vals: [None, None] };
        let nargs = nargs as usize;
        if nargs > count {
            return Err(a.error(format!(
                "takes {} positional argument{} but {nargs} were given",
                a.arity(),
                if count == 1 { "" } else { "s" }
            )));
        }
        for i in 0..nargs {
            a.vals[i] = Some(Borrowed::from_ptr(py, *args.add(i)));
        }
        if !kwnames.is_null() {
            // The common call, `append(row, callback=cb)`: one interned keyword.
            if nargs == 1 && count == 2 && ffi::PyTuple_Size(kwnames) == 1 && names[1].is(ffi::PyTuple_GetItem(kwnames, 0)) {
                a.vals[1] = Some(Borrowed::from_ptr(py, *args.add(1)));
                return Ok(a);
            }
            let kw = Borrowed::from_ptr(py, kwnames).cast_unchecked::<PyTuple>();
            for (j, name) in kw.iter().enumerate() {
                let name = name.cast_into::<PyString>()?;
                // Keyword names are str (the interpreter checks): by identity first (interned),
                // then by value without a copy.
                let names = &names[..count];
                let found = names.iter().position(|n| n.is(name.as_ptr())).or_else(|| names.iter().position(|n| n.equals(name.as_ptr())));
                let Some(i) = found else {
                    return Err(a.error(format!("got an unexpected keyword argument '{name}'")));
                };
                if a.vals[i].is_some() {
                    return Err(a.error(format!("got multiple values for argument '{name}'")));
                }
                a.vals[i] = Some(Borrowed::from_ptr(py, *args.add(nargs + j)));
            }
        }
        if a.vals[0].is_none() {
            return Err(a.error(format!("missing 1 required positional argument: '{}'", names[0].text.to_string_lossy())));
        }
        Ok(a)
    }

    fn arity(&self) -> String {
        if self.count == 1 {
            "1".into()
        } else {
            format!("from 1 to {}", self.count)
        }
    }

    fn error(&self, what: String) -> PyErr {
        PyTypeError::new_err(format!("{}() {what}", self.qualname))
    }

    fn first(&self) -> &Bound<'py, PyAny> {
        self.vals[0].as_deref().expect("checked in parse")
    }

    /// The optional second argument (`callback`), `None` when absent.
    fn second(&self) -> Option<&Bound<'py, PyAny>> {
        self.vals[1].as_deref()
    }
}

/// Run `f` as the body of a C method: the GIL is held (the interpreter called us), a Python
/// error is set and null returned on `Err`, a panic becomes `InternalError` (as in every other
/// entry point, `entry::guard`).
fn trampoline(f: impl FnOnce(Python<'_>) -> PyResult<Py<PyAny>>) -> *mut ffi::PyObject {
    Python::attach(|py| match crate::entry::guard(|| f(py)) {
        Ok(obj) => obj.into_ptr(),
        Err(e) => {
            e.restore(py);
            std::ptr::null_mut()
        }
    })
}

/// `self` of a method call, as the class it was installed on.
///
/// # Safety
/// `slf` is a borrowed, non-null object pointer.
unsafe fn this<'a, 'py, T: PyClass>(py: Python<'py>, slf: *mut ffi::PyObject) -> PyResult<Borrowed<'a, 'py, T>> {
    Ok(Borrowed::from_ptr(py, slf).cast::<T>()?)
}

macro_rules! fast_method {
    ($fname:ident, $ty:ty, $qual:literal, [$a:expr, $b:expr], $count:literal, |$py:ident, $w:ident, $args:ident| $body:expr) => {
        unsafe extern "C" fn $fname(
            slf: *mut ffi::PyObject,
            argv: *const *mut ffi::PyObject,
            nargs: ffi::Py_ssize_t,
            kwnames: *mut ffi::PyObject,
        ) -> *mut ffi::PyObject {
            trampoline(|$py| {
                // SAFETY: the interpreter passes a valid vectorcall argument vector and self.
                let $args = unsafe { Args::parse($py, $qual, [$a, $b], $count, argv, nargs, kwnames)? };
                let $w = unsafe { this::<$ty>($py, slf)? };
                let $w = $w.get();
                $body
            })
        }
    };
}

fast_method!(append, PyAppendWriter, "AppendWriter.append", [&ROW, &CALLBACK], 2, |py, w, a| {
    Ok(w.append(py, a.first(), a.second())?.into_pyobject(py)?.into_any().unbind())
});
fast_method!(append_detached, PyAppendWriter, "AppendWriter.append_detached", [&ROW, &CALLBACK], 1, |py, w, a| {
    w.append_detached(py, a.first())?;
    Ok(py.None())
});
fast_method!(upsert, PyUpsertWriter, "UpsertWriter.upsert", [&ROW, &CALLBACK], 2, |py, w, a| {
    Ok(w.upsert(py, a.first(), a.second())?.into_pyobject(py)?.into_any().unbind())
});
fast_method!(delete, PyUpsertWriter, "UpsertWriter.delete", [&KEY, &CALLBACK], 2, |py, w, a| {
    Ok(w.delete(py, a.first(), a.second())?.into_pyobject(py)?.into_any().unbind())
});

/// Replace `name` on `ty` by a vectorcall descriptor of `f`, keeping the doc and text signature
/// pyo3 generated for it.
fn replace(ty: &Bound<'_, PyType>, name: &'static str, f: FastCall) -> PyResult<()> {
    let py = ty.py();
    let old = ty.getattr(name)?;
    let sig: String = old.getattr("__text_signature__")?.extract()?;
    let doc: Option<String> = old.getattr("__doc__")?.extract()?;
    let doc = CString::new(format!("{name}{sig}\n--\n\n{}", doc.unwrap_or_default()))
        .map_err(|_| PySystemError::new_err("method doc holds a NUL"))?;
    let cname = CString::new(name).expect("method name");
    // The descriptor keeps a pointer to its definition for the life of the type: leaked once
    // per method at module init.
    let def = Box::leak(Box::new(ffi::PyMethodDef {
        ml_name: Box::leak(cname.into_boxed_c_str()).as_ptr(),
        // SAFETY: METH_FASTCALL | METH_KEYWORDS tells the interpreter the real signature, as a
        // C extension casts its function to PyCFunction.
        ml_meth: ffi::PyMethodDefPointer { PyCFunction: unsafe { std::mem::transmute::<FastCall, ffi::PyCFunction>(f) } },
        ml_flags: METH_FASTCALL | ffi::METH_KEYWORDS,
        ml_doc: Box::leak(doc.into_boxed_c_str()).as_ptr(),
    }));
    // SAFETY: `ty` is a live type object and `def` lives forever.
    let descr = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyDescr_NewMethod(ty.as_ptr().cast(), def))? };
    ty.setattr(name, descr)
}

/// On Python 3.10 and later, install the vectorcall entry points on the writer classes.
pub fn install(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    if py.version_info() < (3, 10) {
        return Ok(());
    }
    for n in [&ROW, &KEY, &CALLBACK] {
        n.intern(py);
    }
    let aw = py.get_type::<PyAppendWriter>();
    replace(&aw, "append", append)?;
    replace(&aw, "append_detached", append_detached)?;
    let uw = py.get_type::<PyUpsertWriter>();
    replace(&uw, "upsert", upsert)?;
    replace(&uw, "delete", delete)?;
    Ok(())
}
