-- Each tenant's audit log and the platform log (tenant_id NULL) are chains
-- of their own, so a tenant's records can be exported and verified without
-- anyone else's. `seq` is a record's position in its log (1, 2, …) and its
-- prev_hash is the hash of the record before it in that log. Rows written
-- before this migration keep seq NULL and their original link (one chain
-- across every log), which the live check still walks.
ALTER TABLE audit_log ADD COLUMN seq bigint;
CREATE UNIQUE INDEX audit_log_log_seq_idx
    ON audit_log (COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid), seq)
    WHERE seq IS NOT NULL;

-- Signed checkpoints: the portal's Ed25519 signature over a log's length and
-- head hash at a moment, linked to the log's previous checkpoint.
CREATE TABLE audit_checkpoints (
    id          bigserial PRIMARY KEY,
    tenant_id   uuid,
    length      bigint NOT NULL,
    head_hash   bytea NOT NULL,
    signed_at   timestamptz NOT NULL,
    prev_hash   bytea NOT NULL,
    hash        bytea NOT NULL,
    signature   bytea NOT NULL,
    public_key  bytea NOT NULL
);
CREATE INDEX audit_checkpoints_log_idx ON audit_checkpoints (tenant_id, id DESC);

CREATE TRIGGER audit_checkpoints_no_update_or_delete
    BEFORE UPDATE OR DELETE ON audit_checkpoints
    FOR EACH ROW EXECUTE FUNCTION audit_log_is_append_only();

-- Rejected webhook deliveries, counted per connection and minute; a sweep
-- takes each finished minute out and turns it into one audit record
-- carrying the count.
CREATE TABLE webhook_rejections (
    connection_id uuid NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    minute        timestamptz NOT NULL,
    count         bigint NOT NULL,
    sample        jsonb NOT NULL,
    PRIMARY KEY (connection_id, minute)
);
CREATE INDEX webhook_rejections_minute_idx ON webhook_rejections (minute);

-- The live check walks the records from before the split on their own.
CREATE INDEX audit_log_unchained_idx ON audit_log (id) WHERE seq IS NULL;
