//! Customers and their card KYC.

use super::{push_opt, ApiError, Client};
use crate::models::cards::CardPage;
use crate::models::customers::{
    Blacklist, CardKyc, Customer, CustomerPage, CustomerQuery, CustomerUpdate, KycDetails, NewCustomer,
};
use crate::paths::Operation;

impl Client {
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
}
