//! Exchange rates and on-chain withdrawals.

use super::{push_opt, ApiError, Client};
use crate::models::rates::{Conversion, ExchangeRate};
use crate::models::withdrawals::{NewWithdrawal, Withdrawal, WithdrawalPage};
use crate::paths::Operation;

impl Client {
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
}
