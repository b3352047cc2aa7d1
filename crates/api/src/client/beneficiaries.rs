//! Saved beneficiaries.

use super::{push_opt, ApiError, Client};
use crate::models::beneficiaries::{Beneficiary, BeneficiaryPage, BeneficiaryUpdate, NewBeneficiary};
use crate::paths::Operation;

impl Client {
    pub async fn create_beneficiary(&self, body: &NewBeneficiary) -> Result<Beneficiary, ApiError> {
        self.data(Operation::CreateBeneficiary, &[], &[], Some(body), false)
            .await
    }

    pub async fn beneficiaries(
        &self,
        limit: Option<u32>,
        offset: Option<u32>,
    ) -> Result<BeneficiaryPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "limit", limit.map(|l| l.to_string()));
        push_opt(&mut q, "offset", offset.map(|o| o.to_string()));
        self.data(Operation::ListBeneficiaries, &[], &q, None::<&()>, true)
            .await
    }

    pub async fn beneficiary(&self, id: &str) -> Result<Beneficiary, ApiError> {
        self.data(Operation::GetBeneficiary, &[id], &[], None::<&()>, true)
            .await
    }

    /// A full replacement of the given fields is safe to repeat.
    pub async fn update_beneficiary(
        &self,
        id: &str,
        body: &BeneficiaryUpdate,
    ) -> Result<Beneficiary, ApiError> {
        self.data(Operation::UpdateBeneficiary, &[id], &[], Some(body), true)
            .await
    }

    pub async fn delete_beneficiary(&self, id: &str) -> Result<Beneficiary, ApiError> {
        self.data(Operation::DeleteBeneficiary, &[id], &[], None::<&()>, false)
            .await
    }
}
