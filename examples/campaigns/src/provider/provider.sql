-- The stand-in provider's log: every send it accepted, once per effect key (a second send of
-- the same effect is refused), with the process that sent it and the fence it was sent under.
CREATE TABLE IF NOT EXISTS provider_sends (
    seq SERIAL,
    campaign_id text,
    message_id text,
    phone text NOT NULL,
    body text NOT NULL,
    sent_ms bigint NOT NULL,
    sender text NOT NULL,
    effect_key text NOT NULL,
    fence bigint NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS provider_sends_effect ON provider_sends (effect_key);
CREATE INDEX IF NOT EXISTS provider_by_campaign ON provider_sends (campaign_id, phone);
CREATE INDEX IF NOT EXISTS provider_by_time ON provider_sends (sent_ms);
