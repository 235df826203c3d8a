//! What the `tracing` and `metrics` features cost a keyed call when nothing listens: the
//! replay sequence on the memory ledger (where the ledger is cheapest, so the telemetry's
//! share is largest), a fresh call and its replay per iteration. Prints nanoseconds per call
//! pair and the features it was built with; `bench/telemetry-overhead.sh` builds it with and
//! without `tracing` (and `metrics`) and runs the builds in turns, side by side, for the ratio.

use std::time::Instant;

use agent_tool_result::JsonObject;
use agent_tool_result::guarantee::{Answer, GuaranteeResult};
use agent_tool_result::replay::{Call, IdempotencyKey, MemoryLedger, ReplyKind, Sequence};

/// Call pairs per measurement.
const PAIRS: usize = 100_000;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let features = [
        ("tracing", cfg!(feature = "tracing")),
        ("metrics", cfg!(feature = "metrics")),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(name, _)| *name)
    .collect::<Vec<_>>()
    .join(",");
    let arguments = serde_json::json!({ "to": "+15550100001", "body": "Your code is 4411" });
    let nanos = runtime.block_on(async {
        let sequence = Sequence::new(MemoryLedger::new());
        let pair = async |n: usize| {
            let call = || {
                let key = IdempotencyKey::new(format!("bench-{n}")).expect("a key");
                Call::of("send_sms", "acct_bench", key, &arguments)
            };
            let tool = |_| async { Answer::from(GuaranteeResult::<JsonObject>::committed()) };
            let fresh = sequence.run(call(), tool).await;
            let replay = sequence.run(call(), tool).await;
            assert_eq!(
                (fresh.kind(), replay.kind()),
                (ReplyKind::Ran, ReplyKind::Replayed)
            );
        };
        // Warm up: the ledger's maps, the allocator.
        for n in 0..PAIRS / 10 {
            pair(usize::MAX - n).await;
        }
        let started = Instant::now();
        for n in 0..PAIRS {
            pair(n).await;
        }
        started.elapsed().as_nanos() / PAIRS as u128
    });
    println!(
        "{nanos} ns per fresh call and replay (features: {})",
        if features.is_empty() {
            "none"
        } else {
            &features
        }
    );
}
