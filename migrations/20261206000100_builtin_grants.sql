-- The built-in roles' grants start-up has given existing tenants, each
-- once: a permission added to the catalogue reaches existing tenants'
-- built-in roles at the next start (instead of one migration per area),
-- and a grant an admin took away is not given again. The first start
-- with this table records every grant without giving any: the migrations
-- before it gave them.
CREATE TABLE builtin_grants (
    permission text NOT NULL,
    role       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (permission, role)
);
