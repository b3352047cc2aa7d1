//! The shell every signed-in page shares: who and where the user is, the
//! environment banner, the CSRF token for htmx, and a menu of only what
//! the user may do.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};
use actix_web_flash_messages::FlashMessage;
use askama::Template;
use sqlx::PgPool;

use crate::access::store as access;
use crate::access::Member;
use crate::auth::session::SignedIn;
use crate::web::error::PortalError;
use crate::web::menu::{self, NavGroup, NavItem};

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
            nav: menu::for_member(member, current),
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
                    href: menu::PLATFORM.0,
                    label: menu::PLATFORM.1,
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
