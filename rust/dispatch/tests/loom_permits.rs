//! Loom model: the FIFO permits under release racing close.
//!
//! Two waiters (a large request queued first, then a small one) wait while permits are released
//! and the semaphore is closed concurrently. Invariants: a waiter ends either granted or
//! `Closed` (never lost: the model would deadlock), the small request is never granted while the
//! large one queued before it is still waiting, and no permit leaks (`in_use` returns to zero).
#![cfg(loom)]

use std::sync::Arc;

use fluss_writer_dispatch::*;
use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};

#[test]
fn fifo_waiters_release_and_close() {
    loom::model(|| {
        let p = Arc::new(Permits::new(2));
        let clock: Arc<dyn Clock> = Arc::new(ManualClock::new());
        assert!(p.try_acquire(2));
        let large_done = Arc::new(AtomicBool::new(false));

        let (p1, c1, d1) = (p.clone(), clock.clone(), large_done.clone());
        let large = loom::thread::spawn(move || {
            let r = p1.acquire(2, Deadline::never(), &*c1);
            d1.store(true, SeqCst);
            if r.is_ok() {
                p1.release(2);
            }
            r
        });
        // Queue the small request behind the large one.
        while p.waiters() == 0 {
            loom::thread::yield_now();
        }
        let (p2, c2, d2) = (p.clone(), clock.clone(), large_done.clone());
        let small = loom::thread::spawn(move || {
            let r = p2.acquire(1, Deadline::never(), &*c2);
            if r.is_ok() {
                // FIFO: granted only after the large request was granted (or failed).
                assert!(d2.load(SeqCst), "small request barged past the large one");
                p2.release(1);
            }
            r
        });
        p.release(2);
        p.close();
        let rl = large.join().unwrap();
        let rs = small.join().unwrap();
        for r in [rl, rs] {
            assert!(matches!(r, Ok(()) | Err(AcquireError::Closed)), "{r:?}");
        }
        assert_eq!(p.in_use(), 0);
        assert_eq!(p.waiters(), 0);
    });
}
