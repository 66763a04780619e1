//! Self-tests of the one checker: every golden file passes the schema; a broken scenario or a
//! trace that breaks an expectation fails, each for its stated reason. (These were the runners'
//! self-tests, written three times; the runners now only run.)

use fluss_writer_golden::scenario;
use fluss_writer_golden::schema::Schema;
use fluss_writer_golden::trace::Trace;
use fluss_writer_golden::{check, Report};
use serde_json::{json, Value as Json};

fn base() -> Json {
    json!({
        "description": "checker self-test",
        "table": {"kind": "log", "bucket_count": 1,
                  "columns": [{"name": "id", "type": "INT", "nullable": false}, {"name": "msg", "type": "STRING"}],
                  "bucket_key": ["id"]},
        "config": {"client.writer.batch-timeout": "5ms"},
        "writers": [{"name": "w", "kind": "append"}],
        "steps": [
            {"op": "append", "id": "a1", "row": [1, "x"], "bucket": 0, "offset": 0, "expect": "ok"},
            {"op": "append", "id": "a2", "row": [2, "y"], "bucket": 0, "offset": 1, "expect": "ok"},
            {"op": "flush", "expect": "ok"}
        ],
        "expect": {"read_back": {"buckets": {"0": [[1, "x"], [2, "y"]]}}}
    })
}

/// The trace a correct runner records for `base()`: main thread T1, callbacks on worker T2.
fn base_trace() -> Json {
    json!({
        "runner": "selftest", "target": "embedded",
        "events": [
            {"seq": 0, "ev": "thread", "thread": "T1", "name": "main"},
            {"seq": 1, "ev": "submit_begin", "id": "a1", "thread": "T1"},
            {"seq": 2, "ev": "submit_end", "id": "a1", "thread": "T1", "code": 0, "elapsed_ms": 0.1, "callback_destroyed": null},
            {"seq": 3, "ev": "submit_begin", "id": "a2", "thread": "T1"},
            {"seq": 4, "ev": "submit_end", "id": "a2", "thread": "T1", "code": 0, "elapsed_ms": 0.1, "callback_destroyed": null},
            {"seq": 5, "ev": "call_begin", "step": "steps[2]", "call": "flush", "thread": "T1"},
            {"seq": 6, "ev": "callback_start", "id": "a1", "thread": "T2", "code": 0, "bucket": 0, "partition": null, "offset": 0, "bucket_results": []},
            {"seq": 7, "ev": "callback_return", "id": "a1", "thread": "T2"},
            {"seq": 8, "ev": "callback_start", "id": "a2", "thread": "T2", "code": 0, "bucket": 0, "partition": null, "offset": 1, "bucket_results": []},
            {"seq": 9, "ev": "callback_return", "id": "a2", "thread": "T2"},
            {"seq": 10, "ev": "call_end", "step": "steps[2]", "code": 0, "elapsed_ms": 1.0, "results_done": []},
            {"seq": 11, "ev": "settled"},
            {"seq": 12, "ev": "teardown"}
        ],
        "callback_errors": {"w": 0},
        "read_back": {"scans": [{"partition": null, "bucket": 0, "rows": [[1, "x"], [2, "y"]]}]}
    })
}

fn run(doc: &Json, trace: &Json) -> Report {
    let t: Trace = serde_json::from_value(trace.clone()).expect("a trace");
    check(doc, &t)
}

/// Renumber `seq` after events were moved, added or removed.
fn renumber(t: &mut Json) {
    for (i, e) in t["events"].as_array_mut().unwrap().iter_mut().enumerate() {
        e["seq"] = json!(i);
    }
}

fn fails_with(doc: Json, trace: Json, needle: &str) {
    let r = run(&doc, &trace);
    assert!(r.failures.iter().any(|f| f.contains(needle)), "expected a failure containing {needle:?}, got {:?}", r.failures);
}

#[test]
fn base_passes() {
    let r = run(&base(), &base_trace());
    assert!(r.passed(), "{:?}", r.failures);
    assert!(r.checks >= 20, "only {} checks", r.checks);
}

#[test]
fn every_golden_file_is_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../golden");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let doc: Json = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            scenario::load(&doc).unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
            n += 1;
        }
    }
    assert!(n >= 43, "only {n} golden files");
}

#[test]
fn schema_refuses_keywords_it_does_not_check() {
    assert!(Schema::new(json!({"type": "string", "pattern": "^a"})).is_err());
}

// ----- broken scenarios: the format is defined once, and a file outside it fails

#[test]
fn scenario_unknown_field() {
    let mut d = base();
    d["retries"] = json!(3);
    fails_with(d, base_trace(), "unknown field(s) [\"retries\"]");
}

#[test]
fn scenario_unknown_op() {
    let mut d = base();
    d["steps"].as_array_mut().unwrap().push(json!({"op": "frobnicate"}));
    fails_with(d, base_trace(), "/steps/3/op: \"frobnicate\" is not one of");
}

#[test]
fn scenario_unknown_field_in_step() {
    let mut d = base();
    d["steps"][0]["frobnicate"] = json!(1);
    fails_with(d, base_trace(), "/steps/0: unknown field(s) [\"frobnicate\"]");
}

#[test]
fn scenario_unknown_code() {
    let mut d = base();
    d["steps"][0]["expect"] = json!({"callback_error": "NO_SUCH_CODE"});
    fails_with(d, base_trace(), "unknown error code name \"NO_SUCH_CODE\"");
}

#[test]
fn scenario_unknown_value_form() {
    let mut d = base();
    d["steps"][0]["row"] = json!([1, {"repeat": "ab", "count": 1, "times": 2}]);
    fails_with(d, base_trace(), "unknown field(s) [\"times\"]");
}

#[test]
fn scenario_unknown_type() {
    let mut d = base();
    d["table"]["columns"][1]["type"] = json!("TIMESTAMP");
    fails_with(d, base_trace(), "\"TIMESTAMP\" is not one of");
}

#[test]
fn scenario_wrong_value_type() {
    let mut d = base();
    d["steps"][0]["row"] = json!(["one", "x"]);
    fails_with(d, base_trace(), "\"one\" is not a INT value for column id");
}

#[test]
fn scenario_wrong_bucket() {
    let mut d = base();
    d["table"]["bucket_count"] = json!(2);
    d["expect"] = json!({});
    // Of the two buckets a row has exactly one: stating the other fails, naming the core's.
    let mut failed = 0;
    for stated in [0, 1] {
        d["steps"][0]["bucket"] = json!(stated);
        d["steps"][1]["bucket"] = json!(0);
        match scenario::load(&d) {
            Ok(_) => {}
            Err(e) => {
                assert!(
                    e.iter().any(|x| x.contains(&format!("a1) row 0: the file says bucket {stated} but the core's bucketing gives"))),
                    "{e:?}"
                );
                failed += 1;
            }
        }
    }
    assert_eq!(failed, 1);
}

#[test]
fn scenario_duplicate_id_and_unknown_writer() {
    let mut d = base();
    d["steps"][1]["id"] = json!("a1");
    d["steps"][2]["writer"] = json!("nobody");
    let e = scenario::load(&d).unwrap_err();
    assert!(e.iter().any(|x| x.contains("duplicate id \"a1\"")), "{e:?}");
    assert!(e.iter().any(|x| x.contains("unknown writer \"nobody\"")), "{e:?}");
}

#[test]
fn known_bug_passing_fails() {
    let mut d = base();
    d["known_bug"] = json!("self-test");
    fails_with(d, base_trace(), "known_bug (self-test): the scenario passed; remove \"known_bug\"");
}

#[test]
fn known_bug_failing_fails() {
    let mut d = base();
    d["known_bug"] = json!("self-test");
    d["steps"][0]["offset"] = json!(5);
    let r = run(&d, &base_trace());
    assert!(r.failures[0].starts_with("known_bug (self-test):") && r.failures.len() == 2, "{:?}", r.failures);
}

// ----- traces that break an expectation or a contract rule

#[test]
fn wrong_offset() {
    let mut d = base();
    d["steps"][0]["offset"] = json!(5);
    fails_with(d, base_trace(), "a1: offset 0 expected 5");
}

#[test]
fn wrong_outcome_accepted() {
    let mut d = base();
    d["steps"][0]["expect"] = json!({"sync_error": "WRITER_CLOSED"});
    fails_with(d, base_trace(), "a1: expected sync_error WRITER_CLOSED, but the submission was accepted");
}

#[test]
fn wrong_completion_code() {
    let mut t = base_trace();
    t["events"][6]["code"] = json!(-1005); // WRITER_CLOSED
    fails_with(base(), t, "a1: completed with WRITER_CLOSED, expected ok");
}

#[test]
fn wrong_read_back() {
    let mut d = base();
    d["expect"]["read_back"]["buckets"]["0"] = json!([[1, "x"], [2, "z"]]);
    fails_with(d, base_trace(), "read-back bucket 0:");
}

#[test]
fn read_back_duplicate() {
    let mut t = base_trace();
    t["read_back"]["scans"][0]["rows"] = json!([[1, "x"], [2, "y"], [2, "y"]]);
    fails_with(base(), t, "read-back bucket 0:");
}

#[test]
fn callback_twice() {
    let mut t = base_trace();
    let ev = t["events"].as_array_mut().unwrap();
    ev.insert(
        12,
        json!({"seq": 0, "ev": "callback_start", "id": "a1", "thread": "T2", "code": 0, "bucket": 0, "partition": null, "offset": 0}),
    );
    renumber(&mut t);
    fails_with(base(), t, "a1: callback ran 2 times, expected exactly once");
}

#[test]
fn callback_never_ran() {
    let mut t = base_trace();
    t["events"].as_array_mut().unwrap().drain(6..8);
    renumber(&mut t);
    fails_with(base(), t, "a1: callback ran 0 times");
}

#[test]
fn callback_returned_after_settle() {
    let mut t = base_trace();
    let ev = t["events"].as_array_mut().unwrap();
    let ret = ev.remove(9);
    ev.insert(11, ret); // a2 returns after the settled event
    renumber(&mut t);
    fails_with(base(), t, "a2: never completed within 10000 ms");
}

#[test]
fn callback_on_submitting_thread() {
    let mut t = base_trace();
    t["events"][6]["thread"] = json!("T1");
    fails_with(base(), t, "a1: callback ran on a submitting thread (C2)");
}

#[test]
fn fifo_callbacks_on_two_threads() {
    let mut t = base_trace();
    t["events"][8]["thread"] = json!("T3");
    fails_with(base(), t, "callbacks of fifo writers ran on 2 threads");
}

#[test]
fn per_bucket_order() {
    let mut t = base_trace();
    let ev = t["events"].as_array_mut().unwrap();
    let a1: Vec<Json> = ev.drain(6..8).collect();
    ev.splice(8..8, a1); // a2's callback now runs first
    renumber(&mut t);
    let r = run(&base(), &t);
    assert!(r.failures.iter().any(|f| f.contains("a1 was submitted before a2 but its callback ran after (C3)")), "{:?}", r.failures);
    assert!(r.failures.iter().any(|f| f.contains("callback of a2 (offset 1) ran before a1 (offset 0)")), "{:?}", r.failures);
}

/// Two writers send on their own: the checker holds each writer's records of a bucket to offset
/// order, never one writer's against another's (C3 is per writer).
#[test]
fn offsets_are_ordered_per_writer_only() {
    let mut d = base();
    d["writers"] = json!([{"name": "w", "kind": "append"}, {"name": "w2", "kind": "append"}]);
    d["steps"][0]["writer"] = json!("w");
    d["steps"][0]["offset"] = json!(1);
    d["steps"][1]["writer"] = json!("w2");
    d["steps"][1]["offset"] = json!(0);
    d["steps"][2]["writer"] = json!("w2");
    d["expect"]["read_back"]["buckets"]["0"] = json!([[2, "y"], [1, "x"]]);
    let mut t = base_trace();
    t["events"][6]["offset"] = json!(1); // a1 (w) runs first but landed second
    t["events"][8]["offset"] = json!(0);
    t["callback_errors"]["w2"] = json!(0);
    t["read_back"]["scans"][0]["rows"] = json!([[2, "y"], [1, "x"]]);
    let r = run(&d, &t);
    assert!(r.passed(), "{:?}", r.failures);
    // The same trace with both records from one writer breaks offset order.
    d["steps"][1]["writer"] = json!("w");
    d["steps"][2]["writer"] = json!("w");
    fails_with(d, t, "writer w bucket 0: callback of a1 (offset 1) ran before a2 (offset 0)");
}

#[test]
fn flush_watermark() {
    let mut t = base_trace();
    let ev = t["events"].as_array_mut().unwrap();
    let end = ev.remove(10);
    ev.insert(9, end); // flush returns before a2's callback returned
    renumber(&mut t);
    fails_with(base(), t, "steps[2]: returned ok, but a2 (accepted before it) had not completed and returned (C6)");
}

#[test]
fn flush_outcome_and_timing() {
    let mut d = base();
    d["steps"][2]["max_elapsed_ms"] = json!(0);
    let mut t = base_trace();
    t["events"][10]["code"] = json!(-1010); // TIMEOUT
    let r = run(&d, &t);
    assert!(r.failures.iter().any(|f| f.contains("steps[2]: expected ok, got TIMEOUT")), "{:?}", r.failures);
    assert!(r.failures.iter().any(|f| f.contains("steps[2]: took 1.0 ms, expected at most 0 ms")), "{:?}", r.failures);
}

#[test]
fn rejected_callback_not_destroyed() {
    let mut d = base();
    d["steps"][1]["expect"] = json!({"sync_error": "WRITER_CLOSED"});
    d["steps"][1].as_object_mut().unwrap().remove("offset");
    d["expect"]["read_back"]["buckets"]["0"] = json!([[1, "x"]]);
    let mut t = base_trace();
    let ev = t["events"].as_array_mut().unwrap();
    ev[4] =
        json!({"seq": 4, "ev": "submit_end", "id": "a2", "thread": "T1", "code": -1005, "elapsed_ms": 0.1, "callback_destroyed": false});
    ev.drain(8..10);
    t["read_back"]["scans"][0]["rows"] = json!([[1, "x"]]);
    renumber(&mut t);
    fails_with(d, t, "a2: rejected synchronously but its callback was not destroyed before the call returned");
}

#[test]
fn partition_must_be_null() {
    let mut t = base_trace();
    t["events"][6]["partition"] = json!("x");
    fails_with(base(), t, "a1: completion partition Some(\"x\") but the file says None");
}

/// `base()` on a table partitioned by `dt`: partition `a` exists, `b` is created on write; each
/// partition's bucket 0 starts at offset 0.
fn partitioned() -> Json {
    let mut d = base();
    d["table"]["columns"] = json!([{"name": "id", "type": "INT", "nullable": false}, {"name": "dt", "type": "STRING", "nullable": false}]);
    d["table"]["partition_keys"] = json!(["dt"]);
    d["table"]["partitions"] = json!(["a"]);
    d["steps"][0] = json!({"op": "append", "id": "a1", "row": [1, "a"], "partition": "a", "bucket": 0, "offset": 0, "expect": "ok"});
    d["steps"][1] = json!({"op": "append", "id": "a2", "row": [2, "b"], "partition": "b", "bucket": 0, "offset": 0, "expect": "ok"});
    d["expect"] = json!({"read_back": {"partitions": {"a": {"0": [[1, "a"]]}, "b": {"0": [[2, "b"]]}}}});
    d
}

fn partitioned_trace() -> Json {
    let mut t = base_trace();
    t["events"][6]["partition"] = json!("a");
    t["events"][8]["partition"] = json!("b");
    t["events"][8]["offset"] = json!(0);
    t["read_back"] =
        json!({"scans": [{"partition": "a", "bucket": 0, "rows": [[1, "a"]]}, {"partition": "b", "bucket": 0, "rows": [[2, "b"]]}]});
    t
}

#[test]
fn partitioned_passes_with_offsets_per_partition() {
    let r = run(&partitioned(), &partitioned_trace());
    assert!(r.passed(), "{:?}", r.failures);
}

#[test]
fn partitioned_completion_names_the_wrong_partition() {
    let mut t = partitioned_trace();
    t["events"][8]["partition"] = json!("a");
    fails_with(partitioned(), t, "a2: completion partition Some(\"a\") but the file says Some(\"b\")");
}

#[test]
fn partitioned_file_states_a_partition_the_core_does_not_name() {
    let mut d = partitioned();
    d["steps"][1]["partition"] = json!("c");
    fails_with(d, partitioned_trace(), "the file says partition \"c\" but the core names the row's partition \"b\"");
    let mut d = partitioned();
    d["steps"][1].as_object_mut().unwrap().remove("partition");
    fails_with(d, partitioned_trace(), "a partitioned table's op states its partition");
}

#[test]
fn partitioned_read_back_is_per_partition() {
    let mut t = partitioned_trace();
    t["read_back"]["scans"][1]["rows"] = json!([[2, "b"], [2, "b"]]);
    fails_with(partitioned(), t, "read-back partition b bucket 0");
    let mut d = partitioned();
    d["expect"] = json!({"read_back": {"buckets": {"0": []}}});
    fails_with(d, partitioned_trace(), "partitions for a partitioned one");
}

#[test]
fn partition_ddl_outcome_is_checked() {
    let mut d = partitioned();
    d["steps"].as_array_mut().unwrap().push(json!({"op": "drop_partition", "partition": "a", "expect": "ok"}));
    let mut t = partitioned_trace();
    let ev = t["events"].as_array_mut().unwrap();
    ev.insert(11, json!({"seq": 0, "ev": "call_begin", "step": "steps[3]", "call": "drop_partition", "thread": "T1"}));
    ev.insert(12, json!({"seq": 0, "ev": "call_end", "step": "steps[3]", "code": 36, "elapsed_ms": 1.0, "results_done": []}));
    renumber(&mut t);
    fails_with(d, t, "steps[3]: expected ok, got PARTITION_NOT_EXISTS");
    let mut d = base();
    d["steps"].as_array_mut().unwrap().push(json!({"op": "create_partition", "partition": "a"}));
    fails_with(d, base_trace(), "partition DDL on a table without partition keys");
}

#[test]
fn callback_errors_counted() {
    let mut t = base_trace();
    t["callback_errors"]["w"] = json!(1);
    fails_with(base(), t, "writer w: Some(1) callback errors reported");
}

#[test]
fn runner_error_fails() {
    let mut t = base_trace();
    t["events"].as_array_mut().unwrap().push(json!({"seq": 13, "ev": "runner_error", "message": "boom"}));
    fails_with(base(), t, "runner: boom");
}

#[test]
fn events_out_of_order() {
    let mut t = base_trace();
    t["events"][3]["seq"] = json!(42);
    fails_with(base(), t, "trace: event 3 has seq 42");
}

#[test]
fn unfinished_trace() {
    let mut t = base_trace();
    t["events"].as_array_mut().unwrap().truncate(5);
    let r = run(&base(), &t);
    assert!(r.failures.iter().any(|f| f.contains("no settled event")), "{:?}", r.failures);
    assert!(r.failures.iter().any(|f| f.contains("steps[2]: never ran")), "{:?}", r.failures);
}

#[test]
fn faults_refused_on_a_cluster() {
    let mut d = base();
    d["faults"] = json!([{"bucket": 0, "fault": "delay", "ms": 10, "times": 1}]);
    let mut t = base_trace();
    t["target"] = json!("cluster");
    fails_with(d, t, "which a real cluster cannot do");
}

#[test]
fn await_and_assert_states() {
    let mut d = base();
    let steps = d["steps"].as_array_mut().unwrap();
    steps.push(json!({"op": "await_callback", "target": "a1", "state": "returned"}));
    steps.push(json!({"op": "assert_callback", "target": "a2", "state": "not_started"}));
    let mut t = base_trace();
    let ev = t["events"].as_array_mut().unwrap();
    ev.insert(11, json!({"seq": 0, "ev": "await", "step": "steps[3]", "target": "a1", "state": "running"}));
    ev.insert(12, json!({"seq": 0, "ev": "observe", "step": "steps[4]", "target": "a2", "state": "returned"}));
    renumber(&mut t);
    let r = run(&d, &t);
    assert!(
        r.failures.iter().any(|f| f.contains("steps[3]: the callback of a1 did not reach returned (it is running)")),
        "{:?}",
        r.failures
    );
    assert!(r.failures.iter().any(|f| f.contains("steps[4]: the callback of a2 is not not_started (it is returned)")), "{:?}", r.failures);
}

/// `base()` with a column added after a1: a2 is written by a writer created after the change.
fn schema_change() -> (Json, Json) {
    let mut doc = base();
    doc["writers"] = json!([{"name": "w", "kind": "append"}, {"name": "v", "kind": "append", "deferred": true}]);
    doc["steps"] = json!([
        {"op": "append", "id": "a1", "writer": "w", "row": [1, "x"], "bucket": 0, "offset": 0, "expect": "ok"},
        {"op": "alter_table", "add_columns": [{"name": "n", "type": "BIGINT"}], "expect": "ok"},
        {"op": "create_writer", "writer": "v"},
        {"op": "append", "id": "a2", "writer": "v", "row": [2, "y", 7], "bucket": 0, "offset": 1, "expect": "ok"},
        {"op": "flush", "writer": "v", "expect": "ok"}
    ]);
    doc["expect"] = json!({"read_back": {"buckets": {"0": [[1, "x", null], [2, "y", 7]]}}});
    let mut t = base_trace();
    let ev = t["events"].as_array_mut().unwrap();
    for e in ev.iter_mut().filter(|e| e["step"] == "steps[2]") {
        e["step"] = json!("steps[4]");
    }
    ev.insert(3, json!({"ev": "call_begin", "step": "steps[1]", "call": "alter_table", "thread": "T1"}));
    ev.insert(4, json!({"ev": "call_end", "step": "steps[1]", "code": 0, "elapsed_ms": 1.0, "results_done": []}));
    ev.insert(5, json!({"ev": "call_begin", "step": "steps[2]", "call": "create_writer", "thread": "T1"}));
    ev.insert(6, json!({"ev": "call_end", "step": "steps[2]", "code": 0, "elapsed_ms": 1.0, "results_done": []}));
    t["callback_errors"] = json!({"w": 0, "v": 0});
    t["read_back"] = json!({"scans": [{"partition": null, "bucket": 0, "rows": [[1, "x", null], [2, "y", 7]]}]});
    renumber(&mut t);
    (doc, t)
}

#[test]
fn schema_change_passes() {
    let (doc, t) = schema_change();
    let r = run(&doc, &t);
    assert!(r.passed(), "{}", r.failures.join("\n"));
}

#[test]
fn schema_change_rows_have_their_writers_width() {
    let (mut doc, t) = schema_change();
    doc["steps"][0]["row"] = json!([1, "x", 5]);
    fails_with(doc, t, "(a1): 3 values for 2 columns");
}

#[test]
fn schema_change_deferred_writer_before_its_creation() {
    let (mut doc, t) = schema_change();
    doc["steps"].as_array_mut().unwrap().swap(2, 3);
    fails_with(doc, t, "writer v: an op before its create_writer step");
}

#[test]
fn schema_change_read_back_in_the_new_width() {
    let (doc, mut t) = schema_change();
    t["read_back"] = json!({"scans": [{"partition": null, "bucket": 0, "rows": [[1, "x"], [2, "y", 7]]}]});
    fails_with(doc, t, "read-back bucket 0");
}

#[test]
fn schema_change_call_must_end() {
    let (doc, mut t) = schema_change();
    t["events"].as_array_mut().unwrap().retain(|e| !(e["ev"] == "call_end" && e["step"] == "steps[1]"));
    renumber(&mut t);
    fails_with(doc, t, "steps[1]: the call never returned");
}

// The plan: what the runners execute, resolved once.

fn plan_json(doc: &Json) -> Json {
    let plan = fluss_writer_golden::plan::load(doc).unwrap_or_else(|e| panic!("no plan: {e:?}"));
    serde_json::to_value(plan).unwrap()
}

#[test]
fn plan_resolves_writers_values_paths_and_read_back() {
    let mut d = base();
    d["steps"][0]["row"] = json!([1, {"repeat": "ab", "count": 3}]);
    d["steps"][0]["callback"] = json!({"sleep_ms": 5});
    d["expect"]["read_back"]["buckets"]["0"] = json!([[1, "ababab"], [2, "y"]]);
    let p = plan_json(&d);
    let s = &p["steps"];
    assert_eq!(s[0]["writer"], "w", "the one writer is every op's");
    assert_eq!(s[0]["rows"], json!([[1, "ababab"]]), "repeat is expanded");
    assert_eq!(s[0]["callback"], json!({"sleep_ms": 5, "gate": null, "raise": false, "call": null}));
    assert_eq!((s[1]["path"].as_str(), s[2]["path"].as_str(), s[2]["writer"].as_str()), (Some("steps[1]"), Some("steps[2]"), Some("w")));
    assert_eq!(s[2]["op"], "flush");
    assert_eq!(p["read_back"]["scans"], json!([{"partition": null, "bucket": 0}]));
    assert_eq!(p["cluster_ok"], true);
}

#[test]
fn plan_resolves_codes_partitions_and_threads() {
    let mut d = partitioned();
    d["faults"] = json!([{"partition": "a", "bucket": 0, "fault": "error", "code": "NOT_LEADER_OR_FOLLOWER", "times": 1}]);
    d["steps"][2] = json!({"op": "parallel", "threads": {"t2": [{"op": "flush"}], "t1": [{"op": "create_partition", "partition": "c"}]}});
    let p = plan_json(&d);
    assert_eq!(p["cluster_ok"], false, "faults need the embedded engine");
    let code = fluss_writer_golden::scenario::code_of("NOT_LEADER_OR_FOLLOWER").unwrap();
    assert_eq!((p["faults"][0]["code"].as_i64(), p["faults"][0]["partition"].as_str()), (Some(code.into()), Some("a")));
    assert_eq!(p["partitions"], json!([{"dt": "a"}]));
    let threads = &p["steps"][2]["threads"];
    assert_eq!((threads[0]["name"].as_str(), threads[1]["name"].as_str()), (Some("t1"), Some("t2")), "threads in path order");
    assert_eq!(threads[0]["steps"][0]["spec"], json!({"dt": "c"}));
    assert_eq!(threads[0]["steps"][0]["path"], "steps[2].t1[0]");
    let scans: Vec<(String, i64)> = p["read_back"]["scans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["partition"].as_str().unwrap().to_string(), s["bucket"].as_i64().unwrap()))
        .collect();
    assert_eq!(scans, [("a".to_string(), 0), ("b".to_string(), 0)]);
}

#[test]
fn plan_gives_each_writer_the_width_it_was_created_with() {
    let (doc, _) = schema_change();
    let p = plan_json(&doc);
    let s = &p["steps"];
    assert_eq!(s[0]["columns"].as_array().map(Vec::len), Some(2), "w was created before the column was added");
    assert_eq!(s[1]["columns"], json!([{"name": "n", "type": "BIGINT", "nullable": true}]));
    assert_eq!(s[2]["writer_spec"]["name"], "v");
    assert_eq!((s[3]["columns"].as_array().map(Vec::len), &s[3]["rows"]), (Some(3), &json!([[2, "y", 7]])));
    assert_eq!(p["writers"][1]["deferred"], true);
}

#[test]
fn plan_of_a_pk_table_looks_up_the_expected_keys() {
    let mut d = base();
    d["table"] = json!({"kind": "pk", "bucket_count": 1, "primary_key": ["id"],
                        "columns": [{"name": "id", "type": "INT", "nullable": false}, {"name": "v", "type": "DOUBLE"}]});
    d["writers"] = json!([{"name": "u", "kind": "upsert"}]);
    d["steps"] = json!([{"op": "upsert", "id": "u1", "row": [1, 2], "bucket": 0, "expect": "ok"},
                        {"op": "delete", "id": "d1", "key": [1], "bucket": 0, "expect": "ok"}]);
    d["expect"] = json!({"read_back": {"lookups": [{"key": [1], "row": null}]}});
    let p = plan_json(&d);
    assert_eq!(p["steps"][0]["rows"], json!([[1, 2.0]]), "a DOUBLE value is a float");
    assert_eq!((p["steps"][1]["rows"].clone(), p["steps"][1]["columns"][0]["name"].clone()), (json!([[1]]), json!("id")));
    assert_eq!((p["read_back"]["lookups"].clone(), p["read_back"]["scans"].clone()), (json!([[1]]), json!([])));
}

/// A partitioned table rescaled from 1 to 3 buckets between its partition `a` and partition `b`
/// (created on write): the stated buckets follow each partition's own count.
fn rescaled() -> Json {
    json!({
        "description": "checker self-test: per-partition bucket counts",
        "requires": ["alter_bucket_count"],
        "table": {"kind": "log", "bucket_count": 1,
                  "columns": [{"name": "id", "type": "INT", "nullable": false}, {"name": "dt", "type": "STRING", "nullable": false}],
                  "bucket_key": ["id"], "partition_keys": ["dt"], "partitions": ["a"]},
        "writers": [{"name": "w", "kind": "append"}],
        "steps": [
            {"op": "alter_bucket_count", "bucket_count": 3, "expect": "ok"},
            {"op": "append", "id": "a1", "row": [9, "a"], "partition": "a", "bucket": 0, "expect": "ok"},
            {"op": "append", "id": "b1", "row": [9, "b"], "partition": "b", "bucket": 2, "expect": "ok"},
            {"op": "flush", "expect": "ok"}
        ],
        "expect": {"read_back": {"partitions": {"a": {"0": [[9, "a"]]}, "b": {"0": [], "1": [], "2": [[9, "b"]]}}}}
    })
}

#[test]
fn per_partition_bucket_counts_decide_stated_buckets_and_scans() {
    let p = fluss_writer_golden::plan::load(&rescaled()).expect("valid");
    assert_eq!(p.requires, ["alter_bucket_count"]);
    assert_eq!((p.steps[0].op.as_str(), p.steps[0].bucket_count), ("alter_bucket_count", 3));
    let scans: Vec<(Option<String>, i32)> = p.read_back.scans.iter().map(|s| (s.partition.clone(), s.bucket)).collect();
    assert_eq!(scans, [(Some("a".into()), 0), (Some("b".into()), 0), (Some("b".into()), 1), (Some("b".into()), 2)]);
    // By the table's count both rows are in bucket 0: a file saying so for `b` fails.
    let mut d = rescaled();
    d["steps"][2]["bucket"] = json!(0);
    let errs = scenario::load(&d).unwrap_err().join("; ");
    assert!(errs.contains("core's bucketing gives 2 (3 buckets"), "{errs}");
    // alter_bucket_count must be listed in requires, and only known capabilities may be.
    let mut d = rescaled();
    d["requires"] = json!([]);
    assert!(scenario::load(&d).unwrap_err().join("; ").contains("lists it in \"requires\""));
    let mut d = rescaled();
    d["requires"] = json!(["alter_bucket_count", "time_travel"]);
    assert!(scenario::load(&d).is_err());
}

/// A server without a required capability runs nothing: a pass on a cluster, never on the
/// embedded engine, and only for a capability the file requires.
#[test]
fn unsupported_requirements() {
    let doc = rescaled();
    let trace = |target: &str, cap: &str| {
        json!({"runner": "selftest", "target": target, "events": [
            {"seq": 0, "ev": "unsupported", "capability": cap}, {"seq": 1, "ev": "teardown"}]})
    };
    let r = run(&doc, &trace("cluster", "alter_bucket_count"));
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    fails_with(doc.clone(), trace("embedded", "alter_bucket_count"), "the embedded engine must support");
    fails_with(base(), trace("cluster", "alter_bucket_count"), "does not require");
    let mut ran = trace("cluster", "alter_bucket_count");
    ran["events"].as_array_mut().unwrap().insert(1, json!({"seq": 1, "ev": "settled"}));
    renumber(&mut ran);
    fails_with(doc, ran, "steps ran although");
}

/// `expect.stats`: a `stats` step records the writer's stats; on the embedded engine the last
/// value must reach `min` and `rises_and_falls` needs a value above 0 followed by a lower one;
/// a real server decides its own pressure, so on a cluster only the recording is checked; a
/// field that is not a WriterStats field fails the file.
#[test]
fn stats_expectations() {
    let mut doc = base();
    doc["steps"].as_array_mut().unwrap().push(json!({"op": "stats"}));
    doc["expect"]["stats"] = json!({"w": {"kv_throttled_sends": {"min": 1}, "kv_pressure_permille": {"rises_and_falls": true}}});
    let with = |samples: &[(u64, u64)], target: &str| {
        let mut t = base_trace();
        let events = t["events"].as_array_mut().unwrap();
        for (i, (sends, permille)) in samples.iter().enumerate() {
            events.insert(
                11,
                json!({"seq": 0, "ev": "stats", "step": format!("steps[{}]", 3 + i), "writer": "w",
                       "stats": {"kv_throttled_sends": sends, "kv_pressure_permille": permille}}),
            );
        }
        t["target"] = json!(target);
        renumber(&mut t);
        t
    };
    // Inserted at one index: the last sample comes first in the trace.
    assert!(run(&doc, &with(&[(2, 100), (1, 500), (0, 0)], "embedded")).passed());
    fails_with(doc.clone(), with(&[(0, 100), (0, 500), (0, 0)], "embedded"), "kv_throttled_sends: 0 at the last stats step");
    fails_with(doc.clone(), with(&[(3, 500), (1, 100), (0, 0)], "embedded"), "kv_pressure_permille: never rose above 0 and fell");
    fails_with(doc.clone(), base_trace(), "no stats step of writer w");
    assert!(run(&doc, &with(&[(0, 0)], "cluster")).passed(), "a cluster decides its own pressure");
    let mut bad = doc.clone();
    bad["expect"]["stats"] = json!({"w": {"no_such_field": {"min": 1}}});
    fails_with(bad, with(&[(1, 1)], "embedded"), "not a WriterStats field");
}
