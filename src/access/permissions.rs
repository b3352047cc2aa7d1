//! The permission catalogue: one permission per read area and per action.
//! Built-in roles are sets of these; custom roles pick their own. A
//! permission added later also needs a migration that grants it to the
//! built-in roles of existing tenants.

/// (name, what it allows, group)
pub const CATALOGUE: &[(&str, &str, &str)] = &[
    ("balances.read", "See balances", "Wallet"),
    ("transactions.read", "See transactions", "Wallet"),
    ("transactions.export", "Export transactions as CSV", "Wallet"),
    ("addresses.read", "See deposit addresses and chains", "Wallet"),
    ("addresses.create", "Generate deposit addresses", "Wallet"),
    ("customers.read", "See customers", "Cards"),
    ("customers.manage", "Create and edit customers", "Cards"),
    ("cards.read", "See cards", "Cards"),
    ("cards.manage", "Create, fund, freeze and limit cards", "Cards"),
    ("cards.secure.view", "Reveal card details", "Cards"),
    (
        "cards.money.approve",
        "Approve issuing, funding and withdrawing from cards, and unfreezing",
        "Cards",
    ),
    ("cards.terminate.request", "Request card terminations", "Cards"),
    ("cards.terminate.approve", "Approve card terminations", "Cards"),
    ("payouts.read", "See payouts", "Payouts"),
    ("beneficiaries.read", "See saved payees", "Payouts"),
    (
        "beneficiaries.manage",
        "Save, change and delete payees",
        "Payouts",
    ),
    ("payouts.request", "Request payouts", "Payouts"),
    ("payouts.approve", "Approve payouts", "Payouts"),
    ("audit.read", "Read the audit log", "Administration"),
    ("audit.export", "Export the audit log", "Administration"),
    (
        "webhooks.read",
        "See the events the payments service sent",
        "Administration",
    ),
    (
        "members.manage",
        "Add, change and remove members",
        "Administration",
    ),
    (
        "roles.manage",
        "Create roles and assign permissions",
        "Administration",
    ),
    ("connections.manage", "Manage API connections", "Administration"),
    ("policies.manage", "Manage approval policies", "Administration"),
];

pub fn is_known(permission: &str) -> bool {
    CATALOGUE.iter().any(|(name, _, _)| *name == permission)
}

const READS: &[&str] = &[
    "balances.read",
    "transactions.read",
    "addresses.read",
    "customers.read",
    "cards.read",
    "payouts.read",
    "beneficiaries.read",
];

/// The built-in roles and their permissions. Makers and checkers are kept
/// apart: Operators request, Approvers approve.
pub fn builtin_roles() -> Vec<(&'static str, Vec<&'static str>)> {
    let all: Vec<&str> = CATALOGUE.iter().map(|(name, _, _)| *name).collect();
    let with = |extra: &[&'static str]| READS.iter().chain(extra).copied().collect::<Vec<_>>();
    vec![
        ("Owner", all.clone()),
        ("Admin", all),
        (
            "Operator",
            with(&[
                "transactions.export",
                "addresses.create",
                "customers.manage",
                "cards.manage",
                "cards.terminate.request",
                "payouts.request",
            ]),
        ),
        (
            "Approver",
            with(&[
                "cards.terminate.approve",
                "cards.money.approve",
                "payouts.approve",
            ]),
        ),
        ("Viewer", with(&[])),
        (
            "Auditor",
            with(&["transactions.export", "audit.read", "audit.export"]),
        ),
    ]
}

pub const OWNER: &str = "Owner";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_roles_use_known_permissions_only() {
        for (role, perms) in builtin_roles() {
            for p in perms {
                assert!(is_known(p), "{role}: {p}");
            }
        }
    }
}
