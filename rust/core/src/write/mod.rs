//! The write path: writers, the accumulator, batches, the sender, and the completions handed
//! to callbacks.
//!
//! * [`writer`]: [`AppendWriter`] and [`UpsertWriter`], admission and bucket choice on the
//!   caller's thread.
//! * `accumulator`: open and closed batches per bucket.
//! * `batch`: batches, callback entries, and the dispatcher job a completed batch becomes.
//! * `sender`: the per-writer tokio task: draining, requests, retries, idempotence, strict
//!   per-bucket completion order.
//! * [`completion`]: [`WriteCompletion`], [`WriteResult`], [`WriteCallback`].

mod accumulator;
mod batch;
mod bucket_state;
pub mod callback;

/// Benchmark support (not part of the API; with the `internals` feature only).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod batch_bench {
    pub use super::batch::bench_dispatch_batches;
}
pub mod completion;
mod sender;
pub mod writer;

pub use batch::PENDING_ENTRY_BYTES;
pub use callback::Callback;
pub use completion::{BucketResult, LastReference, SharedCallback, WriteCallback, WriteCompletion, WriteResult};
pub(crate) use writer::WriterCore;
pub use writer::{
    AppendWriter, CallbackExecutor, ErrorHandlerBox, UpsertWriter, WriterOptions, WriterStats, MAX_CALLBACK_SHARDS, MAX_PENDING_CALLBACKS,
};
