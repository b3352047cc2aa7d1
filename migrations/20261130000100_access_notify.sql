-- Every change to what a session load reads is announced on the
-- 'paydesk_access' channel when its transaction commits, so each replica's
-- session cache (`auth::session_cache`) forgets what it holds. Postgres
-- folds identical notifications of one transaction into one.
CREATE FUNCTION announce_access_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('paydesk_access', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER users_announce AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION announce_access_change();
CREATE TRIGGER tenants_announce AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tenants
    FOR EACH STATEMENT EXECUTE FUNCTION announce_access_change();
CREATE TRIGGER memberships_announce AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON memberships
    FOR EACH STATEMENT EXECUTE FUNCTION announce_access_change();
CREATE TRIGGER roles_announce AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON roles
    FOR EACH STATEMENT EXECUTE FUNCTION announce_access_change();
CREATE TRIGGER role_permissions_announce AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON role_permissions
    FOR EACH STATEMENT EXECUTE FUNCTION announce_access_change();
CREATE TRIGGER connections_announce AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON connections
    FOR EACH STATEMENT EXECUTE FUNCTION announce_access_change();

-- Sessions: a new one is nobody's cached entry, and the portal's own touch
-- of `last_seen_at` (forward only, once a minute) changes nothing a cached
-- entry holds; every other change is announced.
CREATE TRIGGER sessions_end_announce AFTER DELETE OR TRUNCATE ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION announce_access_change();
CREATE TRIGGER sessions_change_announce AFTER UPDATE ON sessions
    FOR EACH ROW
    WHEN (NEW.last_seen_at <= OLD.last_seen_at
          OR (OLD.user_id, OLD.csrf_token, OLD.active_tenant_id, OLD.created_at, OLD.verified_at)
             IS DISTINCT FROM (NEW.user_id, NEW.csrf_token, NEW.active_tenant_id, NEW.created_at, NEW.verified_at))
    EXECUTE FUNCTION announce_access_change();
