//! The one checker: judges a runner's trace against its scenario's expectations. Every check of
//! the golden format lives here, so all three languages are held to the same checks.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value as Json;

use crate::scenario::{self, code_name, op_outcomes, CbState, Notify, Outcome, Scenario, Step, TableKind, WriteOp};
use crate::trace::{Completion, Event, Trace};

/// The verdict: how many checks were evaluated, and the failed ones.
#[derive(Debug, Default)]
pub struct Report {
    pub checks: usize,
    pub failures: Vec<String>,
}

impl Report {
    fn check(&mut self, ok: bool, msg: impl FnOnce() -> String) -> bool {
        self.checks += 1;
        if !ok {
            self.failures.push(msg());
        }
        ok
    }

    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

#[derive(Default)]
struct OpTrace {
    begin: Option<String>,
    end: Option<(u64, i32, f64, Option<bool>)>,
    add: Option<(u64, String, String)>,
    starts: Vec<(u64, String, Completion)>,
    returns: Vec<u64>,
    result: Option<Option<Completion>>,
}

#[derive(Default)]
struct CallTrace {
    begin: Option<u64>,
    end: Option<(u64, i32, f64, Vec<String>)>,
    observed: Option<String>,
}

/// Judge `trace` against the scenario document `doc` (validated here, once, for every language).
pub fn check(doc: &Json, trace: &Trace) -> Report {
    let mut r = Report::default();
    let sc = match scenario::load(doc) {
        Ok(sc) => sc,
        Err(errs) => {
            r.checks += 1;
            r.failures = errs;
            return r;
        }
    };
    judge(&sc, trace, &mut r);
    if let Some(bug) = &sc.known_bug {
        r.checks += 1;
        if r.failures.is_empty() {
            r.failures.push(format!("known_bug ({bug}): the scenario passed; remove \"known_bug\" from the file"));
        } else {
            r.failures.insert(0, format!("known_bug ({bug}):"));
        }
    }
    r
}

fn state_name(s: CbState) -> &'static str {
    match s {
        CbState::NotStarted => "not_started",
        CbState::Running => "running",
        CbState::Returned => "returned",
    }
}

fn show(o: &[Outcome]) -> String {
    let v: Vec<String> = o
        .iter()
        .map(|o| match o {
            Outcome::Completed(0) => "ok".to_string(),
            Outcome::Completed(c) => format!("callback_error {}", code_name(*c)),
            Outcome::Sync(c) => format!("sync_error {}", code_name(*c)),
        })
        .collect();
    v.join(" or ")
}

fn judge(sc: &Scenario, trace: &Trace, r: &mut Report) {
    if !r.check(trace.target == "embedded" || !scenario::uses_faults(sc), || {
        "this scenario injects faults, which a real cluster cannot do (only the embedded engine can)".into()
    }) {
        return;
    }
    // A server without a capability the scenario requires runs nothing of it: that is a pass
    // for a cluster (the scenario does not apply to it), never for the embedded engine.
    let missing: Vec<&str> = trace
        .events
        .iter()
        .filter_map(|e| match &e.ev {
            Event::Unsupported { capability } => Some(capability.as_str()),
            _ => None,
        })
        .collect();
    if !missing.is_empty() {
        for m in &missing {
            r.check(sc.requires.iter().any(|x| x == m), || format!("trace: unsupported {m:?}, which the scenario does not require"));
            r.check(trace.target != "embedded", || format!("the embedded engine must support {m:?}"));
        }
        r.check(
            !trace.events.iter().any(|e| matches!(e.ev, Event::SubmitBegin { .. } | Event::CallBegin { .. } | Event::Settled {})),
            || "trace: steps ran although a required capability is missing".into(),
        );
        return;
    }
    // Index the trace.
    let mut ops: HashMap<&str, OpTrace> = HashMap::new();
    let mut calls: HashMap<&str, CallTrace> = HashMap::new();
    let mut submitters: BTreeSet<&str> = BTreeSet::new();
    let mut settled = None;
    for (i, e) in trace.events.iter().enumerate() {
        r.check(e.seq == i as u64, || format!("trace: event {i} has seq {} (events must be recorded in seq order)", e.seq));
        match &e.ev {
            Event::Thread { thread, .. } => {
                submitters.insert(thread);
            }
            Event::SubmitBegin { id, thread } => ops.entry(id).or_default().begin = Some(thread.clone()),
            Event::SubmitEnd { id, code, elapsed_ms, callback_destroyed, .. } => {
                ops.entry(id).or_default().end = Some((e.seq, *code, *elapsed_ms, *callback_destroyed))
            }
            Event::AddCallback { id, target, thread } => ops.entry(id).or_default().add = Some((e.seq, target.clone(), thread.clone())),
            Event::CallbackStart { id, thread, completion } => {
                ops.entry(id).or_default().starts.push((e.seq, thread.clone(), completion.clone()))
            }
            Event::CallbackReturn { id, .. } => ops.entry(id).or_default().returns.push(e.seq),
            Event::Result { id, completion } => ops.entry(id).or_default().result = Some(completion.clone()),
            Event::CallBegin { step, .. } => calls.entry(step).or_default().begin = Some(e.seq),
            Event::CallEnd { step, code, elapsed_ms, results_done } => {
                calls.entry(step).or_default().end = Some((e.seq, *code, *elapsed_ms, results_done.clone()))
            }
            Event::Await { step, state, .. } | Event::Observe { step, state, .. } => {
                calls.entry(step).or_default().observed = Some(state.clone())
            }
            Event::Stats { .. } => {}
            Event::Settled {} => settled = Some(e.seq),
            Event::RunnerError { message } => {
                r.check(false, || format!("runner: {message}"));
            }
            Event::Teardown {} | Event::Unsupported { .. } => {}
        }
    }
    let runner_failed = trace.events.iter().any(|e| matches!(e.ev, Event::RunnerError { .. }));
    if !runner_failed {
        r.check(settled.is_some(), || "trace: no settled event (the runner did not finish the scenario)".into());
    }
    let settled = settled.unwrap_or(u64::MAX);
    let default_writer = sc.writers[0].name.clone();
    let writer_of = |w: &Option<String>| w.clone().unwrap_or_else(|| default_writer.clone());
    let fifo: BTreeSet<String> = sc.writers.iter().filter(|w| w.sharded().is_none()).map(|w| w.name.clone()).collect();
    let steps = scenario::all_steps(sc);
    let specs: BTreeMap<&str, (&WriteOp, bool)> =
        steps.iter().filter_map(|(_, s)| s.write_op().map(|o| (o.id.as_str(), (o, matches!(s, Step::AppendArrow(_)))))).collect();
    let mut op_writer: HashMap<&str, String> = specs.iter().map(|(id, (o, _))| (*id, writer_of(&o.writer))).collect();
    let no = OpTrace::default();

    // Write ops: outcome, where, exactly once, timing.
    for (id, (spec, arrow)) in &specs {
        let t = ops.get(id).unwrap_or(&no);
        let Some((_, code, elapsed, destroyed)) = t.end else {
            r.check(false, || format!("{id}: never submitted (a step before it failed?)"));
            continue;
        };
        let allowed = op_outcomes(&spec.expect).unwrap_or_default();
        if let Some(min) = spec.min_elapsed_ms {
            r.check(elapsed >= min as f64, || format!("{id}: the call took {elapsed:.1} ms, expected at least {min} ms"));
        }
        if let Some(max) = spec.max_elapsed_ms {
            r.check(elapsed <= max as f64, || format!("{id}: the call took {elapsed:.1} ms, expected at most {max} ms"));
        }
        if code != 0 {
            r.check(allowed.contains(&Outcome::Sync(code)), || {
                format!("{id}: expected {}, got a synchronous error {}", show(&allowed), code_name(code))
            });
            if spec.notify == Notify::Callback {
                r.check(destroyed != Some(false), || {
                    format!("{id}: rejected synchronously but its callback was not destroyed before the call returned (C1)")
                });
            }
            r.check(t.starts.is_empty(), || format!("{id}: rejected synchronously, yet its callback ran {} time(s) (C1)", t.starts.len()));
            continue;
        }
        r.check(allowed.iter().any(|o| matches!(o, Outcome::Completed(_))), || {
            format!("{id}: expected {}, but the submission was accepted", show(&allowed))
        });
        let completion = match spec.notify {
            Notify::Callback => {
                if !r.check(t.starts.len() == 1, || format!("{id}: callback ran {} times, expected exactly once (C1)", t.starts.len())) {
                    continue;
                }
                let (seq, thread, c) = &t.starts[0];
                r.check(!submitters.contains(thread.as_str()), || format!("{id}: callback ran on a submitting thread (C2)"));
                r.check(t.returns.len() == 1 && t.returns[0] > *seq, || {
                    format!("{id}: callback started once but returned {} time(s)", t.returns.len())
                });
                r.check(t.returns.first().is_some_and(|s| *s < settled), || {
                    format!("{id}: never completed within {} ms after the last step", sc.settle_ms())
                });
                Some(c.clone())
            }
            Notify::Result => {
                r.check(t.starts.is_empty(), || format!("{id}: notify = result, yet a callback of the op itself ran"));
                let done = t.result.clone().flatten();
                if !r.check(done.is_some(), || format!("{id}: its result never completed within {} ms after the last step", sc.settle_ms()))
                {
                    continue;
                }
                done
            }
            Notify::Detached => {
                r.check(t.starts.is_empty(), || format!("{id}: detached, yet a callback ran"));
                None
            }
        };
        let Some(c) = completion else { continue };
        r.check(allowed.contains(&Outcome::Completed(c.code)), || {
            format!("{id}: completed with {}, expected {}", code_name(c.code), show(&allowed))
        });
        let buckets = spec.buckets();
        let parts = spec.partitions();
        r.check(c.bucket == buckets[0], || format!("{id}: completion bucket {} but the file says {}", c.bucket, buckets[0]));
        r.check(c.partition == parts[0], || format!("{id}: completion partition {:?} but the file says {:?}", c.partition, parts[0]));
        if let Some(off) = spec.offset {
            r.check(c.offset == off, || format!("{id}: offset {} expected {off}", c.offset));
        }
        if *arrow {
            // Rows per (partition, bucket): one result per part of the batch.
            let mut want: BTreeMap<(Option<String>, i32), usize> = BTreeMap::new();
            parts.iter().cloned().zip(buckets.iter().copied()).for_each(|k| *want.entry(k).or_default() += 1);
            let got: BTreeMap<(Option<String>, i32), usize> =
                c.bucket_results.iter().map(|b| ((b.partition.clone(), b.bucket), b.rows)).collect();
            r.check(want == got, || format!("{id}: bucket_results rows per (partition, bucket) {got:?}, the file's rows give {want:?}"));
            if let Some(br) = &spec.bucket_results {
                let mut want: Vec<(Option<String>, i32, usize, i32)> = br
                    .iter()
                    .map(|b| {
                        let code = b.error.as_deref().map_or(0, |n| scenario::code_of(n).unwrap_or(i32::MIN));
                        (b.partition.clone(), b.bucket, b.rows, code)
                    })
                    .collect();
                want.sort();
                let mut got: Vec<(Option<String>, i32, usize, i32)> =
                    c.bucket_results.iter().map(|b| (b.partition.clone(), b.bucket, b.rows, b.code)).collect();
                got.sort();
                r.check(got == want, || format!("{id}: bucket_results {got:?}, expected {want:?}"));
            }
        }
    }

    // Late callbacks (add_callback): exactly once, the target's outcome, never on a submitting thread.
    for (_, s) in &steps {
        let Step::AddCallback(scenario::Other { id, target, .. }) = s else { continue };
        op_writer.insert(id, op_writer.get(target.as_str()).cloned().unwrap_or_default());
        let t = ops.get(id.as_str()).unwrap_or(&no);
        if !r.check(t.add.is_some(), || format!("{id}: add_callback never ran")) {
            continue;
        }
        if !r.check(t.starts.len() == 1, || format!("{id} (late callback on {target}): ran {} times, expected once (C1)", t.starts.len())) {
            continue;
        }
        let (_, thread, c) = &t.starts[0];
        let want = ops.get(target.as_str()).and_then(|t| t.result.clone().flatten()).map(|c| c.code);
        r.check(want == Some(c.code), || format!("{id}: late callback saw {}, its result has {want:?}", code_name(c.code)));
        r.check(!submitters.contains(thread.as_str()), || format!("{id}: late callback ran on a submitting thread (C2)"));
        r.check(t.returns.first().is_some_and(|s| *s < settled), || {
            format!("{id}: late callback never returned within {} ms after the last step", sc.settle_ms())
        });
    }

    // flush / close / wait: outcome, timing, the C6 watermark; await / assert states.
    for (path, s) in &steps {
        let c = calls.get(path.as_str());
        match s {
            Step::Flush(spec)
            | Step::Close(spec)
            | Step::Wait(spec)
            | Step::CreatePartition(spec)
            | Step::DropPartition(spec)
            | Step::AlterTable(spec)
            | Step::CreateWriter(spec)
            | Step::AlterBucketCount(spec) => {
                let Some((end, code, elapsed, done)) = c.and_then(|c| c.end.clone()) else {
                    let began = c.and_then(|c| c.begin).is_some();
                    r.check(false, || {
                        format!("{path}: {}", if began { "the call never returned" } else { "never ran (a step before it failed?)" })
                    });
                    continue;
                };
                let want = scenario::call_code(&spec.expect).unwrap_or(i32::MIN);
                let name = |c: i32| if c == 0 { "ok".to_string() } else { code_name(c) };
                r.check(code == want, || format!("{path}: expected {}, got {}", name(want), name(code)));
                if let Some(min) = spec.min_elapsed_ms {
                    r.check(elapsed >= min as f64, || format!("{path}: took {elapsed:.1} ms, expected at least {min} ms"));
                }
                if let Some(max) = spec.max_elapsed_ms {
                    r.check(elapsed <= max as f64, || format!("{path}: took {elapsed:.1} ms, expected at most {max} ms"));
                }
                if code != 0 || !matches!(s, Step::Flush(_) | Step::Close(_)) {
                    continue;
                }
                // C6: every op of the writer accepted before the call began completed before it returned.
                let begin = c.and_then(|c| c.begin).unwrap_or(0);
                let writer = writer_of(&spec.writer);
                for (id, (o, _)) in specs.iter().filter(|(id, _)| op_writer.get(*id) == Some(&writer)) {
                    let t = ops.get(id).unwrap_or(&no);
                    if !t.end.as_ref().is_some_and(|e| e.1 == 0 && e.0 < begin) {
                        continue;
                    }
                    let completed = match o.notify {
                        Notify::Callback => t.returns.iter().any(|s| *s < end),
                        Notify::Result => done.contains(&id.to_string()),
                        Notify::Detached => true,
                    };
                    r.check(completed, || {
                        format!("{path}: returned ok, but {id} (accepted before it) had not completed and returned (C6)")
                    });
                }
            }
            Step::AwaitCallback(o) | Step::AssertCallback(o) => {
                let (target, state) = (&o.target, o.state.unwrap_or(CbState::Returned));
                let Some(seen) = c.and_then(|c| c.observed.clone()) else {
                    r.check(false, || format!("{path}: never ran (a step before it failed?)"));
                    continue;
                };
                let ok = match (s, state) {
                    (Step::AwaitCallback(_), CbState::Running) => seen != "not_started",
                    _ => seen == state_name(state),
                };
                let verb = if matches!(s, Step::AwaitCallback(_)) { "did not reach" } else { "is not" };
                r.check(ok, || format!("{path}: the callback of {target} {verb} {} (it is {seen})", state_name(state)));
            }
            _ => {}
        }
    }

    // C2: all callbacks of fifo writers on one thread (the connection's worker).
    let fifo_threads: BTreeSet<&str> = ops
        .iter()
        .filter(|(id, _)| op_writer.get(*id).is_some_and(|w| fifo.contains(w)))
        .flat_map(|(_, t)| t.starts.iter().map(|s| s.1.as_str()))
        .collect();
    r.check(fifo_threads.len() <= 1, || {
        format!("callbacks of fifo writers ran on {} threads, expected one worker (C2)", fifo_threads.len())
    });

    // C3: per (submitting thread, writer, partition, bucket), single-record callbacks run in
    // submission order.
    type Group<'a> = Vec<(u64, u64, &'a str)>;
    let mut groups: BTreeMap<(String, String, Option<String>, i32), Group> = BTreeMap::new();
    for (id, (o, arrow)) in &specs {
        let t = ops.get(id).unwrap_or(&no);
        if let (false, Notify::Callback, Some((sub, 0, ..)), [(seq, _, c)], Some(th)) =
            (*arrow, o.notify, t.end, t.starts.as_slice(), &t.begin)
        {
            groups.entry((th.clone(), op_writer[id].clone(), c.partition.clone(), c.bucket)).or_default().push((sub, *seq, id));
        }
    }
    for ((_, w, p, b), mut v) in groups {
        v.sort();
        let at = p.map_or(String::new(), |p| format!("partition {p} "));
        for p in v.windows(2) {
            r.check(p[0].1 < p[1].1, || {
                format!("writer {w} {at}bucket {b}: {} was submitted before {} but its callback ran after (C3)", p[0].2, p[1].2)
            });
        }
    }

    // Log tables: per (writer, partition, bucket), the offsets of successful single-record
    // callbacks grow in callback order. Two writers of one connection send on their own, so
    // nothing orders one writer's records against another's in a bucket (C3 is per writer).
    if sc.table.kind == TableKind::Log {
        type Where = (String, Option<String>, i32); // (writer, partition, bucket)
        let mut per: BTreeMap<Where, Vec<(u64, i64, &str)>> = BTreeMap::new();
        for (id, (_, arrow)) in &specs {
            if let (false, [(seq, _, c)]) = (*arrow, ops.get(id).unwrap_or(&no).starts.as_slice()) {
                if c.code == 0 {
                    per.entry((op_writer[id].clone(), c.partition.clone(), c.bucket)).or_default().push((*seq, c.offset, id));
                }
            }
        }
        for ((w, p, b), mut v) in per {
            v.sort();
            let at = p.map_or(String::new(), |p| format!("partition {p} "));
            for p in v.windows(2) {
                r.check(p[0].1 < p[1].1, || {
                    format!(
                        "writer {w} {at}bucket {b}: callback of {} (offset {}) ran before {} (offset {})",
                        p[0].2, p[0].1, p[1].2, p[1].1
                    )
                });
            }
        }
    }

    // Explicit order chains.
    for chain in &sc.expect.callback_order {
        let mut prev: Option<(u64, &String)> = None;
        for id in chain {
            let Some(seq) = ops.get(id.as_str()).and_then(|t| t.starts.first()).map(|s| s.0) else {
                r.check(false, || format!("callback_order {chain:?}: {id} has no callback invocation"));
                break;
            };
            if let Some((p, pid)) = prev {
                r.check(seq > p, || format!("callback_order {chain:?}: {id} ran before {pid}"));
            }
            prev = Some((seq, id));
        }
    }
    if runner_failed {
        return;
    }

    // Callback errors per writer (C8).
    for w in &sc.writers {
        let want = sc.expect.callback_errors.get(&w.name).copied().unwrap_or(0);
        let got = trace.callback_errors.get(&w.name).copied();
        r.check(got == Some(want), || format!("writer {}: {got:?} callback errors reported to the error handler, expected {want}", w.name));
    }

    // Writer stats. On the embedded engine the scenario's `embedded.*` keys decide what the
    // server does (e.g. its storage pressure); a real server decides for itself, so there only
    // the recording is checked.
    for (w, fields) in &sc.expect.stats {
        let seen: Vec<&BTreeMap<String, u64>> = trace
            .events
            .iter()
            .filter_map(|e| match &e.ev {
                Event::Stats { writer, stats, .. } if writer == w => Some(stats),
                _ => None,
            })
            .collect();
        if !r.check(!seen.is_empty(), || format!("expect.stats.{w}: no stats step of writer {w} in the trace")) {
            continue;
        }
        for (f, want) in fields {
            let values: Vec<u64> = seen.iter().filter_map(|s| s.get(f).copied()).collect();
            if !r.check(values.len() == seen.len(), || format!("expect.stats.{w}.{f}: a stats event lacks the field")) {
                continue;
            }
            if trace.target != "embedded" {
                continue;
            }
            if let Some(min) = want.min {
                let last = *values.last().expect("not empty");
                r.check(last >= min, || format!("stats {w}.{f}: {last} at the last stats step, expected at least {min}"));
            }
            if want.rises_and_falls {
                let fell = values.iter().enumerate().any(|(i, v)| *v > 0 && values[i + 1..].iter().any(|x| x < v));
                r.check(fell, || format!("stats {w}.{f}: never rose above 0 and fell again: {values:?}"));
            }
        }
    }

    // Read-back: rows of the table after its schema changes.
    let t = &sc.final_table();
    let rows = |v: &[Vec<Json>], what: &str| v.iter().map(|x| t.row(x, what)).collect::<Result<Vec<_>, _>>();
    let scans = trace.read_back.as_ref().map(|rb| rb.scans.as_slice()).unwrap_or_default();
    let mut compare = |want: &scenario::Buckets, p: Option<&String>| {
        let at = p.map_or(String::new(), |p| format!("partition {p} "));
        for (b, want) in want {
            let want = rows(want, "expect.read_back").unwrap_or_default();
            match scans.iter().find(|s| s.partition.as_ref() == p && s.bucket.to_string() == *b) {
                None => r.check(false, || format!("read-back {at}bucket {b}: not in the trace")),
                Some(s) => match rows(&s.rows, &format!("trace read-back {at}bucket {b}")) {
                    Err(e) => r.check(false, || e),
                    Ok(got) => r.check(got == want, || {
                        format!("read-back {at}bucket {b}:\n  got      {}\n  expected {}", show_rows(&got), show_rows(&want))
                    }),
                },
            };
        }
    };
    if let Some(want) = &sc.expect.read_back.buckets {
        compare(want, None);
    }
    for (p, want) in sc.expect.read_back.partitions.iter().flatten() {
        compare(want, Some(p));
    }
    if let Some(want) = &sc.expect.read_back.lookups {
        let got = trace.read_back.as_ref().map(|rb| rb.lookups.as_slice()).unwrap_or_default();
        for l in want {
            let key = t.key(&l.key, "expect.read_back.lookups").unwrap_or_default();
            let want = l.row.as_ref().map(|x| t.row(x, "expect")).transpose().unwrap_or_default();
            let found = got.iter().find(|g| t.key(&g.key, "trace").is_ok_and(|k| k == key));
            match found.map(|g| g.row.as_ref().map(|x| t.row(x, "trace lookup")).transpose()) {
                None => r.check(false, || format!("lookup {:?}: not in the trace", l.key)),
                Some(Err(e)) => r.check(false, || e),
                Some(Ok(got)) => r.check(got == want, || format!("lookup {:?}: got {got:?}, expected {want:?}", l.key)),
            };
        }
    }
}

fn show_rows(rows: &[Vec<fluss_writer::Value>]) -> String {
    use fluss_writer::Value;
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
