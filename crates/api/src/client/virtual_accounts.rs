//! Virtual accounts: NGN bank account numbers issued to customers.

use super::{push_opt, ApiError, Client};
use crate::models::virtual_accounts::{NewVirtualAccount, VirtualAccount, VirtualAccountPage};
use crate::paths::Operation;

impl Client {
    /// Idempotent by reference when one is given.
    pub async fn create_virtual_account(&self, body: &NewVirtualAccount) -> Result<VirtualAccount, ApiError> {
        let idempotent = !body.reference.is_empty();
        self.data(Operation::CreateVirtualAccount, &[], &[], Some(body), idempotent)
            .await
    }

    pub async fn virtual_accounts(
        &self,
        customer_id: Option<&str>,
        cursor: Option<String>,
        limit: Option<u32>,
    ) -> Result<VirtualAccountPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "customer_id", customer_id.map(str::to_owned));
        push_opt(&mut q, "cursor", cursor);
        push_opt(&mut q, "limit", limit.map(|l| l.to_string()));
        self.data(Operation::ListVirtualAccounts, &[], &q, None::<&()>, true)
            .await
    }

    pub async fn virtual_account(&self, id: &str) -> Result<VirtualAccount, ApiError> {
        self.data(Operation::GetVirtualAccount, &[id], &[], None::<&()>, true)
            .await
    }
}
