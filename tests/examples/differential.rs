//! The differential harness's long run: `cargo run --release -p agent-tool-result-tests --example differential -- N [SEED]`
//! mutates the conformance fixtures N times (default 1,000,000) on every core and checks that
//! every reader of the crate gives one verdict. It prints the count and exits 1 on the first
//! disagreement, with the document.

#[path = "../support/differential.rs"]
mod differential;

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use agent_tool_result::validate::Validator;
use differential::{Rng, disagreement, mutate, seeds};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let total: u64 = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let seed: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let seeds = seeds(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")));
    let validator = Validator::shared();
    let threads = std::thread::available_parallelism().map_or(1, usize::from) as u64;
    let (done, failed) = (AtomicU64::new(0), AtomicBool::new(false));
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (seeds, done, failed) = (&seeds, &done, &failed);
            scope.spawn(move || {
                let mut rng = Rng::new(seed.wrapping_mul(1_000_003).wrapping_add(t));
                let share = total / threads + u64::from(t < total % threads);
                for _ in 0..share {
                    if failed.load(Ordering::Relaxed) {
                        return;
                    }
                    let mut text = rng.pick(seeds).clone();
                    for _ in 0..=rng.below(2) {
                        text = mutate(&text, &mut rng);
                    }
                    if let Some(why) = disagreement(validator, &text) {
                        failed.store(true, Ordering::Relaxed);
                        eprintln!("disagreement: {why}\n{text}");
                        return;
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    let done = done.load(Ordering::Relaxed);
    println!("{done} mutations checked, seed {seed}, {threads} threads");
    if failed.load(Ordering::Relaxed) {
        ExitCode::FAILURE
    } else {
        println!("no disagreement, no panic");
        ExitCode::SUCCESS
    }
}
