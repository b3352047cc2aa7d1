//! The webhook engine. Events are signed (`x-service-signature`, HMAC-SHA512
//! hex), each with a unique `event_id`; the first attempt goes out as soon
//! as the event occurs, and any answer other than 200 is retried up to 3
//! times with growing gaps on the sandbox clock (15 s, 45 s, 135 s). Sending
//! happens outside the store's lock, so no request handler waits on a
//! receiver. Every delivery keeps its attempts for the control API
//! (`GET /sandbox/webhooks/deliveries`), the newest 1,000 settled ones.

use std::collections::BTreeMap;
use std::time::Duration;

use actix_web::web::Bytes;
use chrono::{DateTime, Utc};
use paydesk_api::models::control::{DeliveryAttempt as Attempt, WebhookDelivery};
use paydesk_api::models::events::WebhookEvent;
use paydesk_api::webhook::{sign_webhook, SIGNATURE_HEADER};
use uuid::Uuid;

use crate::scheduler::{Job, Scheduler};

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
                DeliveryStatus::Pending => "pending",
                DeliveryStatus::Delivered => "delivered",
                DeliveryStatus::Failed => "failed",
            }
            .to_owned(),
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
            self.next_id += 1;
            self.deliveries.insert(
                self.next_id,
                Delivery {
                    id: self.next_id,
                    company_id,
                    url: target.url.clone(),
                    event: event.to_owned(),
                    event_id: event_id.clone(),
                    status: DeliveryStatus::Pending,
                    created_at: now,
                    attempts: Vec::new(),
                    signature: sign_webhook(&target.secret, &body),
                    body: body.clone(),
                },
            );
            self.ready.push(self.next_id);
        }
        self.forget_old();
        event_id
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
