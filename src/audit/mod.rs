//! The audit log: one append-only, hash-chained record of every sign-in,
//! every change to users, roles, connections and settings, and every
//! upstream call. This module is the only place that writes it.
//!
//! At scale (issue 18; measured by `bench/audit_scale.sh`):
//! - The search page reads newest first by (occurred_at, id), not by id:
//!   one index per log on (log, occurred_at, id) then serves the first
//!   page, a date range and a deep page alike, and the "load more" cursor
//!   stays a record id (its time is looked up). The actor, action and
//!   outcome filters have an index each per log ending in the same order;
//!   so has a target's kind, and its whole text and the id it names
//!   (lower-cased), so that a kind, a pasted id or target ("approval:4242",
//!   "po_42") or its beginning is one index range (`target`); there is no
//!   match of text anywhere in a target. One statement serves every filter set,
//!   planned with its values each time (`store::search`), and the CSV
//!   export streams the same statement whole.
//! - An actor filter is matched against the log's distinct actor emails
//!   first, so an actor nobody is costs nothing; an action filter that
//!   names exactly one event is matched by equality (actions are the
//!   events' lower-case names, so the prefix match is a plain `LIKE`).
//! - "Verify chain" is a job (`verify`): streamed, its progress in a table
//!   any replica's page polls, and incremental from each log's last
//!   verified record. Runs under 100,000 records end within the request.
//!   "Verify whole chain" re-hashes from the first record, which is the
//!   only check of records before the point. The walk cuts the log into
//!   ranges checked at once (each from the stored hash before it), so
//!   Postgres reading one range and the portal hashing another overlap.
//! - Appending does not wait on the log: records are staged with the
//!   change they describe and linked into the chain after commit, in
//!   batches (`store::link`), so a log is not bounded by one disk flush
//!   per record.

pub mod bundle;
pub mod chain;
pub mod checkpoint;
pub mod details;
pub mod export;
pub mod mask;
pub mod routes;
pub mod store;
pub mod sweeper;
pub mod target;
pub mod verify;
pub mod writer;

use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

macro_rules! events {
    ($($variant:ident => $name:literal;)*) => {
        /// Every kind of record the audit log holds. The name is what is
        /// stored and searched; a misspelt event does not compile.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Event {
            $($variant,)*
        }

        impl Event {
            pub const ALL: &'static [Event] = &[$(Event::$variant,)*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Event::$variant => $name,)*
                }
            }
        }
    };
}

events! {
    ApprovalsApproved => "approvals.approved";
    ApprovalsCancelled => "approvals.cancelled";
    ApprovalsExecuted => "approvals.executed";
    ApprovalsExported => "approvals.exported";
    ApprovalsExecuting => "approvals.executing";
    ApprovalsExpired => "approvals.expired";
    ApprovalsFailed => "approvals.failed";
    ApprovalsRejected => "approvals.rejected";
    ApprovalsRequested => "approvals.requested";
    ApprovalsSentBack => "approvals.sent_back";
    AuditExported => "audit.exported";
    AuditVerified => "audit.verified";
    AuthPasswordChanged => "auth.password_changed";
    AuthPasswordReset => "auth.password_reset";
    AuthPasswordResetRequested => "auth.password_reset_requested";
    AuthRecoveryCodesRenewed => "auth.recovery_codes_renewed";
    AuthSessionEnded => "auth.session_ended";
    AuthSteppedUp => "auth.stepped_up";
    AuthTwoFactorDisabled => "auth.two_factor_disabled";
    AuthTwoFactorEnabled => "auth.two_factor_enabled";
    AuthTwoFactorFailed => "auth.two_factor_failed";
    AuthSignIn => "auth.sign_in";
    AuthSignInFailed => "auth.sign_in_failed";
    AuthSignOut => "auth.sign_out";
    AuthSignOutEverywhere => "auth.sign_out_everywhere";
    AuthTenantSwitched => "auth.tenant_switched";
    CardsDetailsRevealed => "cards.details_revealed";
    CardsExported => "cards.exported";
    CardsLimitsChanged => "cards.limits_changed";
    ConnectionsCreated => "connections.created";
    ConnectionsDeleted => "connections.deleted";
    ConnectionsMadePrimary => "connections.made_primary";
    CustomersCreated => "customers.created";
    CustomersDeactivated => "customers.deactivated";
    CustomersExported => "customers.exported";
    CustomersKycSubmitted => "customers.kyc_submitted";
    CustomersReactivated => "customers.reactivated";
    CustomersUpdated => "customers.updated";
    LightningInvoiceCreated => "lightning.invoice_created";
    ListsExported => "lists.exported";
    MembersAdded => "members.added";
    MembersGrantConfirmed => "members.grant_confirmed";
    MembersInvitationRevoked => "members.invitation_revoked";
    MembersInvited => "members.invited";
    MembersUnlocked => "members.unlocked";
    MembersTwoFactorPolicy => "members.two_factor_policy";
    MembersRemoved => "members.removed";
    MembersRoleChanged => "members.role_changed";
    PoliciesChanged => "policies.changed";
    PoliciesReportingCurrencyChanged => "policies.reporting_currency_changed";
    RolesCreated => "roles.created";
    SettingsBaseUrlAllowed => "settings.base_url_allowed";
    SettingsBaseUrlDisallowed => "settings.base_url_disallowed";
    RolesDeleted => "roles.deleted";
    RolesPermissionsChanged => "roles.permissions_changed";
    SandboxClockAdvanced => "sandbox.clock_advanced";
    SandboxBankTransferSimulated => "sandbox.bank_transfer_simulated";
    SandboxDeliveryResent => "sandbox.delivery_resent";
    SandboxDepositSimulated => "sandbox.deposit_simulated";
    SandboxFaultArmed => "sandbox.fault_armed";
    SandboxFaultsCleared => "sandbox.faults_cleared";
    SandboxInvoicePaid => "sandbox.invoice_paid";
    SandboxPriceSet => "sandbox.price_set";
    StatementsExported => "statements.exported";
    TenantsCreated => "tenants.created";
    TenantsPlatformConfirmsGrants => "tenants.platform_confirms_grants";
    TransactionsExported => "transactions.exported";
    UpstreamCall => "upstream.call";
    UsersCreated => "users.created";
    VirtualAccountsIssued => "virtual_accounts.issued";
    UsersDisabled => "users.disabled";
    UsersEnabled => "users.enabled";
    WebhooksReceived => "webhooks.received";
    WebhooksRejected => "webhooks.rejected";
    WebhooksReplayed => "webhooks.replayed";
}

/// Who did something, from where.
#[derive(Debug, Clone, Default)]
pub struct Actor {
    pub user_id: Option<Uuid>,
    pub email: String,
    pub ip: String,
    pub user_agent: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_are_unique() {
        let mut names: Vec<&str> = Event::ALL.iter().map(|e| e.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Event::ALL.len());
    }
}

#[derive(Debug, Clone)]
pub struct NewRecord {
    pub occurred_at: DateTime<Utc>,
    pub tenant_id: Option<Uuid>,
    pub actor: Actor,
    pub action: String,
    pub target: String,
    pub outcome: String,
    pub details: Value,
}

impl NewRecord {
    pub fn new(
        actor: &Actor,
        tenant_id: Option<Uuid>,
        event: Event,
        target: impl Into<String>,
        outcome: &str,
    ) -> Self {
        NewRecord {
            occurred_at: chain::truncate_to_micros(Utc::now()),
            tenant_id,
            actor: actor.clone(),
            action: event.name().to_owned(),
            target: target.into(),
            outcome: outcome.to_owned(),
            details: Value::Object(Default::default()),
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}

/// Outcomes of staff actions.
pub mod outcome {
    pub const SUCCESS: &str = "success";
    pub const FAILURE: &str = "failure";
}

/// Records that a member did `action` to `target` in their tenant.
pub async fn member_did(
    pool: &sqlx::PgPool,
    member: &crate::access::Member,
    event: Event,
    target: impl Into<String>,
    details: Value,
) -> Result<(), sqlx::Error> {
    store::append(
        pool,
        &[NewRecord::new(
            &member.actor(),
            Some(member.tenant_id),
            event,
            target,
            outcome::SUCCESS,
        )
        .with_details(details)],
    )
    .await
}

/// Records that a member downloaded the CSV export of the list `list`
/// under `filters` (the list's query string, as the page showed it).
pub async fn exported(
    pool: &sqlx::PgPool,
    member: &crate::access::Member,
    list: &str,
    filters: &impl serde::Serialize,
) -> Result<(), sqlx::Error> {
    let details = serde_json::json!({ "filters": crate::web::listing::query(filters, None) });
    member_did(pool, member, Event::ListsExported, list, details).await
}

/// Below this many records to check, a run of "verify chain" ends within
/// the request (well under a second); above, it runs in the background
/// and the page shows its progress.
const VERIFY_IN_REQUEST: i64 = 100_000;

/// Starts "verify chain" of the member's tenant log (from its last
/// verified point, or `whole`), and gives the run as it stands: finished
/// when it was small, else running on in the background.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn verify_for(
    pool: &sqlx::PgPool,
    member: &crate::access::Member,
    whole: bool,
) -> Result<verify::Run, sqlx::Error> {
    let log = store::Log::Tenant(member.tenant_id);
    let job = verify::start(pool, log, Some(member.user.user_id), whole).await?;
    let actor = member.actor();
    if job.total < VERIFY_IN_REQUEST {
        verify::run(pool, &job, &actor).await?;
    } else {
        let (pool, job) = (pool.clone(), job.clone());
        tokio::spawn(async move {
            if let Err(e) = verify::run(&pool, &job, &actor).await {
                tracing::error!(error = %e, run = job.id, "verify chain stopped");
                verify::stopped(&pool, job.id).await;
            }
        });
    }
    verify::run_of(pool, log, job.id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)
}
