//! `GET /openapi.json`: an OpenAPI 3.1 description of every route, built
//! from the same operation table the server registers.

use actix_web::http::StatusCode;
use paydesk_api::paths::{Method, Operation};
use serde_json::{json, Map, Value};

use crate::respond::{json, JsonAnswer};

/// One line on what each operation does.
fn summary(op: Operation) -> &'static str {
    match op {
        Operation::Whoami => "Confirms the presented credentials work (any method)",
        Operation::ListBalances => "Every wallet of the company, balances in base units",
        Operation::GetBalance => "One currency's balance; 404 when the company holds no wallet for it",
        Operation::SupportedChains => "Chains and their tokens supported in this environment",
        Operation::GenerateAddress => "Generates a deposit address (idempotent by reference)",
        Operation::ListAddresses => "Deposit addresses, filtered, cursor-paginated",
        Operation::GetAddress => "One address by UUID; a non-UUID id is a 400 'invalid id'",
        Operation::ValidateAddress => "Checks an address's format and checksum for a chain; stores nothing",
        Operation::ListTransactions => "Ledger history, filtered, cursor-paginated, newest first",
        Operation::GetTransaction => "One transaction by its UUID or its reference",
        Operation::GetExchangeRate => {
            "Buy, sell, mid and inverse rate of a pair (from, to), valid 30 s, with the 24-hour change"
        }
        Operation::ConvertCurrency => "Converts an amount (whole units) of `from` into `to` at the mid rate",
        Operation::CreateWithdrawal => {
            "Sends crypto on chain (amount in base units, checksum-checked address, fixed fee); settles 70 s later"
        }
        Operation::ListWithdrawals => "Withdrawals, newest first, by status and currency, cursor pages",
        Operation::GetWithdrawal => "One withdrawal",
        Operation::CreateInvoice => {
            "Issues a signet BOLT11 invoice (1 to 20,000,000 sats, default expiry 86,400 s); idempotent by reference"
        }
        Operation::ListInvoices => "Invoices and payments by page, page_size, status and direction",
        Operation::VerifyInvoice => "Whether an invoice of ours (by payment_hash) is paid, with its preimage",
        Operation::GetInvoice => "One invoice or payment (expires_at in Unix seconds)",
        Operation::DecodeInvoice => "Decodes any network's BOLT11 invoice",
        Operation::InitiatePayment => {
            "Previews a payment: fee (1 sat + 0.1%) and route_found (true only for other companies of this sandbox)"
        }
        Operation::SendPayment => {
            "Pays an invoice (max_fee caps the fee); settles at once inside the sandbox, else fails with nothing debited"
        }
        Operation::PreviewBulkTransfer => {
            "Checks a batch (items or csv) item by item and totals it with fees; stores nothing"
        }
        Operation::CreateBulkTransfer => "Drafts a batch, invalid items listed with their errors; idempotent by reference",
        Operation::ListBulkTransfers => "Batches, newest first, by status",
        Operation::CreateBulkSchedule => "A batch of valid items sent on a daily, weekly or monthly tick",
        Operation::ListBulkSchedules => "Bulk-transfer schedules",
        Operation::UpdateBulkSchedule => "Changes a schedule's items, timing, name or status (paused/active)",
        Operation::CancelBulkSchedule => "Cancels a bulk-transfer schedule",
        Operation::BulkScheduleExecutions => "A schedule's ticks, newest first, with their batches",
        Operation::GetBulkTransfer => "One batch with each item's current status",
        Operation::ConfirmBulkTransfer => {
            "Sends every valid item as a withdrawal (invalid ones are skipped); 422 if the wallet can't pay them all"
        }
        Operation::RetryBulkTransfer => "Sends the failed items again, and only those",
        Operation::CreateVirtualAccount => "Issues an NGN account number for a customer (one each)",
        Operation::ListVirtualAccounts => "Virtual accounts, by customer_id",
        Operation::GetVirtualAccount => "One virtual account with what it has received",
        Operation::PayoutCountries => "Countries usable in payout quotes",
        Operation::PayoutCorridor => "A corridor's details: currency, destinations, payment reasons, limits",
        Operation::PayoutBanks => "Provider codes (bank_code) of a country's banks and mobile-money services",
        Operation::PayoutAccountLookup => {
            "The holder's name of a bank account; account 0000000000 is never found"
        }
        Operation::PayoutLimits => "Each corridor's settlement limits and rate per USDT",
        Operation::CreatePayoutQuote => {
            "Prices a payout (amount or settlement_amount); valid 15 minutes; idempotent by reference"
        }
        Operation::GetPayoutQuote => "A payout quote by its quote id",
        Operation::InitializePayout => {
            "Attaches beneficiary and payment reason to an unexpired quote; emits payouts.initialized"
        }
        Operation::FinalizePayout => {
            "Commits the payout before expires_at: offchain debits the wallet; the rail settles it later"
        }
        Operation::GetPayout => "A payout by its id (or quote id)",
        Operation::ListPayouts => "Payouts, newest first, filtered by status",
        Operation::InitializePayoutByQuotePath => {
            "Initialize as the official client sends it; quote_id may come from the path alone"
        }
        Operation::FinalizePayoutByQuotePath => "Finalize as the official client sends it",
        Operation::ListPayoutsPaged => "Payouts by page and take, order asc or desc (the official client's list)",
        Operation::FetchPayout => "A payout by its id or quote id (the official client's path)",
        Operation::FetchPayoutByReference => "The newest payout with a reference",
        Operation::PayoutRequirements => "A corridor's requirements: destinations, payment reasons, limits",
        Operation::TradingPrices => "The latest market price of every pair",
        Operation::CreateTradingQuote => {
            "Quotes a trade at the market price ± 0.5%, valid 30 s (NGN pairs: 500 to 10,000,000 naira)"
        }
        Operation::GetTradingQuote => "A quote with its consumption, expiry and the number of orders on it",
        Operation::CreateOrder => {
            "Places an order on a quote; fills at once at the quoted price (QUOTE_EXPIRED, QUOTE_EXHAUSTED)"
        }
        Operation::ListOrders => "Orders, newest first, by status",
        Operation::GetOrder => "One order with its fills and quote consumption",
        Operation::CancelOrder => "Cancels an order still open (orders fill at once here, so a 422)",
        Operation::CreateScheduledOrder => {
            "A recurring buy (daily, weekly, monthly at HH:MM UTC) that ticks on the sandbox clock"
        }
        Operation::ListScheduledOrders => "Scheduled orders by status, with their execution totals",
        Operation::GetScheduledOrder => "One scheduled order",
        Operation::UpdateScheduledOrder => {
            "Changes amount, timing or status (paused/active); next_execution_at moves only if the timing changes"
        }
        Operation::CancelScheduledOrder => "Cancels a schedule; next_execution_at becomes null",
        Operation::ScheduledOrderExecutions => "A schedule's executions, newest first (completed, failed, skipped)",
        Operation::CreateTargetOrder => {
            "Locks escrow and waits for the market to cross target_price; fills 10 s after triggering"
        }
        Operation::ListTargetOrders => "Target orders by status",
        Operation::GetTargetOrder => "One target order",
        Operation::CancelTargetOrder => "Cancels an active target order and releases its escrow",
        Operation::CreateBeneficiary => "Saves a bank, mobile-money or crypto recipient",
        Operation::ListBeneficiaries => "Saved recipients, by limit and offset",
        Operation::GetBeneficiary => "One saved recipient",
        Operation::UpdateBeneficiary => "Changes a recipient's name, destination or is_active",
        Operation::DeleteBeneficiary => "Deletes a recipient for good",
        Operation::CreateCustomer => "Creates a customer; email must be valid and unique; idempotent by reference",
        Operation::ListCustomers => "Customers filtered by id, reference, email, customer_type, is_active; cursor pages",
        Operation::BlacklistCustomer => "{blacklist: true} makes the customer inactive; false restores them",
        Operation::GetCustomer => "One customer, directly at data",
        Operation::UpdateCustomer => "Changes first_name, last_name or is_active; omitted fields keep their value",
        Operation::DeleteCustomer => "Deletes a customer for good; refused (422) while they hold a live card",
        Operation::SubmitCardKyc => {
            "Submits card KYC; reviewed 60 s later: id_number ending 0000 is rejected, any other approved"
        }
        Operation::GetCardKyc => "The customer's card KYC status: pending, approved or rejected",
        Operation::CustomerCards => "Cards of one customer, cursor pages with page_info",
        Operation::CreateCard => {
            "Issues a virtual card, or a lite card (card_type lite); pending until provisioned 30 s later"
        }
        Operation::ListCards => "Cards filtered by card_type, status, search (last four or name); page_info",
        Operation::GetCard => "One card, without PAN or CVV",
        Operation::TerminateCard => {
            "Terminates a card at least 24 h old ({reason}); its balance returns to the USDT wallet"
        }
        Operation::ChangeCardBalance => {
            "Funds or withdraws (type fund|withdraw, micro-units); pending, settles 20 s later; 1 fund/30 s, 1 withdraw/60 s"
        }
        Operation::SetCardStatus => "Freezes (frozen) or unfreezes (active) a card",
        Operation::CardSecureDetails => "Full card number, CVV and expiry; 2 reads per 60 s per card",
        Operation::SetCardSpendLimits => "Replaces the card's spend limits (micro-units; a key left out is no limit)",
        Operation::CardTransactions => "The card's funding, withdrawal and spend transactions; page_info",
        Operation::GetCardTransaction => "One card transaction",
        Operation::SandboxClock => "Sandbox: the sandbox clock",
        Operation::SandboxAdvanceClock => {
            "Sandbox: advances the clock and runs every transition that falls due"
        }
        Operation::SandboxSetWebhook => {
            "Sandbox: sets the company's webhook URL (HTTPS, or HTTP to loopback) and secret"
        }
        Operation::SandboxDeposit => {
            "Sandbox: an on-chain deposit arrives (detected now, confirmed 60 s later)"
        }
        Operation::SandboxAddFault => {
            "Sandbox: the next `count` matching calls fail (500_no_body, 503, 429, timeout, delay_ms:N); with `probability` and `seed`, matching calls fail by a seeded chance"
        }
        Operation::SandboxAddWebhookFault => {
            "Sandbox: the next `count` matching webhook deliveries are dropped, duplicated, delayed (delay_s:N) or sent out of order; with `probability` and `seed`, by a seeded chance"
        }
        Operation::SandboxWebhookFaults => "Sandbox: the company's webhook delivery faults still armed",
        Operation::SandboxClearWebhookFaults => "Sandbox: clears the company's webhook delivery faults",
        Operation::SandboxClearFaults => "Sandbox: clears injected faults",
        Operation::SandboxSettlePayout => {
            "Sandbox: the rail settles a finalized payout now (outcome completed or failed)"
        }
        Operation::SandboxSetPrice => {
            "Sandbox: sets a market price {base, quote, price, liquidity?} (the one market of this sandbox; liquidity in base units per 10 s, unlimited when left out)"
        }
        Operation::SandboxVirtualAccountTransfer => {
            "Sandbox: a bank transfer {amount (kobo), sender_name?} into a virtual account credits NGN"
        }
        Operation::SandboxLightningPay => "Sandbox: someone outside pays an invoice of the caller's company",
        Operation::SandboxReset => "Sandbox: puts the caller's company back to its fixture state",
        Operation::SandboxExportSnapshot => "Sandbox: the company's whole state as a versioned JSON document",
        Operation::SandboxRestoreSnapshot => {
            "Sandbox: restores a snapshot of this company; another version or company is a 400"
        }
        Operation::SandboxRequests => {
            "Sandbox: the company's latest calls (method, path, status, time, request id, bodies with secrets masked), newest first"
        }
        Operation::SandboxWebhookDeliveries => {
            "Sandbox: webhook deliveries (event, URL, status, attempts with status code and time), newest first"
        }
        Operation::SandboxResendDelivery => "Sandbox: sends a delivery once more now and shows the attempt",
        Operation::SandboxCardSpend => {
            "Sandbox: a merchant authorization {amount, merchant}; declined (nothing moves) when frozen, over balance or a limit, or out of swipes"
        }
    }
}

fn tag(op: Operation) -> &'static str {
    let path = op.template();
    if path.starts_with("/sandbox/") {
        "Sandbox control"
    } else if path.starts_with("/api/balances") {
        "Balances"
    } else if path.starts_with("/api/addresses") || path.starts_with("/api/stablecoins") {
        "Addresses"
    } else if path.starts_with("/api/transactions") {
        "Transactions"
    } else if path.starts_with("/api/bulk-transfers") {
        "Bulk transfers"
    } else if path.starts_with("/api/virtual-accounts") {
        "Virtual accounts"
    } else if path.starts_with("/api/lightning") {
        "Lightning"
    } else if path.starts_with("/api/exchange-rates") {
        "Exchange rates"
    } else if path.starts_with("/api/withdrawals") {
        "Withdrawals"
    } else if path.starts_with("/api/trading") {
        "Trading"
    } else if path.starts_with("/api/payouts") {
        "Payouts"
    } else if path.starts_with("/api/beneficiaries") {
        "Beneficiaries"
    } else if path.starts_with("/api/cards") || path.ends_with("/cards") || path.ends_with("/card-kyc") {
        "Cards"
    } else if path.starts_with("/api/customers") {
        "Customers"
    } else {
        "Identity"
    }
}

fn path_parameters(template: &str) -> Vec<Value> {
    template
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
        .collect()
}

fn operation(op: Operation) -> Value {
    let mut responses = Map::new();
    responses.insert(
        "2XX".into(),
        json!({"description": "Success envelope {success, message, data, timestamp, metadata.request_id}"}),
    );
    for (status, meaning) in [
        (
            "400",
            "Validation error (RFC 7807, code VALIDATION_ERROR, errors[])",
        ),
        ("401", "Authentication failed"),
        ("403", "The client's scoped permissions do not allow this"),
        ("404", "Unknown id, route or another company's resource"),
        (
            "409",
            "Reference reused with a different body (IDEMPOTENCY_CONFLICT)",
        ),
        ("422", "Well-formed but not allowed now"),
        ("429", "Rate limited; see Retry-After"),
    ] {
        responses.insert(
            status.into(),
            json!({"description": meaning, "content": {"application/problem+json": {}}}),
        );
    }
    let mut value = json!({
        "operationId": format!("{op:?}"),
        "summary": summary(op),
        "tags": [tag(op)],
        "parameters": path_parameters(op.template()),
        "responses": responses,
    });
    if op.method() != Method::Get {
        value["requestBody"] =
            json!({"required": false, "content": {"application/json": {"schema": {"type": "object"}}}});
    }
    value
}

/// The whole document.
pub fn document() -> Value {
    let mut paths = Map::new();
    for op in Operation::ALL {
        let entry = paths.entry(op.template()).or_insert_with(|| json!({}));
        entry[op.method().as_str().to_ascii_lowercase()] = operation(*op);
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Payments, Trading and Cards Service API v2 — Paydesk sandbox",
            "version": "2.0.0",
            "description": "A stateful sandbox of the service. Every request is signed: X-Auth-Client, X-Auth-Timestamp (Unix seconds), X-Auth-Nonce (16-128 chars of [A-Za-z0-9_-], never reused), X-Auth-Signature = lowercase hex HMAC-SHA256(secret, \"client_id:timestamp:nonce:body\"); 300 s skew allowed. Sandbox time = wall clock + an offset moved by POST /sandbox/clock/advance; asynchronous steps fall due 10-300 s of sandbox time after their trigger. Webhooks: x-service-signature = hex HMAC-SHA512 of the raw body; non-200 answers are retried 3 times (15 s, 45 s, 135 s). Faults: POST /sandbox/faults. See the sandbox README for test values."
        },
        "components": {"securitySchemes": {
            "client": {"type": "apiKey", "in": "header", "name": "X-Auth-Client"},
            "timestamp": {"type": "apiKey", "in": "header", "name": "X-Auth-Timestamp"},
            "nonce": {"type": "apiKey", "in": "header", "name": "X-Auth-Nonce"},
            "signature": {"type": "apiKey", "in": "header", "name": "X-Auth-Signature"}
        }},
        "security": [{"client": [], "timestamp": [], "nonce": [], "signature": []}],
        "paths": paths,
    })
}

pub async fn serve() -> JsonAnswer {
    json(StatusCode::OK, &document())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_every_operation() {
        let doc = document();
        for op in Operation::ALL {
            let method = op.method().as_str().to_ascii_lowercase();
            assert!(doc["paths"][op.template()][&method].is_object(), "{op:?} missing");
        }
    }
}
