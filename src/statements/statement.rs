//! A wallet's statement for one month, folded from its settled
//! transactions as the service lists them.

use chrono::{Datelike, NaiveDate, Utc};
use futures_util::TryStreamExt;
use paydesk_api::models::transactions::{Transaction, TransactionQuery, TransactionState, TransactionType};
use paydesk_api::units::Currency;
use paydesk_api::{ApiError, Client};
use rust_decimal::Decimal;

use crate::web::show::grouped;

/// A calendar month, `2026-11`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Month {
    first: NaiveDate,
}

impl Month {
    /// `YYYY-MM` as a month picker sends it.
    pub fn parse(text: &str) -> Option<Month> {
        NaiveDate::parse_from_str(&format!("{}-01", text.trim()), "%Y-%m-%d")
            .ok()
            .map(|first| Month { first })
    }

    pub fn current() -> Month {
        let today = Utc::now().date_naive();
        Month {
            first: today.with_day(1).unwrap_or(today),
        }
    }

    fn next_first(self) -> NaiveDate {
        self.first
            .checked_add_months(chrono::Months::new(1))
            .unwrap_or(NaiveDate::MAX)
    }

    pub fn contains(self, day: NaiveDate) -> bool {
        day >= self.first && day < self.next_first()
    }

    /// `2026-11`, the value of the month picker.
    pub fn key(self) -> String {
        self.first.format("%Y-%m").to_string()
    }

    /// `November 2026`, as the statement's title reads.
    pub fn label(self) -> String {
        self.first.format("%B %Y").to_string()
    }

    pub fn first_day(self) -> NaiveDate {
        self.first
    }

    pub fn last_day(self) -> NaiveDate {
        self.next_first().pred_opt().unwrap_or(self.first)
    }
}

/// One settled movement and the balance after it, in base units.
pub struct Line {
    pub value_date: NaiveDate,
    pub kind: TransactionType,
    pub reference: String,
    pub transaction_id: uuid::Uuid,
    pub amount: i64,
    pub fee: i64,
    pub balance: i64,
}

pub struct Statement {
    pub currency: Currency,
    pub account_number: String,
    pub month: Month,
    pub opening: i64,
    pub lines: Vec<Line>,
    pub closing: i64,
}

impl Statement {
    /// Base units as a decimal with the currency's places and thousands
    /// separators, `10,000.000000`.
    pub fn show(&self, units: impl std::borrow::Borrow<i64>) -> String {
        grouped(Decimal::new(
            *units.borrow(),
            self.currency.decimals().unwrap_or(0),
        ))
    }

    /// The same without separators, for CSV cells a spreadsheet adds up.
    pub fn plain(&self, units: i64) -> String {
        Decimal::new(units, self.currency.decimals().unwrap_or(0)).to_string()
    }

    pub fn money_in(&self) -> i64 {
        self.lines.iter().map(|l| l.amount.max(0)).sum()
    }

    pub fn money_out(&self) -> i64 {
        self.lines.iter().map(|l| (-l.amount).max(0)).sum()
    }

    pub fn fees(&self) -> i64 {
        self.lines.iter().map(|l| l.fee).sum()
    }
}

/// Folds the wallet's settled transactions into `month`'s statement.
pub fn fold(
    currency: Currency,
    account_number: String,
    month: Month,
    settled: Vec<Transaction>,
) -> Statement {
    let mut opening = 0;
    let mut during: Vec<Transaction> = Vec::new();
    for t in settled {
        if t.value_date < month.first_day() {
            opening += t.amount.value() - t.fee.value();
        } else if month.contains(t.value_date) {
            during.push(t);
        }
    }
    during.sort_by_key(|t| (t.value_date, t.created_at));
    let mut balance = opening;
    let lines = during
        .into_iter()
        .map(|t| {
            balance += t.amount.value() - t.fee.value();
            Line {
                value_date: t.value_date,
                kind: t.kind,
                reference: t.reference,
                transaction_id: t.transaction_id,
                amount: t.amount.value(),
                fee: t.fee.value(),
                balance,
            }
        })
        .collect();
    Statement {
        currency,
        account_number,
        month,
        opening,
        lines,
        closing: balance,
    }
}

/// Reads every settled transaction of the wallet (the service filters by
/// currency and state) and folds the month's statement.
pub async fn build(
    client: &Client,
    currency: Currency,
    account_number: String,
    month: Month,
) -> Result<Statement, ApiError> {
    let query = TransactionQuery {
        currency: Some(currency.clone()),
        status: Some(TransactionState::Settled),
        limit: Some(100),
        ..Default::default()
    };
    let settled: Vec<Transaction> = client.all_transactions(query).try_collect().await?;
    Ok(fold(currency, account_number, month, settled))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tx(day: &str, amount: i64, fee: i64) -> Transaction {
        serde_json::from_value(serde_json::json!({
            "transaction_id": uuid::Uuid::new_v4(), "account_number": "1", "currency": "USDT",
            "type": "DEPOSIT_CONFIRMED", "state": "SETTLED", "amount": amount.to_string(), "fee": fee.to_string(),
            "reference": "r", "created_at": format!("{day}T10:00:00Z"), "updated_at": format!("{day}T10:00:00Z"),
            "value_date": day, "amount_formatted": "", "fee_formatted": "", "side": "Credit"
        }))
        .unwrap()
    }

    #[test]
    fn a_month_opens_on_what_came_before_and_closes_on_its_movements() {
        let month = Month::parse("2026-11").unwrap();
        let s = fold(
            Currency::parse("USDT").unwrap(),
            "1".into(),
            month,
            vec![
                tx("2026-12-01", 999, 0),
                tx("2026-11-30", -200, 5),
                tx("2026-11-01", 300, 0),
                tx("2026-10-31", 1_000, 0),
            ],
        );
        assert_eq!(s.opening, 1_000);
        assert_eq!(s.lines.len(), 2);
        assert_eq!(s.lines[0].balance, 1_300);
        assert_eq!(s.closing, 1_095);
        assert_eq!((s.money_in(), s.money_out(), s.fees()), (300, 200, 5));
        assert_eq!(s.show(1_234_567_000), "1,234.567000");
        assert_eq!(month.label(), "November 2026");
        assert_eq!(month.last_day().to_string(), "2026-11-30");
        assert!(Month::parse("2026-13").is_none() && Month::parse("soon").is_none());
    }
}
