//! Interruptible blocking waits.
//!
//! A binding whose host language handles signals on the waiting thread (Python runs its signal
//! handlers only when the thread holding the GIL looks for them) installs a check with
//! [`with_check`] around a blocking call. While the check is installed, every blocking wait of
//! this crate and of the core (flush, close, `WriteResult::wait`, admission of a write) sleeps at
//! most [`CHECK_INTERVAL`] at a time and calls the check at least that often; when the check
//! returns true the wait ends with an `Interrupted` error. The check never runs while a lock of
//! the dispatcher or the core is held: waits call it between their condition-variable sleeps, so
//! the state a wait leaves behind on interruption is
//! the same as on a timeout; a wait that holds a lock releases it around the check
//! ([`interrupted_releasing`]).
//!
//! Without an installed check (the default, and always in Rust applications and C++), waits
//! behave as before: no extra wake-ups, no calls.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// How often an installed check runs while a wait blocks (at most this long between calls).
pub const CHECK_INTERVAL: Duration = Duration::from_millis(100);

type Check<'a> = &'a (dyn Fn() -> bool + 'a);
/// An installed check with its lifetime erased, and when it last ran (or when the first wait
/// under it began; `None` until then, so that installing costs no clock read).
type Installed = Option<(*const (dyn Fn() -> bool + 'static), Option<Instant>)>;

thread_local! {
    /// The installed check (a pointer to a `&dyn Fn` that outlives the `with_check` call) and the
    /// time it last ran.
    static CHECK: Cell<Installed> = const { Cell::new(None) };
}

/// Runs `f` with `check` installed on this thread (nested calls replace it for their duration).
pub fn with_check<R>(check: Check<'_>, f: impl FnOnce() -> R) -> R {
    struct Restore(Installed);
    impl Drop for Restore {
        fn drop(&mut self) {
            CHECK.with(|c| c.set(self.0));
        }
    }
    // SAFETY: the erased lifetime is only observed through `interrupted`, on this thread, while
    // this frame (which borrows `check`) is alive: `Restore` removes the pointer on return and
    // on unwind.
    let erased: *const (dyn Fn() -> bool + 'static) = unsafe { std::mem::transmute::<*const (dyn Fn() -> bool + '_), _>(check) };
    let _restore = Restore(CHECK.with(|c| c.replace(Some((erased, None)))));
    f()
}

/// Whether a check is installed on this thread.
pub fn installed() -> bool {
    CHECK.with(|c| c.get().is_some())
}

/// Caps one sleep of a blocking wait at [`CHECK_INTERVAL`] when a check is installed.
pub fn cap_sleep(d: Option<Duration>) -> Option<Duration> {
    if !installed() {
        return d;
    }
    Some(d.map_or(CHECK_INTERVAL, |d| d.min(CHECK_INTERVAL)))
}

/// [`interrupted`] for a wait that holds a lock: when the check is due, `guard` is dropped while
/// it runs and `relock` takes the lock again. The check may take a binding's own lock (Python:
/// the GIL), which a callback worker holds while it takes the dispatcher's and the core's locks
/// (to complete a result, retire tickets, release permits); running the check under such a lock
/// would deadlock the two threads. Returns the guard, whether the check fired, and whether the
/// lock was released (the caller then re-reads its state before sleeping, as a notification may
/// have been missed meanwhile).
pub fn interrupted_releasing<G>(guard: G, relock: impl FnOnce() -> G) -> (G, bool, bool) {
    let due = CHECK.with(|c| match c.get() {
        None => None,
        Some((_, None)) => Some(false),
        Some((_, Some(last))) => Some(last.elapsed() >= CHECK_INTERVAL),
    });
    match due {
        None => (guard, false, false),
        // Starts the interval, or is rate-limited: the check itself does not run.
        Some(false) => {
            let fired = interrupted();
            (guard, fired, false)
        }
        Some(true) => {
            drop(guard);
            let fired = interrupted();
            (relock(), fired, true)
        }
    }
}

/// Runs the installed check if at least [`CHECK_INTERVAL`] passed since it last ran (or since the
/// first wait under it began), and returns its answer. False without a check. A wait that holds
/// a lock calls [`interrupted_releasing`] instead.
pub fn interrupted() -> bool {
    let Some((check, last)) = CHECK.with(|c| c.get()) else { return false };
    let now = Instant::now();
    match last {
        None => {
            CHECK.with(|c| c.set(Some((check, Some(now)))));
            return false;
        }
        Some(last) if now.duration_since(last) < CHECK_INTERVAL => return false,
        Some(_) => {}
    }
    CHECK.with(|c| c.set(Some((check, Some(now)))));
    // SAFETY: see `with_check`: the pointer is live while it is installed.
    unsafe { (*check)() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn no_check_no_interrupt_no_cap() {
        assert!(!installed());
        assert!(!interrupted());
        assert_eq!(cap_sleep(None), None);
        assert_eq!(cap_sleep(Some(Duration::from_secs(5))), Some(Duration::from_secs(5)));
    }

    #[test]
    fn check_runs_at_most_once_per_interval_and_is_removed_after() {
        let calls = AtomicU32::new(0);
        let check = || {
            calls.fetch_add(1, Ordering::SeqCst);
            true
        };
        with_check(&check, || {
            assert!(installed());
            assert_eq!(cap_sleep(None), Some(CHECK_INTERVAL));
            assert_eq!(cap_sleep(Some(Duration::from_millis(5))), Some(Duration::from_millis(5)));
            let start = std::time::Instant::now();
            assert!(!interrupted(), "the first call starts the interval");
            let second = interrupted();
            // (A stall of this thread longer than the interval between the two calls would let
            // the second call run the check: only then is it allowed to.)
            assert!(!second || start.elapsed() >= CHECK_INTERVAL, "not before an interval has passed");
            std::thread::sleep(CHECK_INTERVAL + Duration::from_millis(5));
            let third = interrupted();
            let at = std::time::Instant::now();
            let fourth = interrupted();
            assert!(second || third, "the check ran once an interval had passed");
            assert!(!fourth || at.elapsed() >= CHECK_INTERVAL, "rate-limited");
            // The check (which always answers true) ran exactly when a call said interrupted.
            assert_eq!(calls.load(Ordering::SeqCst), [second, third, fourth].iter().filter(|b| **b).count() as u32);
        });
        assert!(!installed());
    }

    #[test]
    fn removed_on_unwind() {
        let r = std::panic::catch_unwind(|| with_check(&|| false, || panic!("boom")));
        assert!(r.is_err());
        assert!(!installed());
    }
}
