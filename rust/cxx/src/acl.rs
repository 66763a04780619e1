//! ACLs across the bridge: `Admin::CreateAcls`, `ListAcls` and `DropAcls` of the C++ API. Each
//! function converts the C++ structs to the core's [`AclBinding`] / [`AclFilter`], calls the
//! core's `Admin` once and converts the answer back. Every rule (codes on the wire, what a filter
//! matches, the server's refusals) is the core's.

use fluss_writer::{AclBinding, AclFilter, AclOperation, AclResource, ClientCode, Error, Result, TablePath};

use crate::bridge::ffi::{FfiAclBinding, FfiAclFilter, FfiStatus};
use crate::handles::RConnection;
use crate::status::{guard, status};

// The numbers of the C++ enums `AclResourceType` and `AclOperation` (Fluss's wire codes, listed in
// the header): conversions only.
const CLUSTER: i32 = 2;
const DATABASE: i32 = 3;
const TABLE: i32 = 4;

const OPERATIONS: [(i32, AclOperation); 8] = [
    (1, AclOperation::Any),
    (2, AclOperation::All),
    (3, AclOperation::Read),
    (4, AclOperation::Write),
    (5, AclOperation::Create),
    (6, AclOperation::Drop),
    (7, AclOperation::Alter),
    (8, AclOperation::Describe),
];

fn operation(code: i32) -> Result<AclOperation> {
    OPERATIONS.iter().find(|(c, _)| *c == code).map(|(_, o)| *o).ok_or_else(|| {
        Error::client(ClientCode::InvalidConfig, format!("unknown AclOperation value {code}: expected 1 (Any) .. 8 (Describe)"))
    })
}

fn operation_code(op: AclOperation) -> i32 {
    OPERATIONS.iter().find(|(_, o)| *o == op).map_or(0, |(c, _)| *c)
}

fn resource(kind: i32, database: &str, table: &str) -> Result<AclResource> {
    match kind {
        CLUSTER => Ok(AclResource::Cluster),
        DATABASE => Ok(AclResource::Database(database.to_string())),
        TABLE => Ok(AclResource::Table(TablePath::new(database, table)?)),
        k => Err(Error::client(
            ClientCode::InvalidConfig,
            format!("unknown AclResourceType value {k}: expected 2 (Cluster), 3 (Database) or 4 (Table)"),
        )),
    }
}

fn binding(b: &FfiAclBinding) -> Result<AclBinding> {
    Ok(AclBinding {
        resource: resource(b.resource_type, &b.database, &b.table)?,
        principal: b.principal.clone(),
        principal_type: b.principal_type.clone(),
        host: b.host.clone(),
        operation: operation(b.operation)?,
    })
}

fn filter(f: &FfiAclFilter) -> Result<AclFilter> {
    Ok(AclFilter {
        resource: if f.has_resource { Some(resource(f.resource_type, &f.database, &f.table)?) } else { None },
        principal: f.has_principal.then(|| f.principal.clone()),
        host: f.has_host.then(|| f.host.clone()),
        operation: Some(operation(f.operation)?),
    })
}

fn to_ffi(b: AclBinding) -> FfiAclBinding {
    let (resource_type, database, table) = match b.resource {
        AclResource::Cluster => (CLUSTER, String::new(), String::new()),
        AclResource::Database(d) => (DATABASE, d, String::new()),
        AclResource::Table(t) => (TABLE, t.database, t.table),
    };
    FfiAclBinding {
        resource_type,
        database,
        table,
        principal: b.principal,
        principal_type: b.principal_type,
        host: b.host,
        operation: operation_code(b.operation),
    }
}

#[allow(clippy::ptr_arg)] // cxx passes rust::Vec as &Vec
pub(crate) fn admin_create_acls(c: &RConnection, acls: &Vec<FfiAclBinding>) -> FfiStatus {
    status(guard(|| {
        let acls = acls.iter().map(binding).collect::<Result<Vec<_>>>()?;
        c.get()?.admin().create_acls(&acls)
    }))
}

pub(crate) fn admin_list_acls(c: &RConnection, f: &FfiAclFilter, out: &mut Vec<FfiAclBinding>) -> FfiStatus {
    status(guard(|| {
        out.clear();
        let listed = c.get()?.admin().list_acls(&filter(f)?)?;
        out.extend(listed.into_iter().map(to_ffi));
        Ok(())
    }))
}

#[allow(clippy::ptr_arg)] // cxx passes rust::Vec as &Vec
pub(crate) fn admin_drop_acls(c: &RConnection, filters: &Vec<FfiAclFilter>, dropped: &mut Vec<FfiAclBinding>) -> FfiStatus {
    status(guard(|| {
        dropped.clear();
        let filters = filters.iter().map(filter).collect::<Result<Vec<_>>>()?;
        let gone = c.get()?.admin().drop_acls(&filters)?;
        dropped.extend(gone.into_iter().map(to_ffi));
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_values_round_trip_and_unknown_ones_are_invalid_config() {
        for (code, op) in OPERATIONS {
            assert_eq!(operation(code).unwrap(), op);
            assert_eq!(operation_code(op), code);
            // The C++ numbers are Fluss's wire codes, as the header says.
            assert_eq!(AclOperation::parse(op.name()).unwrap(), op);
        }
        assert_eq!(operation(0).unwrap_err().code(), ClientCode::InvalidConfig as i32);
        assert_eq!(operation(9).unwrap_err().code(), ClientCode::InvalidConfig as i32);
        assert_eq!(resource(1, "", "").unwrap_err().code(), ClientCode::InvalidConfig as i32);
        let t = resource(TABLE, "db", "t").unwrap();
        let b = AclBinding::allow(t, "alice", AclOperation::Write);
        let f = to_ffi(b.clone());
        assert_eq!((f.resource_type, f.database.as_str(), f.table.as_str(), f.operation), (TABLE, "db", "t", 4));
        assert_eq!(binding(&f).unwrap(), b);
    }
}
