//! `GET /openapi.json`: an OpenAPI 3.1 description of every route, built
//! from the same operation table the server registers. Bodies, answers
//! and errors are the wire types' own schemas (utoipa derives them in
//! `paydesk-api` behind its `openapi` feature), so the document follows the
//! types; `shape` says which types each operation takes and gives, and
//! each create links to the operations on the record it made.

use actix_web::http::StatusCode;
use paydesk_api::models::{
    addresses, balances, beneficiaries, bulk, cards, control, customers, identity, lightning, payouts, rates,
    trading, transactions, virtual_accounts, withdrawals,
};
use paydesk_api::paths::Operation;
use paydesk_api::wire::Problem;
use serde_json::{json, Map, Value};
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn, PathItem};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ArrayBuilder, KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    ComponentsBuilder, ContentBuilder, InfoBuilder, OpenApiBuilder, PathsBuilder, Ref, RefOr, Required,
    ResponseBuilder,
};
use utoipa::ToSchema;

use crate::areas::control::FaultRequest;
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
        Operation::CreateWalletTransfer => {
            "A withdrawal as the official client sends it (`address` or `to_address`); the same operation and references as POST /api/withdrawals"
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

/// A query parameter: name, JSON type, whether required, what it does.
type Query = (&'static str, Type, bool, &'static str);

const PAGE: [Query; 3] = [
    ("limit", Type::Integer, false, "Page size, 1 to 100 (default 20)"),
    (
        "cursor",
        Type::String,
        false,
        "The next_cursor of the previous page",
    ),
    (
        "page",
        Type::Integer,
        false,
        "1-based page of `limit` records (a cursor wins over it)",
    ),
];

/// What one operation takes and gives.
struct Shape {
    body: Option<RefOr<Schema>>,
    status: StatusCode,
    answer: Answer,
    query: Vec<Query>,
}

/// A success answer: the envelope around `data`, or (address validation,
/// payout initialize) a body of its own.
enum Answer {
    Data(RefOr<Schema>),
    Bare(RefOr<Schema>),
}

/// Collects the component schemas the operations refer to.
#[derive(Default)]
struct Schemas(Vec<(String, RefOr<Schema>)>);

impl Schemas {
    /// A reference to `T`, registering `T` and every schema it uses.
    fn of<T: ToSchema>(&mut self) -> RefOr<Schema> {
        let name = T::name().into_owned();
        if !self.0.iter().any(|(n, _)| *n == name) {
            self.0.push((name.clone(), T::schema()));
            T::schemas(&mut self.0);
        }
        Ref::from_schema_name(name).into()
    }

    /// The registered schema a reference names.
    fn named(&self, schema: &RefOr<Schema>) -> Option<&Schema> {
        let RefOr::Ref(reference) = schema else {
            return None;
        };
        let name = reference.ref_location.strip_prefix("#/components/schemas/")?;
        self.0.iter().find(|(n, _)| n == name).and_then(|(_, s)| match s {
            RefOr::T(s) => Some(s),
            RefOr::Ref(_) => None,
        })
    }

    /// Where a created record's id is in the answer: `data.id`, or
    /// `data.<record>.id` when `data` wraps the record.
    fn id_pointer(&self, data: &RefOr<Schema>) -> Option<String> {
        let Schema::Object(object) = self.named(data)? else {
            return None;
        };
        if object.properties.contains_key("id") {
            return Some("/data/id".to_owned());
        }
        object
            .properties
            .iter()
            .find_map(|(field, inner)| match self.named(inner)? {
                Schema::Object(record) if record.properties.contains_key("id") => {
                    Some(format!("/data/{field}/id"))
                }
                _ => None,
            })
    }

    fn list_of<T: ToSchema>(&mut self) -> RefOr<Schema> {
        ArrayBuilder::new().items(self.of::<T>()).into()
    }

    fn ok(&mut self, data: RefOr<Schema>) -> Shape {
        Shape {
            body: None,
            status: StatusCode::OK,
            answer: Answer::Data(data),
            query: Vec::new(),
        }
    }

    fn get<T: ToSchema>(&mut self) -> Shape {
        let data = self.of::<T>();
        self.ok(data)
    }

    fn post<B: ToSchema, T: ToSchema>(&mut self) -> Shape {
        let body = self.of::<B>();
        Shape {
            body: Some(body),
            ..self.get::<T>()
        }
    }

    /// A body in, an answer without the envelope out.
    fn bare<B: ToSchema, T: ToSchema>(&mut self) -> Shape {
        let body = self.of::<B>();
        let answer = self.of::<T>();
        Shape {
            body: Some(body),
            status: StatusCode::OK,
            answer: Answer::Bare(answer),
            query: Vec::new(),
        }
    }

    fn create<B: ToSchema, T: ToSchema>(&mut self) -> Shape {
        Shape {
            status: StatusCode::CREATED,
            ..self.post::<B, T>()
        }
    }

    fn list<T: ToSchema>(&mut self, query: &[Query]) -> Shape {
        Shape {
            query: query.to_vec(),
            ..self.get::<T>()
        }
    }

    fn paged<T: ToSchema>(&mut self, query: &[Query]) -> Shape {
        let mut all = query.to_vec();
        all.extend(PAGE);
        self.list::<T>(&all)
    }
}

fn string_of(format: KnownFormat) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(format)))
}

/// A snapshot document: only its header is checked on restore; the
/// company's state inside changes with the sandbox's version.
fn snapshot_schema() -> RefOr<Schema> {
    ObjectBuilder::new()
        .property(
            "snapshot_version",
            ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(0)),
        )
        .property("company_id", string_of(KnownFormat::Uuid))
        .property("taken_at", string_of(KnownFormat::DateTime))
        .property(
            "company",
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .description(Some("The company's whole state")),
        )
        .property(
            "pending",
            ArrayBuilder::new()
                .items(ObjectBuilder::new())
                .description(Some("Clock-driven steps still due: [due time, job]")),
        )
        .required("snapshot_version")
        .required("company_id")
        .required("taken_at")
        .required("company")
        .required("pending")
        .into()
}

/// The types each operation takes and gives; the handlers in `areas`
/// name the same types.
fn shape(op: Operation, s: &mut Schemas) -> Shape {
    use Operation::*;
    let status = ("status", Type::String, false, "Only records in this status");
    let offset = ("offset", Type::Integer, false, "Matching records to skip first");
    match op {
        Whoami => s.get::<identity::Identity>(),
        ListBalances => s.get::<balances::BalanceList>(),
        GetBalance => s.get::<balances::Balance>(),
        SupportedChains => s.get::<addresses::SupportedChains>(),
        GenerateAddress => s.create::<addresses::GenerateAddress, addresses::Address>(),
        ListAddresses => s.paged::<addresses::AddressPage>(&[
            ("chain", Type::String, false, "Only addresses on this chain"),
            status,
            (
                "addresses",
                Type::String,
                false,
                "Only these addresses (comma-separated or repeated)",
            ),
        ]),
        GetAddress => s.get::<addresses::Address>(),
        ValidateAddress => s.bare::<addresses::ValidateAddress, addresses::AddressValidation>(),
        ListTransactions => s.paged::<transactions::TransactionPage>(&[
            ("type", Type::String, false, "Only this transaction type"),
            status,
            ("currency", Type::String, false, "Only this currency"),
            ("reference", Type::String, false, "Only this reference"),
            ("address", Type::String, false, "Only this address"),
            (
                "hash",
                Type::String,
                false,
                "Only this deposit's or withdrawal's tx hash",
            ),
            (
                "channel",
                Type::String,
                false,
                "Only this metadata channel (any case)",
            ),
            ("action", Type::String, false, "credit or debit"),
            (
                "customer_reference",
                Type::String,
                false,
                "Only this metadata customer_reference",
            ),
            (
                "wallet_id",
                Type::String,
                false,
                "Only this wallet (account id or number)",
            ),
        ]),
        GetTransaction => s.get::<transactions::Transaction>(),
        GetExchangeRate => s.list::<rates::ExchangeRate>(&[
            ("from", Type::String, true, "The base currency"),
            ("to", Type::String, true, "The target currency"),
        ]),
        ConvertCurrency => s.list::<rates::Conversion>(&[
            ("from", Type::String, true, "The currency converted"),
            ("to", Type::String, true, "The currency converted into"),
            (
                "amount",
                Type::String,
                true,
                "The amount in whole units of `from`",
            ),
        ]),
        CreateWithdrawal | CreateWalletTransfer => {
            s.create::<withdrawals::NewWithdrawal, withdrawals::CreatedWithdrawal>()
        }
        ListWithdrawals => s.paged::<withdrawals::WithdrawalPage>(&[
            status,
            ("currency", Type::String, false, "Only this currency"),
        ]),
        GetWithdrawal => s.get::<withdrawals::Withdrawal>(),
        CreateInvoice => s.create::<lightning::NewInvoice, lightning::Invoice>(),
        ListInvoices => s.list::<lightning::InvoicePage>(&[
            ("page", Type::Integer, false, "Page number from 1"),
            ("page_size", Type::Integer, false, "Records per page"),
            status,
            ("direction", Type::String, false, "incoming or outgoing"),
        ]),
        VerifyInvoice => s.post::<lightning::VerifyInvoice, lightning::InvoiceVerification>(),
        GetInvoice => s.get::<lightning::Invoice>(),
        DecodeInvoice => s.post::<lightning::PaymentRequest, lightning::DecodedInvoice>(),
        InitiatePayment => s.post::<lightning::PaymentRequest, lightning::PaymentPreview>(),
        SendPayment => s.create::<lightning::SendPayment, lightning::Payment>(),
        PreviewBulkTransfer => s.post::<bulk::NewBatch, bulk::BatchPreview>(),
        CreateBulkTransfer => s.create::<bulk::NewBatch, bulk::BatchData>(),
        ListBulkTransfers => s.paged::<bulk::BatchPage>(&[status]),
        CreateBulkSchedule => s.create::<bulk::NewBulkSchedule, bulk::BulkScheduleData>(),
        ListBulkSchedules => s.get::<bulk::BulkScheduleList>(),
        UpdateBulkSchedule => s.post::<bulk::BulkScheduleUpdate, bulk::BulkScheduleData>(),
        CancelBulkSchedule => s.get::<bulk::BulkScheduleData>(),
        BulkScheduleExecutions => s.get::<bulk::BulkExecutionList>(),
        GetBulkTransfer | ConfirmBulkTransfer | RetryBulkTransfer => s.get::<bulk::BatchData>(),
        CreateVirtualAccount => {
            s.create::<virtual_accounts::NewVirtualAccount, virtual_accounts::VirtualAccount>()
        }
        ListVirtualAccounts => s.paged::<virtual_accounts::VirtualAccountPage>(&[(
            "customer_id",
            Type::String,
            false,
            "Only this customer's account",
        )]),
        GetVirtualAccount => s.get::<virtual_accounts::VirtualAccount>(),
        PayoutCountries => s.get::<payouts::CountryList>(),
        PayoutCorridor => s.get::<payouts::Corridor>(),
        PayoutRequirements => s.get::<payouts::Requirements>(),
        PayoutBanks => s.get::<payouts::BankList>(),
        PayoutAccountLookup => s.post::<payouts::AccountLookup, payouts::AccountName>(),
        PayoutLimits => {
            let data = s.list_of::<payouts::PayoutLimit>();
            s.ok(data)
        }
        CreatePayoutQuote => s.create::<payouts::QuoteRequest, payouts::QuoteData>(),
        GetPayoutQuote => s.get::<payouts::FetchedQuote>(),
        InitializePayout | InitializePayoutByQuotePath => {
            s.bare::<payouts::InitializeRequest, payouts::InitializeAnswer>()
        }
        FinalizePayout | FinalizePayoutByQuotePath => s.get::<payouts::PayoutData>(),
        GetPayout => s.get::<payouts::Payout>(),
        FetchPayout | FetchPayoutByReference => s.get::<payouts::FetchedPayout>(),
        ListPayouts => s.paged::<payouts::PayoutPage>(&[status]),
        ListPayoutsPaged => s.list::<payouts::OffRampPage>(&[
            ("page", Type::Integer, false, "Page number from 1"),
            ("take", Type::Integer, false, "Records per page, 1 to 100"),
            ("order", Type::String, false, "asc or desc (default)"),
            status,
        ]),
        TradingPrices => s.get::<trading::PriceList>(),
        CreateTradingQuote => s.create::<trading::QuoteRequest, trading::QuoteData>(),
        GetTradingQuote => s.get::<trading::QuoteData>(),
        CreateOrder => s.create::<trading::OrderRequest, trading::OrderData>(),
        ListOrders => s.paged::<trading::OrderPage>(&[status]),
        GetOrder | CancelOrder => s.get::<trading::OrderData>(),
        CreateScheduledOrder => s.create::<trading::NewSchedule, trading::ScheduleData>(),
        ListScheduledOrders => s.list::<trading::ScheduleList>(&[status]),
        GetScheduledOrder | CancelScheduledOrder => s.get::<trading::ScheduleData>(),
        UpdateScheduledOrder => s.post::<trading::ScheduleUpdate, trading::ScheduleData>(),
        ScheduledOrderExecutions => s.get::<trading::ExecutionList>(),
        CreateTargetOrder => s.create::<trading::NewTargetOrder, trading::TargetOrderData>(),
        ListTargetOrders => s.list::<trading::TargetOrderList>(&[status]),
        GetTargetOrder | CancelTargetOrder => s.get::<trading::TargetOrderData>(),
        CreateBeneficiary => s.create::<beneficiaries::NewBeneficiary, beneficiaries::Beneficiary>(),
        ListBeneficiaries => s.list::<beneficiaries::BeneficiaryPage>(&[
            ("limit", Type::Integer, false, "Page size, 1 to 100 (default 20)"),
            ("offset", Type::Integer, false, "Records skipped"),
        ]),
        GetBeneficiary => s.get::<beneficiaries::Beneficiary>(),
        DeleteBeneficiary => s.get::<beneficiaries::DeletedBeneficiary>(),
        UpdateBeneficiary => s.post::<beneficiaries::BeneficiaryUpdate, beneficiaries::Beneficiary>(),
        CreateCustomer => s.create::<customers::NewCustomer, customers::Customer>(),
        ListCustomers => s.paged::<customers::CustomerPage>(&[
            ("id", Type::String, false, "Only this customer"),
            ("reference", Type::String, false, "Only this reference"),
            ("email", Type::String, false, "Only this email"),
            ("customer_type", Type::String, false, "individual or business"),
            (
                "is_active",
                Type::Boolean,
                false,
                "Only active or inactive customers",
            ),
            (
                "is_blacklisted",
                Type::Boolean,
                false,
                "Only blacklisted or other customers",
            ),
        ]),
        BlacklistCustomer => s.post::<customers::Blacklist, customers::Customer>(),
        GetCustomer | DeleteCustomer => s.get::<customers::Customer>(),
        UpdateCustomer => s.post::<customers::CustomerUpdate, customers::Customer>(),
        SubmitCardKyc => s.create::<customers::KycDetails, customers::CardKyc>(),
        GetCardKyc => s.get::<customers::CardKyc>(),
        CustomerCards => s.paged::<cards::CardPage>(&[offset]),
        CreateCard => s.create::<cards::NewCard, cards::CardData>(),
        ListCards => s.paged::<cards::CardPage>(&[
            ("card_type", Type::String, false, "virtual, physical or lite"),
            status,
            ("search", Type::String, false, "Last four digits or name"),
            ("customer_id", Type::String, false, "Only this customer's cards"),
            offset,
        ]),
        GetCard => s.get::<cards::CardData>(),
        SetCardSpendLimits => s.post::<cards::CardLimits, cards::CardData>(),
        TerminateCard => s.post::<cards::Terminate, cards::Termination>(),
        ChangeCardBalance => s.post::<cards::BalanceChange, cards::BalanceAnswer>(),
        SetCardStatus => s.post::<cards::StatusChange, cards::CardStatusData>(),
        CardSecureDetails => s.get::<cards::SecureData>(),
        CardTransactions => s.paged::<cards::CardTransactionPage>(&[offset]),
        GetCardTransaction => s.get::<cards::CardTransactionData>(),
        SandboxClock => s.get::<control::ClockNow>(),
        SandboxAdvanceClock => s.post::<control::AdvanceClock, control::ClockNow>(),
        SandboxSetWebhook => s.post::<control::SetWebhook, control::WebhookSetting>(),
        SandboxDeposit => s.create::<control::SimulateDeposit, transactions::Transaction>(),
        SandboxAddFault => s.create::<FaultRequest, control::FaultList>(),
        SandboxClearFaults => s.get::<control::FaultList>(),
        SandboxSettlePayout => s.post::<payouts::SettlePayout, payouts::Payout>(),
        SandboxSetPrice => s.post::<trading::SetPrice, trading::Price>(),
        SandboxCardSpend => s.post::<cards::SimulateSpend, cards::SpendOutcome>(),
        SandboxLightningPay => s.post::<lightning::PaymentRequest, lightning::Invoice>(),
        SandboxVirtualAccountTransfer => {
            s.create::<virtual_accounts::SimulateBankTransfer, transactions::Transaction>()
        }
        SandboxReset => s.get::<control::ResetDone>(),
        SandboxExportSnapshot => s.ok(snapshot_schema()),
        SandboxRestoreSnapshot => Shape {
            body: Some(snapshot_schema()),
            ..s.get::<control::ResetDone>()
        },
        SandboxRequests => {
            s.list::<control::RequestJournal>(&[("limit", Type::Integer, false, "How many, newest first")])
        }
        SandboxWebhookDeliveries => {
            s.list::<control::DeliveryList>(&[("limit", Type::Integer, false, "How many, newest first")])
        }
        SandboxResendDelivery => s.get::<control::WebhookDelivery>(),
        SandboxAddWebhookFault => s.create::<control::AddWebhookFault, control::WebhookFaultList>(),
        SandboxWebhookFaults | SandboxClearWebhookFaults => s.get::<control::WebhookFaultList>(),
    }
}

/// `{success, message, data, timestamp, metadata.request_id}` around `data`.
fn envelope(data: RefOr<Schema>) -> RefOr<Schema> {
    let string = || ObjectBuilder::new().schema_type(Type::String);
    ObjectBuilder::new()
        .property("success", ObjectBuilder::new().schema_type(Type::Boolean))
        .property("message", string())
        .property("data", data)
        .property("timestamp", string_of(KnownFormat::DateTime))
        .property("metadata", ObjectBuilder::new().property("request_id", string()))
        .required("success")
        .required("message")
        .required("data")
        .required("timestamp")
        .into()
}

/// Error statuses any signed operation can answer, as RFC 7807 problems.
const ERRORS: [(&str, &str); 11] = [
    (
        "400",
        "Validation error (code VALIDATION_ERROR, errors[] beside the fields)",
    ),
    (
        "401",
        "Authentication failed: a missing or bad signature, timestamp or nonce",
    ),
    ("403", "The client's scoped permissions do not allow this"),
    ("404", "Unknown id or another company's resource"),
    (
        "405",
        "The path does not accept this method (Allow lists those it does)",
    ),
    (
        "409",
        "Reference reused with a different body (IDEMPOTENCY_CONFLICT)",
    ),
    ("413", "The body is larger than 1 MiB"),
    ("415", "A body that is not JSON"),
    (
        "422",
        "Well-formed but not allowed now (a named code such as INSUFFICIENT_BALANCE)",
    ),
    ("429", "Rate limited; see Retry-After"),
    ("503", "Temporarily unavailable (injected faults only)"),
];

fn path_parameter(name: &str) -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
        .build()
}

fn query_parameter((name, kind, required, description): Query) -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(if required { Required::True } else { Required::False })
        .description(Some(description))
        .schema(Some(ObjectBuilder::new().schema_type(kind)))
        .build()
}

/// Links from a create to the operations on the record it made (the paths
/// under its own, the id next), so the fuzzer's stateful phase reaches
/// records that exist instead of meeting 404s. Written as JSON: utoipa 5's
/// `Link` serializes `operation_id` where OpenAPI says `operationId`.
fn links(op: Operation, id_pointer: &str) -> Value {
    let prefix = format!("{}/{{", op.template());
    let links: Map<String, Value> = Operation::ALL
        .iter()
        .filter_map(|target| {
            let param = target.template().strip_prefix(&prefix)?.split('}').next()?;
            let link = json!({
                "operationId": format!("{target:?}"),
                "parameters": {param: format!("$response.body#{id_pointer}")},
            });
            Some((format!("{target:?}"), link))
        })
        .collect();
    Value::Object(links)
}

fn operation(
    op: Operation,
    schemas: &mut Schemas,
    problem: &RefOr<Schema>,
) -> (utoipa::openapi::path::Operation, Option<String>) {
    let shape = shape(op, schemas);
    let mut builder = OperationBuilder::new()
        .operation_id(Some(format!("{op:?}")))
        .summary(Some(summary(op)))
        .tag(tag(op));
    for name in op
        .template()
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
    {
        builder = builder.parameter(path_parameter(name));
    }
    for query in shape.query {
        builder = builder.parameter(query_parameter(query));
    }
    if let Some(body) = shape.body {
        builder = builder.request_body(Some(
            RequestBodyBuilder::new()
                .content(
                    "application/json",
                    ContentBuilder::new().schema(Some(body)).build(),
                )
                .required(Some(Required::True))
                .build(),
        ));
    }
    let created_id = match &shape.answer {
        Answer::Data(data) if shape.status == StatusCode::CREATED => schemas.id_pointer(data),
        _ => None,
    };
    let answer = match shape.answer {
        Answer::Data(data) => envelope(data),
        Answer::Bare(body) => body,
    };
    builder = builder.response(
        shape.status.as_str(),
        ResponseBuilder::new()
            .description(shape.status.canonical_reason().unwrap_or("Success"))
            .content(
                "application/json",
                ContentBuilder::new().schema(Some(answer)).build(),
            ),
    );
    for (status, meaning) in ERRORS {
        builder = builder.response(
            status,
            ResponseBuilder::new().description(meaning).content(
                "application/problem+json",
                ContentBuilder::new().schema(Some(problem.clone())).build(),
            ),
        );
    }
    (builder.build(), created_id)
}

/// A route served without a signature (the gatekeeper's public paths).
fn unsigned(summary: &str, content_type: &str, answer: ObjectBuilder) -> utoipa::openapi::path::Operation {
    OperationBuilder::new()
        .summary(Some(summary))
        .tag("Service")
        .security(SecurityRequirement::default())
        .response(
            "200",
            ResponseBuilder::new()
                .description("OK")
                .content(content_type, ContentBuilder::new().schema(Some(answer)).build()),
        )
        .build()
}

fn http_method(op: Operation) -> HttpMethod {
    use paydesk_api::paths::Method;
    match op.method() {
        Method::Get => HttpMethod::Get,
        Method::Post => HttpMethod::Post,
        Method::Put => HttpMethod::Put,
        Method::Delete => HttpMethod::Delete,
    }
}

/// The signing headers, each an API key; every operation needs all four.
const SIGNING: [(&str, &str); 4] = [
    ("client", "X-Auth-Client"),
    ("timestamp", "X-Auth-Timestamp"),
    ("nonce", "X-Auth-Nonce"),
    ("signature", "X-Auth-Signature"),
];

/// The whole document.
pub fn document() -> Value {
    let mut schemas = Schemas::default();
    let problem = schemas.of::<Problem>();
    let mut paths = PathsBuilder::new();
    let mut creates = Vec::new();
    for op in Operation::ALL {
        let (operation, created_id) = operation(*op, &mut schemas, &problem);
        paths = paths.path(op.template(), PathItem::new(http_method(*op), operation));
        creates.extend(created_id.map(|pointer| (*op, pointer)));
    }
    paths = paths.path(
        "/openapi.json",
        PathItem::new(
            HttpMethod::Get,
            unsigned(
                "This document (no signature needed)",
                "application/json",
                ObjectBuilder::new().schema_type(Type::Object),
            ),
        ),
    );
    paths = paths.path(
        "/healthz",
        PathItem::new(
            HttpMethod::Get,
            unsigned(
                "Liveness: answers `ok` (no signature needed)",
                "text/plain",
                ObjectBuilder::new().schema_type(Type::String),
            ),
        ),
    );
    let mut components = ComponentsBuilder::new();
    for (name, key) in SIGNING {
        components = components.security_scheme(
            name,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new(key))),
        );
    }
    let mut requirement = SecurityRequirement::default();
    for (name, _) in SIGNING {
        requirement = requirement.add(name, Vec::<String>::new());
    }
    let components = schemas
        .0
        .into_iter()
        .fold(components, |c, (name, schema)| c.schema(name, schema));
    let document = OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("Payments, Trading and Cards Service API v2 — Paydesk sandbox")
                .version("2.0.0")
                .description(Some(DESCRIPTION)),
        )
        .paths(paths)
        .components(Some(components.build()))
        .security(Some(vec![requirement]))
        .build();
    let mut document = serde_json::to_value(document).expect("the document serializes");
    for (op, pointer) in creates {
        let method = op.method().as_str().to_ascii_lowercase();
        document["paths"][op.template()][method]["responses"]["201"]["links"] = links(op, &pointer);
    }
    document
}

const DESCRIPTION: &str = "A stateful sandbox of the service. Every request is signed: X-Auth-Client, X-Auth-Timestamp (Unix seconds), X-Auth-Nonce (16-128 chars of [A-Za-z0-9_-], never reused), X-Auth-Signature = lowercase hex HMAC-SHA256(secret, \"client_id:timestamp:nonce:body\"); 300 s skew allowed. Errors are RFC 7807 problems (application/problem+json) with the service's code. Sandbox time = wall clock + an offset moved by POST /sandbox/clock/advance; asynchronous steps fall due 10-300 s of sandbox time after their trigger. Webhooks: x-service-signature = hex HMAC-SHA512 of the raw body; non-200 answers are retried 3 times (15 s, 45 s, 135 s). Faults: POST /sandbox/faults. See the sandbox README for test values.";

pub async fn serve() -> JsonAnswer {
    json(StatusCode::OK, &document())
}
