//! The fuzz targets (`fuzz/fuzz_targets/*`) as ordinary tests on the stable toolchain: every
//! committed input in `fuzz/seeds/<target>/` (the valid seeds and every `regression-*` input a
//! fuzzer once crashed on) and a fixed set of deterministic mutations of each is run through the
//! same function libFuzzer calls (`fuzz/src/lib.rs`, compiled into this test as a module). As
//! under libFuzzer, any panic fails, even one the core would catch as a last resort.
//!
//! This is what `make test` runs of the fuzzers in every run; the coverage-guided search itself,
//! with its nightly, instrumented build, is `make fuzz` (scripts/fuzz.sh).

mod common;
#[allow(dead_code)]
#[path = "../../../fuzz/src/lib.rs"]
mod fuzz_lib;

use std::path::{Path, PathBuf};

use common::panics_on_this_thread;

type Target = fn(&[u8]);

/// Every fuzz target by the name of the library function its `fuzz_target!` calls.
fn target_fn(name: &str) -> Option<Target> {
    Some(match name {
        "response_frame" => fuzz_lib::response_frame,
        "log_batch" => fuzz_lib::log_batch,
        "compacted_row" => fuzz_lib::compacted_row,
        "kv_batch" => fuzz_lib::kv_batch,
        "engine_request" => fuzz_lib::engine_request,
        _ => return None,
    })
}

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// `(target file stem, library function it calls)` for every file in `fuzz/fuzz_targets/`.
fn targets() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(fuzz_dir().join("fuzz_targets")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let call = text
            .split("fluss_writer_fuzz::")
            .nth(1)
            .and_then(|rest| rest.split('(').next())
            .unwrap_or_else(|| panic!("{}: no call of fluss_writer_fuzz::<fn>(data)", path.display()))
            .trim()
            .to_string();
        out.push((stem, call));
    }
    out.sort();
    out
}

/// Runs `f(input)`; an error message if it panicked anywhere on this thread.
fn run_one(f: Target, input: &[u8]) -> Result<(), String> {
    let before = panics_on_this_thread();
    let outcome = std::panic::catch_unwind(|| f(input));
    let panics = panics_on_this_thread() - before;
    match outcome {
        Err(_) => Err("panicked".into()),
        Ok(()) if panics > 0 => Err(format!("panicked {panics} time(s), caught inside the code under test")),
        Ok(()) => Ok(()),
    }
}

/// A small deterministic generator (xorshift64*): the same mutations in every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Byte overwrites, bit flips, truncation, extension and splices of a seed, as libFuzzer's
/// simplest mutators do (the flags byte that asks a target to reseal the CRC is mutated too).
fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(6) {
            0 | 1 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] = rng.next() as u8;
            }
            2 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            3 => out.truncate(rng.below(out.len() + 1)),
            4 => {
                let extra = rng.below(16);
                out.extend((0..extra).map(|_| rng.next() as u8));
            }
            _ if out.len() > 2 => {
                // Copy a run of the input over another place of it.
                let len = 1 + rng.below(out.len() / 2);
                let from = rng.below(out.len() - len + 1);
                let to = rng.below(out.len() - len + 1);
                let run = out[from..from + len].to_vec();
                out[to..to + len].copy_from_slice(&run);
            }
            _ => out.push(rng.next() as u8),
        }
    }
    out
}

/// Mutations per committed input: 30,000 runs in about two seconds in a debug build.
const MUTATIONS_PER_INPUT: usize = 2_000;

#[test]
fn every_fuzz_target_is_replayed() {
    let targets = targets();
    assert!(targets.len() >= 5, "fuzz/fuzz_targets has {} targets", targets.len());
    for (stem, call) in &targets {
        assert!(
            target_fn(call).is_some(),
            "fuzz target {stem} calls fluss_writer_fuzz::{call}, which this replay does not know: add it to target_fn"
        );
        let seeds = fuzz_dir().join("seeds").join(stem);
        assert!(
            seeds.is_dir() && std::fs::read_dir(&seeds).unwrap().count() > 0,
            "fuzz target {stem} has no committed seeds in {}",
            seeds.display()
        );
    }
}

/// The committed valid seeds are what `fuzz/src/bin/seed_corpus.rs` writes today, so a change
/// of a format cannot leave the fuzzers starting from stale bytes.
#[test]
fn committed_seeds_match_the_seed_generator() {
    for (target, name, bytes) in fuzz_lib::seeds() {
        let path = fuzz_dir().join("seeds").join(target).join(&name);
        let committed = std::fs::read(&path).unwrap_or_else(|e| {
            panic!("{}: {e} (run: cargo run --manifest-path fuzz/Cargo.toml --bin seed_corpus fuzz/seeds)", path.display())
        });
        assert!(committed == bytes, "{} differs from seed_corpus's output: regenerate the seeds (cargo run --manifest-path fuzz/Cargo.toml --bin seed_corpus fuzz/seeds)", path.display());
    }
}

#[test]
fn committed_inputs_and_their_mutations_run_without_a_panic() {
    let mut failures = Vec::new();
    let mut runs = 0usize;
    for (stem, call) in targets() {
        let f = target_fn(&call).unwrap();
        let mut inputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(fuzz_dir().join("seeds").join(&stem))
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap())
            })
            .collect();
        inputs.sort();
        for (name, input) in &inputs {
            runs += 1;
            if let Err(e) = run_one(f, input) {
                failures.push(format!("{stem}/{name}: {e}"));
            }
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (input.len() as u64) << 17 ^ name.len() as u64);
            for i in 0..MUTATIONS_PER_INPUT {
                let m = mutate(input, &mut rng);
                runs += 1;
                if let Err(e) = run_one(f, &m) {
                    failures.push(format!("{stem}/{name} mutation {i} ({} bytes: {:02x?}): {e}", m.len(), &m[..m.len().min(64)]));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} replays failed (save an input as fuzz/seeds/<target>/regression-<what> to keep it):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(runs > 10_000, "only {runs} replays");
}

/// The witness works: a panic fails a replay, whether it escapes or is caught inside.
#[test]
fn a_panic_fails_a_replay_even_when_caught_inside() {
    fn escapes(_: &[u8]) {
        panic!("escapes");
    }
    fn caught(_: &[u8]) {
        let _ = std::panic::catch_unwind(|| panic!("caught inside"));
    }
    fn fine(_: &[u8]) {}
    assert!(run_one(escapes, b"x").is_err());
    assert!(run_one(caught, b"x").is_err());
    assert!(run_one(fine, b"x").is_ok());
}
