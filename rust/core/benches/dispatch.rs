//! Callbacks per second through the whole completion path on one FIFO worker: a batch job
//! builds one `WriteCompletion`, sets each record's offset, calls each inline callback under
//! `catch_unwind`, then retires the batch's slots. Jobs are built and queued on this thread (as
//! the sender would), so the figure includes building jobs but excludes the network.
//! Run: `cargo bench -p fluss-writer --bench dispatch [-- JOBS PER_JOB ROUNDS]`.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Instant;

use fluss_writer::dispatch::{Executor, Scope, ScopeOptions, SystemClock};

static SINK: AtomicU64 = AtomicU64::new(0);

fn main() {
    let args: Vec<String> = std::env::args().filter(|a| !a.starts_with("--")).collect();
    let jobs: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(4000);
    let per_job: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(256);
    let rounds: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(7);
    let scope = Scope::new(
        ScopeOptions {
            max_pending_callbacks: (jobs * per_job) as u64 + 1,
            error_handler: None,
            // As writers have it by default (client.writer.slow-callback-threshold = 1s).
            slow_callback_threshold: Some(std::time::Duration::from_secs(1)),
        },
        Executor::fifo("bench", None),
        Arc::new(SystemClock::new()),
    );
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        fluss_writer::write::batch_bench::bench_dispatch_batches(&scope, jobs, per_job, &SINK);
        rates.push((jobs * per_job) as f64 / start.elapsed().as_secs_f64());
    }
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let med = rates[rates.len() / 2];
    println!(
        "batch jobs of {per_job} inline callbacks through one FIFO worker: median {:.1} M callbacks/s ({:.1} ns/callback) over {rounds} rounds of {} callbacks",
        med / 1e6,
        1e9 / med,
        jobs * per_job
    );
}
