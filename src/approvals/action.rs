//! The one trait every kind of money-moving action implements, and the
//! registry of kinds built at start-up. The gate (engine and executor)
//! calls only this: it names no kind itself.
//!
//! A kind lives in its own domain (payouts in `payouts/`, card actions in
//! `cards/`). It has a typed payload, fixed when the request is filed and
//! shown to reviewers; a typed progress, saved between runs so an
//! interrupted run knows what already happened; and `execute`, which
//! re-checks the world, carries the action out exactly once under the
//! request's upstream reference, and settles an unknown outcome by reading
//! back by that reference, never by sending again.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use paydesk_api::{ApiError, Client};
use serde::de::DeserializeOwned;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::PgPool;

use super::model::{Kind, Policy};
use super::store::{self, ActionRequest};
use crate::access::store::GrantedBy;
use crate::mail::Mailer;
use crate::state::AppState;

/// One line of what reviewers see, and what the digest covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fact {
    pub label: String,
    pub value: String,
    /// A page of the portal the value links to.
    pub link: Option<String>,
}

impl Fact {
    pub fn new(label: &str, value: impl Into<String>) -> Fact {
        Fact {
            label: label.to_owned(),
            value: value.into(),
            link: None,
        }
    }

    pub fn linked(label: &str, value: impl Into<String>, link: String) -> Fact {
        Fact {
            link: Some(link),
            ..Fact::new(label, value)
        }
    }
}

/// Someone or somewhere an action pays: the first payment to it is a
/// policy rule of its own. `key` identifies it across requests
/// ("account:NG:058:0123456789"); `label` names it for reviewers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counterparty {
    pub key: String,
    pub label: String,
}

/// What one run of an action came to.
#[derive(Debug)]
pub enum Step<P> {
    /// Carried out, with its final outcome (for the timeline and notices).
    Done(String),
    /// Nothing more will happen: the action was not carried out, or it
    /// failed upstream. The reason, in the requester's words.
    Failed(String),
    /// Run again after this long: the outcome is not final yet (a payout
    /// on the rail) or not known (a lost answer, read back next run).
    Again(Duration),
    /// The approved terms can't be kept (a rate moved beyond tolerance):
    /// back to the approvers with the payload as it now stands.
    SendBack { payload: P, why: String },
}

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error("{0}")]
    Internal(String),
}

/// Mail to people, and where its links point.
#[derive(Clone, Copy)]
pub struct Mailing<'a> {
    pub mailer: &'a Mailer,
    pub public_url: &'a str,
}

/// What a kind's `execute` works with: the portal's database, mail, the
/// tenant's client and the request, not the whole application.
pub struct Run<'a, P> {
    /// For kinds that change the portal's own records.
    pub pool: &'a PgPool,
    /// For kinds that write to people (an invitation).
    pub mail: Mailing<'a>,
    /// The kinds the gate knows, for the gate's own kinds (a new policy
    /// names one).
    pub gate: &'a Registry,
    /// The tenant's signed client; None for kinds that change only the
    /// portal's own records.
    pub upstream: Option<&'a Client>,
    pub request: &'a ActionRequest,
    /// The policy version the request was filed under.
    pub policy: &'a Policy,
    pub progress: P,
}

impl<P: Serialize> Run<'_, P> {
    pub fn client(&self) -> Result<&Client, ExecError> {
        self.upstream
            .ok_or_else(|| ExecError::Internal("this kind of action has no upstream client".to_owned()))
    }

    /// Fixed when the request was filed; every upstream call carries it.
    pub fn reference(&self) -> &str {
        &self.request.upstream_reference
    }

    /// Saves the progress (before anything that moves money, so a crash
    /// afterwards is reconciled from it) with a timeline entry.
    pub async fn save(&self, what: &str, detail: &str) -> Result<(), sqlx::Error> {
        let progress = serde_json::to_value(&self.progress).unwrap_or_default();
        store::save_progress(self.pool, self.request.id, &progress, what, detail).await
    }

    /// The requester as the author of a grant this run makes, and the
    /// admin whose approval confirmed it (none when it applied at once).
    pub async fn grant_authors(&self) -> Result<GrantedBy, sqlx::Error> {
        let approvers = store::approvers(self.pool, self.request.id).await?;
        Ok(GrantedBy {
            by: Some(self.request.requested_by),
            confirmed_by: approvers.into_iter().find(|a| *a != self.request.requested_by),
        })
    }

    /// A timeline entry only.
    pub async fn note(&self, what: &str, detail: &str) -> Result<(), sqlx::Error> {
        store::add_timeline(self.pool, self.request.id, what, detail).await
    }
}

/// A deposit a run waits for someone to send before the action can go on
/// (an onchain payout's): the request's page shows it with a QR code and a
/// copy button while the request runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwaitedDeposit {
    pub address: String,
    /// Exactly what must arrive, in `asset`.
    pub amount: rust_decimal::Decimal,
    pub asset: String,
    /// The chain it must come on, for people.
    pub network: String,
}

/// Which of a kind's requests a service event is about.
pub enum Concerns {
    /// The request whose saved progress holds this id under this key
    /// (a payout's id, known once its run created it).
    Progress(&'static str, String),
    /// The request filed under this upstream reference.
    Reference(String),
}

/// One kind of action, as its domain implements it.
pub trait Action: Send + Sync + 'static {
    /// Everything the action needs, fixed at filing and shown to reviewers.
    type Payload: Serialize + DeserializeOwned + Send + Sync;
    /// What execution has done so far.
    type Progress: Serialize + DeserializeOwned + Default + Send + Sync;

    const KIND: Kind;

    /// A change to the portal's own controls (roles, permissions,
    /// policies, connections): it needs no upstream client, and it waits
    /// for a second admin only where the tenant has one.
    const CONTROL: bool = false;

    /// Calls the service. Controls of the portal's own records don't.
    const NEEDS_UPSTREAM: bool = !Self::CONTROL;

    /// The policy until an admin saves one.
    fn default_policy(&self) -> Policy {
        Policy::standard()
    }

    /// What reviewers see; the digest they approve covers it.
    fn describe(&self, payload: &Self::Payload) -> Vec<Fact>;

    /// Whom or where the action pays, for the first-time rule.
    /// Where the action stands upstream, for the header of its request's
    /// page ("payout PENDING"); none until its run says.
    fn headline(&self, _progress: &Self::Progress) -> Option<String> {
        None
    }

    /// A deposit the run waits for (see `AwaitedDeposit`); none by default.
    fn awaits(&self, _progress: &Self::Progress) -> Option<AwaitedDeposit> {
        None
    }

    fn counterparties(&self, _payload: &Self::Payload) -> Vec<Counterparty> {
        Vec::new()
    }

    /// Which request of this kind a service event (`event`, its `data`)
    /// is about, so the gate wakes its run to read the outcome back.
    fn concerns(&self, _event: &str, _data: &serde_json::Value) -> Option<Concerns> {
        None
    }

    /// Re-checks, then carries the action out exactly once.
    fn execute<'a>(
        &'a self,
        run: &'a mut Run<'_, Self::Progress>,
        payload: &'a Self::Payload,
    ) -> impl Future<Output = Result<Step<Self::Payload>, ExecError>> + Send + 'a;
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// `Step` once the payload is back to JSON, for the gate.
pub type ErasedStep = Step<serde_json::Value>;

/// An `Action` seen through JSON, so kinds of different payloads sit in
/// one registry.
pub trait ErasedAction: Send + Sync {
    fn kind(&self) -> Kind;
    /// The kind, and whether it changes controls, as quorums weigh them.
    fn quorum(&self) -> (Kind, bool);
    fn needs_upstream(&self) -> bool;
    fn default_policy(&self) -> Policy;
    fn describe(&self, payload: &serde_json::Value) -> Result<Vec<Fact>, serde_json::Error>;
    fn counterparties(&self, payload: &serde_json::Value) -> Result<Vec<Counterparty>, serde_json::Error>;
    fn headline(&self, progress: &serde_json::Value) -> Option<String>;
    fn awaits(&self, progress: &serde_json::Value) -> Option<AwaitedDeposit>;
    fn concerns(&self, event: &str, data: &serde_json::Value) -> Option<Concerns>;
    fn execute<'a>(
        &'a self,
        state: &'a AppState,
        upstream: Option<&'a Client>,
        request: &'a ActionRequest,
        policy: &'a Policy,
    ) -> BoxFuture<'a, Result<ErasedStep, ExecError>>;
}

impl<A: Action> ErasedAction for A {
    fn kind(&self) -> Kind {
        A::KIND
    }

    fn quorum(&self) -> (Kind, bool) {
        (A::KIND, A::CONTROL)
    }

    fn needs_upstream(&self) -> bool {
        A::NEEDS_UPSTREAM
    }

    fn default_policy(&self) -> Policy {
        Action::default_policy(self)
    }

    fn describe(&self, payload: &serde_json::Value) -> Result<Vec<Fact>, serde_json::Error> {
        let payload: A::Payload = serde_json::from_value(payload.clone())?;
        Ok(Action::describe(self, &payload))
    }

    fn headline(&self, progress: &serde_json::Value) -> Option<String> {
        let progress: A::Progress = serde_json::from_value(progress.clone()).ok()?;
        Action::headline(self, &progress)
    }

    fn awaits(&self, progress: &serde_json::Value) -> Option<AwaitedDeposit> {
        let progress: A::Progress = serde_json::from_value(progress.clone()).ok()?;
        Action::awaits(self, &progress)
    }

    fn counterparties(&self, payload: &serde_json::Value) -> Result<Vec<Counterparty>, serde_json::Error> {
        let payload: A::Payload = serde_json::from_value(payload.clone())?;
        Ok(Action::counterparties(self, &payload))
    }

    fn concerns(&self, event: &str, data: &serde_json::Value) -> Option<Concerns> {
        Action::concerns(self, event, data)
    }

    fn execute<'a>(
        &'a self,
        state: &'a AppState,
        upstream: Option<&'a Client>,
        request: &'a ActionRequest,
        policy: &'a Policy,
    ) -> BoxFuture<'a, Result<ErasedStep, ExecError>> {
        Box::pin(async move {
            let corrupt = |e: serde_json::Error| {
                ExecError::Internal(format!("request {} is unreadable: {e}", request.id))
            };
            let payload: A::Payload = serde_json::from_value(request.payload.0.clone()).map_err(corrupt)?;
            let progress: A::Progress =
                serde_json::from_value(request.progress.0.clone()).map_err(corrupt)?;
            let mut run = Run {
                pool: &state.pool,
                mail: Mailing {
                    mailer: &state.mailer,
                    public_url: &state.public_url,
                },
                gate: &state.gate,
                upstream,
                request,
                policy,
                progress,
            };
            Ok(match Action::execute(self, &mut run, &payload).await? {
                Step::Done(s) => Step::Done(s),
                Step::Failed(s) => Step::Failed(s),
                Step::Again(d) => Step::Again(d),
                Step::SendBack { payload, why } => Step::SendBack {
                    payload: serde_json::to_value(&payload).map_err(corrupt)?,
                    why,
                },
            })
        })
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the database holds a request of kind '{0}', which this version of Paydesk does not know")]
pub struct UnknownKind(pub String);

/// The kinds this portal runs, registered at start-up.
#[derive(Clone, Default)]
pub struct Registry {
    kinds: BTreeMap<&'static str, Arc<dyn ErasedAction>>,
}

impl Registry {
    pub fn with<A: Action>(mut self, action: A) -> Registry {
        let previous = self.kinds.insert(A::KIND.key, Arc::new(action));
        assert!(previous.is_none(), "kind '{}' registered twice", A::KIND.key);
        self
    }

    pub fn get(&self, key: &str) -> Result<&dyn ErasedAction, UnknownKind> {
        self.kinds
            .get(key)
            .map(|a| a.as_ref())
            .ok_or_else(|| UnknownKind(key.to_owned()))
    }

    pub fn kinds(&self) -> impl Iterator<Item = Kind> + '_ {
        self.kinds.values().map(|a| a.kind())
    }

    /// The kinds a service event is about, and which of their requests.
    pub fn concerned(&self, event: &str, data: &serde_json::Value) -> Vec<(Kind, Concerns)> {
        self.kinds
            .values()
            .filter_map(|a| Some((a.kind(), a.concerns(event, data)?)))
            .collect()
    }
}

/// What approvers bind their approval to: the kind and everything shown
/// and executed. Any change to the action changes it.
pub fn digest(kind: Kind, facts: &[Fact], payload: &serde_json::Value) -> String {
    let mut hash = Sha256::new();
    hash.update(kind.key.as_bytes());
    hash.update([0]);
    hash.update(serde_json::to_vec(facts).unwrap_or_default());
    hash.update([0]);
    hash.update(serde_json::to_vec(payload).unwrap_or_default());
    hex::encode(hash.finalize())
}

/// How long a run waits before reading back what the service is still
/// moving (a payout on its rail, a withdrawal on chain): as long as it has
/// been moving, but at least 10 s and at most 30 s (10, 20, 40, 70 s...),
/// then every minute after two minutes. The first move takes at least 10 s
/// (the sandbox's rules say so of every asynchronous step, and rails and
/// chains are slower), and every one in flight is read back on its own
/// (the service has no list to read them at once), so a gate that carries
/// out thousands a minute would otherwise spend most of its calls asking
/// "still pending?". A connection with webhooks hears each move at once
/// (an event wakes the run); without, a member sees it at most 30 s late.
pub fn read_back_after(moving_since: Option<DateTime<Utc>>) -> Duration {
    let moving = moving_since
        .and_then(|at| (Utc::now() - at).to_std().ok())
        .unwrap_or_default();
    if moving >= Duration::from_secs(120) {
        Duration::from_secs(60)
    } else {
        moving.clamp(Duration::from_secs(10), Duration::from_secs(30))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::permissions::Permission;

    const KIND: Kind = Kind {
        key: "payout",
        label: "Payouts",
        read_permission: Permission::PayoutsRead,
        request_permission: Permission::PayoutsRequest,
        approve_permission: Permission::PayoutsApprove,
    };

    #[test]
    fn any_change_to_what_is_reviewed_changes_the_digest() {
        let facts = vec![Fact::new("Send", "100 USDT")];
        let payload = serde_json::json!({"amount": "100"});
        let first = digest(KIND, &facts, &payload);
        assert_eq!(first, digest(KIND, &facts, &payload));
        assert_ne!(first, digest(KIND, &[Fact::new("Send", "101 USDT")], &payload));
        assert_ne!(first, digest(KIND, &facts, &serde_json::json!({"amount": "101"})));
        let other = Kind {
            key: "card_funding",
            ..KIND
        };
        assert_ne!(first, digest(other, &facts, &payload));
    }

    #[test]
    fn what_is_still_moving_is_read_back_less_often_the_longer_it_moves() {
        let after = |secs: i64| read_back_after(Some(Utc::now() - chrono::Duration::seconds(secs))).as_secs();
        assert_eq!(read_back_after(None).as_secs(), 10);
        assert_eq!(after(0), 10);
        assert_eq!(after(15), 15);
        assert_eq!(after(20), 20);
        assert_eq!(after(40), 30);
        assert_eq!(after(130), 60);
    }

    #[test]
    fn an_unknown_kind_is_an_error_never_a_default() {
        let registry = crate::startup::registry();
        assert!(registry.get("payout").is_ok());
        let err = registry.get("teleport").err().expect("unknown kinds are refused");
        assert!(err.to_string().contains("'teleport'"));
    }
}
