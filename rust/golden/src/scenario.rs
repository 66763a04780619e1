//! The scenario model (deserialized after the file passed the JSON Schema) and the rules a JSON
//! Schema cannot state: unique ids, writer names, code names, row types, stated buckets.

use std::collections::{BTreeMap, HashMap, HashSet};

use fluss_writer::partition::{PartitionRouter, PartitionSpec};
use fluss_writer::wire::{bucket_for_key, encode_key};
use fluss_writer::{ClientCode, DataType, FlussCode, Schema as TableSchema, TableDescriptor, Value};
use serde::Deserialize;
use serde_json::Value as Json;

use crate::schema::Schema;

// The model: every struct takes defaults for absent fields (the schema already said which are required).

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct Scenario {
    pub description: String,
    pub known_bug: Option<String>,
    pub settle_timeout_ms: Option<u64>,
    pub table: Table,
    pub config: BTreeMap<String, String>,
    pub faults: Vec<Fault>,
    pub writers: Vec<WriterSpec>,
    pub steps: Vec<Step>,
    pub expect: Expect,
    /// Server capabilities the scenario needs (`fluss_writer::Capability` names, decided by the
    /// core from the servers' ApiVersions); a server without one runs nothing of it.
    pub requires: Vec<String>,
}

impl Scenario {
    pub fn settle_ms(&self) -> u64 {
        self.settle_timeout_ms.unwrap_or(10_000)
    }

    /// The table after every `alter_table` step that is expected to succeed: its columns plus
    /// the added ones, in file order (what read-back returns).
    pub fn final_table(&self) -> Table {
        self.table_before(self.steps.len())
    }

    /// The table as writer `name` knows it: a deferred writer sees the columns added before its
    /// `create_writer` step, the others the table's own.
    pub fn writer_table(&self, name: &str) -> Table {
        let created = self.steps.iter().position(|s| matches!(s, Step::CreateWriter(o) if o.writer.as_deref() == Some(name)));
        self.table_before(created.unwrap_or(0))
    }

    /// Per-partition bucket counts (Fluss 1.0): the bucket count of each partition each write op
    /// writes to (by op id, one per row), and of every partition at the end. A partition has the
    /// table's count when it comes to exist: listed in `table.partitions`, a `create_partition`
    /// step, or the first write op naming it (create on write), in file order; an
    /// `alter_bucket_count` step expected to succeed changes the count of those created after
    /// it, a `drop_partition` makes the next one new again.
    pub fn partition_counts(&self) -> (HashMap<String, Vec<i32>>, BTreeMap<String, i32>) {
        let mut current = self.table.bucket_count;
        let mut parts: BTreeMap<String, i32> = self.table.partitions.iter().map(|p| (p.clone(), current)).collect();
        let mut by_op = HashMap::new();
        for (_, s) in all_steps(self) {
            match s {
                Step::AlterBucketCount(o) if call_code(&o.expect) == Ok(0) => current = o.bucket_count.unwrap_or(current),
                Step::CreatePartition(o) if call_code(&o.expect) == Ok(0) => {
                    parts.entry(o.partition.clone()).or_insert(current);
                }
                Step::DropPartition(o) if call_code(&o.expect) == Ok(0) => {
                    parts.remove(&o.partition);
                }
                _ => {}
            }
            if let Some(o) = s.write_op() {
                let counts = o
                    .partitions()
                    .iter()
                    .map(|p| match p {
                        Some(p) => *parts.entry(p.clone()).or_insert(current),
                        None => self.table.bucket_count,
                    })
                    .collect();
                by_op.insert(o.id.clone(), counts);
            }
        }
        (by_op, parts)
    }

    fn table_before(&self, step: usize) -> Table {
        let mut t = self.table.clone();
        for s in &self.steps[..step.min(self.steps.len())] {
            if let Step::AlterTable(o) = s {
                if call_code(&o.expect) == Ok(0) {
                    t.columns.extend(o.add_columns.iter().cloned());
                }
            }
        }
        t
    }
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TableKind {
    #[default]
    Log,
    Pk,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct Table {
    pub kind: TableKind,
    pub bucket_count: i32,
    pub columns: Vec<Column>,
    pub primary_key: Vec<String>,
    pub bucket_key: Vec<String>,
    /// Partition columns (empty: not partitioned).
    pub partition_keys: Vec<String>,
    /// Partitions created with the table, by name.
    pub partitions: Vec<String>,
    /// Table options (`table.*`), passed to the descriptor as they are.
    pub properties: std::collections::BTreeMap<String, String>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Column {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub nullable: Option<bool>,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(tag = "fault", rename_all = "snake_case")]
pub enum Fault {
    Error {
        bucket: i32,
        times: u32,
        code: String,
        message: Option<String>,
        partition: Option<String>,
    },
    Delay {
        bucket: i32,
        times: u32,
        ms: u64,
        partition: Option<String>,
    },
    DropConnection {
        bucket: i32,
        times: u32,
        after_apply: bool,
        partition: Option<String>,
    },
    /// The next `times` requests addressed to the coordinator answer `code` (e.g.
    /// NOT_COORDINATOR_LEADER: a standby of a Fluss 1.0 cluster).
    CoordinatorError {
        times: u32,
        code: String,
        message: Option<String>,
    },
}

impl Fault {
    /// The partition the fault is injected at (None: the table has no partitions).
    pub fn partition(&self) -> Option<&str> {
        match self {
            Fault::Error { partition, .. } | Fault::Delay { partition, .. } | Fault::DropConnection { partition, .. } => {
                partition.as_deref()
            }
            Fault::CoordinatorError { .. } => None,
        }
    }
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct WriterSpec {
    pub name: String,
    pub kind: String,
    /// Created by a `create_writer` step (with the table as it is then), not at the start.
    pub deferred: bool,
    pub partial_update: Option<Vec<String>>,
    pub max_pending_callbacks: Option<u64>,
    pub executor: Option<Json>,
}

impl WriterSpec {
    /// `Some(n)` for `{"sharded": n}`, `None` for the connection's FIFO worker.
    pub fn sharded(&self) -> Option<usize> {
        self.executor.as_ref().and_then(|e| e.get("sharded")).and_then(Json::as_u64).map(|n| n as usize)
    }
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Notify {
    #[default]
    Callback,
    Result,
    Detached,
}

/// A callback's behaviour: `"normal"` (a string) is the default, all fields absent.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct CbSpec {
    pub sleep_ms: u64,
    pub gate: Option<String>,
    pub raise: bool,
    pub call: Option<Box<Step>>,
}

fn callback<'de, D: serde::Deserializer<'de>>(d: D) -> Result<CbSpec, D::Error> {
    match Json::deserialize(d)? {
        Json::String(_) => Ok(CbSpec::default()),
        v => serde_json::from_value(v).map_err(serde::de::Error::custom),
    }
}

#[derive(Deserialize, Debug, Clone)]
pub struct BucketResultSpec {
    pub partition: Option<String>,
    pub bucket: i32,
    pub rows: usize,
    pub error: Option<String>,
}

/// A write op (append, upsert, delete, append_arrow): `row` / `key` / `rows`, `bucket` / `buckets`.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct WriteOp {
    pub id: String,
    pub writer: Option<String>,
    pub row: Vec<Json>,
    pub key: Vec<Json>,
    pub rows: Vec<Vec<Json>>,
    pub bucket: Option<i32>,
    pub buckets: Option<Vec<i32>>,
    pub partition: Option<String>,
    pub partitions: Option<Vec<String>>,
    pub notify: Notify,
    #[serde(deserialize_with = "callback")]
    pub callback: CbSpec,
    pub expect: Json,
    pub offset: Option<i64>,
    pub bucket_results: Option<Vec<BucketResultSpec>>,
    pub min_elapsed_ms: Option<u64>,
    pub max_elapsed_ms: Option<u64>,
}

impl WriteOp {
    /// The stated buckets: one per row.
    pub fn buckets(&self) -> Vec<i32> {
        self.buckets.clone().unwrap_or_else(|| self.bucket.into_iter().collect())
    }

    /// The stated partitions: one per row, `None` for a table without partitions.
    pub fn partitions(&self) -> Vec<Option<String>> {
        match (&self.partitions, &self.partition) {
            (Some(p), _) => p.iter().cloned().map(Some).collect(),
            (None, p) => vec![p.clone(); self.buckets().len()],
        }
    }
}

/// Every other step: its fields, by op.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct Other {
    pub writer: Option<String>,
    pub id: String,
    pub target: String,
    pub timeout_ms: Option<u64>,
    pub expect: Option<Json>,
    pub min_elapsed_ms: Option<u64>,
    pub max_elapsed_ms: Option<u64>,
    #[serde(deserialize_with = "callback")]
    pub callback: CbSpec,
    pub ms: u64,
    pub gate: String,
    pub state: Option<CbState>,
    pub faults: Vec<Fault>,
    pub threads: BTreeMap<String, Vec<Step>>,
    pub partition: String,
    pub add_columns: Vec<Column>,
    /// alter_bucket_count: the count of partitions created afterwards.
    pub bucket_count: Option<i32>,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CbState {
    NotStarted,
    Running,
    Returned,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Step {
    Append(WriteOp),
    Upsert(WriteOp),
    Delete(WriteOp),
    AppendArrow(WriteOp),
    Flush(Other),
    Close(Other),
    Wait(Other),
    AddCallback(Other),
    Sleep(Other),
    OpenGate(Other),
    Stats(Other),
    AwaitCallback(Other),
    AssertCallback(Other),
    Inject(Other),
    CreatePartition(Other),
    DropPartition(Other),
    Parallel(Other),
    AlterTable(Other),
    CreateWriter(Other),
    AlterBucketCount(Other),
}

impl Step {
    pub fn write_op(&self) -> Option<&WriteOp> {
        match self {
            Step::Append(o) | Step::Upsert(o) | Step::Delete(o) | Step::AppendArrow(o) => Some(o),
            _ => None,
        }
    }
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct Expect {
    pub callback_order: Vec<Vec<String>>,
    pub callback_errors: BTreeMap<String, u64>,
    /// Per writer, per `WriterStats` field: what its `stats` steps must show (embedded only).
    pub stats: BTreeMap<String, BTreeMap<String, StatExpect>>,
    pub read_back: ReadBackSpec,
}

/// An expectation on one `WriterStats` field over a writer's `stats` steps.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct StatExpect {
    /// The last recorded value is at least this.
    pub min: Option<u64>,
    /// Some recorded value is above 0 and a later one is below it.
    pub rises_and_falls: bool,
}

/// Rows per bucket (`"0"`, `"1"`, ...).
pub type Buckets = BTreeMap<String, Vec<Vec<Json>>>;

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct ReadBackSpec {
    pub buckets: Option<Buckets>,
    /// Partitioned log tables: per partition name, every bucket.
    pub partitions: Option<BTreeMap<String, Buckets>>,
    pub lookups: Option<Vec<LookupSpec>>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct LookupSpec {
    pub key: Vec<Json>,
    pub row: Option<Vec<Json>>,
}

/// Where a step sits, the same in every runner: `steps[3]`, `steps[2].t1[0]` (a `parallel`
/// thread), `a1.call` (the call inside the callback of op or add_callback `a1`).
pub fn step_path(parent: &str, thread: Option<&str>, index: usize) -> String {
    match thread {
        Some(t) => format!("{parent}.{t}[{index}]"),
        None => format!("steps[{index}]"),
    }
}

/// Every step with its path, in file order, nested calls included.
pub fn all_steps(sc: &Scenario) -> Vec<(String, &Step)> {
    fn visit<'a>(path: String, s: &'a Step, out: &mut Vec<(String, &'a Step)>) {
        out.push((path.clone(), s));
        let (id, cb) = match s {
            Step::AddCallback(o) => (&o.id, &o.callback),
            Step::Parallel(o) => {
                for (t, steps) in &o.threads {
                    steps.iter().enumerate().for_each(|(i, x)| visit(step_path(&path, Some(t), i), x, out));
                }
                return;
            }
            _ => match s.write_op() {
                Some(o) => (&o.id, &o.callback),
                None => return,
            },
        };
        if let Some(c) = &cb.call {
            visit(format!("{id}.call"), c, out);
        }
    }
    let mut out = Vec::new();
    sc.steps.iter().enumerate().for_each(|(i, s)| visit(step_path("", None, i), s, &mut out));
    out
}

/// Whether the scenario injects faults (then only the embedded engine can run it).
pub fn uses_faults(sc: &Scenario) -> bool {
    !sc.faults.is_empty() || all_steps(sc).iter().any(|(_, s)| matches!(s, Step::Inject(_)))
}

/// Resolve an error code name through the core's name tables.
pub fn code_of(name: &str) -> Result<i32, String> {
    if let Some(c) = ClientCode::ALL.iter().find(|c| c.name() == name) {
        return Ok(*c as i32);
    }
    match FlussCode::named().find(|(_, n)| *n == name && name != "SERVER_ERROR") {
        Some((code, _)) => Ok(code),
        None => Err(format!("unknown error code name {name:?}")),
    }
}

pub fn code_name(code: i32) -> String {
    match ClientCode::from_code(code) {
        Some(c) => c.name().to_string(),
        None if code == 0 => "OK".to_string(),
        None => format!("{} ({code})", FlussCode::name(code)),
    }
}

/// An op's allowed outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Accepted and completed with this code (0 = success).
    Completed(i32),
    /// The call itself failed with this code.
    Sync(i32),
}

/// The outcomes an op's `expect` allows.
pub fn op_outcomes(e: &Json) -> Result<Vec<Outcome>, String> {
    let name = |k: &str| e.get(k).and_then(Json::as_str).map(code_of);
    if let Some(a) = e.get("any_of").and_then(Json::as_array) {
        return a.iter().map(op_outcomes).collect::<Result<Vec<_>, _>>().map(|v| v.concat());
    }
    match (e.as_str(), name("callback_error"), name("sync_error")) {
        (Some("ok"), ..) => Ok(vec![Outcome::Completed(0)]),
        (_, Some(c), _) => Ok(vec![Outcome::Completed(c?)]),
        (_, _, Some(c)) => Ok(vec![Outcome::Sync(c?)]),
        _ => Err(format!("bad expect {e}")),
    }
}

/// The code a flush/close/wait must return (0 = ok).
pub fn call_code(e: &Option<Json>) -> Result<i32, String> {
    e.as_ref().and_then(|e| e.get("error")).and_then(Json::as_str).map_or(Ok(0), code_of)
}

impl Table {
    fn data_type(c: &Column) -> DataType {
        match c.ty.as_str() {
            "INT" => DataType::Int,
            "BIGINT" => DataType::BigInt,
            "DOUBLE" => DataType::Double,
            "BOOLEAN" => DataType::Boolean,
            _ => DataType::String,
        }
    }

    pub fn schema(&self) -> Result<TableSchema, String> {
        TableSchema::new(self.columns.iter().map(Self::core_column).collect(), self.primary_key.clone()).map_err(|e| format!("table: {e}"))
    }

    /// A column of the file as the core's column.
    pub fn core_column(c: &Column) -> fluss_writer::Column {
        let col = fluss_writer::Column::new(c.name.clone(), Self::data_type(c));
        if c.nullable == Some(false) {
            col.not_null()
        } else {
            col
        }
    }

    /// The table's descriptor as the runners create it, normalized by the core (its rules
    /// decide the bucket key of a primary-key table, partitioned or not).
    pub fn descriptor(&self) -> Result<TableDescriptor, String> {
        let mut d = TableDescriptor::new(self.schema()?).with_bucket_count(self.bucket_count);
        if !self.bucket_key.is_empty() {
            d = d.with_bucket_key(self.bucket_key.clone());
        }
        if !self.partition_keys.is_empty() {
            d = d.with_partition_keys(self.partition_keys.clone());
        }
        for (k, v) in &self.properties {
            d = d.with_property(k, v);
        }
        d.normalized(self.bucket_count).map_err(|e| format!("table: {e}"))
    }

    /// The spec of partition `name` (its values in partition-key order, joined by `$`).
    pub fn partition_spec(&self, name: &str) -> Result<PartitionSpec, String> {
        PartitionSpec::from_name(&self.partition_keys, name).map_err(|e| format!("partition {name:?}: {e}"))
    }

    /// A row of the file (`{"repeat"...}` expanded) as the core's values.
    pub fn row(&self, v: &[Json], what: &str) -> Result<Vec<Value>, String> {
        if v.len() != self.columns.len() {
            return Err(format!("{what}: {} values for {} columns", v.len(), self.columns.len()));
        }
        v.iter().zip(&self.columns).map(|(x, c)| value(x, c, what)).collect()
    }

    /// A key of the file (primary-key values in primary-key order).
    pub fn key(&self, v: &[Json], what: &str) -> Result<Vec<Value>, String> {
        let cols: Vec<&Column> = self.primary_key.iter().filter_map(|k| self.columns.iter().find(|c| &c.name == k)).collect();
        if v.len() != cols.len() {
            return Err(format!("{what}: {} values for a key of {} columns", v.len(), cols.len()));
        }
        v.iter().zip(cols).map(|(x, c)| value(x, c, what)).collect()
    }
}

fn value(v: &Json, c: &Column, what: &str) -> Result<Value, String> {
    let bad = || format!("{what}: {v} is not a {} value for column {}", c.ty, c.name);
    Ok(match (v, c.ty.as_str()) {
        (Json::Null, _) if c.nullable != Some(false) => Value::Null,
        (Json::Null, _) => return Err(format!("{what}: null in NOT NULL column {}", c.name)),
        (_, "INT") => Value::Int(v.as_i64().and_then(|x| i32::try_from(x).ok()).ok_or_else(bad)?),
        (_, "BIGINT") => Value::BigInt(v.as_i64().ok_or_else(bad)?),
        (_, "DOUBLE") => Value::Double(v.as_f64().ok_or_else(bad)?),
        (_, "BOOLEAN") => Value::Boolean(v.as_bool().ok_or_else(bad)?),
        (Json::String(s), _) => Value::String(s.clone()),
        (Json::Object(o), _) => Value::String(o["repeat"].as_str().ok_or_else(bad)?.repeat(o["count"].as_u64().ok_or_else(bad)? as usize)),
        _ => return Err(bad()),
    })
}

/// Parse a scenario: the JSON Schema first, then the rules it cannot state. Every problem found
/// is listed.
pub fn load(doc: &Json) -> Result<Scenario, Vec<String>> {
    let v = Schema::scenario().validate(doc);
    if !v.is_empty() {
        return Err(v.iter().map(|v| format!("schema: {v}")).collect());
    }
    let sc: Scenario = serde_json::from_value(doc.clone()).map_err(|e| vec![format!("scenario: {e}")])?;
    let mut errs = Vec::new();
    semantic(&sc, &mut errs);
    if errs.is_empty() {
        Ok(sc)
    } else {
        Err(errs)
    }
}

/// The rules of the format a JSON Schema cannot state.
fn semantic(sc: &Scenario, errs: &mut Vec<String>) {
    let t = &sc.table;
    let log = t.kind == TableKind::Log;
    let mut rule = |ok: bool, msg: &dyn Fn() -> String| {
        if !ok {
            errs.push(msg())
        }
    };
    rule(!log || t.primary_key.is_empty(), &|| "table: a log table has no primary_key".into());
    rule(!log || !t.bucket_key.is_empty(), &|| "table: a log table needs a bucket_key, so that the bucket of every row is known".into());
    rule(log || !t.primary_key.is_empty(), &|| "table: a pk table needs a primary_key".into());
    rule(!sc.config.contains_key("bootstrap.servers"), &|| "config: bootstrap.servers is set by the runner".into());
    // Buckets and partitions are computed on rows of the final width (columns are only added
    // at the end, never to a key).
    let ft = sc.final_table();
    let (schema, bk) = match ft.descriptor().and_then(|d| {
        let s = d.schema.clone();
        s.indexes_of(&d.bucket_key).map(|b| (s, b)).map_err(|e| format!("table: {e}"))
    }) {
        Ok(x) => x,
        Err(e) => return errs.push(e),
    };
    let router = match PartitionRouter::new(&schema, &t.partition_keys) {
        Ok(r) => r,
        Err(e) => return errs.push(format!("table: {e}")),
    };
    let partitioned = router.is_some();
    // A stated partition name: only for a partitioned table, and a name its keys can have.
    let partition_name = |p: Option<&str>, what: &str, errs: &mut Vec<String>| match (p, partitioned) {
        (Some(p), true) => errs.extend(t.partition_spec(p).err().map(|e| format!("{what}: {e}"))),
        (Some(_), false) => errs.push(format!("{what}: a partition for a table without partition keys")),
        (None, _) => {}
    };
    for p in &t.partitions {
        partition_name(Some(p), "table.partitions", errs);
    }
    let names: HashSet<&str> = sc.writers.iter().map(|w| w.name.as_str()).collect();
    if names.len() != sc.writers.len() {
        errs.push("writers: duplicate names".into());
    }
    let creations =
        |name: &str| sc.steps.iter().filter(|s| matches!(s, Step::CreateWriter(o) if o.writer.as_deref() == Some(name))).count();
    for w in &sc.writers {
        if w.deferred != (creations(&w.name) == 1) || creations(&w.name) > 1 {
            errs.push(format!("writer {}: a deferred writer has one create_writer step, the others none", w.name));
        }
        if (w.kind == "upsert") != (t.kind == TableKind::Pk) {
            errs.push(format!("writer {}: kind {} does not fit a {:?} table", w.name, w.kind, t.kind));
        }
        for c in w.partial_update.iter().flatten().filter(|c| !t.columns.iter().any(|x| &x.name == *c)) {
            errs.push(format!("writer {}: partial_update names unknown column {c:?}", w.name));
        }
    }
    let fault_codes = |f: &'_ [Fault], codes: &mut Vec<String>, errs: &mut Vec<String>| {
        for f in f {
            match f {
                Fault::Error { code, .. } => codes.push(code.clone()),
                // Not a bucket's: no partition to name.
                Fault::CoordinatorError { code, .. } => {
                    codes.push(code.clone());
                    continue;
                }
                _ => {}
            }
            match (f.partition(), partitioned) {
                (None, true) => errs.push("faults: a partitioned table's fault names its partition".into()),
                (p, _) => partition_name(p, "faults", errs),
            }
        }
    };
    let mut codes: Vec<String> = Vec::new();
    fault_codes(&sc.faults, &mut codes, errs);
    let (op_counts, final_counts) = sc.partition_counts();
    let top_level: HashSet<*const Step> = sc.steps.iter().map(|s| s as *const Step).collect();
    let steps = all_steps(sc);
    let mut ids: HashSet<&str> = HashSet::new();
    let result_ops: HashSet<&str> =
        steps.iter().filter_map(|(_, s)| s.write_op()).filter(|o| o.notify == Notify::Result).map(|o| o.id.as_str()).collect();
    let writer = |w: &Option<String>, what: &str, errs: &mut Vec<String>| match w {
        Some(w) if !names.contains(w.as_str()) => errs.push(format!("{what}: unknown writer {w:?}")),
        None if sc.writers.len() > 1 => errs.push(format!("{what}: \"writer\" is required with several writers")),
        _ => {}
    };
    for (path, s) in &steps {
        if let Some(o) = s.write_op() {
            let what = format!("{path} ({})", o.id);
            if !ids.insert(&o.id) {
                errs.push(format!("{what}: duplicate id {:?}", o.id));
            }
            writer(&o.writer, &what, errs);
            let cb = &o.callback;
            if o.notify != Notify::Callback && (cb.call.is_some() || cb.gate.is_some() || cb.raise || cb.sleep_ms > 0) {
                errs.push(format!("{what}: \"callback\" needs notify = callback"));
            }
            if path.ends_with(".call") && cb.call.is_some() {
                errs.push(format!("{what}: a callback inside a callback's call cannot make calls of its own"));
            }
            codes.extend(o.bucket_results.iter().flatten().filter_map(|b| b.error.clone()));
            for b in o.bucket_results.iter().flatten() {
                partition_name(b.partition.as_deref(), &format!("{what} bucket_results"), errs);
            }
            errs.extend(op_outcomes(&o.expect).err());
            // Rows fit the table, and the stated buckets are the core's.
            // Rows have the width of the table as their writer knows it.
            let wt = sc.writer_table(o.writer.as_deref().unwrap_or(sc.writers[0].name.as_str()));
            let pad = |r: Vec<Value>| {
                let mut r = r;
                r.resize(ft.columns.len(), Value::Null);
                r
            };
            let rows: Vec<Result<Vec<Value>, String>> = match s {
                Step::Delete(_) => vec![t.key(&o.key, &what).map(|k| {
                    let mut row = vec![Value::Null; ft.columns.len()];
                    k.into_iter().zip(schema.primary_key_indexes()).for_each(|(v, i)| row[i] = v);
                    row
                })],
                Step::AppendArrow(_) => o.rows.iter().map(|r| wt.row(r, &what).map(pad)).collect(),
                _ => vec![wt.row(&o.row, &what).map(pad)],
            };
            let buckets = o.buckets();
            if rows.len() != buckets.len() {
                errs.push(format!("{what}: {} rows but {} buckets", rows.len(), buckets.len()));
            }
            let parts = o.partitions();
            if parts.len() != buckets.len() {
                errs.push(format!("{what}: {} partitions but {} buckets", parts.len(), buckets.len()));
            }
            let counts = op_counts.get(&o.id).cloned().unwrap_or_default();
            for (i, ((r, b), p)) in rows.into_iter().zip(buckets).zip(parts).enumerate() {
                let count = counts.get(i).copied().unwrap_or(t.bucket_count);
                let row = match r {
                    Ok(row) => row,
                    Err(e) => {
                        errs.push(e);
                        continue;
                    }
                };
                let mut key = Vec::new();
                match encode_key(&schema, &bk, &row, &mut key) {
                    Err(e) => errs.push(format!("{what}: {e}")),
                    Ok(()) => {
                        let core = bucket_for_key(&key, count);
                        if core != b {
                            errs.push(format!(
                                "{what} row {i}: the file says bucket {b} but the core's bucketing gives {core} ({count} buckets; fix the file)"
                            ));
                        }
                    }
                }
                // The stated partition is the one the core names for the row.
                let mut name = String::new();
                let core = router.as_ref().map(|r| r.name_of(&schema, &row, &mut name).map(|()| name.clone()));
                match (core, p) {
                    (None, None) => {}
                    (None, Some(_)) => errs.push(format!("{what}: a partition for a table without partition keys")),
                    (Some(_), None) => errs.push(format!("{what} row {i}: a partitioned table's op states its partition")),
                    (Some(Err(e)), Some(_)) => errs.push(format!("{what} row {i}: {e}")),
                    (Some(Ok(core)), Some(p)) if core != p => errs.push(format!(
                        "{what} row {i}: the file says partition {p:?} but the core names the row's partition {core:?} (fix the file)"
                    )),
                    _ => {}
                }
            }
        }
        match s {
            Step::AddCallback(o) if !ids.insert(&o.id) => errs.push(format!("{path}: duplicate id {:?}", o.id)),
            Step::Flush(o) | Step::Close(o) => writer(&o.writer, path, errs),
            Step::Inject(o) => fault_codes(&o.faults, &mut codes, errs),
            Step::CreatePartition(_) | Step::DropPartition(_) if !partitioned => {
                errs.push(format!("{path}: partition DDL on a table without partition keys"))
            }
            Step::CreatePartition(o) | Step::DropPartition(o) => partition_name(Some(&o.partition), path, errs),
            Step::CreateWriter(o) => writer(&o.writer, path, errs),
            Step::AlterBucketCount(o) => {
                if !partitioned || !top_level.contains(&(*s as *const Step)) {
                    errs.push(format!("{path}: alter_bucket_count is a top-level step of a partitioned table"));
                }
                if o.bucket_count.is_none_or(|n| n < 1) {
                    errs.push(format!("{path}: alter_bucket_count needs a bucket_count of at least 1"));
                }
                if !sc.requires.iter().any(|r| r == "alter_bucket_count") {
                    errs.push(format!("{path}: a scenario with alter_bucket_count lists it in \"requires\""));
                }
            }
            Step::AlterTable(o) if call_code(&o.expect) == Ok(0) => {
                for c in &o.add_columns {
                    if c.nullable == Some(false) {
                        errs.push(format!("{path}: column {} is NOT NULL, which a server refuses (expect its error)", c.name));
                    }
                }
            }
            _ => {}
        }
        if let Step::Flush(o)
        | Step::Close(o)
        | Step::Wait(o)
        | Step::CreatePartition(o)
        | Step::DropPartition(o)
        | Step::AlterTable(o)
        | Step::AlterBucketCount(o) = s
        {
            errs.extend(call_code(&o.expect).err().map(|e| format!("{path}: {e}")));
        }
    }
    // A deferred writer exists from its create_writer step on: its ops are top-level steps after it.
    let deferred: HashSet<&str> = sc.writers.iter().filter(|w| w.deferred).map(|w| w.name.as_str()).collect();
    let mut created: HashSet<&str> = HashSet::new();
    let top: HashSet<*const Step> = sc.steps.iter().map(|s| s as *const Step).collect();
    for s in &sc.steps {
        if let Step::CreateWriter(o) = s {
            created.extend(o.writer.as_deref());
        }
        if let Some(w) = s.write_op().and_then(|o| o.writer.as_deref()).filter(|w| deferred.contains(w) && !created.contains(w)) {
            errs.push(format!("writer {w}: an op before its create_writer step"));
        }
    }
    for (path, s) in &steps {
        if let Some(w) = s.write_op().and_then(|o| o.writer.as_deref()).filter(|w| deferred.contains(w)) {
            if !top.contains(&(*s as *const Step)) {
                errs.push(format!("{path}: the ops of deferred writer {w} are top-level steps"));
            }
        }
    }
    for (path, s) in &steps {
        match s {
            Step::Wait(o) | Step::AddCallback(o) if !result_ops.contains(o.target.as_str()) => {
                errs.push(format!("{path}: target {:?} is not an op with notify = result", o.target))
            }
            Step::AwaitCallback(o) | Step::AssertCallback(o) if !ids.contains(o.target.as_str()) => {
                errs.push(format!("{path}: unknown target {:?}", o.target))
            }
            _ => {}
        }
    }
    errs.extend(codes.iter().filter_map(|c| code_of(c).err()));
    let e = &sc.expect;
    for id in e.callback_order.iter().flatten().filter(|id| !ids.contains(id.as_str())) {
        errs.push(format!("expect.callback_order: unknown id {id:?}"));
    }
    for (w, fields) in &e.stats {
        if !names.contains(w.as_str()) {
            errs.push(format!("expect.stats: unknown writer {w:?}"));
        }
        for f in fields.keys().filter(|f| !fluss_writer::metrics::METRICS.iter().any(|m| m.field == f.as_str())) {
            errs.push(format!("expect.stats.{w}: {f:?} is not a WriterStats field (fluss_writer::metrics::METRICS)"));
        }
    }
    for w in e.callback_errors.keys().filter(|w| !names.contains(w.as_str())) {
        errs.push(format!("expect.callback_errors: unknown writer {w:?}"));
    }
    let want: HashSet<String> = (0..t.bucket_count).map(|b| b.to_string()).collect();
    if let Some(b) = &e.read_back.buckets {
        if !log || partitioned || b.keys().cloned().collect::<HashSet<_>>() != want {
            errs.push(
                "expect.read_back.buckets: a log table's every bucket (empty lists allowed); partitions for a partitioned one".into(),
            );
        }
        errs.extend(b.values().flatten().filter_map(|r| ft.row(r, "expect.read_back").err()));
    }
    for r in &sc.requires {
        errs.extend(fluss_writer::Capability::from_name(r).err().map(|e| format!("requires: {e}")));
    }
    for (p, b) in e.read_back.partitions.iter().flatten() {
        let n = final_counts.get(p).copied().unwrap_or(t.bucket_count);
        let want: HashSet<String> = (0..n).map(|b| b.to_string()).collect();
        if !log || !partitioned || b.keys().cloned().collect::<HashSet<_>>() != want {
            errs.push(format!("expect.read_back.partitions.{p}: a partitioned log table's every bucket of the partition"));
        }
        partition_name(Some(p), "expect.read_back.partitions", errs);
        errs.extend(b.values().flatten().filter_map(|r| ft.row(r, "expect.read_back").err()));
    }
    for x in e.read_back.lookups.iter().flatten() {
        if log {
            errs.push("expect.read_back.lookups is for pk tables".into());
        }
        errs.extend(t.key(&x.key, "expect.read_back.lookups").err());
        errs.extend(x.row.as_ref().and_then(|r| ft.row(r, "expect.read_back.lookups").err()));
    }
}
