//! Loom model: the FIFO worker runs jobs one at a time in hand-off order, and flush waits for
//! them; flush from inside a callback fails at once instead of deadlocking the worker.
#![cfg(loom)]

use std::sync::Arc;

use fluss_writer_dispatch::*;
use loom::sync::Mutex;

#[test]
fn fifo_order_and_flush() {
    loom::model(|| {
        let ex = Executor::fifo("loom-fifo", None);
        let scope = Scope::new(ScopeOptions::default(), ex.clone(), Arc::new(ManualClock::new()));
        let order = Arc::new(Mutex::new(Vec::new()));
        for i in 0..2u32 {
            let t = scope.admit(Deadline::never()).unwrap();
            let (o, s) = (order.clone(), scope.clone());
            scope.dispatch(Job::new(
                &scope,
                0,
                t.into(),
                0,
                Box::new(move |ctx: &mut JobContext<'_>| {
                    ctx.invoke(
                        move || {
                            assert_eq!(s.flush(Deadline::never()), Err(FlushError::CalledFromCallback));
                            o.lock().unwrap().push(i);
                        },
                        &|| "op".into(),
                    )
                }),
            ));
        }
        scope.flush(Deadline::never()).unwrap();
        assert_eq!(*order.lock().unwrap(), vec![0, 1]);
        assert!(ex.shutdown(Deadline::never()));
        assert_eq!(scope.stats().callbacks_run, 2);
    });
}
