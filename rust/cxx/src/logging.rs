//! The library's `log` records and statistics for C++: to the application's sink (`fluss_writer::SetLogCallback`)
//! or, by default, one line each on stderr; `fluss_writer::SetLogLevel` sets the level at run time
//! (default: warnings and errors). Installed when the first connection is created or either
//! function is called.

use std::sync::{Arc, Once, RwLock};

use cxx::UniquePtr;
use log::{Level, LevelFilter, Log, Metadata, Record};

use crate::bridge::ffi::{self, FfiStatus, LogSinkHolder, StatsSinkHolder};
use crate::status::fill;

static SINK: RwLock<Option<Arc<UniquePtr<LogSinkHolder>>>> = RwLock::new(None);

struct CxxLogger;

impl Log for CxxLogger {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.level() <= log::max_level()
    }

    fn log(&self, r: &Record<'_>) {
        if !self.enabled(r.metadata()) {
            return;
        }
        let message = r.args().to_string();
        // Cloned out of the lock: a sink that logs (or replaces itself) does not deadlock.
        let sink = SINK.read().unwrap_or_else(|p| p.into_inner()).clone();
        match sink.as_deref().and_then(|s| s.as_ref()) {
            Some(s) => ffi::call_log_sink(s, level_number(r.level()), r.target(), &message),
            None => eprintln!("fluss_writer {} [{}] {message}", r.level(), r.target()),
        }
    }

    fn flush(&self) {}
}

/// The numbers of the C++ `LogLevel` enum.
fn level_number(l: Level) -> i32 {
    match l {
        Level::Error => 1,
        Level::Warn => 2,
        Level::Info => 3,
        Level::Debug => 4,
        Level::Trace => 5,
    }
}

/// Installs the logger once (default level: warnings).
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Another logger set by the application's own Rust code wins; then ours stays unused.
        if log::set_logger(&CxxLogger).is_ok() {
            log::set_max_level(LevelFilter::Warn);
        }
    });
}

/// `SetLogCallback`: a null holder restores the stderr default.
pub(crate) fn set_log_sink(sink: UniquePtr<LogSinkHolder>) {
    install();
    *SINK.write().unwrap_or_else(|p| p.into_inner()) = if sink.is_null() { None } else { Some(Arc::new(sink)) };
}

/// `SetLogLevel`: 0 off, 1 error .. 5 trace (out of range: clamped).
pub(crate) fn set_log_level(level: i32) {
    install();
    log::set_max_level(match level {
        i32::MIN..=0 => LevelFilter::Off,
        1 => LevelFilter::Error,
        2 => LevelFilter::Warn,
        3 => LevelFilter::Info,
        4 => LevelFilter::Debug,
        _ => LevelFilter::Trace,
    });
}

/// A running `StatisticsReporter` (it stops when dropped; `None` only for the value a failed
/// start returns).
pub struct RStatsReporter {
    _reporter: Option<fluss_writer::metrics::StatisticsReporter>,
}

pub(crate) fn stats_reporter_start(interval_ms: i64, sink: UniquePtr<StatsSinkHolder>, st: &mut FfiStatus) -> Box<RStatsReporter> {
    fill(
        st,
        || Box::new(RStatsReporter { _reporter: None }),
        || {
            let interval = std::time::Duration::from_millis(interval_ms.max(1) as u64);
            let sink = Arc::new(sink);
            let r = fluss_writer::metrics::StatisticsReporter::start(interval, move |json| {
                if let Some(s) = sink.as_ref().as_ref() {
                    ffi::call_stats_sink(s, json);
                }
            })?;
            Ok(Box::new(RStatsReporter { _reporter: Some(r) }))
        },
    )
}

#[allow(clippy::boxed_local)] // C++ owns the reporter as a rust::Box and hands it over
pub(crate) fn stats_reporter_destroy(r: Box<RStatsReporter>) {
    crate::status::guard_or(|| (), move || drop(r))
}
