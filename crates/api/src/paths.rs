//! Every operation's method, path, group and one-line summary, in one
//! table. The spec shows some paths; `open-paths.md` fixes the rest.
//! `crates/api/PATHS.md` lists the paths for readers (a test keeps the two
//! in step). The sandbox registers its routes from these templates and
//! describes them in its OpenAPI document with the groups and summaries,
//! so client and service share one source.

/// HTTP methods the API uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

macro_rules! operations {
    ($($op:ident => $method:ident $path:literal, $source:literal, $tag:literal, $summary:literal;)*) => {
        /// One API operation.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Operation { $($op,)* }

        impl Operation {
            pub const ALL: &'static [Operation] = &[$(Operation::$op,)*];

            pub fn method(self) -> Method {
                match self { $(Operation::$op => Method::$method,)* }
            }

            /// The path template, parameters written `{name}`.
            pub fn template(self) -> &'static str {
                match self { $(Operation::$op => $path,)* }
            }

            /// Where the path comes from: `spec`, `public` or `ours`.
            pub fn source(self) -> &'static str {
                match self { $(Operation::$op => $source,)* }
            }

            /// The group the operation is listed under in the sandbox's
            /// OpenAPI document.
            pub fn tag(self) -> &'static str {
                match self { $(Operation::$op => $tag,)* }
            }

            /// One line on what the operation does.
            pub fn summary(self) -> &'static str {
                match self { $(Operation::$op => $summary,)* }
            }
        }
    };
}

operations! {
    Whoami => Get "/api/whoami", "spec", "Identity",
        "Confirms the presented credentials work (any method)";
    ListBalances => Get "/api/balances", "spec", "Balances",
        "Every wallet of the company, balances in base units";
    GetBalance => Get "/api/balances/{currency}", "spec", "Balances",
        "One currency's balance; 404 when the company holds no wallet for it";
    SupportedChains => Get "/api/stablecoins/supported-chains", "spec", "Addresses",
        "Chains and their tokens supported in this environment";
    GenerateAddress => Post "/api/addresses", "spec", "Addresses",
        "Generates a deposit address (idempotent by reference)";
    ListAddresses => Get "/api/addresses", "spec", "Addresses",
        "Deposit addresses, filtered, cursor-paginated";
    GetAddress => Get "/api/addresses/{id}", "spec", "Addresses",
        "One address by UUID; a non-UUID id is a 400 'invalid id'";
    ValidateAddress => Post "/api/addresses/validate", "public", "Addresses",
        "Checks an address's format and checksum for a chain; stores nothing";
    ListTransactions => Get "/api/transactions", "spec", "Transactions",
        "Ledger history, filtered, cursor-paginated, newest first";
    GetTransaction => Get "/api/transactions/{idOrReference}", "public", "Transactions",
        "One transaction by its UUID or its reference";
    GetExchangeRate => Get "/api/exchange-rates", "public", "Exchange rates",
        "Buy, sell, mid and inverse rate of a pair (from, to), valid 30 s, with the 24-hour change";
    ConvertCurrency => Get "/api/exchange-rates/convert", "public", "Exchange rates",
        "Converts an amount (whole units) of `from` into `to` at the mid rate";
    CreateWithdrawal => Post "/api/withdrawals", "public", "Withdrawals",
        "Sends crypto on chain (amount in base units, checksum-checked address, fixed fee); settles 70 s later";
    CreateWalletTransfer => Post "/api/wallets/transfers", "public", "Identity",
        "A withdrawal as the official client sends it (`address` or `to_address`); the same operation and references as POST /api/withdrawals";
    ListWithdrawals => Get "/api/withdrawals", "ours", "Withdrawals",
        "Withdrawals, newest first, by status and currency, cursor pages";
    GetWithdrawal => Get "/api/withdrawals/{id}", "ours", "Withdrawals",
        "One withdrawal";
    CreateInvoice => Post "/api/lightning/invoices", "public", "Lightning",
        "Issues a signet BOLT11 invoice (1 to 20,000,000 sats, default expiry 86,400 s); idempotent by reference";
    ListInvoices => Get "/api/lightning/invoices", "public", "Lightning",
        "Invoices and payments by page, page_size, status and direction";
    VerifyInvoice => Post "/api/lightning/invoices/verify", "public", "Lightning",
        "Whether an invoice of ours (by payment_hash) is paid, with its preimage";
    GetInvoice => Get "/api/lightning/invoices/{id}", "spec", "Lightning",
        "One invoice or payment (expires_at in Unix seconds)";
    DecodeInvoice => Post "/api/lightning/decode", "public", "Lightning",
        "Decodes any network's BOLT11 invoice";
    InitiatePayment => Post "/api/lightning/payments/initiate", "public", "Lightning",
        "Previews a payment: fee (1 sat + 0.1%) and route_found (true only for other companies of this sandbox)";
    SendPayment => Post "/api/lightning/payments/send", "public", "Lightning",
        "Pays an invoice (max_fee caps the fee); settles at once inside the sandbox, else fails with nothing debited";
    PreviewBulkTransfer => Post "/api/bulk-transfers/previews", "public", "Bulk transfers",
        "Checks a batch (items or csv) item by item and totals it with fees; stores nothing";
    CreateBulkTransfer => Post "/api/bulk-transfers", "public", "Bulk transfers",
        "Drafts a batch, invalid items listed with their errors; idempotent by reference";
    ListBulkTransfers => Get "/api/bulk-transfers", "public", "Bulk transfers",
        "Batches, newest first, by status";
    CreateBulkSchedule => Post "/api/bulk-transfers/schedules", "public", "Bulk transfers",
        "A batch of valid items sent on a daily, weekly or monthly tick";
    ListBulkSchedules => Get "/api/bulk-transfers/schedules", "public", "Bulk transfers",
        "Bulk-transfer schedules";
    UpdateBulkSchedule => Put "/api/bulk-transfers/schedules/{id}", "public", "Bulk transfers",
        "Changes a schedule's items, timing, name or status (paused/active)";
    CancelBulkSchedule => Delete "/api/bulk-transfers/schedules/{id}", "public", "Bulk transfers",
        "Cancels a bulk-transfer schedule";
    BulkScheduleExecutions => Get "/api/bulk-transfers/schedules/{id}/executions", "public", "Bulk transfers",
        "A schedule's ticks, newest first, with their batches";
    GetBulkTransfer => Get "/api/bulk-transfers/{batchId}", "public", "Bulk transfers",
        "One batch with each item's current status";
    ConfirmBulkTransfer => Post "/api/bulk-transfers/{batchId}/confirm", "public", "Bulk transfers",
        "Sends every valid item as a withdrawal (invalid ones are skipped); 422 if the wallet can't pay them all";
    RetryBulkTransfer => Post "/api/bulk-transfers/{batchId}/retry", "public", "Bulk transfers",
        "Sends the failed items again, and only those";
    CreateVirtualAccount => Post "/api/virtual-accounts", "ours", "Virtual accounts",
        "Issues an NGN account number for a customer (one each)";
    ListVirtualAccounts => Get "/api/virtual-accounts", "ours", "Virtual accounts",
        "Virtual accounts, by customer_id";
    GetVirtualAccount => Get "/api/virtual-accounts/{id}", "ours", "Virtual accounts",
        "One virtual account with what it has received";
    PayoutCountries => Get "/api/payouts/supported-countries", "spec", "Payouts",
        "Countries usable in payout quotes";
    PayoutCorridor => Get "/api/payouts/supported-countries/{country}", "spec", "Payouts",
        "A corridor's details: currency, destinations, payment reasons, limits";
    PayoutBanks => Get "/api/payouts/banks/{countryCode}", "spec", "Payouts",
        "Provider codes (bank_code) of a country's banks and mobile-money services";
    PayoutAccountLookup => Post "/api/payouts/beneficiary-lookup", "public", "Payouts",
        "The holder's name of a bank account; account 0000000000 is never found";
    PayoutLimits => Get "/api/payouts/limits", "public", "Payouts",
        "Each corridor's settlement limits and rate per USDT";
    CreatePayoutQuote => Post "/api/payouts/quotes", "public", "Payouts",
        "Prices a payout (amount or settlement_amount); valid 15 minutes; idempotent by reference";
    GetPayoutQuote => Get "/api/payouts/quotes/{quoteId}", "public", "Payouts",
        "A payout quote by its quote id";
    InitializePayout => Post "/api/payouts/{quoteId}/initialize", "public", "Payouts",
        "Attaches beneficiary and payment reason to an unexpired quote; emits payouts.initialized";
    FinalizePayout => Post "/api/payouts/{quoteId}/finalize", "spec", "Payouts",
        "Commits the payout before expires_at: offchain debits the wallet; the rail settles it later";
    GetPayout => Get "/api/payouts/{id}", "spec", "Payouts",
        "A payout by its id (or quote id)";
    ListPayouts => Get "/api/payouts", "public", "Payouts",
        "Payouts, newest first, filtered by status";
    InitializePayoutByQuotePath => Post "/api/payouts/quotes/{quoteId}/initialize", "public", "Payouts",
        "Initialize as the official client sends it; quote_id may come from the path alone";
    FinalizePayoutByQuotePath => Post "/api/payouts/quotes/{quoteId}/finalize", "public", "Payouts",
        "Finalize as the official client sends it";
    ListPayoutsPaged => Get "/api/payouts/", "public", "Payouts",
        "Payouts by page and take, order asc or desc (the official client's list)";
    FetchPayout => Get "/api/payouts/fetch/{id}", "public", "Payouts",
        "A payout by its id or quote id (the official client's path)";
    FetchPayoutByReference => Get "/api/payouts/fetch/reference/{reference}", "public", "Payouts",
        "The newest payout with a reference";
    PayoutRequirements => Get "/api/payouts/supported-countries/{country}/requirements", "public", "Payouts",
        "A corridor's requirements: destinations, payment reasons, limits";
    TradingPrices => Get "/api/trading/prices", "public", "Trading",
        "The latest market price of every pair";
    CreateTradingQuote => Post "/api/trading/quotes", "spec", "Trading",
        "Quotes a trade at the market price ± 0.5%, valid 30 s (NGN pairs: 500 to 10,000,000 naira)";
    GetTradingQuote => Get "/api/trading/quotes/{id}", "public", "Trading",
        "A quote with its consumption, expiry and the number of orders on it";
    CreateOrder => Post "/api/trading/orders", "spec", "Trading",
        "Places an order on a quote; fills at once at the quoted price (QUOTE_EXPIRED, QUOTE_EXHAUSTED)";
    ListOrders => Get "/api/trading/orders", "spec", "Trading",
        "Orders, newest first, by status";
    GetOrder => Get "/api/trading/orders/{id}", "spec", "Trading",
        "One order with its fills and quote consumption";
    CancelOrder => Delete "/api/trading/orders/{id}", "public", "Trading",
        "Cancels an order still open (orders fill at once here, so a 422)";
    CreateScheduledOrder => Post "/api/trading/scheduled-orders", "spec", "Trading",
        "A recurring buy (daily, weekly, monthly at HH:MM UTC) that ticks on the sandbox clock";
    ListScheduledOrders => Get "/api/trading/scheduled-orders", "spec", "Trading",
        "Scheduled orders by status, with their execution totals";
    GetScheduledOrder => Get "/api/trading/scheduled-orders/{id}", "spec", "Trading",
        "One scheduled order";
    UpdateScheduledOrder => Put "/api/trading/scheduled-orders/{id}", "spec", "Trading",
        "Changes amount, timing or status (paused/active); next_execution_at moves only if the timing changes";
    CancelScheduledOrder => Delete "/api/trading/scheduled-orders/{id}", "public", "Trading",
        "Cancels a schedule; next_execution_at becomes null";
    ScheduledOrderExecutions => Get "/api/trading/scheduled-orders/{id}/executions", "spec", "Trading",
        "A schedule's executions, newest first (completed, failed, skipped)";
    CreateTargetOrder => Post "/api/trading/target-orders", "spec", "Trading",
        "Locks escrow and waits for the market to cross target_price; fills 10 s after triggering";
    ListTargetOrders => Get "/api/trading/target-orders", "spec", "Trading",
        "Target orders by status";
    GetTargetOrder => Get "/api/trading/target-orders/{id}", "spec", "Trading",
        "One target order";
    CancelTargetOrder => Delete "/api/trading/target-orders/{id}", "public", "Trading",
        "Cancels an active target order and releases its escrow";
    CreateBeneficiary => Post "/api/beneficiaries", "public", "Beneficiaries",
        "Saves a bank, mobile-money or crypto recipient";
    ListBeneficiaries => Get "/api/beneficiaries", "public", "Beneficiaries",
        "Saved recipients, by limit and offset";
    GetBeneficiary => Get "/api/beneficiaries/{id}", "public", "Beneficiaries",
        "One saved recipient";
    UpdateBeneficiary => Put "/api/beneficiaries/{id}", "public", "Beneficiaries",
        "Changes a recipient's name, destination or is_active";
    DeleteBeneficiary => Delete "/api/beneficiaries/{id}", "public", "Beneficiaries",
        "Deletes a recipient for good";
    CreateCustomer => Post "/api/customers", "spec", "Customers",
        "Creates a customer; email must be valid and unique; idempotent by reference";
    ListCustomers => Get "/api/customers", "spec", "Customers",
        "Customers filtered by id, reference, email, customer_type, is_active; cursor pages";
    BlacklistCustomer => Post "/api/customers/blacklist/{customerId}", "public", "Customers",
        "{blacklist: true} makes the customer inactive; false restores them";
    GetCustomer => Get "/api/customers/{customerId}", "spec", "Customers",
        "One customer, directly at data";
    UpdateCustomer => Put "/api/customers/{customerId}", "public", "Customers",
        "Changes first_name, last_name or is_active; omitted fields keep their value";
    DeleteCustomer => Delete "/api/customers/{customerId}", "public", "Customers",
        "Deletes a customer for good; refused (422) while they hold a live card";
    SubmitCardKyc => Post "/api/customers/{customerId}/card-kyc", "ours", "Cards",
        "Submits card KYC; reviewed 60 s later: id_number ending 0000 is rejected, any other approved";
    GetCardKyc => Get "/api/customers/{customerId}/card-kyc", "ours", "Cards",
        "The customer's card KYC status: pending, approved or rejected";
    CustomerCards => Get "/api/customers/{customerId}/cards", "public", "Cards",
        "Cards of one customer, cursor pages with page_info";
    CreateCard => Post "/api/cards", "public", "Cards",
        "Issues a virtual card, or a lite card (card_type lite); pending until provisioned 30 s later";
    ListCards => Get "/api/cards", "spec", "Cards",
        "Cards filtered by card_type, status, search (last four or name); page_info";
    GetCard => Get "/api/cards/{cardId}", "spec", "Cards",
        "One card, without PAN or CVV";
    TerminateCard => Delete "/api/cards/{cardId}", "spec", "Cards",
        "Terminates a card at least 24 h old ({reason}); its balance returns to the USDT wallet";
    ChangeCardBalance => Post "/api/cards/{cardId}/balance", "spec", "Cards",
        "Funds or withdraws (type fund|withdraw, micro-units); pending, settles 20 s later; 1 fund/30 s, 1 withdraw/60 s";
    SetCardStatus => Post "/api/cards/{cardId}/status", "spec", "Cards",
        "Freezes (frozen) or unfreezes (active) a card";
    CardSecureDetails => Get "/api/cards/{cardId}/secure", "spec", "Cards",
        "Full card number, CVV and expiry; 2 reads per 60 s per card";
    SetCardSpendLimits => Put "/api/cards/{cardId}/spend-limits", "spec", "Cards",
        "Replaces the card's spend limits (micro-units; a key left out is no limit)";
    CardTransactions => Get "/api/cards/{cardId}/transactions", "spec", "Cards",
        "The card's funding, withdrawal and spend transactions; page_info";
    GetCardTransaction => Get "/api/cards/{cardId}/transactions/{transactionId}", "public", "Cards",
        "One card transaction";
    SandboxClock => Get "/sandbox/clock", "ours", "Sandbox control",
        "Sandbox: the sandbox clock";
    SandboxAdvanceClock => Post "/sandbox/clock/advance", "ours", "Sandbox control",
        "Sandbox: advances the clock and runs every transition that falls due";
    SandboxSetWebhook => Put "/sandbox/webhook", "ours", "Sandbox control",
        "Sandbox: sets the company's webhook URL (HTTPS, or HTTP to loopback) and secret";
    SandboxDeposit => Post "/sandbox/deposits", "ours", "Sandbox control",
        "Sandbox: an on-chain deposit arrives (detected now, confirmed 60 s later)";
    SandboxAddFault => Post "/sandbox/faults", "ours", "Sandbox control",
        "Sandbox: the next `count` matching calls fail (500_no_body, 503, 429, timeout, delay_ms:N); with `probability` and `seed`, matching calls fail by a seeded chance";
    SandboxClearFaults => Delete "/sandbox/faults", "ours", "Sandbox control",
        "Sandbox: clears injected faults";
    SandboxSettlePayout => Post "/sandbox/payouts/{id}/settle", "ours", "Sandbox control",
        "Sandbox: the rail settles a finalized payout now (outcome completed or failed)";
    SandboxSetPrice => Put "/sandbox/prices", "ours", "Sandbox control",
        "Sandbox: sets a market price {base, quote, price, liquidity?} (the one market of this sandbox; liquidity in base units per 10 s, unlimited when left out)";
    SandboxCardSpend => Post "/sandbox/cards/{id}/spend", "ours", "Sandbox control",
        "Sandbox: a merchant authorization {amount, merchant}; declined (nothing moves) when frozen, over balance or a limit, or out of swipes";
    SandboxLightningPay => Post "/sandbox/lightning/pay", "ours", "Sandbox control",
        "Sandbox: someone outside pays an invoice of the caller's company";
    SandboxVirtualAccountTransfer => Post "/sandbox/virtual-accounts/{id}/transfers", "ours", "Sandbox control",
        "Sandbox: a bank transfer {amount (kobo), sender_name?} into a virtual account credits NGN";
    SandboxReset => Post "/sandbox/reset", "ours", "Sandbox control",
        "Sandbox: puts the caller's company back to its fixture state";
    SandboxExportSnapshot => Get "/sandbox/snapshot", "ours", "Sandbox control",
        "Sandbox: the company's whole state as a versioned JSON document";
    SandboxRestoreSnapshot => Put "/sandbox/snapshot", "ours", "Sandbox control",
        "Sandbox: restores a snapshot of this company; another version or company is a 400";
    SandboxRequests => Get "/sandbox/requests", "ours", "Sandbox control",
        "Sandbox: the company's latest calls (method, path, status, time, request id, bodies with secrets masked), newest first";
    SandboxWebhookDeliveries => Get "/sandbox/webhooks/deliveries", "ours", "Sandbox control",
        "Sandbox: webhook deliveries (event, URL, status, attempts with status code and time), newest first";
    SandboxResendDelivery => Post "/sandbox/webhooks/deliveries/{id}/resend", "ours", "Sandbox control",
        "Sandbox: sends a delivery once more now and shows the attempt";
    SandboxAddWebhookFault => Post "/sandbox/webhooks/faults", "ours", "Sandbox control",
        "Sandbox: the next `count` matching webhook deliveries are dropped, duplicated, delayed (delay_s:N) or sent out of order; with `probability` and `seed`, by a seeded chance";
    SandboxWebhookFaults => Get "/sandbox/webhooks/faults", "ours", "Sandbox control",
        "Sandbox: the company's webhook delivery faults still armed";
    SandboxClearWebhookFaults => Delete "/sandbox/webhooks/faults", "ours", "Sandbox control",
        "Sandbox: clears the company's webhook delivery faults";
}

impl Operation {
    /// Fills the template's parameters in order, percent-encoding each.
    pub fn path(self, params: &[&str]) -> String {
        let mut out = String::new();
        let mut rest = self.template();
        let mut params = params.iter();
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let end = rest[start..]
                .find('}')
                .map(|e| start + e + 1)
                .unwrap_or(rest.len());
            let value = params.next().copied().unwrap_or_default();
            out.push_str(&encode_segment(value));
            rest = &rest[end..];
        }
        out.push_str(rest);
        out
    }
}

fn encode_segment(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_and_encodes_parameters() {
        assert_eq!(Operation::GetBalance.path(&["USDT"]), "/api/balances/USDT");
        assert_eq!(
            Operation::GetTransaction.path(&["ref/1 2"]),
            "/api/transactions/ref%2F1%202"
        );
        assert_eq!(Operation::Whoami.path(&[]), "/api/whoami");
    }

    #[test]
    fn paths_md_lists_every_operation() {
        let doc = include_str!("../PATHS.md");
        for op in Operation::ALL {
            let row = format!(
                "| {:?} | {} {} | {} |",
                op,
                op.method().as_str(),
                op.template(),
                op.source()
            );
            assert!(doc.contains(&row), "PATHS.md lacks the row: {row}");
        }
    }
}
