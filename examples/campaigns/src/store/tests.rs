//! The store's own tests, on SQLite.

use std::time::Duration;

use agent_tool_result::JsonObject;
use agent_tool_result::guarantee::{Answer, GuaranteeResult};
use agent_tool_result::replay::{
    Begin, Done, Fingerprint, IdempotencyKey, Lease, Ledger, Scope, SqliteLedger,
};

use super::Store;
use super::campaigns::CampaignRow;
use super::messages::Message;
use super::window::SendWindow;
use crate::db::Target;

/// Three sends an hour, the hour started a minute before the tests (so none starts during
/// them, and the database's clock, which may read a millisecond behind the system's, is well
/// inside it).
static WINDOW: std::sync::LazyLock<SendWindow> = std::sync::LazyLock::new(|| SendWindow {
    cap: 3,
    length_ms: 3_600_000,
    origin_ms: std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| i64::try_from(since.as_millis()).unwrap_or(0))
        - 60_000,
});

const HI: Message<'static> = Message {
    id: "msg_1",
    principal: "acct",
    phone: "+15550000001",
};

fn phones(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("+1555000{i:04}")).collect()
}

fn note(text: &str) -> JsonObject {
    let mut fields = JsonObject::new();
    fields.insert("note".into(), text.into());
    fields
}

/// A batch's answer as the service makes it: where the campaign stands.
fn standing(row: &CampaignRow) -> Answer<JsonObject> {
    let impact = agent_tool_result::guarantee::Impact::new()
        .with_requested(row.requested)
        .with_committed(row.sent + row.sending)
        .with_deferred(row.held)
        .with_denied(row.denied);
    GuaranteeResult::committed()
        .with_impact(impact)
        .unwrap()
        .into()
}

/// Two processes' stores on one scratch file, and the ledger beside them.
async fn two(name: &str, lease: Duration) -> (Store, Store, SqliteLedger, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("campaigns-store-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("store.sqlite");
    let target = Target::Sqlite(path.clone());
    let timeout = Duration::from_secs(5);
    let a = Store::open(&target, lease, 1, timeout).await.unwrap();
    let b = Store::open(&target, lease, 1, timeout).await.unwrap();
    let ledger = SqliteLedger::open(&path).unwrap().with_lease(lease);
    (a, b, ledger, dir)
}

/// A fresh lease on `key`.
async fn lease(ledger: &SqliteLedger, key: &str) -> Lease {
    let print = Fingerprint::of("t", "acct", &serde_json::json!({ "key": key }));
    match ledger
        .begin(
            &Scope::principal("acct"),
            &IdempotencyKey::new(key).unwrap(),
            print,
            "",
        )
        .await
        .unwrap()
    {
        Begin::Fresh(lease) => lease,
        other => panic!("{other:?}"),
    }
}

/// Claims that expire are held again by another process and claimed anew under a greater
/// fence; the first claim's holder (a process paused past its lease, or a task of the
/// same process) can no longer send: nobody is sent twice, nobody is dropped.
#[tokio::test]
async fn an_expired_claim_is_held_again_and_its_first_holder_is_fenced_out() {
    let (a, b, ledger, dir) = two("expired", Duration::from_millis(150)).await;
    let key = lease(&ledger, "k1").await;
    let (done, claimed) = a
        .create_campaign(
            Some(&key),
            "cmp_a",
            "acct",
            "hi",
            &phones(5),
            *WINDOW,
            standing,
        )
        .await;
    assert!(matches!(done, Done::Recorded(_)), "{done:?}");
    assert_eq!(claimed.len(), 3);
    let [sent, late, _] = [0, 1, 2].map(|i| claimed[i].clone());
    assert!(a.mark_sent(&sent).await.unwrap());
    assert!(!a.mark_sent(&sent).await.unwrap(), "sent once");

    // While the claims are live, nobody else settles them.
    assert_eq!(b.reconcile().await.unwrap(), 0);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(b.reconcile().await.unwrap(), 2);
    let row = b.campaign("cmp_a", "acct").await.unwrap().unwrap();
    assert_eq!((row.sent, row.sending, row.held), (1, 0, 4));
    assert!(
        !a.renew_claim(&late).await.unwrap(),
        "the first holder lost it"
    );

    // Held again, claimed again under a greater fence: the stale claim sends nothing, the
    // new one sends.
    let claims = b.claim_due(|_| *WINDOW).await.unwrap();
    assert_eq!(claims.len(), 2, "the window's room: three, one sent");
    let again = claims.iter().find(|c| c.phone == late.phone).unwrap();
    assert!(again.fence > late.fence);
    assert!(!a.mark_sent(&late).await.unwrap(), "fenced out");
    assert!(b.mark_sent(again).await.unwrap());
    assert_eq!(
        a.campaign("cmp_a", "other").await.unwrap().map(|_| ()),
        None
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A campaign or message is created only under the current fence of its call's key: once
/// the key is taken over, the first call makes nothing, and its tool's recovery finds nothing made;
/// the answer commits with the effect.
#[tokio::test]
async fn creation_is_fenced_by_the_calls_key() {
    let (a, _, ledger, dir) = two("fenced", Duration::from_millis(100)).await;
    let first = lease(&ledger, "k2").await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    // Passed: nothing is made, even before anyone takes the key over.
    assert!(matches!(
        a.record_sent(Some(&first), &HI, note("late")).await,
        Done::Lost
    ));
    let print = Fingerprint::of("t", "acct", &serde_json::json!({ "key": "k2" }));
    let begin = async || {
        let key = IdempotencyKey::new("k2").unwrap();
        ledger
            .begin(&Scope::principal("acct"), &key, print, "")
            .await
            .unwrap()
    };
    let Begin::Abandoned(taken) = begin().await else {
        panic!("abandoned")
    };
    let (done, claimed) = a
        .create_campaign(
            Some(&first),
            "cmp_1",
            "acct",
            "hi",
            &phones(2),
            *WINDOW,
            standing,
        )
        .await;
    assert!(matches!(done, Done::Lost) && claimed.is_empty());
    assert!(a.campaign("cmp_1", "acct").await.unwrap().is_none());
    assert!(a.message("msg_1", "acct").await.unwrap().is_none());
    // The new holder makes it, once, its answer recorded with it.
    let current = taken.into_lease();
    let Done::Recorded(recorded) = a.record_sent(Some(&current), &HI, note("sent")).await else {
        panic!("recorded")
    };
    assert!(a.message("msg_1", "acct").await.unwrap().is_some());
    assert_eq!(begin().await, Begin::Replay(recorded));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn opted_out_recipients_are_denied_and_never_claimed() {
    let (a, _, ledger, dir) = two("opted-out", Duration::from_secs(30)).await;
    let key = lease(&ledger, "k3").await;
    let all = phones(4);
    a.opt_out(&all[0]).await.unwrap();
    let (done, claimed) = a
        .create_campaign(Some(&key), "cmp_b", "acct", "hi", &all, *WINDOW, standing)
        .await;
    let Done::Recorded(recorded) = done else {
        panic!("recorded")
    };
    let impact = recorded
        .answer()
        .unwrap()
        .result()
        .unwrap()
        .impact()
        .copied()
        .unwrap();
    assert_eq!((impact.denied(), impact.committed()), (Some(1), Some(3)));
    assert_eq!(claimed.len(), 3);
    assert!(!claimed.iter().any(|c| c.phone == all[0]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without a lease (outside the replay sequence) the record is a plain transaction, and its
/// answer the tool's own; a store that fails before it is the `unavailable` refusal.
#[tokio::test]
async fn an_unkeyed_send_answers_for_itself() {
    let (a, _, _, dir) = two("unkeyed", Duration::from_secs(30)).await;
    let Done::Answer(answer) = a.record_sent(None, &HI, note("plain")).await else {
        panic!("answered")
    };
    assert!(answer.result().is_some());
    assert!(a.message("msg_1", "acct").await.unwrap().is_some());
    std::fs::remove_file(dir.join("store.sqlite")).unwrap();
    let Done::Answer(refused) = a.record_sent(None, &HI, note("gone")).await else {
        panic!("refused")
    };
    assert_eq!(
        refused
            .refusal()
            .map(agent_tool_result::guarantee::Refusal::kind),
        Some(agent_tool_result::guarantee::RefusalKind::Unavailable)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
