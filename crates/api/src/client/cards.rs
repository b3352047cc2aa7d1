//! Cards: issue, read, fund, freeze, terminate, limits, transactions.

use super::{push_opt, ApiError, Client};
use crate::models::cards::{
    BalanceAnswer, BalanceChange, Card, CardData, CardLimits, CardPage, CardQuery, CardState, CardStatus,
    CardStatusData, CardTransaction, CardTransactionData, CardTransactionPage, NewCard, SecureData,
    SecureDetails, StatusChange, Terminate, Termination,
};
use crate::paths::Operation;

impl Client {
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

    /// `Frozen` or `Active`; setting the same status twice changes nothing.
    pub async fn set_card_status(&self, card_id: &str, status: &CardState) -> Result<CardStatus, ApiError> {
        let body = StatusChange {
            status: status.clone(),
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
}
