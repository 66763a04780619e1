//! The plan: a validated scenario resolved into what a runner executes, so that every rule of
//! reading a scenario file lives here once and the three runners parse only what they run.
//! Resolved here: the writer an op names by default, the columns a writer's rows have (the table
//! as it was when the writer was created), the value forms (`repeat`, numbers of DOUBLE columns),
//! partition names as specs, error code names, the defaults of callbacks, timeouts and states,
//! every step's path, the order of `parallel` threads, what to read back, and whether the
//! scenario needs the embedded engine. `golden-check --plan <file>` prints it as JSON for the
//! Python and C++ runners; the Rust runner takes it as it is.

use std::collections::BTreeMap;

use fluss_writer::Value;
use serde::Serialize;
use serde_json::Value as Json;

use crate::scenario::{self, code_of, CbSpec, CbState, Fault, Notify, Scenario, Step, TableKind};

type R<T> = Result<T, String>;

#[derive(Serialize, Debug, Clone)]
pub struct Plan {
    /// False when the scenario injects faults, which only the embedded engine can.
    pub cluster_ok: bool,
    /// Server capabilities the scenario needs (`Admin::server_supports` names). A runner asks the
    /// core for each before anything else; if one is missing it records `unsupported` and runs
    /// nothing (the embedded engine has them all).
    pub requires: Vec<String>,
    pub settle_ms: u64,
    pub config: BTreeMap<String, String>,
    pub table: PlanTable,
    /// Partitions created with the table, as specs (partition key -> value).
    pub partitions: Vec<BTreeMap<String, String>>,
    /// Injected after the table is created, before any writer exists.
    pub faults: Vec<PlanFault>,
    /// Every writer; a deferred one is created by its `create_writer` step, the others at the start.
    pub writers: Vec<PlanWriter>,
    pub steps: Vec<PlanStep>,
    pub read_back: PlanReadBack,
}

#[derive(Serialize, Debug, Clone)]
pub struct PlanTable {
    pub columns: Vec<Col>,
    pub primary_key: Vec<String>,
    pub bucket_count: i32,
    pub bucket_key: Vec<String>,
    pub partition_keys: Vec<String>,
    /// Table options (`table.*`) for the descriptor.
    pub properties: std::collections::BTreeMap<String, String>,
}

#[derive(Serialize, Debug, Clone)]
pub struct Col {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub nullable: bool,
}

impl Col {
    /// The column as the core's (the model's type mapping: the Rust runner creates its table,
    /// added columns and Arrow batches with it).
    pub fn core(&self) -> fluss_writer::Column {
        let c = scenario::Column { name: self.name.clone(), ty: self.ty.clone(), nullable: Some(self.nullable) };
        scenario::Table::core_column(&c)
    }
}

#[derive(Serialize, Debug, Clone)]
pub struct PlanWriter {
    pub name: String,
    pub deferred: bool,
    pub upsert: bool,
    pub partial_update: Option<Vec<String>>,
    pub max_pending_callbacks: Option<u64>,
    /// `Some(n)`: the writer's own sharded executor; `None`: the connection's FIFO worker.
    pub sharded: Option<usize>,
}

/// A fault for the embedded engine; `kind` is `error` (`code`, `message`), `delay` (`ms`) or
/// `drop_connection` (`after_apply`); with `coordinator`, for the requests addressed to the
/// coordinator (`bucket` and `partition` unused) instead of a bucket's.
#[derive(Serialize, Debug, Clone)]
pub struct PlanFault {
    pub kind: String,
    pub coordinator: bool,
    pub partition: Option<String>,
    pub bucket: i32,
    pub times: u32,
    pub code: i32,
    pub message: String,
    pub ms: u64,
    pub after_apply: bool,
}

/// One step; which fields an op reads is listed in golden/README.md ("The plan").
#[derive(Serialize, Debug, Clone, Default)]
pub struct PlanStep {
    pub op: String,
    /// Where the step sits (`steps[3]`, `steps[2].t1[0]`, `a1.call`): the trace's `step`.
    pub path: String,
    pub id: String,
    pub writer: String,
    pub notify: String,
    /// notify = callback and add_callback: what the recording callback does.
    pub callback: Option<Callback>,
    /// Write ops: the columns of `rows` (a delete: the key's); alter_table: the added columns.
    pub columns: Vec<Col>,
    /// Write ops: the row (append, upsert), the key (delete) or the batch's rows (append_arrow).
    pub rows: Vec<Vec<Json>>,
    /// `rows` as the core's values (for the Rust runner).
    #[serde(skip)]
    pub values: Vec<Vec<Value>>,
    pub timeout_ms: Option<u64>,
    pub target: String,
    /// await_callback: `running` or `returned`.
    pub state: String,
    pub ms: u64,
    pub gate: String,
    /// create_partition / drop_partition.
    pub spec: BTreeMap<String, String>,
    /// alter_bucket_count: the new count (of partitions created afterwards).
    pub bucket_count: i32,
    pub faults: Vec<PlanFault>,
    /// create_writer: the writer to create.
    pub writer_spec: Option<PlanWriter>,
    /// parallel: the threads, in the order their paths sort.
    pub threads: Vec<PlanThread>,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Callback {
    pub sleep_ms: u64,
    pub gate: Option<String>,
    pub raise: bool,
    pub call: Option<Box<PlanStep>>,
}

#[derive(Serialize, Debug, Clone)]
pub struct PlanThread {
    pub name: String,
    pub steps: Vec<PlanStep>,
}

/// What to read back after settling: these buckets (of a log table) and these keys (of a pk
/// table), with the table loaded again.
#[derive(Serialize, Debug, Clone, Default)]
pub struct PlanReadBack {
    pub scans: Vec<Scan>,
    pub key_columns: Vec<Col>,
    pub lookups: Vec<Vec<Json>>,
    #[serde(skip)]
    pub lookup_values: Vec<Vec<Value>>,
}

#[derive(Serialize, Debug, Clone)]
pub struct Scan {
    pub partition: Option<String>,
    pub bucket: i32,
}

/// Validate the document and resolve it.
pub fn load(doc: &Json) -> Result<Plan, Vec<String>> {
    let sc = scenario::load(doc)?;
    plan(&sc).map_err(|e| vec![e])
}

/// A core value as the JSON of a row (read-back rows are recorded the same way).
pub fn json_value(v: &Value) -> Json {
    match v {
        Value::Int(x) => Json::from(*x),
        Value::BigInt(x) => Json::from(*x),
        Value::Double(x) => Json::from(*x),
        Value::Boolean(x) => Json::from(*x),
        Value::String(s) => Json::from(s.as_str()),
        Value::Null => Json::Null,
        other => Json::from(format!("{other:?}")),
    }
}

fn cols(c: &[scenario::Column]) -> Vec<Col> {
    c.iter().map(|c| Col { name: c.name.clone(), ty: c.ty.clone(), nullable: c.nullable != Some(false) }).collect()
}

fn rows_json(values: &[Vec<Value>]) -> Vec<Vec<Json>> {
    values.iter().map(|r| r.iter().map(json_value).collect()).collect()
}

fn writer(sc: &Scenario, name: &str) -> R<PlanWriter> {
    let w = sc.writers.iter().find(|w| w.name == name).ok_or_else(|| format!("unknown writer {name:?}"))?;
    Ok(PlanWriter {
        name: w.name.clone(),
        deferred: w.deferred,
        upsert: w.kind == "upsert",
        partial_update: w.partial_update.clone(),
        max_pending_callbacks: w.max_pending_callbacks,
        sharded: w.sharded(),
    })
}

fn faults(f: &[Fault]) -> R<Vec<PlanFault>> {
    f.iter()
        .map(|f| {
            let mut p = PlanFault {
                kind: String::new(),
                coordinator: false,
                partition: f.partition().map(str::to_string),
                bucket: 0,
                times: 0,
                code: 0,
                message: "injected by a golden scenario".into(),
                ms: 0,
                after_apply: false,
            };
            match f {
                Fault::Error { bucket, times, code, message, .. } => {
                    (p.kind, p.bucket, p.times, p.code) = ("error".into(), *bucket, *times, code_of(code)?);
                    p.message = message.clone().unwrap_or(p.message);
                }
                Fault::Delay { bucket, times, ms, .. } => (p.kind, p.bucket, p.times, p.ms) = ("delay".into(), *bucket, *times, *ms),
                Fault::DropConnection { bucket, times, after_apply, .. } => {
                    (p.kind, p.bucket, p.times, p.after_apply) = ("drop_connection".into(), *bucket, *times, *after_apply)
                }
                Fault::CoordinatorError { times, code, message } => {
                    (p.kind, p.coordinator, p.times, p.code) = ("error".into(), true, *times, code_of(code)?);
                    p.message = message.clone().unwrap_or(p.message);
                }
            }
            Ok(p)
        })
        .collect()
}

fn callback(sc: &Scenario, id: &str, cb: &CbSpec) -> R<Callback> {
    let call = cb.call.as_ref().map(|c| step(sc, c, format!("{id}.call"))).transpose()?.map(Box::new);
    Ok(Callback { sleep_ms: cb.sleep_ms, gate: cb.gate.clone(), raise: cb.raise, call })
}

fn step(sc: &Scenario, s: &Step, path: String) -> R<PlanStep> {
    let default_writer = || sc.writers[0].name.clone();
    let mut p = PlanStep { path, ..PlanStep::default() };
    if let Some(o) = s.write_op() {
        p.id = o.id.clone();
        p.writer = o.writer.clone().unwrap_or_else(default_writer);
        p.notify = match o.notify {
            Notify::Callback => "callback",
            Notify::Result => "result",
            Notify::Detached => "detached",
        }
        .into();
        if o.notify == Notify::Callback {
            p.callback = Some(callback(sc, &o.id, &o.callback)?);
        }
        let t = sc.writer_table(&p.writer);
        (p.columns, p.values) = match s {
            Step::Delete(_) => {
                let key = sc.table.primary_key.iter().filter_map(|k| t.columns.iter().find(|c| &c.name == k).cloned());
                (cols(&key.collect::<Vec<_>>()), vec![t.key(&o.key, &o.id)?])
            }
            Step::AppendArrow(_) => (cols(&t.columns), o.rows.iter().map(|r| t.row(r, &o.id)).collect::<R<_>>()?),
            _ => (cols(&t.columns), vec![t.row(&o.row, &o.id)?]),
        };
        p.rows = rows_json(&p.values);
    }
    p.op = match s {
        Step::Append(_) => "append",
        Step::Upsert(_) => "upsert",
        Step::Delete(_) => "delete",
        Step::AppendArrow(_) => "append_arrow",
        Step::Flush(_) => "flush",
        Step::Close(_) => "close",
        Step::Wait(_) => "wait",
        Step::AddCallback(_) => "add_callback",
        Step::Sleep(_) => "sleep",
        Step::OpenGate(_) => "open_gate",
        Step::Stats(_) => "stats",
        Step::AwaitCallback(_) => "await_callback",
        Step::AssertCallback(_) => "assert_callback",
        Step::Inject(_) => "inject",
        Step::CreatePartition(_) => "create_partition",
        Step::DropPartition(_) => "drop_partition",
        Step::Parallel(_) => "parallel",
        Step::AlterTable(_) => "alter_table",
        Step::CreateWriter(_) => "create_writer",
        Step::AlterBucketCount(_) => "alter_bucket_count",
    }
    .into();
    let o = match s {
        Step::Append(_) | Step::Upsert(_) | Step::Delete(_) | Step::AppendArrow(_) => return Ok(p),
        Step::Flush(o) | Step::Close(o) | Step::Wait(o) | Step::AddCallback(o) | Step::Sleep(o) | Step::OpenGate(o) | Step::Stats(o) => o,
        Step::AwaitCallback(o) | Step::AssertCallback(o) | Step::Inject(o) | Step::CreatePartition(o) => o,
        Step::DropPartition(o) | Step::Parallel(o) | Step::AlterTable(o) | Step::CreateWriter(o) | Step::AlterBucketCount(o) => o,
    };
    (p.id, p.target, p.ms, p.gate, p.timeout_ms) = (o.id.clone(), o.target.clone(), o.ms, o.gate.clone(), o.timeout_ms);
    p.writer = o.writer.clone().unwrap_or_else(default_writer);
    match s {
        Step::AddCallback(o) => p.callback = Some(callback(sc, &o.id, &o.callback)?),
        Step::AwaitCallback(o) => {
            p.state = if o.state == Some(CbState::Running) { "running" } else { "returned" }.into();
            p.timeout_ms = Some(o.timeout_ms.unwrap_or(10_000));
        }
        Step::Inject(o) => p.faults = faults(&o.faults)?,
        Step::CreatePartition(o) | Step::DropPartition(o) => p.spec = spec(sc, &o.partition)?,
        Step::AlterTable(o) => p.columns = cols(&o.add_columns),
        Step::AlterBucketCount(o) => p.bucket_count = o.bucket_count.unwrap_or_default(),
        Step::CreateWriter(_) => p.writer_spec = Some(writer(sc, &p.writer)?),
        Step::Parallel(o) => {
            p.threads = o
                .threads
                .iter()
                .map(|(name, steps)| {
                    let steps = steps.iter().enumerate().map(|(i, x)| step(sc, x, scenario::step_path(&p.path, Some(name), i)));
                    Ok(PlanThread { name: name.clone(), steps: steps.collect::<R<_>>()? })
                })
                .collect::<R<_>>()?
        }
        _ => {}
    }
    Ok(p)
}

fn spec(sc: &Scenario, name: &str) -> R<BTreeMap<String, String>> {
    Ok(sc.table.partition_spec(name)?.entries().iter().cloned().collect())
}

/// Resolve a validated scenario.
pub fn plan(sc: &Scenario) -> R<Plan> {
    let t = &sc.table;
    let ft = sc.final_table();
    let mut read_back = PlanReadBack::default();
    match (t.kind, &sc.expect.read_back.partitions) {
        (TableKind::Log, Some(parts)) => {
            let (_, counts) = sc.partition_counts();
            for p in parts.keys() {
                let n = counts.get(p).copied().unwrap_or(t.bucket_count);
                read_back.scans.extend((0..n).map(|bucket| Scan { partition: Some(p.clone()), bucket }));
            }
        }
        (TableKind::Log, None) => read_back.scans.extend((0..t.bucket_count).map(|bucket| Scan { partition: None, bucket })),
        (TableKind::Pk, _) => {
            let key = t.primary_key.iter().filter_map(|k| ft.columns.iter().find(|c| &c.name == k).cloned());
            read_back.key_columns = cols(&key.collect::<Vec<_>>());
            for l in sc.expect.read_back.lookups.iter().flatten() {
                read_back.lookup_values.push(ft.key(&l.key, "expect.read_back.lookups")?);
            }
            read_back.lookups = rows_json(&read_back.lookup_values);
        }
    }
    Ok(Plan {
        cluster_ok: !scenario::uses_faults(sc),
        requires: sc.requires.clone(),
        settle_ms: sc.settle_ms(),
        config: sc.config.clone(),
        table: PlanTable {
            columns: cols(&t.columns),
            primary_key: t.primary_key.clone(),
            bucket_count: t.bucket_count,
            bucket_key: t.bucket_key.clone(),
            partition_keys: t.partition_keys.clone(),
            properties: t.properties.clone(),
        },
        partitions: t.partitions.iter().map(|p| spec(sc, p)).collect::<R<_>>()?,
        faults: faults(&sc.faults)?,
        writers: sc.writers.iter().map(|w| writer(sc, &w.name)).collect::<R<_>>()?,
        steps: sc.steps.iter().enumerate().map(|(i, s)| step(sc, s, scenario::step_path("", None, i))).collect::<R<_>>()?,
        read_back,
    })
}
