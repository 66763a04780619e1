//! What Fluss 1.0 changed in authorization, against a real 1.0-line cluster whose client
//! listener takes SASL/PLAIN and whose authorizer is on (apache/fluss#3680, #3298):
//! creating or dropping ACLs needs ALL (0.9.1: ALTER) on each ACL's resource (a table's: its
//! database), and `database_exists` / `table_exists` answer `false` to a principal without
//! DESCRIBE (0.9.1 answers without checking).
//!
//! Start the cluster (about 25 s; users `admin`, a super user, and `fluss`):
//!
//! ```text
//! export "$(FLUSS_VERSION=1.0-SNAPSHOT FLUSS_SASL=1 FLUSS_RUN_DIR=$PWD/.fluss/run-sasl-v1 \
//!   FLUSS_COORDINATOR_PORT=9600 FLUSS_TABLET_PORT=9601 FLUSS_ZK_PORT=9610 \
//!   FLUSS_OUT_VAR=FLUSS_SASL_V1_BOOTSTRAP_SERVERS scripts/fluss-cluster.sh start | tail -n 1)"
//! ```
//!
//! `make test` starts it. Without `FLUSS_SASL_V1_BOOTSTRAP_SERVERS` the tests print a banner and
//! pass, and fail under CI=true.

mod cluster_support;

use std::time::{Duration, Instant};

use cluster_support::{bounded, create_in, unique};
use fluss_writer::{
    AclBinding, AclFilter, AclOperation, AclResource, Config, Connection, DataType, Error, FlussCode, Schema, TableDescriptor,
};

const ADMIN_PASSWORD: &str = "admin-secret";
const USER_PASSWORD: &str = "fluss-secret";

fn connect(bootstrap: &str, user: &str, password: &str) -> Connection {
    Connection::connect(
        Config::from_pairs([
            ("bootstrap.servers", bootstrap),
            ("client.request-timeout", "10s"),
            ("client.security.protocol", "SASL"),
            ("client.security.sasl.username", user),
            ("client.security.sasl.password", password),
        ])
        .unwrap(),
    )
    .unwrap()
}

/// Run `f` until it returns something other than an authorization error, or 20 s have passed
/// (a tablet server learns of a new ACL asynchronously, through ZooKeeper).
fn until_authorized<T>(mut f: impl FnMut() -> Result<T, Error>) -> Result<T, Error> {
    let start = Instant::now();
    loop {
        match f() {
            Err(e) if e.code() == FlussCode::AUTHORIZATION_EXCEPTION && start.elapsed() < Duration::from_secs(20) => {
                std::thread::sleep(Duration::from_millis(200))
            }
            other => return other,
        }
    }
}

/// Run `f` until it returns `want`, or 20 s have passed; returns the last answer.
fn until_eq(want: bool, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        let got = f();
        if got == want || start.elapsed() >= Duration::from_secs(20) {
            return got;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn assert_needs_all(e: &Error, what: &str) {
    eprintln!("{what} without ALL, as the user sees it: {e}");
    assert_eq!(e.code(), FlussCode::AUTHORIZATION_EXCEPTION, "{e}");
    assert!(!e.is_retriable(), "{e}");
    assert!(e.message().contains("needs the ALL operation") && e.message().contains("Fluss 1.0"), "the message names ALL: {e}");
}

fn db_and_table(admin: &Connection, prefix: &str) -> (String, fluss_writer::TablePath) {
    let db = unique(prefix);
    admin.admin().create_database(&db, false).unwrap();
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("msg", DataType::String).build().unwrap();
    let path = create_in(admin, &db, "t", &TableDescriptor::new(schema).with_bucket_count(1));
    (db, path)
}

#[test]
fn creating_and_dropping_acls_needs_all_alter_is_not_enough() {
    let Some(b) = cluster_support::sasl_v1_bootstrap("sasl_v1_acls_need_all") else { return };
    bounded("sasl_v1_acls_need_all", Duration::from_secs(150), move || {
        let admin = connect(&b, "admin", ADMIN_PASSWORD);
        let (db, path) = db_and_table(&admin, "fw_perm_all");
        let database = AclResource::Database(db.clone());
        let table = AclResource::Table(path.clone());
        // ALTER on the database: what a 0.9.1 server asks for.
        admin.admin().create_acls(&[AclBinding::allow(database.clone(), "fluss", AclOperation::Alter)]).unwrap();

        let user = connect(&b, "fluss", USER_PASSWORD);
        let read = AclBinding::allow(table.clone(), "fluss", AclOperation::Read);
        let e = user.admin().create_acls(std::slice::from_ref(&read)).unwrap_err();
        assert_needs_all(&e, "create ACLs");
        let on_db = AclFilter { resource: Some(database.clone()), ..AclFilter::any() };
        let e = user.admin().drop_acls(std::slice::from_ref(&on_db)).unwrap_err();
        assert_needs_all(&e, "drop ACLs");
        // Nothing was created or dropped.
        assert_eq!(admin.admin().list_acls(&on_db).unwrap(), vec![AclBinding::allow(database.clone(), "fluss", AclOperation::Alter)]);
        let on_table = AclFilter { resource: Some(table.clone()), ..AclFilter::any() };
        assert!(admin.admin().list_acls(&on_table).unwrap().is_empty());

        // ALL on the database: the user may now manage the ACLs of its tables.
        admin.admin().create_acls(&[AclBinding::allow(database.clone(), "fluss", AclOperation::All)]).unwrap();
        until_authorized(|| user.admin().create_acls(std::slice::from_ref(&read))).unwrap();
        assert_eq!(admin.admin().list_acls(&on_table).unwrap(), vec![read.clone()]);
        let dropped = until_authorized(|| user.admin().drop_acls(std::slice::from_ref(&on_table))).unwrap();
        assert_eq!(dropped, vec![read]);

        admin.admin().drop_acls(&[on_db]).unwrap();
        admin.admin().drop_database(&db, true, true).unwrap();
    });
}

#[test]
fn database_and_table_exists_answer_false_without_describe() {
    let Some(b) = cluster_support::sasl_v1_bootstrap("sasl_v1_exists") else { return };
    bounded("sasl_v1_exists", Duration::from_secs(150), move || {
        let admin = connect(&b, "admin", ADMIN_PASSWORD);
        let (db, path) = db_and_table(&admin, "fw_perm_exists");
        assert!(admin.admin().database_exists(&db).unwrap());
        assert!(admin.admin().table_exists(&path).unwrap());

        let user = connect(&b, "fluss", USER_PASSWORD);
        // Both exist, but the user has no DESCRIBE: false, not an error.
        assert!(!user.admin().database_exists(&db).unwrap(), "database_exists without DESCRIBE");
        assert!(!user.admin().table_exists(&path).unwrap(), "table_exists without DESCRIBE");

        // DESCRIBE on the table: the table shows, the database still does not.
        admin.admin().create_acls(&[AclBinding::allow(AclResource::Table(path.clone()), "fluss", AclOperation::Describe)]).unwrap();
        assert!(until_eq(true, || user.admin().table_exists(&path).unwrap()), "table_exists with DESCRIBE on the table");
        assert!(!user.admin().database_exists(&db).unwrap(), "DESCRIBE on a table does not show its database");

        // READ on the database implies DESCRIBE on it (and on its tables).
        admin.admin().create_acls(&[AclBinding::allow(AclResource::Database(db.clone()), "fluss", AclOperation::Read)]).unwrap();
        assert!(until_eq(true, || user.admin().database_exists(&db).unwrap()), "database_exists with READ on the database");
        // A table that does not exist is still false.
        let missing = fluss_writer::TablePath::new(&db, "no_such_table").unwrap();
        assert!(!user.admin().table_exists(&missing).unwrap());

        let mine = [AclResource::Table(path.clone()), AclResource::Database(db.clone())];
        admin.admin().drop_acls(&mine.map(|r| AclFilter { resource: Some(r), ..AclFilter::any() })).unwrap();
        admin.admin().drop_database(&db, true, true).unwrap();
    });
}
