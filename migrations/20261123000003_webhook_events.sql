-- Events the payments service posted to /hooks/{connection_id}, stored
-- once per (connection, event_id): the service may deliver one event
-- several times.
CREATE TABLE webhook_events (
    id            bigserial PRIMARY KEY,
    connection_id uuid NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    tenant_id     uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    event_id      text NOT NULL,
    event         text NOT NULL,
    payload       jsonb NOT NULL,
    received_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (connection_id, event_id)
);
CREATE INDEX webhook_events_tenant_idx ON webhook_events (tenant_id, id DESC);

-- Built-in roles that see everything get the new permission.
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'webhooks.read' FROM roles WHERE is_builtin AND name IN ('Owner', 'Admin', 'Auditor')
ON CONFLICT DO NOTHING;
