-- Accounts a bank would accept: invitations instead of created accounts,
-- password resets, one-time passwords that expire, TOTP two-factor with
-- recovery codes, step-up, and a tenant setting that requires two-factor.

-- Mail the portal sends when no SMTP server is configured (default mode,
-- tests): the outbox the platform admin reads in the portal.
CREATE TABLE outbox (
    id         uuid PRIMARY KEY,
    recipient  text NOT NULL,
    subject    text NOT NULL,
    body       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_recent_idx ON outbox (created_at DESC);

-- An invitation is the only way into a tenant. Only the token's SHA-256
-- is kept; the link in the mail is the secret.
CREATE TABLE invitations (
    id          uuid PRIMARY KEY,
    tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    email       text NOT NULL CHECK (email = lower(email)),
    role_id     uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    invited_by  uuid NOT NULL REFERENCES users (id),
    token_hash  bytea NOT NULL UNIQUE,
    expires_at  timestamptz NOT NULL,
    accepted_at timestamptz,
    revoked_at  timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX invitations_tenant_idx ON invitations (tenant_id, created_at DESC);

CREATE TABLE password_resets (
    token_hash bytea PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A one-time password stops working at this time.
ALTER TABLE users ADD COLUMN password_expires_at timestamptz;
UPDATE users SET password_expires_at = now() + interval '24 hours' WHERE must_change_password;

-- TOTP: the secret sealed with the master key; the last time step used,
-- so a code works once.
ALTER TABLE users
    ADD COLUMN totp_secret_enc bytea,
    ADD COLUMN totp_enabled_at timestamptz,
    ADD COLUMN totp_last_step  bigint NOT NULL DEFAULT 0;

CREATE TABLE recovery_codes (
    user_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash bytea NOT NULL,
    used_at   timestamptz,
    PRIMARY KEY (user_id, code_hash)
);

-- A password accepted for an account with two-factor: the code is asked
-- next, within five minutes, under this token.
CREATE TABLE second_factor_challenges (
    token_hash bytea PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    next_path  text NOT NULL DEFAULT '/',
    ip         text NOT NULL DEFAULT '',
    user_agent text NOT NULL DEFAULT '',
    attempts   integer NOT NULL DEFAULT 0,
    expires_at timestamptz NOT NULL
);

-- When the session last proved the second factor (sign-in or step-up).
ALTER TABLE sessions ADD COLUMN verified_at timestamptz;

ALTER TABLE tenants ADD COLUMN require_two_factor boolean NOT NULL DEFAULT false;
