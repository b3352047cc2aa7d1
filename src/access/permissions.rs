//! The permission catalogue: one permission per read area and per action,
//! as an enum so a misspelt permission does not compile. Built-in roles
//! are sets of these; custom roles pick their own. The database keeps the
//! names; a permission added later also needs a migration that grants it
//! to the built-in roles of existing tenants.

macro_rules! catalogue {
    ($($variant:ident => $name:literal, $label:literal, $group:literal;)*) => {
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
        }
    };
}

catalogue! {
    BalancesRead => "balances.read", "See balances", "Wallet";
    TransactionsRead => "transactions.read", "See transactions", "Wallet";
    TransactionsExport => "transactions.export", "Export transactions as CSV", "Wallet";
    AddressesRead => "addresses.read", "See deposit addresses and chains", "Wallet";
    AddressesCreate => "addresses.create", "Generate deposit addresses", "Wallet";
    CustomersRead => "customers.read", "See customers", "Cards";
    CustomersManage => "customers.manage", "Create and edit customers", "Cards";
    VirtualAccountsRead => "virtual_accounts.read", "See virtual accounts and what they received", "Cards";
    VirtualAccountsManage => "virtual_accounts.manage", "Issue virtual accounts to customers", "Cards";
    CardsRead => "cards.read", "See cards", "Cards";
    CardsManage => "cards.manage", "Create, fund, freeze and limit cards", "Cards";
    CardsSecureView => "cards.secure.view", "Reveal card details", "Cards";
    CardsMoneyApprove => "cards.money.approve", "Approve issuing, funding and withdrawing from cards, and unfreezing", "Cards";
    CardsTerminateRequest => "cards.terminate.request", "Request card terminations", "Cards";
    CardsTerminateApprove => "cards.terminate.approve", "Approve card terminations", "Cards";
    PayoutsRead => "payouts.read", "See payouts", "Payouts";
    BeneficiariesRead => "beneficiaries.read", "See saved payees", "Payouts";
    BeneficiariesManage => "beneficiaries.manage", "Save, change and delete payees", "Payouts";
    PayoutsRequest => "payouts.request", "Request payouts", "Payouts";
    PayoutsApprove => "payouts.approve", "Approve payouts", "Payouts";
    WithdrawalsRead => "withdrawals.read", "See on-chain withdrawals", "Withdrawals";
    WithdrawalsRequest => "withdrawals.request", "Request on-chain withdrawals", "Withdrawals";
    WithdrawalsApprove => "withdrawals.approve", "Approve on-chain withdrawals", "Withdrawals";
    RatesRead => "rates.read", "See exchange rates and convert amounts", "Trading";
    TradingRead => "trading.read", "See quotes, orders and trades", "Trading";
    TradingRequest => "trading.request", "Request quotes and orders", "Trading";
    TradingApprove => "trading.approve", "Approve orders", "Trading";
    LightningRead => "lightning.read", "See Lightning invoices and payments", "Lightning";
    LightningRequest => "lightning.request", "Create invoices and request Lightning payments", "Lightning";
    LightningApprove => "lightning.approve", "Approve Lightning payments", "Lightning";
    BulkRead => "bulk.read", "See bulk transfers", "Bulk transfers";
    BulkRequest => "bulk.request", "Request bulk transfers and retries", "Bulk transfers";
    BulkApprove => "bulk.approve", "Approve bulk transfers and retries", "Bulk transfers";
    AuditRead => "audit.read", "Read the audit log", "Administration";
    AuditExport => "audit.export", "Export the audit log", "Administration";
    WebhooksRead => "webhooks.read", "See the events the payments service sent", "Administration";
    MembersManage => "members.manage", "Add, change and remove members", "Administration";
    RolesManage => "roles.manage", "Create roles and assign permissions", "Administration";
    ConnectionsManage => "connections.manage", "Manage API connections", "Administration";
    PoliciesManage => "policies.manage", "Manage approval policies", "Administration";
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

const READS: &[Permission] = &[
    Permission::BalancesRead,
    Permission::TransactionsRead,
    Permission::AddressesRead,
    Permission::CustomersRead,
    Permission::CardsRead,
    Permission::PayoutsRead,
    Permission::BeneficiariesRead,
    Permission::WithdrawalsRead,
    Permission::RatesRead,
    Permission::TradingRead,
    Permission::LightningRead,
    Permission::VirtualAccountsRead,
    Permission::BulkRead,
];

/// The built-in roles and their permissions. Makers and checkers are kept
/// apart: Operators request, Approvers approve.
/// The narrowest built-in role that holds `permission`, to name in advice
/// ("such as Approver"); Admin for the administrative ones.
pub fn example_role(permission: Permission) -> &'static str {
    builtin_roles()
        .into_iter()
        .filter(|(_, perms)| perms.contains(&permission))
        .min_by_key(|(_, perms)| perms.len())
        .map_or(OWNER, |(name, _)| name)
}

pub fn builtin_roles() -> Vec<(&'static str, Vec<Permission>)> {
    let all: Vec<Permission> = Permission::ALL.to_vec();
    let with = |extra: &[Permission]| READS.iter().chain(extra).copied().collect::<Vec<_>>();
    vec![
        ("Owner", all.clone()),
        ("Admin", all),
        (
            "Operator",
            with(&[
                Permission::TransactionsExport,
                Permission::AddressesCreate,
                Permission::CustomersManage,
                Permission::VirtualAccountsManage,
                Permission::CardsManage,
                Permission::CardsTerminateRequest,
                Permission::PayoutsRequest,
                Permission::WithdrawalsRequest,
                Permission::TradingRequest,
                Permission::LightningRequest,
                Permission::BulkRequest,
            ]),
        ),
        (
            "Approver",
            with(&[
                Permission::CardsTerminateApprove,
                Permission::CardsMoneyApprove,
                Permission::PayoutsApprove,
                Permission::WithdrawalsApprove,
                Permission::TradingApprove,
                Permission::LightningApprove,
                Permission::BulkApprove,
            ]),
        ),
        ("Viewer", with(&[])),
        (
            "Auditor",
            with(&[
                Permission::TransactionsExport,
                Permission::AuditRead,
                Permission::AuditExport,
            ]),
        ),
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
