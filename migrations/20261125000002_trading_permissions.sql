-- Exchange rates and trading: every built-in role reads them; Operators
-- request quotes and orders, Approvers approve orders, Owners and Admins
-- hold everything (as new tenants' built-in roles do).
INSERT INTO role_permissions (role_id, permission)
SELECT r.id, p.permission FROM roles r
CROSS JOIN (VALUES ('rates.read'), ('trading.read')) AS p (permission)
WHERE r.is_builtin AND r.name IN ('Owner', 'Admin', 'Operator', 'Approver', 'Viewer', 'Auditor')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'trading.request' FROM roles WHERE is_builtin AND name IN ('Owner', 'Admin', 'Operator')
ON CONFLICT DO NOTHING;
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'trading.approve' FROM roles WHERE is_builtin AND name IN ('Owner', 'Admin', 'Approver')
ON CONFLICT DO NOTHING;
