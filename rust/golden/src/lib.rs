//! The golden scenarios (`golden/*.json`), defined once and judged once.
//!
//! * [`schema`]: a compact validator of the JSON Schema subset `golden/schema/scenario.schema.json`
//!   uses; that file is the single definition of the format.
//! * [`scenario`]: the model runners and checker read, and the rules a JSON Schema cannot state.
//! * [`trace`]: what a runner records while it runs a scenario (no judgement).
//! * [`check`]: the one checker every trace (Rust, Python, C++; embedded engine or cluster) is
//!   judged by. The `golden-check <scenario.json> <trace.json>` binary runs it for the Python and
//!   C++ runners.

pub mod check;
pub mod scenario;
pub mod schema;
pub mod trace;

pub use check::{check, Report};
