//! The Rust runner of the golden scenarios (`golden/*.json`, format in `golden/README.md` and
//! `golden/schema/scenario.schema.json`). It only runs: every step through the public Rust API,
//! recording a trace of events; the checker (`fluss_writer_golden::check`, the same one the
//! Python and C++ runners' traces go through) judges it.
//!
//! Every file is its own test (libtest-mimic), discovered at run time; against a real cluster
//! (`FLUSS_BOOTSTRAP_SERVERS`) every fault-free file runs again as `cluster/<stem>`.
//! Run one scenario: `cargo test -p fluss-writer-golden --test golden -- 007_`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Condvar, Mutex};
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use fluss_writer::embedded::{EmbeddedEngine, Fault as EngineFault};
use fluss_writer::wire::arrow_schema;
use fluss_writer::{
    Admin, AppendWriter, CallbackExecutor, Config, Connection, DataType, Error, Schema, TableChange, TableDescriptor, TablePath,
    UpsertWriter, Value, WriteCompletion, WriteResult, WriterOptions,
};
use fluss_writer_golden::scenario::{self, code_of, CbSpec, CbState, Fault, Notify, Other, Scenario, Step, TableKind, WriteOp};
use fluss_writer_golden::trace::{BucketResult, Completion, Entry, Event, Lookup, ReadBack, Trace};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value as Json;

type R<T> = std::result::Result<T, String>;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../golden")
}

fn main() {
    let args = Arguments::from_args();
    // Callbacks that raise on purpose should not flood the output.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !info.payload().downcast_ref::<String>().is_some_and(|m| m.starts_with("golden: ")) {
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
    let stem = |p: &Path| p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut trials: Vec<Trial> =
        files.iter().cloned().map(|p| Trial::test(stem(&p), move || run_file(&p, None).map_err(Failed::from))).collect();
    match std::env::var("FLUSS_BOOTSTRAP_SERVERS").ok().filter(|s| !s.is_empty()) {
        Some(bootstrap) => {
            for p in files.into_iter().filter(|p| !file_uses_faults(p)) {
                let b = bootstrap.clone();
                trials.push(Trial::test(format!("cluster/{}", stem(&p)), move || run_file(&p, Some(&b)).map_err(Failed::from)));
            }
        }
        None if std::env::var("CI").is_ok_and(|v| v == "true") => trials.push(Trial::test("cluster/required", || {
            Err(Failed::from("CI=true but FLUSS_BOOTSTRAP_SERVERS is not set: the golden scenarios must also run against a real cluster"))
        })),
        None => eprintln!("golden: FLUSS_BOOTSTRAP_SERVERS is not set: the scenarios did NOT run against a real Fluss cluster"),
    }
    libtest_mimic::run(&args, trials).exit();
}

/// A file that does not parse counts as fault-free, so that the checker reports it in cluster mode too.
fn file_uses_faults(path: &Path) -> bool {
    let doc = std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str::<Json>(&t).ok());
    doc.and_then(|d| serde_json::from_value::<Scenario>(d).ok()).is_some_and(|sc| scenario::uses_faults(&sc))
}

/// Run the file, then judge the trace; the trace is kept in the target directory for inspection.
fn run_file(path: &Path, cluster: Option<&str>) -> R<()> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: Json = serde_json::from_str(&text).map_err(|e| format!("{}: invalid JSON: {e}", path.display()))?;
    let mut trace =
        Trace { runner: "rust".into(), target: if cluster.is_some() { "cluster" } else { "embedded" }.into(), ..Trace::default() };
    // A file the runner cannot read is still judged: the checker names what is wrong with it.
    if let Ok(sc) = serde_json::from_value::<Scenario>(doc.clone()) {
        if cluster.is_none() || !scenario::uses_faults(&sc) {
            run_scenario(&sc, cluster, path, &mut trace);
        }
    }
    let report = fluss_writer_golden::check(&doc, &trace);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden-traces");
    if std::fs::create_dir_all(&dir).is_ok() {
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        let _ = std::fs::write(
            dir.join(format!("rust-{}-{stem}.json", trace.target)),
            serde_json::to_string_pretty(&trace).unwrap_or_default(),
        );
    }
    if report.passed() {
        Ok(())
    } else {
        Err(format!("{} of {} checks failed:\n{}", report.failures.len(), report.checks, report.failures.join("\n")))
    }
}

#[derive(Default)]
struct OpState {
    writer: String,
    notify: Notify,
    accepted: bool,
    started: bool,
    returned: bool,
    result: Option<WriteResult>,
}

enum WriterHandle {
    Append(AppendWriter),
    Upsert(UpsertWriter),
}

impl WriterHandle {
    /// flush, or close when `close`.
    fn end(&self, close: bool, t: Option<Duration>) -> fluss_writer::Result<()> {
        match (self, close) {
            (WriterHandle::Append(w), false) => w.flush(t),
            (WriterHandle::Append(w), true) => w.close(t),
            (WriterHandle::Upsert(w), false) => w.flush(t),
            (WriterHandle::Upsert(w), true) => w.close(t),
        }
    }
}

#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

struct State {
    sc: Scenario,
    events: Mutex<Vec<Entry>>,
    writers: Mutex<HashMap<String, Arc<WriterHandle>>>,
    ops: Mutex<HashMap<String, OpState>>,
    gates: Mutex<HashMap<String, Arc<Gate>>>,
    table: TablePath,
    engine: Option<Arc<EmbeddedEngine>>,
    conn: Connection,
    admin: Admin,
    /// Callback errors the error handler of each writer counted.
    counters: HashMap<String, Arc<AtomicU64>>,
}

fn thread() -> String {
    format!("{:?}", std::thread::current().id())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn completion(c: &WriteCompletion) -> Completion {
    Completion {
        code: c.error_code(),
        bucket: c.bucket,
        partition: c.partition.as_deref().map(str::to_string),
        offset: c.offset,
        bucket_results: c
            .bucket_results
            .iter()
            .map(|b| BucketResult {
                partition: b.partition.as_deref().map(str::to_string),
                bucket: b.bucket,
                rows: b.rows,
                code: b.error.as_ref().map_or(0, Error::code),
            })
            .collect(),
    }
}

impl State {
    /// Record an event; its seq is its position (taken under the lock, so in event order).
    fn ev(&self, ev: Event) {
        let mut e = self.events.lock().unwrap();
        let seq = e.len() as u64;
        e.push(Entry { seq, ev });
    }

    fn writer(&self, name: &Option<String>) -> Arc<WriterHandle> {
        let name = self.writer_name(name);
        self.writers.lock().unwrap()[&name].clone()
    }

    fn writer_name(&self, name: &Option<String>) -> String {
        name.clone().unwrap_or_else(|| self.sc.writers[0].name.clone())
    }

    fn gate(&self, name: &str) -> Arc<Gate> {
        self.gates.lock().unwrap().entry(name.to_string()).or_default().clone()
    }

    fn open_gate(&self, name: &str) {
        let g = self.gate(name);
        *g.open.lock().unwrap() = true;
        g.cv.notify_all();
    }

    fn cb_state(&self, id: &str) -> &'static str {
        match self.ops.lock().unwrap().get(id) {
            Some(r) if r.returned => "returned",
            Some(r) if r.started => "running",
            _ => "not_started",
        }
    }

    fn inject(&self, faults: &[Fault]) -> R<()> {
        let f = self.engine.as_ref().ok_or("faults need the embedded engine")?.faults();
        for spec in faults {
            let at = spec.partition();
            match spec.clone() {
                Fault::Error { bucket, code, times, message, .. } => {
                    let message = message.unwrap_or_else(|| "injected by a golden scenario".into());
                    f.inject_at(&self.table, at, bucket, EngineFault::Error { code: code_of(&code)?, message, times })
                }
                Fault::Delay { bucket, ms, times, .. } => {
                    f.inject_at(&self.table, at, bucket, EngineFault::Delay { delay: Duration::from_millis(ms), times })
                }
                Fault::DropConnection { bucket, after_apply, times, .. } => {
                    f.inject_at(&self.table, at, bucket, EngineFault::DropConnection { after_apply, times })
                }
            }
        }
        Ok(())
    }
}

/// Records the callback's return when dropped (also when the callback panics).
struct ReturnedGuard {
    state: Arc<State>,
    id: String,
}

impl Drop for ReturnedGuard {
    fn drop(&mut self) {
        let mut ops = self.state.ops.lock().unwrap();
        self.state.ev(Event::CallbackReturn { id: self.id.clone(), thread: thread() });
        if let Some(r) = ops.get_mut(&self.id) {
            r.returned = true;
        }
    }
}

/// The recording callback of `id`, and an `Arc` it holds: a strong count of 1 shows it destroyed.
fn make_callback(state: &Arc<State>, id: &str, spec: CbSpec) -> (impl FnOnce(&WriteCompletion) + Send + 'static, Arc<()>) {
    let alive = Arc::new(());
    let (state, id, held) = (state.clone(), id.to_string(), alive.clone());
    let cb = move |c: &WriteCompletion| {
        let _held = held;
        {
            let mut ops = state.ops.lock().unwrap();
            state.ev(Event::CallbackStart { id: id.clone(), thread: thread(), completion: completion(c) });
            if let Some(r) = ops.get_mut(&id) {
                r.started = true;
            }
        }
        let _returned = ReturnedGuard { state: state.clone(), id: id.clone() };
        std::thread::sleep(Duration::from_millis(spec.sleep_ms));
        if let Some(g) = &spec.gate {
            let gate = state.gate(g);
            let (open, _) = gate.cv.wait_timeout_while(gate.open.lock().unwrap(), Duration::from_secs(30), |open| !*open).unwrap();
            if !*open {
                state.ev(Event::RunnerError { message: format!("callback of {id}: gate {g:?} never opened") });
            }
        }
        if let Some(call) = &spec.call {
            if let Err(e) = run_step(&state, call, &format!("{id}.call")) {
                state.ev(Event::RunnerError { message: e });
            }
        }
        if spec.raise {
            panic!("golden: the callback of {id} raises on purpose");
        }
    };
    (cb, alive)
}

fn to_arrow(schema: &Schema, rows: &[Vec<Value>]) -> RecordBatch {
    let cols: Vec<ArrayRef> = schema
        .columns()
        .iter()
        .enumerate()
        .map(|(i, c)| -> ArrayRef {
            let col = rows.iter().map(|r| &r[i]);
            match c.data_type {
                DataType::Int => Arc::new(col.map(|v| if let Value::Int(x) = v { Some(*x) } else { None }).collect::<Int32Array>()),
                DataType::BigInt => Arc::new(col.map(|v| if let Value::BigInt(x) = v { Some(*x) } else { None }).collect::<Int64Array>()),
                DataType::Double => Arc::new(col.map(|v| if let Value::Double(x) = v { Some(*x) } else { None }).collect::<Float64Array>()),
                DataType::Boolean => {
                    Arc::new(col.map(|v| if let Value::Boolean(x) = v { Some(*x) } else { None }).collect::<BooleanArray>())
                }
                _ => Arc::new(col.map(|v| if let Value::String(x) = v { Some(x.as_str()) } else { None }).collect::<StringArray>()),
            }
        })
        .collect();
    RecordBatch::try_new(arrow_schema(schema), cols).expect("valid arrow batch")
}

fn submit(state: &Arc<State>, step: &Step, op: &WriteOp) -> R<()> {
    // Rows have the width of the table as the writer knows it (columns added after it was
    // created are not its).
    let t = &state.sc.writer_table(&state.writer_name(&op.writer));
    let writer = state.writer(&op.writer);
    state
        .ops
        .lock()
        .unwrap()
        .insert(op.id.clone(), OpState { writer: state.writer_name(&op.writer), notify: op.notify, ..Default::default() });
    let (cb, alive) = make_callback(state, &op.id, op.callback.clone());
    let mut cb = Some(cb);
    let arrow = match step {
        Step::AppendArrow(_) => {
            let rows = op.rows.iter().map(|r| t.row(r, &op.id)).collect::<R<Vec<_>>>()?;
            Some(to_arrow(&t.schema()?, &rows))
        }
        _ => None,
    };
    let (row, key) = match step {
        Step::Append(_) | Step::Upsert(_) => (t.row(&op.row, &op.id)?, vec![]),
        Step::Delete(_) => (vec![], t.key(&op.key, &op.id)?),
        _ => (vec![], vec![]),
    };
    let n = op.notify;
    state.ev(Event::SubmitBegin { id: op.id.clone(), thread: thread() });
    let t0 = Instant::now();
    let res: fluss_writer::Result<Option<WriteResult>> = match (&*writer, step, arrow.as_ref()) {
        (WriterHandle::Append(w), Step::Append(_), _) => match n {
            Notify::Callback => w.append_with_callback(&row, cb.take().unwrap()).map(|_| None),
            Notify::Result => w.append(&row).map(Some),
            Notify::Detached => w.append_detached(&row).map(|_| None),
        },
        (WriterHandle::Append(w), Step::AppendArrow(_), Some(b)) => match n {
            Notify::Callback => w.write_arrow_batch_with_callback(b, cb.take().unwrap()).map(|_| None),
            Notify::Result => w.write_arrow_batch(b).map(Some),
            Notify::Detached => w.write_arrow_batch_detached(b).map(|_| None),
        },
        (WriterHandle::Upsert(w), Step::Upsert(_), _) => match n {
            Notify::Callback => w.upsert_with_callback(&row, cb.take().unwrap()).map(|_| None),
            Notify::Result => w.upsert(&row).map(Some),
            Notify::Detached => w.upsert_detached(&row).map(|_| None),
        },
        (WriterHandle::Upsert(w), Step::Delete(_), _) => match n {
            Notify::Callback => w.delete_with_callback(&key, cb.take().unwrap()).map(|_| None),
            Notify::Result => w.delete(&key).map(Some),
            Notify::Detached => w.delete_detached(&key).map(|_| None),
        },
        _ => return Err(format!("{}: this op does not fit its writer", op.id)),
    };
    let elapsed_ms = ms(t0.elapsed());
    let used_cb = cb.is_none();
    drop(cb);
    let mut ops = state.ops.lock().unwrap();
    let (code, destroyed) = match res {
        Ok(result) => {
            let r = ops.get_mut(&op.id).expect("op state");
            r.accepted = true;
            r.result = result;
            (0, None)
        }
        Err(e) => (e.code(), used_cb.then(|| Arc::strong_count(&alive) == 1)),
    };
    state.ev(Event::SubmitEnd { id: op.id.clone(), thread: thread(), code, elapsed_ms, callback_destroyed: destroyed });
    Ok(())
}

/// The notify=result ops of `writer` that are done now (recorded at the end of a flush/close).
fn results_done(state: &State, writer: &str) -> Vec<String> {
    let ops = state.ops.lock().unwrap();
    ops.iter().filter(|(_, r)| r.writer == writer && r.result.as_ref().is_some_and(WriteResult::is_done)).map(|(k, _)| k.clone()).collect()
}

fn result_of(state: &State, target: &str) -> R<WriteResult> {
    state.ops.lock().unwrap().get(target).and_then(|r| r.result.clone()).ok_or_else(|| format!("{target} has no accepted WriteResult"))
}

fn call(state: &Arc<State>, path: &str, name: &str, c: &Other) -> R<()> {
    let timeout = c.timeout_ms.map(Duration::from_millis);
    let result = if name == "wait" { Some(result_of(state, &c.target)?) } else { None };
    let writer = state.writer_name(&c.writer);
    state.ev(Event::CallBegin { step: path.into(), call: name.into(), thread: thread() });
    let t0 = Instant::now();
    let res = match (name, &result) {
        ("wait", Some(r)) => r.wait(timeout).map(|_| ()),
        _ => state.writer(&c.writer).end(name == "close", timeout),
    };
    let elapsed_ms = ms(t0.elapsed());
    let results_done = if name == "wait" { vec![] } else { results_done(state, &writer) };
    state.ev(Event::CallEnd { step: path.into(), code: res.err().map_or(0, |e| e.code()), elapsed_ms, results_done });
    Ok(())
}

fn run_step(state: &Arc<State>, step: &Step, path: &str) -> R<()> {
    match step {
        Step::Append(op) | Step::Upsert(op) | Step::Delete(op) | Step::AppendArrow(op) => submit(state, step, op)?,
        Step::Flush(c) => call(state, path, "flush", c)?,
        Step::Close(c) => call(state, path, "close", c)?,
        Step::Wait(c) => call(state, path, "wait", c)?,
        Step::AddCallback(Other { id, target, callback, .. }) => {
            let result = result_of(state, target)?;
            let writer = state.ops.lock().unwrap()[target].writer.clone();
            state
                .ops
                .lock()
                .unwrap()
                .insert(id.clone(), OpState { writer, notify: Notify::Callback, accepted: true, ..Default::default() });
            state.ev(Event::AddCallback { id: id.clone(), target: target.clone(), thread: thread() });
            result.add_callback(make_callback(state, id, callback.clone()).0);
        }
        Step::Sleep(o) => std::thread::sleep(Duration::from_millis(o.ms)),
        Step::OpenGate(o) => state.open_gate(&o.gate),
        Step::AwaitCallback(Other { target, state: want, timeout_ms, .. }) => {
            let deadline = Instant::now() + Duration::from_millis(timeout_ms.unwrap_or(10_000));
            let reached = |s: &str| if *want == Some(CbState::Running) { s != "not_started" } else { s == "returned" };
            let mut s = state.cb_state(target);
            while !reached(s) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
                s = state.cb_state(target);
            }
            state.ev(Event::Await { step: path.into(), target: target.clone(), state: s.into() });
            if !reached(s) {
                return Err(format!("{path}: stopped: the callback of {target} is still {s}"));
            }
        }
        Step::AssertCallback(Other { target, .. }) => {
            state.ev(Event::Observe { step: path.into(), target: target.clone(), state: state.cb_state(target).into() })
        }
        Step::Inject(o) => state.inject(&o.faults)?,
        Step::CreatePartition(o) | Step::DropPartition(o) => {
            let spec = state.sc.table.partition_spec(&o.partition)?;
            let create = matches!(step, Step::CreatePartition(_));
            state.ev(Event::CallBegin {
                step: path.into(),
                call: if create { "create_partition" } else { "drop_partition" }.into(),
                thread: thread(),
            });
            let t0 = Instant::now();
            let res = if create {
                state.admin.create_partition(&state.table, &spec, false)
            } else {
                state.admin.drop_partition(&state.table, &spec, false)
            };
            let (code, elapsed_ms) = (res.err().map_or(0, |e| e.code()), ms(t0.elapsed()));
            state.ev(Event::CallEnd { step: path.into(), code, elapsed_ms, results_done: vec![] });
        }
        Step::AlterTable(o) => {
            state.ev(Event::CallBegin { step: path.into(), call: "alter_table".into(), thread: thread() });
            let t0 = Instant::now();
            let changes: Vec<TableChange> = o.add_columns.iter().map(|c| TableChange::AddColumn(scenario::Table::core_column(c))).collect();
            let res = state.admin.alter_table(&state.table, &changes, false);
            let (code, elapsed_ms) = (res.err().map_or(0, |e| e.code()), ms(t0.elapsed()));
            state.ev(Event::CallEnd { step: path.into(), code, elapsed_ms, results_done: vec![] });
        }
        Step::CreateWriter(o) => {
            let name = state.writer_name(&o.writer);
            let spec = state.sc.writers.iter().find(|w| w.name == name).ok_or("unknown writer")?;
            state.ev(Event::CallBegin { step: path.into(), call: "create_writer".into(), thread: thread() });
            let t0 = Instant::now();
            let code = match open_writer(state, spec) {
                Ok(h) => {
                    state.writers.lock().unwrap().insert(name, Arc::new(h));
                    0
                }
                Err(e) => e.code(),
            };
            state.ev(Event::CallEnd { step: path.into(), code, elapsed_ms: ms(t0.elapsed()), results_done: vec![] });
        }
        Step::Parallel(Other { threads, .. }) => {
            let barrier = Arc::new(Barrier::new(threads.len()));
            let handles: Vec<_> = threads
                .iter()
                .map(|(name, steps)| {
                    let (state, steps, barrier, path, name) =
                        (state.clone(), steps.clone(), barrier.clone(), path.to_string(), name.clone());
                    std::thread::spawn(move || {
                        state.ev(Event::Thread { thread: thread(), name: name.clone() });
                        barrier.wait();
                        steps.iter().enumerate().try_for_each(|(i, s)| run_step(&state, s, &scenario::step_path(&path, Some(&name), i)))
                    })
                })
                .collect();
            let errors: Vec<String> =
                handles.into_iter().filter_map(|h| h.join().unwrap_or_else(|_| Err("a thread panicked".into())).err()).collect();
            if !errors.is_empty() {
                return Err(errors.join("\n"));
            }
        }
    }
    Ok(())
}

/// Create the scenario's table. On a cluster, a table whose buckets get no leader
/// (`LEADER_NOT_AVAILABLE`: a Fluss 0.9.1 coordinator now and then never processes a new table)
/// is abandoned and another one is created under a fresh name, up to three times.
fn create_table(conn: &Connection, mut path: TablePath, desc: &TableDescriptor, cluster: bool) -> R<TablePath> {
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

/// A writer of the table as it is now (loaded again: a writer created after a schema change
/// writes the new columns), with an error handler that counts.
fn open_writer(state: &State, ws: &scenario::WriterSpec) -> fluss_writer::Result<WriterHandle> {
    let counter = state.counters[&ws.name].clone();
    let mut opts = WriterOptions::default().error_handler(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    if let Some(n) = ws.max_pending_callbacks {
        opts = opts.max_pending_callbacks(n);
    }
    if let Some(n) = ws.sharded() {
        opts = opts.executor(CallbackExecutor::Sharded(n));
    }
    let table = state.conn.get_table(&state.table)?;
    if ws.kind == "upsert" {
        let up = table.new_upsert()?;
        let up = match &ws.partial_update {
            Some(cols) => up.partial_update_by_name(cols)?,
            None => up,
        };
        up.create_writer(opts).map(WriterHandle::Upsert)
    } else {
        table.new_append()?.create_writer(opts).map(WriterHandle::Append)
    }
}

fn run_scenario(sc: &Scenario, cluster: Option<&str>, file: &Path, trace: &mut Trace) {
    let mut events = Vec::new();
    let fail =
        |events: &mut Vec<Entry>, message: String| events.push(Entry { seq: events.len() as u64, ev: Event::RunnerError { message } });
    let setup = || -> R<(Connection, Arc<State>)> {
        let mut config = Config::default();
        config.set("bootstrap.servers", cluster.unwrap_or("embedded")).map_err(|e| e.to_string())?;
        for (k, v) in &sc.config {
            config.set(k, v).map_err(|e| format!("config: {e}"))?;
        }
        config.validate().map_err(|e| format!("config: {e}"))?;
        let conn = Connection::connect(config).map_err(|e| e.to_string())?;
        let path = match cluster {
            None => TablePath::new("fluss", "golden").unwrap(),
            Some(_) => {
                let db = format!("golden_{}", std::process::id());
                conn.admin().create_database(&db, true).map_err(|e| format!("create database: {e}"))?;
                let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
                TablePath::new(db, format!("t{}_{}", stem.split('_').next().unwrap_or("x"), nanos % 1_000_000_000)).unwrap()
            }
        };
        let desc = sc.table.descriptor()?;
        let path = create_table(&conn, path, &desc, cluster.is_some())?;
        for p in &sc.table.partitions {
            let spec = sc.table.partition_spec(p)?;
            conn.admin().create_partition(&path, &spec, false).map_err(|e| format!("create partition {p}: {e}"))?;
        }
        let state = Arc::new(State {
            sc: sc.clone(),
            events: Mutex::new(Vec::new()),
            writers: Mutex::new(HashMap::new()),
            ops: Mutex::new(HashMap::new()),
            gates: Mutex::new(HashMap::new()),
            table: path,
            engine: conn.embedded().cloned(),
            conn: conn.clone(),
            admin: conn.admin(),
            counters: sc.writers.iter().map(|w| (w.name.clone(), Arc::new(AtomicU64::new(0)))).collect(),
        });
        if !sc.faults.is_empty() {
            state.inject(&sc.faults)?;
        }
        Ok((conn, state))
    };
    let (conn, state) = match setup() {
        Ok(x) => x,
        Err(e) => {
            fail(&mut events, e);
            trace.events = events;
            return;
        }
    };
    let mut ok = true;
    for ws in sc.writers.iter().filter(|w| !w.deferred) {
        match open_writer(&state, ws) {
            Ok(h) => {
                state.writers.lock().unwrap().insert(ws.name.clone(), Arc::new(h));
            }
            Err(e) => {
                state.ev(Event::RunnerError { message: format!("writer {}: {e}", ws.name) });
                ok = false;
            }
        }
    }
    state.ev(Event::Thread { thread: thread(), name: "main".into() });
    for (i, s) in sc.steps.iter().enumerate().filter(|_| ok) {
        if let Err(e) = run_step(&state, s, &scenario::step_path("", None, i)) {
            state.ev(Event::RunnerError { message: e });
            break;
        }
    }
    // Settle: wait for every accepted callback to return and every result to be done.
    let deadline = Instant::now() + Duration::from_millis(sc.settle_ms());
    let pending = || {
        state.ops.lock().unwrap().values().any(|r| {
            r.accepted
                && match r.notify {
                    Notify::Callback => !r.returned,
                    Notify::Result => !r.result.as_ref().is_some_and(WriteResult::is_done),
                    Notify::Detached => false,
                }
        })
    };
    while pending() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    state.ev(Event::Settled {});
    let names: Vec<String> = state.gates.lock().unwrap().keys().cloned().collect();
    names.iter().for_each(|g| state.open_gate(g));
    let results: Vec<(String, Option<Completion>)> = state
        .ops
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(id, r)| r.result.as_ref().map(|w| (id.clone(), w.try_get().map(|c| completion(&c)))))
        .collect();
    for (id, completion) in results {
        state.ev(Event::Result { id, completion });
    }
    trace.callback_errors = state.counters.iter().map(|(n, c)| (n.clone(), c.load(Ordering::SeqCst))).collect();
    match read_back(&state) {
        Ok(rb) => trace.read_back = Some(rb),
        Err(e) => state.ev(Event::RunnerError { message: e }),
    }
    // Tear down; callbacks that still run now are recorded too (exactly once holds after teardown).
    let writers: Vec<Arc<WriterHandle>> = state.writers.lock().unwrap().drain().map(|(_, w)| w).collect();
    for w in &writers {
        let _ = w.end(true, Some(Duration::from_secs(10)));
    }
    drop(writers);
    let _ = conn.close(Some(Duration::from_secs(10)));
    state.ev(Event::Teardown {});
    trace.events = std::mem::take(&mut *state.events.lock().unwrap());
}

fn json_row(row: &[Value]) -> Vec<Json> {
    row.iter()
        .map(|v| match v {
            Value::Int(x) => Json::from(*x),
            Value::BigInt(x) => Json::from(*x),
            Value::Double(x) => Json::from(*x),
            Value::Boolean(x) => Json::from(*x),
            Value::String(s) => Json::from(s.as_str()),
            Value::Null => Json::Null,
            other => Json::from(format!("{other:?}")),
        })
        .collect()
}

fn read_back(state: &State) -> R<ReadBack> {
    let t = &state.sc.final_table();
    // Loaded now: after a schema change it reads every column.
    let handle = state.conn.get_table(&state.table).map_err(|e| format!("read-back: {e}"))?;
    if t.kind == TableKind::Log && !t.partition_keys.is_empty() {
        let mut partitions = std::collections::BTreeMap::new();
        for p in state.sc.expect.read_back.partitions.iter().flat_map(|m| m.keys()) {
            let mut buckets = std::collections::BTreeMap::new();
            for b in 0..t.bucket_count {
                let rows = handle.scan_partition(p, b, 0).map_err(|e| format!("read-back partition {p} bucket {b}: {e}"))?;
                buckets.insert(b.to_string(), rows.iter().map(|r| json_row(&r.row)).collect());
            }
            partitions.insert(p.clone(), buckets);
        }
        return Ok(ReadBack { buckets: None, partitions: Some(partitions), lookups: None });
    }
    if t.kind == TableKind::Log {
        let mut buckets = std::collections::BTreeMap::new();
        for b in 0..t.bucket_count {
            let rows = handle.scan(b, 0).map_err(|e| format!("read-back bucket {b}: {e}"))?;
            buckets.insert(b.to_string(), rows.iter().map(|r| json_row(&r.row)).collect());
        }
        return Ok(ReadBack { buckets: Some(buckets), partitions: None, lookups: None });
    }
    let mut lookups = Vec::new();
    for l in state.sc.expect.read_back.lookups.iter().flatten() {
        let key = t.key(&l.key, "lookup")?;
        let row = handle.lookup(&key).map_err(|e| format!("lookup {:?}: {e}", l.key))?;
        lookups.push(Lookup { key: l.key.clone(), row: row.map(|r| json_row(&r)) });
    }
    Ok(ReadBack { buckets: None, partitions: None, lookups: Some(lookups) })
}
