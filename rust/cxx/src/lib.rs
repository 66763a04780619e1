//! fluss-writer-cxx: the C++ binding of fluss-writer, built as a static library and wrapped by
//! `cpp/include/fluss_writer.hpp`.
//!
//! The binding is thin: it converts values (rows, descriptors, Arrow C Data Interface structs),
//! errors (to `FfiStatus`: code, message, retriable) and callables (C++ `WriteCallback`s owned
//! by Rust and called through a `noexcept` trampoline). Every rule of the callback contract
//! (C1-C12 in `docs/callback-contract.md`) lives in `fluss-writer` and `fluss-writer-dispatch`.
//!
//! Modules:
//! * `bridge`: the cxx declarations only.
//! * `status`: `Error` to `FfiStatus`, panics to `INTERNAL`, the list of client codes.
//! * `values`: rows (`RRow`) and table descriptors.
//! * `callbacks`: C++ callables, error handlers and user executors as Rust closures and traits;
//!   completions seen from C++.
//! * `handles`: connection, admin, tables, writers, write results.
//! * `acl`: the ACL admin calls (conversions to and from the core's `AclBinding` / `AclFilter`).
//! * `arrow`: Arrow C Data Interface import.
//! * `testing`: embedded-engine read-back and fault injection (`fluss_writer::testing`, in every
//!   build: users' own tests use it).
//! * `test_hooks` (cargo feature `test-hooks` only, never in a shipped package): the forced panic
//!   of `ForcePanicInNextCall` and the dispatcher benchmark of `RunThroughDispatcher`.
//! * `partitions`: partition DDL, read-back of one partition, the embedded engine's
//!   per-partition read-back and faults.

mod acl;
mod arrow;
mod bridge;
mod callbacks;
mod handles;
mod logging;
mod partitions;
mod status;
#[cfg(feature = "test-hooks")]
mod test_hooks;
mod testing;
mod values;
