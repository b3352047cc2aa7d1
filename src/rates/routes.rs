//! `/rates`: the board (its table refreshes itself) and the converter.

use actix_web::web::{self, Data, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use paydesk_api::models::rates::{Conversion, ExchangeRate};

use super::board::{self, ConvertForm};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::area::Area;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{html, is_htmx, Section, Shell};

/// How often the open page asks for fresh rates (they hold 30 seconds).
const REFRESH_SECS: u32 = 10;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/rates", web::get().to(page))
        .route("/rates/board", web::get().to(table))
        .route("/rates/convert", web::get().to(convert));
}

#[derive(Template)]
#[template(path = "rates/board.html")]
struct Board {
    rates: Section<Vec<ExchangeRate>>,
    refresh_secs: u32,
}

#[derive(Template)]
#[template(path = "rates/converted.html")]
struct Converted {
    form: ConvertForm,
    result: Option<Conversion>,
    errors: FieldErrors,
}

#[derive(Template)]
#[template(path = "rates/page.html")]
struct Page {
    shell: Shell,
    board: Board,
    converter: Converted,
    /// The currencies the converter offers: those of the traded pairs.
    currencies: Vec<String>,
}

async fn load_board(state: &AppState, member: &Member) -> Result<Board, PortalError> {
    let client = state.client_for(member, Permission::RatesRead).await?;
    Ok(Board {
        rates: Section::from_result(board::rates(&client).await),
        refresh_secs: REFRESH_SECS,
    })
}

async fn page(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    let board = load_board(&state, &member).await?;
    let mut currencies: Vec<String> = match &board.rates {
        Section::Loaded(rates) => rates
            .iter()
            .flat_map(|r| [r.base_currency.clone(), r.target_currency.clone()])
            .collect(),
        _ => Vec::new(),
    };
    currencies.sort();
    currencies.dedup();
    let converter = Converted {
        form: ConvertForm::default(),
        result: None,
        errors: FieldErrors::default(),
    };
    html(&Page {
        shell: Shell::new(&member, "/rates"),
        board,
        converter,
        currencies,
    })
}

/// The board alone, for the page's refresh.
async fn table(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    html(&load_board(&state, &member).await?)
}

/// The converter's answer, in place (the page itself without htmx).
async fn convert(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    form: Query<ConvertForm>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::RatesRead).await?;
    let form = form.into_inner();
    let (result, errors) = match split(board::convert(&client, &form).await)? {
        Ok(conversion) => (Some(conversion), FieldErrors::default()),
        Err(refusal) => (None, refusal.into()),
    };
    let converter = Converted { form, result, errors };
    if is_htmx(&req) {
        return html(&converter);
    }
    let board = load_board(&state, &member).await?;
    html(&Page {
        shell: Shell::new(&member, "/rates"),
        board,
        currencies: vec![converter.form.from.clone(), converter.form.to.clone()],
        converter,
    })
}

/// Exchange rates and the converter.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/rates",
        "Rates",
        ShownTo::Holding(&[Permission::RatesRead]),
    )],
    kinds: crate::area::no_kinds,
};
