-- The runner takes the job first due, ties broken by id
-- (approvals::store::claim_job). With the id in the index the first
-- unlocked entry is the answer; with run_at alone Postgres read and
-- sorted at least 32 due jobs (an incremental sort's least group) for
-- every job taken, and a backlog's read-backs are many due jobs.
CREATE INDEX jobs_due_order_idx ON jobs (run_at, id) WHERE done_at IS NULL;
DROP INDEX jobs_due_idx;
