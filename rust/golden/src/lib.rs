//! The golden scenarios (`golden/*.json`), defined once and judged once.
//!
//! * [`schema`]: a compact validator of the JSON Schema subset `golden/schema/scenario.schema.json`
//!   uses; that file is the single definition of the format.
//! * [`scenario`]: the model the plan and the checker read, and the rules a JSON Schema cannot state.
//! * [`plan`]: a validated scenario resolved into what a runner executes (`golden-check --plan`
//!   prints it for the Python and C++ runners), so that no runner parses the file.
//! * [`trace`]: what a runner records while it runs a scenario (no judgement).
//! * [`check`]: the one checker every trace (Rust, Python, C++; embedded engine or cluster) is
//!   judged by. The `golden-check <scenario.json> <trace.json>` binary runs it for the Python and
//!   C++ runners.

pub mod check;
pub mod plan;
pub mod scenario;
pub mod schema;
pub mod trace;

pub use check::{check, Report};
