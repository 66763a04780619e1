//! The Rust runner of the golden scenarios (`golden/*.json`, format in `golden/README.md` and
//! `golden/schema/scenario.schema.json`). It runs a scenario's plan (`fluss_writer_golden::plan`:
//! the file validated and resolved once) and only runs: every step through the public Rust API,
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
use fluss_writer::partition::PartitionSpec;
use fluss_writer::wire::arrow_schema;
use fluss_writer::{
    Admin, AppendWriter, CallbackExecutor, Config, Connection, DataType, Error, Schema, TableChange, TableDescriptor, TablePath,
    UpsertWriter, Value, WriteCompletion, WriteResult, WriterOptions,
};
use fluss_writer_golden::plan::{self, Callback, Col, Plan, PlanFault, PlanStep, PlanWriter};
use fluss_writer_golden::trace::{BucketResult, Completion, Entry, Event, Lookup, ReadBack, Scan, Trace};
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

/// A file that does not validate counts as fault-free, so that the checker reports it in cluster mode too.
fn file_uses_faults(path: &Path) -> bool {
    let doc = std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str::<Json>(&t).ok());
    doc.and_then(|d| plan::load(&d).ok()).is_some_and(|p| !p.cluster_ok)
}

/// Run the file, then judge the trace; the trace is kept in the target directory for inspection.
fn run_file(path: &Path, cluster: Option<&str>) -> R<()> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: Json = serde_json::from_str(&text).map_err(|e| format!("{}: invalid JSON: {e}", path.display()))?;
    let mut trace =
        Trace { runner: "rust".into(), target: if cluster.is_some() { "cluster" } else { "embedded" }.into(), ..Trace::default() };
    // A file the runner cannot read is still judged: the checker names what is wrong with it.
    if let Ok(plan) = plan::load(&doc) {
        if cluster.is_none() || plan.cluster_ok {
            run_scenario(&plan, cluster, path, &mut trace);
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
    notify: String,
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
    plan: Plan,
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

fn spec(s: &std::collections::BTreeMap<String, String>) -> PartitionSpec {
    PartitionSpec::new(s.clone())
}

impl State {
    /// Record an event; its seq is its position (taken under the lock, so in event order).
    fn ev(&self, ev: Event) {
        let mut e = self.events.lock().unwrap();
        let seq = e.len() as u64;
        e.push(Entry { seq, ev });
    }

    fn writer(&self, name: &str) -> R<Arc<WriterHandle>> {
        self.writers.lock().unwrap().get(name).cloned().ok_or_else(|| format!("writer {name} does not exist"))
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

    fn inject(&self, faults: &[PlanFault]) -> R<()> {
        if faults.is_empty() {
            return Ok(());
        }
        let f = self.engine.as_ref().ok_or("faults need the embedded engine")?.faults();
        for p in faults {
            let fault = match p.kind.as_str() {
                "error" => EngineFault::Error { code: p.code, message: p.message.clone(), times: p.times },
                "delay" => EngineFault::Delay { delay: Duration::from_millis(p.ms), times: p.times },
                _ => EngineFault::DropConnection { after_apply: p.after_apply, times: p.times },
            };
            if p.coordinator {
                f.inject_coordinator(fault);
            } else {
                f.inject_at(&self.table, p.partition.as_deref(), p.bucket, fault);
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
fn make_callback(state: &Arc<State>, id: &str, spec: Callback) -> (impl FnOnce(&WriteCompletion) + Send + 'static, Arc<()>) {
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
            if let Err(e) = run_step(&state, call) {
                state.ev(Event::RunnerError { message: e });
            }
        }
        if spec.raise {
            panic!("golden: the callback of {id} raises on purpose");
        }
    };
    (cb, alive)
}

fn to_arrow(columns: &[Col], rows: &[Vec<Value>]) -> R<RecordBatch> {
    let schema = Schema::new(columns.iter().map(Col::core).collect(), vec![]).map_err(|e| e.to_string())?;
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
    RecordBatch::try_new(arrow_schema(&schema), cols).map_err(|e| e.to_string())
}

fn submit(state: &Arc<State>, op: &PlanStep) -> R<()> {
    let writer = state.writer(&op.writer)?;
    let op_state = OpState { writer: op.writer.clone(), notify: op.notify.clone(), ..Default::default() };
    state.ops.lock().unwrap().insert(op.id.clone(), op_state);
    let (cb, alive) = make_callback(state, &op.id, op.callback.clone().unwrap_or_default());
    let mut cb = Some(cb);
    let arrow = if op.op == "append_arrow" { Some(to_arrow(&op.columns, &op.values)?) } else { None };
    let row = op.values.first().cloned().unwrap_or_default();
    let n = op.notify.as_str();
    state.ev(Event::SubmitBegin { id: op.id.clone(), thread: thread() });
    let t0 = Instant::now();
    let res: fluss_writer::Result<Option<WriteResult>> = match (&*writer, op.op.as_str(), arrow.as_ref()) {
        (WriterHandle::Append(w), "append", _) => match n {
            "callback" => w.append_with_callback(&row, cb.take().unwrap()).map(|_| None),
            "result" => w.append(&row).map(Some),
            _ => w.append_detached(&row).map(|_| None),
        },
        (WriterHandle::Append(w), "append_arrow", Some(b)) => match n {
            "callback" => w.write_arrow_batch_with_callback(b, cb.take().unwrap()).map(|_| None),
            "result" => w.write_arrow_batch(b).map(Some),
            _ => w.write_arrow_batch_detached(b).map(|_| None),
        },
        (WriterHandle::Upsert(w), "upsert", _) => match n {
            "callback" => w.upsert_with_callback(&row, cb.take().unwrap()).map(|_| None),
            "result" => w.upsert(&row).map(Some),
            _ => w.upsert_detached(&row).map(|_| None),
        },
        (WriterHandle::Upsert(w), "delete", _) => match n {
            "callback" => w.delete_with_callback(&row, cb.take().unwrap()).map(|_| None),
            "result" => w.delete(&row).map(Some),
            _ => w.delete_detached(&row).map(|_| None),
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

fn result_of(state: &State, target: &str) -> R<WriteResult> {
    state.ops.lock().unwrap().get(target).and_then(|r| r.result.clone()).ok_or_else(|| format!("{target} has no accepted WriteResult"))
}

/// flush, close, wait and the DDL steps: one call, recorded from begin to end.
fn call(state: &Arc<State>, c: &PlanStep) -> R<()> {
    let timeout = c.timeout_ms.map(Duration::from_millis);
    let result = if c.op == "wait" { Some(result_of(state, &c.target)?) } else { None };
    let ends = c.op == "flush" || c.op == "close";
    let writer = if ends { Some(state.writer(&c.writer)?) } else { None };
    state.ev(Event::CallBegin { step: c.path.clone(), call: c.op.clone(), thread: thread() });
    let t0 = Instant::now();
    let res = match (c.op.as_str(), &result, &writer) {
        ("wait", Some(r), _) => r.wait(timeout).map(|_| ()),
        (op, _, Some(w)) => w.end(op == "close", timeout),
        ("create_partition", ..) => state.admin.create_partition(&state.table, &spec(&c.spec), false),
        ("drop_partition", ..) => state.admin.drop_partition(&state.table, &spec(&c.spec), false),
        ("alter_table", ..) => {
            let changes: Vec<TableChange> = c.columns.iter().map(|c| TableChange::AddColumn(c.core())).collect();
            state.admin.alter_table(&state.table, &changes, false)
        }
        ("create_writer", ..) => open_writer(state, c.writer_spec.as_ref().ok_or("create_writer without a writer")?),
        ("alter_bucket_count", ..) => state.admin.alter_bucket_count(&state.table, c.bucket_count, false),
        (op, ..) => return Err(format!("{}: op {op:?} is not known to this runner", c.path)),
    };
    let elapsed_ms = ms(t0.elapsed());
    let results_done = match ends {
        false => vec![],
        true => {
            let ops = state.ops.lock().unwrap();
            let done = ops.iter().filter(|(_, r)| r.writer == c.writer && r.result.as_ref().is_some_and(WriteResult::is_done));
            done.map(|(k, _)| k.clone()).collect()
        }
    };
    state.ev(Event::CallEnd { step: c.path.clone(), code: res.err().map_or(0, |e| e.code()), elapsed_ms, results_done });
    Ok(())
}

fn run_step(state: &Arc<State>, step: &PlanStep) -> R<()> {
    let (path, target) = (&step.path, &step.target);
    match step.op.as_str() {
        "append" | "upsert" | "delete" | "append_arrow" => submit(state, step)?,
        "add_callback" => {
            let result = result_of(state, target)?;
            let writer = state.ops.lock().unwrap()[target].writer.clone();
            let op_state = OpState { writer, notify: "callback".into(), accepted: true, ..Default::default() };
            state.ops.lock().unwrap().insert(step.id.clone(), op_state);
            state.ev(Event::AddCallback { id: step.id.clone(), target: target.clone(), thread: thread() });
            result.add_callback(make_callback(state, &step.id, step.callback.clone().ok_or("add_callback without a callback")?).0);
        }
        "sleep" => std::thread::sleep(Duration::from_millis(step.ms)),
        "open_gate" => state.open_gate(&step.gate),
        "stats" => {
            let s = match &*state.writer(&step.writer)? {
                WriterHandle::Append(w) => w.stats(),
                WriterHandle::Upsert(w) => w.stats(),
            };
            let stats = s.fields().iter().map(|(k, v)| (k.to_string(), *v)).collect();
            state.ev(Event::Stats { step: path.clone(), writer: step.writer.clone(), stats });
        }
        "await_callback" => {
            let deadline = Instant::now() + Duration::from_millis(step.timeout_ms.unwrap_or(10_000));
            let reached = |s: &str| if step.state == "running" { s != "not_started" } else { s == "returned" };
            let mut s = state.cb_state(target);
            while !reached(s) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
                s = state.cb_state(target);
            }
            state.ev(Event::Await { step: path.clone(), target: target.clone(), state: s.into() });
            if !reached(s) {
                return Err(format!("{path}: stopped: the callback of {target} is still {s}"));
            }
        }
        "assert_callback" => state.ev(Event::Observe { step: path.clone(), target: target.clone(), state: state.cb_state(target).into() }),
        "inject" => state.inject(&step.faults)?,
        "parallel" => {
            let barrier = Arc::new(Barrier::new(step.threads.len()));
            let handles: Vec<_> = step
                .threads
                .iter()
                .map(|t| {
                    let (state, t, barrier) = (state.clone(), t.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        state.ev(Event::Thread { thread: thread(), name: t.name.clone() });
                        barrier.wait();
                        t.steps.iter().try_for_each(|s| run_step(&state, s))
                    })
                })
                .collect();
            let errors: Vec<String> =
                handles.into_iter().filter_map(|h| h.join().unwrap_or_else(|_| Err("a thread panicked".into())).err()).collect();
            if !errors.is_empty() {
                return Err(errors.join("\n"));
            }
        }
        _ => call(state, step)?,
    }
    Ok(())
}

/// Says that a run had to try again: on stderr and in `$FLUSS_TEST_LOGS/retries.log`, which the
/// summary of `make test` lists (scripts/test-summary.py).
fn note_retry(what: impl std::fmt::Display) {
    eprintln!("{what}");
    if let Some(dir) = std::env::var_os("FLUSS_TEST_LOGS") {
        use std::io::Write as _;
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(std::path::Path::new(&dir).join("retries.log")) {
            let _ = writeln!(f, "rust golden: {what}");
        }
    }
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
                note_retry(format_args!("golden: {path}: {e}; creating another table"));
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
fn open_writer(state: &State, ws: &PlanWriter) -> fluss_writer::Result<()> {
    let counter = state.counters[&ws.name].clone();
    let mut opts = WriterOptions::default().error_handler(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    if let Some(n) = ws.max_pending_callbacks {
        opts = opts.max_pending_callbacks(n);
    }
    if let Some(n) = ws.sharded {
        opts = opts.executor(CallbackExecutor::Sharded(n));
    }
    let table = state.conn.get_table(&state.table)?;
    let handle = if ws.upsert {
        let up = table.new_upsert()?;
        let up = match &ws.partial_update {
            Some(cols) => up.partial_update_by_name(cols)?,
            None => up,
        };
        up.create_writer(opts).map(WriterHandle::Upsert)?
    } else {
        table.new_append()?.create_writer(opts).map(WriterHandle::Append)?
    };
    state.writers.lock().unwrap().insert(ws.name.clone(), Arc::new(handle));
    Ok(())
}

fn setup(plan: &Plan, cluster: Option<&str>, file: &Path) -> R<Arc<State>> {
    let mut config = Config::default();
    config.set("bootstrap.servers", cluster.unwrap_or("embedded")).map_err(|e| e.to_string())?;
    for (k, v) in &plan.config {
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
    let t = &plan.table;
    let schema = Schema::new(t.columns.iter().map(Col::core).collect(), t.primary_key.clone()).map_err(|e| e.to_string())?;
    let mut desc = TableDescriptor::new(schema).with_bucket_count(t.bucket_count);
    if !t.bucket_key.is_empty() {
        desc = desc.with_bucket_key(t.bucket_key.clone());
    }
    if !t.partition_keys.is_empty() {
        desc = desc.with_partition_keys(t.partition_keys.clone());
    }
    for (k, v) in &t.properties {
        desc = desc.with_property(k, v);
    }
    let path = create_table(&conn, path, &desc, cluster.is_some())?;
    for p in &plan.partitions {
        conn.admin().create_partition(&path, &spec(p), false).map_err(|e| format!("create partition {p:?}: {e}"))?;
    }
    let state = Arc::new(State {
        plan: plan.clone(),
        events: Mutex::new(Vec::new()),
        writers: Mutex::new(HashMap::new()),
        ops: Mutex::new(HashMap::new()),
        gates: Mutex::new(HashMap::new()),
        table: path,
        engine: conn.embedded().cloned(),
        conn: conn.clone(),
        admin: conn.admin(),
        counters: plan.writers.iter().map(|w| (w.name.clone(), Arc::new(AtomicU64::new(0)))).collect(),
    });
    state.inject(&plan.faults)?;
    for ws in plan.writers.iter().filter(|w| !w.deferred) {
        open_writer(&state, ws).map_err(|e| format!("writer {}: {e}", ws.name))?;
    }
    Ok(state)
}

/// The capabilities of `plan.requires` that the servers lack, as the core decides them
/// (`Admin::server_supports`).
fn missing_capabilities(plan: &Plan, cluster: Option<&str>) -> R<Vec<String>> {
    if plan.requires.is_empty() {
        return Ok(vec![]);
    }
    let mut config = Config::default();
    config.set("bootstrap.servers", cluster.unwrap_or("embedded")).map_err(|e| e.to_string())?;
    let conn = Connection::connect(config).map_err(|e| e.to_string())?;
    let mut missing = Vec::new();
    for c in &plan.requires {
        if !conn.admin().server_supports(c).map_err(|e| format!("requires {c}: {e}"))? {
            missing.push(c.clone());
        }
    }
    conn.close(None).map_err(|e| e.to_string())?;
    Ok(missing)
}

fn run_scenario(plan: &Plan, cluster: Option<&str>, file: &Path, trace: &mut Trace) {
    match missing_capabilities(plan, cluster) {
        Ok(missing) if !missing.is_empty() => {
            let mut events: Vec<Event> = missing.into_iter().map(|capability| Event::Unsupported { capability }).collect();
            events.push(Event::Teardown {});
            trace.events = events.into_iter().enumerate().map(|(i, ev)| Entry { seq: i as u64, ev }).collect();
            return;
        }
        Ok(_) => {}
        Err(message) => {
            trace.events = vec![Entry { seq: 0, ev: Event::RunnerError { message } }];
            return;
        }
    }
    let state = match setup(plan, cluster, file) {
        Ok(s) => s,
        Err(message) => {
            trace.events = vec![Entry { seq: 0, ev: Event::RunnerError { message } }];
            return;
        }
    };
    state.ev(Event::Thread { thread: thread(), name: "main".into() });
    if let Err(e) = plan.steps.iter().try_for_each(|s| run_step(&state, s)) {
        state.ev(Event::RunnerError { message: e });
    }
    // Settle: wait for every accepted callback to return and every result to be done.
    let deadline = Instant::now() + Duration::from_millis(plan.settle_ms);
    let pending = || {
        state.ops.lock().unwrap().values().any(|r| {
            r.accepted
                && match r.notify.as_str() {
                    "callback" => !r.returned,
                    "result" => !r.result.as_ref().is_some_and(WriteResult::is_done),
                    _ => false,
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
    let _ = state.conn.close(Some(Duration::from_secs(10)));
    state.ev(Event::Teardown {});
    trace.events = std::mem::take(&mut *state.events.lock().unwrap());
}

/// The plan's read-back, with the table loaded now (after a schema change it reads every column).
fn read_back(state: &State) -> R<ReadBack> {
    let handle = state.conn.get_table(&state.table).map_err(|e| format!("read-back: {e}"))?;
    let json_row = |r: &[Value]| r.iter().map(plan::json_value).collect::<Vec<Json>>();
    let mut rb = ReadBack::default();
    for s in &state.plan.read_back.scans {
        let rows = match &s.partition {
            Some(p) => handle.scan_partition(p, s.bucket, 0),
            None => handle.scan(s.bucket, 0),
        };
        let rows = rows.map_err(|e| format!("read-back {:?} bucket {}: {e}", s.partition, s.bucket))?;
        rb.scans.push(Scan { partition: s.partition.clone(), bucket: s.bucket, rows: rows.iter().map(|r| json_row(&r.row)).collect() });
    }
    for (key, values) in state.plan.read_back.lookups.iter().zip(&state.plan.read_back.lookup_values) {
        let row = handle.lookup(values).map_err(|e| format!("lookup {key:?}: {e}"))?;
        rb.lookups.push(Lookup { key: key.clone(), row: row.map(|r| json_row(&r)) });
    }
    Ok(rb)
}
