-- Virtual accounts: every built-in role sees them; Owners, Admins and
-- Operators issue them (as new tenants' built-in roles do).
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'virtual_accounts.read' FROM roles
WHERE is_builtin AND name IN ('Owner', 'Admin', 'Operator', 'Approver', 'Viewer', 'Auditor')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'virtual_accounts.manage' FROM roles WHERE is_builtin AND name IN ('Owner', 'Admin', 'Operator')
ON CONFLICT DO NOTHING;
