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
//! empty. `shutdown` waits for the workers until its deadline and joins them. Dropping the last
//! handle waits without a deadline, except that a worker never joins itself and a drop inside a
//! callback never blocks (C7): when the last handle goes away on a worker thread (a job holding
//! the last reference finishes there) or inside any callback, the workers are only told to stop;
//! they are detached and exit after draining their queues.

use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64 as StdAtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::budget::Deadline;
use crate::clock::{Clock, SystemClock};
use crate::context::{in_callback, set_worker_of, worker_of};
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
    Workers { shards: Vec<Arc<Shard>>, threads: Mutex<Vec<JoinHandle<()>>> },
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
        f.debug_struct("Executor").field("name", &self.inner.name).field("kind", &kind).finish()
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
                    q: Mutex::new(ShardQueue { jobs: VecDeque::new(), stopping: false, sleeping: false, exited: false }),
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
                let tname = if n == 1 { name.to_string() } else { format!("{name}-{i}") };
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
                kind: Kind::Workers { shards, threads: Mutex::new(threads) },
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

    /// What a slow callback on this executor held up, and what to do about it (for the
    /// slow-callback warning).
    pub fn stall_advice(&self) -> String {
        let queued = self.inner.counters.queued.load(Relaxed);
        match &self.inner.kind {
            Kind::Workers { shards, .. } if shards.len() == 1 => format!(
                "it ran on the FIFO callback worker '{}', so every callback queued behind it waited ({queued} jobs queued now): \
                 hand slow work to a thread of your own, or give the writer a sharded executor or an executor of your own",
                self.inner.name
            ),
            Kind::Workers { shards, .. } => format!(
                "it ran on one of the {} workers of '{}', so the callbacks of the buckets on that worker waited ({queued} jobs queued now): \
                 hand slow work to a thread of your own, or use more shards",
                shards.len(),
                self.inner.name
            ),
            Kind::User(_) => "it ran on the application's executor".to_string(),
        }
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
                let (relocked, fired, released) = crate::interrupt::interrupted_releasing(q, || lock(&shard.q));
                q = relocked;
                if fired {
                    return false;
                }
                if released {
                    continue;
                }
                q = wait(&shard.done, q, crate::interrupt::cap_sleep(deadline.sleep_for(clock)));
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
            // Drain and join every worker. Never join from one of our own workers (it exits by
            // itself once its queue is empty), and never block inside a callback (C7): there the
            // workers are only told to stop, and exit after draining.
            if worker_of() == self.id || in_callback() {
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
            log::error!("worker on_thread_start hook panicked: {}", panic_message(&*p));
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
        // `Job::run` contains every panic of user code; this only catches a panicking hook.
        let ran = catch_unwind(AssertUnwindSafe(|| match hooks {
            None => run_group(),
            Some(h) => h.around_group(&mut run_group),
        }));
        if let Err(p) = ran {
            log::error!("worker around_group hook panicked: {}", panic_message(&*p));
        }
        // Jobs the hook did not run are dropped: retired and reported.
        group.clear();
    }
    if let Some(h) = hooks {
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| h.on_thread_stop())) {
            log::error!("worker on_thread_stop hook panicked: {}", panic_message(&*p));
        }
    }
    set_worker_of(0);
    let mut q = lock(&shard.q);
    q.exited = true;
    shard.done.notify_all();
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::test_util::{eventually, held_scope, one_callback_job, recording_handler};
    use crate::{in_callback, AdmitError, FlushError, JobContext, ManualClock, Scope, ScopeOptions, TicketSet};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
    use std::sync::mpsc;
    use std::time::Duration;

    fn scope_on(executor: Executor, max: u64) -> (Scope, Arc<std::sync::Mutex<Vec<crate::CallbackError>>>) {
        let (h, errors) = recording_handler();
        let scope = Scope::new(
            ScopeOptions { max_pending_callbacks: max, error_handler: Some(h), slow_callback_threshold: None },
            executor,
            Arc::new(SystemClock::new()),
        );
        (scope, errors)
    }

    /// A job with `n` callbacks; callback `j` calls `f(j)`.
    fn job_with<F>(scope: &Scope, key: u64, n: usize, f: F) -> Job
    where
        F: Fn(usize) + Send + Sync + 'static,
    {
        let mut tickets = TicketSet::default();
        for _ in 0..n {
            tickets.add(scope.admit(Deadline::never()).unwrap());
        }
        let f = Arc::new(f);
        Job::new(
            scope,
            key,
            tickets,
            scope.clock().now_nanos(),
            Box::new(move |ctx: &mut JobContext<'_>| {
                for j in 0..n {
                    let f = f.clone();
                    ctx.invoke(move || f(j), &|| format!("op {j}"));
                }
            }),
        )
    }

    #[test]
    fn fifo_runs_jobs_in_handoff_order_on_its_worker() {
        let ex = Executor::fifo("fifo-order", None);
        let (scope, _e) = scope_on(ex.clone(), 1 << 20);
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let off_worker = Arc::new(AtomicUsize::new(0));
        for i in 0..500usize {
            let (seen, off, ex2) = (seen.clone(), off_worker.clone(), ex.clone());
            scope.dispatch(job_with(&scope, i as u64, 3, move |j| {
                if !ex2.is_worker_thread() || !in_callback() {
                    off.fetch_add(1, SeqCst);
                }
                seen.lock().unwrap().push((i, j));
            }));
        }
        assert!(!ex.is_worker_thread());
        scope.flush(Deadline::never()).unwrap();
        let seen = seen.lock().unwrap();
        let expected: Vec<_> = (0..500).flat_map(|i| (0..3).map(move |j| (i, j))).collect();
        assert_eq!(*seen, expected);
        assert_eq!(off_worker.load(SeqCst), 0);
        let st = ex.stats();
        assert_eq!((st.jobs_run, st.callbacks_run, st.queued_jobs), (500, 1500, 0));
        assert_eq!(scope.stats().callbacks_run, 1500);
    }

    #[test]
    fn sharded_keeps_per_key_order_on_the_keys_worker() {
        let ex = Executor::sharded("sharded", 4, None);
        assert_eq!(ex.workers_count(), 4);
        assert_eq!(ex.shard_of(6), 2);
        let (scope, _e) = scope_on(ex.clone(), 1 << 20);
        let per_key = Arc::new(std::sync::Mutex::new(vec![Vec::new(); 8]));
        let wrong_thread = Arc::new(AtomicUsize::new(0));
        for i in 0..2000usize {
            let key = (i * 7 + i / 3) % 8;
            let (per_key, wrong) = (per_key.clone(), wrong_thread.clone());
            let expect = format!("sharded-{}", ex.shard_of(key as u64));
            scope.dispatch(job_with(&scope, key as u64, 1, move |_| {
                if std::thread::current().name() != Some(expect.as_str()) {
                    wrong.fetch_add(1, SeqCst);
                }
                per_key.lock().unwrap()[key].push(i);
            }));
        }
        scope.flush(Deadline::never()).unwrap();
        assert_eq!(wrong_thread.load(SeqCst), 0);
        let per_key = per_key.lock().unwrap();
        assert_eq!(per_key.iter().map(Vec::len).sum::<usize>(), 2000);
        for seq in per_key.iter() {
            assert!(seq.windows(2).all(|w| w[0] < w[1]), "order broken: {seq:?}");
        }
        assert!(ex.shutdown(Deadline::never()));
    }

    #[test]
    fn user_executor_gets_jobs_and_runs_them_on_its_thread() {
        let (scope, holding, _e) = held_scope(8);
        let ran_in_callback = Arc::new(AtomicUsize::new(0));
        for k in 0..3 {
            let r = ran_in_callback.clone();
            let t = scope.admit(Deadline::never()).unwrap();
            scope.dispatch(one_callback_job(&scope, k, t.into(), move || {
                if in_callback() {
                    r.fetch_add(1, SeqCst);
                }
            }));
        }
        assert_eq!(scope.executor().shard_of(5), 0);
        let jobs = holding.take();
        assert_eq!(jobs.iter().map(Job::shard_key).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(scope.flush(Deadline::now()), Err(FlushError::Timeout));
        let s2 = scope.clone();
        std::thread::spawn(move || {
            for j in jobs.into_iter().rev() {
                j.run();
            }
            assert!(!in_callback());
            drop(s2);
        })
        .join()
        .unwrap();
        assert_eq!(ran_in_callback.load(SeqCst), 3);
        assert_eq!(scope.flush(Deadline::now()), Ok(()));
        assert_eq!(scope.executor().stats().jobs_run, 3);
        assert!(scope.executor().shutdown(Deadline::now()));
    }

    #[test]
    fn job_dropped_unrun_retires_its_tickets_and_reports() {
        let (scope, holding, errors) = held_scope(8);
        let mut tickets = TicketSet::default();
        tickets.add(scope.admit(Deadline::never()).unwrap());
        tickets.add(scope.admit(Deadline::never()).unwrap());
        let ran = Arc::new(AtomicBool::new(false));
        let r2 = ran.clone();
        scope.dispatch(one_callback_job(&scope, 9, tickets, move || r2.store(true, SeqCst)));
        assert_eq!(scope.stats().pending, 2);
        drop(holding.take());
        assert!(!ran.load(SeqCst));
        assert_eq!(scope.flush(Deadline::now()), Ok(()));
        assert_eq!(scope.slots_in_use(), 0);
        let st = scope.stats();
        assert_eq!((st.pending, st.jobs_dropped_unrun, st.callbacks_run), (0, 1, 0));
        let errors = errors.lock().unwrap();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].message, "job dropped without running");
        assert!(errors[0].operation.contains("2 callback"), "{}", errors[0].operation);
    }

    #[test]
    fn a_panicking_callback_does_not_stop_the_worker() {
        let ex = Executor::fifo("panics", None);
        let (scope, errors) = scope_on(ex.clone(), 64);
        let ran = Arc::new(std::sync::Mutex::new(Vec::new()));
        let r = ran.clone();
        scope.dispatch(job_with(&scope, 0, 3, move |j| {
            if j == 1 {
                panic!("boom in {j}");
            }
            r.lock().unwrap().push(j);
        }));
        let r = ran.clone();
        scope.dispatch(job_with(&scope, 0, 2, move |j| r.lock().unwrap().push(10 + j)));
        scope.flush(Deadline::never()).unwrap();
        assert_eq!(*ran.lock().unwrap(), vec![0, 2, 10, 11]);
        let st = scope.stats();
        assert_eq!((st.callbacks_run, st.callback_errors, st.pending), (5, 1, 0));
        let errors = errors.lock().unwrap();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].message, "boom in 1");
        assert_eq!(errors[0].operation, "op 1");
    }

    #[test]
    fn a_panicking_body_or_error_handler_is_contained() {
        let ex = Executor::fifo("body-panics", None);
        let scope = Scope::new(
            ScopeOptions {
                max_pending_callbacks: 8,
                error_handler: Some(Arc::new(|_: &crate::CallbackError| panic!("handler"))),
                slow_callback_threshold: None,
            },
            ex,
            Arc::new(SystemClock::new()),
        );
        let t = scope.admit(Deadline::never()).unwrap();
        scope.dispatch(Job::new(
            &scope,
            0,
            t.into(),
            0,
            Box::new(|ctx: &mut JobContext<'_>| {
                ctx.invoke(|| panic!("cb"), &|| "x".into());
                panic!("body");
            }),
        ));
        let ok = Arc::new(AtomicBool::new(false));
        let o2 = ok.clone();
        let t = scope.admit(Deadline::never()).unwrap();
        scope.dispatch(one_callback_job(&scope, 0, t.into(), move || o2.store(true, SeqCst)));
        scope.flush(Deadline::never()).unwrap();
        assert!(ok.load(SeqCst));
        assert_eq!(scope.stats().callback_errors, 2);
    }

    /// Records the slot count and pending tickets at the moment it is dropped.
    struct Probe {
        scope: Scope,
        at_drop: Arc<std::sync::Mutex<Option<(u64, u64)>>>,
    }
    impl Drop for Probe {
        fn drop(&mut self) {
            *self.at_drop.lock().unwrap() = Some((self.scope.slots_in_use(), self.scope.stats().pending));
        }
    }

    #[test]
    fn slot_is_released_only_after_captures_are_dropped() {
        let ex = Executor::fifo("captures", None);
        let (scope, _e) = scope_on(ex, 8);
        for invoke in [true, false] {
            let at_drop = Arc::new(std::sync::Mutex::new(None));
            let probe = Probe { scope: scope.clone(), at_drop: at_drop.clone() };
            let t = scope.admit(Deadline::never()).unwrap();
            scope.dispatch(Job::new(
                &scope,
                0,
                t.into(),
                0,
                Box::new(move |ctx: &mut JobContext<'_>| {
                    if invoke {
                        ctx.invoke(move || drop(probe), &|| "probe".into());
                    } else {
                        // A body that never calls its callable: it is dropped with the body.
                        let _keep = probe;
                    }
                }),
            ));
            scope.flush(Deadline::never()).unwrap();
            assert_eq!(*at_drop.lock().unwrap(), Some((1, 1)), "invoke={invoke}");
            assert_eq!(scope.slots_in_use(), 0);
        }
        // Dropped unrun: same order.
        let (scope, holding, _e) = held_scope(8);
        let at_drop = Arc::new(std::sync::Mutex::new(None));
        let probe = Probe { scope: scope.clone(), at_drop: at_drop.clone() };
        let t = scope.admit(Deadline::never()).unwrap();
        scope.dispatch(one_callback_job(&scope, 0, t.into(), move || drop(probe)));
        drop(holding.take());
        assert_eq!(*at_drop.lock().unwrap(), Some((1, 1)));
        assert_eq!(scope.slots_in_use(), 0);
    }

    #[test]
    fn latency_is_measured_on_the_injected_clock() {
        let holding = Arc::new(crate::test_util::Holding::default());
        let clock = Arc::new(ManualClock::new());
        let scope = Scope::new(ScopeOptions::default(), Executor::user(holding.clone()), clock.clone());
        for (ack, now) in [(1_000u64, 6_000u64), (6_000, 6_100), (6_100, 1_006_100)] {
            let t = scope.admit(Deadline::never()).unwrap();
            scope.dispatch(Job::new(&scope, 0, t.into(), ack, Box::new(|ctx: &mut JobContext<'_>| ctx.invoke(|| {}, &|| String::new()))));
            clock.set(now);
            holding.take().pop().unwrap().run();
        }
        let st = scope.executor().stats();
        assert_eq!(st.jobs_run, 3);
        assert_eq!(st.callbacks_run, 3);
        let l = st.ack_to_callback;
        assert_eq!(l.count, 3);
        assert_eq!(l.max_nanos, 1_000_000);
        assert!((5_000..=6_250).contains(&l.p50_nanos), "{l:?}");
        assert_eq!(l.p99_nanos, 1_000_000);
    }

    #[derive(Default)]
    struct CountingHooks {
        groups: AtomicUsize,
        starts: AtomicUsize,
        stops: AtomicUsize,
    }
    impl WorkerHooks for CountingHooks {
        fn around_group(&self, run: &mut dyn FnMut()) {
            self.groups.fetch_add(1, SeqCst);
            run()
        }
        fn on_thread_start(&self) {
            self.starts.fetch_add(1, SeqCst);
        }
        fn on_thread_stop(&self) {
            self.stops.fetch_add(1, SeqCst);
        }
    }

    #[test]
    fn around_group_runs_once_per_group_of_queued_jobs() {
        let hooks = Arc::new(CountingHooks::default());
        let ex = Executor::fifo("groups", Some(hooks.clone()));
        let (scope, _e) = scope_on(ex.clone(), 1 << 20);
        let (started_tx, started_rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let go_rx = std::sync::Mutex::new(go_rx);
        scope.dispatch(job_with(&scope, 0, 1, move |_| {
            started_tx.send(()).unwrap();
            go_rx.lock().unwrap().recv_timeout(Duration::from_secs(10)).unwrap();
        }));
        started_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        // The worker is busy: these queue up and must form groups of at most GROUP_CAP.
        let queued = GROUP_CAP + 100;
        for _ in 0..queued {
            scope.dispatch(job_with(&scope, 0, 1, |_| {}));
        }
        assert_eq!(ex.stats().queued_jobs, queued as u64);
        go_tx.send(()).unwrap();
        scope.flush(Deadline::never()).unwrap();
        assert_eq!(hooks.groups.load(SeqCst), 3, "1 + ceil(1124 / 1024) groups");
        assert_eq!(ex.stats().jobs_run, queued as u64 + 1);
        assert!(ex.shutdown(Deadline::never()));
        assert_eq!(hooks.starts.load(SeqCst), 1);
        assert_eq!(hooks.stops.load(SeqCst), 1);
    }

    struct NoRunHooks;
    impl WorkerHooks for NoRunHooks {
        fn around_group(&self, _run: &mut dyn FnMut()) {}
    }

    #[test]
    fn jobs_a_hook_does_not_run_are_dropped_and_reported() {
        let ex = Executor::fifo("no-run", Some(Arc::new(NoRunHooks)));
        let (scope, errors) = scope_on(ex, 8);
        scope.dispatch(job_with(&scope, 0, 2, |_| {}));
        scope.flush(Deadline::never()).unwrap();
        assert_eq!(scope.stats().jobs_dropped_unrun, 1);
        assert_eq!(errors.lock().unwrap().len(), 1);
    }

    #[test]
    fn blocking_calls_fail_fast_inside_a_callback() {
        let ex = Executor::fifo("in-callback", None);
        let (scope, _e) = scope_on(ex, 1);
        let results = Arc::new(std::sync::Mutex::new(None));
        let (s2, r2) = (scope.clone(), results.clone());
        // The job's own ticket holds the only slot.
        scope.dispatch(job_with(&scope, 0, 1, move |_| {
            *r2.lock().unwrap() =
                Some((s2.flush(Deadline::never()), s2.wait_idle(Deadline::never()), s2.admit(Deadline::never()).map(|_| ())));
        }));
        scope.flush(Deadline::never()).unwrap();
        assert_eq!(
            *results.lock().unwrap(),
            Some((Err(FlushError::CalledFromCallback), Err(FlushError::CalledFromCallback), Err(AdmitError::WouldBlockInCallback)))
        );
    }

    #[test]
    fn shutdown_drains_then_later_jobs_are_dropped() {
        let ex = Executor::fifo("shutdown", None);
        let (scope, errors) = scope_on(ex.clone(), 1 << 16);
        let count = Arc::new(AtomicUsize::new(0));
        for _ in 0..200 {
            let c = count.clone();
            scope.dispatch(job_with(&scope, 0, 2, move |_| {
                c.fetch_add(1, SeqCst);
            }));
        }
        assert!(ex.shutdown(Deadline::never()));
        assert_eq!(count.load(SeqCst), 400);
        scope.dispatch(job_with(&scope, 0, 1, |_| {}));
        assert_eq!(scope.stats().pending, 0);
        assert_eq!(scope.stats().jobs_dropped_unrun, 1);
        assert_eq!(errors.lock().unwrap().len(), 1);
        assert!(ex.shutdown(Deadline::now()), "idempotent");
    }

    #[test]
    fn shutdown_times_out_on_a_stuck_callback() {
        let ex = Executor::fifo("stuck", None);
        let (scope, _e) = scope_on(ex.clone(), 8);
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let go_rx = std::sync::Mutex::new(go_rx);
        let (started_tx, started_rx) = mpsc::channel();
        scope.dispatch(job_with(&scope, 0, 1, move |_| {
            started_tx.send(()).unwrap();
            go_rx.lock().unwrap().recv_timeout(Duration::from_secs(10)).unwrap();
        }));
        started_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        let clock = ManualClock::new();
        assert!(!ex.shutdown_with_clock(Deadline::now(), &clock));
        go_tx.send(()).unwrap();
        assert!(ex.shutdown(Deadline::never()));
        assert_eq!(scope.stats().pending, 0);
    }

    #[test]
    fn last_handle_dropped_on_the_worker_does_not_self_join() {
        let hooks = Arc::new(CountingHooks::default());
        let ex = Executor::fifo("self-drop", Some(hooks.clone()));
        let (scope, _e) = scope_on(ex, 8);
        let (tx, rx) = mpsc::channel();
        let job = job_with(&scope, 0, 1, move |_| tx.send(()).unwrap());
        scope.dispatch(job);
        // The queued job now holds the last reference to the scope and so to the executor.
        drop(scope);
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        eventually("worker exited", || hooks.stops.load(SeqCst) == 1);
    }

    #[test]
    fn dropping_the_last_handle_drains_the_queue() {
        let hooks = Arc::new(CountingHooks::default());
        let ex = Executor::fifo("drop-drains", Some(hooks.clone()));
        let (scope, _e) = scope_on(ex.clone(), 1 << 16);
        let count = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = mpsc::channel::<()>();
        let rx = std::sync::Mutex::new(rx);
        // Hold the worker so that the other jobs are still queued when the handles go away.
        scope.dispatch(job_with(&scope, 0, 1, move |_| {
            rx.lock().unwrap().recv_timeout(Duration::from_secs(10)).unwrap();
        }));
        for _ in 0..100 {
            let c = count.clone();
            scope.dispatch(job_with(&scope, 0, 1, move |_| {
                c.fetch_add(1, SeqCst);
            }));
        }
        drop(scope);
        drop(ex);
        tx.send(()).unwrap();
        // The queued jobs held the last references; the worker drained them, then exited.
        eventually("worker exited", || hooks.stops.load(SeqCst) == 1);
        assert_eq!(count.load(SeqCst), 100);
    }

    #[test]
    fn dropping_the_last_handle_inside_a_callback_does_not_block() {
        let hooks = Arc::new(CountingHooks::default());
        let y = Executor::fifo("dropped-in-callback", Some(hooks.clone()));
        // Y's worker is busy with a job of another scope (so the job holds no handle to Y).
        let (other, holding, _e) = held_scope(8);
        drop(holding);
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let go_rx = std::sync::Mutex::new(go_rx);
        let (started_tx, started_rx) = mpsc::channel();
        let t = other.admit(Deadline::never()).unwrap();
        y.submit(one_callback_job(&other, 0, t.into(), move || {
            started_tx.send(()).unwrap();
            go_rx.lock().unwrap().recv_timeout(Duration::from_secs(10)).unwrap();
        }));
        started_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        // A callback on executor X drops the last handle to Y: it must not wait for Y's job.
        let x = Executor::fifo("x", None);
        let (scope_x, _e2) = scope_on(x, 8);
        let (dropped_tx, dropped_rx) = mpsc::channel();
        scope_x.dispatch(job_with(&scope_x, 0, 1, {
            let y = std::sync::Mutex::new(Some(y));
            move |_| {
                drop(y.lock().unwrap().take());
                dropped_tx.send(()).unwrap();
            }
        }));
        dropped_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(hooks.stops.load(SeqCst), 0, "Y's worker is still busy");
        go_tx.send(()).unwrap();
        eventually("Y's worker exited after draining", || hooks.stops.load(SeqCst) == 1);
        assert_eq!(other.flush(Deadline::never()), Ok(()));
    }
}
