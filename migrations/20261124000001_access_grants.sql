-- Who granted each membership, role change and role permission change,
-- and when. The approval gate reads it: a member whose membership or
-- approving role was granted or changed by a request's maker, or granted
-- after the request was filed, does not count as an approver of it.
CREATE TABLE access_grants (
    id          bigserial PRIMARY KEY,
    tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    -- Set for a membership granted or changed; NULL for a change to a
    -- role's permissions, which concerns every member of the role.
    user_id     uuid REFERENCES users (id) ON DELETE CASCADE,
    role_id     uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    -- For a role's change: the permissions it added.
    added       text[] NOT NULL DEFAULT '{}',
    -- NULL when the platform did it (the first admin of a tenant).
    granted_by  uuid REFERENCES users (id) ON DELETE SET NULL,
    granted_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX access_grants_tenant_idx ON access_grants (tenant_id, granted_at);
