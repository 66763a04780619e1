//! Executors: where jobs run.
//!
//! * [`Executor::fifo`]: one worker thread, jobs in hand-off order, one at a time (C2, C3: the
//!   default, one per connection).
//! * [`Executor::sharded`]: `n` such workers; a job goes to worker `shard_key % n`, so jobs with
//!   the same key (the same bucket) keep their order while different keys run in parallel (C9).
//! * [`Executor::user`]: jobs are handed to a [`UserExecutor`], which calls [`Job::run`] on a
//!   thread of its choosing; only the hand-off order is promised.
//!
//! # Worker algorithm
//!
//! Each worker owns a queue: `Mutex<VecDeque<Job>>` plus a condition variable. `submit` locks,
//! pushes, and notifies only if the worker is asleep. The worker takes a *group* under one lock
//! (every queued job, at most [`GROUP_CAP`]; the whole queue is swapped out when it fits, so the
//! lock is held for O(1)), then runs it outside the lock inside
//! [`WorkerHooks::around_group`] (the Python binding takes the GIL there: once per group, not once
//! per job or callback, C10). The cap keeps one long group from holding the GIL forever.
//! A panicking hook is caught; jobs it did not run are dropped, which retires and reports them.
//!
//! # Shutdown
//!
//! [`Executor::shutdown`] (and dropping the last handle) marks every queue as stopping: `submit`
//! then drops new jobs (retiring and reporting them), and each worker exits once its queue is
//! empty. `shutdown` waits for the workers until its deadline and joins them. A worker never
//! joins itself: when the last handle is dropped on a worker thread (a job holding the last
//! reference finishes there), that worker is detached and exits after draining.

use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64 as StdAtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::budget::Deadline;
use crate::clock::{Clock, SystemClock};
use crate::context::{set_worker_of, worker_of};
use crate::job::{panic_message, Job};
use crate::loom::sync::{Condvar, Mutex};
use crate::loom::thread::{Builder, JoinHandle};
use crate::loom::{lock, wait};
use crate::stats::{ExecCounters, ExecutorStats};

/// Most jobs a worker runs in one group (one `around_group` call).
pub const GROUP_CAP: usize = 1024;

/// An executor supplied by the application: it receives one job per completed batch and must
/// eventually call [`Job::run`] on it (or drop it, which retires its tickets and reports an error).
pub trait UserExecutor: Send + Sync + 'static {
    /// Takes one job. Only the order of these calls is promised.
    fn execute(&self, job: Job);
}

/// Hooks around the life of a worker thread, for bindings.
pub trait WorkerHooks: Send + Sync + 'static {
    /// Called once per group of queued jobs; must call `run` exactly once (jobs it does not run
    /// are dropped: retired and reported).
    fn around_group(&self, run: &mut dyn FnMut()) {
        run()
    }
    /// Called on the worker thread when it starts.
    fn on_thread_start(&self) {}
    /// Called on the worker thread just before it exits.
    fn on_thread_stop(&self) {}
}

// ===== public handle =====

/// Where a scope's jobs run. Cheap to clone; the workers stop (after draining) when the last
/// handle is dropped.
#[derive(Clone)]
pub struct Executor {
    inner: Arc<ExecInner>,
}

struct ExecInner {
    id: u64,
    name: String,
    kind: Kind,
    counters: Arc<ExecCounters>,
}

enum Kind {
    Workers {
        shards: Vec<Arc<Shard>>,
        threads: Mutex<Vec<JoinHandle<()>>>,
    },
    User(Arc<dyn UserExecutor>),
}

struct Shard {
    q: Mutex<ShardQueue>,
    /// The worker sleeps here.
    work: Condvar,
    /// `shutdown` waits here for the worker to exit.
    done: Condvar,
}

struct ShardQueue {
    jobs: VecDeque<Job>,
    stopping: bool,
    sleeping: bool,
    exited: bool,
}

static NEXT_ID: StdAtomicU64 = StdAtomicU64::new(1);

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.inner.kind {
            Kind::Workers { shards, .. } => format!("workers({})", shards.len()),
            Kind::User(_) => "user".to_string(),
        };
        f.debug_struct("Executor")
            .field("name", &self.inner.name)
            .field("kind", &kind)
            .finish()
    }
}

impl Executor {
    /// One FIFO worker thread named `name`.
    pub fn fifo(name: &str, hooks: Option<Arc<dyn WorkerHooks>>) -> Executor {
        Self::workers(name, 1, hooks)
    }

    /// `n` FIFO worker threads (at least one); a job runs on worker `shard_key % n`.
    pub fn sharded(name: &str, n: usize, hooks: Option<Arc<dyn WorkerHooks>>) -> Executor {
        Self::workers(name, n.max(1), hooks)
    }

    /// Jobs are handed to `e`.
    pub fn user(e: Arc<dyn UserExecutor>) -> Executor {
        Executor {
            inner: Arc::new(ExecInner {
                id: NEXT_ID.fetch_add(1, Relaxed),
                name: "user".to_string(),
                kind: Kind::User(e),
                counters: Arc::new(ExecCounters::new()),
            }),
        }
    }

    fn workers(name: &str, n: usize, hooks: Option<Arc<dyn WorkerHooks>>) -> Executor {
        let id = NEXT_ID.fetch_add(1, Relaxed);
        let counters = Arc::new(ExecCounters::new());
        let shards: Vec<Arc<Shard>> = (0..n)
            .map(|_| {
                Arc::new(Shard {
                    q: Mutex::new(ShardQueue {
                        jobs: VecDeque::new(),
                        stopping: false,
                        sleeping: false,
                        exited: false,
                    }),
                    work: Condvar::new(),
                    done: Condvar::new(),
                })
            })
            .collect();
        let threads = shards
            .iter()
            .enumerate()
            .map(|(i, shard)| {
                let shard = shard.clone();
                let hooks = hooks.clone();
                let counters = counters.clone();
                let tname = if n == 1 {
                    name.to_string()
                } else {
                    format!("{name}-{i}")
                };
                Builder::new()
                    .name(tname)
                    .spawn(move || worker_main(id, &shard, hooks.as_deref(), &counters))
                    .expect("failed to spawn a dispatcher worker thread")
            })
            .collect();
        Executor {
            inner: Arc::new(ExecInner {
                id,
                name: name.to_string(),
                kind: Kind::Workers {
                    shards,
                    threads: Mutex::new(threads),
                },
                counters,
            }),
        }
    }

    // ===== enqueue =====

    /// Hands `job` to a worker (or to the user executor). Never runs it inline. After shutdown
    /// the job is dropped, which retires its tickets and reports it.
    pub fn submit(&self, job: Job) {
        match &self.inner.kind {
            Kind::User(e) => {
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| e.execute(job))) {
                    log::error!("user executor panicked in execute: {}", panic_message(&*p));
                }
            }
            Kind::Workers { shards, .. } => {
                let shard = &shards[shard_index(job.shard_key(), shards.len())];
                let mut q = lock(&shard.q);
                if q.stopping {
                    drop(q);
                    drop(job);
                    return;
                }
                q.jobs.push_back(job);
                self.inner.counters.queued.fetch_add(1, Relaxed);
                if q.sleeping {
                    q.sleeping = false;
                    shard.work.notify_one();
                }
            }
        }
    }

    /// The worker a key maps to (0 for a user executor).
    pub fn shard_of(&self, shard_key: u64) -> usize {
        match &self.inner.kind {
            Kind::Workers { shards, .. } => shard_index(shard_key, shards.len()),
            Kind::User(_) => 0,
        }
    }

    /// Number of worker threads (0 for a user executor).
    pub fn workers_count(&self) -> usize {
        match &self.inner.kind {
            Kind::Workers { shards, .. } => shards.len(),
            Kind::User(_) => 0,
        }
    }

    /// Whether the current thread is one of this executor's workers.
    pub fn is_worker_thread(&self) -> bool {
        worker_of() == self.inner.id
    }

    /// The executor's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// A snapshot of the counters and the ack-to-callback latency histogram.
    pub fn stats(&self) -> ExecutorStats {
        self.inner.counters.snapshot()
    }

    pub(crate) fn counters(&self) -> &ExecCounters {
        &self.inner.counters
    }

    // ===== shutdown =====

    /// Stops accepting jobs, lets the workers drain their queues, and waits for them until
    /// `deadline` (on the system clock). Returns whether every worker finished in time (they keep
    /// draining in the background otherwise). Called from one of this executor's own workers it
    /// cannot wait for itself: it only marks the executor stopping and returns `false`.
    /// Always `true` for a user executor.
    pub fn shutdown(&self, deadline: Deadline) -> bool {
        self.inner.shutdown(deadline, &SystemClock::new())
    }

    /// [`Executor::shutdown`] with the deadline read on `clock`.
    pub fn shutdown_with_clock(&self, deadline: Deadline, clock: &dyn Clock) -> bool {
        self.inner.shutdown(deadline, clock)
    }
}

#[inline]
fn shard_index(key: u64, n: usize) -> usize {
    (key % n as u64) as usize
}

impl ExecInner {
    fn shutdown(&self, deadline: Deadline, clock: &dyn Clock) -> bool {
        let Kind::Workers { shards, threads } = &self.kind else {
            return true;
        };
        for shard in shards {
            let mut q = lock(&shard.q);
            q.stopping = true;
            q.sleeping = false;
            shard.work.notify_one();
        }
        if worker_of() == self.id {
            return false;
        }
        for shard in shards {
            let mut q = lock(&shard.q);
            while !q.exited {
                if deadline.is_expired(clock) {
                    return false;
                }
                q = wait(&shard.done, q, deadline.sleep_for(clock));
            }
        }
        let handles: Vec<_> = lock(threads).drain(..).collect();
        for h in handles {
            let _ = h.join();
        }
        true
    }
}

impl Drop for ExecInner {
    fn drop(&mut self) {
        if let Kind::Workers { .. } = &self.kind {
            // Drain and join every worker except the current thread (if it is one of ours: it
            // exits by itself once its queue is empty).
            if worker_of() == self.id {
                self.shutdown(Deadline::now(), &SystemClock::new());
            } else {
                self.shutdown(Deadline::never(), &SystemClock::new());
            }
        }
    }
}

// ===== impl Worker =====

fn worker_main(id: u64, shard: &Shard, hooks: Option<&dyn WorkerHooks>, counters: &ExecCounters) {
    set_worker_of(id);
    if let Some(h) = hooks {
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| h.on_thread_start())) {
            log::error!(
                "worker on_thread_start hook panicked: {}",
                panic_message(&*p)
            );
        }
    }
    let mut group: VecDeque<Job> = VecDeque::new();
    loop {
        {
            let mut q = lock(&shard.q);
            while q.jobs.is_empty() {
                if q.stopping {
                    break;
                }
                q.sleeping = true;
                q = wait(&shard.work, q, None);
            }
            q.sleeping = false;
            if q.jobs.is_empty() {
                break;
            }
            if q.jobs.len() <= GROUP_CAP {
                std::mem::swap(&mut group, &mut q.jobs);
            } else {
                group.extend(q.jobs.drain(..GROUP_CAP));
            }
        }
        counters.queued.fetch_sub(group.len() as u64, Relaxed);
        let mut run_group = || {
            while let Some(job) = group.pop_front() {
                job.run();
            }
        };
        match hooks {
            None => run_group(),
            Some(h) => {
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| h.around_group(&mut run_group))) {
                    log::error!("worker around_group hook panicked: {}", panic_message(&*p));
                }
                // Jobs the hook did not run are dropped: retired and reported.
                group.clear();
            }
        }
    }
    if let Some(h) = hooks {
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| h.on_thread_stop())) {
            log::error!(
                "worker on_thread_stop hook panicked: {}",
                panic_message(&*p)
            );
        }
    }
    set_worker_of(0);
    let mut q = lock(&shard.q);
    q.exited = true;
    shard.done.notify_all();
}
