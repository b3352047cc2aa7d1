//! `/statements`: a wallet and a month picked, the statement shown as a
//! printable page or downloaded as CSV.

use actix_web::http::header;
use actix_web::web::{self, Bytes, Data, Query};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::balances::BalanceAccount;
use paydesk_api::Client;
use serde::{Deserialize, Serialize};

use super::statement::{self, Month, Statement};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::area::Area;
use crate::audit::{self, Event};
use crate::state::AppState;
use crate::web::csv;
use crate::web::error::PortalError;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{html, Section, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/statements", web::get().to(page))
        .route("/statements/export.csv", web::get().to(export));
}

/// The picker as the query string carries it.
#[derive(Debug, Default, Deserialize, Serialize)]
pub struct Pick {
    #[serde(default)]
    currency: String,
    #[serde(default)]
    month: String,
}

#[derive(Template)]
#[template(path = "statements/page.html")]
struct Page {
    shell: Shell,
    accounts: Vec<BalanceAccount>,
    currency: String,
    month: String,
    /// Why the pick was not understood, in the user's terms.
    note: Option<String>,
    statement: Section<Statement>,
    /// The service's ledger balance now, when the month is the current one.
    ledger_now: Option<i64>,
    can_export: bool,
}

/// The wallet and month picked, or the first wallet and this month, with a
/// note when the pick was not one of them.
fn resolve(pick: &Pick, accounts: &[BalanceAccount]) -> (Option<BalanceAccount>, Month, Option<String>) {
    let wanted = pick.currency.trim();
    let found = accounts
        .iter()
        .find(|a| a.currency.code().eq_ignore_ascii_case(wanted));
    let month = Month::parse(&pick.month);
    let note = if !wanted.is_empty() && found.is_none() {
        Some(format!(
            "'{wanted}' is not one of your wallets; showing the first."
        ))
    } else if !pick.month.is_empty() && month.is_none() {
        Some(format!(
            "'{}' is not a month (use YYYY-MM); showing this month.",
            pick.month
        ))
    } else {
        None
    };
    let account = found.or(accounts.first()).cloned();
    (account, month.unwrap_or_else(Month::current), note)
}

async fn load(
    client: &Client,
    pick: &Pick,
) -> Result<(Vec<BalanceAccount>, Option<Statement>, Option<String>), paydesk_api::ApiError> {
    let accounts = client.balances().await?.accounts;
    let (account, month, note) = resolve(pick, &accounts);
    let statement = match account {
        Some(a) => Some(statement::build(client, a.currency, a.account_number, month).await?),
        None => None,
    };
    Ok((accounts, statement, note))
}

async fn page(state: Data<AppState>, member: Member, pick: Query<Pick>) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TransactionsRead).await?;
    let loaded = load(&client, &pick).await;
    let (accounts, statement, note) = match loaded {
        Ok((accounts, Some(s), note)) => (accounts, Section::Loaded(s), note),
        Ok((accounts, None, note)) => (accounts, Section::Hidden, note),
        Err(e) => (Vec::new(), Section::from_result(Err(e)), None),
    };
    let (currency, month, ledger_now) = match &statement {
        Section::Loaded(s) => (
            s.currency.to_string(),
            s.month.key(),
            (s.month == Month::current())
                .then(|| {
                    accounts
                        .iter()
                        .find(|a| a.currency == s.currency)
                        .map(|a| a.ledger_balance.value())
                })
                .flatten(),
        ),
        _ => (pick.currency.clone(), pick.month.clone(), None),
    };
    html(&Page {
        shell: Shell::new(&member, "/statements"),
        accounts,
        currency,
        month,
        note,
        statement,
        ledger_now,
        can_export: member.can(Permission::TransactionsExport),
    })
}

/// The statement's CSV: an opening line, one line per movement with the
/// balance after it, and a closing line; plain numbers a spreadsheet adds.
fn csv_body(s: &Statement) -> Bytes {
    let cur = s.currency.to_string();
    let mut out = csv::Lines::new();
    let mut push = |cells: [String; 8]| out.record(cells);
    push(
        [
            "value date",
            "type",
            "reference",
            "transaction id",
            "amount",
            "fee",
            "balance",
            "currency",
        ]
        .map(String::from),
    );
    let first = s.month.first_day().to_string();
    push([
        first,
        "Opening balance".into(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        s.plain(s.opening),
        cur.clone(),
    ]);
    for l in &s.lines {
        push([
            l.value_date.to_string(),
            l.kind.as_str().to_owned(),
            l.reference.clone(),
            l.transaction_id.to_string(),
            s.plain(l.amount),
            s.plain(l.fee),
            s.plain(l.balance),
            cur.clone(),
        ]);
    }
    let last = s.month.last_day().to_string();
    push([
        last,
        "Closing balance".into(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        s.plain(s.closing),
        cur.clone(),
    ]);
    out.finish()
}

async fn export(
    state: Data<AppState>,
    member: Member,
    pick: Query<Pick>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::TransactionsRead)?;
    let client = state.client_for(&member, Permission::TransactionsExport).await?;
    let Some(s) = load(&client, &pick).await?.1 else {
        return Err(PortalError::NotFound(
            "The service lists no wallet to make a statement of.".into(),
        ));
    };
    let details = serde_json::json!({ "currency": s.currency.to_string(), "month": s.month.key() });
    audit::member_did(
        &state.pool,
        &member,
        Event::StatementsExported,
        "statements",
        details,
    )
    .await?;
    let filename = format!("statement-{}-{}.csv", s.currency, s.month.key());
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/csv; charset=utf-8"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{filename}\""),
        ))
        .body(csv_body(&s)))
}

/// Statements of the wallet over a period.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/statements",
        "Statements",
        ShownTo::Holding(&[Permission::TransactionsRead]),
    )],
    kinds: crate::area::no_kinds,
};
