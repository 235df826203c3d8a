//! The service as several processes on one PostgreSQL database (a server of the test's own,
//! on 127.0.0.1): a batch sent to one process, replayed on another and looked up from a third
//! agree, and a second account's batch is not deferred by the first's full window; 16 clients x 50 keys, each sent to two processes at once, run every key once; two
//! accounts sending one key stay apart; and twenty rounds of SIGKILL, during a request and
//! during the background release of a hold, leave nobody sent twice, every key answered, and
//! counts that add up.

use crate::support;

use crate::support::pgbouncer;
use crate::support::postgres;

use std::collections::{HashMap, HashSet};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent_tool_result::guarantee::SettlementState;
use agent_tool_result::http::header::IDEMPOTENT_REPLAYED;
use pgbouncer::PgBouncer;
use postgres::Postgres;
use serde_json::{Value, json};
use support::provider::{Provider, Rounds, nobody_sent_twice};
use support::{AMPLE_STATEMENTS, Service, answered_everywhere, campaign_id};

#[test]
fn three_processes_agree_and_run_every_key_once() {
    let server = Postgres::start();
    three_processes_agree(&server.database("campaigns_three"));
}

/// The same three processes through PgBouncer in transaction mode, with two server
/// connections for all of them: every transaction may land on another server connection.
#[test]
fn three_processes_agree_through_pgbouncer_in_transaction_mode() {
    through_pgbouncer("campaigns_pooled", 2, three_processes_agree);
}

/// Runs `test` on the database `name` through PgBouncer in transaction mode with `servers`
/// server connections, and checks that the pooler logged no error.
fn through_pgbouncer(name: &str, servers: u32, test: impl FnOnce(&str)) {
    let server = Postgres::start();
    server.database(name);
    let bouncer = PgBouncer::transaction_mode(server.port(), servers);
    test(&bouncer.url(name));
    let log = bouncer.log();
    assert!(!log.contains("ERROR"), "PgBouncer logged errors: {log}");
}

/// A session setting in the URL, which PgBouncer refuses at connect: the service does not
/// start, and says which setting and what to do.
#[test]
fn a_session_setting_pgbouncer_refuses_is_named_at_start() {
    let server = Postgres::start();
    server.database("campaigns_options");
    let bouncer = PgBouncer::transaction_mode(server.port(), 2);
    let url = format!(
        "{}?options=-c%20lock_timeout%3D1000",
        bouncer.url("campaigns_options")
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_campaigns"))
        .args(["--db", &url, "--addr", "127.0.0.1:0"])
        .output()
        .expect("the service runs");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    for words in [
        "`options`",
        "ignore_startup_parameters",
        "remove `options` from the URL",
        "unsupported startup parameter: options",
    ] {
        assert!(said.contains(words), "{words:?} in {said}");
    }
}

/// Two accounts, each with its token.
const TWO_ACCOUNTS: [&str; 4] = ["--token", "acct_a=token-a", "--token", "acct_b=token-b"];

/// Starts three processes on `url` with `flags` and the two accounts.
fn three_services(url: &str, flags: &[&str]) -> Vec<Service> {
    let flags = [flags, &TWO_ACCOUNTS].concat();
    (0..3).map(|_| Service::start(url, &flags)).collect()
}

fn three_processes_agree(url: &str) {
    let url = url.to_owned();
    // Through the pooler, 48 connections' transactions queue for two server connections.
    let flags = [
        &["--cap", "20", "--window-secs", "3600"][..],
        &AMPLE_STATEMENTS,
    ]
    .concat();
    let services = three_services(&url, &flags);
    let provider = Provider::connect(&url);

    // A batch sent to one process, its replay to another, its lookup from the third.
    let batch = json!({ "recipients": support::numbers(30), "message": "Winter sale" });
    let first = services[0].call_as("token-a", "send_campaign_batch", "winter-1", &batch);
    assert_eq!(
        first.status(),
        202,
        "{}",
        String::from_utf8_lossy(first.body())
    );
    let id = campaign_id(&first);
    let replay = services[1].call_as("token-a", "send_campaign_batch", "winter-1", &batch);
    assert_eq!(replay.status(), 202);
    assert_eq!(replay.body(), first.body());
    assert_eq!(replay.headers()[IDEMPOTENT_REPLAYED], "true");
    assert_eq!(
        replay.headers()["retry-after"],
        first.headers()["retry-after"]
    );
    // The claimed recipients are sent after the answer: looked up once the window's 20 are.
    // No claim in flight is not enough: on a loaded machine a claim may outlive its lease
    // before its send, and its recipient is held again, due at once, until claimed anew.
    let looked = services[2].lookup_until_as("token-a", &id, |status| {
        status["counts"]["sending"] == 0 && status["counts"]["sent"].as_u64() >= Some(20)
    });
    let counts = &looked["counts"];
    assert_eq!(
        (
            &counts["requested"],
            &counts["sent"],
            &counts["held"],
            &counts["sending"]
        ),
        (&json!(30), &json!(20), &json!(10), &json!(0)),
        "{looked}"
    );
    two_accounts_on_one_key(&services, &provider, &id);
    racing_keys_run_once(&services, &provider);
}

/// A second account: the same key is its own call wherever it is sent, and what the first
/// account made is not there for it to look up.
fn two_accounts_on_one_key(services: &[Service], provider: &Provider, id: &str) {
    // Another account: the same key with other recipients is its own call, sent now on
    // another process although the first account filled its window there (each account has
    // a window of its own), and the first account's campaign is not there for it to look up.
    let other = json!({ "recipients": ["+15557770001"], "message": "Hello" });
    let theirs = services[2].call_as("token-b", "send_campaign_batch", "winter-1", &other);
    assert_eq!(
        theirs.status(),
        200,
        "{}",
        String::from_utf8_lossy(theirs.body())
    );
    assert!(theirs.headers().get(IDEMPOTENT_REPLAYED).is_none());
    assert_ne!(campaign_id(&theirs), id);
    let hidden = services[0].lookup_as("token-b", "campaigns", id);
    assert_eq!(hidden["ok"], false, "{hidden}");
    assert_eq!(provider.sends().len(), 21);
    // Two accounts, one process, one key, two payloads: both run, each replays its own.
    let (for_a, for_b) = (
        json!({ "to": "+15557770002", "body": "for a" }),
        json!({ "to": "+15557770003", "body": "for b" }),
    );
    let sent_a = services[1].call_as("token-a", "send_sms", "shared", &for_a);
    let sent_b = services[1].call_as("token-b", "send_sms", "shared", &for_b);
    for sent in [&sent_a, &sent_b] {
        assert_eq!(
            sent.status(),
            200,
            "{}",
            String::from_utf8_lossy(sent.body())
        );
        assert!(sent.headers().get(IDEMPOTENT_REPLAYED).is_none());
    }
    assert_ne!(sent_a.body(), sent_b.body());
    let again_b = services[1].call_as("token-b", "send_sms", "shared", &for_b);
    assert_eq!(again_b.body(), sent_b.body());
    assert_eq!(again_b.headers()[IDEMPOTENT_REPLAYED], "true");
    assert_eq!(provider.sends().len(), 23);
}

/// 16 clients x 50 keys, each sent to two processes at once: every key runs once, and
/// replays from the third.
fn racing_keys_run_once(services: &[Service], provider: &Provider) {
    // 16 clients x 50 keys, each key sent to two processes at once.
    let answers: Vec<(String, String, String)> = thread::scope(|scope| {
        let clients: Vec<_> = (0..16)
            .map(|client| {
                let services = &services;
                scope.spawn(move || {
                    (0..50)
                        .map(|k| {
                            let key = format!("c{client}-k{k}");
                            let sms =
                                json!({ "to": format!("+1556{client:02}{k:05}"), "body": "hi" });
                            let (a, b) = ((client + k) % 3, (client + k + 1) % 3);
                            let (one, two) = thread::scope(|both| {
                                let one = both.spawn(|| {
                                    services[a].call_as("token-a", "send_sms", &key, &sms)
                                });
                                let two = services[b].call_as("token-a", "send_sms", &key, &sms);
                                (one.join().unwrap(), two)
                            });
                            let said = |answer: &http::Response<Vec<u8>>| {
                                let status = answer.status().as_u16();
                                if status == 200 || status == 409 {
                                    status.to_string()
                                } else {
                                    format!("{status} {}", String::from_utf8_lossy(answer.body()))
                                }
                            };
                            (key, said(&one), said(&two))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        clients
            .into_iter()
            .flat_map(|c| c.join().unwrap())
            .collect()
    });
    assert_eq!(answers.len(), 800);
    for (key, one, two) in &answers {
        // One ran; the other was a replay (200) or found it in flight (409).
        assert!(
            [("200", "200"), ("200", "409"), ("409", "200")]
                .contains(&(one.as_str(), two.as_str())),
            "{key}: {one} {two}"
        );
    }
    let sends = provider.sends();
    nobody_sent_twice(&sends);
    let messages: HashSet<&String> = sends
        .iter()
        .filter(|(_, message, ..)| !message.is_empty())
        .map(|(_, message, ..)| message)
        .collect();
    assert_eq!(messages.len(), 802, "every key executed once");
    // Every key replays from the third process.
    for (i, (key, ..)) in answers.iter().enumerate() {
        let (client, k): (usize, usize) = (i / 50, i % 50);
        let sms = json!({ "to": format!("+1556{client:02}{k:05}"), "body": "hi" });
        let again = services[(client + k + 2) % 3].call_as("token-a", "send_sms", key, &sms);
        assert_eq!(again.status(), 200, "{key}");
        assert_eq!(again.headers()[IDEMPOTENT_REPLAYED], "true", "{key}");
    }
    assert_eq!(provider.sends().len(), sends.len());
}

/// Waits until the next send window (a second long) has just begun.
fn at_a_window_start() {
    loop {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .subsec_millis();
        if ms < 30 {
            return;
        }
        thread::sleep(Duration::from_millis(u64::from(1000 - ms)));
    }
}

/// Campaign `id` (nine to send, one opted out) is sent in full, each recipient once.
fn hold_finished(looker: &Service, provider: &Provider, id: &str, round: usize) {
    let status = looker.lookup_until(id, |status| {
        status["counts"]["sent"] == 9 && status["counts"]["sending"] == 0
    });
    assert_eq!(status["counts"]["held"], 0, "round {round}");
    assert_eq!(status["counts"]["denied"], 1, "round {round}");
    assert_eq!(status["counts"]["requested"], 10, "round {round}");
    let sends = provider.sends();
    nobody_sent_twice(&sends);
    let of_campaign = sends
        .iter()
        .filter(|(campaign, ..)| *campaign == id)
        .count();
    assert_eq!(of_campaign, 9, "round {round}");
}

#[test]
fn twenty_kills_leave_nobody_sent_twice_and_every_key_answered() {
    const OPTED_OUT: &str = "+15559990000";
    const CAP: usize = 5;
    let server = Postgres::start();
    let url = server.database("campaigns_kills");
    // Five sends a window of a second, 30 ms a send: a batch of ten sends five now and holds
    // four (one opted out) for the next window, which some process releases.
    let flags = [
        "--cap",
        "5",
        "--window-secs",
        "1",
        "--provider-delay-ms",
        "30",
        "--opt-out",
        OPTED_OUT,
        support::SHORT_LEASE[0],
        support::SHORT_LEASE[1],
    ];
    let mut services: Vec<Service> = (0..3).map(|_| Service::start(&url, &flags)).collect();
    let provider = Provider::connect(&url);
    let mut rounds = Rounds::new("the kill rounds");
    let mut campaigns = HashMap::new();
    for round in 0..20 {
        let during_request = round % 2 == 0;
        let key = format!("round-{round}");
        let mut recipients: Vec<String> =
            (0..9).map(|i| format!("+1557{round:02}{i:05}")).collect();
        recipients.push(OPTED_OUT.to_owned());
        let batch = json!({ "recipients": recipients, "message": format!("Round {round}") });
        let before = provider.sends().len();
        let target = usize::try_from(rounds.below(3)).unwrap();
        let cut = usize::try_from(1 + rounds.below(CAP as u64 - 1)).unwrap();
        at_a_window_start();
        let request = services[target].batch_in_background(&key, &batch);
        let mut request = Some(request);
        let mut first = None;
        let victim = if during_request {
            // Killed with `cut` of its five sends made: the caller never learns the outcome.
            provider.until(before + cut);
            target
        } else {
            let answered = request.take().unwrap().join().unwrap();
            assert_eq!(
                answered.as_ref().map(|a| a.status),
                Some(202),
                "round {round}"
            );
            first = answered;
            // Killed while it releases the held four, with `cut` of them sent.
            let sends = provider.until(before + CAP + cut.min(3));
            let pid = sends.last().unwrap().3;
            services
                .iter()
                .position(|service| service.pid() == pid)
                .unwrap_or_else(|| panic!("round {round}: a send by {pid}, not a service"))
        };
        services.remove(victim).kill();
        services.insert(victim, Service::start(&url, &flags));
        if let Some(request) = request {
            first = request.join().unwrap();
        }

        let (id, settlement) = answered_everywhere(&services, &key, &batch, round, first.as_ref());
        // The survivors finish the hold; the counts add up.
        let looker = &services[usize::try_from(rounds.below(3)).unwrap()];
        hold_finished(looker, &provider, &id, round);
        campaigns.insert(id, (during_request, settlement));
    }
    let sends = provider.sends();
    nobody_sent_twice(&sends);
    assert_eq!(sends.len(), 20 * 9);
    assert_eq!(campaigns.len(), 20);
    let unknown = campaigns
        .values()
        .filter(|(_, settlement)| *settlement == SettlementState::Unknown)
        .count();
    eprintln!(
        "20 rounds: {unknown} keys answered unknown, {} committed",
        20 - unknown
    );
}

/// An MCP session on one process, and a fresh one on another: the same counts, and the same
/// key in the second session replays the first result (as REST on a third does) and sends
/// nothing.
#[test]
fn mcp_sessions_on_two_processes_read_one_campaign() {
    use agent_tool_result::guarantee::GuaranteeResult;
    use agent_tool_result::replay::MCP_ARGUMENT;
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, CallToolResult};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    async fn call(service: &Service, tool: &str, arguments: Value) -> CallToolResult {
        let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", service.base))
            .auth_header(support::TOKEN);
        let session =
            ().serve(StreamableHttpClientTransport::from_config(config))
                .await
                .expect("the session initializes");
        let Value::Object(arguments) = arguments else {
            unreachable!("arguments are an object")
        };
        let result = session
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
            .await
            .expect("a tool result, not a JSON-RPC error");
        session.cancel().await.unwrap();
        result
    }

    let server = Postgres::start();
    let url = server.database("campaigns_mcp");
    let flags = ["--cap", "5", "--window-secs", "3600"];
    let services: Vec<Service> = (0..3).map(|_| Service::start(&url, &flags)).collect();
    let provider = Provider::connect(&url);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let batch = json!({
        "recipients": support::numbers(8),
        "message": "Winter sale",
        MCP_ARGUMENT: "winter-mcp",
    });

    // Session 1, on the first process.
    let held = runtime.block_on(call(&services[0], "send_campaign_batch", batch.clone()));
    let result = GuaranteeResult::<Value>::from_rmcp(&held).unwrap();
    let campaign = support::named(&result, "campaignId");
    assert_eq!(provider.sends().len(), 5);

    // Session 2, on the second: the same counts, and the same key replays.
    let found = runtime.block_on(call(
        &services[1],
        "lookup_marketing_campaigns",
        json!({ "campaignId": campaign }),
    ));
    let status = &found.structured_content.as_ref().unwrap()["result"];
    assert_eq!(
        status["counts"],
        json!({ "requested": 8, "sent": 5, "sending": 0, "held": 3, "denied": 0 })
    );
    let replay = runtime.block_on(call(&services[1], "send_campaign_batch", batch.clone()));
    assert_eq!(replay.structured_content, held.structured_content);
    assert_eq!(provider.sends().len(), 5);

    // REST on the third: the same key (as its header) is the same decision.
    let mut arguments = batch;
    let key = arguments
        .as_object_mut()
        .unwrap()
        .remove(MCP_ARGUMENT)
        .unwrap();
    let over_rest = services[2].call("send_campaign_batch", key.as_str().unwrap(), &arguments);
    assert_eq!(over_rest.status(), 202);
    assert_eq!(over_rest.headers()[IDEMPOTENT_REPLAYED], "true");
    let body: Value = serde_json::from_slice(over_rest.body()).unwrap();
    assert_eq!(Some(&body), held.structured_content.as_ref());
    assert_eq!(
        services[2].lookup(&campaign)["result"]["counts"],
        status["counts"]
    );
    assert_eq!(provider.sends().len(), 5);
}

/// One account's rate limit is the account's, not each process's: three processes on one
/// database, each started with a limit of 4 calls per 120 s, admit 4 of the account's 12
/// calls spread over them and refuse the other 8 (429, `Retry-After`, the `RateLimit` fields),
/// sending nothing for them; another account's calls are counted apart.
#[test]
fn one_rate_limit_per_account_across_three_processes() {
    let server = Postgres::start();
    let url = server.database("campaigns_rates");
    one_rate_limit_per_account(&url);
}

/// The same limit through PgBouncer in transaction mode: each count is a transaction of its
/// own (its commit not waiting for a flush, set for that transaction alone), whichever server
/// connection it lands on.
#[test]
fn one_rate_limit_per_account_through_pgbouncer_in_transaction_mode() {
    through_pgbouncer("campaigns_rates_pooled", 2, one_rate_limit_per_account);
}

/// What a count's transaction sets stays in it: through PgBouncer with one server connection
/// (so every transaction lands on the same one), a query run as a count sees its commit not
/// waiting for a flush and the service's lock timeout, and the next statement sees the
/// server's own settings; a count that fails is an error, and the statement after it runs.
#[test]
fn a_counts_settings_stay_in_its_transaction() {
    through_pgbouncer("campaigns_count_settings", 1, count_settings);
}

fn count_settings(url: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let target = campaigns::db::Target::parse(url);
        let db = campaigns::db::Db::open(&target, "", 2, Duration::from_secs(3))
            .await
            .unwrap();
        let settings =
            "SELECT current_setting('synchronous_commit'), current_setting('lock_timeout')";
        let row = |rows: Vec<campaigns::db::sql::Row>| {
            let row = &rows[0];
            (row.text(0), row.text(1))
        };
        let mut conn = db.conn().await.unwrap();
        let counted = conn.query_unflushed(settings, &[]).await.unwrap();
        assert_eq!(row(counted), ("off".to_owned(), "3s".to_owned()));
        let alone = conn.query(settings, &[]).await.unwrap();
        assert_eq!(row(alone), ("on".to_owned(), "0".to_owned()));
        drop(conn);

        let mut conn = db.conn().await.unwrap();
        let failed = conn
            .query_unflushed("SELECT CAST('not a number' AS INT)", &[])
            .await;
        assert!(failed.is_err());
        drop(conn);
        // The one server connection is not left in a failed transaction.
        let after = db.conn().await.unwrap().query(settings, &[]).await.unwrap();
        assert_eq!(row(after), ("on".to_owned(), "0".to_owned()));
    });
}

/// Three processes on `url` limited to 4 calls of an account per 120 s.
fn one_rate_limit_per_account(url: &str) {
    let services = three_services(url, &["--rate-limit", "4", "--rate-window-secs", "120"]);
    let provider = Provider::connect(url);
    let sms = |n: usize| json!({ "to": support::numbers(n + 1)[n], "body": "Your code is 4411" });
    let answers: Vec<_> = (0..12)
        .map(|n| services[n % 3].call_as("token-a", "send_sms", &format!("rate-{n}"), &sms(n)))
        .collect();
    let admitted = answers.iter().filter(|r| r.status() == 200).count();
    let refused: Vec<_> = answers.iter().filter(|r| r.status() == 429).collect();
    assert_eq!(
        (admitted, refused.len()),
        (4, 8),
        "{:?}",
        answers
            .iter()
            .map(http::Response::status)
            .collect::<Vec<_>>()
    );
    for response in &refused {
        support::assert_rate_limited(
            response,
            r#""per-account";q=4;w=120"#,
            Duration::from_secs(120),
        );
    }
    // The admitted calls' standings count down across the processes.
    let remaining: Vec<&str> = answers
        .iter()
        .filter(|r| r.status() == 200)
        .map(|r| r.headers()["ratelimit"].to_str().unwrap())
        .collect();
    for (left, standing) in [3, 2, 1, 0].iter().zip(&remaining) {
        assert!(standing.contains(&format!(";r={left};")), "{remaining:?}");
    }
    // Nothing of the refused calls was sent; the other account is counted apart.
    assert_eq!(provider.sends().len(), 4);
    let other = services[1].call_as("token-b", "send_sms", "rate-b", &sms(20));
    assert_eq!(other.status(), 200);
}
