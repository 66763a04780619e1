//! The trace a runner writes: what happened, in order, with no judgement. `seq` is one global
//! sequence number per scenario, taken at the moment of the event (runners append events under
//! one lock, so `seq` is also the position in `events`). Threads are opaque strings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct Trace {
    /// `rust`, `python` or `cpp`.
    pub runner: String,
    /// `embedded` or `cluster`.
    pub target: String,
    pub events: Vec<Entry>,
    /// Per writer: the callback errors its error handler counted (after settling).
    #[serde(default)]
    pub callback_errors: BTreeMap<String, u64>,
    /// Read back after settling (what the plan's `read_back` names).
    #[serde(default)]
    pub read_back: Option<ReadBack>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Entry {
    pub seq: u64,
    #[serde(flatten)]
    pub ev: Event,
}

/// What a completion carried (`code` 0 = success; `partition` is the partition's name, null for a
/// table without partitions).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Completion {
    pub code: i32,
    pub bucket: i32,
    pub partition: Option<String>,
    pub offset: i64,
    #[serde(default)]
    pub bucket_results: Vec<BucketResult>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BucketResult {
    #[serde(default)]
    pub partition: Option<String>,
    pub bucket: i32,
    pub rows: usize,
    /// 0 = this bucket succeeded.
    pub code: i32,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub enum Event {
    /// A submitting thread (`main`, or a `parallel` thread's name) starts.
    Thread {
        thread: String,
        name: String,
    },
    /// A write op's call begins / returned (`code` 0 = accepted, else the synchronous error;
    /// `callback_destroyed`: for a rejected callback op, whether its callable was destroyed before
    /// the call returned, where the language can observe it).
    SubmitBegin {
        id: String,
        thread: String,
    },
    SubmitEnd {
        id: String,
        thread: String,
        code: i32,
        elapsed_ms: f64,
        callback_destroyed: Option<bool>,
    },
    /// `add_callback` registered callback `id` on the result of op `target`.
    AddCallback {
        id: String,
        target: String,
        thread: String,
    },
    CallbackStart {
        id: String,
        thread: String,
        #[serde(flatten)]
        completion: Completion,
    },
    CallbackReturn {
        id: String,
        thread: String,
    },
    /// flush / close / wait / create_partition / drop_partition (`call`) of the step at `step`
    /// (see `scenario::step_path`).
    CallBegin {
        step: String,
        call: String,
        thread: String,
    },
    /// `results_done`: for flush/close, the notify=result ops of the writer done when it returned.
    CallEnd {
        step: String,
        code: i32,
        elapsed_ms: f64,
        #[serde(default)]
        results_done: Vec<String>,
    },
    /// await_callback ended; `state` is the target's callback state then.
    Await {
        step: String,
        target: String,
        state: String,
    },
    /// assert_callback: the target's callback state at that moment.
    Observe {
        step: String,
        target: String,
        state: String,
    },
    /// The runner stopped waiting for outstanding completions after the last step.
    /// A `stats` step: the writer's `WriterStats` fields by name.
    Stats {
        step: String,
        writer: String,
        stats: BTreeMap<String, u64>,
    },
    Settled {},
    /// A notify=result op's `WriteResult` after settling (`completion` null = not done).
    Result {
        id: String,
        completion: Option<Completion>,
    },
    /// The server lacks `capability`, which the scenario `requires` (the core's
    /// `Admin::server_supports` said so): the runner ran nothing of it.
    Unsupported {
        capability: String,
    },
    /// Something the runner could not do (it stops running steps).
    RunnerError {
        message: String,
    },
    /// Writers and connection closed.
    Teardown {},
}

/// What was read back after settling, as the plan asked: each scanned bucket's rows, each looked
/// up key's row (values only).
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct ReadBack {
    #[serde(default)]
    pub scans: Vec<Scan>,
    #[serde(default)]
    pub lookups: Vec<Lookup>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Scan {
    pub partition: Option<String>,
    pub bucket: i32,
    pub rows: Vec<Vec<Json>>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Lookup {
    pub key: Vec<Json>,
    pub row: Option<Vec<Json>>,
}
