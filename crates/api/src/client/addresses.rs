//! Deposit addresses and address validation.

use super::{push_opt, ApiError, Client};
use crate::models::addresses::{
    Address, AddressPage, AddressQuery, AddressStatus, AddressValidation, GenerateAddress, SupportedChains,
    ValidateAddress,
};
use crate::paths::Operation;

impl Client {
    pub async fn supported_chains(&self) -> Result<SupportedChains, ApiError> {
        self.data(Operation::SupportedChains, &[], &[], None::<&()>, true)
            .await
    }

    /// Generation is idempotent by `reference` when one is given.
    pub async fn generate_address(&self, body: &GenerateAddress) -> Result<Address, ApiError> {
        let idempotent = body.reference.as_deref().is_some_and(|r| !r.is_empty());
        self.data(Operation::GenerateAddress, &[], &[], Some(body), idempotent)
            .await
    }

    pub async fn list_addresses(&self, query: &AddressQuery) -> Result<AddressPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "chain", query.chain.clone());
        push_opt(
            &mut q,
            "status",
            query.status.map(|s| match s {
                AddressStatus::Active => "active".to_owned(),
                AddressStatus::Inactive => "inactive".to_owned(),
            }),
        );
        if !query.addresses.is_empty() {
            q.push(("addresses", query.addresses.join(",")));
        }
        push_opt(&mut q, "cursor", query.cursor.clone());
        push_opt(&mut q, "limit", query.limit.map(|l| l.to_string()));
        self.data(Operation::ListAddresses, &[], &q, None::<&()>, true)
            .await
    }

    pub async fn address(&self, id: &str) -> Result<Address, ApiError> {
        self.data(Operation::GetAddress, &[id], &[], None::<&()>, true)
            .await
    }

    /// Validation stores nothing, so it is safe to retry.
    pub async fn validate_address(&self, body: &ValidateAddress) -> Result<AddressValidation, ApiError> {
        self.call(Operation::ValidateAddress, &[], &[], Some(body), true)
            .await
    }
}
