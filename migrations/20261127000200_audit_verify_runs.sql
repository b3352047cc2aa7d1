-- "Verify chain" runs as a job; each run's progress and finding.
CREATE TABLE audit_verifications (
    id          bigserial PRIMARY KEY,
    tenant_id   uuid,
    started_by  uuid,
    started_at  timestamptz NOT NULL DEFAULT now(),
    -- Records to check when it started, and checked so far.
    total       bigint NOT NULL,
    checked     bigint NOT NULL DEFAULT 0,
    finished_at timestamptz,
    intact      boolean,
    broken_id   bigint,
    reason      text NOT NULL DEFAULT ''
);
CREATE INDEX audit_verifications_log_idx ON audit_verifications (tenant_id, id DESC);

-- Where each log was last verified: the next run starts after it. `records`
-- counts what was verified up to it (with the records from before logs
-- were chained apart, walked by a log's first run).
CREATE TABLE audit_verified_points (
    log_key     uuid PRIMARY KEY,
    seq         bigint NOT NULL,
    hash        bytea NOT NULL,
    records     bigint NOT NULL,
    verified_at timestamptz NOT NULL DEFAULT now()
);
