-- Stages audit records given as a JSON array of audit_staged rows, in
-- the array's order; how many. A statement that changes something can
-- then stage the records that describe it itself (in a CTE), instead of
-- a second statement in a transaction around both: the gate files,
-- moves and starts requests this way. PL/pgSQL, not SQL: it keeps the
-- insert's plan for the session, where a SQL function would plan it on
-- every call.
CREATE FUNCTION stage_audit(records jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    staged bigint;
BEGIN
    INSERT INTO audit_staged (occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip,
                              user_agent, details)
    SELECT r.occurred_at, r.tenant_id, r.actor_id, r.actor_email, r.action, r.target, r.outcome, r.ip,
           r.user_agent, r.details
    FROM jsonb_populate_recordset(NULL::audit_staged, records) WITH ORDINALITY AS r
    ORDER BY r.ordinality;
    GET DIAGNOSTICS staged = ROW_COUNT;
    RETURN staged;
END;
$$;
