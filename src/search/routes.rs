//! `GET /search?q=…`: the results page of the top bar's search box.

use actix_web::web::{self, Data, Query};
use actix_web::HttpResponse;
use askama::Template;
use serde::Deserialize;

use super::find::{self, Found};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::area::Area;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::page::{html, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/search", web::get().to(search));
}

#[derive(Debug, Default, Deserialize)]
pub struct SearchQuery {
    #[serde(default)]
    q: String,
}

#[derive(Template)]
#[template(path = "search/page.html")]
struct Page {
    shell: Shell,
    q: String,
    note: Option<&'static str>,
    found: Found,
}

/// Everything the member may see that matches `q`; the service only when
/// the tenant has a connection.
async fn run(state: &AppState, member: &Member, q: &str) -> Result<Found, PortalError> {
    let mut found = match state
        .upstreams
        .for_member(&state.pool, &state.key, &state.audit, member)
        .await
    {
        Ok(client) => find::upstream(&client, member, q).await,
        Err(PortalError::NoConnection) => Found::default(),
        Err(e) => return Err(e),
    };
    if state.gate.kinds().any(|k| k.readable_by(|p| member.can(p))) {
        found
            .hits
            .extend(find::requests(&state.pool, member.tenant_id, q).await?);
    }
    if member.can(Permission::MembersManage) {
        found
            .hits
            .extend(find::members(&state.pool, member.tenant_id, q).await?);
    }
    Ok(found)
}

async fn search(
    state: Data<AppState>,
    member: Member,
    query: Query<SearchQuery>,
) -> Result<HttpResponse, PortalError> {
    let q = query.q.trim().to_owned();
    let note = match q.chars().count() {
        0 => Some("Type an id, a reference, an email, a card's last four digits or an address."),
        1 => Some("Type at least two characters."),
        201.. => {
            Some("That is too long to be an id, a reference or an address; type at most 200 characters.")
        }
        _ => None,
    };
    let found = match note {
        Some(_) => Found::default(),
        None => run(&state, &member, &q).await?,
    };
    html(&Page {
        shell: Shell::new(&member, "/search"),
        q,
        note,
        found,
    })
}

/// The search box.
pub const AREA: Area = Area::routes(configure);
