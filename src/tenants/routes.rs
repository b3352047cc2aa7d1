//! Switching the active tenant.

use actix_web::web::{self, Data, Form};
use actix_web::HttpResponse;
use serde::Deserialize;
use uuid::Uuid;

use crate::access::store as access;
use crate::auth::session::{self, SignedIn};
use crate::startup::AppState;
use crate::web::error::PortalError;
use crate::web::page::redirect;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/tenants/switch", web::post().to(switch));
}

#[derive(Deserialize)]
pub struct SwitchForm {
    tenant_id: Uuid,
}

/// Makes another of the user's tenants the active one; a tenant they are
/// not a member of is a 404.
async fn switch(
    state: Data<AppState>,
    user: SignedIn,
    form: Form<SwitchForm>,
) -> Result<HttpResponse, PortalError> {
    let mine = access::tenants_of(&state.pool, user.user_id).await?;
    if !mine.iter().any(|(id, _)| *id == form.tenant_id) {
        return Err(PortalError::NotFound("no such tenant".to_owned()));
    }
    session::set_active_tenant(&state.pool, &user.token_hash, form.tenant_id).await?;
    Ok(redirect("/"))
}
