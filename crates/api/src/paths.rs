//! Every operation's method and path, in one table. The spec shows some
//! paths; `open-paths.md` fixes the rest. `crates/api/PATHS.md` lists the
//! same table for readers (a test keeps the two in step). The sandbox
//! registers its routes from these templates, so client and service share
//! one source.

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
    ($($op:ident => $method:ident $path:literal, $source:literal;)*) => {
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
        }
    };
}

operations! {
    Whoami => Get "/api/whoami", "spec";
    ListBalances => Get "/api/balances", "spec";
    GetBalance => Get "/api/balances/{currency}", "spec";
    SupportedChains => Get "/api/stablecoins/supported-chains", "spec";
    GenerateAddress => Post "/api/addresses", "spec";
    ListAddresses => Get "/api/addresses", "spec";
    GetAddress => Get "/api/addresses/{id}", "spec";
    ValidateAddress => Post "/api/addresses/validate", "public";
    ListTransactions => Get "/api/transactions", "spec";
    GetTransaction => Get "/api/transactions/{idOrReference}", "public";
    GetExchangeRate => Get "/api/exchange-rates", "public";
    ConvertCurrency => Get "/api/exchange-rates/convert", "public";
    CreateWithdrawal => Post "/api/withdrawals", "public";
    CreateWalletTransfer => Post "/api/wallets/transfers", "public";
    ListWithdrawals => Get "/api/withdrawals", "ours";
    GetWithdrawal => Get "/api/withdrawals/{id}", "ours";
    CreateInvoice => Post "/api/lightning/invoices", "public";
    ListInvoices => Get "/api/lightning/invoices", "public";
    VerifyInvoice => Post "/api/lightning/invoices/verify", "public";
    GetInvoice => Get "/api/lightning/invoices/{id}", "spec";
    DecodeInvoice => Post "/api/lightning/decode", "public";
    InitiatePayment => Post "/api/lightning/payments/initiate", "public";
    SendPayment => Post "/api/lightning/payments/send", "public";
    PreviewBulkTransfer => Post "/api/bulk-transfers/previews", "public";
    CreateBulkTransfer => Post "/api/bulk-transfers", "public";
    ListBulkTransfers => Get "/api/bulk-transfers", "public";
    CreateBulkSchedule => Post "/api/bulk-transfers/schedules", "public";
    ListBulkSchedules => Get "/api/bulk-transfers/schedules", "public";
    UpdateBulkSchedule => Put "/api/bulk-transfers/schedules/{id}", "public";
    CancelBulkSchedule => Delete "/api/bulk-transfers/schedules/{id}", "public";
    BulkScheduleExecutions => Get "/api/bulk-transfers/schedules/{id}/executions", "public";
    GetBulkTransfer => Get "/api/bulk-transfers/{batchId}", "public";
    ConfirmBulkTransfer => Post "/api/bulk-transfers/{batchId}/confirm", "public";
    RetryBulkTransfer => Post "/api/bulk-transfers/{batchId}/retry", "public";
    CreateVirtualAccount => Post "/api/virtual-accounts", "ours";
    ListVirtualAccounts => Get "/api/virtual-accounts", "ours";
    GetVirtualAccount => Get "/api/virtual-accounts/{id}", "ours";
    PayoutCountries => Get "/api/payouts/supported-countries", "spec";
    PayoutCorridor => Get "/api/payouts/supported-countries/{country}", "spec";
    PayoutBanks => Get "/api/payouts/banks/{countryCode}", "spec";
    PayoutAccountLookup => Post "/api/payouts/beneficiary-lookup", "public";
    PayoutLimits => Get "/api/payouts/limits", "public";
    CreatePayoutQuote => Post "/api/payouts/quotes", "public";
    GetPayoutQuote => Get "/api/payouts/quotes/{quoteId}", "public";
    InitializePayout => Post "/api/payouts/{quoteId}/initialize", "public";
    FinalizePayout => Post "/api/payouts/{quoteId}/finalize", "spec";
    GetPayout => Get "/api/payouts/{id}", "spec";
    ListPayouts => Get "/api/payouts", "public";
    InitializePayoutByQuotePath => Post "/api/payouts/quotes/{quoteId}/initialize", "public";
    FinalizePayoutByQuotePath => Post "/api/payouts/quotes/{quoteId}/finalize", "public";
    ListPayoutsPaged => Get "/api/payouts/", "public";
    FetchPayout => Get "/api/payouts/fetch/{id}", "public";
    FetchPayoutByReference => Get "/api/payouts/fetch/reference/{reference}", "public";
    PayoutRequirements => Get "/api/payouts/supported-countries/{country}/requirements", "public";
    TradingPrices => Get "/api/trading/prices", "public";
    CreateTradingQuote => Post "/api/trading/quotes", "spec";
    GetTradingQuote => Get "/api/trading/quotes/{id}", "public";
    CreateOrder => Post "/api/trading/orders", "spec";
    ListOrders => Get "/api/trading/orders", "spec";
    GetOrder => Get "/api/trading/orders/{id}", "spec";
    CancelOrder => Delete "/api/trading/orders/{id}", "public";
    CreateScheduledOrder => Post "/api/trading/scheduled-orders", "spec";
    ListScheduledOrders => Get "/api/trading/scheduled-orders", "spec";
    GetScheduledOrder => Get "/api/trading/scheduled-orders/{id}", "spec";
    UpdateScheduledOrder => Put "/api/trading/scheduled-orders/{id}", "spec";
    CancelScheduledOrder => Delete "/api/trading/scheduled-orders/{id}", "public";
    ScheduledOrderExecutions => Get "/api/trading/scheduled-orders/{id}/executions", "spec";
    CreateTargetOrder => Post "/api/trading/target-orders", "spec";
    ListTargetOrders => Get "/api/trading/target-orders", "spec";
    GetTargetOrder => Get "/api/trading/target-orders/{id}", "spec";
    CancelTargetOrder => Delete "/api/trading/target-orders/{id}", "public";
    CreateBeneficiary => Post "/api/beneficiaries", "public";
    ListBeneficiaries => Get "/api/beneficiaries", "public";
    GetBeneficiary => Get "/api/beneficiaries/{id}", "public";
    UpdateBeneficiary => Put "/api/beneficiaries/{id}", "public";
    DeleteBeneficiary => Delete "/api/beneficiaries/{id}", "public";
    CreateCustomer => Post "/api/customers", "spec";
    ListCustomers => Get "/api/customers", "spec";
    BlacklistCustomer => Post "/api/customers/blacklist/{customerId}", "public";
    GetCustomer => Get "/api/customers/{customerId}", "spec";
    UpdateCustomer => Put "/api/customers/{customerId}", "public";
    DeleteCustomer => Delete "/api/customers/{customerId}", "public";
    SubmitCardKyc => Post "/api/customers/{customerId}/card-kyc", "ours";
    GetCardKyc => Get "/api/customers/{customerId}/card-kyc", "ours";
    CustomerCards => Get "/api/customers/{customerId}/cards", "public";
    CreateCard => Post "/api/cards", "public";
    ListCards => Get "/api/cards", "spec";
    GetCard => Get "/api/cards/{cardId}", "spec";
    TerminateCard => Delete "/api/cards/{cardId}", "spec";
    ChangeCardBalance => Post "/api/cards/{cardId}/balance", "spec";
    SetCardStatus => Post "/api/cards/{cardId}/status", "spec";
    CardSecureDetails => Get "/api/cards/{cardId}/secure", "spec";
    SetCardSpendLimits => Put "/api/cards/{cardId}/spend-limits", "spec";
    CardTransactions => Get "/api/cards/{cardId}/transactions", "spec";
    GetCardTransaction => Get "/api/cards/{cardId}/transactions/{transactionId}", "public";
    SandboxClock => Get "/sandbox/clock", "ours";
    SandboxAdvanceClock => Post "/sandbox/clock/advance", "ours";
    SandboxSetWebhook => Put "/sandbox/webhook", "ours";
    SandboxDeposit => Post "/sandbox/deposits", "ours";
    SandboxAddFault => Post "/sandbox/faults", "ours";
    SandboxClearFaults => Delete "/sandbox/faults", "ours";
    SandboxSettlePayout => Post "/sandbox/payouts/{id}/settle", "ours";
    SandboxSetPrice => Put "/sandbox/prices", "ours";
    SandboxCardSpend => Post "/sandbox/cards/{id}/spend", "ours";
    SandboxLightningPay => Post "/sandbox/lightning/pay", "ours";
    SandboxVirtualAccountTransfer => Post "/sandbox/virtual-accounts/{id}/transfers", "ours";
    SandboxReset => Post "/sandbox/reset", "ours";
    SandboxExportSnapshot => Get "/sandbox/snapshot", "ours";
    SandboxRestoreSnapshot => Put "/sandbox/snapshot", "ours";
    SandboxRequests => Get "/sandbox/requests", "ours";
    SandboxWebhookDeliveries => Get "/sandbox/webhooks/deliveries", "ours";
    SandboxResendDelivery => Post "/sandbox/webhooks/deliveries/{id}/resend", "ours";
    SandboxAddWebhookFault => Post "/sandbox/webhooks/faults", "ours";
    SandboxWebhookFaults => Get "/sandbox/webhooks/faults", "ours";
    SandboxClearWebhookFaults => Delete "/sandbox/webhooks/faults", "ours";
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
