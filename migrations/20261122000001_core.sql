-- Paydesk's core schema: staff, sessions, tenants and their API
-- connections, roles and permissions, memberships, and the audit log.

CREATE TABLE users (
    id                   uuid PRIMARY KEY,
    email                text NOT NULL UNIQUE CHECK (email = lower(email)),
    display_name         text NOT NULL,
    password_hash        text NOT NULL,
    is_platform_admin    boolean NOT NULL DEFAULT false,
    must_change_password boolean NOT NULL DEFAULT false,
    disabled_at          timestamptz,
    failed_logins        integer NOT NULL DEFAULT 0,
    locked_until         timestamptz,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);

-- The cookie carries a random token; only its SHA-256 is stored, so a
-- database reader cannot hijack sessions.
CREATE TABLE sessions (
    token_hash       bytea PRIMARY KEY,
    user_id          uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token       text NOT NULL,
    active_tenant_id uuid,
    created_at       timestamptz NOT NULL DEFAULT now(),
    last_seen_at     timestamptz NOT NULL DEFAULT now(),
    ip               text NOT NULL DEFAULT '',
    user_agent       text NOT NULL DEFAULT ''
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

-- Failed sign-ins per source address, for throttling.
CREATE TABLE sign_in_failures (
    ip         text NOT NULL,
    failed_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sign_in_failures_ip_idx ON sign_in_failures (ip, failed_at);

CREATE TABLE tenants (
    id         uuid PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Base URLs tenant connections may use; only platform admins change it.
CREATE TABLE allowed_base_urls (
    base_url   text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE connections (
    id                 uuid PRIMARY KEY,
    tenant_id          uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name               text NOT NULL,
    environment        text NOT NULL CHECK (environment IN ('sandbox', 'live')),
    base_url           text NOT NULL,
    client_id          text NOT NULL,
    client_secret_enc  bytea NOT NULL,
    webhook_secret_enc bytea,
    -- The sandbox the portal starts in-process in default mode.
    is_builtin         boolean NOT NULL DEFAULT false,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name)
);

CREATE TABLE roles (
    id         uuid PRIMARY KEY,
    tenant_id  uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name       text NOT NULL,
    is_builtin boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name)
);

CREATE TABLE role_permissions (
    role_id    uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    permission text NOT NULL,
    PRIMARY KEY (role_id, permission)
);

CREATE TABLE memberships (
    tenant_id  uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id    uuid NOT NULL REFERENCES roles (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id)
);

-- Append-only and hash-chained: hash = SHA-256(prev_hash || canonical row).
CREATE TABLE audit_log (
    id          bigserial PRIMARY KEY,
    occurred_at timestamptz NOT NULL,
    tenant_id   uuid,
    actor_id    uuid,
    actor_email text NOT NULL DEFAULT '',
    action      text NOT NULL,
    target      text NOT NULL DEFAULT '',
    outcome     text NOT NULL,
    ip          text NOT NULL DEFAULT '',
    user_agent  text NOT NULL DEFAULT '',
    details     jsonb NOT NULL DEFAULT '{}'::jsonb,
    prev_hash   bytea NOT NULL,
    hash        bytea NOT NULL
);
CREATE INDEX audit_log_tenant_idx ON audit_log (tenant_id, id DESC);
CREATE INDEX audit_log_actor_idx ON audit_log (actor_id, id DESC);
CREATE INDEX audit_log_action_idx ON audit_log (action, id DESC);

CREATE FUNCTION audit_log_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only: % is not allowed', TG_OP;
END;
$$;

CREATE TRIGGER audit_log_no_update_or_delete
    BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_is_append_only();

CREATE TRIGGER audit_log_no_truncate
    BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_is_append_only();
