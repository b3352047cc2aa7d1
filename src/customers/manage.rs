//! Changes to a customer that the service records: deactivating
//! (blacklisting) and reactivating, each audited.

use serde_json::json;

use crate::access::permissions::Permission;
use crate::access::Member;
use crate::audit::{self, Event};
use crate::state::AppState;
use crate::web::error::user_fixable;
use crate::web::form::{Failure, Refusal};

/// Deactivates or reactivates the customer; what to tell the user.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, customer = id, active))]
pub async fn set_active(
    state: &AppState,
    member: &Member,
    id: &str,
    active: bool,
) -> Result<String, Failure> {
    let client = state.client_for(member, Permission::CustomersManage).await?;
    let customer = match client.blacklist_customer(id, !active).await {
        Ok(customer) => customer,
        Err(e) => return Err(Refusal::form(user_fixable(e)?).into()),
    };
    let (event, done) = if active {
        (Event::CustomersReactivated, "reactivated")
    } else {
        (
            Event::CustomersDeactivated,
            "deactivated: no new cards or card KYC until reactivated",
        )
    };
    let name = audit::mask::person(&customer.first_name, &customer.last_name, &customer.email);
    audit::member_did(
        &state.pool,
        member,
        event,
        format!("customer:{name}"),
        json!({ "id": id }),
    )
    .await?;
    Ok(format!("{} is {done}.", customer.email))
}
