//! Lightning invoices and payments.

use super::{push_opt, ApiError, Client};
use crate::models::lightning::{
    DecodedInvoice, Invoice, InvoicePage, InvoiceVerification, NewInvoice, Payment, PaymentPreview,
    PaymentRequest, SendPayment, VerifyInvoice,
};
use crate::paths::Operation;

impl Client {
    /// Idempotent by its required reference, so retried.
    pub async fn create_invoice(&self, body: &NewInvoice) -> Result<Invoice, ApiError> {
        self.data(Operation::CreateInvoice, &[], &[], Some(body), true)
            .await
    }

    pub async fn invoices(
        &self,
        page: Option<u32>,
        page_size: Option<u32>,
        status: Option<&str>,
        direction: Option<&str>,
    ) -> Result<InvoicePage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "page", page.map(|p| p.to_string()));
        push_opt(&mut q, "page_size", page_size.map(|p| p.to_string()));
        push_opt(&mut q, "status", status.map(str::to_owned));
        push_opt(&mut q, "direction", direction.map(str::to_owned));
        self.data(Operation::ListInvoices, &[], &q, None::<&()>, true)
            .await
    }

    pub async fn invoice(&self, id: &str) -> Result<Invoice, ApiError> {
        self.data(Operation::GetInvoice, &[id], &[], None::<&()>, true)
            .await
    }

    pub async fn verify_invoice(&self, payment_hash: &str) -> Result<InvoiceVerification, ApiError> {
        let body = VerifyInvoice {
            payment_hash: payment_hash.to_owned(),
        };
        self.data(Operation::VerifyInvoice, &[], &[], Some(&body), true)
            .await
    }

    pub async fn decode_invoice(&self, request: &str) -> Result<DecodedInvoice, ApiError> {
        let body = PaymentRequest {
            request: request.to_owned(),
        };
        self.data(Operation::DecodeInvoice, &[], &[], Some(&body), true)
            .await
    }

    /// A preview: fee, total and whether a route exists.
    pub async fn initiate_payment(&self, request: &str) -> Result<PaymentPreview, ApiError> {
        let body = PaymentRequest {
            request: request.to_owned(),
        };
        self.data(Operation::InitiatePayment, &[], &[], Some(&body), true)
            .await
    }

    /// Idempotent by its required reference: a lost answer is safe to ask
    /// again with the same reference.
    pub async fn send_payment(&self, body: &SendPayment) -> Result<Payment, ApiError> {
        self.data(Operation::SendPayment, &[], &[], Some(body), true)
            .await
    }
}
