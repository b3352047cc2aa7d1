-- What every tenant page needs about its member, in one call: the tenant
-- (the preferred one if the user belongs to it, else their first by name),
-- the role and its permissions, every tenant of the user for the switcher,
-- and the connection pages use. Sessions load it together with the session.
CREATE FUNCTION membership_of(p_user uuid, p_preferred uuid)
RETURNS TABLE (
    tenant_id uuid,
    tenant_name text,
    role_name text,
    permissions text[],
    environment text,
    connection_id uuid,
    connection_updated_at timestamptz,
    tenants json
)
LANGUAGE sql STABLE AS $$
    WITH mine AS (
        SELECT t.id, t.name, m.role_id
        FROM memberships m JOIN tenants t ON t.id = m.tenant_id
        WHERE m.user_id = p_user
    ), chosen AS (
        SELECT * FROM mine ORDER BY (id = p_preferred) DESC NULLS LAST, name LIMIT 1
    )
    SELECT c.id, c.name, r.name,
           COALESCE((SELECT array_agg(rp.permission ORDER BY rp.permission)
                     FROM role_permissions rp WHERE rp.role_id = c.role_id), '{}'),
           conn.environment, conn.id, conn.updated_at,
           (SELECT json_agg(json_build_array(id, name) ORDER BY name) FROM mine)
    FROM chosen c
    JOIN roles r ON r.id = c.role_id
    LEFT JOIN LATERAL (
        SELECT id, environment, updated_at FROM connections
        WHERE connections.tenant_id = c.id
        ORDER BY is_primary DESC, created_at LIMIT 1
    ) conn ON true
$$;
