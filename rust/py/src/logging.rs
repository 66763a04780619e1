//! Rust `log` records to Python's `logging` (C10), without ever blocking the thread that logs.
//!
//! A record is formatted and queued (bounded; overflow is counted and reported); one
//! `fluss-writer-log` thread, holding one Python thread state for its life, drains the queue
//! into `logging.getLogger(<target>)`, where `fluss_writer::write::sender` becomes
//! `fluss_writer.write.sender` and `fluss_writer_dispatch::job` becomes
//! `fluss_writer.dispatch.job`. Logging straight from an I/O thread would make it wait for the
//! GIL (up to a switch interval) and could deadlock with a thread that holds the GIL while
//! waiting for a lock that the logging thread holds (Pulsar #11882). The effective level of the
//! `fluss_writer` logger is re-read about once a second and applied as `log::max_level`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use fluss_writer::WorkerHooks;
use log::{Level, LevelFilter, Log, Metadata, Record};
use pyo3::prelude::*;

use crate::entry::entry_points;

use crate::gil::{Inside, PyWorkerHooks};

const CAP: usize = 10_000;

struct Queue {
    q: Mutex<VecDeque<(Level, String, String)>>,
    cv: Condvar,
    dropped: AtomicU64,
}

static QUEUE: Queue = Queue { q: Mutex::new(VecDeque::new()), cv: Condvar::new(), dropped: AtomicU64::new(0) };

struct PyLogger;

impl Log for PyLogger {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.level() <= log::max_level()
    }

    fn log(&self, r: &Record<'_>) {
        if !self.enabled(r.metadata()) {
            return;
        }
        let mut q = QUEUE.q.lock().unwrap_or_else(|p| p.into_inner());
        if q.len() >= CAP {
            QUEUE.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        q.push_back((r.level(), r.target().to_string(), r.args().to_string()));
        QUEUE.cv.notify_one();
    }

    fn flush(&self) {}
}

fn logger_name(target: &str) -> String {
    let t = target.replace("::", ".");
    if let Some(rest) = t.strip_prefix("fluss_writer_dispatch") {
        format!("fluss_writer.dispatch{rest}")
    } else if let Some(rest) = t.strip_prefix("_native") {
        format!("fluss_writer.python{rest}")
    } else {
        t
    }
}

fn py_level(l: Level) -> i32 {
    match l {
        Level::Error => 40,
        Level::Warn => 30,
        Level::Info => 20,
        Level::Debug => 10,
        Level::Trace => 5,
    }
}

fn refresh_level(py: Python<'_>) {
    let lvl: i32 = py
        .import("logging")
        .and_then(|m| m.call_method1("getLogger", ("fluss_writer",)))
        .and_then(|l| l.call_method0("getEffectiveLevel"))
        .and_then(|v| v.extract())
        .unwrap_or(30);
    log::set_max_level(match lvl {
        i32::MIN..=5 => LevelFilter::Trace,
        6..=10 => LevelFilter::Debug,
        11..=20 => LevelFilter::Info,
        21..=30 => LevelFilter::Warn,
        31..=40 => LevelFilter::Error,
        _ => LevelFilter::Off,
    });
}

/// Emit every queued record now (the caller holds the GIL).
pub fn drain(py: Python<'_>) {
    let records: Vec<_> = QUEUE.q.lock().unwrap_or_else(|p| p.into_inner()).drain(..).collect();
    let Ok(logging) = py.import("logging") else { return };
    for (level, target, msg) in records {
        if let Ok(l) = logging.call_method1("getLogger", (logger_name(&target),)) {
            let _ = l.call_method1("log", (py_level(level), msg));
        }
    }
    let dropped = QUEUE.dropped.swap(0, Ordering::Relaxed);
    if dropped > 0 {
        if let Ok(l) = logging.call_method1("getLogger", ("fluss_writer",)) {
            let _ = l.call_method1("warning", (format!("{dropped} Rust log records were dropped (queue full)"),));
        }
    }
}

entry_points! {
#[pyfunction]
/// Emit queued Rust log records now and re-read the `fluss_writer` logger level.
pub fn _flush_logs(py: Python<'_>) {
    refresh_level(py);
    drain(py);
}
}

/// Install the logger and start the log thread (once, at import).
pub fn init(py: Python<'_>) {
    if log::set_logger(&PyLogger).is_err() {
        return;
    }
    refresh_level(py);
    let _ = std::thread::Builder::new().name("fluss-writer-log".into()).spawn(|| {
        let hooks = PyWorkerHooks::default();
        hooks.on_thread_start();
        loop {
            {
                let q = QUEUE.q.lock().unwrap_or_else(|p| p.into_inner());
                let _ = QUEUE.cv.wait_timeout_while(q, Duration::from_secs(1), |q| q.is_empty());
            }
            // Past interpreter exit no thread of ours takes the GIL (crate::gil).
            let Some(_pass) = Inside::enter() else { break };
            let _ = Python::try_attach(|py| {
                refresh_level(py);
                drain(py);
            });
        }
    });
}
