-- Bulk transfers: every built-in role reads them; Operators request
-- batches and retries, Approvers approve them, Owners and Admins hold
-- everything (as new tenants' built-in roles do).
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'bulk.read' FROM roles
WHERE is_builtin AND name IN ('Owner', 'Admin', 'Operator', 'Approver', 'Viewer', 'Auditor')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'bulk.request' FROM roles WHERE is_builtin AND name IN ('Owner', 'Admin', 'Operator')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'bulk.approve' FROM roles WHERE is_builtin AND name IN ('Owner', 'Admin', 'Approver')
ON CONFLICT DO NOTHING;
