//! The typed async client: one method per operation, the envelope
//! unwrapped, RFC 7807 answers as [`ApiError::Problem`], and every request
//! signed with [`crate::signing`].
//!
//! Retries: only idempotent calls are retried (reads, and writes that carry
//! a reference, which the service de-duplicates), on 429 (honouring
//! `Retry-After`), 502/503/504, connection failures, timeouts and empty
//! 5xx answers. A write that times out or gets a 5xx without a body
//! reports [`ApiError::OutcomeUnknown`]: the caller must read the result
//! back by its reference instead of sending again blindly.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::{self, Stream};
use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::models::addresses::{
    Address, AddressPage, AddressQuery, AddressStatus, AddressValidation, GenerateAddress, SupportedChains,
    ValidateAddress,
};
use crate::models::balances::{Balance, BalanceList};
use crate::models::beneficiaries::{Beneficiary, BeneficiaryPage, BeneficiaryUpdate, NewBeneficiary};
use crate::models::bulk::{
    Batch, BatchData, BatchPage, BatchPreview, BulkExecution, BulkExecutionList, BulkSchedule,
    BulkScheduleData, BulkScheduleList, BulkScheduleUpdate, NewBatch, NewBulkSchedule,
};
use crate::models::cards::{
    BalanceAnswer, BalanceChange, Card, CardData, CardLimits, CardPage, CardQuery, CardStatus,
    CardStatusData, CardTransaction, CardTransactionData, CardTransactionPage, NewCard, SecureData,
    SecureDetails, SimulateSpend, SpendOutcome, StatusChange, Terminate, Termination,
};
use crate::models::control::{
    AddChanceFault, AddFault, AddWebhookFault, AdvanceClock, ClockNow, DeliveryList, FaultList,
    RequestJournal, ResetDone, SetWebhook, SimulateDeposit, WebhookDelivery, WebhookFaultList,
    WebhookSetting,
};
use crate::models::customers::{
    Blacklist, CardKyc, Customer, CustomerPage, CustomerQuery, CustomerUpdate, KycDetails, NewCustomer,
};
use crate::models::identity::Identity;
use crate::models::lightning::{
    DecodedInvoice, Invoice, InvoicePage, InvoiceVerification, NewInvoice, Payment, PaymentPreview,
    PaymentRequest, SendPayment, VerifyInvoice,
};
use crate::models::payouts::{
    AccountLookup, AccountName, BankList, Corridor, CountryList, InitializeAnswer, InitializeRequest, Payout,
    PayoutData, PayoutLimit, PayoutPage, QuoteData, QuoteRequest, SettlePayout,
};
use crate::models::rates::{Conversion, ExchangeRate};
use crate::models::trading::{
    Execution, ExecutionList, NewSchedule, NewTargetOrder, Order, OrderData, OrderPage, OrderRequest, Price,
    PriceList, Quote, QuoteData as TradingQuoteData, QuoteRequest as TradingQuoteRequest, Schedule,
    ScheduleData, ScheduleList, ScheduleUpdate, SetPrice, TargetOrder, TargetOrderData, TargetOrderList,
};
use crate::models::transactions::{Transaction, TransactionPage, TransactionQuery};
use crate::models::virtual_accounts::{
    NewVirtualAccount, SimulateBankTransfer, VirtualAccount, VirtualAccountPage,
};
use crate::models::withdrawals::{NewWithdrawal, Withdrawal, WithdrawalPage};
use crate::paths::{Method, Operation};
use crate::signing::sign_request;
use crate::wire::{Envelope, Problem};

/// The header the service puts its request id in.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// A client id and its secret. The secret never prints.
#[derive(Clone)]
pub struct Credentials {
    pub client_id: String,
    secret: SecretString,
}

impl Credentials {
    pub fn new(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            secret: SecretString::from(secret.into()),
        }
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("client_id", &self.client_id)
            .field("secret", &"[redacted]")
            .finish()
    }
}

/// Everything that can go wrong with a call, typed so that a caller can
/// tell a refusal from an unknown outcome.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The service answered with an RFC 7807 problem.
    #[error("{} ({status}): {} [correlation id {}]", problem.title, problem.detail, problem.correlation_id)]
    Problem {
        status: u16,
        problem: Box<Problem>,
        retry_after: Option<Duration>,
    },
    /// A write may or may not have happened (timeout, or 5xx without a body).
    #[error("the outcome of {method} {path} is unknown ({reason}); read it back by its reference before trying again")]
    OutcomeUnknown {
        method: &'static str,
        path: String,
        reason: String,
    },
    /// A read could not be completed (connection refused, timeout, 5xx without a body).
    #[error("the service could not be reached: {0}")]
    Unavailable(String),
    /// The service answered with something this client cannot read.
    #[error("the service answered {status} with a body this client cannot read: {reason}")]
    UnexpectedResponse { status: u16, reason: String },
}

impl ApiError {
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Problem { status, .. } | ApiError::UnexpectedResponse { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The service's error code (e.g. `VALIDATION_ERROR`), when it gave one.
    pub fn code(&self) -> Option<&str> {
        match self {
            ApiError::Problem { problem, .. } => problem.code.as_deref(),
            _ => None,
        }
    }

    /// An onchain payout's finalize refused because its deposit has not
    /// been confirmed yet: the payout waits (read it back later), it did
    /// not fail.
    pub fn is_deposit_not_confirmed(&self) -> bool {
        self.status() == Some(422) && self.code() == Some(crate::wire::codes::DEPOSIT_NOT_CONFIRMED)
    }

    pub fn problem(&self) -> Option<&Problem> {
        match self {
            ApiError::Problem { problem, .. } => Some(problem),
            _ => None,
        }
    }

    fn is_retryable(&self) -> bool {
        match self {
            ApiError::Problem { status, .. } => matches!(status, 429 | 502 | 503 | 504),
            ApiError::OutcomeUnknown { .. } | ApiError::Unavailable(_) => true,
            ApiError::UnexpectedResponse { .. } => false,
        }
    }
}

/// How a client behaves; the defaults suit an interactive portal.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Time allowed for one attempt, connect to last byte.
    pub timeout: Duration,
    /// Extra attempts for idempotent calls.
    pub max_retries: u32,
    /// First backoff; doubles each retry.
    pub backoff: Duration,
    /// Longest `Retry-After` the client will wait for before giving up.
    pub max_retry_after: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(15),
            max_retries: 2,
            backoff: Duration::from_millis(200),
            max_retry_after: Duration::from_secs(10),
        }
    }
}

/// What one attempt of a call did, for callers that record upstream calls
/// (the portal's audit log). Never contains credentials or bodies.
#[derive(Debug, Clone)]
pub struct CallRecord {
    pub method: &'static str,
    pub path: String,
    pub status: Option<u16>,
    /// The service's request id (`x-request-id`, or the problem's correlation id).
    pub request_id: Option<String>,
    pub outcome: CallOutcome,
    pub duration: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    Ok,
    /// A 4xx answer.
    Refused,
    /// A 5xx answer with a body.
    Failed,
    /// No answer, or an empty 5xx: the operation may or may not have run.
    Unknown,
}

impl CallOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::Refused => "refused",
            CallOutcome::Failed => "failed",
            CallOutcome::Unknown => "unknown",
        }
    }
}

/// Receives a [`CallRecord`] after every attempt.
pub trait CallObserver: Send + Sync {
    fn observe(&self, record: CallRecord);
}

/// A signed client for one set of credentials.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base_url: String,
    credentials: Credentials,
    options: ClientOptions,
    observer: Option<Arc<dyn CallObserver>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base_url)
            .field("credentials", &self.credentials)
            .finish()
    }
}

/// An answer read off the wire, before it becomes a typed value.
struct RawResponse {
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Client {
    pub fn new(base_url: impl Into<String>, credentials: Credentials) -> Self {
        Self::with_options(base_url, credentials, ClientOptions::default())
    }

    pub fn with_options(
        base_url: impl Into<String>,
        credentials: Credentials,
        options: ClientOptions,
    ) -> Self {
        Self::with_http(Self::http_client(&options), base_url, credentials, options)
    }

    /// The connection pool a client uses; share one among many clients.
    pub fn http_client(options: &ClientOptions) -> reqwest::Client {
        reqwest::Client::builder()
            .timeout(options.timeout)
            .connect_timeout(options.timeout.min(Duration::from_secs(5)))
            .build()
            .expect("the HTTP client's TLS backend initialises")
    }

    /// A client over an existing connection pool.
    pub fn with_http(
        http: reqwest::Client,
        base_url: impl Into<String>,
        credentials: Credentials,
        options: ClientOptions,
    ) -> Self {
        Self {
            http,
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            credentials,
            options,
            observer: None,
        }
    }

    /// The same client, reporting every attempt to `observer`.
    pub fn observed(&self, observer: Arc<dyn CallObserver>) -> Self {
        Self {
            observer: Some(observer),
            ..self.clone()
        }
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn client_id(&self) -> &str {
        &self.credentials.client_id
    }

    // --- Identity -------------------------------------------------------

    pub async fn whoami(&self) -> Result<Identity, ApiError> {
        self.data(Operation::Whoami, &[], &[], None::<&()>, true).await
    }

    // --- Balances -------------------------------------------------------

    pub async fn balances(&self) -> Result<BalanceList, ApiError> {
        self.data(Operation::ListBalances, &[], &[], None::<&()>, true)
            .await
    }

    pub async fn balance(&self, currency: &str) -> Result<Balance, ApiError> {
        self.data(Operation::GetBalance, &[currency], &[], None::<&()>, true)
            .await
    }

    // --- Addresses ------------------------------------------------------

    pub async fn supported_chains(&self) -> Result<SupportedChains, ApiError> {
        self.data(Operation::SupportedChains, &[], &[], None::<&()>, true)
            .await
    }

    /// Generation is idempotent by `reference` when one is given.
    pub async fn generate_address(&self, body: &GenerateAddress) -> Result<Address, ApiError> {
        let idempotent = body.reference.as_deref().is_some_and(|r| !r.is_empty());
        self.data(Operation::GenerateAddress, &[], &[], Some(body), idempotent)
            .await
    }

    pub async fn list_addresses(&self, query: &AddressQuery) -> Result<AddressPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "chain", query.chain.clone());
        push_opt(
            &mut q,
            "status",
            query.status.map(|s| match s {
                AddressStatus::Active => "active".to_owned(),
                AddressStatus::Inactive => "inactive".to_owned(),
            }),
        );
        if !query.addresses.is_empty() {
            q.push(("addresses", query.addresses.join(",")));
        }
        push_opt(&mut q, "cursor", query.cursor.clone());
        push_opt(&mut q, "limit", query.limit.map(|l| l.to_string()));
        self.data(Operation::ListAddresses, &[], &q, None::<&()>, true)
            .await
    }

    pub async fn address(&self, id: &str) -> Result<Address, ApiError> {
        self.data(Operation::GetAddress, &[id], &[], None::<&()>, true)
            .await
    }

    /// Validation stores nothing, so it is safe to retry.
    pub async fn validate_address(&self, body: &ValidateAddress) -> Result<AddressValidation, ApiError> {
        self.call(Operation::ValidateAddress, &[], &[], Some(body), true)
            .await
    }

    // --- Transactions ---------------------------------------------------

    pub async fn transactions(&self, query: &TransactionQuery) -> Result<TransactionPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "type", query.kind.map(|k| k.as_str().to_owned()));
        push_opt(&mut q, "status", query.status.map(|s| s.as_str().to_owned()));
        push_opt(&mut q, "currency", query.currency.as_ref().map(|c| c.to_string()));
        push_opt(&mut q, "cursor", query.cursor.clone());
        push_opt(&mut q, "limit", query.limit.map(|l| l.to_string()));
        self.data(Operation::ListTransactions, &[], &q, None::<&()>, true)
            .await
    }

    /// Every transaction matching `query`, page after page, newest first.
    /// The stream owns a clone of the client, so it can outlive the borrow
    /// (a streamed CSV export, say).
    pub fn all_transactions(
        &self,
        query: TransactionQuery,
    ) -> impl Stream<Item = Result<Transaction, ApiError>> + 'static {
        struct State {
            query: TransactionQuery,
            buffer: std::vec::IntoIter<Transaction>,
            done: bool,
        }
        let start = State {
            query,
            buffer: Vec::new().into_iter(),
            done: false,
        };
        let client = self.clone();
        stream::try_unfold(start, move |mut st| {
            let client = client.clone();
            async move {
                loop {
                    if let Some(tx) = st.buffer.next() {
                        return Ok(Some((tx, st)));
                    }
                    if st.done {
                        return Ok(None);
                    }
                    let page = client.transactions(&st.query).await?;
                    st.done = !page.has_more || page.next_cursor.is_empty();
                    st.query.cursor = Some(page.next_cursor);
                    st.buffer = page.transactions.into_iter();
                }
            }
        })
    }

    /// One transaction by its UUID or its reference.
    pub async fn transaction(&self, id_or_reference: &str) -> Result<Transaction, ApiError> {
        self.data(
            Operation::GetTransaction,
            &[id_or_reference],
            &[],
            None::<&()>,
            true,
        )
        .await
    }

    // --- Payouts ----------------------------------------------------------

    pub async fn payout_countries(&self) -> Result<CountryList, ApiError> {
        self.data(Operation::PayoutCountries, &[], &[], None::<&()>, true)
            .await
    }

    pub async fn payout_corridor(&self, country: &str) -> Result<Corridor, ApiError> {
        self.data(Operation::PayoutCorridor, &[country], &[], None::<&()>, true)
            .await
    }

    pub async fn payout_banks(&self, country: &str) -> Result<BankList, ApiError> {
        self.data(Operation::PayoutBanks, &[country], &[], None::<&()>, true)
            .await
    }

    /// Looking up stores nothing, so it is safe to retry.
    pub async fn lookup_account(&self, body: &AccountLookup) -> Result<AccountName, ApiError> {
        self.data(Operation::PayoutAccountLookup, &[], &[], Some(body), true)
            .await
    }

    pub async fn payout_limits(&self) -> Result<Vec<PayoutLimit>, ApiError> {
        self.data(Operation::PayoutLimits, &[], &[], None::<&()>, true)
            .await
    }

    /// Idempotent by `reference`.
    pub async fn create_payout_quote(&self, body: &QuoteRequest) -> Result<Payout, ApiError> {
        let data: QuoteData = self
            .data(Operation::CreatePayoutQuote, &[], &[], Some(body), true)
            .await?;
        Ok(data.quote)
    }

    pub async fn payout_quote(&self, quote_id: &str) -> Result<Payout, ApiError> {
        let data: QuoteData = self
            .data(Operation::GetPayoutQuote, &[quote_id], &[], None::<&()>, true)
            .await?;
        Ok(data.quote)
    }

    /// Idempotent by `reference`.
    pub async fn initialize_payout(
        &self,
        quote_id: &str,
        body: &InitializeRequest,
    ) -> Result<Payout, ApiError> {
        let answer: InitializeAnswer = self
            .call(Operation::InitializePayout, &[quote_id], &[], Some(body), true)
            .await?;
        Ok(answer.payout)
    }

    /// Moves money, so it is never retried here: on an unknown outcome,
    /// read the payout back ([`Client::payout`]) before deciding anything.
    pub async fn finalize_payout(&self, quote_id: &str) -> Result<Payout, ApiError> {
        let data: PayoutData = self
            .data(Operation::FinalizePayout, &[quote_id], &[], None::<&()>, false)
            .await?;
        Ok(data.payout)
    }

    pub async fn payout(&self, id: &str) -> Result<Payout, ApiError> {
        self.data(Operation::GetPayout, &[id], &[], None::<&()>, true)
            .await
    }

    pub async fn payouts(&self, status: Option<&str>, limit: Option<u32>) -> Result<PayoutPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "status", status.map(str::to_owned));
        push_opt(&mut q, "limit", limit.map(|l| l.to_string()));
        self.data(Operation::ListPayouts, &[], &q, None::<&()>, true)
            .await
    }

    // --- Trading ------------------------------------------------------------

    pub async fn trading_prices(&self) -> Result<PriceList, ApiError> {
        self.data(Operation::TradingPrices, &[], &[], None::<&()>, true)
            .await
    }

    // --- Lightning --------------------------------------------------------

    /// Idempotent by its required reference, so retried.
    pub async fn create_invoice(&self, body: &NewInvoice) -> Result<Invoice, ApiError> {
        self.data(Operation::CreateInvoice, &[], &[], Some(body), true)
            .await
    }

    pub async fn invoices(
        &self,
        page: Option<u32>,
        page_size: Option<u32>,
        status: Option<&str>,
        direction: Option<&str>,
    ) -> Result<InvoicePage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "page", page.map(|p| p.to_string()));
        push_opt(&mut q, "page_size", page_size.map(|p| p.to_string()));
        push_opt(&mut q, "status", status.map(str::to_owned));
        push_opt(&mut q, "direction", direction.map(str::to_owned));
        self.data(Operation::ListInvoices, &[], &q, None::<&()>, true)
            .await
    }

    pub async fn invoice(&self, id: &str) -> Result<Invoice, ApiError> {
        self.data(Operation::GetInvoice, &[id], &[], None::<&()>, true)
            .await
    }

    pub async fn verify_invoice(&self, payment_hash: &str) -> Result<InvoiceVerification, ApiError> {
        let body = VerifyInvoice {
            payment_hash: payment_hash.to_owned(),
        };
        self.data(Operation::VerifyInvoice, &[], &[], Some(&body), true)
            .await
    }

    pub async fn decode_invoice(&self, request: &str) -> Result<DecodedInvoice, ApiError> {
        let body = PaymentRequest {
            request: request.to_owned(),
        };
        self.data(Operation::DecodeInvoice, &[], &[], Some(&body), true)
            .await
    }

    /// A preview: fee, total and whether a route exists.
    pub async fn initiate_payment(&self, request: &str) -> Result<PaymentPreview, ApiError> {
        let body = PaymentRequest {
            request: request.to_owned(),
        };
        self.data(Operation::InitiatePayment, &[], &[], Some(&body), true)
            .await
    }

    /// Idempotent by its required reference: a lost answer is safe to ask
    /// again with the same reference.
    pub async fn send_payment(&self, body: &SendPayment) -> Result<Payment, ApiError> {
        self.data(Operation::SendPayment, &[], &[], Some(body), true)
            .await
    }

    // --- Trading ----------------------------------------------------------

    pub async fn create_trading_quote(&self, body: &TradingQuoteRequest) -> Result<Quote, ApiError> {
        let data: TradingQuoteData = self
            .data(Operation::CreateTradingQuote, &[], &[], Some(body), false)
            .await?;
        Ok(data.quote)
    }

    pub async fn trading_quote(&self, id: &str) -> Result<Quote, ApiError> {
        let data: TradingQuoteData = self
            .data(Operation::GetTradingQuote, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.quote)
    }

    /// Retried only when the order carries a reference.
    pub async fn create_order(&self, body: &OrderRequest) -> Result<Order, ApiError> {
        let idempotent = body.reference.as_deref().is_some_and(|r| !r.is_empty());
        let data: OrderData = self
            .data(Operation::CreateOrder, &[], &[], Some(body), idempotent)
            .await?;
        Ok(data.order)
    }

    pub async fn orders(
        &self,
        status: Option<&str>,
        cursor: Option<String>,
        limit: Option<u32>,
    ) -> Result<OrderPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "status", status.map(str::to_owned));
        push_opt(&mut q, "cursor", cursor);
        push_opt(&mut q, "limit", limit.map(|l| l.to_string()));
        self.data(Operation::ListOrders, &[], &q, None::<&()>, true).await
    }

    pub async fn order(&self, id: &str) -> Result<Order, ApiError> {
        let data: OrderData = self
            .data(Operation::GetOrder, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.order)
    }

    pub async fn cancel_order(&self, id: &str) -> Result<Order, ApiError> {
        let data: OrderData = self
            .data(Operation::CancelOrder, &[id], &[], None::<&()>, false)
            .await?;
        Ok(data.order)
    }

    /// Idempotent by reference when one is given.
    pub async fn create_scheduled_order(&self, body: &NewSchedule) -> Result<Schedule, ApiError> {
        let idempotent = !body.reference.is_empty();
        let data: ScheduleData = self
            .data(Operation::CreateScheduledOrder, &[], &[], Some(body), idempotent)
            .await?;
        Ok(data.schedule)
    }

    pub async fn scheduled_orders(&self, status: Option<&str>) -> Result<Vec<Schedule>, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "status", status.map(str::to_owned));
        let data: ScheduleList = self
            .data(Operation::ListScheduledOrders, &[], &q, None::<&()>, true)
            .await?;
        Ok(data.schedules)
    }

    pub async fn scheduled_order(&self, id: &str) -> Result<Schedule, ApiError> {
        let data: ScheduleData = self
            .data(Operation::GetScheduledOrder, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.schedule)
    }

    /// Setting the same fields again changes nothing more, so it is retried.
    pub async fn update_scheduled_order(
        &self,
        id: &str,
        body: &ScheduleUpdate,
    ) -> Result<Schedule, ApiError> {
        let data: ScheduleData = self
            .data(Operation::UpdateScheduledOrder, &[id], &[], Some(body), true)
            .await?;
        Ok(data.schedule)
    }

    pub async fn cancel_scheduled_order(&self, id: &str) -> Result<Schedule, ApiError> {
        let data: ScheduleData = self
            .data(Operation::CancelScheduledOrder, &[id], &[], None::<&()>, false)
            .await?;
        Ok(data.schedule)
    }

    /// Newest first.
    pub async fn scheduled_order_executions(&self, id: &str) -> Result<Vec<Execution>, ApiError> {
        let data: ExecutionList = self
            .data(Operation::ScheduledOrderExecutions, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.executions)
    }

    /// Idempotent by reference when one is given.
    pub async fn create_target_order(&self, body: &NewTargetOrder) -> Result<TargetOrder, ApiError> {
        let idempotent = !body.reference.is_empty();
        let data: TargetOrderData = self
            .data(Operation::CreateTargetOrder, &[], &[], Some(body), idempotent)
            .await?;
        Ok(data.order)
    }

    pub async fn target_orders(&self, status: Option<&str>) -> Result<Vec<TargetOrder>, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "status", status.map(str::to_owned));
        let data: TargetOrderList = self
            .data(Operation::ListTargetOrders, &[], &q, None::<&()>, true)
            .await?;
        Ok(data.orders)
    }

    pub async fn target_order(&self, id: &str) -> Result<TargetOrder, ApiError> {
        let data: TargetOrderData = self
            .data(Operation::GetTargetOrder, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.order)
    }

    pub async fn cancel_target_order(&self, id: &str) -> Result<TargetOrder, ApiError> {
        let data: TargetOrderData = self
            .data(Operation::CancelTargetOrder, &[id], &[], None::<&()>, false)
            .await?;
        Ok(data.order)
    }

    // --- Beneficiaries ----------------------------------------------------

    pub async fn create_beneficiary(&self, body: &NewBeneficiary) -> Result<Beneficiary, ApiError> {
        self.data(Operation::CreateBeneficiary, &[], &[], Some(body), false)
            .await
    }

    pub async fn beneficiaries(
        &self,
        limit: Option<u32>,
        offset: Option<u32>,
    ) -> Result<BeneficiaryPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "limit", limit.map(|l| l.to_string()));
        push_opt(&mut q, "offset", offset.map(|o| o.to_string()));
        self.data(Operation::ListBeneficiaries, &[], &q, None::<&()>, true)
            .await
    }

    pub async fn beneficiary(&self, id: &str) -> Result<Beneficiary, ApiError> {
        self.data(Operation::GetBeneficiary, &[id], &[], None::<&()>, true)
            .await
    }

    /// A full replacement of the given fields is safe to repeat.
    pub async fn update_beneficiary(
        &self,
        id: &str,
        body: &BeneficiaryUpdate,
    ) -> Result<Beneficiary, ApiError> {
        self.data(Operation::UpdateBeneficiary, &[id], &[], Some(body), true)
            .await
    }

    pub async fn delete_beneficiary(&self, id: &str) -> Result<Beneficiary, ApiError> {
        self.data(Operation::DeleteBeneficiary, &[id], &[], None::<&()>, false)
            .await
    }

    // --- Exchange rates and withdrawals --------------------------------------

    pub async fn exchange_rate(&self, from: &str, to: &str) -> Result<ExchangeRate, ApiError> {
        let q = [("from", from.to_owned()), ("to", to.to_owned())];
        self.data(Operation::GetExchangeRate, &[], &q, None::<&()>, true)
            .await
    }

    /// Converts `amount` whole units of `from` at the mid rate.
    pub async fn convert(
        &self,
        from: &str,
        to: &str,
        amount: rust_decimal::Decimal,
    ) -> Result<Conversion, ApiError> {
        let q = [
            ("from", from.to_owned()),
            ("to", to.to_owned()),
            ("amount", amount.to_string()),
        ];
        self.data(Operation::ConvertCurrency, &[], &q, None::<&()>, true)
            .await
    }

    /// Idempotent by its required reference, so retried.
    pub async fn create_withdrawal(&self, body: &NewWithdrawal) -> Result<Withdrawal, ApiError> {
        self.data(Operation::CreateWithdrawal, &[], &[], Some(body), true)
            .await
    }

    pub async fn withdrawals(
        &self,
        status: Option<&str>,
        cursor: Option<String>,
        limit: Option<u32>,
    ) -> Result<WithdrawalPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "status", status.map(str::to_owned));
        push_opt(&mut q, "cursor", cursor);
        push_opt(&mut q, "limit", limit.map(|l| l.to_string()));
        self.data(Operation::ListWithdrawals, &[], &q, None::<&()>, true)
            .await
    }

    pub async fn withdrawal(&self, id: &str) -> Result<Withdrawal, ApiError> {
        self.data(Operation::GetWithdrawal, &[id], &[], None::<&()>, true)
            .await
    }

    // --- Bulk transfers and virtual accounts --------------------------------

    /// Checks a batch without storing it.
    pub async fn preview_bulk_transfer(&self, body: &NewBatch) -> Result<BatchPreview, ApiError> {
        self.data(Operation::PreviewBulkTransfer, &[], &[], Some(body), true)
            .await
    }

    /// A draft batch; idempotent by reference when one is given.
    pub async fn create_bulk_transfer(&self, body: &NewBatch) -> Result<Batch, ApiError> {
        let idempotent = !body.reference.is_empty();
        let data: BatchData = self
            .data(Operation::CreateBulkTransfer, &[], &[], Some(body), idempotent)
            .await?;
        Ok(data.batch)
    }

    pub async fn bulk_transfers(
        &self,
        status: Option<&str>,
        cursor: Option<String>,
        limit: Option<u32>,
    ) -> Result<BatchPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "status", status.map(str::to_owned));
        push_opt(&mut q, "cursor", cursor);
        push_opt(&mut q, "limit", limit.map(|l| l.to_string()));
        self.data(Operation::ListBulkTransfers, &[], &q, None::<&()>, true)
            .await
    }

    pub async fn bulk_transfer(&self, id: &str) -> Result<Batch, ApiError> {
        let data: BatchData = self
            .data(Operation::GetBulkTransfer, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.batch)
    }

    /// Confirming twice is refused, so a lost answer is settled by reading
    /// the batch back.
    pub async fn confirm_bulk_transfer(&self, id: &str) -> Result<Batch, ApiError> {
        let data: BatchData = self
            .data(Operation::ConfirmBulkTransfer, &[id], &[], None::<&()>, false)
            .await?;
        Ok(data.batch)
    }

    pub async fn retry_bulk_transfer(&self, id: &str) -> Result<Batch, ApiError> {
        let data: BatchData = self
            .data(Operation::RetryBulkTransfer, &[id], &[], None::<&()>, false)
            .await?;
        Ok(data.batch)
    }

    pub async fn create_bulk_schedule(&self, body: &NewBulkSchedule) -> Result<BulkSchedule, ApiError> {
        let idempotent = !body.reference.is_empty();
        let data: BulkScheduleData = self
            .data(Operation::CreateBulkSchedule, &[], &[], Some(body), idempotent)
            .await?;
        Ok(data.schedule)
    }

    pub async fn bulk_schedules(&self) -> Result<Vec<BulkSchedule>, ApiError> {
        let data: BulkScheduleList = self
            .data(Operation::ListBulkSchedules, &[], &[], None::<&()>, true)
            .await?;
        Ok(data.schedules)
    }

    pub async fn update_bulk_schedule(
        &self,
        id: &str,
        body: &BulkScheduleUpdate,
    ) -> Result<BulkSchedule, ApiError> {
        let data: BulkScheduleData = self
            .data(Operation::UpdateBulkSchedule, &[id], &[], Some(body), true)
            .await?;
        Ok(data.schedule)
    }

    pub async fn cancel_bulk_schedule(&self, id: &str) -> Result<BulkSchedule, ApiError> {
        let data: BulkScheduleData = self
            .data(Operation::CancelBulkSchedule, &[id], &[], None::<&()>, false)
            .await?;
        Ok(data.schedule)
    }

    /// Newest first.
    pub async fn bulk_schedule_executions(&self, id: &str) -> Result<Vec<BulkExecution>, ApiError> {
        let data: BulkExecutionList = self
            .data(Operation::BulkScheduleExecutions, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.executions)
    }

    /// Idempotent by reference when one is given.
    pub async fn create_virtual_account(&self, body: &NewVirtualAccount) -> Result<VirtualAccount, ApiError> {
        let idempotent = !body.reference.is_empty();
        self.data(Operation::CreateVirtualAccount, &[], &[], Some(body), idempotent)
            .await
    }

    pub async fn virtual_accounts(
        &self,
        customer_id: Option<&str>,
        cursor: Option<String>,
        limit: Option<u32>,
    ) -> Result<VirtualAccountPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "customer_id", customer_id.map(str::to_owned));
        push_opt(&mut q, "cursor", cursor);
        push_opt(&mut q, "limit", limit.map(|l| l.to_string()));
        self.data(Operation::ListVirtualAccounts, &[], &q, None::<&()>, true)
            .await
    }

    pub async fn virtual_account(&self, id: &str) -> Result<VirtualAccount, ApiError> {
        self.data(Operation::GetVirtualAccount, &[id], &[], None::<&()>, true)
            .await
    }

    // --- Customers --------------------------------------------------------

    /// Idempotent by `reference` when one is given.
    pub async fn create_customer(&self, body: &NewCustomer) -> Result<Customer, ApiError> {
        let idempotent = body.reference.as_deref().is_some_and(|r| !r.is_empty());
        self.data(Operation::CreateCustomer, &[], &[], Some(body), idempotent)
            .await
    }

    pub async fn customers(&self, query: &CustomerQuery) -> Result<CustomerPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "id", query.id.clone());
        push_opt(&mut q, "reference", query.reference.clone());
        push_opt(&mut q, "email", query.email.clone());
        push_opt(&mut q, "customer_type", query.customer_type.clone());
        push_opt(&mut q, "is_active", query.is_active.map(|a| a.to_string()));
        push_opt(&mut q, "cursor", query.cursor.clone());
        push_opt(&mut q, "limit", query.limit.map(|l| l.to_string()));
        self.data(Operation::ListCustomers, &[], &q, None::<&()>, true)
            .await
    }

    pub async fn customer(&self, id: &str) -> Result<Customer, ApiError> {
        self.data(Operation::GetCustomer, &[id], &[], None::<&()>, true)
            .await
    }

    /// Setting the given fields again is harmless, so it is retried.
    pub async fn update_customer(&self, id: &str, body: &CustomerUpdate) -> Result<Customer, ApiError> {
        self.data(Operation::UpdateCustomer, &[id], &[], Some(body), true)
            .await
    }

    pub async fn blacklist_customer(&self, id: &str, blacklist: bool) -> Result<Customer, ApiError> {
        self.data(
            Operation::BlacklistCustomer,
            &[id],
            &[],
            Some(&Blacklist { blacklist }),
            true,
        )
        .await
    }

    pub async fn delete_customer(&self, id: &str) -> Result<Customer, ApiError> {
        self.data(Operation::DeleteCustomer, &[id], &[], None::<&()>, false)
            .await
    }

    pub async fn submit_card_kyc(&self, customer_id: &str, body: &KycDetails) -> Result<CardKyc, ApiError> {
        self.data(Operation::SubmitCardKyc, &[customer_id], &[], Some(body), false)
            .await
    }

    pub async fn card_kyc(&self, customer_id: &str) -> Result<CardKyc, ApiError> {
        self.data(Operation::GetCardKyc, &[customer_id], &[], None::<&()>, true)
            .await
    }

    pub async fn customer_cards(
        &self,
        customer_id: &str,
        cursor: Option<String>,
        limit: Option<u32>,
    ) -> Result<CardPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "cursor", cursor);
        push_opt(&mut q, "limit", limit.map(|l| l.to_string()));
        self.data(Operation::CustomerCards, &[customer_id], &q, None::<&()>, true)
            .await
    }

    // --- Cards ------------------------------------------------------------

    /// Issues a virtual or lite card; idempotent by `reference` when given.
    pub async fn create_card(&self, body: &NewCard) -> Result<Card, ApiError> {
        let idempotent = body.reference.as_deref().is_some_and(|r| !r.is_empty());
        let data: CardData = self
            .data(Operation::CreateCard, &[], &[], Some(body), idempotent)
            .await?;
        Ok(data.card)
    }

    pub async fn cards(&self, query: &CardQuery) -> Result<CardPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "card_type", query.card_type.clone());
        push_opt(&mut q, "status", query.status.clone());
        push_opt(&mut q, "search", query.search.clone());
        push_opt(&mut q, "cursor", query.cursor.clone());
        push_opt(&mut q, "limit", query.limit.map(|l| l.to_string()));
        self.data(Operation::ListCards, &[], &q, None::<&()>, true).await
    }

    pub async fn card(&self, id: &str) -> Result<Card, ApiError> {
        let data: CardData = self
            .data(Operation::GetCard, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.card)
    }

    /// Funds or withdraws; the reference makes a retry return the original
    /// transaction, so it is retried.
    pub async fn change_card_balance(
        &self,
        card_id: &str,
        body: &BalanceChange,
    ) -> Result<BalanceAnswer, ApiError> {
        self.data(Operation::ChangeCardBalance, &[card_id], &[], Some(body), true)
            .await
    }

    /// `frozen` or `active`; setting the same status twice changes nothing.
    pub async fn set_card_status(&self, card_id: &str, status: &str) -> Result<CardStatus, ApiError> {
        let body = StatusChange {
            status: status.to_owned(),
        };
        let data: CardStatusData = self
            .data(Operation::SetCardStatus, &[card_id], &[], Some(&body), true)
            .await?;
        Ok(data.card)
    }

    /// Not retried: a lost answer is settled by reading the card back.
    pub async fn terminate_card(&self, card_id: &str, reason: &str) -> Result<Termination, ApiError> {
        let body = Terminate {
            reason: reason.to_owned(),
        };
        self.data(Operation::TerminateCard, &[card_id], &[], Some(&body), false)
            .await
    }

    /// Not retried: each read counts against the card's 2 per 60 s.
    pub async fn card_secure_details(&self, card_id: &str) -> Result<SecureDetails, ApiError> {
        let data: SecureData = self
            .data(Operation::CardSecureDetails, &[card_id], &[], None::<&()>, false)
            .await?;
        Ok(data.details)
    }

    pub async fn set_card_spend_limits(&self, card_id: &str, limits: &CardLimits) -> Result<Card, ApiError> {
        let data: CardData = self
            .data(Operation::SetCardSpendLimits, &[card_id], &[], Some(limits), true)
            .await?;
        Ok(data.card)
    }

    pub async fn card_transactions(
        &self,
        card_id: &str,
        cursor: Option<String>,
        limit: Option<u32>,
    ) -> Result<CardTransactionPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "cursor", cursor);
        push_opt(&mut q, "limit", limit.map(|l| l.to_string()));
        self.data(Operation::CardTransactions, &[card_id], &q, None::<&()>, true)
            .await
    }

    pub async fn card_transaction(
        &self,
        card_id: &str,
        transaction_id: &str,
    ) -> Result<CardTransaction, ApiError> {
        let data: CardTransactionData = self
            .data(
                Operation::GetCardTransaction,
                &[card_id, transaction_id],
                &[],
                None::<&()>,
                true,
            )
            .await?;
        Ok(data.transaction)
    }

    // --- Sandbox control API ---------------------------------------------

    /// A bank transfer arrives in a virtual account (not retried: each is
    /// a deposit).
    pub async fn sandbox_bank_transfer(
        &self,
        virtual_account_id: &str,
        body: &SimulateBankTransfer,
    ) -> Result<Transaction, ApiError> {
        self.data(
            Operation::SandboxVirtualAccountTransfer,
            &[virtual_account_id],
            &[],
            Some(body),
            false,
        )
        .await
    }

    /// Someone outside the sandbox pays an invoice of this company.
    pub async fn sandbox_pay_invoice(&self, request: &str) -> Result<Invoice, ApiError> {
        let body = PaymentRequest {
            request: request.to_owned(),
        };
        self.data(Operation::SandboxLightningPay, &[], &[], Some(&body), false)
            .await
    }

    /// A merchant authorization on a card (not retried: each is a spend).
    pub async fn sandbox_card_spend(
        &self,
        card_id: &str,
        body: &SimulateSpend,
    ) -> Result<SpendOutcome, ApiError> {
        self.data(Operation::SandboxCardSpend, &[card_id], &[], Some(body), false)
            .await
    }

    /// Sets a market price in the sandbox (the same price twice is no change,
    /// so it is safe to retry).
    pub async fn sandbox_set_price(
        &self,
        base: &str,
        quote: &str,
        price: rust_decimal::Decimal,
    ) -> Result<Price, ApiError> {
        let body = SetPrice {
            base: base.to_owned(),
            quote: quote.to_owned(),
            price,
            liquidity: None,
        };
        self.data(Operation::SandboxSetPrice, &[], &[], Some(&body), true)
            .await
    }

    /// Sets a market price with the liquidity at it (base units per 10 s).
    pub async fn sandbox_set_price_with_liquidity(
        &self,
        base: &str,
        quote: &str,
        price: rust_decimal::Decimal,
        liquidity: crate::units::BaseUnits,
    ) -> Result<Price, ApiError> {
        let body = SetPrice {
            base: base.to_owned(),
            quote: quote.to_owned(),
            price,
            liquidity: Some(liquidity),
        };
        self.data(Operation::SandboxSetPrice, &[], &[], Some(&body), true)
            .await
    }

    /// The rail settles a finalized payout now.
    pub async fn sandbox_settle_payout(&self, id: &str, completed: bool) -> Result<Payout, ApiError> {
        let body = SettlePayout {
            outcome: if completed { "completed" } else { "failed" }.to_owned(),
        };
        self.data(Operation::SandboxSettlePayout, &[id], &[], Some(&body), false)
            .await
    }

    pub async fn sandbox_clock(&self) -> Result<ClockNow, ApiError> {
        self.data(Operation::SandboxClock, &[], &[], None::<&()>, true)
            .await
    }

    /// Moves the sandbox clock; not retried, since advancing twice moves it twice.
    pub async fn sandbox_advance_clock(&self, seconds: u64) -> Result<ClockNow, ApiError> {
        self.data(
            Operation::SandboxAdvanceClock,
            &[],
            &[],
            Some(&AdvanceClock { seconds }),
            false,
        )
        .await
    }

    pub async fn sandbox_set_webhook(
        &self,
        url: &str,
        secret: Option<&str>,
    ) -> Result<WebhookSetting, ApiError> {
        let body = SetWebhook {
            url: url.to_owned(),
            secret: secret.map(str::to_owned),
        };
        self.data(Operation::SandboxSetWebhook, &[], &[], Some(&body), true)
            .await
    }

    pub async fn sandbox_deposit(&self, body: &SimulateDeposit) -> Result<Transaction, ApiError> {
        self.data(Operation::SandboxDeposit, &[], &[], Some(body), false)
            .await
    }

    pub async fn sandbox_add_fault(&self, fault: &AddFault) -> Result<FaultList, ApiError> {
        self.data(Operation::SandboxAddFault, &[], &[], Some(fault), false)
            .await
    }

    pub async fn sandbox_clear_faults(&self) -> Result<FaultList, ApiError> {
        self.data(Operation::SandboxClearFaults, &[], &[], None::<&()>, true)
            .await
    }

    /// Arms a call fault that hits matching calls with a seeded chance.
    pub async fn sandbox_add_chance_fault(&self, fault: &AddChanceFault) -> Result<FaultList, ApiError> {
        self.data(Operation::SandboxAddFault, &[], &[], Some(fault), false)
            .await
    }

    /// Arms a fault on the company's webhook deliveries.
    pub async fn sandbox_add_webhook_fault(
        &self,
        fault: &AddWebhookFault,
    ) -> Result<WebhookFaultList, ApiError> {
        self.data(Operation::SandboxAddWebhookFault, &[], &[], Some(fault), false)
            .await
    }

    /// The company's webhook delivery faults still armed.
    pub async fn sandbox_webhook_faults(&self) -> Result<WebhookFaultList, ApiError> {
        self.data(Operation::SandboxWebhookFaults, &[], &[], None::<&()>, true)
            .await
    }

    pub async fn sandbox_clear_webhook_faults(&self) -> Result<WebhookFaultList, ApiError> {
        self.data(Operation::SandboxClearWebhookFaults, &[], &[], None::<&()>, true)
            .await
    }

    /// Puts the caller's company back to its fixture state.
    pub async fn sandbox_reset(&self) -> Result<ResetDone, ApiError> {
        self.data(Operation::SandboxReset, &[], &[], None::<&()>, false)
            .await
    }

    /// The company's whole state as a versioned JSON document.
    pub async fn sandbox_snapshot(&self) -> Result<serde_json::Value, ApiError> {
        self.data(Operation::SandboxExportSnapshot, &[], &[], None::<&()>, true)
            .await
    }

    /// Restores a document from `sandbox_snapshot` (same version only).
    pub async fn sandbox_restore(&self, snapshot: &serde_json::Value) -> Result<ResetDone, ApiError> {
        self.data(Operation::SandboxRestoreSnapshot, &[], &[], Some(snapshot), true)
            .await
    }

    /// The company's recent calls, newest first (`limit` 1..200).
    pub async fn sandbox_requests(&self, limit: Option<u32>) -> Result<RequestJournal, ApiError> {
        let query: Vec<(&str, String)> = limit.map(|l| ("limit", l.to_string())).into_iter().collect();
        self.data(Operation::SandboxRequests, &[], &query, None::<&()>, true)
            .await
    }

    /// The company's webhook deliveries, newest first.
    pub async fn sandbox_webhook_deliveries(&self) -> Result<DeliveryList, ApiError> {
        self.data(Operation::SandboxWebhookDeliveries, &[], &[], None::<&()>, true)
            .await
    }

    /// Sends a delivery once more now; answers it with the new attempt.
    pub async fn sandbox_resend_delivery(&self, id: u64) -> Result<WebhookDelivery, ApiError> {
        self.data(
            Operation::SandboxResendDelivery,
            &[&id.to_string()],
            &[],
            None::<&()>,
            false,
        )
        .await
    }

    // --- Transport -------------------------------------------------------

    /// Calls an operation whose answer is an envelope and returns its `data`.
    async fn data<T: DeserializeOwned, B: Serialize>(
        &self,
        op: Operation,
        params: &[&str],
        query: &[(&str, String)],
        body: Option<&B>,
        idempotent: bool,
    ) -> Result<T, ApiError> {
        let envelope: Envelope<T> = self.call(op, params, query, body, idempotent).await?;
        Ok(envelope.data)
    }

    /// Calls an operation and decodes its whole answer, retrying only when
    /// `idempotent`.
    async fn call<T: DeserializeOwned, B: Serialize>(
        &self,
        op: Operation,
        params: &[&str],
        query: &[(&str, String)],
        body: Option<&B>,
        idempotent: bool,
    ) -> Result<T, ApiError> {
        let path = op.path(params);
        let body = body.map(|b| serde_json::to_vec(b).expect("request bodies serialize"));
        let attempts = if idempotent {
            1 + self.options.max_retries
        } else {
            1
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = Instant::now();
            let result = self.send_once(op.method(), &path, query, body.as_deref()).await;
            let request_id = result.as_ref().ok().and_then(|raw| {
                raw.headers
                    .get(REQUEST_ID_HEADER)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            });
            let status = result.as_ref().ok().map(|raw| raw.status);
            let decoded = result.and_then(|raw| decode::<T>(op.method(), &path, raw));
            self.report(
                op.method(),
                &path,
                &decoded,
                status,
                request_id,
                started.elapsed(),
            );
            let err = match decoded {
                Ok(value) => return Ok(value),
                Err(e) => e,
            };
            if attempt >= attempts || !err.is_retryable() {
                return Err(err);
            }
            let wait = match &err {
                ApiError::Problem {
                    retry_after: Some(after),
                    ..
                } => {
                    if *after > self.options.max_retry_after {
                        return Err(err);
                    }
                    *after
                }
                _ => self.options.backoff * 2u32.pow(attempt - 1),
            };
            tracing::debug!(%path, attempt, ?wait, error = %err, "retrying an idempotent call");
            tokio::time::sleep(wait).await;
        }
    }

    fn report<T>(
        &self,
        method: Method,
        path: &str,
        result: &Result<T, ApiError>,
        status: Option<u16>,
        request_id: Option<String>,
        duration: Duration,
    ) {
        let Some(observer) = &self.observer else {
            return;
        };
        let outcome = match result {
            Ok(_) => CallOutcome::Ok,
            Err(ApiError::Problem { status, .. }) | Err(ApiError::UnexpectedResponse { status, .. })
                if *status >= 500 =>
            {
                CallOutcome::Failed
            }
            Err(ApiError::Problem { .. }) | Err(ApiError::UnexpectedResponse { .. }) => CallOutcome::Refused,
            Err(ApiError::OutcomeUnknown { .. }) | Err(ApiError::Unavailable(_)) => CallOutcome::Unknown,
        };
        let request_id = request_id.or_else(|| match result {
            Err(ApiError::Problem { problem, .. }) if !problem.correlation_id.is_empty() => {
                Some(problem.correlation_id.clone())
            }
            _ => None,
        });
        observer.observe(CallRecord {
            method: method.as_str(),
            path: path.to_owned(),
            status,
            request_id,
            outcome,
            duration,
        });
    }

    async fn send_once(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&[u8]>,
    ) -> Result<RawResponse, ApiError> {
        let mut url = reqwest::Url::parse(&format!("{}{}", self.base_url, path))
            .map_err(|e| ApiError::Unavailable(format!("the base URL is not valid: {e}")))?;
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in query {
                pairs.append_pair(k, v);
            }
        }
        let signed = sign_request(
            &self.credentials.client_id,
            self.credentials.secret.expose_secret(),
            body.unwrap_or_default(),
            chrono::Utc::now().timestamp(),
        );
        let http_method = match method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
            Method::Put => reqwest::Method::PUT,
            Method::Delete => reqwest::Method::DELETE,
        };
        let mut request = self
            .http
            .request(http_method, url)
            .header(ACCEPT, "application/json");
        for (name, value) in signed.pairs() {
            request = request.header(name, value);
        }
        if let Some(body) = body {
            request = request
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_vec());
        }
        let lost = |reason: String| unknown_or_unavailable(method, path, reason);
        let response = request.send().await.map_err(|e| {
            if e.is_connect() {
                ApiError::Unavailable(format!("could not connect: {}", root_cause(&e)))
            } else {
                lost(describe_transport_error(&e))
            }
        })?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response
            .bytes()
            .await
            .map_err(|e| lost(describe_transport_error(&e)))?;
        Ok(RawResponse {
            status,
            headers,
            body: body.to_vec(),
        })
    }
}

fn unknown_or_unavailable(method: Method, path: &str, reason: String) -> ApiError {
    if method == Method::Get {
        ApiError::Unavailable(reason)
    } else {
        ApiError::OutcomeUnknown {
            method: method.as_str(),
            path: path.to_owned(),
            reason,
        }
    }
}

fn decode<T: DeserializeOwned>(method: Method, path: &str, raw: RawResponse) -> Result<T, ApiError> {
    if (200..300).contains(&raw.status) {
        return serde_json::from_slice(&raw.body).map_err(|e| ApiError::UnexpectedResponse {
            status: raw.status,
            reason: e.to_string(),
        });
    }
    if raw.status >= 500 && raw.body.iter().all(u8::is_ascii_whitespace) {
        return Err(unknown_or_unavailable(
            method,
            path,
            format!("the service answered {} without a body", raw.status),
        ));
    }
    let retry_after = raw
        .headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    match serde_json::from_slice::<Problem>(&raw.body) {
        Ok(mut problem) => {
            if problem.status == 0 {
                problem.status = raw.status;
            }
            Err(ApiError::Problem {
                status: raw.status,
                problem: Box::new(problem),
                retry_after,
            })
        }
        Err(_) => Err(ApiError::UnexpectedResponse {
            status: raw.status,
            reason: "the error body is not an RFC 7807 problem".to_owned(),
        }),
    }
}

/// `Retry-After` as seconds or an HTTP date.
fn parse_retry_after(value: &str) -> Option<Duration> {
    if let Ok(secs) = value.trim().parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value.trim()).ok()?;
    let secs = (at.timestamp() - chrono::Utc::now().timestamp()).max(0);
    Some(Duration::from_secs(secs as u64))
}

fn describe_transport_error(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "the request timed out".to_owned()
    } else {
        format!("the connection failed: {}", root_cause(e))
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

fn push_opt(q: &mut Vec<(&'static str, String)>, key: &'static str, value: Option<String>) {
    if let Some(v) = value {
        q.push((key, v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn credentials_never_print_the_secret() {
        let c = Credentials::new("id", "super-secret-value");
        assert!(!format!("{c:?}").contains("super-secret-value"));
    }
}
