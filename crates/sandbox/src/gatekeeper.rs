//! The one middleware every request passes: it gives the request an id,
//! reads the body (413 past 1 MiB), authenticates the signature (401 for
//! every failure), checks scoped permissions (403), applies injected
//! faults, renders every error as an RFC 7807 problem with the request's
//! id and sandbox time, and keeps each authenticated call in the company's
//! request journal.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_LENGTH};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::web::{Bytes, BytesMut, Data};
use actix_web::{HttpMessage, HttpResponse};
use futures_util::StreamExt;
use paydesk_api::models::control::{JournalEntry, CONTROL_PERMISSION};
use paydesk_api::paths::Operation;
use paydesk_api::signing::{self, SignatureError, MAX_CLOCK_SKEW_SECS};
use uuid::Uuid;

use crate::error::ApiError;
use crate::faults::{self, FaultMode};
use crate::journal;
use crate::respond::{Caller, RawBody};
use crate::state::{ApiClient, Shared};

/// Largest body accepted.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Seconds a `429` fault asks the caller to wait.
const FAULT_RETRY_AFTER_SECS: u64 = 1;

/// Nonces seen within the skew window, per client. An entry can be dropped
/// once its timestamp is out of the window, since the request would be
/// refused for skew anyway.
#[derive(Debug, Default)]
pub struct NonceCache {
    seen: HashSet<(Uuid, String)>,
    expiries: VecDeque<(i64, Uuid, String)>,
}

impl NonceCache {
    /// Remembers a nonce kept in the data directory, until `expiry`.
    pub fn resume(&mut self, client: Uuid, nonce: String, expiry: i64) {
        if self.seen.insert((client, nonce.clone())) {
            self.expiries.push_back((expiry, client, nonce));
        }
    }

    /// When a nonce seen at `now_unix` may be forgotten.
    pub fn expiry(now_unix: i64) -> i64 {
        now_unix + 2 * MAX_CLOCK_SKEW_SECS + 1
    }

    /// Remembers the nonce; false when it was already seen.
    pub fn remember(&mut self, client: Uuid, nonce: &str, now_unix: i64) -> bool {
        while let Some((expiry, _, _)) = self.expiries.front() {
            if *expiry > now_unix {
                break;
            }
            if let Some((_, c, n)) = self.expiries.pop_front() {
                self.seen.remove(&(c, n));
            }
        }
        if !self.seen.insert((client, nonce.to_owned())) {
            return false;
        }
        // Kept for two windows from now, which covers any timestamp that
        // can still pass the skew check.
        self.expiries
            .push_back((Self::expiry(now_unix), client, nonce.to_owned()));
        true
    }
}

/// Paths served without a signature.
fn is_public(path: &str) -> bool {
    matches!(path, "/openapi.json" | "/healthz")
}

/// The permission area of an API path (`sandbox-rules.md`): GET needs
/// `<area>:read`, other methods `<area>:write`; whoami has none, and the
/// control API's permissions are in `needed_permissions`.
pub fn permission_area(path: &str) -> Option<&'static str> {
    let rest = path.strip_prefix("/api/")?;
    let first = rest.split('/').next().unwrap_or("");
    let area = match first {
        "balances" => "balances",
        "addresses" | "stablecoins" => "addresses",
        // `POST /api/wallets/transfers` is the official client's withdrawal.
        "withdrawals" | "wallets" => "withdrawals",
        "transactions" => "transactions",
        "exchange-rates" => "rates",
        "trading" => "trading",
        "bulk-transfers" => "bulk_transfers",
        "virtual-accounts" => "virtual_accounts",
        "cards" => "cards",
        "lightning" => "lightning",
        "beneficiaries" => "beneficiaries",
        "payouts" => "payouts",
        "customers" if rest.ends_with("/cards") || rest.ends_with("/card-kyc") => "cards",
        "customers" => "customers",
        _ => return None,
    };
    Some(area)
}

fn header<'a>(
    headers: &'a HeaderMap,
    name: &'static str,
    shown: &'static str,
) -> Result<&'a str, SignatureError> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .ok_or(SignatureError::MissingHeader(shown))
}

fn unauthorized(e: SignatureError) -> ApiError {
    ApiError::Unauthorized(e.to_string())
}

/// Verifies the four auth headers against the body.
fn authenticate(shared: &Shared, headers: &HeaderMap, body: &[u8]) -> Result<ApiClient, ApiError> {
    let client_id = header(headers, signing::CLIENT_HEADER, "X-Auth-Client").map_err(unauthorized)?;
    let timestamp = header(headers, signing::TIMESTAMP_HEADER, "X-Auth-Timestamp").map_err(unauthorized)?;
    let nonce = header(headers, signing::NONCE_HEADER, "X-Auth-Nonce").map_err(unauthorized)?;
    let signature = header(headers, signing::SIGNATURE_HEADER, "X-Auth-Signature").map_err(unauthorized)?;
    let unknown = || ApiError::Unauthorized("unknown client id; check X-Auth-Client".to_owned());
    let id = Uuid::parse_str(client_id).map_err(|_| unknown())?;
    let client = shared.store().clients.get(&id).cloned().ok_or_else(unknown)?;
    if !client.active {
        return Err(ApiError::Unauthorized(
            "this client is inactive; activate it or use another".to_owned(),
        ));
    }
    let now_unix = chrono::Utc::now().timestamp();
    signing::check_timestamp(timestamp, now_unix).map_err(unauthorized)?;
    signing::check_nonce_format(nonce).map_err(unauthorized)?;
    signing::verify_signature(&client.secret, client_id, timestamp, nonce, body, signature)
        .map_err(unauthorized)?;
    let fresh = shared
        .nonces
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remember(id, nonce, now_unix);
    if !fresh {
        return Err(unauthorized(SignatureError::ReplayedNonce));
    }
    Ok(client)
}

/// The permissions a scoped client needs for a call: `<area>:read` for a
/// GET of the API, `<area>:write` otherwise; `sandbox:control` for every
/// control route, which can reset, restore, mint deposits, redirect
/// webhooks, move the clock and arm faults; and for the snapshot also
/// `cards:read` (GET) or `cards:write` (PUT), since it holds full card
/// numbers and CVVs that `GET /api/cards` would refuse. Whoami needs none.
pub fn needed_permissions(method: &Method, path: &str) -> Vec<String> {
    let access = if method == Method::GET { "read" } else { "write" };
    if path == "/sandbox" || path.starts_with("/sandbox/") {
        let mut needed = vec![CONTROL_PERMISSION.to_owned()];
        if path.trim_end_matches('/') == "/sandbox/snapshot" {
            needed.push(format!("cards:{access}"));
        }
        return needed;
    }
    permission_area(path)
        .map(|area| vec![format!("{area}:{access}")])
        .unwrap_or_default()
}

fn authorize(client: &ApiClient, method: &Method, path: &str) -> Result<(), ApiError> {
    let Some(granted) = &client.permissions else {
        return Ok(());
    };
    match needed_permissions(method, path)
        .into_iter()
        .find(|needed| !granted.contains(needed))
    {
        None => Ok(()),
        Some(needed) => Err(ApiError::Forbidden(format!(
            "this client lacks the '{needed}' permission"
        ))),
    }
}

async fn read_body(payload: &mut Payload) -> Result<Bytes, ApiError> {
    let mut body = BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|_| ApiError::invalid("the request body could not be read"))?;
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(ApiError::PayloadTooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// Admits a request: body, signature, permission; returns the fault to
/// apply, if one is armed.
async fn admit(
    shared: &Shared,
    req: &mut ServiceRequest,
    request_id: &str,
) -> Result<Option<FaultMode>, ApiError> {
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES) {
        return Err(ApiError::PayloadTooLarge);
    }
    let mut payload = req.take_payload();
    let body = read_body(&mut payload).await?;
    let client = authenticate(shared, req.headers(), &body)?;
    authorize(&client, req.method(), req.path())?;
    req.extensions_mut().insert(Caller {
        client_id: client.id,
        company_id: client.company_id,
        request_id: request_id.to_owned(),
    });
    req.extensions_mut().insert(RawBody(body.clone()));
    req.set_payload(Payload::from(body));
    let mut store = shared.store();
    Ok(store
        .companies
        .get_mut(&client.company_id)
        .and_then(|c| faults::take_matching(&mut c.faults, req.method().as_str(), req.path())))
}

/// Re-renders an error answer with the request's id and sandbox time.
fn render_error(
    res: ServiceResponse<BoxBody>,
    shared: &Shared,
    request_id: &str,
) -> ServiceResponse<BoxBody> {
    let Some(err) = res.response().error() else {
        return res;
    };
    let api_error = err.as_error::<ApiError>().cloned().unwrap_or_else(|| {
        tracing::error!(error = %err, "unexpected error");
        ApiError::invalid("the request could not be processed")
    });
    let response = api_error.to_response(request_id, shared.clock.now());
    res.into_response(response)
}

/// Keeps an authenticated call and its answer in the company's journal;
/// the journal's own reads are left out.
fn journal(shared: &Shared, res: ServiceResponse<BoxBody>) -> ServiceResponse<BoxBody> {
    let Some(caller) = res.request().extensions().get::<Caller>().cloned() else {
        return res;
    };
    if res.request().path() == Operation::SandboxRequests.template() {
        return res;
    }
    let request_body = res
        .request()
        .extensions()
        .get::<RawBody>()
        .map(|b| b.0.clone())
        .unwrap_or_default();
    let method = res.request().method().to_string();
    let path = res
        .request()
        .uri()
        .path_and_query()
        .map_or_else(|| res.request().path().to_owned(), |p| p.to_string());
    let status = res.status().as_u16();
    let (req, response) = res.into_parts();
    let (response, body) = response.into_parts();
    let (answer, body) = match body.try_into_bytes() {
        Ok(bytes) => (bytes.clone(), BoxBody::new(bytes)),
        Err(body) => (Bytes::new(), body),
    };
    shared.journal().record(
        caller.company_id,
        JournalEntry {
            request_id: caller.request_id,
            method,
            path,
            status,
            at: shared.clock.now(),
            request_body: journal::kept_body(&request_body),
            response_body: journal::kept_body(&answer),
        },
    );
    ServiceResponse::new(req, response.set_body(body))
}

pub async fn gatekeeper(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let shared = req
        .app_data::<Data<Shared>>()
        .cloned()
        .expect("the app registers the shared state");
    let request_id = Uuid::new_v4().to_string();
    let admitted = if is_public(req.path()) {
        Ok(None)
    } else {
        admit(&shared, &mut req, &request_id).await
    };
    let mut res = match admitted {
        Err(e) => req.into_response(e.to_response(&request_id, shared.clock.now())),
        Ok(Some(FaultMode::Unavailable)) => {
            req.into_response(ApiError::Unavailable.to_response(&request_id, shared.clock.now()))
        }
        Ok(Some(FaultMode::RateLimited)) => {
            let e = ApiError::RateLimited {
                retry_after_secs: FAULT_RETRY_AFTER_SECS,
                detail: "too many requests (injected fault); retry after the Retry-After delay".to_owned(),
            };
            req.into_response(e.to_response(&request_id, shared.clock.now()))
        }
        Ok(fault) => {
            let write = req.method() != Method::GET;
            let nonce = req
                .headers()
                .get(signing::NONCE_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let res = next.call(req).await?.map_into_boxed_body();
            let res = render_error(res, &shared, &request_id);
            // A write is kept before it is answered (with --data-dir), by
            // the keeper thread: the worker serves other requests meanwhile,
            // and writes waiting together are kept in one transaction.
            let caller = res.request().extensions().get::<Caller>().map(|c| c.client_id);
            let kept = if write && shared.keeps_state() {
                Shared::keep_write(&shared.clone().into_inner(), caller.zip(nonce)).await
            } else {
                Ok(())
            };
            let res = match kept {
                Ok(()) => res,
                Err(e) => {
                    tracing::error!(error = %e, "the state could not be kept");
                    res.into_response(ApiError::Unavailable.to_response(&request_id, shared.clock.now()))
                }
            };
            match fault {
                Some(FaultMode::LostAnswer) => {
                    res.into_response(HttpResponse::InternalServerError().finish())
                }
                Some(FaultMode::Timeout) => {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    res.into_response(HttpResponse::GatewayTimeout().force_close().finish())
                }
                Some(FaultMode::Delay { ms }) => {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    res
                }
                _ => res,
            }
        }
    };
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        res.headers_mut()
            .insert(HeaderName::from_static("x-request-id"), value);
    }
    let res = journal(&shared, res);
    if shared.store().outbox.has_ready() {
        actix_web::rt::spawn(async move { shared.flush_deliveries().await });
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nonce_is_accepted_once_per_client_within_the_window() {
        let mut cache = NonceCache::default();
        let a = Uuid::new_v4();
        let b = Uuid::new_v4();
        assert!(cache.remember(a, "nonce-0123456789", 1000));
        assert!(!cache.remember(a, "nonce-0123456789", 1001));
        assert!(cache.remember(b, "nonce-0123456789", 1001));
        assert!(cache.remember(a, "nonce-0123456789", 1000 + 2 * MAX_CLOCK_SKEW_SECS + 1));
    }

    #[test]
    fn areas_follow_the_path() {
        assert_eq!(permission_area("/api/balances/USDT"), Some("balances"));
        assert_eq!(
            permission_area("/api/stablecoins/supported-chains"),
            Some("addresses")
        );
        assert_eq!(permission_area("/api/customers/x/cards"), Some("cards"));
        assert_eq!(permission_area("/api/customers/x"), Some("customers"));
        assert_eq!(permission_area("/api/whoami"), None);
        assert_eq!(permission_area("/sandbox/clock"), None);
    }

    #[test]
    fn control_routes_need_their_scope_and_the_snapshot_the_card_scope() {
        assert_eq!(
            needed_permissions(&Method::POST, "/sandbox/reset"),
            ["sandbox:control"]
        );
        assert_eq!(
            needed_permissions(&Method::GET, "/sandbox/snapshot"),
            ["sandbox:control", "cards:read"]
        );
        assert_eq!(
            needed_permissions(&Method::PUT, "/sandbox/snapshot"),
            ["sandbox:control", "cards:write"]
        );
        assert_eq!(needed_permissions(&Method::GET, "/api/cards"), ["cards:read"]);
        assert!(needed_permissions(&Method::GET, "/api/whoami").is_empty());
    }
}
