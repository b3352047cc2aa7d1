-- A record's target kept split as well as whole (audit::target): "kind:id"
-- targets are matched exactly through an index per log instead of by
-- trigrams, whose cost grows with the log. The chain hashes the whole
-- `target`, which is unchanged, so every chain verifies as before.
ALTER TABLE audit_log ADD COLUMN target_kind text, ADD COLUMN target_id text;

-- Older records, by the rule of audit::target::split: a lower-case kind
-- before the first ':' (or the whole target), the rest its id. The
-- append-only trigger refuses updates, so it is off for this one
-- statement, inside the migration's transaction.
ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_or_delete;
UPDATE audit_log
   SET target_kind = substring(target from '^([a-z_]+)(?::|$)'),
       target_id = substring(target from '^[a-z_]+:(.*)$')
 WHERE target ~ '^[a-z_]+(:|$)';
ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update_or_delete;

-- Per log, in the page's order: a "kind:id" filter reads its range and
-- sorts the few records; a kind alone is read here or, when common,
-- along the time index until a page is full.
CREATE INDEX audit_log_log_target_idx ON audit_log
    ((COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid)), target_kind, target_id, occurred_at, id)
    WHERE target_kind IS NOT NULL;
