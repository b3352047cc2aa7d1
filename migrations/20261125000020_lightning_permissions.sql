-- Lightning: every built-in role reads invoices and payments; Operators
-- create invoices and request payments, Approvers approve payments,
-- Owners and Admins hold everything (as new tenants' built-in roles do).
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'lightning.read' FROM roles
WHERE is_builtin AND name IN ('Owner', 'Admin', 'Operator', 'Approver', 'Viewer', 'Auditor')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'lightning.request' FROM roles WHERE is_builtin AND name IN ('Owner', 'Admin', 'Operator')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'lightning.approve' FROM roles WHERE is_builtin AND name IN ('Owner', 'Admin', 'Approver')
ON CONFLICT DO NOTHING;
