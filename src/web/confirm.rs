//! The confirmation page every destructive action shows before it acts:
//! what will happen, in plain words, and the same form posted again with
//! `confirmed=yes`. It works without JavaScript (htmx's `hx-confirm` only
//! guards htmx requests, never a plain form).

use actix_web::HttpResponse;
use askama::Template;

use crate::access::Member;
use crate::web::error::PortalError;
use crate::web::page::{html, Shell};

#[derive(Template)]
#[template(path = "confirm.html")]
struct ConfirmPage<'a> {
    shell: Shell,
    title: &'a str,
    consequences: &'a [String],
    action: &'a str,
    back: &'a str,
    button: &'a str,
    fields: &'a [(&'a str, &'a str)],
}

/// What a destructive action asks before it runs.
pub struct Confirm<'a> {
    pub title: &'a str,
    /// What will happen, one sentence a line.
    pub consequences: &'a [String],
    /// Where the form posts, and where Cancel goes.
    pub action: &'a str,
    pub back: &'a str,
    pub button: &'a str,
    /// The action's own fields, posted again.
    pub fields: &'a [(&'a str, &'a str)],
}

impl Confirm<'_> {
    pub fn page(&self, member: &Member) -> Result<HttpResponse, PortalError> {
        html(&ConfirmPage {
            shell: Shell::new(member, self.back),
            title: self.title,
            consequences: self.consequences,
            action: self.action,
            back: self.back,
            button: self.button,
            fields: self.fields,
        })
    }
}

/// The form field a confirmation page adds.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Confirmed {
    #[serde(default)]
    confirmed: String,
}

impl Confirmed {
    pub fn yes(&self) -> bool {
        self.confirmed == "yes"
    }
}
