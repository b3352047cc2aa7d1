//! The company ledger: every movement is a transaction record, and the
//! balances are derived from those records (no money appears or vanishes).
//!
//! Balance rules (where the spec is silent): a transaction moves
//! `amount - fee` (fee is a non-negative charge, amount is negative for
//! debits). SETTLED moves count in `ledger_balance`; PENDING/IN_PROGRESS
//! debits are held, so they already reduce `available_balance`;
//! PENDING/IN_PROGRESS credits count only in `pending_balance`; FAILED and
//! REVERSED move nothing. `total_balance = available_balance +
//! pending_balance`. The per-account totals are kept up to date by `post`
//! and `transition`, the only two ways a record changes; a test recomputes
//! them from the records.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use paydesk_api::models::balances::{Balance, BalanceAccount};
use paydesk_api::models::transactions::{Side, Transaction, TransactionState, TransactionType};
use paydesk_api::units::{BaseUnits, Currency};
use paydesk_api::wire::codes;
use rand::Rng;
use uuid::Uuid;

use crate::book::{Book, Record};
use crate::error::ApiError;
use crate::pagination::Sequenced;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Account {
    pub id: Uuid,
    pub number: String,
    pub currency: Currency,
    pub created_at: DateTime<Utc>,
    // The totals are derived from the entries (`Ledger::reindex`), not
    // kept: they change with every movement, and keeping them would
    // rewrite the company's head row (`--data-dir`) at every write.
    #[serde(skip)]
    settled: i64,
    #[serde(skip)]
    pending_in: i64,
    #[serde(skip)]
    pending_out: i64,
}

impl Account {
    pub fn ledger_balance(&self) -> BaseUnits {
        BaseUnits(self.settled)
    }

    pub fn available_balance(&self) -> BaseUnits {
        BaseUnits(self.settled + self.pending_out)
    }

    pub fn pending_balance(&self) -> BaseUnits {
        BaseUnits(self.pending_in)
    }

    fn apply(&mut self, tx: &Transaction, sign: i64) {
        let net = tx.amount.value() - tx.fee.value();
        match tx.state {
            TransactionState::Settled => self.settled += net * sign,
            TransactionState::Pending | TransactionState::InProgress if net >= 0 => {
                self.pending_in += net * sign
            }
            TransactionState::Pending | TransactionState::InProgress => self.pending_out += net * sign,
            TransactionState::Failed | TransactionState::Reversed => {}
        }
    }
}

/// A ledger record with its position, for stable cursors.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    pub seq: u64,
    pub tx: Transaction,
}

impl Record for Entry {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.tx.transaction_id
    }
}

impl Sequenced for Entry {
    fn seq(&self) -> u64 {
        self.seq
    }
}

/// What a caller asks the ledger to record.
#[derive(Debug, Clone)]
pub struct NewTransaction {
    pub currency: Currency,
    pub kind: TransactionType,
    pub state: TransactionState,
    pub amount: BaseUnits,
    pub fee: BaseUnits,
    pub reference: String,
    pub idempotency_key: String,
    pub metadata: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Ledger {
    accounts: Vec<Account>,
    entries: Book<Entry>,
    /// Rebuilt from the entries (`reindex`), not kept.
    #[serde(skip)]
    by_reference: HashMap<String, usize>,
    /// The last entry's `seq` (entries are never removed); rebuilt from
    /// the entries, not kept.
    #[serde(skip)]
    next_seq: u64,
}

impl Ledger {
    pub fn accounts(&self) -> &[Account] {
        &self.accounts
    }

    pub fn account(&self, currency: &Currency) -> Option<&Account> {
        self.accounts.iter().find(|a| &a.currency == currency)
    }

    /// Opens the wallet for `currency` unless it exists.
    pub fn open_account(&mut self, currency: &Currency, now: DateTime<Utc>) -> &Account {
        let index = match self.accounts.iter().position(|a| &a.currency == currency) {
            Some(i) => i,
            None => {
                let number = format!(
                    "{:010}",
                    rand::thread_rng().gen_range(1_000_000_000u64..10_000_000_000)
                );
                self.accounts.push(Account {
                    id: Uuid::new_v4(),
                    number,
                    currency: currency.clone(),
                    created_at: now,
                    settled: 0,
                    pending_in: 0,
                    pending_out: 0,
                });
                self.accounts.len() - 1
            }
        };
        &self.accounts[index]
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entries' book, for the data directory.
    pub fn entry_book(&mut self) -> &mut Book<Entry> {
        &mut self.entries
    }

    /// Rebuilds what is derived from the entries, after they were read
    /// back: the index by reference, the last `seq` and every account's
    /// totals.
    pub fn reindex(&mut self) {
        self.by_reference = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.tx.reference.clone(), i))
            .collect();
        self.next_seq = self.entries.iter().map(|e| e.seq).max().unwrap_or(0);
        for account in &mut self.accounts {
            (account.settled, account.pending_in, account.pending_out) = (0, 0, 0);
        }
        for entry in self.entries.iter() {
            if let Some(account) = self.accounts.iter_mut().find(|a| a.currency == entry.tx.currency) {
                account.apply(&entry.tx, 1);
            }
        }
    }

    /// Records a movement. Credits open the wallet if needed; debits need a
    /// wallet with enough available balance.
    pub fn post(&mut self, new: NewTransaction, now: DateTime<Utc>) -> Result<&Transaction, ApiError> {
        let net = new
            .amount
            .value()
            .checked_sub(new.fee.value())
            .ok_or_else(overflow)?;
        if net < 0 {
            let account = self.account(&new.currency).ok_or_else(|| {
                ApiError::unprocessable(
                    codes::INSUFFICIENT_BALANCE,
                    format!("the company holds no {} wallet", new.currency),
                )
            })?;
            if new.state != TransactionState::Failed && account.available_balance().value() + net < 0 {
                return Err(ApiError::unprocessable(
                    codes::INSUFFICIENT_BALANCE,
                    format!(
                        "insufficient {} balance: {} available, {} needed",
                        new.currency,
                        account.available_balance().formatted(&new.currency),
                        BaseUnits(-net).formatted(&new.currency)
                    ),
                ));
            }
        }
        let account = self.open_account(&new.currency, now).clone();
        let tx = Transaction {
            transaction_id: Uuid::new_v4(),
            account_number: account.number.clone(),
            amount_formatted: new.amount.formatted(&new.currency),
            fee_formatted: new.fee.formatted(&new.currency),
            currency: new.currency,
            kind: new.kind,
            state: new.state,
            amount: new.amount,
            fee: new.fee,
            reference: new.reference,
            idempotency_key: new.idempotency_key,
            trade_id: None,
            metadata: new.metadata,
            created_at: now,
            updated_at: now,
            value_date: now.date_naive(),
            side: if new.amount.value() < 0 {
                Side::Debit
            } else {
                Side::Credit
            },
        };
        self.account_mut(&tx.currency).apply(&tx, 1);
        let index = self.entries.len();
        self.by_reference.insert(tx.reference.clone(), index);
        self.next_seq += 1;
        self.entries.push(Entry {
            seq: self.next_seq,
            tx,
        });
        Ok(&self.entries[index].tx)
    }

    /// Records one side of a trade, with the order as its `trade_id`.
    pub fn post_trade(
        &mut self,
        new: NewTransaction,
        trade_id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<(), ApiError> {
        let id = self.post(new, now)?.transaction_id;
        let index = self.entries.position_of(&id).expect("posted just above");
        self.entries[index].tx.trade_id = Some(trade_id.to_string());
        Ok(())
    }

    /// Moves a record to a new type and state; terminal records never change.
    pub fn transition(
        &mut self,
        id: Uuid,
        kind: TransactionType,
        state: TransactionState,
        now: DateTime<Utc>,
    ) -> Result<&Transaction, ApiError> {
        let index = self
            .entries
            .position_of(&id)
            .ok_or_else(|| ApiError::NotFound(format!("no transaction {id}")))?;
        let old = self.entries[index].tx.clone();
        if old.state.is_terminal() {
            return Err(ApiError::unprocessable(
                codes::INVALID_STATE,
                format!("transaction {id} is {:?} and can no longer change", old.state),
            ));
        }
        let account = self.account_mut(&old.currency);
        account.apply(&old, -1);
        let mut new = old;
        new.kind = kind;
        new.state = state;
        new.updated_at = now;
        account.apply(&new, 1);
        self.entries[index].tx = new;
        Ok(&self.entries[index].tx)
    }

    /// A transaction by its UUID or, failing that, its reference.
    pub fn find(&self, id_or_reference: &str) -> Option<&Transaction> {
        let index = Uuid::parse_str(id_or_reference)
            .ok()
            .and_then(|id| self.entries.position_of(&id))
            .or_else(|| self.by_reference.get(id_or_reference).copied())?;
        Some(&self.entries[index].tx)
    }

    fn account_mut(&mut self, currency: &Currency) -> &mut Account {
        self.accounts
            .iter_mut()
            .find(|a| &a.currency == currency)
            .expect("a posted transaction has an account")
    }

    pub fn balance_account(&self, account: &Account) -> BalanceAccount {
        BalanceAccount {
            account_id: account.id,
            account_number: account.number.clone(),
            currency: account.currency.clone(),
            ledger_balance: account.ledger_balance(),
            available_balance: account.available_balance(),
            ledger_balance_formatted: account.ledger_balance().formatted(&account.currency),
            available_balance_formatted: account.available_balance().formatted(&account.currency),
            created_at: account.created_at,
        }
    }

    /// One wallet's balance as read `now`.
    pub fn balance(&self, company_id: Uuid, account: &Account, now: DateTime<Utc>) -> Balance {
        let total = BaseUnits(account.available_balance().value() + account.pending_balance().value());
        let currency = &account.currency;
        Balance {
            account_number: account.number.clone(),
            available_balance: account.available_balance(),
            company_id,
            currency: currency.clone(),
            pending_balance: account.pending_balance(),
            total_balance: total,
            ledger_balance: account.ledger_balance(),
            available_balance_formatted: account.available_balance().formatted(currency),
            pending_balance_formatted: account.pending_balance().formatted(currency),
            total_balance_formatted: total.formatted(currency),
            ledger_balance_formatted: account.ledger_balance().formatted(currency),
            as_of: Some(now),
        }
    }
}

fn overflow() -> ApiError {
    ApiError::invalid("the amount is too large")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usdt() -> Currency {
        Currency::parse("USDT").unwrap()
    }

    fn movement(amount: i64, fee: i64, state: TransactionState) -> NewTransaction {
        NewTransaction {
            currency: usdt(),
            kind: TransactionType::DepositConfirmed,
            state,
            amount: BaseUnits(amount),
            fee: BaseUnits(fee),
            reference: format!("ref-{amount}-{fee}"),
            idempotency_key: String::new(),
            metadata: Default::default(),
        }
    }

    /// Recomputes every account's totals from the records.
    fn recomputed(ledger: &Ledger) -> Vec<(i64, i64, i64)> {
        ledger
            .accounts()
            .iter()
            .map(|a| {
                let mut fresh = a.clone();
                fresh.settled = 0;
                fresh.pending_in = 0;
                fresh.pending_out = 0;
                for e in ledger.entries().iter().filter(|e| e.tx.currency == a.currency) {
                    fresh.apply(&e.tx, 1);
                }
                (fresh.settled, fresh.pending_in, fresh.pending_out)
            })
            .collect()
    }

    fn totals(ledger: &Ledger) -> Vec<(i64, i64, i64)> {
        ledger
            .accounts()
            .iter()
            .map(|a| (a.settled, a.pending_in, a.pending_out))
            .collect()
    }

    #[test]
    fn balances_follow_the_records_through_every_transition() {
        let now = Utc::now();
        let mut ledger = Ledger::default();
        ledger
            .post(movement(1_000, 0, TransactionState::Settled), now)
            .unwrap();
        let pending_in = ledger
            .post(movement(500, 0, TransactionState::Pending), now)
            .unwrap()
            .transaction_id;
        let hold = ledger
            .post(movement(-300, 3, TransactionState::Pending), now)
            .unwrap()
            .transaction_id;
        let acct = ledger.account(&usdt()).unwrap();
        assert_eq!(acct.ledger_balance(), BaseUnits(1_000));
        assert_eq!(acct.available_balance(), BaseUnits(697));
        assert_eq!(acct.pending_balance(), BaseUnits(500));
        assert_eq!(totals(&ledger), recomputed(&ledger));

        ledger
            .transition(
                pending_in,
                TransactionType::DepositConfirmed,
                TransactionState::Settled,
                now,
            )
            .unwrap();
        ledger
            .transition(
                hold,
                TransactionType::WithdrawalFailed,
                TransactionState::Failed,
                now,
            )
            .unwrap();
        let acct = ledger.account(&usdt()).unwrap();
        assert_eq!(acct.available_balance(), BaseUnits(1_500));
        assert_eq!(acct.pending_balance(), BaseUnits(0));
        assert_eq!(totals(&ledger), recomputed(&ledger));

        let err = ledger
            .transition(
                hold,
                TransactionType::WithdrawalInitiated,
                TransactionState::Settled,
                now,
            )
            .unwrap_err();
        assert_eq!(err.code(), codes::INVALID_STATE);
    }

    #[test]
    fn totals_and_the_last_seq_are_rebuilt_from_the_entries_read_back() {
        let now = Utc::now();
        let mut ledger = Ledger::default();
        ledger
            .post(movement(1_000, 0, TransactionState::Settled), now)
            .unwrap();
        ledger
            .post(movement(500, 0, TransactionState::Pending), now)
            .unwrap();
        ledger
            .post(movement(-300, 3, TransactionState::Pending), now)
            .unwrap();
        let text = serde_json::to_string(&ledger).unwrap();
        assert!(!text.contains("pending_out"), "totals are not kept: {text}");
        let mut back: Ledger = serde_json::from_str(&text).unwrap();
        back.reindex();
        assert_eq!(totals(&back), totals(&ledger));
        assert_eq!(back.next_seq, ledger.next_seq);
    }

    #[test]
    fn debits_beyond_the_available_balance_are_refused_and_record_nothing() {
        let now = Utc::now();
        let mut ledger = Ledger::default();
        ledger
            .post(movement(100, 0, TransactionState::Settled), now)
            .unwrap();
        let err = ledger
            .post(movement(-100, 1, TransactionState::Pending), now)
            .unwrap_err();
        assert_eq!(err.code(), codes::INSUFFICIENT_BALANCE);
        assert_eq!(ledger.entries().len(), 1);
    }

    #[test]
    fn finds_by_id_or_reference() {
        let now = Utc::now();
        let mut ledger = Ledger::default();
        let id = ledger
            .post(movement(7, 0, TransactionState::Settled), now)
            .unwrap()
            .transaction_id;
        assert_eq!(ledger.find(&id.to_string()).unwrap().transaction_id, id);
        assert_eq!(ledger.find("ref-7-0").unwrap().transaction_id, id);
        assert!(ledger.find("nope").is_none());
    }
}
