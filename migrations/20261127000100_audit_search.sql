-- The audit page's searches, per log (a tenant's, or the platform's under
-- the all-zero key), newest first by (occurred_at, id): one index per
-- filter that can narrow a search, each ending in the page's order so a
-- filter alone is read in order and stops after a page. Free text in the
-- target is matched with trigrams; the actor is matched against the log's
-- distinct actor emails first (see audit::store::search).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX audit_log_log_time_idx ON audit_log
    ((COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid)), occurred_at, id);
CREATE INDEX audit_log_log_actor_idx ON audit_log
    ((COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid)), actor_email, occurred_at, id);
CREATE INDEX audit_log_log_action_idx ON audit_log
    ((COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid)), action text_pattern_ops, occurred_at, id);
CREATE INDEX audit_log_log_outcome_idx ON audit_log
    ((COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid)), outcome, occurred_at, id);
CREATE INDEX audit_log_target_trgm_idx ON audit_log USING gin (target gin_trgm_ops);

-- Nothing reads these any more: the searches use the indexes above.
DROP INDEX audit_log_tenant_idx;
DROP INDEX audit_log_actor_idx;
DROP INDEX audit_log_action_idx;
