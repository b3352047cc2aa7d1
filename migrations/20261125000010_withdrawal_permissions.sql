-- On-chain withdrawals have their own pages and gate kind: every built-in
-- role reads them; Operators request them, Approvers approve them, and
-- Owners and Admins hold all three (as permissions::builtin_roles gives
-- a new tenant's roles).
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'withdrawals.read' FROM roles
WHERE is_builtin AND name IN ('Owner', 'Admin', 'Operator', 'Approver', 'Viewer', 'Auditor')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'withdrawals.request' FROM roles WHERE is_builtin AND name IN ('Owner', 'Admin', 'Operator')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'withdrawals.approve' FROM roles WHERE is_builtin AND name IN ('Owner', 'Admin', 'Approver')
ON CONFLICT DO NOTHING;
