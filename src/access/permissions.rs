//! The permission catalogue: one permission per read area and per action,
//! as an enum so a misspelt permission does not compile, each with the
//! built-in roles that hold it. Custom roles pick their own. The database
//! keeps the names. A permission added later is one line here: start-up
//! grants it to existing tenants' built-in roles once (`access::builtin`),
//! and never again, so an admin who takes it away keeps it away.

macro_rules! catalogue {
    ($($variant:ident => $name:literal, $label:literal, $group:literal, [$($role:ident),*];)*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Permission {
            $($variant,)*
        }

        impl Permission {
            /// In the order the roles matrix shows them.
            pub const ALL: &'static [Permission] = &[$(Permission::$variant,)*];

            /// The name stored in the database, e.g. `payouts.approve`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Permission::$variant => $name,)*
                }
            }

            /// What it allows, for the roles matrix.
            pub fn label(self) -> &'static str {
                match self {
                    $(Permission::$variant => $label,)*
                }
            }

            pub fn group(self) -> &'static str {
                match self {
                    $(Permission::$variant => $group,)*
                }
            }

            /// The built-in roles that hold it besides Owner and Admin,
            /// which hold every permission.
            pub fn builtin(self) -> &'static [BuiltIn] {
                match self {
                    $(Permission::$variant => &[$(BuiltIn::$role),*],)*
                }
            }
        }
    };
}

catalogue! {
    BalancesRead => "balances.read", "See balances", "Wallet", [Operator, Approver, Viewer, Auditor];
    TransactionsRead => "transactions.read", "See transactions", "Wallet", [Operator, Approver, Viewer, Auditor];
    TransactionsExport => "transactions.export", "Export transactions as CSV", "Wallet", [Operator, Auditor];
    AddressesRead => "addresses.read", "See deposit addresses and chains", "Wallet", [Operator, Approver, Viewer, Auditor];
    AddressesCreate => "addresses.create", "Generate deposit addresses", "Wallet", [Operator];
    CustomersRead => "customers.read", "See customers", "Cards", [Operator, Approver, Viewer, Auditor];
    CustomersManage => "customers.manage", "Create and edit customers", "Cards", [Operator];
    VirtualAccountsRead => "virtual_accounts.read", "See virtual accounts and what they received", "Cards", [Operator, Approver, Viewer, Auditor];
    VirtualAccountsManage => "virtual_accounts.manage", "Issue virtual accounts to customers", "Cards", [Operator];
    CardsRead => "cards.read", "See cards", "Cards", [Operator, Approver, Viewer, Auditor];
    CardsManage => "cards.manage", "Create, fund, freeze and limit cards", "Cards", [Operator];
    CardsSecureView => "cards.secure.view", "Reveal card details", "Cards", [];
    CardsMoneyApprove => "cards.money.approve", "Approve issuing, funding and withdrawing from cards, and unfreezing", "Cards", [Approver];
    CardsTerminateRequest => "cards.terminate.request", "Request card terminations", "Cards", [Operator];
    CardsTerminateApprove => "cards.terminate.approve", "Approve card terminations", "Cards", [Approver];
    PayoutsRead => "payouts.read", "See payouts", "Payouts", [Operator, Approver, Viewer, Auditor];
    BeneficiariesRead => "beneficiaries.read", "See saved payees", "Payouts", [Operator, Approver, Viewer, Auditor];
    BeneficiariesManage => "beneficiaries.manage", "Save, change and delete payees", "Payouts", [];
    PayoutsRequest => "payouts.request", "Request payouts", "Payouts", [Operator];
    PayoutsApprove => "payouts.approve", "Approve payouts", "Payouts", [Approver];
    WithdrawalsRead => "withdrawals.read", "See on-chain withdrawals", "Withdrawals", [Operator, Approver, Viewer, Auditor];
    WithdrawalsRequest => "withdrawals.request", "Request on-chain withdrawals", "Withdrawals", [Operator];
    WithdrawalsApprove => "withdrawals.approve", "Approve on-chain withdrawals", "Withdrawals", [Approver];
    RatesRead => "rates.read", "See exchange rates and convert amounts", "Trading", [Operator, Approver, Viewer, Auditor];
    TradingRead => "trading.read", "See quotes, orders and trades", "Trading", [Operator, Approver, Viewer, Auditor];
    TradingRequest => "trading.request", "Request quotes and orders", "Trading", [Operator];
    TradingApprove => "trading.approve", "Approve orders", "Trading", [Approver];
    LightningRead => "lightning.read", "See Lightning invoices and payments", "Lightning", [Operator, Approver, Viewer, Auditor];
    LightningRequest => "lightning.request", "Create invoices and request Lightning payments", "Lightning", [Operator];
    LightningApprove => "lightning.approve", "Approve Lightning payments", "Lightning", [Approver];
    BulkRead => "bulk.read", "See bulk transfers", "Bulk transfers", [Operator, Approver, Viewer, Auditor];
    BulkRequest => "bulk.request", "Request bulk transfers and retries", "Bulk transfers", [Operator];
    BulkApprove => "bulk.approve", "Approve bulk transfers and retries", "Bulk transfers", [Approver];
    AuditRead => "audit.read", "Read the audit log", "Administration", [Auditor];
    AuditExport => "audit.export", "Export the audit log", "Administration", [Auditor];
    WebhooksRead => "webhooks.read", "See the events the payments service sent", "Administration", [];
    MembersManage => "members.manage", "Add, change and remove members", "Administration", [];
    RolesManage => "roles.manage", "Create roles and assign permissions", "Administration", [];
    ConnectionsManage => "connections.manage", "Manage API connections", "Administration", [];
    PoliciesManage => "policies.manage", "Manage approval policies", "Administration", [];
}

impl Permission {
    pub fn parse(name: &str) -> Option<Permission> {
        Self::ALL.iter().copied().find(|p| p.name() == name)
    }

    /// Holding it requires two-factor: it approves money or changes,
    /// administers the tenant, or reveals card details.
    pub fn needs_two_factor(self) -> bool {
        use Permission::*;
        matches!(
            self,
            CardsSecureView
                | CardsMoneyApprove
                | CardsTerminateApprove
                | PayoutsApprove
                | WithdrawalsApprove
                | TradingApprove
                | LightningApprove
                | BulkApprove
                | MembersManage
                | RolesManage
                | ConnectionsManage
                | PoliciesManage
        )
    }
}

impl std::fmt::Display for Permission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The built-in roles other than Owner and Admin. Makers and checkers are
/// kept apart: Operators request, Approvers approve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltIn {
    Operator,
    Approver,
    Viewer,
    Auditor,
}

impl BuiltIn {
    pub fn name(self) -> &'static str {
        match self {
            BuiltIn::Operator => "Operator",
            BuiltIn::Approver => "Approver",
            BuiltIn::Viewer => "Viewer",
            BuiltIn::Auditor => "Auditor",
        }
    }
}

/// The narrowest built-in role that holds `permission`, to name in advice
/// ("such as Approver"); Owner for the administrative ones.
pub fn example_role(permission: Permission) -> &'static str {
    builtin_roles()
        .into_iter()
        .filter(|(_, perms)| perms.contains(&permission))
        .min_by_key(|(_, perms)| perms.len())
        .map_or(OWNER, |(name, _)| name)
}

/// The built-in roles and their permissions, as the catalogue grants them.
pub fn builtin_roles() -> Vec<(&'static str, Vec<Permission>)> {
    let all: Vec<Permission> = Permission::ALL.to_vec();
    let of = |role: BuiltIn| {
        let perms = Permission::ALL.iter().filter(|p| p.builtin().contains(&role));
        (role.name(), perms.copied().collect())
    };
    vec![
        (OWNER, all.clone()),
        ("Admin", all),
        of(BuiltIn::Operator),
        of(BuiltIn::Approver),
        of(BuiltIn::Viewer),
        of(BuiltIn::Auditor),
    ]
}

pub const OWNER: &str = "Owner";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        for p in Permission::ALL {
            assert_eq!(Permission::parse(p.name()), Some(*p));
        }
        assert_eq!(Permission::parse("payouts.aprove"), None);
    }
}
