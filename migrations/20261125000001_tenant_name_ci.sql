-- Tenant names are unique whatever their case; the portal maps a refused
-- insert to a message instead of checking before it.
CREATE UNIQUE INDEX tenants_name_ci ON tenants (lower(name));
