//! Payouts: corridors, quotes, initialize, finalize, reads.

use super::{push_opt, ApiError, Client};
use crate::models::payouts::{
    AccountLookup, AccountName, BankList, Corridor, CountryList, InitializeAnswer, InitializeRequest, Payout,
    PayoutData, PayoutLimit, PayoutPage, QuoteData, QuoteRequest,
};
use crate::paths::Operation;

impl Client {
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
}
