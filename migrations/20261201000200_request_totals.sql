-- Each member's running total of a kind of request per hour (UTC), kept by
-- a trigger on action_requests. A filing weighs the policy period's totals
-- from these rows (one per member and hour) and sums only the period's
-- first, partial hour from the requests themselves, instead of summing
-- every request filed in the period (3.6 ms a filing at the approvals
-- bench's volume, growing with it). Per member, so filings by different
-- members never wait on one another's row. What counts is what
-- approvals::store::running_totals counts: every request of the kind but
-- those that ended without moving anything.
CREATE TABLE request_totals (
    tenant_id    uuid NOT NULL,
    kind         text NOT NULL,
    hour         timestamptz NOT NULL,
    requested_by uuid NOT NULL,
    value        numeric NOT NULL,
    PRIMARY KEY (tenant_id, kind, hour, requested_by)
);

CREATE FUNCTION request_counts(status request_status, value numeric) RETURNS numeric
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN status IN ('rejected', 'cancelled', 'expired', 'failed') THEN 0 ELSE COALESCE(value, 0) END $$;

CREATE FUNCTION keep_request_totals() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    was numeric := CASE WHEN TG_OP = 'INSERT' THEN 0 ELSE request_counts(OLD.status, OLD.value) END;
    now_counts numeric := CASE WHEN TG_OP = 'DELETE' THEN 0 ELSE request_counts(NEW.status, NEW.value) END;
BEGIN
    -- A request keeps its tenant, kind, member and filing time: only what it counts for moves.
    IF TG_OP = 'UPDATE' AND (OLD.tenant_id, OLD.kind, OLD.requested_by, OLD.created_at)
                          = (NEW.tenant_id, NEW.kind, NEW.requested_by, NEW.created_at) THEN
        now_counts := now_counts - was;
        was := 0;
    END IF;
    IF was <> 0 THEN
        INSERT INTO request_totals AS t (tenant_id, kind, hour, requested_by, value)
        VALUES (OLD.tenant_id, OLD.kind, date_trunc('hour', OLD.created_at, 'UTC'), OLD.requested_by, -was)
        ON CONFLICT (tenant_id, kind, hour, requested_by) DO UPDATE SET value = t.value + EXCLUDED.value;
    END IF;
    IF now_counts <> 0 THEN
        INSERT INTO request_totals AS t (tenant_id, kind, hour, requested_by, value)
        VALUES (NEW.tenant_id, NEW.kind, date_trunc('hour', NEW.created_at, 'UTC'), NEW.requested_by, now_counts)
        ON CONFLICT (tenant_id, kind, hour, requested_by) DO UPDATE SET value = t.value + EXCLUDED.value;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER action_requests_totals
    AFTER INSERT OR DELETE OR UPDATE OF status, value, tenant_id, kind, requested_by, created_at
    ON action_requests FOR EACH ROW EXECUTE FUNCTION keep_request_totals();

INSERT INTO request_totals (tenant_id, kind, hour, requested_by, value)
SELECT tenant_id, kind, date_trunc('hour', created_at, 'UTC'), requested_by, sum(request_counts(status, value))
FROM action_requests
GROUP BY 1, 2, 3, 4
HAVING sum(request_counts(status, value)) <> 0;
