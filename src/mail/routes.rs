//! The outbox page: mail the portal would have sent, for platform admins,
//! when no SMTP server is configured.

use actix_web::web::{self, Data};
use actix_web::HttpResponse;
use askama::Template;

use super::{outbox, Mailer, OutboxMail};
use crate::access::member::PlatformAdmin;
use crate::area::Area;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::page::{html, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/platform/outbox", web::get().to(outbox_page));
}

#[derive(Template)]
#[template(path = "mail/outbox.html")]
struct OutboxPage {
    shell: Shell,
    smtp: bool,
    mails: Vec<OutboxMail>,
}

async fn outbox_page(
    state: Data<AppState>,
    PlatformAdmin(admin): PlatformAdmin,
) -> Result<HttpResponse, PortalError> {
    html(&OutboxPage {
        shell: Shell::for_platform_admin(&state.pool, &admin, "/platform").await?,
        smtp: matches!(state.mailer, Mailer::Smtp { .. }),
        mails: outbox(&state.pool, 100).await?,
    })
}

/// Mail sent and, in development, the outbox page.
pub const AREA: Area = Area::routes(configure);
