//! The Rust runner of the golden scenarios (`golden/*.json`, format in `golden/README.md`).
//!
//! Every file is its own named test (libtest-mimic, `harness = false`), discovered at run time:
//! a new file is picked up with no code change. A file with an unknown field, op or value fails;
//! nothing is ever skipped. A file marked `known_bug` is run and reported as a failure too.
//!
//! Run one scenario: `cargo test -p fluss-writer --test golden -- 007_close_timeout`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Condvar, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use fluss_writer::embedded::{EmbeddedEngine, Fault};
use fluss_writer::wire::{arrow_schema, bucket_for_key, encode_key};
use fluss_writer::{
    AppendWriter, CallbackExecutor, ClientCode, Config, Connection, DataType, Error, FlussCode, Schema, TableDescriptor, TablePath,
    UpsertWriter, Value, WriteCompletion, WriteResult, WriterOptions,
};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Map, Value as Json};

type R<T> = std::result::Result<T, String>;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../golden")
}

fn main() {
    let args = Arguments::from_args();
    // Callbacks that raise on purpose should not flood the output.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info.payload().downcast_ref::<String>().map(String::as_str).unwrap_or("");
        if !msg.starts_with("golden: ") {
            default_hook(info);
        }
    }));
    let dir = golden_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no golden/*.json files in {}", dir.display());
    let mut trials: Vec<Trial> = files
        .iter()
        .cloned()
        .map(|p| {
            let name = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            Trial::test(name, move || run_file(&p, &Target::Embedded).map_err(Failed::from))
        })
        .collect();
    // Against a real Fluss cluster: every scenario that needs no fault injection.
    match std::env::var("FLUSS_BOOTSTRAP_SERVERS").ok().filter(|s| !s.is_empty()) {
        Some(bootstrap) => {
            for p in files {
                if !needs_no_faults(&p) {
                    continue;
                }
                let name = format!("cluster/{}", p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
                let target = Target::Cluster(bootstrap.clone());
                trials.push(Trial::test(name, move || run_file(&p, &target).map_err(Failed::from)));
            }
        }
        None if std::env::var("CI").is_ok_and(|v| v == "true") => trials.push(Trial::test("cluster/required", || {
            Err(Failed::from("CI=true but FLUSS_BOOTSTRAP_SERVERS is not set: the golden scenarios must also run against a real cluster"))
        })),
        None => eprintln!("golden: FLUSS_BOOTSTRAP_SERVERS is not set: the scenarios did NOT run against a real Fluss cluster"),
    }
    libtest_mimic::run(&args, trials).exit();
}

// ===================================================================================== parsing

/// A JSON object whose every key must be consumed: leftover keys are an error.
struct Obj<'a> {
    map: &'a Map<String, Json>,
    used: HashSet<&'static str>,
    what: String,
}

impl<'a> Obj<'a> {
    fn new(v: &'a Json, what: impl Into<String>) -> R<Obj<'a>> {
        let what = what.into();
        match v {
            Json::Object(map) => Ok(Obj { map, used: HashSet::new(), what }),
            _ => Err(format!("{what}: expected an object, got {v}")),
        }
    }

    fn opt(&mut self, k: &'static str) -> Option<&'a Json> {
        self.used.insert(k);
        self.map.get(k).filter(|v| !v.is_null())
    }

    fn req(&mut self, k: &'static str) -> R<&'a Json> {
        let what = self.what.clone();
        self.opt(k).ok_or_else(|| format!("{what}: missing field {k:?}"))
    }

    fn str(&mut self, k: &'static str) -> R<String> {
        let v = self.req(k)?;
        v.as_str().map(str::to_string).ok_or_else(|| format!("{}: {k:?} must be a string, got {v}", self.what))
    }

    fn opt_str(&mut self, k: &'static str) -> R<Option<String>> {
        match self.opt(k) {
            None => Ok(None),
            Some(v) => v.as_str().map(|s| Some(s.to_string())).ok_or_else(|| format!("{}: {k:?} must be a string, got {v}", self.what)),
        }
    }

    fn opt_u64(&mut self, k: &'static str) -> R<Option<u64>> {
        match self.opt(k) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| format!("{}: {k:?} must be a non-negative integer, got {v}", self.what)),
        }
    }

    fn u64(&mut self, k: &'static str) -> R<u64> {
        let what = self.what.clone();
        self.opt_u64(k)?.ok_or_else(|| format!("{what}: missing field {k:?}"))
    }

    fn opt_bool(&mut self, k: &'static str) -> R<Option<bool>> {
        match self.opt(k) {
            None => Ok(None),
            Some(v) => v.as_bool().map(Some).ok_or_else(|| format!("{}: {k:?} must be true or false, got {v}", self.what)),
        }
    }

    fn arr(&mut self, k: &'static str) -> R<&'a Vec<Json>> {
        let v = self.req(k)?;
        v.as_array().ok_or_else(|| format!("{}: {k:?} must be an array, got {v}", self.what))
    }

    fn opt_arr(&mut self, k: &'static str) -> R<Option<&'a Vec<Json>>> {
        match self.opt(k) {
            None => Ok(None),
            Some(v) => v.as_array().map(Some).ok_or_else(|| format!("{}: {k:?} must be an array, got {v}", self.what)),
        }
    }

    fn strings(&mut self, k: &'static str) -> R<Option<Vec<String>>> {
        let what = self.what.clone();
        match self.opt_arr(k)? {
            None => Ok(None),
            Some(a) => a
                .iter()
                .map(|x| x.as_str().map(str::to_string).ok_or_else(|| format!("{what}: {k:?} must hold strings")))
                .collect::<R<Vec<_>>>()
                .map(Some),
        }
    }

    /// Fail on any key that was not consumed.
    fn done(self) -> R<()> {
        let mut extra: Vec<&String> = self.map.keys().filter(|k| !self.used.contains(k.as_str())).collect();
        extra.sort();
        if extra.is_empty() {
            Ok(())
        } else {
            Err(format!("{}: unknown field(s) {extra:?} (a runner never skips what it does not understand)", self.what))
        }
    }
}

/// Resolve an error code name through the core's name tables.
fn code_of(name: &str) -> R<i32> {
    if let Some(c) = ClientCode::ALL.iter().find(|c| c.name() == name) {
        return Ok(*c as i32);
    }
    if name != "SERVER_ERROR" {
        if let Some(code) = (-1..=1000).find(|&c| FlussCode::name(c) == name) {
            return Ok(code);
        }
    }
    Err(format!("unknown error code name {name:?}"))
}

fn code_name(code: i32) -> String {
    match ClientCode::from_code(code) {
        Some(c) => c.name().to_string(),
        None if code == 0 => "OK".to_string(),
        None => format!("{} ({code})", FlussCode::name(code)),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TableKind {
    Log,
    Pk,
}

struct TableSpec {
    kind: TableKind,
    bucket_count: i32,
    schema: Schema,
    bucket_key: Vec<String>,
}

#[derive(Clone, Debug)]
enum ExecSpec {
    Fifo,
    Sharded(usize),
}

struct WriterSpec {
    name: String,
    upsert: bool,
    partial_update: Option<Vec<String>>,
    max_pending_callbacks: Option<u64>,
    executor: ExecSpec,
}

#[derive(Clone, Debug)]
enum FaultSpec {
    Error { bucket: i32, code: i32, times: u32, message: String },
    Delay { bucket: i32, ms: u64, times: u32 },
    Drop { bucket: i32, after_apply: bool, times: u32 },
}

#[derive(Clone, Debug, PartialEq)]
enum OpExpect {
    Ok,
    CallbackError(i32),
    SyncError(i32),
    AnyOf(Vec<OpExpect>),
}

impl OpExpect {
    fn branches(&self) -> Vec<&OpExpect> {
        match self {
            OpExpect::AnyOf(v) => v.iter().flat_map(|x| x.branches()).collect(),
            x => vec![x],
        }
    }
    fn allows_sync(&self, code: i32) -> bool {
        self.branches().iter().any(|b| **b == OpExpect::SyncError(code))
    }
    fn allows_accept(&self) -> bool {
        self.branches().iter().any(|b| !matches!(b, OpExpect::SyncError(_)))
    }
    fn allows_outcome(&self, code: i32) -> bool {
        self.branches().iter().any(|b| match b {
            OpExpect::Ok => code == 0,
            OpExpect::CallbackError(c) => *c == code,
            OpExpect::SyncError(_) | OpExpect::AnyOf(_) => false,
        })
    }
}

impl std::fmt::Display for OpExpect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpExpect::Ok => write!(f, "ok"),
            OpExpect::CallbackError(c) => write!(f, "callback_error {}", code_name(*c)),
            OpExpect::SyncError(c) => write!(f, "sync_error {}", code_name(*c)),
            OpExpect::AnyOf(v) => write!(f, "any_of [{}]", v.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum CallExpect {
    Ok,
    Error(i32),
}

#[derive(Clone, Debug, Default)]
struct Timing {
    min_ms: Option<u64>,
    max_ms: Option<u64>,
}

impl Timing {
    fn parse(o: &mut Obj) -> R<Timing> {
        Ok(Timing { min_ms: o.opt_u64("min_elapsed_ms")?, max_ms: o.opt_u64("max_elapsed_ms")? })
    }
    fn check(&self, what: &str, elapsed: Duration) -> R<()> {
        let ms = elapsed.as_secs_f64() * 1000.0;
        if let Some(min) = self.min_ms {
            if ms < min as f64 {
                return Err(format!("{what} took {ms:.1} ms, expected at least {min} ms"));
            }
        }
        if let Some(max) = self.max_ms {
            if ms > max as f64 {
                return Err(format!("{what} took {ms:.1} ms, expected at most {max} ms"));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Notify {
    Callback,
    Result,
    Detached,
}

#[derive(Clone, Debug, Default)]
struct CbSpec {
    sleep_ms: u64,
    gate: Option<String>,
    raise: bool,
    call: Option<Box<Step>>,
}

#[derive(Clone, Debug)]
enum Input {
    Append(Vec<Value>),
    Upsert(Vec<Value>),
    Delete(Vec<Value>),
    Arrow(Vec<Vec<Value>>),
}

#[derive(Clone, Debug)]
struct WriteOp {
    id: String,
    writer: String,
    input: Input,
    /// One bucket per row (a single entry for append/upsert/delete).
    buckets: Vec<i32>,
    notify: Notify,
    callback: CbSpec,
    expect: OpExpect,
    offset: Option<i64>,
    bucket_results: Option<Vec<(i32, usize, Option<i32>)>>,
    timing: Timing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CbState {
    NotStarted,
    Running,
    Returned,
}

#[derive(Clone, Debug)]
enum Step {
    Write(WriteOp),
    Flush { writer: String, timeout_ms: Option<u64>, expect: CallExpect, timing: Timing },
    Close { writer: String, timeout_ms: Option<u64>, expect: CallExpect, timing: Timing },
    Wait { target: String, timeout_ms: Option<u64>, expect: CallExpect, timing: Timing },
    AddCallback { id: String, target: String, callback: CbSpec },
    Sleep(u64),
    OpenGate(String),
    AwaitCallback { target: String, state: CbState, timeout_ms: u64 },
    AssertCallback { target: String, state: CbState },
    Inject(Vec<FaultSpec>),
    Parallel(Vec<(String, Vec<Step>)>),
}

enum ReadBack {
    None,
    Log(BTreeMap<i32, Vec<Vec<Value>>>),
    Lookups(Vec<(Vec<Value>, Option<Vec<Value>>)>),
}

struct Scenario {
    table: TableSpec,
    config: Vec<(String, String)>,
    faults: Vec<FaultSpec>,
    writers: Vec<WriterSpec>,
    steps: Vec<Step>,
    callback_order: Vec<Vec<String>>,
    callback_errors: HashMap<String, u64>,
    read_back: ReadBack,
    settle_ms: u64,
    known_bug: Option<String>,
}

fn parse_type(s: &str) -> R<DataType> {
    Ok(match s {
        "INT" => DataType::Int,
        "BIGINT" => DataType::BigInt,
        "STRING" => DataType::String,
        "DOUBLE" => DataType::Double,
        "BOOLEAN" => DataType::Boolean,
        _ => return Err(format!("unsupported column type {s:?} (INT, BIGINT, STRING, DOUBLE, BOOLEAN)")),
    })
}

fn parse_value(v: &Json, t: DataType, nullable: bool, what: &str) -> R<Value> {
    let bad = || format!("{what}: value {v} does not fit {t}");
    Ok(match v {
        Json::Null if nullable => Value::Null,
        Json::Null => return Err(format!("{what}: null in a NOT NULL column")),
        Json::Object(_) => {
            let mut o = Obj::new(v, format!("{what}: repeat value"))?;
            let s = o.str("repeat")?;
            let n = o.u64("count")?;
            o.done()?;
            if t != DataType::String {
                return Err(bad());
            }
            Value::String(s.repeat(n as usize))
        }
        _ => match t {
            DataType::Int => Value::Int(v.as_i64().and_then(|x| i32::try_from(x).ok()).ok_or_else(bad)?),
            DataType::BigInt => Value::BigInt(v.as_i64().ok_or_else(bad)?),
            DataType::Double => Value::Double(v.as_f64().ok_or_else(bad)?),
            DataType::Boolean => Value::Boolean(v.as_bool().ok_or_else(bad)?),
            DataType::String => Value::String(v.as_str().ok_or_else(bad)?.to_string()),
            _ => return Err(bad()),
        },
    })
}

fn parse_row(v: &Json, schema: &Schema, what: &str) -> R<Vec<Value>> {
    let a = v.as_array().ok_or_else(|| format!("{what}: a row must be an array"))?;
    if a.len() != schema.len() {
        return Err(format!("{what}: the row has {} values, the table {} columns", a.len(), schema.len()));
    }
    a.iter().zip(schema.columns()).map(|(x, c)| parse_value(x, c.data_type, c.nullable, what)).collect()
}

fn parse_key(v: &Json, schema: &Schema, what: &str) -> R<Vec<Value>> {
    let a = v.as_array().ok_or_else(|| format!("{what}: a key must be an array"))?;
    let pk = schema.primary_key_indexes();
    if a.len() != pk.len() {
        return Err(format!("{what}: the key has {} values, the primary key {} columns", a.len(), pk.len()));
    }
    a.iter().zip(&pk).map(|(x, &i)| parse_value(x, schema.columns()[i].data_type, false, what)).collect()
}

fn parse_code(v: &Json, what: &str) -> R<i32> {
    code_of(v.as_str().ok_or_else(|| format!("{what}: an error code must be a name string, got {v}"))?)
}

fn parse_op_expect(v: &Json, what: &str) -> R<OpExpect> {
    if v.as_str() == Some("ok") {
        return Ok(OpExpect::Ok);
    }
    let mut o = Obj::new(v, format!("{what}: expect"))?;
    let r = if let Some(c) = o.opt("callback_error") {
        OpExpect::CallbackError(parse_code(c, what)?)
    } else if let Some(c) = o.opt("sync_error") {
        OpExpect::SyncError(parse_code(c, what)?)
    } else if let Some(a) = o.opt_arr("any_of")? {
        OpExpect::AnyOf(a.iter().map(|x| parse_op_expect(x, what)).collect::<R<_>>()?)
    } else {
        return Err(format!("{what}: expect must be \"ok\", {{\"callback_error\"}}, {{\"sync_error\"}} or {{\"any_of\"}}, got {v}"));
    };
    o.done()?;
    Ok(r)
}

fn parse_call_expect(v: Option<&Json>, what: &str) -> R<CallExpect> {
    let v = v.ok_or_else(|| format!("{what}: missing field \"expect\""))?;
    if v.as_str() == Some("ok") {
        return Ok(CallExpect::Ok);
    }
    let mut o = Obj::new(v, format!("{what}: expect"))?;
    let c = parse_code(o.req("error")?, what)?;
    o.done()?;
    Ok(CallExpect::Error(c))
}

fn parse_state(s: &str) -> R<CbState> {
    Ok(match s {
        "not_started" => CbState::NotStarted,
        "running" => CbState::Running,
        "returned" => CbState::Returned,
        "started" => CbState::Running,
        _ => return Err(format!("unknown callback state {s:?}")),
    })
}

struct Ctx<'a> {
    schema: &'a Schema,
    writers: &'a HashMap<String, bool>,
    default_writer: Option<String>,
    ids: HashSet<String>,
}

impl Ctx<'_> {
    fn writer(&self, o: &mut Obj) -> R<String> {
        match o.opt_str("writer")? {
            Some(w) if self.writers.contains_key(&w) => Ok(w),
            Some(w) => Err(format!("{}: unknown writer {w:?}", o.what)),
            None => self.default_writer.clone().ok_or_else(|| format!("{}: \"writer\" is required with several writers", o.what)),
        }
    }

    fn new_id(&mut self, id: String, what: &str) -> R<String> {
        if !self.ids.insert(id.clone()) {
            return Err(format!("{what}: duplicate id {id:?}"));
        }
        Ok(id)
    }
}

fn parse_callback(v: Option<&Json>, ctx: &mut Ctx, what: &str, nested: bool) -> R<CbSpec> {
    let Some(v) = v else { return Ok(CbSpec::default()) };
    if v.as_str() == Some("normal") {
        return Ok(CbSpec::default());
    }
    let mut o = Obj::new(v, format!("{what}: callback"))?;
    let mut cb = CbSpec {
        sleep_ms: o.opt_u64("sleep_ms")?.unwrap_or(0),
        gate: o.opt_str("gate")?,
        raise: o.opt_bool("raise")?.unwrap_or(false),
        call: None,
    };
    if let Some(c) = o.opt("call") {
        if nested {
            return Err(format!("{what}: a callback inside a callback's call cannot make calls of its own"));
        }
        let step = parse_step(c, ctx, &format!("{what}: call"), true)?;
        match step {
            Step::Write(_) | Step::Flush { .. } | Step::Close { .. } | Step::Wait { .. } => {}
            _ => return Err(format!("{what}: a callback can call flush, close, wait or a write op only")),
        }
        cb.call = Some(Box::new(step));
    }
    o.done()?;
    Ok(cb)
}

fn parse_faults(v: &[Json], what: &str) -> R<Vec<FaultSpec>> {
    v.iter()
        .enumerate()
        .map(|(i, f)| {
            let what = format!("{what}[{i}]");
            let mut o = Obj::new(f, &what)?;
            let bucket = o.u64("bucket")? as i32;
            let times = o.u64("times")? as u32;
            let kind = o.str("fault")?;
            let spec = match kind.as_str() {
                "error" => FaultSpec::Error {
                    bucket,
                    times,
                    code: parse_code(o.req("code")?, &what)?,
                    message: o.opt_str("message")?.unwrap_or_else(|| "injected by a golden scenario".into()),
                },
                "delay" => FaultSpec::Delay { bucket, times, ms: o.u64("ms")? },
                "drop_connection" => FaultSpec::Drop {
                    bucket,
                    times,
                    after_apply: o.opt_bool("after_apply")?.ok_or_else(|| format!("{what}: missing field \"after_apply\""))?,
                },
                _ => return Err(format!("{what}: unknown fault {kind:?}")),
            };
            o.done()?;
            Ok(spec)
        })
        .collect()
}

fn parse_step(v: &Json, ctx: &mut Ctx, what: &str, in_callback: bool) -> R<Step> {
    let mut o = Obj::new(v, what)?;
    let op = o.str("op")?;
    let what = match v.get("id").and_then(Json::as_str) {
        Some(id) => format!("{what} ({op} {id})"),
        None => format!("{what} ({op})"),
    };
    o.what = what.clone();
    let step = match op.as_str() {
        "append" | "upsert" | "delete" | "append_arrow" => {
            let id = ctx.new_id(o.str("id")?, &what)?;
            let writer = ctx.writer(&mut o)?;
            let (input, buckets) = match op.as_str() {
                "append" => (Input::Append(parse_row(o.req("row")?, ctx.schema, &what)?), vec![o.u64("bucket")? as i32]),
                "upsert" => (Input::Upsert(parse_row(o.req("row")?, ctx.schema, &what)?), vec![o.u64("bucket")? as i32]),
                "delete" => (Input::Delete(parse_key(o.req("key")?, ctx.schema, &what)?), vec![o.u64("bucket")? as i32]),
                _ => {
                    let rows = o.arr("rows")?.iter().map(|r| parse_row(r, ctx.schema, &what)).collect::<R<Vec<_>>>()?;
                    let buckets = o
                        .arr("buckets")?
                        .iter()
                        .map(|b| b.as_u64().map(|b| b as i32).ok_or_else(|| format!("{what}: buckets must be integers")))
                        .collect::<R<Vec<_>>>()?;
                    if buckets.len() != rows.len() {
                        return Err(format!("{what}: {} rows but {} buckets", rows.len(), buckets.len()));
                    }
                    (Input::Arrow(rows), buckets)
                }
            };
            let notify = match o.opt_str("notify")?.as_deref() {
                None | Some("callback") => Notify::Callback,
                Some("result") => Notify::Result,
                Some("detached") => Notify::Detached,
                Some(x) => return Err(format!("{what}: unknown notify {x:?}")),
            };
            let callback = parse_callback(o.opt("callback"), ctx, &what, in_callback)?;
            if notify != Notify::Callback && (callback.call.is_some() || callback.gate.is_some() || callback.raise || callback.sleep_ms > 0)
            {
                return Err(format!("{what}: \"callback\" needs notify = callback"));
            }
            let expect = parse_op_expect(o.req("expect")?, &what)?;
            let offset = match o.opt("offset") {
                None => None,
                Some(x) => Some(x.as_i64().ok_or_else(|| format!("{what}: offset must be an integer"))?),
            };
            let bucket_results = match o.opt_arr("bucket_results")? {
                None => None,
                Some(a) => {
                    if !matches!(input, Input::Arrow(_)) {
                        return Err(format!("{what}: bucket_results only for append_arrow"));
                    }
                    let mut out = Vec::new();
                    for (i, x) in a.iter().enumerate() {
                        let mut bo = Obj::new(x, format!("{what}: bucket_results[{i}]"))?;
                        let b = bo.u64("bucket")? as i32;
                        let rows = bo.u64("rows")? as usize;
                        let err = match bo.opt("error") {
                            None => None,
                            Some(c) => Some(parse_code(c, &what)?),
                        };
                        bo.done()?;
                        out.push((b, rows, err));
                    }
                    Some(out)
                }
            };
            let timing = Timing::parse(&mut o)?;
            Step::Write(WriteOp { id, writer, input, buckets, notify, callback, expect, offset, bucket_results, timing })
        }
        "flush" | "close" => {
            let writer = ctx.writer(&mut o)?;
            let timeout_ms = o.opt_u64("timeout_ms")?;
            let expect = parse_call_expect(o.opt("expect"), &what)?;
            let timing = Timing::parse(&mut o)?;
            if op == "flush" {
                Step::Flush { writer, timeout_ms, expect, timing }
            } else {
                Step::Close { writer, timeout_ms, expect, timing }
            }
        }
        "wait" => {
            let target = o.str("target")?;
            let timeout_ms = o.opt_u64("timeout_ms")?;
            let expect = parse_call_expect(o.opt("expect"), &what)?;
            let timing = Timing::parse(&mut o)?;
            Step::Wait { target, timeout_ms, expect, timing }
        }
        _ if in_callback => return Err(format!("{what}: op {op:?} cannot be called from a callback")),
        "add_callback" => {
            let id = ctx.new_id(o.str("id")?, &what)?;
            let target = o.str("target")?;
            let callback = parse_callback(o.opt("callback"), ctx, &what, false)?;
            Step::AddCallback { id, target, callback }
        }
        "sleep" => Step::Sleep(o.u64("ms")?),
        "open_gate" => Step::OpenGate(o.str("gate")?),
        "await_callback" => Step::AwaitCallback {
            target: o.str("target")?,
            state: parse_state(&o.str("state")?)?,
            timeout_ms: o.opt_u64("timeout_ms")?.unwrap_or(10_000),
        },
        "assert_callback" => Step::AssertCallback { target: o.str("target")?, state: parse_state(&o.str("state")?)? },
        "inject" => Step::Inject(parse_faults(o.arr("faults")?, &what)?),
        "parallel" => {
            let threads = o.req("threads")?.as_object().ok_or_else(|| format!("{what}: threads must be an object"))?;
            let mut out = Vec::new();
            for (name, steps) in threads {
                let steps = steps.as_array().ok_or_else(|| format!("{what}: thread {name} must be a list of steps"))?;
                let mut parsed = Vec::new();
                for (i, s) in steps.iter().enumerate() {
                    let st = parse_step(s, ctx, &format!("{what}: thread {name} step {i}"), false)?;
                    if matches!(st, Step::Parallel(_)) {
                        return Err(format!("{what}: parallel blocks do not nest"));
                    }
                    parsed.push(st);
                }
                out.push((name.clone(), parsed));
            }
            if out.is_empty() {
                return Err(format!("{what}: no threads"));
            }
            Step::Parallel(out)
        }
        _ => return Err(format!("{what}: unknown op {op:?}")),
    };
    o.done()?;
    Ok(step)
}

fn parse_scenario(v: &Json) -> R<Scenario> {
    let mut o = Obj::new(v, "scenario")?;
    o.str("description")?;
    let known_bug = o.opt_str("known_bug")?;
    let settle_ms = o.opt_u64("settle_timeout_ms")?.unwrap_or(10_000);

    let mut t = Obj::new(o.req("table")?, "table")?;
    let kind = match t.str("kind")?.as_str() {
        "log" => TableKind::Log,
        "pk" => TableKind::Pk,
        k => return Err(format!("table: unknown kind {k:?}")),
    };
    let bucket_count = t.u64("bucket_count")? as i32;
    let mut b = Schema::builder();
    for (i, c) in t.arr("columns")?.iter().enumerate() {
        let mut co = Obj::new(c, format!("table.columns[{i}]"))?;
        let name = co.str("name")?;
        let ty = parse_type(&co.str("type")?)?;
        let nullable = co.opt_bool("nullable")?.unwrap_or(true);
        co.done()?;
        b = if nullable { b.column(name, ty) } else { b.column_not_null(name, ty) };
    }
    let pk = t.strings("primary_key")?.unwrap_or_default();
    let bucket_key = t.strings("bucket_key")?.unwrap_or_default();
    t.done()?;
    match kind {
        TableKind::Log if !pk.is_empty() => return Err("table: a log table has no primary_key".into()),
        TableKind::Log if bucket_key.is_empty() => {
            return Err("table: a log table needs a bucket_key, so that the bucket of every row is known".into())
        }
        TableKind::Pk if pk.is_empty() => return Err("table: a pk table needs a primary_key".into()),
        _ => {}
    }
    if !pk.is_empty() {
        b = b.primary_key(pk.clone());
    }
    let schema = b.build().map_err(|e| format!("table: {e}"))?;
    let bucket_key = if bucket_key.is_empty() { pk } else { bucket_key };
    let table = TableSpec { kind, bucket_count, schema, bucket_key };

    let mut config = Vec::new();
    if let Some(c) = o.opt("config") {
        let m = c.as_object().ok_or("config must be an object")?;
        for (k, v) in m {
            if k == "bootstrap.servers" {
                return Err("config: bootstrap.servers is set by the runner".into());
            }
            let v = v.as_str().ok_or_else(|| format!("config: {k} must be a string"))?;
            config.push((k.clone(), v.to_string()));
        }
    }
    let faults = match o.opt_arr("faults")? {
        None => Vec::new(),
        Some(a) => parse_faults(a, "faults")?,
    };
    let mut writers = Vec::new();
    for (i, w) in o.arr("writers")?.iter().enumerate() {
        let mut wo = Obj::new(w, format!("writers[{i}]"))?;
        let name = wo.str("name")?;
        let upsert = match wo.str("kind")?.as_str() {
            "append" => false,
            "upsert" => true,
            k => return Err(format!("writers[{i}]: unknown kind {k:?}")),
        };
        if upsert != (kind == TableKind::Pk) {
            return Err(format!("writers[{i}]: kind does not fit the table"));
        }
        let partial_update = wo.strings("partial_update")?;
        let max_pending_callbacks = wo.opt_u64("max_pending_callbacks")?;
        let executor = match wo.opt("executor") {
            None => ExecSpec::Fifo,
            Some(Json::String(s)) if s == "fifo" => ExecSpec::Fifo,
            Some(e) => {
                let mut eo = Obj::new(e, format!("writers[{i}].executor"))?;
                let n = eo.u64("sharded")? as usize;
                eo.done()?;
                ExecSpec::Sharded(n)
            }
        };
        wo.done()?;
        writers.push(WriterSpec { name, upsert, partial_update, max_pending_callbacks, executor });
    }
    if writers.is_empty() {
        return Err("writers: at least one".into());
    }
    let wmap: HashMap<String, bool> = writers.iter().map(|w| (w.name.clone(), w.upsert)).collect();
    if wmap.len() != writers.len() {
        return Err("writers: duplicate names".into());
    }
    let mut ctx = Ctx {
        schema: &table.schema,
        writers: &wmap,
        default_writer: if writers.len() == 1 { Some(writers[0].name.clone()) } else { None },
        ids: HashSet::new(),
    };
    let mut steps = Vec::new();
    for (i, s) in o.arr("steps")?.iter().enumerate() {
        steps.push(parse_step(s, &mut ctx, &format!("steps[{i}]"), false)?);
    }
    let ids = ctx.ids.clone();

    let mut callback_order = Vec::new();
    let mut callback_errors = HashMap::new();
    let mut read_back = ReadBack::None;
    if let Some(e) = o.opt("expect") {
        let mut eo = Obj::new(e, "expect")?;
        if let Some(a) = eo.opt_arr("callback_order")? {
            for chain in a {
                let chain: Vec<String> = chain
                    .as_array()
                    .ok_or("expect.callback_order: chains must be arrays of ids")?
                    .iter()
                    .map(|x| x.as_str().map(str::to_string).ok_or_else(|| "expect.callback_order: ids are strings".to_string()))
                    .collect::<R<_>>()?;
                for id in &chain {
                    if !ids.contains(id) {
                        return Err(format!("expect.callback_order: unknown id {id:?}"));
                    }
                }
                callback_order.push(chain);
            }
        }
        if let Some(m) = eo.opt("callback_errors") {
            for (k, v) in m.as_object().ok_or("expect.callback_errors must be an object")? {
                if !wmap.contains_key(k) {
                    return Err(format!("expect.callback_errors: unknown writer {k:?}"));
                }
                callback_errors.insert(k.clone(), v.as_u64().ok_or("expect.callback_errors: counts are integers")?);
            }
        }
        if let Some(rb) = eo.opt("read_back") {
            let mut ro = Obj::new(rb, "expect.read_back")?;
            if let Some(bm) = ro.opt("buckets") {
                if kind != TableKind::Log {
                    return Err("expect.read_back.buckets is for log tables".into());
                }
                let bm = bm.as_object().ok_or("expect.read_back.buckets must be an object")?;
                let mut out = BTreeMap::new();
                for (k, rows) in bm {
                    let b: i32 = k.parse().map_err(|_| format!("expect.read_back.buckets: key {k:?} is not a bucket number"))?;
                    let rows = rows.as_array().ok_or("expect.read_back.buckets: values are lists of rows")?;
                    let rows = rows.iter().map(|r| parse_row(r, &table.schema, "expect.read_back")).collect::<R<Vec<_>>>()?;
                    out.insert(b, rows);
                }
                if out.len() != bucket_count as usize || out.keys().any(|b| *b < 0 || *b >= bucket_count) {
                    return Err("expect.read_back.buckets must list every bucket of the table (empty lists allowed)".into());
                }
                read_back = ReadBack::Log(out);
            }
            if let Some(l) = ro.opt_arr("lookups")? {
                if kind != TableKind::Pk {
                    return Err("expect.read_back.lookups is for pk tables".into());
                }
                let mut out = Vec::new();
                for (i, x) in l.iter().enumerate() {
                    let mut lo = Obj::new(x, format!("expect.read_back.lookups[{i}]"))?;
                    let key = parse_key(lo.req("key")?, &table.schema, "lookup")?;
                    lo.used.insert("row");
                    let row = match x.get("row") {
                        None => return Err(format!("expect.read_back.lookups[{i}]: missing field \"row\" (null for absent)")),
                        Some(Json::Null) => None,
                        Some(r) => Some(parse_row(r, &table.schema, "lookup")?),
                    };
                    lo.done()?;
                    out.push((key, row));
                }
                read_back = ReadBack::Lookups(out);
            }
            ro.done()?;
        }
        eo.done()?;
    }
    o.done()?;
    Ok(Scenario { table, config, faults, writers, steps, callback_order, callback_errors, read_back, settle_ms, known_bug })
}

// ===================================================================================== running

#[derive(Clone, Debug)]
struct Invocation {
    seq: u64,
    thread: ThreadId,
    code: i32,
    bucket: i32,
    offset: i64,
    bucket_results: Vec<(i32, usize, Option<i32>)>,
}

#[derive(Default)]
struct OpRecord {
    writer: String,
    /// For late callbacks: the op they were registered on.
    target: Option<String>,
    arrow: bool,
    notify: Option<Notify>,
    accepted: bool,
    submit_seq: u64,
    submit_thread: Option<ThreadId>,
    invocations: Vec<Invocation>,
    started: bool,
    returned: bool,
    result: Option<WriteResult>,
}

enum WriterHandle {
    Append(AppendWriter),
    Upsert(UpsertWriter),
}

impl WriterHandle {
    fn flush(&self, t: Option<Duration>) -> fluss_writer::Result<()> {
        match self {
            WriterHandle::Append(w) => w.flush(t),
            WriterHandle::Upsert(w) => w.flush(t),
        }
    }
    fn close(&self, t: Option<Duration>) -> fluss_writer::Result<()> {
        match self {
            WriterHandle::Append(w) => w.close(t),
            WriterHandle::Upsert(w) => w.close(t),
        }
    }
}

struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

struct State {
    schema: Schema,
    bucket_key_idx: Vec<usize>,
    bucket_count: i32,
    writers: Mutex<HashMap<String, Arc<WriterHandle>>>,
    fifo_writers: HashSet<String>,
    ops: Mutex<HashMap<String, OpRecord>>,
    cb_seq: AtomicU64,
    submit_seq: AtomicU64,
    gates: Mutex<HashMap<String, Arc<Gate>>>,
    failures: Mutex<Vec<String>>,
    submit_threads: Mutex<HashSet<ThreadId>>,
    table: TablePath,
    /// The embedded engine (fault injection); `None` against a real cluster.
    engine: Option<Arc<EmbeddedEngine>>,
    /// Read-back through the Fluss protocol (same code path on the engine and on a cluster).
    handle: fluss_writer::Table,
}

impl State {
    fn fail(&self, msg: String) {
        self.failures.lock().unwrap().push(msg);
    }

    fn writer(&self, name: &str) -> Arc<WriterHandle> {
        self.writers.lock().unwrap().get(name).cloned().expect("writer exists")
    }

    fn gate(&self, name: &str) -> Arc<Gate> {
        self.gates
            .lock()
            .unwrap()
            .entry(name.to_string())
            .or_insert_with(|| Arc::new(Gate { open: Mutex::new(false), cv: Condvar::new() }))
            .clone()
    }

    fn open_gate(&self, name: &str) {
        let g = self.gate(name);
        *g.open.lock().unwrap() = true;
        g.cv.notify_all();
    }

    fn open_all_gates(&self) {
        let names: Vec<String> = self.gates.lock().unwrap().keys().cloned().collect();
        for n in names {
            self.open_gate(&n);
        }
    }

    fn cb_state(&self, id: &str) -> R<CbState> {
        let ops = self.ops.lock().unwrap();
        let r = ops.get(id).ok_or_else(|| format!("unknown op {id:?}"))?;
        Ok(if r.returned {
            CbState::Returned
        } else if r.started {
            CbState::Running
        } else {
            CbState::NotStarted
        })
    }

    fn inject(&self, faults: &[FaultSpec]) {
        if faults.is_empty() {
            return;
        }
        let f = self.engine.as_ref().expect("cluster mode runs only scenarios without faults").faults();
        for spec in faults {
            match spec.clone() {
                FaultSpec::Error { bucket, code, times, message } => f.inject(&self.table, bucket, Fault::Error { code, message, times }),
                FaultSpec::Delay { bucket, ms, times } => {
                    f.inject(&self.table, bucket, Fault::Delay { delay: Duration::from_millis(ms), times })
                }
                FaultSpec::Drop { bucket, after_apply, times } => {
                    f.inject(&self.table, bucket, Fault::DropConnection { after_apply, times })
                }
            }
        }
    }

    /// Check that the bucket the file states is the core's bucket for the row.
    fn check_bucket(&self, what: &str, row: &[Value], bucket: i32) -> R<()> {
        let mut key = Vec::new();
        encode_key(&self.schema, &self.bucket_key_idx, row, &mut key).map_err(|e| format!("{what}: {e}"))?;
        let b = bucket_for_key(&key, self.bucket_count);
        if b != bucket {
            return Err(format!("{what}: the file says bucket {bucket} but the core's bucketing gives {b} (fix the file)"));
        }
        Ok(())
    }
}

/// Sets its flag when dropped: proves a rejected callback was destroyed before the call returned.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Marks a callback returned when dropped (also when the callback panics).
struct ReturnedGuard {
    state: Arc<State>,
    id: String,
}

impl Drop for ReturnedGuard {
    fn drop(&mut self) {
        if let Some(r) = self.state.ops.lock().unwrap().get_mut(&self.id) {
            r.returned = true;
        }
    }
}

fn make_callback(state: &Arc<State>, id: &str, spec: &CbSpec) -> (impl FnOnce(&WriteCompletion) + Send + 'static, Arc<AtomicBool>) {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = DropFlag(dropped.clone());
    let state = state.clone();
    let id = id.to_string();
    let spec = spec.clone();
    let cb = move |c: &WriteCompletion| {
        let _flag = flag;
        let seq = state.cb_seq.fetch_add(1, Ordering::SeqCst);
        let inv = Invocation {
            seq,
            thread: std::thread::current().id(),
            code: c.error_code(),
            bucket: c.bucket,
            offset: c.offset,
            bucket_results: c.bucket_results.iter().map(|r| (r.bucket, r.rows, r.error.as_ref().map(Error::code))).collect(),
        };
        {
            let mut ops = state.ops.lock().unwrap();
            let r = ops.get_mut(&id).expect("op record");
            r.invocations.push(inv);
            r.started = true;
        }
        let _returned = ReturnedGuard { state: state.clone(), id: id.clone() };
        if spec.sleep_ms > 0 {
            std::thread::sleep(Duration::from_millis(spec.sleep_ms));
        }
        if let Some(g) = &spec.gate {
            let gate = state.gate(g);
            let mut open = gate.open.lock().unwrap();
            let deadline = Instant::now() + Duration::from_secs(30);
            while !*open {
                let now = Instant::now();
                if now >= deadline {
                    state.fail(format!("callback of {id}: gate {g:?} never opened"));
                    break;
                }
                open = gate.cv.wait_timeout(open, deadline - now).unwrap().0;
            }
        }
        if let Some(call) = &spec.call {
            if let Err(e) = run_step(&state, call, &format!("call inside the callback of {id}")) {
                state.fail(e);
            }
        }
        if spec.raise {
            panic!("golden: the callback of {id} raises on purpose");
        }
    };
    (cb, dropped)
}

fn to_arrow(schema: &Schema, rows: &[Vec<Value>]) -> RecordBatch {
    let mut cols: Vec<ArrayRef> = Vec::new();
    for (i, c) in schema.columns().iter().enumerate() {
        let col: ArrayRef = match c.data_type {
            DataType::Int => {
                let mut b = Int32Builder::new();
                rows.iter().for_each(|r| b.append_option(if let Value::Int(x) = r[i] { Some(x) } else { None }));
                Arc::new(b.finish())
            }
            DataType::BigInt => {
                let mut b = Int64Builder::new();
                rows.iter().for_each(|r| b.append_option(if let Value::BigInt(x) = r[i] { Some(x) } else { None }));
                Arc::new(b.finish())
            }
            DataType::Double => {
                let mut b = Float64Builder::new();
                rows.iter().for_each(|r| b.append_option(if let Value::Double(x) = r[i] { Some(x) } else { None }));
                Arc::new(b.finish())
            }
            DataType::Boolean => {
                let mut b = BooleanBuilder::new();
                rows.iter().for_each(|r| b.append_option(if let Value::Boolean(x) = r[i] { Some(x) } else { None }));
                Arc::new(b.finish())
            }
            DataType::String => {
                let mut b = StringBuilder::new();
                rows.iter().for_each(|r| b.append_option(if let Value::String(x) = &r[i] { Some(x.as_str()) } else { None }));
                Arc::new(b.finish())
            }
            _ => unreachable!("parse_type allows no other type"),
        };
        cols.push(col);
    }
    RecordBatch::try_new(arrow_schema(schema), cols).expect("valid arrow batch")
}

fn submit(state: &Arc<State>, op: &WriteOp, what: &str) -> R<()> {
    let what = format!("{what} {}", op.id);
    // The file's buckets must be the core's.
    match &op.input {
        Input::Append(row) | Input::Upsert(row) => state.check_bucket(&what, row, op.buckets[0])?,
        Input::Delete(key) => {
            let mut row = vec![Value::Null; state.schema.len()];
            for (v, i) in key.iter().zip(state.schema.primary_key_indexes()) {
                row[i] = v.clone();
            }
            state.check_bucket(&what, &row, op.buckets[0])?;
        }
        Input::Arrow(rows) => {
            for (i, (r, b)) in rows.iter().zip(&op.buckets).enumerate() {
                state.check_bucket(&format!("{what} row {i}"), r, *b)?;
            }
        }
    }
    {
        let mut ops = state.ops.lock().unwrap();
        let r = ops.entry(op.id.clone()).or_default();
        r.writer = op.writer.clone();
        r.arrow = matches!(op.input, Input::Arrow(_));
        r.notify = Some(op.notify);
    }
    let writer = state.writer(&op.writer);
    let (cb, dropped) = make_callback(state, &op.id, &op.callback);
    let mut cb = Some(cb);
    let arrow = match &op.input {
        Input::Arrow(rows) => Some(to_arrow(&state.schema, rows)),
        _ => None,
    };
    let t0 = Instant::now();
    let res: fluss_writer::Result<Option<WriteResult>> = match (&*writer, &op.input, op.notify) {
        (WriterHandle::Append(w), Input::Append(row), Notify::Callback) => w.append_with_callback(row, cb.take().unwrap()).map(|_| None),
        (WriterHandle::Append(w), Input::Append(row), Notify::Result) => w.append(row).map(Some),
        (WriterHandle::Append(w), Input::Append(row), Notify::Detached) => w.append_detached(row).map(|_| None),
        (WriterHandle::Append(w), Input::Arrow(_), Notify::Callback) => {
            w.write_arrow_batch_with_callback(arrow.as_ref().unwrap(), cb.take().unwrap()).map(|_| None)
        }
        (WriterHandle::Append(w), Input::Arrow(_), Notify::Result) => w.write_arrow_batch(arrow.as_ref().unwrap()).map(Some),
        (WriterHandle::Append(w), Input::Arrow(_), Notify::Detached) => w.write_arrow_batch_detached(arrow.as_ref().unwrap()).map(|_| None),
        (WriterHandle::Upsert(w), Input::Upsert(row), Notify::Callback) => w.upsert_with_callback(row, cb.take().unwrap()).map(|_| None),
        (WriterHandle::Upsert(w), Input::Upsert(row), Notify::Result) => w.upsert(row).map(Some),
        (WriterHandle::Upsert(w), Input::Upsert(row), Notify::Detached) => w.upsert_detached(row).map(|_| None),
        (WriterHandle::Upsert(w), Input::Delete(key), Notify::Callback) => w.delete_with_callback(key, cb.take().unwrap()).map(|_| None),
        (WriterHandle::Upsert(w), Input::Delete(key), Notify::Result) => w.delete(key).map(Some),
        (WriterHandle::Upsert(w), Input::Delete(key), Notify::Detached) => w.delete_detached(key).map(|_| None),
        _ => return Err(format!("{what}: this op does not fit writer {:?}", op.writer)),
    };
    let elapsed = t0.elapsed();
    let used_cb = cb.is_none();
    drop(cb);
    match res {
        Ok(result) => {
            let seq = state.submit_seq.fetch_add(1, Ordering::SeqCst);
            let mut ops = state.ops.lock().unwrap();
            let r = ops.get_mut(&op.id).expect("record");
            r.accepted = true;
            r.submit_seq = seq;
            r.submit_thread = Some(std::thread::current().id());
            r.result = result;
            drop(ops);
            if !op.expect.allows_accept() {
                return Err(format!("{what}: expected {}, but the submission was accepted", op.expect));
            }
        }
        Err(e) => {
            if used_cb && !dropped.load(Ordering::SeqCst) {
                return Err(format!("{what}: rejected synchronously ({e}) but its callback was not destroyed before the call returned"));
            }
            if !op.expect.allows_sync(e.code()) {
                return Err(format!("{what}: expected {}, got a synchronous error {e}", op.expect));
            }
        }
    }
    op.timing.check(&what, elapsed)
}

fn call_result(what: &str, res: fluss_writer::Result<()>, expect: &CallExpect, timing: &Timing, elapsed: Duration) -> R<()> {
    match (res, expect) {
        (Ok(()), CallExpect::Ok) => {}
        (Err(e), CallExpect::Error(c)) if e.code() == *c => {}
        (res, exp) => return Err(format!("{what}: expected {}, got {res:?}", expect_name(exp))),
    }
    timing.check(what, elapsed)
}

fn expect_name(e: &CallExpect) -> String {
    match e {
        CallExpect::Ok => "ok".into(),
        CallExpect::Error(c) => code_name(*c),
    }
}

/// Ops of `writer` accepted so far (for the flush/close watermark).
fn accepted_ops(state: &State, writer: &str) -> Vec<String> {
    state
        .ops
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, r)| r.accepted && r.target.is_none() && r.writer == writer)
        .map(|(k, _)| k.clone())
        .collect()
}

/// C6: after a successful flush/close, every op accepted before it has completed and its callback
/// has returned.
fn check_watermark(state: &State, what: &str, before: &[String]) -> R<()> {
    let ops = state.ops.lock().unwrap();
    for id in before {
        let r = &ops[id];
        let done = match r.notify {
            Some(Notify::Callback) => r.returned,
            Some(Notify::Result) => r.result.as_ref().is_some_and(WriteResult::is_done),
            _ => true,
        };
        if !done {
            return Err(format!("{what} returned ok, but {id} (accepted before it) had not completed and returned"));
        }
    }
    Ok(())
}

fn timeout(ms: Option<u64>) -> Option<Duration> {
    ms.map(Duration::from_millis)
}

fn run_step(state: &Arc<State>, step: &Step, what: &str) -> R<()> {
    match step {
        Step::Write(op) => submit(state, op, what),
        Step::Flush { writer, timeout_ms, expect, timing } => {
            let w = state.writer(writer);
            let before = accepted_ops(state, writer);
            let t0 = Instant::now();
            let res = w.flush(timeout(*timeout_ms));
            let ok = res.is_ok();
            call_result(&format!("{what} flush {writer}"), res, expect, timing, t0.elapsed())?;
            if ok {
                check_watermark(state, &format!("{what} flush {writer}"), &before)?;
            }
            Ok(())
        }
        Step::Close { writer, timeout_ms, expect, timing } => {
            let w = state.writer(writer);
            let before = accepted_ops(state, writer);
            let t0 = Instant::now();
            let res = w.close(timeout(*timeout_ms));
            let ok = res.is_ok();
            call_result(&format!("{what} close {writer}"), res, expect, timing, t0.elapsed())?;
            if ok {
                check_watermark(state, &format!("{what} close {writer}"), &before)?;
            }
            Ok(())
        }
        Step::Wait { target, timeout_ms, expect, timing } => {
            let result = state.ops.lock().unwrap().get(target).and_then(|r| r.result.clone());
            let result = result.ok_or_else(|| format!("{what}: wait on {target:?}, which is not an accepted notify=result op"))?;
            let t0 = Instant::now();
            let res = result.wait(timeout(*timeout_ms)).map(|_| ());
            call_result(&format!("{what} wait {target}"), res, expect, timing, t0.elapsed())
        }
        Step::AddCallback { id, target, callback } => {
            let result = state.ops.lock().unwrap().get(target).and_then(|r| r.result.clone());
            let result = result.ok_or_else(|| format!("{what}: add_callback on {target:?}, which is not an accepted notify=result op"))?;
            let writer = state.ops.lock().unwrap()[target].writer.clone();
            {
                let mut ops = state.ops.lock().unwrap();
                let r = ops.entry(id.clone()).or_default();
                r.writer = writer;
                r.target = Some(target.clone());
                r.notify = Some(Notify::Callback);
                r.accepted = true;
                r.submit_seq = state.submit_seq.fetch_add(1, Ordering::SeqCst);
                r.submit_thread = Some(std::thread::current().id());
            }
            let (cb, _) = make_callback(state, id, callback);
            result.add_callback(cb);
            Ok(())
        }
        Step::Sleep(ms) => {
            std::thread::sleep(Duration::from_millis(*ms));
            Ok(())
        }
        Step::OpenGate(g) => {
            state.open_gate(g);
            Ok(())
        }
        Step::AwaitCallback { target, state: want, timeout_ms } => {
            let deadline = Instant::now() + Duration::from_millis(*timeout_ms);
            loop {
                let s = state.cb_state(target)?;
                let reached = match want {
                    CbState::Running => s != CbState::NotStarted,
                    other => s == *other,
                };
                if reached {
                    return Ok(());
                }
                if Instant::now() >= deadline {
                    return Err(format!("{what}: the callback of {target} did not reach {want:?} within {timeout_ms} ms (it is {s:?})"));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Step::AssertCallback { target, state: want } => {
            let s = state.cb_state(target)?;
            if s != *want {
                return Err(format!("{what}: the callback of {target} is {s:?}, expected {want:?}"));
            }
            Ok(())
        }
        Step::Inject(faults) => {
            state.inject(faults);
            Ok(())
        }
        Step::Parallel(threads) => {
            let barrier = Arc::new(Barrier::new(threads.len()));
            let handles: Vec<_> = threads
                .iter()
                .map(|(name, steps)| {
                    let state = state.clone();
                    let steps = steps.clone();
                    let barrier = barrier.clone();
                    let what = format!("{what} thread {name}");
                    std::thread::spawn(move || {
                        state.submit_threads.lock().unwrap().insert(std::thread::current().id());
                        barrier.wait();
                        for (i, s) in steps.iter().enumerate() {
                            run_step(&state, s, &format!("{what} step {i}"))?;
                        }
                        Ok::<(), String>(())
                    })
                })
                .collect();
            let mut errors = Vec::new();
            for h in handles {
                match h.join() {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => errors.push(e),
                    Err(_) => errors.push(format!("{what}: a thread panicked")),
                }
            }
            if errors.is_empty() {
                Ok(())
            } else {
                Err(errors.join("\n"))
            }
        }
    }
}

/// Where a scenario runs.
enum Target {
    Embedded,
    /// A real cluster at this bootstrap address: only scenarios without faults.
    Cluster(String),
}

/// Whether a file injects no faults (then it also runs against a real cluster). A file that does
/// not parse counts as needing none, so that its parse error is reported in cluster mode too.
fn needs_no_faults(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else { return true };
    let Ok(json) = serde_json::from_str::<Json>(&text) else { return true };
    match parse_scenario(&json) {
        Ok(sc) => sc.faults.is_empty() && !steps_inject(&sc.steps),
        Err(_) => true,
    }
}

fn steps_inject(steps: &[Step]) -> bool {
    steps.iter().any(|s| match s {
        Step::Inject(_) => true,
        Step::Parallel(threads) => threads.iter().any(|(_, steps)| steps_inject(steps)),
        _ => false,
    })
}

fn run_file(path: &Path, target: &Target) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: Json = serde_json::from_str(&text).map_err(|e| format!("{}: invalid JSON: {e}", path.display()))?;
    let sc = parse_scenario(&json)?;
    if matches!(target, Target::Cluster(_)) && (!sc.faults.is_empty() || steps_inject(&sc.steps)) {
        return Err("this scenario injects faults, which only the embedded engine can do".into());
    }
    let outcome = run_scenario(&sc, target, path);
    match (&sc.known_bug, outcome) {
        (Some(bug), Ok(())) => Err(format!("known_bug ({bug}): the scenario passed; remove \"known_bug\" from the file")),
        (Some(bug), Err(e)) => Err(format!("known_bug ({bug}):\n{e}")),
        (None, r) => r,
    }
}

/// Create the scenario's table. On a cluster, a table whose buckets get no leader
/// (`LEADER_NOT_AVAILABLE`: a Fluss 0.9.1 coordinator now and then never processes a new table)
/// is abandoned and another one is created under a fresh name, up to three times.
fn create_table(conn: &Connection, path: TablePath, desc: &TableDescriptor, cluster: bool) -> R<TablePath> {
    let mut path = path;
    let mut failures = Vec::new();
    for attempt in 0..3 {
        match conn.admin().create_table(&path, desc, false) {
            Ok(()) => return Ok(path),
            Err(e) if cluster && e.code() == fluss_writer::FlussCode::LEADER_NOT_AVAILABLE => {
                eprintln!("golden: {path}: {e}; creating another table");
                failures.push(format!("{path}: {e}"));
                path = TablePath::new(path.database.clone(), format!("{}_r{}", path.table, attempt + 1)).unwrap();
            }
            Err(e) => return Err(format!("create table {path}: {e}")),
        }
    }
    Err(format!("create table: {}", failures.join("; ")))
}

fn run_scenario(sc: &Scenario, target: &Target, file: &Path) -> R<()> {
    let mut config = Config::default();
    let bootstrap = match target {
        Target::Embedded => "embedded",
        Target::Cluster(b) => b.as_str(),
    };
    config.set("bootstrap.servers", bootstrap).map_err(|e| e.to_string())?;
    for (k, v) in &sc.config {
        config.set(k, v).map_err(|e| format!("config: {e}"))?;
    }
    config.validate().map_err(|e| format!("config: {e}"))?;
    let conn = Connection::connect(config).map_err(|e| e.to_string())?;
    let path = match target {
        Target::Embedded => TablePath::new("fluss", "golden").unwrap(),
        Target::Cluster(_) => {
            // A fresh table per run on a shared cluster.
            let db = format!("golden_{}", std::process::id());
            conn.admin().create_database(&db, true).map_err(|e| format!("create database: {e}"))?;
            let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            TablePath::new(db, format!("t{}_{}", stem.split('_').next().unwrap_or("x"), nanos % 1_000_000_000)).unwrap()
        }
    };
    let mut desc = TableDescriptor::new(sc.table.schema.clone()).with_bucket_count(sc.table.bucket_count);
    if sc.table.kind == TableKind::Log {
        desc = desc.with_bucket_key(sc.table.bucket_key.clone());
    }
    let path = create_table(&conn, path, &desc, matches!(target, Target::Cluster(_)))?;
    let engine = conn.embedded().cloned();
    let table = conn.get_table(&path).map_err(|e| e.to_string())?;
    let bucket_key_idx = sc.table.schema.indexes_of(&sc.table.bucket_key).map_err(|e| e.to_string())?;
    let state = Arc::new(State {
        schema: sc.table.schema.clone(),
        bucket_key_idx,
        bucket_count: sc.table.bucket_count,
        writers: Mutex::new(HashMap::new()),
        fifo_writers: sc.writers.iter().filter(|w| matches!(w.executor, ExecSpec::Fifo)).map(|w| w.name.clone()).collect(),
        ops: Mutex::new(HashMap::new()),
        cb_seq: AtomicU64::new(0),
        submit_seq: AtomicU64::new(0),
        gates: Mutex::new(HashMap::new()),
        failures: Mutex::new(Vec::new()),
        submit_threads: Mutex::new(HashSet::from([std::thread::current().id()])),
        table: path.clone(),
        engine: engine.clone(),
        handle: table.clone(),
    });
    state.inject(&sc.faults);
    let mut cb_errors: HashMap<String, Arc<AtomicU64>> = HashMap::new();
    for ws in &sc.writers {
        let counter = Arc::new(AtomicU64::new(0));
        cb_errors.insert(ws.name.clone(), counter.clone());
        let mut opts = WriterOptions::default().error_handler(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        if let Some(n) = ws.max_pending_callbacks {
            opts = opts.max_pending_callbacks(n);
        }
        if let ExecSpec::Sharded(n) = ws.executor {
            opts = opts.executor(CallbackExecutor::Sharded(n));
        }
        let handle = if ws.upsert {
            let mut up = table.new_upsert().map_err(|e| e.to_string())?;
            if let Some(cols) = &ws.partial_update {
                up = up.partial_update_by_name(cols).map_err(|e| format!("writer {}: {e}", ws.name))?;
            }
            WriterHandle::Upsert(up.create_writer(opts).map_err(|e| e.to_string())?)
        } else {
            WriterHandle::Append(table.new_append().map_err(|e| e.to_string())?.create_writer(opts).map_err(|e| e.to_string())?)
        };
        state.writers.lock().unwrap().insert(ws.name.clone(), Arc::new(handle));
    }

    let mut errors: Vec<String> = Vec::new();
    for (i, s) in sc.steps.iter().enumerate() {
        if let Err(e) = run_step(&state, s, &format!("steps[{i}]")) {
            errors.push(e);
            break;
        }
    }
    if errors.is_empty() {
        if let Err(e) = settle(&state, sc.settle_ms) {
            errors.push(e);
        }
    }
    state.open_all_gates();
    if errors.is_empty() {
        errors.extend(check(sc, &state, &cb_errors));
    }
    // Tear down: close every writer, then the connection.
    let writers: Vec<(String, Arc<WriterHandle>)> = state.writers.lock().unwrap().drain().collect();
    for (_, w) in &writers {
        let _ = w.close(Some(Duration::from_secs(10)));
    }
    drop(writers);
    let _ = conn.close(Some(Duration::from_secs(10)));
    // Exactly once, also after teardown.
    if errors.is_empty() {
        for (id, r) in state.ops.lock().unwrap().iter() {
            let want = usize::from(r.accepted && r.notify == Some(Notify::Callback));
            if r.invocations.len() != want {
                errors.push(format!("{id}: callback ran {} times after teardown, expected {want}", r.invocations.len()));
            }
        }
    }
    errors.extend(state.failures.lock().unwrap().drain(..));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// Wait until every accepted callback ran and returned, and every result completed.
fn settle(state: &State, ms: u64) -> R<()> {
    let deadline = Instant::now() + Duration::from_millis(ms);
    loop {
        let pending: Vec<String> = {
            let ops = state.ops.lock().unwrap();
            ops.iter()
                .filter(|(_, r)| {
                    r.accepted
                        && match r.notify {
                            Some(Notify::Callback) => !r.returned,
                            Some(Notify::Result) => !r.result.as_ref().is_some_and(WriteResult::is_done),
                            _ => false,
                        }
                })
                .map(|(k, _)| k.clone())
                .collect()
        };
        if pending.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let mut pending = pending;
            pending.sort();
            return Err(format!("after the last step, these never completed within {ms} ms: {pending:?}"));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn all_write_ops(steps: &[Step], out: &mut Vec<WriteOp>) {
    for s in steps {
        match s {
            Step::Write(op) => {
                out.push(op.clone());
                if let Some(c) = &op.callback.call {
                    all_write_ops(std::slice::from_ref(&**c), out);
                }
            }
            Step::AddCallback { callback, .. } => {
                if let Some(c) = &callback.call {
                    all_write_ops(std::slice::from_ref(&**c), out);
                }
            }
            Step::Parallel(t) => t.iter().for_each(|(_, s)| all_write_ops(s, out)),
            _ => {}
        }
    }
}

fn check(sc: &Scenario, state: &State, cb_errors: &HashMap<String, Arc<AtomicU64>>) -> Vec<String> {
    let mut errs = Vec::new();
    let mut ops_list = Vec::new();
    all_write_ops(&sc.steps, &mut ops_list);
    let specs: HashMap<String, WriteOp> = ops_list.into_iter().map(|o| (o.id.clone(), o)).collect();
    let ops = state.ops.lock().unwrap();
    let submitters = state.submit_threads.lock().unwrap().clone();

    // Per op: outcome, bucket, offset, bucket results, exactly once.
    for (id, spec) in &specs {
        let Some(r) = ops.get(id) else {
            errs.push(format!("{id}: never submitted (a step before it failed?)"));
            continue;
        };
        if !r.accepted {
            continue; // sync errors were checked at submission
        }
        let completion: Option<Invocation> = match r.notify {
            Some(Notify::Callback) => {
                if r.invocations.len() != 1 {
                    errs.push(format!("{id}: callback ran {} times, expected exactly once", r.invocations.len()));
                    continue;
                }
                Some(r.invocations[0].clone())
            }
            Some(Notify::Result) => r.result.as_ref().and_then(WriteResult::try_get).map(|c| Invocation {
                seq: 0,
                thread: std::thread::current().id(),
                code: c.error_code(),
                bucket: c.bucket,
                offset: c.offset,
                bucket_results: c.bucket_results.iter().map(|b| (b.bucket, b.rows, b.error.as_ref().map(Error::code))).collect(),
            }),
            _ => None,
        };
        let Some(c) = completion else { continue };
        if !spec.expect.allows_outcome(c.code) {
            errs.push(format!("{id}: completed with {}, expected {}", code_name(c.code), spec.expect));
        }
        if c.bucket != spec.buckets[0] {
            errs.push(format!("{id}: completion bucket {} but the file says {}", c.bucket, spec.buckets[0]));
        }
        if let Some(off) = spec.offset {
            if c.offset != off {
                errs.push(format!("{id}: offset {} expected {off}", c.offset));
            }
        }
        if let Input::Arrow(_) = spec.input {
            let mut want: BTreeMap<i32, usize> = BTreeMap::new();
            for b in &spec.buckets {
                *want.entry(*b).or_default() += 1;
            }
            let got: BTreeMap<i32, usize> = c.bucket_results.iter().map(|(b, n, _)| (*b, *n)).collect();
            if want != got {
                errs.push(format!("{id}: bucket_results rows per bucket {got:?}, the file's buckets give {want:?}"));
            }
            if let Some(br) = &spec.bucket_results {
                let got: Vec<(i32, usize, Option<i32>)> = c.bucket_results.clone();
                let mut want = br.clone();
                want.sort();
                if got != want {
                    errs.push(format!("{id}: bucket_results {got:?}, expected {want:?}"));
                }
            }
        }
        if r.notify == Some(Notify::Callback) && submitters.contains(&c.thread) {
            errs.push(format!("{id}: callback ran on a submitting thread (C2)"));
        }
    }
    // Late callbacks: exactly once, the target's outcome, never on a submitting thread.
    for (id, r) in ops.iter().filter(|(_, r)| r.target.is_some()) {
        let target = r.target.as_ref().unwrap();
        if r.invocations.len() != 1 {
            errs.push(format!("{id} (late callback on {target}): ran {} times, expected once", r.invocations.len()));
            continue;
        }
        let want = ops[target].result.as_ref().and_then(WriteResult::try_get).map(|c| c.error_code());
        if want != Some(r.invocations[0].code) {
            errs.push(format!("{id}: late callback saw {}, its result has {want:?}", code_name(r.invocations[0].code)));
        }
        if submitters.contains(&r.invocations[0].thread) {
            errs.push(format!("{id}: late callback ran on a submitting thread (C2)"));
        }
    }
    // C2: every callback of a fifo writer on the connection's one worker thread.
    let fifo_threads: HashSet<ThreadId> =
        ops.values().filter(|r| state.fifo_writers.contains(&r.writer)).flat_map(|r| r.invocations.iter().map(|i| i.thread)).collect();
    if fifo_threads.len() > 1 {
        errs.push(format!("callbacks of fifo writers ran on {} threads, expected one worker", fifo_threads.len()));
    }
    // C3: per (submitting thread, writer, bucket), single-record callbacks in submission order.
    type Group = Vec<(u64, u64, String)>;
    let mut groups: HashMap<(ThreadId, String, i32), Group> = HashMap::new();
    for (id, r) in ops.iter() {
        if r.accepted && r.target.is_none() && !r.arrow && r.notify == Some(Notify::Callback) && r.invocations.len() == 1 {
            let key = (r.submit_thread.unwrap(), r.writer.clone(), r.invocations[0].bucket);
            groups.entry(key).or_default().push((r.submit_seq, r.invocations[0].seq, id.clone()));
        }
    }
    for ((_, w, b), mut v) in groups {
        v.sort();
        for p in v.windows(2) {
            if p[0].1 > p[1].1 {
                errs.push(format!("writer {w} bucket {b}: {} was submitted before {} but its callback ran after (C3)", p[0].2, p[1].2));
            }
        }
    }
    // Log tables: per bucket, successful single-record offsets grow in callback order.
    if sc.table.kind == TableKind::Log {
        let mut per: HashMap<i32, Vec<(u64, i64, String)>> = HashMap::new();
        for (id, r) in ops.iter() {
            if r.target.is_none() && !r.arrow && r.invocations.len() == 1 && r.invocations[0].code == 0 {
                per.entry(r.invocations[0].bucket).or_default().push((r.invocations[0].seq, r.invocations[0].offset, id.clone()));
            }
        }
        for (b, mut v) in per {
            v.sort();
            for p in v.windows(2) {
                if p[0].1 >= p[1].1 {
                    errs.push(format!("bucket {b}: callback of {} (offset {}) ran before {} (offset {})", p[0].2, p[0].1, p[1].2, p[1].1));
                }
            }
        }
    }
    // Explicit order chains.
    for chain in &sc.callback_order {
        let mut prev: Option<(u64, &String)> = None;
        for id in chain {
            let Some(inv) = ops.get(id).and_then(|r| r.invocations.first()) else {
                errs.push(format!("callback_order {chain:?}: {id} has no callback invocation"));
                break;
            };
            if let Some((p, pid)) = prev {
                if inv.seq <= p {
                    errs.push(format!("callback_order {chain:?}: {id} ran before {pid}"));
                }
            }
            prev = Some((inv.seq, id));
        }
    }
    drop(ops);
    // Callback errors per writer.
    for ws in &sc.writers {
        let want = sc.callback_errors.get(&ws.name).copied().unwrap_or(0);
        let got = cb_errors[&ws.name].load(Ordering::SeqCst);
        if want != got {
            errs.push(format!("writer {}: {got} callback errors reported to the error handler, expected {want}", ws.name));
        }
    }
    // Read-back.
    match &sc.read_back {
        ReadBack::None => {}
        ReadBack::Log(buckets) => {
            for (b, want) in buckets {
                match state.handle.scan(*b, 0) {
                    Err(e) => errs.push(format!("read-back bucket {b}: {e}")),
                    Ok(rows) => {
                        let got: Vec<Vec<Value>> = rows.into_iter().map(|r| r.row).collect();
                        if &got != want {
                            errs.push(format!("read-back bucket {b}:\n  got      {}\n  expected {}", show_rows(&got), show_rows(want)));
                        }
                    }
                }
            }
        }
        ReadBack::Lookups(l) => {
            for (key, want) in l {
                match state.handle.lookup(key) {
                    Err(e) => errs.push(format!("lookup {key:?}: {e}")),
                    Ok(got) => {
                        if &got != want {
                            errs.push(format!("lookup {key:?}: got {got:?}, expected {want:?}"));
                        }
                    }
                }
            }
        }
    }
    errs
}

fn show_rows(rows: &[Vec<Value>]) -> String {
    let short = |v: &Value| match v {
        Value::Int(x) => x.to_string(),
        Value::BigInt(x) => x.to_string(),
        Value::String(s) if s.len() > 12 => format!("{:?}..({} chars)", &s[..8], s.len()),
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".into(),
        other => format!("{other:?}"),
    };
    let r: Vec<String> = rows.iter().map(|r| format!("[{}]", r.iter().map(short).collect::<Vec<_>>().join(","))).collect();
    format!("[{}]", r.join(" "))
}
