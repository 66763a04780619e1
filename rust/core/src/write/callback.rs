//! [`Callback`]: a type-erased, move-only completion callable that needs **no heap allocation**
//! when its captures fit in three machine words (an index, a pointer, an `Arc`, a Python object
//! handle, a boxed C++ holder). Larger callables are boxed once.
//!
//! Why: a boxed closure is allocated on the submitting thread and freed on the callback worker;
//! that cross-thread malloc/free pair was the largest cost of the callback path (about 40% of
//! end-to-end append throughput, see bench/README.md). Inline storage removes it.

use std::marker::PhantomData;
use std::mem::{align_of, size_of, ManuallyDrop, MaybeUninit};
use std::ptr;

use super::completion::WriteCompletion;

type Storage = [usize; 3];

struct VTable {
    /// Moves the callable out of the storage and calls it.
    call: unsafe fn(*mut Storage, &WriteCompletion),
    /// Drops the callable in place without calling it.
    drop: unsafe fn(*mut Storage),
}

struct VTableFor<F>(PhantomData<F>);

impl<F: FnOnce(&WriteCompletion) + Send + 'static> VTableFor<F> {
    const VTABLE: VTable = VTable { call: call_impl::<F>, drop: drop_impl::<F> };
}

/// # Safety
/// `p` holds an initialized `F` that is not used again afterwards.
unsafe fn call_impl<F: FnOnce(&WriteCompletion)>(p: *mut Storage, c: &WriteCompletion) {
    // SAFETY: the caller guarantees an initialized F, read exactly once; if `f` panics it is
    // dropped by unwinding, and the storage is never dropped again (Callback::call forgets it).
    let f = unsafe { ptr::read(p.cast::<F>()) };
    f(c)
}

/// # Safety
/// `p` holds an initialized `F` that is not used again afterwards.
unsafe fn drop_impl<F>(p: *mut Storage) {
    // SAFETY: as above; dropped exactly once.
    unsafe { ptr::drop_in_place(p.cast::<F>()) }
}

/// A completion callable stored inline when small (see the module doc).
pub struct Callback {
    storage: MaybeUninit<Storage>,
    vtable: &'static VTable,
}

// SAFETY: only built from `F: Send` (directly or boxed), so moving the storage between threads
// moves a `Send` value.
unsafe impl Send for Callback {}

impl Callback {
    /// Wrap a callable; inline if it fits in three words with at most word alignment, boxed
    /// otherwise.
    pub fn new<F: FnOnce(&WriteCompletion) + Send + 'static>(f: F) -> Callback {
        if size_of::<F>() <= size_of::<Storage>() && align_of::<F>() <= align_of::<Storage>() {
            Callback::inline(f)
        } else {
            Callback::inline(Box::new(f))
        }
    }

    fn inline<F: FnOnce(&WriteCompletion) + Send + 'static>(f: F) -> Callback {
        assert!(size_of::<F>() <= size_of::<Storage>() && align_of::<F>() <= align_of::<Storage>());
        let mut storage = MaybeUninit::<Storage>::uninit();
        // SAFETY: the assertion above: F fits and is suitably aligned.
        unsafe { ptr::write(storage.as_mut_ptr().cast::<F>(), f) };
        Callback { storage, vtable: &VTableFor::<F>::VTABLE }
    }

    /// Call it (consumes it; the callable and its captures are dropped when this returns or
    /// unwinds).
    pub fn call(self, c: &WriteCompletion) {
        let mut me = ManuallyDrop::new(self);
        // SAFETY: the storage holds the callable the vtable was made for; ManuallyDrop keeps
        // Drop from touching it again.
        unsafe { (me.vtable.call)(me.storage.as_mut_ptr(), c) }
    }
}

impl Drop for Callback {
    fn drop(&mut self) {
        // SAFETY: not called (call() forgets self), so the callable is still initialized.
        unsafe { (self.vtable.drop)(self.storage.as_mut_ptr()) }
    }
}

impl std::fmt::Debug for Callback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Callback")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn completion() -> WriteCompletion {
        WriteCompletion {
            error: None,
            table: Arc::new(crate::TablePath::new("d", "t").unwrap()),
            table_id: 1,
            partition: None,
            partition_id: None,
            bucket: 3,
            offset: 7,
            log_end_offset: -1,
            bucket_results: vec![],
        }
    }

    struct Tracked(Arc<AtomicUsize>, [u64; 0]);
    impl Drop for Tracked {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn small_and_large_callables_run_once_and_drop_once() {
        for big in [false, true] {
            let drops = Arc::new(AtomicUsize::new(0));
            let calls = Arc::new(AtomicUsize::new(0));
            let t = Tracked(drops.clone(), []);
            let pad = [7u64; 8];
            let c2 = calls.clone();
            let cb = if big {
                Callback::new(move |c: &WriteCompletion| {
                    let _keep = (&t, pad);
                    assert_eq!(c.offset, 7);
                    c2.fetch_add(1, Ordering::SeqCst);
                })
            } else {
                Callback::new(move |c: &WriteCompletion| {
                    let _keep = &t;
                    assert_eq!(c.bucket, 3);
                    c2.fetch_add(1, Ordering::SeqCst);
                })
            };
            assert_eq!(drops.load(Ordering::SeqCst), 0);
            cb.call(&completion());
            assert_eq!(calls.load(Ordering::SeqCst), 1);
            assert_eq!(drops.load(Ordering::SeqCst), 1, "captures dropped once after the call (big={big})");
        }
    }

    #[test]
    fn dropped_uncalled_drops_captures() {
        let drops = Arc::new(AtomicUsize::new(0));
        let t = Tracked(drops.clone(), []);
        let cb = Callback::new(move |_: &WriteCompletion| drop(t));
        drop(cb);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn panicking_callable_drops_captures_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        let t = Tracked(drops.clone(), []);
        let cb = Callback::new(move |_: &WriteCompletion| {
            let _keep = &t;
            panic!("boom");
        });
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cb.call(&completion())));
        assert!(r.is_err());
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn over_aligned_callables_are_boxed() {
        #[repr(align(32))]
        struct Wide(u8);
        let w = Wide(5);
        let hit = Arc::new(AtomicUsize::new(0));
        let h = hit.clone();
        Callback::new(move |_: &WriteCompletion| {
            h.fetch_add(w.0 as usize, Ordering::SeqCst);
        })
        .call(&completion());
        assert_eq!(hit.load(Ordering::SeqCst), 5);
    }
}
