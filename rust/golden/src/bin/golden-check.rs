//! `golden-check <scenario.json> <trace.json>`: judge a runner's trace. Exit 0 = pass; 1 = failed
//! checks (each listed on stderr); 2 = usage or unreadable input.
//! `golden-check --plan <scenario.json>`: print the scenario's plan (what a runner executes) as
//! JSON; exit 2 if the file does not validate (the runner then records an empty trace, and the
//! check names what is wrong).

use std::process::ExitCode;

fn read(path: &str) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path}: invalid JSON: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, scenario] = args.as_slice() {
        if flag == "--plan" {
            let plan = read(scenario).and_then(|doc| fluss_writer_golden::plan::load(&doc).map_err(|e| e.join("; ")));
            return match plan.and_then(|p| serde_json::to_string(&p).map_err(|e| e.to_string())) {
                Ok(p) => {
                    println!("{p}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("golden-check: {scenario}: {e}");
                    ExitCode::from(2)
                }
            };
        }
    }
    let [scenario, trace] = args.as_slice() else {
        eprintln!("usage: golden-check <scenario.json> <trace.json> | golden-check --plan <scenario.json>");
        return ExitCode::from(2);
    };
    let inputs = read(scenario).and_then(|s| {
        let t = read(trace)?;
        let t: fluss_writer_golden::trace::Trace = serde_json::from_value(t).map_err(|e| format!("{trace}: not a golden trace: {e}"))?;
        Ok((s, t))
    });
    let (doc, trace) = match inputs {
        Ok(x) => x,
        Err(e) => {
            eprintln!("golden-check: {e}");
            return ExitCode::from(2);
        }
    };
    let report = fluss_writer_golden::check(&doc, &trace);
    if report.passed() {
        println!("golden-check: {scenario}: {} checks passed ({} runner, {})", report.checks, trace.runner, trace.target);
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "golden-check: {scenario}: {} of {} checks failed ({} runner, {}):",
            report.failures.len(),
            report.checks,
            trace.runner,
            trace.target
        );
        for f in &report.failures {
            eprintln!("  {f}");
        }
        ExitCode::from(1)
    }
}
