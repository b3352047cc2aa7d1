//! Monthly statements per wallet: the opening balance, every settled
//! movement of the month by value date, and the closing balance, as a
//! printable page and as CSV.
//!
//! Decisions where the issue is silent: a statement follows the service's
//! ledger rule (a settled transaction moves `amount - fee`; pending,
//! failed and reversed ones move nothing), dates are value dates, and the
//! month is a calendar month in UTC. The opening balance is the sum of
//! every settled movement before the month, so a statement of the current
//! month closes on the service's ledger balance, which the page checks.

mod routes;
mod statement;

pub use routes::AREA;
