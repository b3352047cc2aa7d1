-- The approvals engine: versioned policies per action kind, action
-- requests with their decisions and timeline, the job queue that runs
-- approved actions, and in-app notifications.

CREATE TABLE approval_policies (
    tenant_id             uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    action_kind           text NOT NULL,
    version               integer NOT NULL,
    required_approvals    integer NOT NULL CHECK (required_approvals BETWEEN 1 AND 10),
    -- Role names that may approve; empty: any role with the approve permission.
    approver_roles        text[] NOT NULL DEFAULT '{}',
    -- At or below this amount (source asset units) one approval is enough.
    threshold             numeric,
    expires_after_secs    integer NOT NULL DEFAULT 86400 CHECK (expires_after_secs > 0),
    reminder_after_secs   integer,
    escalation_after_secs integer,
    escalation_role       text,
    rate_tolerance_bps    integer NOT NULL DEFAULT 100 CHECK (rate_tolerance_bps >= 0),
    reason                text NOT NULL,
    created_by            uuid REFERENCES users (id),
    created_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, action_kind, version)
);

CREATE TABLE action_requests (
    id                 uuid PRIMARY KEY,
    tenant_id          uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind               text NOT NULL,
    -- What the action acts on, e.g. a payout's beneficiary account.
    target             text NOT NULL,
    summary            text NOT NULL,
    payload            jsonb NOT NULL,
    amount             numeric NOT NULL DEFAULT 0,
    status             text NOT NULL CHECK (status IN
                       ('pending', 'approved', 'executing', 'executed', 'failed', 'rejected', 'cancelled', 'expired')),
    requested_by       uuid NOT NULL REFERENCES users (id),
    policy_version     integer NOT NULL,
    required_approvals integer NOT NULL,
    -- Fixed when filed: every upstream call of the action carries it, so a
    -- retry can never pay twice.
    upstream_reference text NOT NULL UNIQUE,
    outcome            jsonb NOT NULL DEFAULT '{}'::jsonb,
    failure_reason     text,
    expires_at         timestamptz NOT NULL,
    reminded_at        timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX action_requests_tenant_idx ON action_requests (tenant_id, created_at DESC);
-- One pending request per action and target.
CREATE UNIQUE INDEX action_requests_one_pending ON action_requests (tenant_id, kind, target) WHERE status = 'pending';

CREATE TABLE approval_decisions (
    request_id  uuid NOT NULL REFERENCES action_requests (id) ON DELETE CASCADE,
    approver_id uuid NOT NULL REFERENCES users (id),
    decision    text NOT NULL CHECK (decision IN ('approve', 'reject')),
    comment     text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- One decision per person per request.
    PRIMARY KEY (request_id, approver_id)
);

CREATE TABLE request_timeline (
    id         bigserial PRIMARY KEY,
    request_id uuid NOT NULL REFERENCES action_requests (id) ON DELETE CASCADE,
    at         timestamptz NOT NULL DEFAULT now(),
    what       text NOT NULL,
    detail     text NOT NULL DEFAULT ''
);
CREATE INDEX request_timeline_idx ON request_timeline (request_id, id);

-- Taken with FOR UPDATE SKIP LOCKED, one job per transaction.
CREATE TABLE jobs (
    id         bigserial PRIMARY KEY,
    kind       text NOT NULL,
    request_id uuid REFERENCES action_requests (id) ON DELETE CASCADE,
    run_at     timestamptz NOT NULL DEFAULT now(),
    attempts   integer NOT NULL DEFAULT 0,
    last_error text,
    done_at    timestamptz
);
CREATE INDEX jobs_due_idx ON jobs (run_at) WHERE done_at IS NULL;

CREATE TABLE notifications (
    id         bigserial PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    tenant_id  uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    request_id uuid REFERENCES action_requests (id) ON DELETE CASCADE,
    message    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    read_at    timestamptz
);
CREATE INDEX notifications_user_idx ON notifications (user_id, id DESC);
