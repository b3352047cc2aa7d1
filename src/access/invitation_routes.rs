//! The invitee's side of an invitation: the page the mailed link opens,
//! and accepting it. Both work without a session.

use actix_web::http::StatusCode;
use actix_web::web::{self, Data, Form, Path};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;

use super::invitations::{self, Acceptance, From, Invitation};
use crate::auth::routes::signed_in as into_portal;
use crate::auth::session::{self, SignedIn};
use crate::auth::{csrf, password};
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors};
use crate::web::middleware::{client_ip, user_agent};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/invitations/{token}", web::get().to(show))
        .route("/invitations/{token}", web::post().to(accept));
}

#[derive(Template)]
#[template(path = "access/invitation.html")]
struct InvitationPage {
    csrf_token: String,
    token: String,
    /// None: the link no longer works.
    invitation: Option<Invitation>,
    has_account: bool,
    display_name: String,
    errors: FieldErrors,
    min_length: usize,
}

/// The page, with the session's form token when the visitor is signed in
/// and a pre-session one otherwise.
async fn page(
    state: &AppState,
    signed_in: Option<SignedIn>,
    token: String,
    display_name: String,
    errors: FieldErrors,
) -> Result<HttpResponse, PortalError> {
    let invitation = invitations::open(state, &token).await?;
    let has_account = match &invitation {
        Some(i) => invitations::has_account(state, i).await?,
        None => false,
    };
    let status = match (&invitation, errors.is_empty()) {
        (None, _) => StatusCode::GONE,
        (Some(_), true) => StatusCode::OK,
        (Some(_), false) => StatusCode::UNPROCESSABLE_ENTITY,
    };
    let csrf_token = csrf::page_token(signed_in.as_ref());
    let body = InvitationPage {
        csrf_token: csrf_token.clone(),
        token,
        invitation,
        has_account,
        display_name,
        errors,
        min_length: password::MIN_LENGTH,
    }
    .render()?;
    Ok(csrf::page_answer(
        status,
        &csrf_token,
        body,
        signed_in.is_some(),
        state.secure_cookies,
    ))
}

async fn show(
    state: Data<AppState>,
    signed_in: Option<SignedIn>,
    token: Path<String>,
) -> Result<HttpResponse, PortalError> {
    page(
        &state,
        signed_in,
        token.into_inner(),
        String::new(),
        FieldErrors::default(),
    )
    .await
}

async fn accept(
    state: Data<AppState>,
    req: HttpRequest,
    signed_in: Option<SignedIn>,
    token: Path<String>,
    form: Form<Acceptance>,
) -> Result<HttpResponse, PortalError> {
    let from = From {
        ip: client_ip(&req),
        user_agent: user_agent(&req),
        previous_session: req.cookie(session::COOKIE).map(|c| c.value().to_owned()),
    };
    let form = form.into_inner();
    let display_name = form.display_name.clone();
    match split(invitations::accept(&state, &token, form, from).await)? {
        Ok(Some(started)) => Ok(into_portal(started, "/", state.secure_cookies)),
        Ok(None) => Ok(crate::web::page::redirect("/login?joined=1")),
        Err(refusal) => {
            page(
                &state,
                signed_in,
                token.into_inner(),
                display_name,
                refusal.into(),
            )
            .await
        }
    }
}
