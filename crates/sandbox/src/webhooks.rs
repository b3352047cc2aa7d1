//! The webhook engine. Events are signed (`x-service-signature`, HMAC-SHA512
//! hex), each with a unique `event_id`; the first attempt goes out as soon
//! as the event occurs, and any answer other than 200 is retried up to 3
//! times with growing gaps on the sandbox clock (15 s, 45 s, 135 s). Sending
//! happens outside the store's lock, so no request handler waits on a
//! receiver.

use std::collections::HashMap;
use std::time::Duration;

use actix_web::web::Bytes;
use chrono::{DateTime, Utc};
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

/// One event on its way to one URL.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub id: u64,
    pub url: String,
    pub event: String,
    pub event_id: String,
    body: Bytes,
    signature: String,
    pub attempts: u32,
}

/// Deliveries waiting to be sent or retried.
#[derive(Debug, Default)]
pub struct Outbox {
    waiting: HashMap<u64, Delivery>,
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
            self.waiting.insert(
                self.next_id,
                Delivery {
                    id: self.next_id,
                    url: target.url.clone(),
                    event: event.to_owned(),
                    event_id: event_id.clone(),
                    signature: sign_webhook(&target.secret, &body),
                    body: body.clone(),
                    attempts: 0,
                },
            );
            self.ready.push(self.next_id);
        }
        event_id
    }

    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Deliveries to attempt now.
    pub fn take_ready(&mut self) -> Vec<Delivery> {
        std::mem::take(&mut self.ready)
            .into_iter()
            .filter_map(|id| self.waiting.get(&id).cloned())
            .collect()
    }

    /// A retry fell due.
    pub fn mark_ready(&mut self, delivery_id: u64) {
        if self.waiting.contains_key(&delivery_id) {
            self.ready.push(delivery_id);
        }
    }

    /// Records an attempt: done on 200, else a retry while attempts remain.
    pub fn record_attempt(
        &mut self,
        delivery_id: u64,
        ok: bool,
        now: DateTime<Utc>,
        scheduler: &mut Scheduler,
    ) {
        let Some(delivery) = self.waiting.get_mut(&delivery_id) else {
            return;
        };
        delivery.attempts += 1;
        if ok {
            self.waiting.remove(&delivery_id);
        } else if delivery.attempts >= MAX_ATTEMPTS {
            tracing::warn!(url = %delivery.url, event = %delivery.event, event_id = %delivery.event_id, "webhook delivery abandoned after {MAX_ATTEMPTS} attempts");
            self.waiting.remove(&delivery_id);
        } else {
            let at = now + chrono::Duration::seconds(retry_gap_secs(delivery.attempts));
            scheduler.schedule(at, Job::RetryDelivery { delivery_id });
        }
    }
}

/// Sends one attempt; true when the receiver answered 200.
pub async fn send(http: &reqwest::Client, delivery: &Delivery) -> bool {
    let result = http
        .post(&delivery.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(SIGNATURE_HEADER, &delivery.signature)
        .timeout(Duration::from_secs(10))
        .body(delivery.body.clone())
        .send()
        .await;
    match result {
        Ok(response) if response.status().as_u16() == 200 => true,
        Ok(response) => {
            tracing::info!(url = %delivery.url, status = response.status().as_u16(), attempt = delivery.attempts + 1, "webhook receiver refused the event");
            false
        }
        Err(e) => {
            tracing::info!(url = %delivery.url, error = %e, attempt = delivery.attempts + 1, "webhook receiver unreachable");
            false
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
        for attempt in 1..MAX_ATTEMPTS {
            outbox.record_attempt(d.id, false, now, &mut scheduler);
            let (at, job) = scheduler.pop_due(now + chrono::Duration::seconds(300)).unwrap();
            assert_eq!(job, Job::RetryDelivery { delivery_id: d.id });
            assert_eq!((at - now).num_seconds(), retry_gap_secs(attempt));
        }
        outbox.record_attempt(d.id, false, now, &mut scheduler);
        assert!(scheduler.is_empty());
        outbox.mark_ready(d.id);
        assert!(!outbox.has_ready());
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
