//! SASL/PLAIN against a real Fluss 0.9.1 cluster whose client listener requires it and whose
//! authorizer is on (`FLUSS_SASL=1 scripts/fluss-cluster.sh start`, which prints
//! `FLUSS_SASL_BOOTSTRAP_SERVERS=...`; users `admin` (super user) and `fluss`).
//!
//! Without the variable the tests print a banner and pass, except under `CI=true`.

mod cluster_support;

use std::time::{Duration, Instant};

use cluster_support::{bounded, create_in, recorder, unique};
use fluss_writer::{row, Config, Connection, DataType, FlussCode, Schema, TableDescriptor, WriterOptions};

const ADMIN_PASSWORD: &str = "admin-secret";
const USER_PASSWORD: &str = "fluss-secret";
const WRONG_PASSWORD: &str = "not-the-admin-secret-4711";

fn sasl_bootstrap(test: &str) -> Option<String> {
    match std::env::var("FLUSS_SASL_BOOTSTRAP_SERVERS") {
        Ok(s) if !s.trim().is_empty() => Some(s),
        _ => {
            let ci = std::env::var("CI").map(|v| v.eq_ignore_ascii_case("true") || v == "1").unwrap_or(false);
            assert!(!ci, "FLUSS_SASL_BOOTSTRAP_SERVERS is not set but CI=true: {test} must run against the SASL cluster");
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "\n!!! {test}: FLUSS_SASL_BOOTSTRAP_SERVERS is not set: NOT testing SASL against a real cluster.\n\
                 !!! Run: export \"$(FLUSS_SASL=1 FLUSS_RUN_DIR=$PWD/.fluss/run-sasl FLUSS_COORDINATOR_PORT=9223 \
                 FLUSS_TABLET_PORT=9224 FLUSS_ZK_PORT=2281 scripts/fluss-cluster.sh start | tail -n 1)\""
            );
            None
        }
    }
}

fn config(bootstrap: &str, extra: &[(&str, &str)]) -> Config {
    let mut pairs: Vec<(&str, &str)> = vec![
        ("bootstrap.servers", bootstrap),
        ("client.writer.batch-timeout", "5ms"),
        ("client.request-timeout", "10s"),
        ("client.writer.delivery-timeout", "30s"),
    ];
    pairs.extend_from_slice(extra);
    Config::from_pairs(pairs).unwrap()
}

fn as_user<'a>(user: &'a str, password: &'a str) -> [(&'a str, &'a str); 3] {
    [("client.security.protocol", "SASL"), ("client.security.sasl.username", user), ("client.security.sasl.password", password)]
}

fn write_and_read_back(conn: &Connection, prefix: &str) {
    conn.admin().create_database("fw_sasl", true).unwrap();
    let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("msg", DataType::String).build().unwrap();
    let path = create_in(conn, "fw_sasl", prefix, &TableDescriptor::new(schema).with_bucket_count(2));
    let w = conn.get_table(&path).unwrap().new_append().unwrap().create_writer(WriterOptions::default()).unwrap();
    let results: Vec<_> = (0..100i64).map(|i| w.append(&row![i, format!("m{i}")]).unwrap()).collect();
    w.flush(None).unwrap();
    for r in results {
        let c = r.try_get().expect("completed after flush");
        assert!(c.error.is_none(), "{:?}", c.error);
    }
    let table = conn.get_table(&path).unwrap();
    let mut ids: Vec<i64> = (0..2)
        .flat_map(|b| table.scan(b, 0).unwrap())
        .map(|r| match r.row[0] {
            fluss_writer::Value::BigInt(v) => v,
            ref other => panic!("{other:?}"),
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..100).collect::<Vec<_>>());
}

#[test]
fn sasl_plain_with_username_and_password_keys_writes_and_reads_back() {
    let Some(b) = sasl_bootstrap("sasl_plain_keys") else { return };
    bounded("sasl_plain_keys", Duration::from_secs(120), move || {
        let conn = Connection::connect(config(&b, &as_user("admin", ADMIN_PASSWORD))).unwrap();
        write_and_read_back(&conn, "sasl_keys");
        conn.close(None).unwrap();
    });
}

#[test]
fn sasl_plain_with_a_jaas_config_writes_and_reads_back() {
    let Some(b) = sasl_bootstrap("sasl_plain_jaas") else { return };
    bounded("sasl_plain_jaas", Duration::from_secs(120), move || {
        let jaas =
            format!(r#"org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required username="admin" password="{ADMIN_PASSWORD}";"#);
        let conn =
            Connection::connect(config(&b, &[("client.security.protocol", "sasl"), ("client.security.sasl.jaas.config", &jaas)])).unwrap();
        write_and_read_back(&conn, "sasl_jaas");
    });
}

#[test]
fn a_wrong_password_fails_connect_once_clearly_and_never_shows_the_password() {
    let Some(b) = sasl_bootstrap("sasl_wrong_password") else { return };
    let log = recorder();
    bounded("sasl_wrong_password", Duration::from_secs(60), move || {
        let t = Instant::now();
        let e = Connection::connect(config(&b, &as_user("admin", WRONG_PASSWORD))).err().expect("a wrong password must not connect");
        assert!(t.elapsed() < Duration::from_secs(10), "failed after {:?}, beyond the request timeout", t.elapsed());
        eprintln!("wrong password, as the user sees it: {e}");
        assert_eq!(e.code(), FlussCode::AUTHENTICATE_EXCEPTION, "{e}");
        assert!(!e.is_retriable(), "{e}");
        assert!(e.message().contains("admin") && e.message().to_ascii_lowercase().contains("auth"), "{e}");
        let everything = format!("{e} {e:?}");
        assert!(!everything.contains(WRONG_PASSWORD), "the error shows the password: {everything}");
        assert_eq!(log.count(|l| l.contains(WRONG_PASSWORD)), 0, "a log line shows the password");
        // One attempt: connect does not retry a refused authentication.
        assert!(log.count(|l| l.contains("bootstrap server") && l.contains("authentication")) <= 1);
    });
}

#[test]
fn no_password_in_any_log_line_of_a_successful_session() {
    let Some(b) = sasl_bootstrap("sasl_no_leak") else { return };
    let log = recorder();
    bounded("sasl_no_leak", Duration::from_secs(120), move || {
        let cfg = config(&b, &as_user("admin", ADMIN_PASSWORD));
        assert!(!format!("{cfg:?}").contains(ADMIN_PASSWORD), "Debug of the configuration shows the password");
        let conn = Connection::connect(cfg).unwrap();
        write_and_read_back(&conn, "sasl_no_leak");
        assert!(!format!("{:?}", conn.config()).contains(ADMIN_PASSWORD));
        assert_eq!(log.count(|l| l.contains(ADMIN_PASSWORD)), 0, "a log line shows the password");
        assert!(log.count(|l| l.contains("authenticated as")) >= 1, "the recorder saw the session's debug lines");
    });
}

#[test]
fn a_plaintext_client_at_a_sasl_listener_gets_a_clear_non_retriable_error() {
    let Some(b) = sasl_bootstrap("sasl_plaintext_client") else { return };
    bounded("sasl_plaintext_client", Duration::from_secs(60), move || {
        let t = Instant::now();
        let e = Connection::connect(config(&b, &[])).err().expect("an unauthenticated client must not connect");
        eprintln!("plaintext client at a SASL listener, as the user sees it: {e}");
        assert!(t.elapsed() < Duration::from_secs(10), "failed after {:?}", t.elapsed());
        assert_eq!(e.code(), FlussCode::AUTHENTICATE_EXCEPTION, "{e}");
        assert!(!e.is_retriable(), "{e}");
    });
}

#[test]
fn a_sasl_client_at_a_plaintext_listener_gets_a_clear_non_retriable_error() {
    // The plaintext cluster of the other tests.
    let Some(plain) = cluster_support::bootstrap("sasl_client_plaintext_listener") else { return };
    bounded("sasl_client_plaintext_listener", Duration::from_secs(60), move || {
        let t = Instant::now();
        match Connection::connect(config(&plain, &as_user("admin", ADMIN_PASSWORD))) {
            Err(e) => {
                eprintln!("SASL client at a plaintext listener, as the user sees it: {e}");
                assert!(t.elapsed() < Duration::from_secs(15), "failed after {:?}", t.elapsed());
                assert!(!e.is_retriable(), "{e}");
                assert!(e.message().contains("SASL") || e.message().to_ascii_lowercase().contains("auth"), "{e}");
                assert!(!format!("{e:?}").contains(ADMIN_PASSWORD));
            }
            Ok(_) => panic!("a SASL client accepted a plaintext listener without saying so"),
        }
    });
}

#[test]
fn a_user_without_permission_gets_the_servers_authorization_error() {
    let Some(b) = sasl_bootstrap("sasl_no_permission") else { return };
    bounded("sasl_no_permission", Duration::from_secs(60), move || {
        let conn = Connection::connect(config(&b, &as_user("fluss", USER_PASSWORD))).unwrap();
        let e = conn.admin().create_database(&unique("fw_denied"), false).unwrap_err();
        eprintln!("no permission, as the user sees it: {e}");
        assert_eq!(e.code(), FlussCode::AUTHORIZATION_EXCEPTION, "{e}");
        assert!(!e.is_retriable(), "{e}");
    });
}

#[test]
fn acls_grant_write_to_a_user_who_could_not_write_before() {
    let Some(b) = sasl_bootstrap("sasl_acls") else { return };
    bounded("sasl_acls", Duration::from_secs(150), move || {
        use fluss_writer::{AclBinding, AclFilter, AclOperation, AclResource};
        let admin = Connection::connect(config(&b, &as_user("admin", ADMIN_PASSWORD))).unwrap();
        admin.admin().create_database("fw_sasl", true).unwrap();
        let schema = Schema::builder().column_not_null("id", DataType::BigInt).column("msg", DataType::String).build().unwrap();
        let path = create_in(&admin, "fw_sasl", "acl", &TableDescriptor::new(schema).with_bucket_count(1));
        let table = AclResource::Table(path.clone());
        // Reading the table's metadata, but no WRITE yet.
        admin.admin().create_acls(&[AclBinding::allow(table.clone(), "fluss", AclOperation::Read)]).unwrap();
        let mine = AclFilter { resource: Some(table.clone()), ..AclFilter::any() };
        let listed = admin.admin().list_acls(&mine).unwrap();
        assert_eq!(listed, vec![AclBinding::allow(table.clone(), "fluss", AclOperation::Read)]);

        let user = Connection::connect(config(&b, &as_user("fluss", USER_PASSWORD))).unwrap();
        let denied = user.get_table(&path).and_then(|t| t.new_append()).and_then(|a| a.create_writer(WriterOptions::default()));
        match denied {
            Err(e) => {
                eprintln!("no WRITE, create_writer as the user sees it: {e}");
                assert_eq!(e.code(), FlussCode::AUTHORIZATION_EXCEPTION, "{e}");
            }
            Ok(w) => {
                let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
                for i in 0..3i64 {
                    let s = seen.clone();
                    w.append_with_callback(&row![i, "denied"], move |c| s.lock().unwrap().push(c.error.clone())).unwrap();
                }
                let t = Instant::now();
                w.flush(Some(Duration::from_secs(40))).unwrap();
                let seen = seen.lock().unwrap();
                eprintln!("no WRITE, callbacks see: {:?} after {:?}", seen.first(), t.elapsed());
                assert_eq!(seen.len(), 3, "every callback ran exactly once");
                for e in seen.iter() {
                    let e = e.as_ref().expect("a write without permission must fail");
                    assert_eq!(e.code(), FlussCode::AUTHORIZATION_EXCEPTION, "{e}");
                    assert!(!e.is_retriable());
                }
                assert!(t.elapsed() < Duration::from_secs(20), "not retried until the delivery timeout: {:?}", t.elapsed());
            }
        }

        admin.admin().create_acls(&[AclBinding::allow(table.clone(), "fluss", AclOperation::Write)]).unwrap();
        // The servers learn of a new ACL asynchronously (through ZooKeeper): until then the user
        // may be refused, with AUTHORIZATION_EXCEPTION, even DESCRIBE.
        let granted_at = Instant::now();
        let outcome = loop {
            let attempt =
                user.get_table(&path).and_then(|t| t.new_append()).and_then(|a| a.create_writer(WriterOptions::default())).and_then(|w| {
                    let c = w.append(&row![42i64, "granted"])?.wait(Some(Duration::from_secs(30)))?;
                    c.error.map_or(Ok(()), Err)
                });
            match attempt {
                Err(e) if e.code() == FlussCode::AUTHORIZATION_EXCEPTION && granted_at.elapsed() < Duration::from_secs(20) => {
                    std::thread::sleep(Duration::from_millis(200))
                }
                other => break other,
            }
        };
        eprintln!("WRITE took effect after {:?}", granted_at.elapsed());
        outcome.unwrap();

        let dropped = admin.admin().drop_acls(std::slice::from_ref(&mine)).unwrap();
        assert_eq!(dropped.len(), 2, "{dropped:?}");
        assert!(admin.admin().list_acls(&mine).unwrap().is_empty());
    });
}
