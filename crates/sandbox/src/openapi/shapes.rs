//! What each operation takes and gives: its body, success status and
//! answer, and query parameters, as schemas of the wire types (the
//! handlers in `areas` name the same types).

use actix_web::http::StatusCode;
use paydesk_api::models::{
    addresses, balances, beneficiaries, bulk, cards, control, customers, identity, lightning, payouts, rates,
    trading, transactions, virtual_accounts, withdrawals,
};
use paydesk_api::paths::Operation;
use utoipa::openapi::schema::{ArrayBuilder, KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::{Ref, RefOr};
use utoipa::ToSchema;

use crate::areas::control::FaultRequest;

/// A query parameter: name, JSON type, whether required, what it does.
pub(super) type Query = (&'static str, Type, bool, &'static str);

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
pub(super) struct Shape {
    pub(super) body: Option<RefOr<Schema>>,
    pub(super) status: StatusCode,
    pub(super) answer: Answer,
    pub(super) query: Vec<Query>,
}

/// A success answer: the envelope around `data`, or (address validation,
/// payout initialize) a body of its own.
pub(super) enum Answer {
    Data(RefOr<Schema>),
    Bare(RefOr<Schema>),
}

/// Collects the component schemas the operations refer to.
#[derive(Default)]
pub(super) struct Schemas(pub(super) Vec<(String, RefOr<Schema>)>);

impl Schemas {
    /// A reference to `T`, registering `T` and every schema it uses.
    pub(super) fn of<T: ToSchema>(&mut self) -> RefOr<Schema> {
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
    pub(super) fn id_pointer(&self, data: &RefOr<Schema>) -> Option<String> {
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

pub(super) fn string_of(format: KnownFormat) -> ObjectBuilder {
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
pub(super) fn shape(op: Operation, s: &mut Schemas) -> Shape {
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
