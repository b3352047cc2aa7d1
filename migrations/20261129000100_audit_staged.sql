-- Records are staged here by the transaction of the change they describe,
-- without waiting for their log's chain lock, and linked into the chain
-- in batches (`audit::store::link`): one commit, one WAL flush, per batch
-- instead of per record, so a busy log is not bounded by the disk's
-- flushes per second. Each staged row announces its log on the
-- 'paydesk_audit' channel when its transaction commits.
CREATE TABLE audit_staged (
    id          bigserial PRIMARY KEY,
    occurred_at timestamptz NOT NULL,
    tenant_id   uuid,
    actor_id    uuid,
    actor_email text NOT NULL,
    action      text NOT NULL,
    target      text NOT NULL,
    outcome     text NOT NULL,
    ip          text NOT NULL,
    user_agent  text NOT NULL,
    details     jsonb NOT NULL
);
CREATE INDEX audit_staged_log_idx
    ON audit_staged (COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid), id);

-- One notification per log and transaction: Postgres folds identical
-- payloads sent in one transaction.
CREATE FUNCTION announce_audit_staged() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('paydesk_audit', COALESCE(NEW.tenant_id::text, 'platform'));
    RETURN NULL;
END;
$$;

CREATE TRIGGER audit_staged_announce
    AFTER INSERT ON audit_staged
    FOR EACH ROW EXECUTE FUNCTION announce_audit_staged();
