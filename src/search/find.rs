//! What a search finds, area by area.

use std::future::Future;

use paydesk_api::models::addresses::AddressQuery;
use paydesk_api::models::cards::CardQuery;
use paydesk_api::models::customers::CustomerQuery;
use paydesk_api::{ApiError, Client};
use sqlx::PgPool;
use uuid::Uuid;

use crate::access::permissions::Permission;
use crate::access::Member;

/// One thing found: what it is, how it reads, and where it lives.
pub struct Hit {
    pub area: &'static str,
    pub title: String,
    pub detail: String,
    pub href: String,
}

/// What was found, and the areas the service could not search.
#[derive(Default)]
pub struct Found {
    pub hits: Vec<Hit>,
    pub failed: Vec<String>,
}

impl Found {
    fn take(&mut self, area: &str, result: Result<Vec<Hit>, ApiError>) {
        match result {
            Ok(hits) => self.hits.extend(hits),
            // An id or reference the service does not know, or refuses as
            // one (a name typed where an id goes), is no match.
            Err(e) if matches!(e.status(), Some(400 | 404 | 422)) => {}
            Err(e) => self
                .failed
                .push(format!("{area}: {}", crate::web::error::describe_upstream(&e).0)),
        }
    }
}

async fn transactions(client: &Client, q: &str) -> Result<Vec<Hit>, ApiError> {
    let t = client.transaction(q).await?;
    Ok(vec![Hit {
        area: "Transaction",
        title: format!(
            "{} · {}",
            crate::web::show::humanize(t.kind),
            crate::web::show::grouped(&t.amount_formatted)
        ),
        detail: format!("{} · {}", t.reference, crate::web::show::humanize(t.state)),
        href: format!("/transactions/{}", t.transaction_id),
    }])
}

async fn addresses(client: &Client, q: &str) -> Result<Vec<Hit>, ApiError> {
    let query = AddressQuery {
        addresses: vec![q.to_owned()],
        limit: Some(10),
        ..Default::default()
    };
    Ok(client
        .list_addresses(&query)
        .await?
        .addresses
        .into_iter()
        .map(|a| Hit {
            area: "Address",
            title: a.address,
            detail: format!("{} · {}", a.chain, a.label),
            href: format!("/addresses/{}", a.id),
        })
        .collect())
}

async fn cards(client: &Client, q: &str) -> Result<Vec<Hit>, ApiError> {
    let query = CardQuery {
        search: Some(q.to_owned()),
        limit: Some(10),
        ..Default::default()
    };
    Ok(client
        .cards(&query)
        .await?
        .cards
        .into_iter()
        .map(|c| Hit {
            area: "Card",
            title: format!("{} ·••• {}", c.name, c.last_four_digit),
            detail: format!("{} {} · {}", c.card_brand, c.card_type, c.status),
            href: format!("/cards/{}", c.id),
        })
        .collect())
}

async fn customers(client: &Client, q: &str) -> Result<Vec<Hit>, ApiError> {
    let mut query = CustomerQuery {
        limit: Some(10),
        ..Default::default()
    };
    if q.contains('@') {
        query.email = Some(q.to_owned());
    } else if Uuid::parse_str(q).is_ok() {
        query.id = Some(q.to_owned());
    } else {
        query.reference = Some(q.to_owned());
    }
    Ok(client
        .customers(&query)
        .await?
        .customers
        .into_iter()
        .map(|c| Hit {
            area: "Customer",
            title: format!("{} {}", c.first_name, c.last_name),
            detail: c.email,
            href: format!("/customers/{}", c.id),
        })
        .collect())
}

/// An area's search when the member may read it; nothing otherwise.
async fn allowed(
    may: bool,
    search: impl Future<Output = Result<Vec<Hit>, ApiError>>,
) -> Result<Vec<Hit>, ApiError> {
    match may {
        true => search.await,
        false => Ok(Vec::new()),
    }
}

/// Asks the service, in parallel, in each area the member may read.
pub async fn upstream(client: &Client, member: &Member, q: &str) -> Found {
    let (t, a, c, u) = tokio::join!(
        allowed(member.can(Permission::TransactionsRead), transactions(client, q)),
        allowed(member.can(Permission::AddressesRead), addresses(client, q)),
        allowed(member.can(Permission::CardsRead), cards(client, q)),
        allowed(member.can(Permission::CustomersRead), customers(client, q)),
    );
    let mut found = Found::default();
    found.take("Transactions", t);
    found.take("Addresses", a);
    found.take("Cards", c);
    found.take("Customers", u);
    found
}

/// Approval requests by id, upstream reference or words of the summary.
pub async fn requests(pool: &PgPool, tenant: Uuid, q: &str) -> Result<Vec<Hit>, sqlx::Error> {
    let rows = crate::approvals::search(pool, tenant, q).await?;
    Ok(rows
        .into_iter()
        .map(|r| Hit {
            area: "Approval request",
            title: r.summary,
            detail: format!(
                "{} · filed by {}",
                crate::web::show::humanize(r.status),
                r.requester_email
            ),
            href: format!("/approvals/{}", r.id),
        })
        .collect())
}

/// Members of the tenant by part of their email or name.
pub async fn members(pool: &PgPool, tenant: Uuid, q: &str) -> Result<Vec<Hit>, sqlx::Error> {
    let needle = q.to_lowercase();
    Ok(crate::access::store::members(pool, tenant)
        .await?
        .into_iter()
        .filter(|m| {
            m.email.to_lowercase().contains(&needle) || m.display_name.to_lowercase().contains(&needle)
        })
        .map(|m| Hit {
            area: "Member",
            title: m.display_name,
            detail: format!("{} · {}", m.email, m.role_name),
            href: "/members".to_owned(),
        })
        .collect())
}
