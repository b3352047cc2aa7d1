//! The `Member` extractor: the signed-in user, their active tenant, their
//! role there and its permissions. A handler that takes a `Member` cannot
//! forget to check that the user belongs to the tenant; `require` checks a
//! permission.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::web::Data;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use uuid::Uuid;

use super::permissions::Permission;
use super::store;
use crate::audit::Actor;
use crate::auth::session::SignedIn;
use crate::state::AppState;
use crate::web::error::PortalError;

#[derive(Debug, Clone)]
pub struct Member {
    pub user: SignedIn,
    pub tenant_id: Uuid,
    pub tenant_name: String,
    pub role_name: String,
    pub permissions: HashSet<Permission>,
    /// The environment of the tenant's connection ('sandbox' or 'live').
    pub environment: Option<String>,
    /// The connection pages use, and its version (for the client cache).
    pub connection: Option<(Uuid, chrono::DateTime<chrono::Utc>)>,
    /// Every tenant of the user, for the switcher.
    pub tenants: Vec<(Uuid, String)>,
}

impl Member {
    pub fn from_membership(user: SignedIn, m: store::Membership) -> Member {
        Member {
            user,
            tenant_id: m.tenant_id,
            tenant_name: m.tenant_name,
            role_name: m.role_name,
            // A name this version doesn't know (from a newer one) grants nothing.
            permissions: m
                .permissions
                .iter()
                .filter_map(|p| Permission::parse(p))
                .collect(),
            environment: m.environment,
            connection: m.connection_id.zip(m.connection_updated_at),
            tenants: m.tenants.0,
        }
    }
}

impl Member {
    pub fn can(&self, permission: Permission) -> bool {
        self.permissions.contains(&permission)
    }

    pub fn require(&self, permission: Permission) -> Result<(), PortalError> {
        if self.can(permission) {
            Ok(())
        } else {
            Err(PortalError::Forbidden(permission.name().to_owned()))
        }
    }

    pub fn actor(&self) -> Actor {
        self.user.actor()
    }

    /// Two-factor is required here (by the tenant, or by a permission
    /// held) and the account has none yet: only enrolment is open.
    pub fn must_enrol_two_factor(&self) -> bool {
        !self.user.two_factor && self.requires_two_factor()
    }

    pub fn requires_two_factor(&self) -> bool {
        self.user.tenant_requires_two_factor || self.permissions.iter().any(|p| p.needs_two_factor())
    }
}

impl FromRequest for Member {
    type Error = PortalError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, PortalError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let user = req.extensions().get::<SignedIn>().cloned();
        // The session middleware usually loaded it already.
        let loaded = req.extensions().get::<store::Membership>().cloned();
        let state = req.app_data::<Data<AppState>>().cloned();
        Box::pin(async move {
            let user = user.ok_or(PortalError::NotSignedIn)?;
            if user.must_change_password {
                return Err(PortalError::PasswordChangeRequired);
            }
            let state = state.expect("the app registers its state");
            let m = match loaded {
                Some(m) => Some(m),
                None => store::membership(&state.pool, user.user_id, user.active_tenant_id).await?,
            };
            let Some(m) = m else {
                // A platform admin with no tenant yet (a fresh production
                // install) is sent to create one.
                return Err(if user.is_platform_admin {
                    PortalError::SetUpTenant
                } else {
                    PortalError::NoTenant
                });
            };
            let member = Member::from_membership(user, m);
            if member.must_enrol_two_factor() {
                return Err(PortalError::TwoFactorRequired);
            }
            Ok(member)
        })
    }
}

/// A signed-in platform admin, whether or not they belong to a tenant.
#[derive(Debug, Clone)]
pub struct PlatformAdmin(pub SignedIn);

impl FromRequest for PlatformAdmin {
    type Error = PortalError;
    type Future = std::future::Ready<Result<Self, PortalError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let user = req.extensions().get::<SignedIn>().cloned();
        std::future::ready(match user {
            None => Err(PortalError::NotSignedIn),
            Some(u) if u.must_change_password => Err(PortalError::PasswordChangeRequired),
            Some(u) if !u.is_platform_admin => Err(PortalError::Forbidden("platform admin".to_owned())),
            Some(u) if !u.two_factor => Err(PortalError::TwoFactorRequired),
            Some(u) => Ok(PlatformAdmin(u)),
        })
    }
}
