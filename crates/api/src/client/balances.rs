//! Identity, balances and the ledger's transactions.

use futures_util::stream::{self, Stream};

use super::{push_opt, ApiError, Client};
use crate::models::balances::{Balance, BalanceList};
use crate::models::identity::Identity;
use crate::models::transactions::{Transaction, TransactionPage, TransactionQuery};
use crate::paths::Operation;

impl Client {
    pub async fn whoami(&self) -> Result<Identity, ApiError> {
        self.data(Operation::Whoami, &[], &[], None::<&()>, true).await
    }

    pub async fn balances(&self) -> Result<BalanceList, ApiError> {
        self.data(Operation::ListBalances, &[], &[], None::<&()>, true)
            .await
    }

    pub async fn balance(&self, currency: &str) -> Result<Balance, ApiError> {
        self.data(Operation::GetBalance, &[currency], &[], None::<&()>, true)
            .await
    }

    pub async fn transactions(&self, query: &TransactionQuery) -> Result<TransactionPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "type", query.kind.map(|k| k.as_str().to_owned()));
        push_opt(&mut q, "status", query.status.map(|s| s.as_str().to_owned()));
        push_opt(&mut q, "currency", query.currency.as_ref().map(|c| c.to_string()));
        push_opt(&mut q, "cursor", query.cursor.clone());
        push_opt(&mut q, "limit", query.limit.map(|l| l.to_string()));
        self.data(Operation::ListTransactions, &[], &q, None::<&()>, true)
            .await
    }

    /// Every transaction matching `query`, page after page, newest first.
    /// The stream owns a clone of the client, so it can outlive the borrow
    /// (a streamed CSV export, say).
    pub fn all_transactions(
        &self,
        query: TransactionQuery,
    ) -> impl Stream<Item = Result<Transaction, ApiError>> + 'static {
        struct State {
            query: TransactionQuery,
            buffer: std::vec::IntoIter<Transaction>,
            done: bool,
        }
        let start = State {
            query,
            buffer: Vec::new().into_iter(),
            done: false,
        };
        let client = self.clone();
        stream::try_unfold(start, move |mut st| {
            let client = client.clone();
            async move {
                loop {
                    if let Some(tx) = st.buffer.next() {
                        return Ok(Some((tx, st)));
                    }
                    if st.done {
                        return Ok(None);
                    }
                    let page = client.transactions(&st.query).await?;
                    st.done = !page.has_more || page.next_cursor.is_empty();
                    st.query.cursor = Some(page.next_cursor);
                    st.buffer = page.transactions.into_iter();
                }
            }
        })
    }

    /// One transaction by its UUID or its reference.
    pub async fn transaction(&self, id_or_reference: &str) -> Result<Transaction, ApiError> {
        self.data(
            Operation::GetTransaction,
            &[id_or_reference],
            &[],
            None::<&()>,
            true,
        )
        .await
    }
}
