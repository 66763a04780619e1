//! The scenario model (deserialized after the file passed the JSON Schema) and the rules a JSON
//! Schema cannot state: unique ids, writer names, code names, row types, stated buckets.

use std::collections::{BTreeMap, HashSet};

use fluss_writer::wire::{bucket_for_key, encode_key};
use fluss_writer::{ClientCode, DataType, FlussCode, Schema as TableSchema, Value};
use serde::Deserialize;
use serde_json::Value as Json;

use crate::schema::Schema;

#[derive(Deserialize, Debug, Clone)]
pub struct Scenario {
    pub description: String,
    pub known_bug: Option<String>,
    #[serde(default = "default_settle")]
    pub settle_timeout_ms: u64,
    pub table: Table,
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    #[serde(default)]
    pub faults: Vec<Fault>,
    pub writers: Vec<WriterSpec>,
    pub steps: Vec<Step>,
    #[serde(default)]
    pub expect: Expect,
}

fn default_settle() -> u64 {
    10_000
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TableKind {
    Log,
    Pk,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Table {
    pub kind: TableKind,
    pub bucket_count: i32,
    pub columns: Vec<Column>,
    #[serde(default)]
    pub primary_key: Vec<String>,
    #[serde(default)]
    pub bucket_key: Vec<String>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Column {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(default = "yes")]
    pub nullable: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize, Debug, Clone)]
#[serde(tag = "fault", rename_all = "snake_case")]
pub enum Fault {
    Error { bucket: i32, times: u32, code: String, message: Option<String> },
    Delay { bucket: i32, times: u32, ms: u64 },
    DropConnection { bucket: i32, times: u32, after_apply: bool },
}

#[derive(Deserialize, Debug, Clone)]
pub struct WriterSpec {
    pub name: String,
    pub kind: String,
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

#[derive(Deserialize, Debug, Clone, Default)]
pub struct CbSpec {
    #[serde(default)]
    pub sleep_ms: u64,
    pub gate: Option<String>,
    #[serde(default)]
    pub raise: bool,
    pub call: Option<Box<Step>>,
}

/// `"normal"` or an object.
#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
pub enum Callback {
    Normal(String),
    Spec(CbSpec),
}

impl Default for Callback {
    fn default() -> Self {
        Callback::Normal("normal".into())
    }
}

impl Callback {
    pub fn spec(&self) -> CbSpec {
        match self {
            Callback::Normal(_) => CbSpec::default(),
            Callback::Spec(s) => s.clone(),
        }
    }
}

#[derive(Deserialize, Debug, Clone)]
pub struct BucketResultSpec {
    pub bucket: i32,
    pub rows: usize,
    pub error: Option<String>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct WriteOp {
    pub id: String,
    pub writer: Option<String>,
    pub row: Option<Vec<Json>>,
    pub key: Option<Vec<Json>>,
    pub rows: Option<Vec<Vec<Json>>>,
    pub bucket: Option<i32>,
    pub buckets: Option<Vec<i32>>,
    #[serde(default)]
    pub notify: Notify,
    #[serde(default)]
    pub callback: Callback,
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
}

#[derive(Deserialize, Debug, Clone)]
pub struct CallStep {
    pub writer: Option<String>,
    pub target: Option<String>,
    pub timeout_ms: Option<u64>,
    pub expect: Option<Json>,
    pub min_elapsed_ms: Option<u64>,
    pub max_elapsed_ms: Option<u64>,
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
    Flush(CallStep),
    Close(CallStep),
    Wait(CallStep),
    AddCallback {
        id: String,
        target: String,
        #[serde(default)]
        callback: Callback,
    },
    Sleep {
        ms: u64,
    },
    OpenGate {
        gate: String,
    },
    AwaitCallback {
        target: String,
        state: CbState,
        timeout_ms: Option<u64>,
    },
    AssertCallback {
        target: String,
        state: CbState,
    },
    Inject {
        faults: Vec<Fault>,
    },
    Parallel {
        threads: BTreeMap<String, Vec<Step>>,
    },
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
pub struct Expect {
    #[serde(default)]
    pub callback_order: Vec<Vec<String>>,
    #[serde(default)]
    pub callback_errors: BTreeMap<String, u64>,
    #[serde(default)]
    pub read_back: ReadBackSpec,
}

#[derive(Deserialize, Debug, Clone, Default)]
pub struct ReadBackSpec {
    pub buckets: Option<BTreeMap<String, Vec<Vec<Json>>>>,
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
    fn cb<'a>(id: &str, c: &'a Callback, out: &mut Vec<(String, &'a Step)>) {
        if let Callback::Spec(CbSpec { call: Some(s), .. }) = c {
            visit(format!("{id}.call"), s, out);
        }
    }
    fn visit<'a>(path: String, s: &'a Step, out: &mut Vec<(String, &'a Step)>) {
        out.push((path.clone(), s));
        match s {
            Step::Parallel { threads } => {
                for (t, steps) in threads {
                    for (i, x) in steps.iter().enumerate() {
                        visit(step_path(&path, Some(t), i), x, out);
                    }
                }
            }
            Step::AddCallback { id, callback, .. } => cb(id, callback, out),
            _ => {
                if let Some(o) = s.write_op() {
                    cb(&o.id, &o.callback, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    for (i, s) in sc.steps.iter().enumerate() {
        visit(step_path("", None, i), s, &mut out);
    }
    out
}

/// Whether the scenario injects faults (then only the embedded engine can run it).
pub fn uses_faults(sc: &Scenario) -> bool {
    !sc.faults.is_empty() || all_steps(sc).iter().any(|(_, s)| matches!(s, Step::Inject { .. }))
}

/// Resolve an error code name through the core's name tables.
pub fn code_of(name: &str) -> Result<i32, String> {
    if let Some(c) = ClientCode::ALL.iter().find(|c| c.name() == name) {
        return Ok(*c as i32);
    }
    if name != "SERVER_ERROR" {
        if let Some((code, _)) = FlussCode::named().find(|(_, n)| *n == name) {
            return Ok(code);
        }
    }
    Err(format!("unknown error code name {name:?}"))
}

pub fn code_name(code: i32) -> String {
    match ClientCode::from_code(code) {
        Some(c) => c.name().to_string(),
        None if code == 0 => "OK".to_string(),
        None => format!("{} ({code})", FlussCode::name(code)),
    }
}

/// An op's or call's allowed outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Accepted and completed with this code (0 = success).
    Completed(i32),
    /// The call itself failed with this code.
    Sync(i32),
}

/// The outcomes an op's `expect` allows.
pub fn op_outcomes(e: &Json) -> Result<Vec<Outcome>, String> {
    if e.as_str() == Some("ok") {
        return Ok(vec![Outcome::Completed(0)]);
    }
    if let Some(a) = e.get("any_of").and_then(Json::as_array) {
        return a.iter().map(op_outcomes).collect::<Result<Vec<_>, _>>().map(|v| v.concat());
    }
    if let Some(n) = e.get("callback_error").and_then(Json::as_str) {
        return Ok(vec![Outcome::Completed(code_of(n)?)]);
    }
    if let Some(n) = e.get("sync_error").and_then(Json::as_str) {
        return Ok(vec![Outcome::Sync(code_of(n)?)]);
    }
    Err(format!("bad expect {e}"))
}

/// The code a flush/close/wait must return (0 = ok).
pub fn call_code(e: &Option<Json>) -> Result<i32, String> {
    match e.as_ref().and_then(|e| e.get("error")).and_then(Json::as_str) {
        Some(n) => code_of(n),
        None => Ok(0),
    }
}

pub fn data_type(t: &str) -> DataType {
    match t {
        "INT" => DataType::Int,
        "BIGINT" => DataType::BigInt,
        "DOUBLE" => DataType::Double,
        "BOOLEAN" => DataType::Boolean,
        _ => DataType::String,
    }
}

impl Table {
    pub fn schema(&self) -> Result<TableSchema, String> {
        let mut b = TableSchema::builder();
        for c in &self.columns {
            b = if c.nullable { b.column(&c.name, data_type(&c.ty)) } else { b.column_not_null(&c.name, data_type(&c.ty)) };
        }
        if !self.primary_key.is_empty() {
            b = b.primary_key(self.primary_key.clone());
        }
        b.build().map_err(|e| format!("table: {e}"))
    }

    /// The bucket key: stated, or the primary key.
    pub fn bucket_key(&self) -> Vec<String> {
        if self.bucket_key.is_empty() {
            self.primary_key.clone()
        } else {
            self.bucket_key.clone()
        }
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
        if v.len() != self.primary_key.len() {
            return Err(format!("{what}: {} values for a key of {} columns", v.len(), self.primary_key.len()));
        }
        let cols: Vec<&Column> = self.primary_key.iter().filter_map(|k| self.columns.iter().find(|c| &c.name == k)).collect();
        v.iter().zip(cols).map(|(x, c)| value(x, c, what)).collect()
    }
}

fn value(v: &Json, c: &Column, what: &str) -> Result<Value, String> {
    let bad = || format!("{what}: {v} is not a {} value for column {}", c.ty, c.name);
    Ok(match (v, c.ty.as_str()) {
        (Json::Null, _) if c.nullable => Value::Null,
        (Json::Null, _) => return Err(format!("{what}: null in NOT NULL column {}", c.name)),
        (_, "INT") => Value::Int(v.as_i64().and_then(|x| i32::try_from(x).ok()).ok_or_else(bad)?),
        (_, "BIGINT") => Value::BigInt(v.as_i64().ok_or_else(bad)?),
        (_, "DOUBLE") => Value::Double(v.as_f64().ok_or_else(bad)?),
        (_, "BOOLEAN") => Value::Boolean(v.as_bool().ok_or_else(bad)?),
        (Json::String(s), _) => Value::String(s.clone()),
        (Json::Object(o), _) => {
            let r = o.get("repeat").and_then(Json::as_str).ok_or_else(bad)?;
            Value::String(r.repeat(o.get("count").and_then(Json::as_u64).ok_or_else(bad)? as usize))
        }
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
    let errs = semantic(&sc);
    if errs.is_empty() {
        Ok(sc)
    } else {
        Err(errs)
    }
}

fn semantic(sc: &Scenario) -> Vec<String> {
    let mut errs = Vec::new();
    let t = &sc.table;
    let log = t.kind == TableKind::Log;
    if log && !t.primary_key.is_empty() {
        errs.push("table: a log table has no primary_key".into());
    }
    if log && t.bucket_key.is_empty() {
        errs.push("table: a log table needs a bucket_key, so that the bucket of every row is known".into());
    }
    if !log && t.primary_key.is_empty() {
        errs.push("table: a pk table needs a primary_key".into());
    }
    let schema = match t.schema() {
        Ok(s) => s,
        Err(e) => return vec![e],
    };
    let bk = match schema.indexes_of(&t.bucket_key()) {
        Ok(b) => b,
        Err(e) => return vec![format!("table: bucket_key: {e}")],
    };
    if sc.config.contains_key("bootstrap.servers") {
        errs.push("config: bootstrap.servers is set by the runner".into());
    }
    let mut names = HashSet::new();
    for w in &sc.writers {
        if !names.insert(w.name.as_str()) {
            errs.push(format!("writers: duplicate name {:?}", w.name));
        }
        if (w.kind == "upsert") != (t.kind == TableKind::Pk) {
            errs.push(format!("writer {}: kind {} does not fit a {:?} table", w.name, w.kind, t.kind));
        }
        for c in w.partial_update.iter().flatten() {
            if !t.columns.iter().any(|x| &x.name == c) {
                errs.push(format!("writer {}: partial_update names unknown column {c:?}", w.name));
            }
        }
    }
    let mut codes: Vec<String> = Vec::new();
    for f in &sc.faults {
        if let Fault::Error { code, .. } = f {
            codes.push(code.clone());
        }
    }
    let steps = all_steps(sc);
    let mut ids: HashSet<&str> = HashSet::new();
    let mut result_ops: HashSet<&str> = HashSet::new();
    let writer_ok = |w: &Option<String>, what: &str, errs: &mut Vec<String>| match w {
        Some(w) if !names.contains(w.as_str()) => errs.push(format!("{what}: unknown writer {w:?}")),
        None if sc.writers.len() > 1 => errs.push(format!("{what}: \"writer\" is required with several writers")),
        _ => {}
    };
    for (path, s) in &steps {
        let nested = path.ends_with(".call");
        if let Some(o) = s.write_op() {
            let what = format!("{path} ({})", o.id);
            if !ids.insert(&o.id) {
                errs.push(format!("{what}: duplicate id {:?}", o.id));
            }
            writer_ok(&o.writer, &what, &mut errs);
            if o.notify == Notify::Result {
                result_ops.insert(&o.id);
            }
            let cb = o.callback.spec();
            if o.notify != Notify::Callback && (cb.call.is_some() || cb.gate.is_some() || cb.raise || cb.sleep_ms > 0) {
                errs.push(format!("{what}: \"callback\" needs notify = callback"));
            }
            if nested && cb.call.is_some() {
                errs.push(format!("{what}: a callback inside a callback's call cannot make calls of its own"));
            }
            if o.bucket_results.is_some() && !matches!(s, Step::AppendArrow(_)) {
                errs.push(format!("{what}: bucket_results only for append_arrow"));
            }
            for b in o.bucket_results.iter().flatten() {
                codes.extend(b.error.clone());
            }
            if let Err(e) = op_outcomes(&o.expect) {
                errs.push(format!("{what}: {e}"));
            }
            // Rows fit the table, and the stated buckets are the core's.
            let rows: Vec<Result<Vec<Value>, String>> = match s {
                Step::Delete(_) => vec![t.key(o.key.as_deref().unwrap_or_default(), &what).map(|k| {
                    let mut row = vec![Value::Null; t.columns.len()];
                    for (v, i) in k.into_iter().zip(schema.primary_key_indexes()) {
                        row[i] = v;
                    }
                    row
                })],
                Step::AppendArrow(_) => o.rows.iter().flatten().map(|r| t.row(r, &what)).collect(),
                _ => vec![t.row(o.row.as_deref().unwrap_or_default(), &what)],
            };
            let buckets = o.buckets();
            if rows.len() != buckets.len() {
                errs.push(format!("{what}: {} rows but {} buckets", rows.len(), buckets.len()));
            }
            for (i, (r, b)) in rows.into_iter().zip(buckets).enumerate() {
                match r {
                    Err(e) => errs.push(e),
                    Ok(row) => {
                        let mut key = Vec::new();
                        match encode_key(&schema, &bk, &row, &mut key) {
                            Err(e) => errs.push(format!("{what}: {e}")),
                            Ok(()) => {
                                let core = bucket_for_key(&key, t.bucket_count);
                                if core != b {
                                    errs.push(format!(
                                        "{what} row {i}: the file says bucket {b} but the core's bucketing gives {core} (fix the file)"
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
        match s {
            Step::AddCallback { id, callback, .. } => {
                if !ids.insert(id) {
                    errs.push(format!("{path}: duplicate id {id:?}"));
                }
                if callback
                    .spec()
                    .call
                    .as_ref()
                    .is_some_and(|c| c.write_op().is_none() && !matches!(**c, Step::Flush(_) | Step::Close(_) | Step::Wait(_)))
                {
                    errs.push(format!("{path}: a callback can call flush, close, wait or a write op only"));
                }
            }
            Step::Flush(c) | Step::Close(c) => {
                writer_ok(&c.writer, path, &mut errs);
                if let Err(e) = call_code(&c.expect) {
                    errs.push(format!("{path}: {e}"));
                }
            }
            Step::Wait(c) => {
                if let Err(e) = call_code(&c.expect) {
                    errs.push(format!("{path}: {e}"));
                }
            }
            Step::Inject { faults } => {
                for f in faults {
                    if let Fault::Error { code, .. } = f {
                        codes.push(code.clone());
                    }
                }
            }
            Step::Parallel { threads } if path.contains('.') || threads.values().flatten().any(|s| matches!(s, Step::Parallel { .. })) => {
                errs.push(format!("{path}: parallel blocks do not nest"));
            }
            _ => {}
        }
    }
    for (path, s) in &steps {
        let target = match s {
            Step::Wait(c) => c.target.as_deref(),
            Step::AddCallback { target, .. } => Some(target.as_str()),
            _ => None,
        };
        if let Some(t) = target {
            if !result_ops.contains(t) {
                errs.push(format!("{path}: target {t:?} is not an op with notify = result"));
            }
        }
        if let Step::AwaitCallback { target, .. } | Step::AssertCallback { target, .. } = s {
            if !ids.contains(target.as_str()) {
                errs.push(format!("{path}: unknown target {target:?}"));
            }
        }
    }
    for c in codes {
        if let Err(e) = code_of(&c) {
            errs.push(e);
        }
    }
    for chain in &sc.expect.callback_order {
        for id in chain {
            if !ids.contains(id.as_str()) {
                errs.push(format!("expect.callback_order: unknown id {id:?}"));
            }
        }
    }
    for w in sc.expect.callback_errors.keys() {
        if !names.contains(w.as_str()) {
            errs.push(format!("expect.callback_errors: unknown writer {w:?}"));
        }
    }
    if let Some(b) = &sc.expect.read_back.buckets {
        if !log {
            errs.push("expect.read_back.buckets is for log tables".into());
        }
        let want: Vec<String> = (0..t.bucket_count).map(|b| b.to_string()).collect();
        if b.keys().cloned().collect::<HashSet<_>>() != want.iter().cloned().collect::<HashSet<_>>() {
            errs.push("expect.read_back.buckets must list every bucket of the table (empty lists allowed)".into());
        }
        for rows in b.values() {
            errs.extend(rows.iter().filter_map(|r| t.row(r, "expect.read_back").err()));
        }
    }
    if let Some(l) = &sc.expect.read_back.lookups {
        if log {
            errs.push("expect.read_back.lookups is for pk tables".into());
        }
        for x in l {
            errs.extend(t.key(&x.key, "expect.read_back.lookups").err());
            errs.extend(x.row.as_ref().and_then(|r| t.row(r, "expect.read_back.lookups").err()));
        }
    }
    errs
}
