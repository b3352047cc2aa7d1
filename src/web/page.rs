//! The shell every signed-in page shares: who and where the user is, the
//! environment banner, the CSRF token for htmx, and a menu of only what
//! the user may do.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};
use actix_web_flash_messages::FlashMessage;
use askama::Template;
use sqlx::PgPool;

use crate::access::permissions::Permission;
use crate::access::store as access;
use crate::access::Member;
use crate::auth::session::SignedIn;
use crate::web::error::PortalError;

pub struct NavItem {
    pub href: &'static str,
    pub label: &'static str,
    pub active: bool,
}

/// A heading of the menu and the entries under it the member may use.
pub struct NavGroup {
    pub label: &'static str,
    pub items: Vec<NavItem>,
}

pub struct TenantChoice {
    pub id: String,
    pub name: String,
    pub active: bool,
}

pub struct Shell {
    pub user_name: String,
    pub user_email: String,
    pub tenant_name: String,
    pub role_name: String,
    /// 'sandbox', 'live', or '' when the tenant has no connection.
    pub environment: String,
    pub csrf_token: String,
    pub nav: Vec<NavGroup>,
    pub tenants: Vec<TenantChoice>,
    /// What the user's last change said, shown once.
    pub notices: Vec<String>,
}

/// A menu entry: path, label, and the permissions of which one is needed.
type Entry = (&'static str, &'static str, &'static [Permission]);

/// The menu's groups, in order; an entry shows when the member holds one
/// of its permissions (none listed: everyone).
const MENU: &[(&str, &[Entry])] = &[
    ("", &[("/", "Dashboard", &[])]),
    (
        "Money",
        &[
            ("/balances", "Balances", &[Permission::BalancesRead]),
            ("/transactions", "Transactions", &[Permission::TransactionsRead]),
            ("/statements", "Statements", &[Permission::TransactionsRead]),
            ("/payouts", "Payouts", &[Permission::PayoutsRead]),
            ("/beneficiaries", "Payees", &[Permission::BeneficiariesRead]),
            (
                "/withdrawals",
                "Withdrawals",
                &[
                    Permission::WithdrawalsRead,
                    Permission::WithdrawalsRequest,
                    Permission::WithdrawalsApprove,
                ],
            ),
            (
                "/bulk-transfers",
                "Bulk transfers",
                &[
                    Permission::BulkRead,
                    Permission::BulkRequest,
                    Permission::BulkApprove,
                ],
            ),
            ("/addresses", "Addresses", &[Permission::AddressesRead]),
            ("/chains", "Chains", &[Permission::AddressesRead]),
            (
                "/virtual-accounts",
                "Virtual accounts",
                &[Permission::VirtualAccountsRead],
            ),
            ("/lightning", "Lightning", &[Permission::LightningRead]),
            ("/trading", "Trading", &[Permission::TradingRead]),
            ("/rates", "Rates", &[Permission::RatesRead]),
        ],
    ),
    (
        "Cards",
        &[
            ("/cards", "Cards", &[Permission::CardsRead]),
            ("/customers", "Customers", &[Permission::CustomersRead]),
        ],
    ),
    (
        "Controls",
        &[
            (
                APPROVALS,
                "Approvals",
                // Whoever may read, file or approve some kind of the gate
                // (a test holds this to the kinds registered).
                &[
                    Permission::PayoutsRead,
                    Permission::PayoutsRequest,
                    Permission::PayoutsApprove,
                    Permission::BeneficiariesRead,
                    Permission::BeneficiariesManage,
                    Permission::TradingRead,
                    Permission::LightningRead,
                    Permission::BulkRead,
                    Permission::MembersManage,
                    Permission::RolesManage,
                    Permission::ConnectionsManage,
                    Permission::PoliciesManage,
                    Permission::WithdrawalsRead,
                    Permission::WithdrawalsRequest,
                    Permission::WithdrawalsApprove,
                    Permission::CardsRead,
                    Permission::CardsTerminateRequest,
                    Permission::CardsTerminateApprove,
                    Permission::CardsMoneyApprove,
                    Permission::CardsManage,
                    Permission::LightningRequest,
                    Permission::LightningApprove,
                    Permission::TradingRequest,
                    Permission::TradingApprove,
                    Permission::BulkRequest,
                    Permission::BulkApprove,
                    Permission::AuditRead,
                ],
            ),
            (
                "/policies",
                "Policies",
                &[Permission::PoliciesManage, Permission::AuditRead],
            ),
            ("/notifications", "Notifications", &[]),
            ("/audit", "Audit log", &[Permission::AuditRead]),
        ],
    ),
    (
        "Admin",
        &[
            ("/members", "Members", &[Permission::MembersManage]),
            ("/roles", "Roles", &[Permission::RolesManage]),
        ],
    ),
    (
        "Developers",
        &[
            ("/connections", "Connections", &[Permission::ConnectionsManage]),
            (
                "/events",
                "Events",
                &[Permission::WebhooksRead, Permission::AuditRead],
            ),
        ],
    ),
];

/// The entry that carries the live count of requests waiting for me.
const APPROVALS: &str = "/approvals";

/// Shown to platform admins only.
const PLATFORM_MENU: (&str, &str) = ("/platform", "Platform");

/// Shown on sandbox connections to those who may move the sandbox's clock.
const SANDBOX_MENU: (&str, &str) = ("/sandbox-tools", "Sandbox tools");

impl Shell {
    pub fn new(member: &Member, current: &str) -> Shell {
        let tenants = member
            .tenants
            .iter()
            .map(|(id, name)| TenantChoice {
                active: *id == member.tenant_id,
                id: id.to_string(),
                name: name.clone(),
            })
            .collect();
        Shell {
            user_name: member.user.display_name.clone(),
            user_email: member.user.email.clone(),
            tenant_name: member.tenant_name.clone(),
            role_name: member.role_name.clone(),
            environment: member.environment.clone().unwrap_or_default(),
            csrf_token: member.user.csrf_token.clone(),
            nav: menu(member, current),
            tenants,
            notices: member.user.notices.clone(),
        }
    }

    /// The shell for a platform admin's pages: their active tenant's, or a
    /// bare one when they belong to no tenant yet.
    pub async fn for_platform_admin(
        pool: &PgPool,
        user: &SignedIn,
        current: &str,
    ) -> Result<Shell, PortalError> {
        if let Some(m) = access::membership(pool, user.user_id, user.active_tenant_id).await? {
            return Ok(Shell::new(&Member::from_membership(user.clone(), m), current));
        }
        Ok(Shell {
            user_name: user.display_name.clone(),
            user_email: user.email.clone(),
            tenant_name: "No tenant yet".to_owned(),
            role_name: "Platform admin".to_owned(),
            environment: String::new(),
            csrf_token: user.csrf_token.clone(),
            nav: vec![NavGroup {
                label: "Admin",
                items: vec![NavItem {
                    href: PLATFORM_MENU.0,
                    label: PLATFORM_MENU.1,
                    active: true,
                }],
            }],
            tenants: Vec::new(),
            notices: user.notices.clone(),
        })
    }

    /// The `hx-headers` attribute value that sends the CSRF token.
    pub fn hx_headers(&self) -> String {
        serde_json::json!({ "X-CSRF-Token": self.csrf_token }).to_string()
    }
}

/// The member's menu: each group with the entries they may use, the
/// sandbox's tools under Developers and the platform under Admin.
fn menu(member: &Member, current: &str) -> Vec<NavGroup> {
    MENU.iter()
        .map(|(group, entries)| {
            let extra = match *group {
                "Developers" => crate::sandbox_tools::routes::offered(member).then_some(SANDBOX_MENU),
                "Admin" => member.user.is_platform_admin.then_some(PLATFORM_MENU),
                _ => None,
            };
            let items = entries
                .iter()
                .filter(|(_, _, perms)| perms.is_empty() || perms.iter().any(|p| member.can(*p)))
                .map(|(href, label, _)| (*href, *label))
                .chain(extra)
                .map(|(href, label)| NavItem {
                    href,
                    label,
                    active: href == current,
                })
                .collect();
            NavGroup { label: group, items }
        })
        .filter(|g| !g.items.is_empty())
        .collect()
}

impl NavItem {
    /// Whether the entry carries the live count of requests waiting.
    pub fn counts_waiting(&self) -> bool {
        self.href == APPROVALS
    }
}

/// True for htmx requests, which get a fragment instead of a full page.
pub fn is_htmx(req: &HttpRequest) -> bool {
    req.headers().contains_key("HX-Request")
}

/// A part of a page that loaded, or the readable reason it did not.
pub enum Section<T> {
    Hidden,
    Loaded(T),
    Failed {
        message: String,
        correlation_id: Option<String>,
    },
}

impl<T> Section<T> {
    pub fn from_result(result: Result<T, paydesk_api::ApiError>) -> Self {
        match result {
            Ok(v) => Section::Loaded(v),
            Err(e) => {
                let (message, correlation_id) = crate::web::error::describe_upstream(&e);
                Section::Failed {
                    message,
                    correlation_id,
                }
            }
        }
    }
}

pub fn html(template: &impl Template) -> Result<HttpResponse, PortalError> {
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .body(template.render()?))
}

/// "1 request", "2 requests": a count with its noun, for pages.
pub fn count(n: impl std::borrow::Borrow<i64>, one: &str, many: &str) -> String {
    let n = *n.borrow();
    let noun = if n == 1 { one } else { many };
    format!("{n} {noun}")
}

/// A page already rendered (200).
pub fn ok(body: String) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .body(body)
}

/// A page shown again with what was refused (422), or as it is (200).
pub fn refused_or_ok(body: String, refused: bool) -> HttpResponse {
    if refused {
        unprocessable(body)
    } else {
        ok(body)
    }
}

/// A page shown again with what was refused (422).
pub fn unprocessable(body: String) -> HttpResponse {
    HttpResponse::UnprocessableEntity()
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .body(body)
}

/// After a change: post, then redirect, with `notice` shown once on the
/// page it lands on, so a reload never repeats the change.
pub fn done(to: &str, notice: impl Into<String>) -> HttpResponse {
    FlashMessage::info(notice.into()).send();
    redirect(to)
}

pub fn redirect(to: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, to))
        .finish()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The menu shows Approvals to exactly those the inbox lets in: whoever
    /// may read, file or approve some kind the gate knows.
    #[test]
    fn the_approvals_entry_follows_the_kinds_the_gate_knows() {
        let shown: BTreeSet<Permission> = MENU
            .iter()
            .flat_map(|(_, entries)| entries.iter())
            .find(|(href, _, _)| *href == APPROVALS)
            .map(|(_, _, perms)| perms.iter().copied().collect())
            .unwrap();
        let opens: BTreeSet<Permission> = crate::startup::registry()
            .kinds()
            .flat_map(|k| {
                [
                    k.read_permission,
                    k.request_permission,
                    k.approve_permission,
                    Permission::AuditRead,
                ]
            })
            .collect();
        assert_eq!(shown, opens);
    }
}
