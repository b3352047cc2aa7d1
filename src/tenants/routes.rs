//! Tenants and their connections: switching tenant; the tenant admin's
//! connections page (add, test, make primary, delete); the platform
//! admin's tenants and base-URL allow-list. Secrets are sealed on save
//! and never shown again.

use actix_web::http::StatusCode;
use actix_web::web::{self, Data, Form, Path};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use paydesk_api::models::identity::Identity;
use paydesk_api::{Client, Credentials};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use uuid::Uuid;

use super::model::{is_allowed, normalize_base_url};
use super::store::{self, Connection, TenantRow};
use crate::access::permissions::Permission;
use crate::access::store as access;
use crate::access::{Member, PlatformAdmin};
use crate::approvals::action::Action;
use crate::approvals::routes::submit_control;
use crate::approvals::store::{self as approvals, ActionRequest};
use crate::audit::Event;
use crate::audit::{self, outcome, NewRecord};
use crate::auth::session::{self, SignedIn};
use crate::controls::connections::{sealed_text, ConnectionChange, ConnectionChangeAction};
use crate::startup::AppState;
use crate::web::confirm::{Confirm, Confirmed};
use crate::web::error::{describe_upstream, PortalError};
use crate::web::page::{html, is_htmx, redirect, refused_or_ok, Shell};

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
        .route("/platform/allowlist/remove", web::post().to(disallow_url));
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

fn page(status: StatusCode, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(body)
}

// --- Connections ------------------------------------------------------------

/// What the add form keeps when it is shown again; never the secrets.
#[derive(Default)]
pub struct ConnectionDraft {
    name: String,
    environment: String,
    base_url: String,
    client_id: String,
}

#[derive(Template)]
#[template(path = "tenants/connections.html")]
struct ConnectionsPage {
    shell: Shell,
    connections: Vec<Connection>,
    allow_list: Vec<String>,
    draft: ConnectionDraft,
    error: Option<String>,
    notice: Option<String>,
    pending: Vec<ActionRequest>,
}

async fn render_connections(
    state: &AppState,
    member: &Member,
    draft: ConnectionDraft,
    error: Option<String>,
    notice: Option<String>,
) -> Result<String, PortalError> {
    Ok(ConnectionsPage {
        shell: Shell::new(member, "/connections"),
        connections: store::connections(&state.pool, member.tenant_id).await?,
        allow_list: store::allowed_base_urls(&state.pool).await?,
        draft,
        error,
        notice,
        pending: approvals::pending_of(&state.pool, member.tenant_id, &[ConnectionChangeAction::KIND])
            .await?,
    }
    .render()?)
}

async fn connections_page(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    member.require(Permission::ConnectionsManage)?;
    let body = render_connections(&state, &member, ConnectionDraft::default(), None, None).await?;
    Ok(page(StatusCode::OK, body))
}

#[derive(Deserialize)]
pub struct ConnectionForm {
    name: String,
    environment: String,
    base_url: String,
    client_id: String,
    client_secret: String,
    #[serde(default)]
    webhook_secret: String,
}

/// Saves a connection after checking every field; the base URL must be on
/// the platform's allow-list, so no tenant can point the server at an
/// internal address.
async fn add_connection(
    state: Data<AppState>,
    member: Member,
    form: Form<ConnectionForm>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::ConnectionsManage)?;
    let form = form.into_inner();
    let draft = ConnectionDraft {
        name: form.name.trim().to_owned(),
        environment: form.environment.clone(),
        base_url: form.base_url.trim().to_owned(),
        client_id: form.client_id.trim().to_owned(),
    };
    let problem = async {
        if draft.name.is_empty() || draft.name.len() > 60 {
            return Ok(Some(
                "Give the connection a name of 1 to 60 characters.".to_owned(),
            ));
        }
        if store::connection_name_taken(&state.pool, member.tenant_id, &draft.name).await? {
            return Ok(Some(format!(
                "A connection named '{}' already exists.",
                draft.name
            )));
        }
        if !matches!(draft.environment.as_str(), "sandbox" | "live") {
            return Ok(Some("Choose sandbox or live.".to_owned()));
        }
        let base_url = match normalize_base_url(&draft.base_url) {
            Ok(url) => url,
            Err(message) => return Ok(Some(message)),
        };
        if !is_allowed(&base_url, &store::allowed_base_urls(&state.pool).await?) {
            return Ok(Some(format!(
                "{base_url} is not on the platform's allow-list. Ask a platform admin to allow it first."
            )));
        }
        if draft.client_id.is_empty() {
            return Ok(Some("Enter the client id.".to_owned()));
        }
        if form.client_secret.trim().is_empty() {
            return Ok(Some("Enter the client secret.".to_owned()));
        }
        Ok::<_, PortalError>(None)
    }
    .await?;
    if let Some(message) = problem {
        let body = render_connections(&state, &member, draft, Some(message), None).await?;
        return Ok(page(StatusCode::UNPROCESSABLE_ENTITY, body));
    }
    let base_url = normalize_base_url(&draft.base_url).map_err(PortalError::Unavailable)?;
    let client_secret = SecretString::from(form.client_secret.trim().to_owned());
    let webhook_secret = Some(form.webhook_secret.trim().to_owned())
        .filter(|s| !s.is_empty())
        .map(|s| state.key.seal(&SecretString::from(s)));
    let change = ConnectionChange::Add {
        name: draft.name.clone(),
        environment: draft.environment.clone(),
        base_url: base_url.clone(),
        client_id: draft.client_id.clone(),
        client_secret_sealed: sealed_text(&state.key.seal(&client_secret)),
        webhook_secret_sealed: webhook_secret.as_deref().map(sealed_text),
    };
    let target = format!("connection:{}", draft.name);
    let summary = format!(
        "Add the {} connection '{}' ({base_url})",
        draft.environment, draft.name
    );
    let (notice, error) =
        submit_control::<ConnectionChangeAction>(&state, &member, &target, &summary, change).await?;
    let refused = error.is_some();
    let draft = if refused {
        draft
    } else {
        ConnectionDraft::default()
    };
    let body = render_connections(&state, &member, draft, error, notice).await?;
    Ok(refused_or_ok(body, refused))
}

async fn owned_connection(state: &AppState, member: &Member, id: Uuid) -> Result<Connection, PortalError> {
    store::connection(&state.pool, member.tenant_id, id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such connection".to_owned()))
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
    let connection = owned_connection(&state, &member, *id).await?;
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
    let connection = owned_connection(&state, &member, *id).await?;
    let change = ConnectionChange::MakePrimary {
        id: connection.id,
        name: connection.name.clone(),
    };
    let target = format!("connection:{}", connection.id);
    let summary = format!("Make '{}' the primary connection", connection.name);
    let (notice, error) =
        submit_control::<ConnectionChangeAction>(&state, &member, &target, &summary, change).await?;
    connections_after(&state, &member, notice, error).await
}

async fn delete_connection(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    confirmed: Form<Confirmed>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::ConnectionsManage)?;
    let connection = owned_connection(&state, &member, *id).await?;
    if connection.is_builtin {
        let error = Some("The built-in sandbox connection can't be deleted.".to_owned());
        return connections_after(&state, &member, None, error).await;
    }
    if !confirmed.yes() {
        let consequences = [
            format!("'{}' and its stored secrets are destroyed.", connection.name),
            "If it is the primary connection, pages use the next one; with two admins the deletion waits for the other."
                .to_owned(),
        ];
        return Confirm {
            title: &format!("Delete the connection {}", connection.name),
            consequences: &consequences,
            action: &format!("/connections/{}/delete", connection.id),
            back: "/connections",
            button: "Delete connection",
            fields: &[],
        }
        .page(&member);
    }
    let change = ConnectionChange::Delete {
        id: connection.id,
        name: connection.name.clone(),
    };
    let target = format!("connection:{}", connection.id);
    let summary = format!("Delete the connection '{}'", connection.name);
    let (notice, error) =
        submit_control::<ConnectionChangeAction>(&state, &member, &target, &summary, change).await?;
    connections_after(&state, &member, notice, error).await
}

async fn connections_after(
    state: &AppState,
    member: &Member,
    notice: Option<String>,
    error: Option<String>,
) -> Result<HttpResponse, PortalError> {
    let refused = error.is_some();
    let body = render_connections(state, member, ConnectionDraft::default(), error, notice).await?;
    Ok(refused_or_ok(body, refused))
}

// --- Platform administration -------------------------------------------------

#[derive(Template)]
#[template(path = "tenants/platform.html")]
struct PlatformPage {
    shell: Shell,
    tenants: Vec<TenantRow>,
    allow_list: Vec<String>,
    error: Option<String>,
    notice: Option<String>,
}

async fn render_platform(
    state: &AppState,
    admin: &SignedIn,
    error: Option<String>,
    notice: Option<String>,
) -> Result<String, PortalError> {
    Ok(PlatformPage {
        shell: Shell::for_platform_admin(&state.pool, admin, "/platform").await?,
        tenants: store::tenants(&state.pool).await?,
        allow_list: store::allowed_base_urls(&state.pool).await?,
        error,
        notice,
    }
    .render()?)
}

async fn platform_page(
    state: Data<AppState>,
    PlatformAdmin(admin): PlatformAdmin,
) -> Result<HttpResponse, PortalError> {
    Ok(page(
        StatusCode::OK,
        render_platform(&state, &admin, None, None).await?,
    ))
}

#[derive(Deserialize)]
pub struct NewTenant {
    name: String,
}

/// Creates a tenant with its built-in roles; the platform admin who made it
/// is its first owner and can add members there.
async fn create_tenant(
    state: Data<AppState>,
    PlatformAdmin(admin): PlatformAdmin,
    form: Form<NewTenant>,
) -> Result<HttpResponse, PortalError> {
    let name = form.name.trim();
    let error = if name.is_empty() || name.len() > 80 {
        Some("Give the tenant a name of 1 to 80 characters.".to_owned())
    } else if store::tenant_name_taken(&state.pool, name).await? {
        Some(format!("A tenant named '{name}' already exists."))
    } else {
        None
    };
    if let Some(message) = error {
        return Ok(page(
            StatusCode::UNPROCESSABLE_ENTITY,
            render_platform(&state, &admin, Some(message), None).await?,
        ));
    }
    let mut tx = state.pool.begin().await?;
    let (tenant_id, owner) = store::create_tenant(&mut tx, name).await?;
    access::add_member(&mut tx, tenant_id, admin.user_id, owner, None).await?;
    audit::store::append_in(
        &mut tx,
        &[NewRecord::new(
            &admin.actor(),
            Some(tenant_id),
            Event::TenantsCreated,
            format!("tenant:{tenant_id}"),
            outcome::SUCCESS,
        )
        .with_details(serde_json::json!({"name": name}))],
    )
    .await?;
    tx.commit().await?;
    let notice =
        format!("Created '{name}'. You are its owner; switch to it to add members and a connection.");
    Ok(page(
        StatusCode::OK,
        render_platform(&state, &admin, None, Some(notice)).await?,
    ))
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
    let base_url = match normalize_base_url(&form.base_url) {
        Ok(url) => url,
        Err(message) => {
            return Ok(page(
                StatusCode::UNPROCESSABLE_ENTITY,
                render_platform(&state, &admin, Some(message), None).await?,
            ))
        }
    };
    if store::allow_base_url(&state.pool, &base_url).await? {
        audit::store::append(
            &state.pool,
            &[NewRecord::new(
                &admin.actor(),
                None,
                Event::SettingsBaseUrlAllowed,
                &base_url,
                outcome::SUCCESS,
            )],
        )
        .await?;
    }
    Ok(redirect("/platform"))
}

async fn disallow_url(
    state: Data<AppState>,
    PlatformAdmin(admin): PlatformAdmin,
    form: Form<BaseUrlForm>,
) -> Result<HttpResponse, PortalError> {
    if store::disallow_base_url(&state.pool, form.base_url.trim()).await? {
        audit::store::append(
            &state.pool,
            &[NewRecord::new(
                &admin.actor(),
                None,
                Event::SettingsBaseUrlDisallowed,
                form.base_url.trim(),
                outcome::SUCCESS,
            )],
        )
        .await?;
    }
    Ok(redirect("/platform"))
}
