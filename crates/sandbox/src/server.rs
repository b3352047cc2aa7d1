//! Builds the HTTP server: every operation of `paydesk_api::paths` mapped
//! to its handler, the gatekeeper around them, RFC 7807 answers for unknown
//! routes (404) and wrong methods (405), and the scheduler's ticker.

use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use actix_web::dev::{Server, ServerHandle};
use actix_web::web::{self, Data};
use actix_web::{middleware, App, HttpRequest, HttpResponse, HttpServer, Route};
use paydesk_api::paths::{Method, Operation};

use crate::areas::{
    addresses, balances, beneficiaries, bulk, cards, control, customers, deposits, identity, lightning,
    market, payouts, rates, trading, transactions, virtual_accounts, withdrawals,
};
use crate::error::ApiError;
use crate::fixture::Fixture;
use crate::gatekeeper::gatekeeper;
use crate::openapi;
use crate::snapshot;
use crate::state::{Options, Shared};

/// The handler of each operation. The match is exhaustive, so an operation
/// added to the table cannot be left without a route.
fn route(op: Operation) -> Route {
    let method = match op.method() {
        Method::Get => web::get(),
        Method::Post => web::post(),
        Method::Put => web::put(),
        Method::Delete => web::delete(),
    };
    match op {
        // The identity probe accepts any method and payload.
        Operation::Whoami => web::route().to(identity::whoami),
        Operation::ListBalances => method.to(balances::list),
        Operation::GetBalance => method.to(balances::one),
        Operation::SupportedChains => method.to(addresses::supported_chains),
        Operation::GenerateAddress => method.to(addresses::create),
        Operation::ListAddresses => method.to(addresses::list),
        Operation::GetAddress => method.to(addresses::one),
        Operation::ValidateAddress => method.to(addresses::validate),
        Operation::ListTransactions => method.to(transactions::list),
        Operation::GetTransaction => method.to(transactions::one),
        Operation::GetExchangeRate => method.to(rates::get),
        Operation::ConvertCurrency => method.to(rates::convert),
        Operation::CreateWithdrawal | Operation::CreateWalletTransfer => {
            method.to(withdrawals::create_handler)
        }
        Operation::ListWithdrawals => method.to(withdrawals::list),
        Operation::GetWithdrawal => method.to(withdrawals::get),
        Operation::CreateInvoice => method.to(lightning::create_invoice),
        Operation::ListInvoices => method.to(lightning::list),
        Operation::VerifyInvoice => method.to(lightning::verify),
        Operation::GetInvoice => method.to(lightning::get),
        Operation::DecodeInvoice => method.to(lightning::decode),
        Operation::InitiatePayment => method.to(lightning::initiate),
        Operation::SendPayment => method.to(lightning::send),
        Operation::PreviewBulkTransfer => method.to(bulk::preview),
        Operation::CreateBulkTransfer => method.to(bulk::create),
        Operation::ListBulkTransfers => method.to(bulk::list),
        Operation::CreateBulkSchedule => method.to(bulk::create_schedule),
        Operation::ListBulkSchedules => method.to(bulk::list_schedules),
        Operation::UpdateBulkSchedule => method.to(bulk::update_schedule),
        Operation::CancelBulkSchedule => method.to(bulk::cancel_schedule),
        Operation::BulkScheduleExecutions => method.to(bulk::executions),
        Operation::GetBulkTransfer => method.to(bulk::get),
        Operation::ConfirmBulkTransfer => method.to(bulk::confirm),
        Operation::RetryBulkTransfer => method.to(bulk::retry),
        Operation::CreateVirtualAccount => method.to(virtual_accounts::create_handler),
        Operation::ListVirtualAccounts => method.to(virtual_accounts::list),
        Operation::GetVirtualAccount => method.to(virtual_accounts::get),
        Operation::PayoutCountries => method.to(payouts::countries),
        Operation::PayoutCorridor => method.to(payouts::corridor),
        Operation::PayoutBanks => method.to(payouts::banks),
        Operation::PayoutAccountLookup => method.to(payouts::lookup),
        Operation::PayoutLimits => method.to(payouts::limits),
        Operation::CreatePayoutQuote => method.to(payouts::create_quote),
        Operation::GetPayoutQuote => method.to(payouts::get_quote),
        Operation::InitializePayout => method.to(payouts::initialize),
        Operation::FinalizePayout => method.to(payouts::finalize),
        Operation::GetPayout => method.to(payouts::get),
        Operation::ListPayouts => method.to(payouts::list),
        Operation::InitializePayoutByQuotePath => method.to(payouts::initialize),
        Operation::FinalizePayoutByQuotePath => method.to(payouts::finalize),
        Operation::ListPayoutsPaged => method.to(payouts::list_paged),
        Operation::FetchPayout => method.to(payouts::fetch),
        Operation::FetchPayoutByReference => method.to(payouts::get_by_reference),
        Operation::PayoutRequirements => method.to(payouts::requirements),
        Operation::TradingPrices => method.to(market::list),
        Operation::CreateTradingQuote => method.to(trading::create_quote),
        Operation::GetTradingQuote => method.to(trading::get_quote),
        Operation::CreateOrder => method.to(trading::create_order),
        Operation::ListOrders => method.to(trading::list_orders),
        Operation::GetOrder => method.to(trading::get_order),
        Operation::CancelOrder => method.to(trading::cancel_order),
        Operation::CreateScheduledOrder => method.to(trading::create_schedule),
        Operation::ListScheduledOrders => method.to(trading::list_schedules),
        Operation::GetScheduledOrder => method.to(trading::get_schedule),
        Operation::UpdateScheduledOrder => method.to(trading::update_schedule),
        Operation::CancelScheduledOrder => method.to(trading::cancel_schedule),
        Operation::ScheduledOrderExecutions => method.to(trading::executions),
        Operation::CreateTargetOrder => method.to(trading::create_target),
        Operation::ListTargetOrders => method.to(trading::list_targets),
        Operation::GetTargetOrder => method.to(trading::get_target),
        Operation::CancelTargetOrder => method.to(trading::cancel_target),
        Operation::CreateBeneficiary => method.to(beneficiaries::create_handler),
        Operation::ListBeneficiaries => method.to(beneficiaries::list),
        Operation::GetBeneficiary => method.to(beneficiaries::get),
        Operation::UpdateBeneficiary => method.to(beneficiaries::put),
        Operation::DeleteBeneficiary => method.to(beneficiaries::delete),
        Operation::CreateCustomer => method.to(customers::create_handler),
        Operation::ListCustomers => method.to(customers::list),
        Operation::BlacklistCustomer => method.to(customers::blacklist),
        Operation::GetCustomer => method.to(customers::get),
        Operation::UpdateCustomer => method.to(customers::put),
        Operation::DeleteCustomer => method.to(customers::delete),
        Operation::SubmitCardKyc => method.to(customers::submit_kyc_handler),
        Operation::GetCardKyc => method.to(customers::kyc_status),
        Operation::CustomerCards => method.to(cards::of_customer),
        Operation::CreateCard => method.to(cards::create),
        Operation::ListCards => method.to(cards::list),
        Operation::GetCard => method.to(cards::get),
        Operation::TerminateCard => method.to(cards::terminate),
        Operation::ChangeCardBalance => method.to(cards::balance),
        Operation::SetCardStatus => method.to(cards::status),
        Operation::CardSecureDetails => method.to(cards::secure),
        Operation::SetCardSpendLimits => method.to(cards::spend_limits),
        Operation::CardTransactions => method.to(cards::transactions),
        Operation::GetCardTransaction => method.to(cards::transaction),
        Operation::SandboxClock => method.to(control::clock),
        Operation::SandboxAdvanceClock => method.to(control::advance),
        Operation::SandboxSetWebhook => method.to(control::webhook),
        Operation::SandboxDeposit => method.to(deposits::simulate),
        Operation::SandboxAddFault => method.to(control::add_fault),
        Operation::SandboxClearFaults => method.to(control::clear_faults),
        Operation::SandboxSettlePayout => method.to(payouts::settle),
        Operation::SandboxSetPrice => method.to(market::set),
        Operation::SandboxCardSpend => method.to(cards::simulate_spend),
        Operation::SandboxLightningPay => method.to(lightning::pay_from_outside),
        Operation::SandboxVirtualAccountTransfer => method.to(virtual_accounts::simulate_transfer),
        Operation::SandboxReset => method.to(control::reset),
        Operation::SandboxExportSnapshot => method.to(snapshot::export),
        Operation::SandboxRestoreSnapshot => method.to(snapshot::restore),
        Operation::SandboxRequests => method.to(control::requests),
        Operation::SandboxWebhookDeliveries => method.to(control::deliveries),
        Operation::SandboxResendDelivery => method.to(control::resend),
        Operation::SandboxAddWebhookFault => method.to(control::add_webhook_fault),
        Operation::SandboxWebhookFaults => method.to(control::webhook_faults),
        Operation::SandboxClearWebhookFaults => method.to(control::clear_webhook_faults),
    }
}

async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound(format!(
        "no route {} {}",
        req.method(),
        req.path()
    )))
}

/// A 405 naming the path's methods in `Allow`.
fn method_not_allowed(allow: String) -> Route {
    web::to(move |req: HttpRequest| {
        let allow = allow.clone();
        async move {
            Err::<HttpResponse, _>(ApiError::MethodNotAllowed {
                method: req.method().to_string(),
                allow,
            })
        }
    })
}

async fn healthz() -> &'static str {
    "ok"
}

/// Registers every operation, one resource per path. Literal paths go
/// before parameterised ones, so `/api/addresses/validate` is not taken
/// for `/api/addresses/{id}`.
pub fn routes(cfg: &mut web::ServiceConfig) {
    let mut templates: Vec<&'static str> = Vec::new();
    for op in Operation::ALL {
        if !templates.contains(&op.template()) {
            templates.push(op.template());
        }
    }
    templates.sort_by_key(|t| t.matches('{').count());
    for template in templates {
        let ops: Vec<Operation> = Operation::ALL
            .iter()
            .copied()
            .filter(|op| op.template() == template)
            .collect();
        // Whoami answers any method, so it never reaches the 405.
        let allow = ops
            .iter()
            .map(|op| op.method().as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let mut resource = web::resource(template).default_service(method_not_allowed(allow));
        for op in ops {
            resource = resource.route(route(op));
        }
        cfg.service(resource);
    }
    cfg.service(web::resource("/openapi.json").route(web::get().to(openapi::serve)));
    cfg.service(web::resource("/healthz").route(web::get().to(healthz)));
}

/// Builds the server on `listener`; the caller runs it. An embedded
/// sandbox leaves signals to the program that embeds it.
pub fn build(
    shared: Data<Shared>,
    listener: TcpListener,
    workers: usize,
    handle_signals: bool,
) -> std::io::Result<Server> {
    let mut server = HttpServer::new(move || {
        App::new()
            .app_data(shared.clone())
            .wrap(middleware::from_fn(gatekeeper))
            .configure(routes)
            .default_service(web::to(not_found))
    })
    .workers(workers.max(1))
    .shutdown_timeout(2);
    if !handle_signals {
        server = server.disable_signals();
    }
    Ok(server.listen(listener)?.run())
}

/// Runs due jobs as real time passes (the clock moves on its own too).
pub async fn tick(shared: Data<Shared>) {
    let mut interval = tokio::time::interval(Duration::from_millis(500));
    loop {
        interval.tick().await;
        shared.run_due(shared.clock.now(), crate::areas::jobs::run).await;
        if let Err(e) = shared.keep(None) {
            tracing::error!(error = %e, "the state could not be kept");
        }
    }
}

/// A sandbox running in this process (tests and the portal's default mode).
pub struct RunningSandbox {
    pub addr: SocketAddr,
    pub base_url: String,
    pub shared: Data<Shared>,
    handle: ServerHandle,
    ticker: tokio::task::JoinHandle<()>,
}

impl RunningSandbox {
    /// Starts the sandbox on `127.0.0.1` at a free port.
    pub async fn start(fixture: &Fixture) -> std::io::Result<Self> {
        Self::start_on(fixture, TcpListener::bind("127.0.0.1:0")?, 1).await
    }

    pub async fn start_on(fixture: &Fixture, listener: TcpListener, workers: usize) -> std::io::Result<Self> {
        Self::start_with(fixture, listener, workers, Options::default()).await
    }

    pub async fn start_with(
        fixture: &Fixture,
        listener: TcpListener,
        workers: usize,
        options: Options,
    ) -> std::io::Result<Self> {
        let shared = Data::new(
            Shared::with_options(fixture, options).map_err(|e| std::io::Error::other(e.to_string()))?,
        );
        let addr = listener.local_addr()?;
        let server = build(shared.clone(), listener, workers, false)?;
        let handle = server.handle();
        tokio::spawn(server);
        let ticker = tokio::spawn(tick(shared.clone()));
        Ok(RunningSandbox {
            base_url: format!("http://{addr}"),
            addr,
            shared,
            handle,
            ticker,
        })
    }

    pub async fn stop(self) {
        self.ticker.abort();
        self.handle.stop(true).await;
    }
}
