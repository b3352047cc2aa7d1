use actix_web::web::{Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use paydesk_api::models::transactions::{Transaction, TransactionQuery, TransactionState, TransactionType};
use paydesk_api::units::Currency;
use paydesk_api::{ApiError, Client};
use serde::{Deserialize, Serialize};

use crate::access::permissions::Permission;
use crate::access::Member;
use crate::audit::{self, Event};
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::listing::{self, CsvRecord, Dates, Listing, Problem};
use crate::web::page::{html, Shell};

const PAGE_SIZE: u32 = 25;

/// The list's filters, as they appear in the query string.
#[derive(Debug, Default, Deserialize, Serialize)]
pub struct Filters {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    currency: String,
    #[serde(flatten)]
    dates: Dates,
    #[serde(default)]
    cursor: String,
}

impl Filters {
    /// The upstream query; a value that is not one of the options is
    /// dropped with a note for the page.
    fn query(&self, limit: Option<u32>) -> (TransactionQuery, Vec<String>) {
        let mut notes = Vec::new();
        let kind = Some(self.kind.as_str())
            .filter(|v| !v.is_empty())
            .and_then(TransactionType::parse);
        let status = Some(self.status.as_str())
            .filter(|v| !v.is_empty())
            .and_then(TransactionState::parse);
        let currency = Some(self.currency.as_str())
            .filter(|v| !v.is_empty())
            .and_then(|v| Currency::parse(v).ok());
        if !self.kind.is_empty() && kind.is_none() {
            notes.push(format!(
                "'{}' is not a transaction type; showing every type",
                self.kind
            ));
        }
        if !self.status.is_empty() && status.is_none() {
            notes.push(format!("'{}' is not a state; showing every state", self.status));
        }
        if !self.currency.is_empty() && currency.is_none() {
            notes.push(format!(
                "'{}' is not a currency; showing every currency",
                self.currency
            ));
        }
        let query = TransactionQuery {
            kind,
            status,
            currency,
            cursor: Some(self.cursor.clone()).filter(|c| !c.is_empty()),
            limit,
        };
        notes.extend(self.dates.notes());
        (query, notes)
    }
}

/// The page the filters ask for (see `listing::page_or_range`).
async fn load(
    client: &Client,
    filters: &Filters,
    query: TransactionQuery,
) -> Result<Listing<Transaction>, ApiError> {
    let all = TransactionQuery {
        cursor: None,
        limit: Some(100),
        ..query.clone()
    };
    let page = async {
        let p = client.transactions(&query).await?;
        let next = p.has_more.then_some(p.next_cursor.as_str());
        Ok(Listing::new(p.transactions, p.total_count, next, filters))
    };
    let all = client.all_transactions(all);
    listing::page_or_range(filters.dates.range(), page, all, |t| t.created_at, filters).await
}

/// The rows and the "load more" link: the same fragment serves the full
/// page and each htmx "load more".
#[derive(Template)]
#[template(path = "wallet/transaction_rows.html")]
struct Rows {
    transactions: Vec<Transaction>,
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "wallet/transactions.html")]
struct ListPage {
    shell: Shell,
    filters: Filters,
    types: &'static [TransactionType],
    states: &'static [TransactionState],
    notes: Vec<String>,
    error: Problem,
    total: u64,
    rows: Rows,
    capped: bool,
    can_export: bool,
    export_query: String,
}

pub async fn list(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let filters = filters.into_inner();
    let client = state.client_for(&member, Permission::TransactionsRead).await?;
    let (query, notes) = filters.query(Some(PAGE_SIZE));
    let loaded = load(&client, &filters, query).await;
    let rows = |l: Listing<Transaction>| Rows {
        transactions: l.rows,
        next: l.next,
    };
    listing::respond(
        &req,
        !filters.cursor.is_empty(),
        loaded,
        |l| rows(l).render(),
        |l, error| {
            ListPage {
                shell: Shell::new(&member, "/transactions"),
                export_query: listing::query(&filters, None),
                filters,
                types: TransactionType::ALL,
                states: TransactionState::ALL,
                notes,
                error,
                total: l.total,
                capped: l.capped,
                rows: rows(l),
                can_export: member.can(Permission::TransactionsExport),
            }
            .render()
        },
    )
}

#[derive(Template)]
#[template(path = "wallet/transaction.html")]
struct DetailPage {
    shell: Shell,
    tx: Transaction,
    metadata: Vec<(String, String)>,
    related: Vec<(&'static str, String)>,
    /// On a sandbox whose clock was moved: which times are on which clock.
    clock: Option<String>,
}

/// The service's metadata keys that name the record a movement belongs
/// to, with how the portal's page of that record reads and where it is.
const RELATED: &[(&str, &str, &str)] = &[
    ("card_id", "Card", "/cards/"),
    ("order_id", "Order", "/trading/orders/"),
    ("target_order_id", "Target order", "/trading/targets/"),
    ("withdrawal_id", "Withdrawal", "/withdrawals/"),
    ("invoice_id", "Lightning invoice", "/lightning/invoices/"),
    ("virtual_account_id", "Virtual account", "/virtual-accounts/"),
    ("customer_id", "Customer", "/customers/"),
];

/// Links to what the movement belongs to: the records its metadata names
/// (ids only, so nothing else reaches a link), the deposit address by
/// search, and the approval request filed under its reference.
fn related(tx: &Transaction, request: Option<uuid::Uuid>) -> Vec<(&'static str, String)> {
    let id = |key: &str| {
        tx.metadata
            .get(key)
            .and_then(|v| v.as_str())
            .and_then(|v| uuid::Uuid::parse_str(v).ok())
    };
    let mut links: Vec<(&'static str, String)> = RELATED
        .iter()
        .filter_map(|(key, label, base)| id(key).map(|v| (*label, format!("{base}{v}"))))
        .collect();
    let address = tx.metadata.get("address").and_then(|v| v.as_str());
    if let Some(a) = address.filter(|a| a.chars().all(|c| c.is_ascii_alphanumeric())) {
        links.push(("Deposit address", format!("/search?q={a}")));
    }
    if let Some(r) = request {
        links.push(("Approval request", format!("/approvals/{r}")));
    }
    links
}

pub async fn one(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TransactionsRead).await?;
    let tx = client.transaction(&id).await?;
    let metadata = tx
        .metadata
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
        .collect();
    let request = crate::approvals::filed_as(&state.pool, member.tenant_id, &tx.reference).await?;
    html(&DetailPage {
        shell: Shell::new(&member, "/transactions"),
        clock: crate::sandbox_tools::clock::note(&client, &member).await,
        related: related(&tx, request),
        tx,
        metadata,
    })
}

impl CsvRecord for Transaction {
    const HEADER: &'static [&'static str] = &[
        "transaction_id",
        "created_at",
        "type",
        "state",
        "side",
        "currency",
        "amount",
        "fee",
        "amount_formatted",
        "reference",
        "account_number",
        "value_date",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.transaction_id.to_string(),
            self.created_at.to_rfc3339(),
            self.kind.to_string(),
            self.state.to_string(),
            format!("{:?}", self.side),
            self.currency.to_string(),
            self.amount.to_string(),
            self.fee.to_string(),
            self.amount_formatted.clone(),
            self.reference.clone(),
            self.account_number.clone(),
            self.value_date.to_string(),
        ]
    }
}

/// Streams every transaction matching the filters as CSV, page by page.
pub async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::TransactionsRead)?;
    let client = state.client_for(&member, Permission::TransactionsExport).await?;
    // The export is of the filter, from the first record: a page's cursor
    // (perhaps stale or mistyped) has no say in it.
    let (mut query, _) = filters.query(Some(100));
    query.cursor = None;
    let rows = filters
        .dates
        .range()
        .within(client.all_transactions(query), |t| t.created_at);
    let response = listing::export("transactions", rows).await?;
    let details = serde_json::json!({ "filters": listing::query(&*filters, None) });
    audit::member_did(
        &state.pool,
        &member,
        Event::TransactionsExported,
        "transactions",
        details,
    )
    .await?;
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_filter_values_are_dropped_with_a_note() {
        let f = Filters {
            kind: "GIFT".into(),
            status: "settled".into(),
            currency: "USDT".into(),
            dates: Dates::default(),
            cursor: String::new(),
        };
        let (q, notes) = f.query(None);
        assert!(q.kind.is_none());
        assert_eq!(q.status, Some(TransactionState::Settled));
        assert_eq!(notes.len(), 1);
    }
}
