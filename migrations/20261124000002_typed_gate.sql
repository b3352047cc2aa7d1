-- The approval gate, typed: a request's status is an enum; its progress is
-- the kind's typed record of what execution has done; approvals bind to a
-- digest of what the approver saw.
CREATE TYPE request_status AS ENUM
    ('pending', 'approved', 'executing', 'executed', 'failed', 'rejected', 'cancelled', 'expired');

DROP INDEX action_requests_one_pending;
ALTER TABLE action_requests DROP CONSTRAINT action_requests_status_check;
ALTER TABLE action_requests ALTER COLUMN status TYPE request_status USING status::request_status;
CREATE UNIQUE INDEX action_requests_one_pending ON action_requests (tenant_id, kind, target) WHERE status = 'pending';

ALTER TABLE action_requests RENAME COLUMN outcome TO progress;
ALTER TABLE action_requests ADD COLUMN digest text NOT NULL DEFAULT '';
ALTER TABLE approval_decisions ADD COLUMN digest text NOT NULL DEFAULT '';
