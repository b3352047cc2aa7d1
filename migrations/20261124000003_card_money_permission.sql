-- Issuing, funding and withdrawing from cards go through the approval
-- gate; approving them is its own permission, given to the built-in roles
-- that approve.
INSERT INTO role_permissions (role_id, permission)
SELECT id, 'cards.money.approve' FROM roles WHERE is_builtin AND name IN ('Owner', 'Admin', 'Approver')
ON CONFLICT DO NOTHING;
