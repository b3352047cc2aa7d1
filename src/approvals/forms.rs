//! What a domain's form handlers call to file through the gate: the
//! confirmation page before anything moves, the answer once the gate has
//! spoken, and controls filed for a second admin. The gate's own pages
//! (inbox, request, policies) are in `routes`.

use actix_web::HttpResponse;
use askama::Template;

use super::action::Action;
use super::filing::{Filing, Gated, Preview, Submitted};
use super::lifecycle::ApprovalError;
use super::model::RequestStatus;
use super::store::{self, ActionRequest};
use crate::access::Member;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{split, Failure, Refusal};
use crate::web::page::{html, redirect, Shell};
use crate::web::show::sentence_case;

#[derive(Template)]
#[template(path = "approvals/confirm.html")]
struct ConfirmPage<'a> {
    shell: Shell,
    title: &'a str,
    preview: Preview,
    action: &'a str,
    back: &'a str,
    fields: Vec<(String, String)>,
}

/// A form that moves money, as submitted.
pub struct Submission(pub Vec<(String, String)>);

impl Submission {
    /// True once the member confirmed on the confirmation page.
    pub fn confirmed(&self) -> bool {
        self.0.iter().any(|(k, v)| k == "confirmed" && v == "yes")
    }

    /// One field's value, if the form has it.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The form's fields as a typed draft.
    pub fn draft<T: serde::de::DeserializeOwned>(&self) -> Result<T, PortalError> {
        let encoded =
            serde_urlencoded::to_string(&self.0).map_err(|e| PortalError::BadRequest(e.to_string()))?;
        serde_urlencoded::from_str(&encoded).map_err(|e| PortalError::BadRequest(e.to_string()))
    }
}

/// The page that shows what an action will do (what reviewers would see,
/// the fees, whether it waits for approval) and posts the same form again
/// with `confirmed=yes`.
pub fn confirm_page(
    member: &Member,
    title: &str,
    preview: Preview,
    (action, back): (&str, &str),
    submission: &Submission,
) -> Result<HttpResponse, PortalError> {
    let fields = submission
        .0
        .iter()
        .filter(|(k, _)| k != "csrf_token" && k != "confirmed")
        .cloned()
        .collect();
    html(&ConfirmPage {
        shell: Shell::new(member, back),
        title,
        preview,
        action,
        back,
        fields,
    })
}

/// The confirmation page's title, where it posts, and the page it goes
/// back to.
pub type ConfirmTo<'a> = (&'a str, &'a str, &'a str);

/// What a page answers once the gate has spoken: the confirmation page,
/// the request's page while it waits (or is still being carried out), or
/// `ran`'s answer for an action that ran. A refusal goes back to the page
/// for its form.
pub fn answer_gate(
    member: &Member,
    gated: Result<Gated, Failure>,
    (title, action, back): ConfirmTo<'_>,
    submission: &Submission,
    ran: impl FnOnce(Box<ActionRequest>) -> Result<HttpResponse, Refusal>,
) -> Result<Result<HttpResponse, Refusal>, PortalError> {
    Ok(match split(gated)? {
        Ok(Gated::Confirm(preview)) => Ok(confirm_page(member, title, preview, (action, back), submission)?),
        Ok(Gated::Waiting(request)) => Ok(redirect(&format!("/approvals/{request}"))),
        Ok(Gated::Done(request)) => ran(request),
        Err(refusal) => Err(refusal),
    })
}

/// Files a control change through the gate: what to tell the user, or why
/// it was refused.
pub async fn submit_control<A: Action>(
    state: &AppState,
    member: &Member,
    target: &str,
    summary: &str,
    payload: A::Payload,
) -> Result<String, Failure> {
    let filing = Filing::control(target, summary, payload);
    control_outcome(state, super::filing::submit::<A>(state, member, filing).await).await
}

/// How a control change ended, as the entity's page tells it.
async fn control_outcome(
    state: &AppState,
    submitted: Result<Submitted, ApprovalError>,
) -> Result<String, Failure> {
    match submitted {
        Ok(Submitted::Waiting(_)) => Ok(
            "This change waits for a second admin's approval; it is listed under Pending changes.".to_owned(),
        ),
        Ok(Submitted::Ran(request)) if request.status == RequestStatus::Executed => {
            let timeline = store::timeline(&state.pool, request.id).await?;
            Ok(timeline
                .last()
                .map(|(_, _, detail)| detail.clone())
                .unwrap_or_else(|| "The change was applied.".to_owned()))
        }
        Ok(Submitted::Ran(request)) if request.status == RequestStatus::Failed => Err(Refusal::form(
            request
                .failure_reason
                .unwrap_or_else(|| "The change was not applied.".to_owned()),
        )
        .into()),
        Ok(Submitted::Ran(_)) => {
            Ok("The change is being applied; it is listed under Approvals until it is done.".to_owned())
        }
        Err(ApprovalError::Duplicate(_)) => Err(Refusal::form(
            "A change to this is already waiting for approval; decide on it first (see Pending changes).",
        )
        .into()),
        Err(ApprovalError::Db(e)) => Err(e.into()),
        Err(e) => Err(Refusal::form(sentence_case(&e.to_string())).into()),
    }
}
