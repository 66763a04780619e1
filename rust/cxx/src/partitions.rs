//! Partitioned tables in C++: partition DDL (`Admin::CreatePartition`, `DropPartition`,
//! `ListPartitions`), read-back of one partition (`Table::ScanPartition`) and the embedded
//! engine's per-partition read-back and faults (`fluss_writer::testing`). Conversions only: the
//! core checks specs and names (`PartitionSpec::resolve`, `INVALID_TABLE` naming the key at
//! fault; `TABLE_NOT_PARTITIONED` for a table without partition keys).
//!
//! The partition of a completion travels in `CompletionHead` (`callbacks::completion_head`) as a
//! borrowed view, and per bucket in `FfiBucketResult::partition`.

use fluss_writer::embedded::Fault;
use fluss_writer::{ClientCode, Error, PartitionSpec, Result, TablePath};

use crate::bridge::ffi::{FfiFault, FfiPartitionInfo, FfiStatus};
use crate::handles::{RConnection, RTable};
use crate::status::{fill, guard, status};
use crate::testing::{engine, RScan};

/// A spec from the parallel key / value lists of a C++ `std::map`.
fn spec(keys: &[String], values: &[String]) -> Result<PartitionSpec> {
    if keys.len() != values.len() {
        return Err(Error::internal("partition spec keys and values differ in length"));
    }
    Ok(PartitionSpec::new(keys.iter().cloned().zip(values.iter().cloned())))
}

#[allow(clippy::ptr_arg)] // cxx passes rust::Vec as &Vec
pub(crate) fn admin_create_partition(
    c: &RConnection,
    db: &str,
    table: &str,
    keys: &Vec<String>,
    values: &Vec<String>,
    ignore_if_exists: bool,
) -> FfiStatus {
    status(guard(|| c.get()?.admin().create_partition(&TablePath::new(db, table)?, &spec(keys, values)?, ignore_if_exists)))
}

#[allow(clippy::ptr_arg)] // cxx passes rust::Vec as &Vec
pub(crate) fn admin_drop_partition(
    c: &RConnection,
    db: &str,
    table: &str,
    keys: &Vec<String>,
    values: &Vec<String>,
    ignore_if_not_exists: bool,
) -> FfiStatus {
    status(guard(|| c.get()?.admin().drop_partition(&TablePath::new(db, table)?, &spec(keys, values)?, ignore_if_not_exists)))
}

#[allow(clippy::ptr_arg)] // cxx passes rust::Vec as &mut Vec
pub(crate) fn admin_list_partitions(c: &RConnection, db: &str, table: &str, out: &mut Vec<FfiPartitionInfo>) -> FfiStatus {
    out.clear();
    status(guard(|| {
        let parts = c.get()?.admin().list_partitions(&TablePath::new(db, table)?)?;
        *out = parts
            .into_iter()
            .map(|p| {
                let (spec_keys, spec_values) = p.spec.entries().iter().cloned().unzip();
                FfiPartitionInfo { partition_id: p.partition_id, partition_name: p.partition_name, spec_keys, spec_values }
            })
            .collect();
        Ok(())
    }))
}

/// `Table::scan_partition`: `bucket` of `partition` from `from_offset` to the high watermark.
pub(crate) fn table_scan_partition(t: &RTable, partition: &str, bucket: i32, from_offset: i64, st: &mut FfiStatus) -> Box<RScan> {
    fill(st, || Box::new(RScan(Vec::new())), || Ok(Box::new(RScan(t.get()?.scan_partition(partition, bucket, from_offset)?))))
}

/// The fault of a C++ `testing::Fault` (kind 0 error, 1 delay, 2 dropped connection).
pub(crate) fn fault(f: &FfiFault) -> Result<Fault> {
    Ok(match f.kind {
        0 => Fault::Error { code: f.code, message: f.message.clone(), times: f.times },
        1 => Fault::Delay { delay: std::time::Duration::from_millis(f.delay_ms), times: f.times },
        2 => Fault::DropConnection { after_apply: f.after_apply, times: f.times },
        k => return Err(Error::client(ClientCode::InvalidConfig, format!("unknown fault kind {k}"))),
    })
}

pub(crate) fn testing_inject_fault_partition(
    c: &RConnection,
    db: &str,
    table: &str,
    partition: &str,
    bucket: i32,
    f: &FfiFault,
) -> FfiStatus {
    status(guard(|| {
        let fault = fault(f)?;
        engine(c)?.faults().inject_at(&TablePath::new(db, table)?, Some(partition), bucket, fault);
        Ok(())
    }))
}

pub(crate) fn testing_scan_partition(
    c: &RConnection,
    db: &str,
    table: &str,
    partition: &str,
    bucket: i32,
    from_offset: i64,
    st: &mut FfiStatus,
) -> Box<RScan> {
    fill(
        st,
        || Box::new(RScan(Vec::new())),
        || Ok(Box::new(RScan(engine(c)?.scan_partition(&TablePath::new(db, table)?, Some(partition), bucket, from_offset)?))),
    )
}

pub(crate) fn testing_high_watermark_partition(
    c: &RConnection,
    db: &str,
    table: &str,
    partition: &str,
    bucket: i32,
    st: &mut FfiStatus,
) -> i64 {
    fill(st, || -1, || engine(c)?.high_watermark_partition(&TablePath::new(db, table)?, Some(partition), bucket))
}
