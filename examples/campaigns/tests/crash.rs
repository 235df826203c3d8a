//! The service killed (SIGKILL) in the middle of a batch, then started again on the same
//! SQLite file: the same key answers what the batch committed with its campaign (the answer
//! is recorded in the campaign's own transaction, before the sends), the lookup's counts add
//! up, and the provider never sent anyone twice. An SMS or an opt-out whose process was
//! killed while the provider worked is recovered by its tool, on SQLite and PostgreSQL: sent
//! once.

use crate::support;

use crate::support::postgres;

use std::collections::HashSet;
use std::thread;
use std::time::{Duration, Instant};

use agent_tool_result::guarantee::SettlementState;
use agent_tool_result::http::header::IDEMPOTENT_REPLAYED;
use agent_tool_result::http::{RestOutcome, classify};
use serde_json::{Value, json};
use support::{Scratch, Service, numbers, provider_sends};

/// 20 may go now, 8 wait for the next hour, 2 opted out; the provider takes 50 ms a send; a
/// key the killed process held answers 600 ms after its last renewal.
const FLAGS: &[&str] = &[
    support::SHORT_LEASE[0],
    support::SHORT_LEASE[1],
    "--cap",
    "20",
    "--window-secs",
    "3600",
    "--provider-delay-ms",
    "50",
    "--opt-out",
    "+15550100000",
    "--opt-out",
    "+15550100001",
];

/// Each recipient the provider sent to, once; panics on a second send.
fn sent_once(sends: &[(Option<String>, String)], campaign: &str) -> usize {
    let mut seen = HashSet::new();
    for (id, phone) in sends
        .iter()
        .filter(|(id, _)| id.as_deref() == Some(campaign))
    {
        assert!(seen.insert(phone), "{phone} was sent twice by {id:?}");
    }
    seen.len()
}

fn kill_mid_batch(after_sends: usize) {
    let scratch = Scratch::new("crash");
    let db = scratch.db();
    let service = Service::start(&db, FLAGS);
    let batch = json!({ "recipients": numbers(30), "message": "Winter sale" });
    let request = service.batch_in_background("winter-1", &batch);
    let deadline = Instant::now() + Duration::from_secs(30);
    while provider_sends(&db).len() < after_sends {
        assert!(Instant::now() < deadline, "the batch never started sending");
        thread::sleep(Duration::from_millis(5));
    }
    service.kill();
    assert!(
        request.join().unwrap().is_none(),
        "the killed service answered"
    );
    let before_restart = provider_sends(&db).len();
    assert!(
        (after_sends..20).contains(&before_restart),
        "killed mid-batch: {before_restart} sends"
    );

    let service = Service::start(&db, FLAGS);
    // The killed call's answer was recorded with its campaign: the key replays it, and
    // never runs again.
    let replay = service.call("send_campaign_batch", "winter-1", &batch);
    assert_eq!(replay.headers()[IDEMPOTENT_REPLAYED], "true");
    let result = match classify(&replay) {
        RestOutcome::Deferred { result, .. } => result,
        other => panic!("the batch's recorded answer is a defer: {other:?}"),
    };
    assert_eq!(result.settlement(), SettlementState::Committed);
    let impact = result.impact().expect("counts");
    assert_eq!(
        (impact.committed(), impact.deferred(), impact.denied()),
        (Some(20), Some(8), Some(2)),
        "the answer the batch committed with its campaign"
    );
    assert_eq!(
        result.suggested_next_tool(),
        Some("lookup_marketing_campaigns")
    );
    let campaign = support::named(&result, "campaignId");

    // Replaying again changes nothing: the answer is frozen.
    let again = service.call("send_campaign_batch", "winter-1", &batch);
    assert_eq!(again.headers()[IDEMPOTENT_REPLAYED], "true");
    assert_eq!(again.body(), replay.body());

    // The service settles what was in flight and resumes the claimed recipients by itself.
    let status = service.lookup_until(&campaign, |r| r["counts"]["sent"] == 20);
    let counts = &status["counts"];
    let count = |name: &str| counts[name].as_u64().unwrap();
    assert_eq!(count("requested"), 30);
    assert_eq!(
        count("sent") + count("sending") + count("held") + count("denied"),
        count("requested"),
        "{status}"
    );
    assert_eq!((count("held"), count("denied")), (8, 2), "{status}");
    let sends = provider_sends(&db);
    assert_eq!(sent_once(&sends, &campaign) as u64, count("sent"));
    assert_eq!(sends.len(), 20, "nobody was sent twice");
    assert_eq!(status["status"], "held");
    assert!(status["nextAttemptAt"].is_string());
    assert!(status["updatedAt"].is_string());
    drop(scratch);
}

#[test]
fn a_batch_killed_mid_send_is_settled_not_resent() {
    kill_mid_batch(5);
}

#[test]
fn a_batch_killed_at_its_first_send_is_settled_not_resent() {
    kill_mid_batch(1);
}

/// Lookup results carry the envelope's contract: `ok` first, the campaign under `result`.
#[test]
fn an_unknown_campaign_is_a_no_target_envelope() {
    let scratch = Scratch::new("unknown");
    let service = Service::start(scratch.db(), FLAGS);
    let found = service.lookup("cmp_0000000000000000");
    assert_eq!(found["ok"], Value::Bool(false));
    assert_eq!(found["error"]["category"], "no-target");
    assert_eq!(found["error"]["code"], "campaign-not-found");
}

/// A guarantee tool whose call is killed while the provider works on its send: the tool's
/// name, its arguments, its operation's id field, where its lookup is served and what the
/// lookup answers once the call is settled.
struct Killed {
    tool: &'static str,
    arguments: Value,
    id_field: &'static str,
    lookup: &'static str,
    settled: (&'static str, Value),
}

/// `send_sms` and `opt_out`: each records its operation with its answer after the provider,
/// and recovers its abandoned key from that record.
fn killed_tools() -> [Killed; 2] {
    [
        Killed {
            tool: "send_sms",
            arguments: json!({ "to": "+15550177300", "body": "Your code is 1234" }),
            id_field: "messageId",
            lookup: "messages",
            settled: ("status", json!("sent")),
        },
        Killed {
            tool: "opt_out",
            arguments: json!({ "phone": "+15550177301" }),
            id_field: "optOutId",
            lookup: "opt-outs",
            settled: ("confirmed", json!(true)),
        },
    ]
}

/// A call whose process is killed while the provider works on its send (its key begun, its
/// operation not recorded): once the key's lease has passed, the next process that finds it
/// asks the tool's own recovery, which finds nothing recorded (and under the new fence
/// nothing can be), so the call runs again; its send, the same effect, lands once at the
/// provider.
fn killed_at_the_provider_is_recovered_by_its_tool(db: &str) {
    let flags = [
        "--provider-delay-ms",
        "1500",
        support::SHORT_LEASE[0],
        support::SHORT_LEASE[1],
    ];
    for killed in killed_tools() {
        let key = format!("{}-killed", killed.tool);
        let service = Service::start(db, &flags);
        let request = {
            let (base, tool, key) = (service.base.clone(), killed.tool, key.clone());
            let arguments = killed.arguments.clone();
            thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .build()
                    .into();
                agent
                    .post(format!("{base}/v1/tools/{tool}"))
                    .header("authorization", format!("Bearer {}", support::TOKEN))
                    .header("idempotency-key", format!("\"{key}\""))
                    .send_json(&arguments)
                    .ok()
                    .map(|response| response.status().as_u16())
            })
        };
        // Killed once its key is begun: the provider (1.5 s a send) has not answered yet, and
        // nothing is recorded, however slowly the machine runs.
        support::await_begun(db, &key);
        service.kill();
        assert_eq!(request.join().unwrap(), None, "the killed service answered");

        let service = Service::start(db, &flags);
        let first = service.call_after_lease(killed.tool, &key, &killed.arguments);
        let body = String::from_utf8_lossy(first.body()).into_owned();
        assert_eq!(first.status(), 200, "{}: {body}", killed.tool);
        assert!(
            !first.headers().contains_key(IDEMPOTENT_REPLAYED),
            "{}: nothing was recorded, so the call ran",
            killed.tool
        );
        let result = match classify(&first) {
            RestOutcome::Settled(result) => result,
            other => panic!("{}: {other:?}", killed.tool),
        };
        assert_eq!(result.settlement(), SettlementState::Committed, "{body}");
        let id = support::named(&result, killed.id_field);
        let again = service.call(killed.tool, &key, &killed.arguments);
        assert_eq!(again.headers()[IDEMPOTENT_REPLAYED], "true");
        assert_eq!(again.body(), first.body());
        let status = service.lookup_as(support::TOKEN, killed.lookup, &id);
        let (field, value) = &killed.settled;
        assert_eq!(&status["result"][field], value, "{status}");
        assert_eq!(
            operation_sends(db, &id),
            1,
            "{}: sent once, counted at the provider",
            killed.tool
        );
        service.kill();
    }
}

/// How many sends of operation `id` (a message, an opt-out's confirmation) the provider's log holds, on SQLite or PostgreSQL.
fn operation_sends(db: &str, id: &str) -> usize {
    if db.starts_with("postgres") {
        let provider = support::provider::Provider::connect(db);
        return provider
            .sends()
            .iter()
            .filter(|(_, message, _, _)| message == id)
            .count();
    }
    let connection = rusqlite::Connection::open(db).unwrap();
    connection
        .query_row(
            "SELECT COUNT(*) FROM provider_sends WHERE message_id = ?1",
            [id],
            |row| row.get::<_, i64>(0),
        )
        .map(|n| usize::try_from(n).unwrap())
        .unwrap()
}

#[test]
fn a_call_killed_at_the_provider_is_recovered_by_its_tool_on_sqlite() {
    let scratch = Scratch::new("crash-sms");
    killed_at_the_provider_is_recovered_by_its_tool(&scratch.db().to_string_lossy());
}

#[test]
fn a_call_killed_at_the_provider_is_recovered_by_its_tool_on_postgres() {
    let server = postgres::Postgres::start();
    killed_at_the_provider_is_recovered_by_its_tool(&server.database("campaigns_crash_sms"));
}
