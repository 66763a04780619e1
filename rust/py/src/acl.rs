//! ACLs in Python: `AclResource`, `AclBinding`, `AclFilter` and `Admin.create_acls` /
//! `list_acls` / `drop_acls` (in `connection.rs`). Thin wrappers around the core's
//! [`fluss_writer::acl`] types: operations are names parsed by the core
//! ([`AclOperation::parse`]: an unknown name is `InvalidConfigError`, before any request), table
//! resources go through the same table-path conversion as every other call.

use fluss_writer::{AclBinding, AclFilter, AclOperation, AclResource};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::connection::table_path;
use crate::convert::{utf8, Name};
use crate::entry::entry_points;
use crate::error::IntoPyResult;

/// An operation given as its name (`"WRITE"`, any case), parsed by the core.
pub struct Operation(pub AclOperation);

impl<'a, 'py> FromPyObject<'a, 'py> for Operation {
    type Error = PyErr;
    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let s = obj.cast::<PyString>().map_err(|_| {
            let t = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
            pyo3::exceptions::PyTypeError::new_err(format!("an ACL operation is a str such as \"WRITE\", not {t}"))
        })?;
        let name = utf8(&s, "an ACL operation", |m| crate::error::client(fluss_writer::ClientCode::InvalidConfig, m))?;
        Ok(Operation(AclOperation::parse(&name).py_err()?))
    }
}

fn resource_repr(r: &AclResource) -> String {
    match r {
        AclResource::Cluster => "AclResource.cluster()".to_string(),
        AclResource::Database(d) => format!("AclResource.database({d:?})"),
        AclResource::Table(t) => format!("AclResource.table({:?})", t.to_string()),
    }
}

/// What an ACL is about: the cluster, a database or a table. Build one with
/// `AclResource.cluster()`, `AclResource.database(name)` or `AclResource.table(path)`.
#[pyclass(name = "AclResource", module = "fluss_writer", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyAclResource {
    pub inner: AclResource,
}

entry_points! {
impl PyAclResource {
    #[staticmethod]
    fn cluster() -> PyAclResource {
        PyAclResource { inner: AclResource::Cluster }
    }
    #[staticmethod]
    fn database(name: Name) -> PyAclResource {
        PyAclResource { inner: AclResource::Database(name.0) }
    }
    #[staticmethod]
    fn table(path: &Bound<'_, PyAny>) -> PyResult<PyAclResource> {
        Ok(PyAclResource { inner: AclResource::Table(table_path(path)?) })
    }
    /// `"CLUSTER"`, `"DATABASE"` or `"TABLE"`.
    #[getter]
    fn r#type(&self) -> &'static str {
        self.inner.type_name()
    }
    /// The name the server stores: `"fluss-cluster"`, the database, or `"database.table"`.
    #[getter]
    fn name(&self) -> String {
        self.inner.name()
    }
    fn __repr__(&self) -> String {
        resource_repr(&self.inner)
    }
}
}

/// One ACL: user `principal` may do `operation` on `resource` from `host` (`"*"`: anywhere).
/// Fluss 0.9 has ALLOW ACLs only.
#[pyclass(name = "AclBinding", module = "fluss_writer", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyAclBinding {
    pub inner: AclBinding,
}

entry_points! {
impl PyAclBinding {
    #[new]
    #[pyo3(
        signature = (resource, principal, operation, host="*".to_string(), principal_type="User".to_string()),
        text_signature = "(resource, principal, operation, host='*', principal_type='User')"
    )]
    fn new(resource: PyRef<'_, PyAclResource>, principal: String, operation: Operation, host: String, principal_type: String) -> PyAclBinding {
        PyAclBinding { inner: AclBinding { resource: resource.inner.clone(), principal, principal_type, host, operation: operation.0 } }
    }
    #[getter]
    fn resource(&self) -> PyAclResource {
        PyAclResource { inner: self.inner.resource.clone() }
    }
    #[getter]
    fn principal(&self) -> String {
        self.inner.principal.clone()
    }
    #[getter]
    fn principal_type(&self) -> String {
        self.inner.principal_type.clone()
    }
    #[getter]
    fn host(&self) -> String {
        self.inner.host.clone()
    }
    /// The operation's name (`"WRITE"`).
    #[getter]
    fn operation(&self) -> &'static str {
        self.inner.operation.name()
    }
    fn __repr__(&self) -> String {
        let b = &self.inner;
        let r = resource_repr(&b.resource);
        format!("AclBinding({r}, {:?}, {:?}, host={:?}, principal_type={:?})", b.principal, b.operation.name(), b.host, b.principal_type)
    }
}
}

/// Which ACLs `Admin.list_acls` and `Admin.drop_acls` act on: a field left None (or operation
/// `"ANY"`) matches every ACL; set fields must all match. `AclFilter()` matches every ACL.
#[pyclass(name = "AclFilter", module = "fluss_writer", frozen)]
#[derive(Clone)]
pub struct PyAclFilter {
    pub inner: AclFilter,
}

entry_points! {
impl PyAclFilter {
    #[new]
    #[pyo3(signature = (resource=None, principal=None, host=None, operation=None))]
    fn new(resource: Option<PyRef<'_, PyAclResource>>, principal: Option<String>, host: Option<String>, operation: Option<Operation>) -> PyAclFilter {
        PyAclFilter {
            inner: AclFilter {
                resource: resource.map(|r| r.inner.clone()),
                principal,
                host,
                operation: operation.map(|o| o.0),
            },
        }
    }
    #[getter]
    fn resource(&self) -> Option<PyAclResource> {
        self.inner.resource.clone().map(|inner| PyAclResource { inner })
    }
    #[getter]
    fn principal(&self) -> Option<String> {
        self.inner.principal.clone()
    }
    #[getter]
    fn host(&self) -> Option<String> {
        self.inner.host.clone()
    }
    /// The operation's name; `"ANY"` when not set.
    #[getter]
    fn operation(&self) -> &'static str {
        self.inner.operation.unwrap_or(AclOperation::Any).name()
    }
    fn __repr__(&self) -> String {
        let f = &self.inner;
        let r = f.resource.as_ref().map_or("None".to_string(), resource_repr);
        let op = f.operation.unwrap_or(AclOperation::Any).name();
        format!("AclFilter(resource={r}, principal={:?}, host={:?}, operation={op:?})", f.principal, f.host)
    }
}
}
