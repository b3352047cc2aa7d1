//! The sandbox's control API: simulations, clock, faults, journal.

use super::{ApiError, Client};
use crate::models::cards::{SimulateSpend, SpendOutcome};
use crate::models::control::{
    AddChanceFault, AddFault, AddWebhookFault, AdvanceClock, ClockNow, DeliveryList, FaultList,
    RequestJournal, ResetDone, SetWebhook, SimulateDeposit, WebhookDelivery, WebhookFaultList,
    WebhookSetting,
};
use crate::models::lightning::{Invoice, PaymentRequest};
use crate::models::payouts::{Payout, SettlePayout};
use crate::models::trading::{Price, SetPrice};
use crate::models::transactions::Transaction;
use crate::models::virtual_accounts::SimulateBankTransfer;
use crate::paths::Operation;

impl Client {
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
}
