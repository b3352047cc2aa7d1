//! Where a payout's money comes from: the wallet balance (offchain), or a
//! deposit on a chain (onchain) to an address the payout is given at
//! initialize, which finalize waits for (sandbox-rules.md, Payouts).

use chrono::{DateTime, Utc};
use paydesk_api::models::payouts::{Payout, PayoutChain};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::approvals::AwaitedDeposit;
use crate::web::form::Refusal;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Funding {
    /// The wallet pays amount + fees at finalize.
    #[default]
    Wallet,
    /// A deposit on this chain pays it; finalize waits until it is confirmed.
    Deposit(PayoutChain),
}

impl Funding {
    /// The quote request's `source`.
    pub fn source(self) -> &'static str {
        match self {
            Funding::Wallet => "offchain",
            Funding::Deposit(_) => "onchain",
        }
    }

    /// The quote request's `chain`: only an onchain payout has one.
    pub fn chain(self) -> Option<String> {
        match self {
            Funding::Wallet => None,
            Funding::Deposit(chain) => Some(chain.as_str().to_owned()),
        }
    }

    /// The form's choice (`source` wallet or onchain, and the `chain`) for
    /// a payout from `asset`, or what to fix, in the member's words.
    pub fn from_form(source: &str, chain: &str, asset: &str) -> Result<Funding, Refusal> {
        match source.trim() {
            "" | "wallet" => return Ok(Funding::Wallet),
            "onchain" => {}
            _ => {
                return Err(Refusal::field(
                    "source",
                    "Choose the wallet balance or an onchain deposit.",
                ))
            }
        }
        if chain.trim().is_empty() {
            return Err(Refusal::field(
                "chain",
                "Choose the network the deposit will come on.",
            ));
        }
        let networks = || {
            let fit: Vec<&str> = PayoutChain::ALL
                .iter()
                .filter(|c| c.carries(asset))
                .map(|c| c.label())
                .collect();
            fit.join(", ")
        };
        let Some(chain) = PayoutChain::parse(chain) else {
            return Err(Refusal::field(
                "chain",
                format!(
                    "A payout can't be funded on '{}'; choose one of: {}.",
                    chain.trim(),
                    networks()
                ),
            ));
        };
        if !chain.carries(asset) {
            return Err(Refusal::field(
                "chain",
                format!(
                    "{asset} can't be deposited on {chain}; choose one of: {}.",
                    networks()
                ),
            ));
        }
        Ok(Funding::Deposit(chain))
    }
}

/// An onchain payout's deposit, as initialize gave its address.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Deposit {
    pub address: String,
    pub chain: PayoutChain,
    /// Exactly what must arrive: the payout's amount plus its fees.
    pub amount: Decimal,
    pub asset: String,
    /// When the payout began waiting for it.
    pub since: DateTime<Utc>,
}

impl Deposit {
    /// The deposit an initialized onchain payout waits for; none when the
    /// service gave it no address or no chain it knows.
    pub fn of(payout: &Payout) -> Option<Deposit> {
        Some(Deposit {
            address: payout.deposit_address.clone().filter(|a| !a.is_empty())?,
            chain: PayoutChain::parse(&payout.chain)?,
            amount: (payout.amount + payout.fees).normalize(),
            asset: payout.from_asset.clone(),
            since: Utc::now(),
        })
    }

    /// What the request's page shows while the payout waits.
    pub fn awaited(&self) -> AwaitedDeposit {
        AwaitedDeposit {
            address: self.address.clone(),
            amount: self.amount,
            asset: self.asset.clone(),
            network: self.chain.label().to_owned(),
        }
    }
}

impl std::fmt::Display for Deposit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} on {} to {}",
            self.amount, self.asset, self.chain, self.address
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wallet_is_the_default_and_a_chain_must_carry_the_asset() {
        assert_eq!(Funding::from_form("", "", "USDT").unwrap(), Funding::Wallet);
        assert_eq!(
            Funding::from_form("onchain", "tron", "USDT").unwrap(),
            Funding::Deposit(PayoutChain::Tron)
        );
        let refused = Funding::from_form("onchain", "TRON", "BTC").unwrap_err();
        assert_eq!(refused.field, Some("chain"));
        assert!(
            refused.message.contains("BTC can't be deposited on Tron"),
            "{}",
            refused.message
        );
        assert!(refused.message.contains("Bitcoin"), "{}", refused.message);
        let unknown = Funding::from_form("onchain", "DOGE", "USDT").unwrap_err();
        assert!(unknown.message.contains("'DOGE'"), "{}", unknown.message);
        assert_eq!(
            Funding::from_form("onchain", "", "USDT").unwrap_err().field,
            Some("chain")
        );
    }
}
