//! The PostgreSQL ledger's schema: its table, its fence sequence, its indexes and the
//! functions that begin keys and record answers, as [`SCHEMA`] makes them at connect when
//! [`CURRENT`] finds them missing or from an earlier release.

/// Whether the schema is this release's: the table with every column [`SCHEMA`] adds, the
/// fence sequence, the indexes (the earlier B-tree on when keys were answered gone) and both
/// functions. Only then does a connect write nothing, so a role that may only read and write
/// the table connects once its owner has made it.
pub(super) const CURRENT: &str = "
    SELECT to_regclass('atr_fence') IS NOT NULL
        AND to_regclass('atr_idempotency_completed_brin') IS NOT NULL
        AND to_regclass('atr_idempotency_leased') IS NOT NULL
        AND to_regclass('atr_idempotency_completed') IS NULL
        AND to_regprocedure(
            'atr_record_v1(text, text, bigint, boolean, text, boolean, boolean)') IS NOT NULL
        AND to_regprocedure('atr_begin_v1(text[], text[], text[], text[], bigint)') IS NOT NULL
        AND (SELECT count(*) FROM pg_attribute
             WHERE attrelid = to_regclass('atr_idempotency')
                 AND attname IN ('fence', 'provisional') AND NOT attisdropped) = 2";

/// The table and the fence sequence, created at connect if they are missing (under an
/// advisory lock, so processes starting together do not race to create them). A table made
/// by an earlier release gets the columns it lacks (`fence`, `provisional`). Answered keys
/// are found for the purge by a BRIN index on when they were answered (they are written in
/// that order): next to nothing for each key's write to keep up, where a B-tree was a second
/// index entry for every key. Keys are begun through the function `atr_begin_v1` (see
/// `super::coalesce::BEGIN`) and answers recorded through `atr_record_v1` (the key's row updated
/// under its lease, the count of rows it updated returned): each server session plans their
/// statements once and keeps the plans, where a statement sent unnamed is planned on every
/// call, and planning was as much of a record's cost as running it. Nothing relies on a kept
/// plan, so a pooler in transaction mode changes nothing but which session plans. A release
/// that begins or records otherwise adds functions of other names, so processes of both
/// releases can share the ledger.
pub(super) const SCHEMA: &str = "
    BEGIN;
    SELECT pg_advisory_xact_lock(7462020);
    CREATE TABLE IF NOT EXISTS atr_idempotency (
        scope text NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        context text NOT NULL,
        claims integer NOT NULL DEFAULT 0,
        fence bigint,
        lease_until timestamptz,
        completed_at timestamptz,
        refused boolean,
        answer text,
        provisional boolean NOT NULL DEFAULT false,
        PRIMARY KEY (scope, key)
    );
    ALTER TABLE atr_idempotency ADD COLUMN IF NOT EXISTS fence bigint;
    ALTER TABLE atr_idempotency ADD COLUMN IF NOT EXISTS provisional boolean NOT NULL DEFAULT false;
    CREATE SEQUENCE IF NOT EXISTS atr_fence;
    DROP INDEX IF EXISTS atr_idempotency_completed;
    CREATE INDEX IF NOT EXISTS atr_idempotency_completed_brin
        ON atr_idempotency USING brin (completed_at);
    CREATE INDEX IF NOT EXISTS atr_idempotency_leased
        ON atr_idempotency (lease_until) WHERE completed_at IS NULL;
    DO $atr$ BEGIN
    IF to_regprocedure(
        'atr_record_v1(text, text, bigint, boolean, text, boolean, boolean)') IS NULL THEN
        CREATE FUNCTION atr_record_v1(p_scope text, p_key text, p_fence bigint,
            p_refused boolean, p_answer text, p_provisional boolean, p_unexpired boolean)
        RETURNS integer LANGUAGE plpgsql AS $record$
        DECLARE recorded integer;
        BEGIN
            UPDATE atr_idempotency SET completed_at = clock_timestamp(), refused = p_refused,
                answer = p_answer, provisional = p_provisional, lease_until = NULL
            WHERE scope = p_scope AND key = p_key AND fence = p_fence AND completed_at IS NULL
                AND (lease_until > clock_timestamp() OR NOT p_unexpired);
            GET DIAGNOSTICS recorded = ROW_COUNT;
            RETURN recorded;
        END $record$;
    END IF;
    IF to_regprocedure('atr_begin_v1(text[], text[], text[], text[], bigint)') IS NULL THEN
        CREATE FUNCTION atr_begin_v1(p_scopes text[], p_keys text[], p_prints text[],
            p_contexts text[], p_lease_ms bigint)
        RETURNS TABLE (scope text, key text, claims integer, context text,
            lease_until timestamptz, fence bigint)
        LANGUAGE plpgsql AS $begin$
        #variable_conflict use_column
        BEGIN
            RETURN QUERY
            INSERT INTO atr_idempotency AS t (scope, key, fingerprint, context, fence,
                lease_until)
            SELECT u.scope, u.key, u.fingerprint, u.context, nextval('atr_fence'),
                clock_timestamp() + p_lease_ms * interval '1 millisecond'
            FROM unnest(p_scopes, p_keys, p_prints, p_contexts)
                AS u(scope, key, fingerprint, context)
            ORDER BY u.scope, u.key
            ON CONFLICT (scope, key) DO UPDATE
                SET fence = EXCLUDED.fence, lease_until = EXCLUDED.lease_until,
                    claims = t.claims + 1
                WHERE t.completed_at IS NULL AND t.lease_until <= clock_timestamp()
                    AND t.fingerprint = EXCLUDED.fingerprint
            RETURNING t.scope, t.key, t.claims, t.context, t.lease_until, t.fence;
        END $begin$;
    END IF;
    END $atr$;
    COMMIT;";
