-- A grant one admin made alone ties granter and grantee for every quorum
-- until a second admin confirms it (access::ties).
ALTER TABLE access_grants
    ADD COLUMN confirmed_by uuid REFERENCES users (id) ON DELETE SET NULL,
    ADD COLUMN confirmed_at timestamptz;

-- The admin who approved an invitation through the gate: the membership
-- it grants on acceptance is confirmed by them.
ALTER TABLE invitations ADD COLUMN confirmed_by uuid REFERENCES users (id) ON DELETE SET NULL;

-- For operators who host Paydesk for others: the platform's admins may
-- confirm this tenant's grants (a tenant with one admin has no one else).
ALTER TABLE tenants ADD COLUMN platform_confirms_grants boolean NOT NULL DEFAULT false;
