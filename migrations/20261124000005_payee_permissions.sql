-- Saved payees have their own page: every built-in role reads them;
-- saving, changing and deleting them is for Owners and Admins (and waits
-- for a second admin where there is one).
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'beneficiaries.read' FROM roles
WHERE is_builtin AND name IN ('Owner', 'Admin', 'Operator', 'Approver', 'Viewer', 'Auditor')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'beneficiaries.manage' FROM roles WHERE is_builtin AND name IN ('Owner', 'Admin')
ON CONFLICT DO NOTHING;
