-- The counterparties each request pays while it is executing or executed,
-- one row per request and counterparty, kept by a trigger on
-- action_requests. A filing asks whether it pays someone for the first time
-- with one index probe per counterparty instead of unnesting every request
-- the tenant ever carried out. A row per request, not a count per
-- counterparty, so executions paying the same account never wait on one
-- another's row.
CREATE TABLE paying_counterparties (
    tenant_id  uuid NOT NULL,
    key        text NOT NULL,
    request_id uuid NOT NULL,
    PRIMARY KEY (tenant_id, key, request_id)
);

CREATE FUNCTION keep_paying_counterparties() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    was_paying boolean := TG_OP <> 'INSERT' AND OLD.status IN ('executing', 'executed');
    is_paying  boolean := TG_OP <> 'DELETE' AND NEW.status IN ('executing', 'executed');
BEGIN
    -- executing -> executed changes nothing here: no churn of rows.
    IF was_paying AND is_paying AND OLD.counterparties = NEW.counterparties AND OLD.tenant_id = NEW.tenant_id THEN
        RETURN NULL;
    END IF;
    IF was_paying THEN
        DELETE FROM paying_counterparties
        WHERE tenant_id = OLD.tenant_id AND key = ANY (OLD.counterparties) AND request_id = OLD.id;
    END IF;
    IF is_paying THEN
        INSERT INTO paying_counterparties (tenant_id, key, request_id)
        SELECT NEW.tenant_id, k, NEW.id FROM unnest(NEW.counterparties) AS k
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER action_requests_paying AFTER INSERT OR DELETE OR UPDATE OF status, counterparties, tenant_id
    ON action_requests FOR EACH ROW EXECUTE FUNCTION keep_paying_counterparties();

INSERT INTO paying_counterparties (tenant_id, key, request_id)
SELECT r.tenant_id, k, r.id FROM action_requests r, unnest(r.counterparties) AS k
WHERE r.status IN ('executing', 'executed')
ON CONFLICT DO NOTHING;
