-- The runner takes the job first due, ties broken by id
-- (approvals::store::claim_job). With the id in the index the first
-- unlocked entry is the answer; with run_at alone Postgres read and
-- sorted at least 32 due jobs (an incremental sort's least group) for
-- every job taken, and a backlog's read-backs are many due jobs.
CREATE INDEX jobs_due_order_idx ON jobs (run_at, id) WHERE done_at IS NULL;
DROP INDEX jobs_due_idx;

-- The connection a tenant's jobs use (approvals::store::claim_job): the
-- one marked primary, else the oldest, as membership_of picks it for pages.
CREATE FUNCTION primary_connection_of(tenant uuid) RETURNS TABLE (id uuid, updated_at timestamptz)
    LANGUAGE sql STABLE
    AS $$
    SELECT id, updated_at FROM connections WHERE tenant_id = tenant ORDER BY is_primary DESC, created_at LIMIT 1
    $$;
