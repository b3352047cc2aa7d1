//! The webhook engine. Events are signed (`x-service-signature`, HMAC-SHA512
//! hex), each with a unique `event_id`; the first attempt goes out as soon
//! as the event occurs, and any answer other than 200 is retried up to 3
//! times with growing gaps on the sandbox clock (15 s, 45 s, 135 s). Sending
//! happens outside the store's lock, so no request handler waits on a
//! receiver. Every delivery keeps its attempts for the control API
//! (`GET /sandbox/webhooks/deliveries`), the newest 1,000 settled ones.
//!
//! Faults on delivery (`POST /sandbox/webhooks/faults`), for testing a
//! receiver: `drop` (never sent, the delivery `failed` at once; a resend
//! still works), `duplicate` (a second delivery of the same event, same
//! body, `event_id` and signature), `delay_s:N` (the first attempt waits N
//! seconds of sandbox time) and `out_of_order` (held back until a later
//! event of the company has been sent, at most 300 s of sandbox time).
//! Like call faults they fire on the next `count` matching deliveries,
//! or with a seeded `probability`. They live with the deliveries, in
//! memory.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use actix_web::web::Bytes;
use chrono::{DateTime, Utc};
use paydesk_api::models::control::WebhookDeliveryStatus;
use paydesk_api::models::control::{DeliveryAttempt as Attempt, WebhookDelivery};
use paydesk_api::models::events::WebhookEvent;
use paydesk_api::webhook::{sign_webhook, SIGNATURE_HEADER};
use uuid::Uuid;

use crate::error::ApiError;
use crate::faults::{check_count, Chance};
use crate::scheduler::{Job, Scheduler};

/// Longest an `out_of_order` delivery waits for a later event, in sandbox
/// seconds; the longest `delay_s`.
pub const OUT_OF_ORDER_MAX_SECS: i64 = 300;
pub const MAX_DELAY_SECS: i64 = 86_400;

/// What a delivery fault does to a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryFaultMode {
    Drop,
    Duplicate,
    Delay { secs: i64 },
    OutOfOrder,
}

impl DeliveryFaultMode {
    pub fn parse(mode: &str) -> Option<Self> {
        match mode {
            "drop" => Some(Self::Drop),
            "duplicate" => Some(Self::Duplicate),
            "out_of_order" => Some(Self::OutOfOrder),
            other => {
                let secs: i64 = other.strip_prefix("delay_s:")?.parse().ok()?;
                (1..=MAX_DELAY_SECS)
                    .contains(&secs)
                    .then_some(Self::Delay { secs })
            }
        }
    }

    pub fn name(self) -> String {
        match self {
            Self::Drop => "drop".to_owned(),
            Self::Duplicate => "duplicate".to_owned(),
            Self::OutOfOrder => "out_of_order".to_owned(),
            Self::Delay { secs } => format!("delay_s:{secs}"),
        }
    }
}

/// A fault armed on a company's deliveries.
#[derive(Debug, Clone)]
pub struct DeliveryFault {
    /// Events whose name starts with this ('' for every event).
    pub event_prefix: String,
    pub mode: DeliveryFaultMode,
    pub remaining: u32,
    pub chance: Option<Chance>,
}

impl DeliveryFault {
    pub fn new(event_prefix: &str, mode: &str, count: u32, chance: Option<Chance>) -> Result<Self, ApiError> {
        let mode = DeliveryFaultMode::parse(mode).ok_or_else(|| {
            ApiError::field(
                "mode",
                format!("must be drop, duplicate, out_of_order or delay_s:N (N from 1 to {MAX_DELAY_SECS})"),
            )
        })?;
        check_count(count, &chance)?;
        Ok(DeliveryFault {
            event_prefix: event_prefix.trim().to_owned(),
            mode,
            remaining: count,
            chance,
        })
    }
}

/// Why a delivery is held back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Until its release job runs (`delay_s`).
    Delayed,
    /// Until a later event of the company has been sent (or its release
    /// job runs).
    OutOfOrder,
}

/// Attempts in all: the first and up to 3 retries.
pub const MAX_ATTEMPTS: u32 = 4;

/// Gap before retry `n` (1-based), in sandbox seconds.
fn retry_gap_secs(failed_attempts: u32) -> i64 {
    15 * 3i64.pow(failed_attempts.saturating_sub(1))
}

/// Where a company's events go, and the secret that signs them.
#[derive(Debug, Clone)]
pub struct WebhookTarget {
    pub url: String,
    pub secret: String,
}

fn succeeded(attempt: &Attempt) -> bool {
    attempt.status_code == Some(200)
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Not yet answered 200, attempts remain (or a resend is on its way).
    Pending,
    Delivered,
    /// Every attempt failed.
    Failed,
}

/// One event on its way to one URL, with the attempts made so far.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub id: u64,
    pub company_id: Uuid,
    pub url: String,
    pub event: String,
    pub event_id: String,
    pub status: DeliveryStatus,
    pub created_at: DateTime<Utc>,
    pub attempts: Vec<Attempt>,
    body: Bytes,
    signature: String,
    held: Option<Hold>,
}

impl Delivery {
    /// As the control API shows it.
    pub fn wire(&self) -> WebhookDelivery {
        WebhookDelivery {
            id: self.id,
            event: self.event.clone(),
            event_id: self.event_id.clone(),
            url: self.url.clone(),
            status: match self.status {
                DeliveryStatus::Pending => WebhookDeliveryStatus::Pending,
                DeliveryStatus::Delivered => WebhookDeliveryStatus::Delivered,
                DeliveryStatus::Failed => WebhookDeliveryStatus::Failed,
            },
            created_at: self.created_at,
            attempts: self.attempts.clone(),
        }
    }
}

/// Deliveries kept for the control API once they are settled: the newest
/// this many; pending ones are always kept.
const SETTLED_KEPT: usize = 1_000;

/// Every delivery, in order of creation, and those to attempt now.
#[derive(Debug, Default)]
pub struct Outbox {
    deliveries: BTreeMap<u64, Delivery>,
    ready: Vec<u64>,
    next_id: u64,
    /// Delivery faults armed, by company.
    faults: HashMap<Uuid, Vec<DeliveryFault>>,
    /// Release jobs for held deliveries, for the store to schedule.
    releases: Vec<(DateTime<Utc>, Job)>,
}

impl Outbox {
    /// Creates the event and queues one delivery per target; returns the
    /// event id.
    pub fn emit(
        &mut self,
        company_id: Uuid,
        targets: &[WebhookTarget],
        event: &str,
        data: serde_json::Value,
        now: DateTime<Utc>,
    ) -> String {
        let event_id = format!("evt_{}", Uuid::new_v4().simple());
        let body = Bytes::from(
            serde_json::to_vec(&WebhookEvent {
                event: event.to_owned(),
                event_id: event_id.clone(),
                company_id,
                data,
                created_at: now,
            })
            .expect("events serialize"),
        );
        for target in targets {
            let delivery = Delivery {
                id: 0,
                company_id,
                url: target.url.clone(),
                event: event.to_owned(),
                event_id: event_id.clone(),
                status: DeliveryStatus::Pending,
                created_at: now,
                attempts: Vec::new(),
                signature: sign_webhook(&target.secret, &body),
                body: body.clone(),
                held: None,
            };
            match self.take_fault(company_id, event) {
                None => {
                    self.queue(delivery);
                }
                Some(DeliveryFaultMode::Drop) => {
                    let id = self.insert(delivery);
                    let d = self.deliveries.get_mut(&id).expect("inserted just above");
                    d.status = DeliveryStatus::Failed;
                    d.attempts.push(Attempt {
                        at: now,
                        status_code: None,
                        error: Some("dropped (injected fault): never sent".to_owned()),
                    });
                }
                Some(DeliveryFaultMode::Duplicate) => {
                    self.queue(delivery.clone());
                    self.queue(delivery);
                }
                Some(DeliveryFaultMode::Delay { secs }) => {
                    self.hold(delivery, Hold::Delayed, now + chrono::Duration::seconds(secs));
                }
                Some(DeliveryFaultMode::OutOfOrder) => {
                    let until = now + chrono::Duration::seconds(OUT_OF_ORDER_MAX_SECS);
                    self.hold(delivery, Hold::OutOfOrder, until);
                }
            }
        }
        self.forget_old();
        event_id
    }

    fn insert(&mut self, mut delivery: Delivery) -> u64 {
        self.next_id += 1;
        delivery.id = self.next_id;
        self.deliveries.insert(self.next_id, delivery);
        self.next_id
    }

    fn queue(&mut self, delivery: Delivery) {
        let id = self.insert(delivery);
        self.ready.push(id);
    }

    fn hold(&mut self, mut delivery: Delivery, hold: Hold, until: DateTime<Utc>) {
        delivery.held = Some(hold);
        let delivery_id = self.insert(delivery);
        self.releases.push((until, Job::ReleaseDelivery { delivery_id }));
    }

    /// Takes one use of the first delivery fault of the company that
    /// matches the event, if any.
    fn take_fault(&mut self, company_id: Uuid, event: &str) -> Option<DeliveryFaultMode> {
        let faults = self.faults.get_mut(&company_id)?;
        let index = faults
            .iter_mut()
            .position(|f| event.starts_with(&f.event_prefix) && f.chance.as_mut().is_none_or(Chance::hits))?;
        let mode = faults[index].mode;
        faults[index].remaining -= 1;
        if faults[index].remaining == 0 {
            faults.remove(index);
        }
        Some(mode)
    }

    /// Arms a delivery fault for a company.
    pub fn add_fault(&mut self, company_id: Uuid, fault: DeliveryFault) {
        self.faults.entry(company_id).or_default().push(fault);
    }

    /// The company's delivery faults still armed.
    pub fn faults_of(&self, company_id: Uuid) -> &[DeliveryFault] {
        self.faults.get(&company_id).map_or(&[], Vec::as_slice)
    }

    /// Clears the company's delivery faults.
    pub fn clear_faults(&mut self, company_id: Uuid) {
        self.faults.remove(&company_id);
    }

    /// Release jobs of held deliveries, for the scheduler.
    pub fn take_releases(&mut self) -> Vec<(DateTime<Utc>, Job)> {
        std::mem::take(&mut self.releases)
    }

    /// A held delivery's time is up: it goes out now.
    pub fn release(&mut self, delivery_id: u64) {
        if let Some(d) = self.deliveries.get_mut(&delivery_id) {
            if d.held.take().is_some() {
                self.ready.push(delivery_id);
            }
        }
    }

    /// After `sent` went out: `out_of_order` deliveries that a later event
    /// of the same company has now overtaken go out next.
    pub fn release_overtaken(&mut self, sent: &[Delivery]) {
        let overtaken: Vec<u64> = self
            .deliveries
            .values()
            .filter(|d| d.held == Some(Hold::OutOfOrder))
            .filter(|d| {
                sent.iter()
                    .any(|s| s.company_id == d.company_id && s.id > d.id && s.event_id != d.event_id)
            })
            .map(|d| d.id)
            .collect();
        for id in overtaken {
            self.release(id);
        }
    }

    /// Drops the oldest settled deliveries past `SETTLED_KEPT`.
    fn forget_old(&mut self) {
        let settled = self
            .deliveries
            .values()
            .filter(|d| d.status != DeliveryStatus::Pending)
            .count();
        let excess: Vec<u64> = self
            .deliveries
            .values()
            .filter(|d| d.status != DeliveryStatus::Pending)
            .take(settled.saturating_sub(SETTLED_KEPT))
            .map(|d| d.id)
            .collect();
        for id in excess {
            self.deliveries.remove(&id);
        }
    }

    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Deliveries to attempt now.
    pub fn take_ready(&mut self) -> Vec<Delivery> {
        std::mem::take(&mut self.ready)
            .into_iter()
            .filter_map(|id| self.deliveries.get(&id).cloned())
            .collect()
    }

    /// A retry fell due.
    pub fn mark_ready(&mut self, delivery_id: u64) {
        if self
            .deliveries
            .get(&delivery_id)
            .is_some_and(|d| d.status == DeliveryStatus::Pending)
        {
            self.ready.push(delivery_id);
        }
    }

    /// A company's deliveries, newest first.
    pub fn of_company(&self, company_id: Uuid) -> Vec<&Delivery> {
        self.deliveries
            .values()
            .rev()
            .filter(|d| d.company_id == company_id)
            .collect()
    }

    /// Readies one more attempt of a company's delivery, whatever its
    /// status, for the caller to send; a failed resend is not retried.
    pub fn resend(&mut self, company_id: Uuid, delivery_id: u64) -> Option<Delivery> {
        let d = self
            .deliveries
            .get_mut(&delivery_id)
            .filter(|d| d.company_id == company_id)?;
        d.status = DeliveryStatus::Pending;
        d.held = None;
        Some(d.clone())
    }

    pub fn get(&self, company_id: Uuid, delivery_id: u64) -> Option<&Delivery> {
        self.deliveries
            .get(&delivery_id)
            .filter(|d| d.company_id == company_id)
    }

    /// Records an attempt: delivered on 200, else a retry while attempts
    /// remain.
    pub fn record_attempt(&mut self, delivery_id: u64, attempt: Attempt, scheduler: &mut Scheduler) {
        let Some(delivery) = self.deliveries.get_mut(&delivery_id) else {
            return;
        };
        let now = attempt.at;
        let ok = succeeded(&attempt);
        delivery.attempts.push(attempt);
        let made = delivery.attempts.len() as u32;
        if ok {
            delivery.status = DeliveryStatus::Delivered;
        } else if made >= MAX_ATTEMPTS {
            tracing::warn!(url = %delivery.url, event = %delivery.event, event_id = %delivery.event_id, "webhook delivery abandoned after {made} attempts");
            delivery.status = DeliveryStatus::Failed;
        } else {
            let at = now + chrono::Duration::seconds(retry_gap_secs(made));
            scheduler.schedule(at, Job::RetryDelivery { delivery_id });
        }
    }
}

/// Sends one attempt under the standard signature header and any extra
/// names configured (`--webhook-signature-header`).
pub async fn send(
    http: &reqwest::Client,
    delivery: &Delivery,
    extra_signature_headers: &[String],
    now: DateTime<Utc>,
) -> Attempt {
    let mut request = http
        .post(&delivery.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(SIGNATURE_HEADER, &delivery.signature);
    for name in extra_signature_headers {
        request = request.header(name.as_str(), &delivery.signature);
    }
    let result = request
        .timeout(Duration::from_secs(10))
        .body(delivery.body.clone())
        .send()
        .await;
    let attempt = delivery.attempts.len() + 1;
    match result {
        Ok(response) => {
            let status = response.status().as_u16();
            if status != 200 {
                tracing::info!(url = %delivery.url, status, attempt, "webhook receiver refused the event");
            }
            Attempt {
                at: now,
                status_code: Some(status),
                error: None,
            }
        }
        Err(e) => {
            tracing::info!(url = %delivery.url, error = %e, attempt, "webhook receiver unreachable");
            Attempt {
                at: now,
                status_code: None,
                error: Some(e.to_string()),
            }
        }
    }
}

/// The sandbox accepts HTTPS URLs, and plain HTTP only to loopback hosts.
pub fn check_url(url: &str) -> Result<(), &'static str> {
    let parsed = reqwest::Url::parse(url).map_err(|_| "must be an absolute URL")?;
    match parsed.scheme() {
        "https" => Ok(()),
        "http" => match parsed.host() {
            Some(url::Host::Domain("localhost")) => Ok(()),
            Some(url::Host::Ipv4(ip)) if ip.is_loopback() => Ok(()),
            Some(url::Host::Ipv6(ip)) if ip.is_loopback() => Ok(()),
            _ => Err("must use HTTPS (plain HTTP is accepted only for loopback hosts)"),
        },
        _ => Err("must be an HTTPS URL"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_three_times_with_growing_gaps_then_stops() {
        let now = Utc::now();
        let mut outbox = Outbox::default();
        let mut scheduler = Scheduler::default();
        let target = WebhookTarget {
            url: "http://127.0.0.1:9/hook".into(),
            secret: "s".into(),
        };
        outbox.emit(
            Uuid::new_v4(),
            &[target],
            "deposit.success",
            serde_json::json!({}),
            now,
        );
        let d = outbox.take_ready().pop().unwrap();
        assert!(!outbox.has_ready());
        let failed = || Attempt {
            at: now,
            status_code: Some(500),
            error: None,
        };
        for attempt in 1..MAX_ATTEMPTS {
            outbox.record_attempt(d.id, failed(), &mut scheduler);
            let (at, job) = scheduler.pop_due(now + chrono::Duration::seconds(300)).unwrap();
            assert_eq!(job, Job::RetryDelivery { delivery_id: d.id });
            assert_eq!((at - now).num_seconds(), retry_gap_secs(attempt));
        }
        outbox.record_attempt(d.id, failed(), &mut scheduler);
        assert!(scheduler.is_empty());
        outbox.mark_ready(d.id);
        assert!(!outbox.has_ready());
        let kept = outbox.of_company(d.company_id);
        assert_eq!(kept[0].status, DeliveryStatus::Failed);
        assert_eq!(kept[0].attempts.len(), MAX_ATTEMPTS as usize);
        assert!(
            outbox.resend(Uuid::new_v4(), d.id).is_none(),
            "another company's delivery"
        );
        let again = outbox.resend(d.company_id, d.id).unwrap();
        outbox.record_attempt(again.id, failed(), &mut scheduler);
        assert!(scheduler.is_empty(), "a failed resend is not retried");
        assert_eq!(outbox.of_company(d.company_id)[0].status, DeliveryStatus::Failed);
    }

    #[test]
    fn distinct_events_have_distinct_ids() {
        let mut outbox = Outbox::default();
        let a = outbox.emit(Uuid::new_v4(), &[], "e", serde_json::json!({}), Utc::now());
        let b = outbox.emit(Uuid::new_v4(), &[], "e", serde_json::json!({}), Utc::now());
        assert_ne!(a, b);
    }

    #[test]
    fn only_https_or_loopback_http() {
        assert!(check_url("https://example.com/hook").is_ok());
        assert!(check_url("http://127.0.0.1:8080/hook").is_ok());
        assert!(check_url("http://localhost/hook").is_ok());
        assert!(check_url("http://example.com/hook").is_err());
        assert!(check_url("ftp://example.com").is_err());
        assert!(check_url("not a url").is_err());
    }
}
