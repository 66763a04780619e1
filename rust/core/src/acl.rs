//! Access control lists as Fluss 0.9 and 1.0 have them (1.0 asks for ALL, not ALTER, to manage
//! them: see [`Admin::create_acls`](crate::Admin::create_acls)): who (a principal) may do what (an operation) on
//! which resource (the cluster, a database or a table), from which host. Managed through
//! [`Admin::create_acls`](crate::Admin::create_acls), [`list_acls`](crate::Admin::list_acls) and
//! [`drop_acls`](crate::Admin::drop_acls) on a cluster whose authorizer is on; the embedded engine
//! has no authorizer and answers `SECURITY_DISABLED_EXCEPTION` (47).

use std::fmt;

use crate::error::{Error, Result};
use crate::metadata::TablePath;
use crate::wire::proto;

/// What an ACL is about. Table names are `database.table`, as the server stores them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AclResource {
    /// The whole cluster (the server names it `fluss-cluster`): creating databases, for example.
    Cluster,
    /// A database: the ACL covers it and its tables.
    Database(String),
    /// One table.
    Table(TablePath),
}

/// The resource name the server uses for the cluster.
pub const CLUSTER_RESOURCE_NAME: &str = "fluss-cluster";

impl AclResource {
    fn type_code(&self) -> i32 {
        match self {
            AclResource::Cluster => 2,
            AclResource::Database(_) => 3,
            AclResource::Table(_) => 4,
        }
    }

    /// `CLUSTER`, `DATABASE` or `TABLE`, as Fluss names the resource types.
    pub fn type_name(&self) -> &'static str {
        match self {
            AclResource::Cluster => "CLUSTER",
            AclResource::Database(_) => "DATABASE",
            AclResource::Table(_) => "TABLE",
        }
    }

    /// The resource name the server stores: `fluss-cluster`, the database, or `database.table`.
    pub fn name(&self) -> String {
        match self {
            AclResource::Cluster => CLUSTER_RESOURCE_NAME.to_string(),
            AclResource::Database(d) => d.clone(),
            AclResource::Table(t) => format!("{}.{}", t.database, t.table),
        }
    }

    fn from_pb(code: i32, name: &str) -> Result<AclResource> {
        Ok(match code {
            2 => AclResource::Cluster,
            3 => AclResource::Database(name.to_string()),
            4 => {
                let (db, table) =
                    name.split_once('.').ok_or_else(|| Error::protocol(format!("table ACL resource {name:?} is not database.table")))?;
                AclResource::Table(TablePath { database: db.to_string(), table: table.to_string() })
            }
            c => return Err(Error::protocol(format!("unknown ACL resource type {c}"))),
        })
    }
}

/// An operation an ACL allows. `Any` only in filters; `All` allows every operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AclOperation {
    /// Matches any operation (filters only).
    Any,
    /// Every operation.
    All,
    /// Read (scan, lookup, fetch).
    Read,
    /// Write (append, upsert, delete).
    Write,
    /// Create databases or tables.
    Create,
    /// Drop databases or tables.
    Drop,
    /// Alter tables.
    Alter,
    /// Describe (metadata, list).
    Describe,
}

impl AclOperation {
    const ALL_OPS: [AclOperation; 8] = [
        AclOperation::Any,
        AclOperation::All,
        AclOperation::Read,
        AclOperation::Write,
        AclOperation::Create,
        AclOperation::Drop,
        AclOperation::Alter,
        AclOperation::Describe,
    ];

    fn code(self) -> i32 {
        Self::ALL_OPS.iter().position(|o| *o == self).map_or(1, |i| i as i32 + 1)
    }

    fn from_code(c: i32) -> Result<AclOperation> {
        usize::try_from(c - 1)
            .ok()
            .and_then(|i| Self::ALL_OPS.get(i).copied())
            .ok_or_else(|| Error::protocol(format!("unknown ACL operation {c}")))
    }

    /// Upper-case name as Fluss spells it (`WRITE`).
    pub fn name(self) -> &'static str {
        ["ANY", "ALL", "READ", "WRITE", "CREATE", "DROP", "ALTER", "DESCRIBE"][self.code() as usize - 1]
    }

    /// Parse a name, case-insensitively (bindings take strings).
    pub fn parse(s: &str) -> Result<AclOperation> {
        Self::ALL_OPS.iter().copied().find(|o| o.name().eq_ignore_ascii_case(s.trim())).ok_or_else(|| {
            Error::client(
                crate::ClientCode::InvalidConfig,
                format!("unknown ACL operation {s:?}: expected one of ANY, ALL, READ, WRITE, CREATE, DROP, ALTER, DESCRIBE"),
            )
        })
    }
}

impl fmt::Display for AclOperation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A principal type as the server's default authorizer knows it.
pub const USER: &str = "User";
/// The host of an ACL that applies from anywhere.
pub const ANY_HOST: &str = "*";
/// ALLOW, the one permission type Fluss 0.9 has (2; 1 = ANY, in filters).
const ALLOW: i32 = 2;
const ANY: i32 = 1;

/// One ACL: `principal` (of type [`USER`] unless set otherwise) may do `operation` on `resource`
/// from `host` ([`ANY_HOST`] by default).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AclBinding {
    /// What the permission is on.
    pub resource: AclResource,
    /// The principal's name (e.g. `fluss`).
    pub principal: String,
    /// The principal's type (`User`).
    pub principal_type: String,
    /// The client host the permission applies to (`*`: any).
    pub host: String,
    /// The operation it allows.
    pub operation: AclOperation,
}

impl AclBinding {
    /// Allow user `principal` to do `operation` on `resource` from any host.
    pub fn allow(resource: AclResource, principal: impl Into<String>, operation: AclOperation) -> AclBinding {
        AclBinding { resource, principal: principal.into(), principal_type: USER.into(), host: ANY_HOST.into(), operation }
    }

    pub(crate) fn to_pb(&self) -> proto::PbAclInfo {
        proto::PbAclInfo {
            resource_name: self.resource.name(),
            resource_type: self.resource.type_code(),
            principal_name: self.principal.clone(),
            principal_type: self.principal_type.clone(),
            host: self.host.clone(),
            operation_type: self.operation.code(),
            permission_type: ALLOW,
        }
    }

    pub(crate) fn from_pb(p: &proto::PbAclInfo) -> Result<AclBinding> {
        Ok(AclBinding {
            resource: AclResource::from_pb(p.resource_type, &p.resource_name)?,
            principal: p.principal_name.clone(),
            principal_type: p.principal_type.clone(),
            host: p.host.clone(),
            operation: AclOperation::from_code(p.operation_type)?,
        })
    }
}

/// Which ACLs to list or drop: every field left `None` (or [`AclOperation::Any`]) matches all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AclFilter {
    /// Only bindings on this resource (`None`: any).
    pub resource: Option<AclResource>,
    /// Only bindings of this principal name (`None`: any).
    pub principal: Option<String>,
    /// Only bindings for this host (`None`: any).
    pub host: Option<String>,
    /// Only bindings of this operation (`None`: any).
    pub operation: Option<AclOperation>,
}

impl AclFilter {
    /// Matches every ACL.
    pub fn any() -> AclFilter {
        AclFilter::default()
    }

    pub(crate) fn to_pb(&self) -> proto::PbAclFilter {
        proto::PbAclFilter {
            resource_name: self.resource.as_ref().map(AclResource::name),
            resource_type: self.resource.as_ref().map_or(ANY, AclResource::type_code),
            principal_name: self.principal.clone(),
            principal_type: self.principal.as_ref().map(|_| USER.to_string()),
            host: self.host.clone(),
            operation_type: self.operation.unwrap_or(AclOperation::Any).code(),
            permission_type: ANY,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_flusss() {
        assert_eq!(AclOperation::Any.code(), 1);
        assert_eq!(AclOperation::Write.code(), 4);
        assert_eq!(AclOperation::Describe.code(), 8);
        for op in AclOperation::ALL_OPS {
            assert_eq!(AclOperation::from_code(op.code()).unwrap(), op);
            assert_eq!(AclOperation::parse(&op.name().to_lowercase()).unwrap(), op);
        }
        assert!(AclOperation::from_code(0).is_err() && AclOperation::from_code(9).is_err());
        let t = AclResource::Table(TablePath::new("db", "t").unwrap());
        let b = AclBinding::allow(t.clone(), "alice", AclOperation::Write);
        let pb = b.to_pb();
        assert_eq!((pb.resource_name.as_str(), pb.resource_type, pb.operation_type, pb.permission_type), ("db.t", 4, 4, 2));
        assert_eq!(AclBinding::from_pb(&pb).unwrap(), b);
        let f = AclFilter { principal: Some("alice".into()), ..AclFilter::any() }.to_pb();
        assert_eq!((f.resource_type, f.operation_type, f.principal_type.as_deref()), (1, 1, Some("User")));
    }
}
