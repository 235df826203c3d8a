//! A guarantee result against `serde_json` on a plain struct with the same fields, side by
//! side. Run with `cargo bench -p agent-tool-result-tests --bench guarantee` and compare each `guarantee_*` row with its
//! `plain_*` row: the ratio is the cost of the contract (closed sets, validated code and
//! instant, the invariants, and the tool's own fields read beside the contract's).

use agent_tool_result::guarantee::{GuaranteeResult, Impact, PolicyCode};
use divan::{Bencher, black_box};
use serde::{Deserialize, Serialize};
use std::time::{Duration, UNIX_EPOCH};

fn main() {
    divan::main();
}

/// The tool's own fields: a campaign.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Campaign {
    campaign_id: String,
    name: String,
}

/// The same fields, plain: strings for the closed sets and the instant, no checks.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Plain {
    schema_version: u64,
    settlement: PlainSettlement,
    policy: PlainPolicy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    impact: Option<PlainImpact>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    recovery: Option<PlainRecovery>,
    #[serde(flatten)]
    campaign: Campaign,
}

#[derive(Serialize, Deserialize)]
struct PlainSettlement {
    state: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlainPolicy {
    decision: String,
    code: Option<String>,
    retry_at: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct PlainImpact {
    requested: Option<u64>,
    committed: Option<u64>,
    deferred: Option<u64>,
    denied: Option<u64>,
    failed: Option<u64>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PlainRecovery {
    suggested_next_tool: Option<String>,
}

fn typical() -> GuaranteeResult<Campaign> {
    let impact = Impact::new()
        .with_requested(100)
        .with_committed(40)
        .with_deferred(60);
    GuaranteeResult::deferred(PolicyCode::CAMPAIGN_SEND_WINDOW)
        .with_impact(impact)
        .and_then(|held| held.with_retry_at(UNIX_EPOCH + Duration::from_secs(1_796_115_600)))
        .expect("40 + 60 of 100, and a defer takes a retry time")
        .with_next_tool("lookup_marketing_campaigns")
        .with_fields(Campaign {
            campaign_id: "cmp_7f3a".into(),
            name: "December newsletter".into(),
        })
        .expect("no contract field")
}

#[divan::bench(sample_count = 2000, sample_size = 64)]
fn guarantee_serialize(bencher: Bencher) {
    let result = typical();
    bencher.bench(|| black_box(&result).to_json().unwrap());
}

#[divan::bench(sample_count = 2000, sample_size = 64)]
fn plain_serialize(bencher: Bencher) {
    let plain: Plain = serde_json::from_str(&typical().to_json().unwrap()).unwrap();
    bencher.bench(|| serde_json::to_string(black_box(&plain)).unwrap());
}

#[divan::bench(sample_count = 2000, sample_size = 64)]
fn guarantee_parse(bencher: Bencher) {
    let text = typical().to_json().unwrap();
    bencher.bench(|| GuaranteeResult::<Campaign>::from_json(black_box(&text)).unwrap());
}

#[divan::bench(sample_count = 2000, sample_size = 64)]
fn plain_parse(bencher: Bencher) {
    let text = typical().to_json().unwrap();
    bencher.bench(|| serde_json::from_str::<Plain>(black_box(&text)).unwrap());
}
