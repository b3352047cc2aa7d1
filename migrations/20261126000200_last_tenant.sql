-- The tenant a user last chose, where their next sign-in lands.
ALTER TABLE users ADD COLUMN last_tenant_id uuid REFERENCES tenants (id) ON DELETE SET NULL;
