-- Policies beyond one threshold, weighed in the tenant's reporting
-- currency: approvals for every request (0: runs at once), amount tiers
-- (above X: N approvals, one of them from a named role), running totals
-- per member and per tenant over a period, and a first-time counterparty
-- rule. A request keeps its value, the rate used and the rules that fired.
ALTER TABLE tenants ADD COLUMN reporting_currency text NOT NULL DEFAULT 'USD'
    CHECK (reporting_currency IN ('USD', 'NGN'));

ALTER TABLE approval_policies
    ADD COLUMN tiers jsonb NOT NULL DEFAULT '[]'::jsonb,
    ADD COLUMN period_hours integer NOT NULL DEFAULT 24 CHECK (period_hours BETWEEN 1 AND 744),
    ADD COLUMN member_limit numeric CHECK (member_limit >= 0),
    ADD COLUMN tenant_limit numeric CHECK (tenant_limit >= 0),
    ADD COLUMN first_time_rule boolean NOT NULL DEFAULT true;
-- The single threshold becomes the first tier; one approval below it.
UPDATE approval_policies
   SET tiers = jsonb_build_array(jsonb_build_object('above', threshold::text, 'approvals', required_approvals)),
       required_approvals = 1
 WHERE threshold IS NOT NULL;
ALTER TABLE approval_policies DROP CONSTRAINT approval_policies_required_approvals_check;
ALTER TABLE approval_policies ADD CONSTRAINT approval_policies_required_approvals_check
    CHECK (required_approvals BETWEEN 0 AND 10);
ALTER TABLE approval_policies DROP COLUMN threshold;

ALTER TABLE action_requests
    ADD COLUMN currency text NOT NULL DEFAULT '',
    ADD COLUMN value numeric,
    ADD COLUMN value_currency text,
    ADD COLUMN value_rate numeric,
    ADD COLUMN counterparties text[] NOT NULL DEFAULT '{}',
    ADD COLUMN rules_fired text[] NOT NULL DEFAULT '{}',
    ADD COLUMN required_role text;
CREATE INDEX action_requests_totals_idx ON action_requests (tenant_id, kind, created_at);
