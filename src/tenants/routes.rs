//! Tenants and their connections: switching tenant; the tenant admin's
//! connections page (add, test, make primary, delete); the platform
//! admin's tenants and base-URL allow-list. The rules live in
//! `connections` and `platform`.

use actix_web::web::{self, Data, Form, Path};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use paydesk_api::models::identity::Identity;
use paydesk_api::{Client, Credentials};
use secrecy::ExposeSecret;
use serde::Deserialize;
use uuid::Uuid;

use super::connections::{self, ConnectionDraft, ConnectionForm};
use super::platform;
use super::store::{self, Connection, TenantRow};
use crate::access::grants;
use crate::access::permissions::Permission;
use crate::access::store::{self as access, UnconfirmedGrant};
use crate::access::{Member, PlatformAdmin};
use crate::approvals::Action;
use crate::approvals::{self, ActionRequest};
use crate::area::Area;
use crate::auth::session::SignedIn;
use crate::controls::connections::ConnectionChangeAction;
use crate::state::AppState;
use crate::web::confirm::{Confirm, Confirmed};
use crate::web::error::{describe_upstream, PortalError};
use crate::web::form::{split, Failure, FieldErrors};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{done, html, is_htmx, ok, redirect, unprocessable, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/tenants/switch", web::post().to(switch))
        .route("/connections", web::get().to(connections_page))
        .route("/connections", web::post().to(add_connection))
        .route("/connections/{id}/test", web::post().to(test_connection))
        .route("/connections/{id}/primary", web::post().to(make_primary))
        .route("/connections/{id}/delete", web::post().to(delete_connection))
        .route("/platform", web::get().to(platform_page))
        .route("/platform/tenants", web::post().to(create_tenant))
        .route("/platform/allowlist", web::post().to(allow_url))
        .route("/platform/allowlist/remove", web::post().to(disallow_url))
        .route(
            "/platform/tenants/{id}/confirms",
            web::post().to(platform_confirms),
        )
        .route(
            "/platform/tenants/{id}/grants/{grant}/confirm",
            web::post().to(platform_confirm_grant),
        );
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
    if !super::switching::switch(&state.pool, &user, form.tenant_id).await? {
        return Err(PortalError::NotFound("no such tenant".to_owned()));
    }
    Ok(redirect("/"))
}

// --- Connections ------------------------------------------------------------

#[derive(Template)]
#[template(path = "tenants/connections.html")]
struct ConnectionsPage {
    shell: Shell,
    connections: Vec<Connection>,
    allow_list: Vec<String>,
    draft: ConnectionDraft,
    errors: FieldErrors,
    pending: Vec<ActionRequest>,
    /// Where the service delivers events: this portal's receiver, per connection.
    public_url: String,
}

impl ConnectionsPage {
    fn hook_url(&self, connection: impl std::fmt::Display) -> String {
        format!("{}/hooks/{connection}", self.public_url)
    }
}

async fn render_connections(
    state: &AppState,
    member: &Member,
    draft: ConnectionDraft,
    errors: FieldErrors,
) -> Result<String, PortalError> {
    Ok(ConnectionsPage {
        shell: Shell::new(member, "/connections"),
        connections: store::connections(&state.pool, member.tenant_id).await?,
        allow_list: store::allowed_base_urls(&state.pool).await?,
        draft,
        errors,
        pending: approvals::pending_of(&state.pool, member.tenant_id, &[ConnectionChangeAction::KIND])
            .await?,
        public_url: state.public_url.trim_end_matches('/').to_owned(),
    }
    .render()?)
}

async fn connections_page(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    member.require(Permission::ConnectionsManage)?;
    Ok(ok(render_connections(
        &state,
        &member,
        ConnectionDraft::default(),
        FieldErrors::default(),
    )
    .await?))
}

/// Back to the connections page with the notice, or the page again with
/// what was refused (422).
async fn connections_after(
    state: &AppState,
    member: &Member,
    result: Result<String, Failure>,
    draft: ConnectionDraft,
) -> Result<HttpResponse, PortalError> {
    match split(result)? {
        Ok(notice) => Ok(done("/connections", notice)),
        Err(refusal) => Ok(unprocessable(
            render_connections(state, member, draft, refusal.into()).await?,
        )),
    }
}

async fn add_connection(
    state: Data<AppState>,
    member: Member,
    form: Form<ConnectionForm>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::ConnectionsManage)?;
    let result = connections::add(&state, &member, &form).await;
    connections_after(&state, &member, result, ConnectionDraft::from(&*form)).await
}

#[derive(Template)]
#[template(path = "tenants/test_result.html")]
struct TestResult {
    connection_name: String,
    identity: Result<Identity, (String, Option<String>)>,
}

#[derive(Template)]
#[template(path = "tenants/test_page.html")]
struct TestPage {
    shell: Shell,
    result: TestResult,
}

/// "Test connection": a signed whoami with the stored credentials.
async fn test_connection(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    id: Path<Uuid>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::ConnectionsManage)?;
    let connection = connections::owned(&state, &member, *id).await?;
    let secret = state.key.open(&connection.client_secret_enc)?;
    let client = Client::new(
        connection.base_url.clone(),
        Credentials::new(connection.client_id.clone(), secret.expose_secret()),
    )
    .observed(state.audit.observer(member.tenant_id, member.actor()));
    let identity = client.whoami().await.map_err(|e| describe_upstream(&e));
    let result = TestResult {
        connection_name: connection.name,
        identity,
    };
    if is_htmx(&req) {
        html(&result)
    } else {
        html(&TestPage {
            shell: Shell::new(&member, "/connections"),
            result,
        })
    }
}

async fn make_primary(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::ConnectionsManage)?;
    let connection = connections::owned(&state, &member, *id).await?;
    let result = connections::make_primary(&state, &member, &connection).await;
    connections_after(&state, &member, result, ConnectionDraft::default()).await
}

async fn delete_connection(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    confirmed: Form<Confirmed>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::ConnectionsManage)?;
    let connection = connections::owned(&state, &member, *id).await?;
    if confirmed.yes() || connections::deletable(&connection).is_err() {
        let result = connections::delete(&state, &member, &connection).await;
        return connections_after(&state, &member, result, ConnectionDraft::default()).await;
    }
    let consequences = [
        format!("'{}' and its stored secrets are destroyed.", connection.name),
        "If it is the primary connection, pages use the next one; with two admins the deletion waits for the other."
            .to_owned(),
    ];
    Confirm {
        title: &format!("Delete the connection {}", connection.name),
        consequences: &consequences,
        action: &format!("/connections/{}/delete", connection.id),
        back: "/connections",
        button: "Delete connection",
        fields: &[],
    }
    .page(&member)
}

// --- Platform administration -------------------------------------------------

#[derive(Template)]
#[template(path = "tenants/platform.html")]
struct PlatformPage {
    shell: Shell,
    tenants: Vec<TenantRow>,
    /// Grants made alone in the tenants that let the platform confirm them.
    grants: Vec<(TenantRow, UnconfirmedGrant)>,
    me: Uuid,
    allow_list: Vec<String>,
    errors: FieldErrors,
    /// The forms as typed, when refused: (tenant name, base URL).
    draft: (String, String),
}

async fn render_platform(
    state: &AppState,
    admin: &SignedIn,
    errors: FieldErrors,
    draft: (String, String),
) -> Result<String, PortalError> {
    let tenants = store::tenants(&state.pool).await?;
    let mut grants = Vec::new();
    for tenant in tenants.iter().filter(|t| t.platform_confirms_grants) {
        for grant in access::unconfirmed_grants(&state.pool, tenant.id).await? {
            grants.push((tenant.clone(), grant));
        }
    }
    Ok(PlatformPage {
        shell: Shell::for_platform_admin(&state.pool, admin, "/platform").await?,
        tenants,
        grants,
        me: admin.user_id,
        allow_list: store::allowed_base_urls(&state.pool).await?,
        errors,
        draft,
    }
    .render()?)
}

async fn platform_page(
    state: Data<AppState>,
    PlatformAdmin(admin): PlatformAdmin,
) -> Result<HttpResponse, PortalError> {
    Ok(ok(render_platform(
        &state,
        &admin,
        FieldErrors::default(),
        Default::default(),
    )
    .await?))
}

/// Back to the platform page with the notice, or the page again with what
/// was refused (422).
async fn platform_after(
    state: &AppState,
    admin: &SignedIn,
    result: Result<String, Failure>,
    draft: (String, String),
) -> Result<HttpResponse, PortalError> {
    match split(result)? {
        Ok(notice) => Ok(done("/platform", notice)),
        Err(refusal) => Ok(unprocessable(
            render_platform(state, admin, refusal.into(), draft).await?,
        )),
    }
}

#[derive(Deserialize)]
pub struct NewTenant {
    name: String,
}

async fn create_tenant(
    state: Data<AppState>,
    PlatformAdmin(admin): PlatformAdmin,
    form: Form<NewTenant>,
) -> Result<HttpResponse, PortalError> {
    let result = platform::create_tenant(&state, &admin, &form.name).await;
    platform_after(&state, &admin, result, (form.into_inner().name, String::new())).await
}

#[derive(Deserialize)]
pub struct BaseUrlForm {
    base_url: String,
}

async fn allow_url(
    state: Data<AppState>,
    PlatformAdmin(admin): PlatformAdmin,
    form: Form<BaseUrlForm>,
) -> Result<HttpResponse, PortalError> {
    let result = platform::allow(&state, &admin, &form.base_url).await;
    platform_after(
        &state,
        &admin,
        result,
        (String::new(), form.into_inner().base_url),
    )
    .await
}

async fn disallow_url(
    state: Data<AppState>,
    PlatformAdmin(admin): PlatformAdmin,
    form: Form<BaseUrlForm>,
) -> Result<HttpResponse, PortalError> {
    let result = platform::disallow(&state, &admin, &form.base_url).await;
    platform_after(&state, &admin, result, Default::default()).await
}

#[derive(Deserialize)]
pub struct ConfirmsForm {
    #[serde(default)]
    on: String,
}

/// Lets the platform's admins confirm a tenant's grants, or stops it.
async fn platform_confirms(
    state: Data<AppState>,
    PlatformAdmin(admin): PlatformAdmin,
    tenant: Path<Uuid>,
    form: Form<ConfirmsForm>,
) -> Result<HttpResponse, PortalError> {
    let result = grants::set_platform_confirms(&state, &admin, *tenant, form.on == "yes").await;
    platform_after(&state, &admin, result, Default::default()).await
}

async fn platform_confirm_grant(
    state: Data<AppState>,
    PlatformAdmin(admin): PlatformAdmin,
    path: Path<(Uuid, i64)>,
) -> Result<HttpResponse, PortalError> {
    let (tenant, grant) = path.into_inner();
    let result = grants::confirm_for_platform(&state, &admin, tenant, grant).await;
    platform_after(&state, &admin, result, Default::default()).await
}

/// Tenants, their API connections, switching between them, and the platform.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[
        MenuEntry::new(
            MenuGroup::Admin,
            "/platform",
            "Platform",
            ShownTo::When(|m| m.user.is_platform_admin),
        ),
        MenuEntry::new(
            MenuGroup::Developers,
            "/connections",
            "Connections",
            ShownTo::Holding(&[Permission::ConnectionsManage]),
        ),
    ],
    kinds: crate::area::no_kinds,
};
