-- A record's target id is no longer kept apart: since the target filter
-- matches prefixes (20261201000100), the id is derived by
-- audit_target_ref and nothing reads the column. Dropping it drops
-- audit_log_log_target_idx, which had the id between the kind and the
-- time; the kind's index now has the time right after it, so a kind alone
-- is read in the page's order.
ALTER TABLE audit_log DROP COLUMN target_id;

CREATE INDEX audit_log_log_target_kind_idx ON audit_log
    ((COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid)), target_kind, occurred_at, id)
    WHERE target_kind IS NOT NULL;
