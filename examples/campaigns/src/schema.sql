-- The campaign service's tables, written once for SQLite and PostgreSQL (PostgreSQL's
-- dialect; `SERIAL` is an auto-numbered integer primary key, which each backend spells its own
-- way). The idempotency ledger's tables are the library's, beside these; the stand-in
-- provider's log is its own (`src/provider/provider.sql`).
CREATE TABLE IF NOT EXISTS opt_outs (phone text PRIMARY KEY);
CREATE TABLE IF NOT EXISTS campaigns (
    id text PRIMARY KEY,
    principal text NOT NULL,
    message text NOT NULL,
    created_ms bigint NOT NULL,
    updated_ms bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS recipients (
    campaign_id text NOT NULL REFERENCES campaigns (id),
    phone text NOT NULL,
    state text NOT NULL CHECK (state IN ('sending', 'sent', 'held', 'denied')),
    next_attempt_ms bigint,
    fence bigint NOT NULL DEFAULT 0,
    claim_until_ms bigint,
    sent_ms bigint,
    PRIMARY KEY (campaign_id, phone)
);
CREATE INDEX IF NOT EXISTS recipients_due ON recipients (state, next_attempt_ms);
CREATE TABLE IF NOT EXISTS messages (
    id text PRIMARY KEY,
    principal text NOT NULL,
    phone text NOT NULL,
    state text NOT NULL CHECK (state IN ('sent')),
    updated_ms bigint NOT NULL
);
-- Each rate-limited account's place in its limit, shared by every process (the generic cell
-- rate algorithm, counted a batch of calls at a time: `src/store/rates.rs`): when the
-- account's quota is whole again, in microseconds since 1970 (its theoretical arrival time),
-- when it was last counted, how many calls that count granted, and the limit it counted by
-- (its calls per window, and the microseconds one call takes to be restored).
CREATE TABLE IF NOT EXISTS rate_counts (
    account text PRIMARY KEY,
    tat_us bigint NOT NULL,
    checked_us bigint NOT NULL,
    granted bigint NOT NULL,
    calls bigint NOT NULL,
    period_us bigint NOT NULL
);
-- An account's rate limit set while the service runs, in calls per window: every process
-- counts by it from its next count on, over the limit its flags give. An operator sets it
-- (`INSERT ... ON CONFLICT (account) DO UPDATE`) and removes it to go back to the flags.
CREATE TABLE IF NOT EXISTS rate_settings (
    account text PRIMARY KEY,
    calls bigint NOT NULL CHECK (calls > 0)
);
-- `opt_out`'s record of each opt-out (`src/tools/opt_out.rs`): the number, whether it was sent
-- a confirmation, how many held recipients were denied with it.
CREATE TABLE IF NOT EXISTS opt_out_requests (
    id text PRIMARY KEY,
    principal text NOT NULL,
    phone text NOT NULL,
    confirmed integer NOT NULL,
    withdrawn bigint NOT NULL,
    created_ms bigint NOT NULL
);
