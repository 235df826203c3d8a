//! The provider's table on the test's own PostgreSQL server, read as it fills (reconnecting
//! when the server restarts under it), the checks every fault test makes of it, and a seeded
//! random source for fault rounds.

use std::collections::HashSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// One send: campaign (or empty), message (or empty), phone, and the sender's process id.
pub type Send = (String, String, String, u32);

/// A sync client of the test's own database, to read the provider's table as it fills.
pub struct Provider {
    url: String,
    runtime: tokio::runtime::Runtime,
    client: std::sync::Mutex<Option<tokio_postgres::Client>>,
}

impl Provider {
    pub fn connect(url: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        Provider {
            url: url.to_owned(),
            runtime,
            client: std::sync::Mutex::new(None),
        }
    }

    /// Every send so far, in order; none before the service created the table. While the
    /// server is down, waits for it (for at most 30 seconds).
    pub fn sends(&self) -> Vec<Send> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(sends) = self.try_sends() {
                return sends;
            }
            assert!(Instant::now() < deadline, "the server never came back");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn try_sends(&self) -> Option<Vec<Send>> {
        let mut client = self
            .client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if client
            .as_ref()
            .is_none_or(tokio_postgres::Client::is_closed)
        {
            *client = self.runtime.block_on(async {
                let (client, connection) =
                    tokio_postgres::connect(&self.url, tokio_postgres::NoTls)
                        .await
                        .ok()?;
                tokio::spawn(connection);
                Some(client)
            });
        }
        let rows = self.runtime.block_on(client.as_ref()?.query(
            "SELECT coalesce(campaign_id, ''), coalesce(message_id, ''), phone, sender \
             FROM provider_sends ORDER BY seq",
            &[],
        ));
        match rows {
            Ok(rows) => Some(
                rows.iter()
                    .map(|row| {
                        let sender: String = row.get(3);
                        let pid = sender.split('-').next().unwrap().parse().unwrap();
                        (row.get(0), row.get(1), row.get(2), pid)
                    })
                    .collect(),
            ),
            // No table yet: no sends.
            Err(err) if err.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
                Some(Vec::new())
            }
            Err(_) => {
                *client = None;
                None
            }
        }
    }

    /// Waits until there are at least `n` sends, for at most 20 seconds; returns them.
    pub fn until(&self, n: usize) -> Vec<Send> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let sends = self.sends();
            if sends.len() >= n {
                return sends;
            }
            assert!(
                Instant::now() < deadline,
                "only {} of {n} sends",
                sends.len()
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// Panics if anyone was sent twice (a campaign's recipient, or a message).
pub fn nobody_sent_twice(sends: &[Send]) {
    let mut seen = HashSet::new();
    for (campaign, message, phone, pid) in sends {
        assert!(
            seen.insert((campaign, message, phone)),
            "{phone} sent twice for {campaign}{message} (again by {pid})"
        );
    }
}

/// A small random source for fault rounds, seeded from the clock (printed, to repeat a run
/// with `CAMPAIGNS_FAULT_SEED`).
pub struct Rounds(u64);

impl Rounds {
    pub fn new(what: &str) -> Self {
        let seed = std::env::var("CAMPAIGNS_FAULT_SEED").map_or_else(
            |_| {
                let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
                now.as_secs() ^ u64::from(now.subsec_nanos()) << 20
            },
            |seed| seed.parse().unwrap(),
        );
        eprintln!("{what}: CAMPAIGNS_FAULT_SEED={seed}");
        Rounds(seed | 1)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    /// An index below `n`.
    pub fn index(&mut self, n: usize) -> usize {
        usize::try_from(self.below(n as u64)).unwrap()
    }
}
