//! A payout as a kind of the approval gate. It is carried out with the
//! upstream reference fixed when it was filed: the quote and initialize are
//! idempotent by it, the payout id is saved before finalize, and an unknown
//! outcome is settled by reading the payout back, never by sending again.
//! The request ends only when the rail settles the payout, so one that
//! fails on the rail ends the request as failed, with the rail's reason.
//! An onchain payout waits between initialize and finalize for its
//! deposit: the run saves the address, reads the payout back until
//! finalize is accepted, and ends as failed if the quote runs out first.

use std::time::Duration;

use chrono::{DateTime, Utc};
use paydesk_api::models::beneficiaries::Destination;
use paydesk_api::models::events::names::DEPOSIT_SUCCESS;
use paydesk_api::models::payouts::{
    InitializeRequest, Payout, PayoutBeneficiary, PayoutStatus, QuoteRequest,
};
use paydesk_api::units::{decimal_to_units, Currency};
use paydesk_api::wire::codes;
use paydesk_api::ApiError;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::access::permissions::Permission;
use crate::approvals;
use crate::approvals::Kind;
use crate::approvals::{Action, AwaitedDeposit, Concerns, Counterparty, ExecError, Fact, Run, Step};

use super::funding::{Deposit, Funding};

pub struct PayoutAction;

/// Everything a payout request needs to run, fixed when it was filed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PayoutPayload {
    pub country: String,
    pub from_asset: String,
    pub to_currency: String,
    pub amount: Decimal,
    pub payment_reason: String,
    pub beneficiary: PayoutBeneficiary,
    /// A saved beneficiary the request was filed for, re-checked at execution.
    #[serde(default)]
    pub beneficiary_id: Option<String>,
    /// The account holder's name as the bank gave it when filed.
    #[serde(default)]
    pub verified_name: Option<String>,
    /// The rate shown to the approvers; execution refuses a worse one
    /// beyond the policy's tolerance.
    pub indicative_rate: Decimal,
    pub indicative_settlement: Decimal,
    pub indicative_fees: Decimal,
    /// Requests filed before onchain payouts read as paid from the wallet.
    #[serde(default)]
    pub funding: Funding,
}

/// What execution has done so far.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct PayoutProgress {
    /// Quotes that ran out before finalize; the next takes the reference
    /// `<reference>-<attempt>`, so nothing paid is ever paid again.
    #[serde(default)]
    pub attempt: u32,
    pub payout_id: Option<String>,
    pub quote_id: Option<String>,
    pub reference: Option<String>,
    /// The payout's last known status on the service.
    pub payout_status: Option<PayoutStatus>,
    /// When finalize went through; the rail is read back often at first.
    pub finalized_at: Option<DateTime<Utc>>,
    /// An onchain payout's deposit, saved once initialize gave its address.
    #[serde(default)]
    pub deposit: Option<Deposit>,
}

impl PayoutProgress {
    /// Before finalize, an onchain payout waits for its deposit.
    fn awaited(&self) -> Option<&Deposit> {
        self.deposit.as_ref().filter(|_| self.payout_status.is_none())
    }
}

impl Action for PayoutAction {
    type Payload = PayoutPayload;
    type Progress = PayoutProgress;

    const KIND: Kind = Kind {
        key: "payout",
        label: "Payouts",
        read_permission: Permission::PayoutsRead,
        request_permission: Permission::PayoutsRequest,
        approve_permission: Permission::PayoutsApprove,
    };

    fn headline(&self, progress: &PayoutProgress) -> Option<String> {
        if let Some(d) = progress.awaited() {
            return Some(format!(
                "waiting for the deposit of {} {} on {}",
                d.amount, d.asset, d.chain
            ));
        }
        progress.payout_status.as_ref().map(|s| format!("payout {s}"))
    }

    fn awaits(&self, progress: &PayoutProgress) -> Option<AwaitedDeposit> {
        progress.awaited().map(Deposit::awaited)
    }

    fn describe(&self, p: &PayoutPayload) -> Vec<Fact> {
        let b = &p.beneficiary;
        let bank = b
            .bank_code
            .as_deref()
            .map(|c| format!(" at {c}"))
            .unwrap_or_default();
        let mut facts = vec![
            Fact::new(
                "Send",
                format!(
                    "{} {} plus about {} {} in fees",
                    p.amount, p.from_asset, p.indicative_fees, p.from_asset
                ),
            ),
            Fact::new(
                "Beneficiary receives",
                format!("about {} {}", p.indicative_settlement, p.to_currency),
            ),
            Fact::new(
                "Rate",
                format!(
                    "{} {} per {} (indicative; re-quoted at execution)",
                    p.indicative_rate, p.to_currency, p.from_asset
                ),
            ),
            Fact::new(
                "Beneficiary",
                format!(
                    "{}, account {}{bank} ({}, {})",
                    b.account_name, b.account_number, b.destination_type, p.country
                ),
            ),
            Fact::new("Reason", p.payment_reason.clone()),
        ];
        if let Funding::Deposit(chain) = p.funding {
            facts.push(Fact::new(
                "Funded by",
                format!(
                    "an onchain deposit on {chain}: once approved, the payout is given a deposit address, \
                     and it pays out when the deposit of the amount plus fees is confirmed"
                ),
            ));
        }
        if let Some(name) = &p.verified_name {
            let differs = !name.eq_ignore_ascii_case(b.account_name.trim());
            let note = if differs {
                format!("{name} (differs from the name entered: check before approving)")
            } else {
                name.clone()
            };
            facts.push(Fact::new("Name at the bank", note));
        }
        if let Some(id) = &p.beneficiary_id {
            facts.push(Fact::new("Saved beneficiary", id.clone()));
        }
        facts
    }

    /// A payout's events (`payouts.…`) name it by id, which its run saved;
    /// a confirmed deposit to an onchain payout's address names it in its
    /// metadata, so the waiting run goes on at once.
    fn concerns(&self, event: &str, data: &serde_json::Value) -> Option<Concerns> {
        let id = match event {
            DEPOSIT_SUCCESS => data["metadata"]["payout_id"].as_str(),
            _ if event.starts_with("payouts.") => data["id"].as_str(),
            _ => None,
        }?;
        Some(Concerns::Progress("payout_id", id.to_owned()))
    }

    fn counterparties(&self, p: &PayoutPayload) -> Vec<Counterparty> {
        let b = &p.beneficiary;
        let last_four: String = b
            .account_number
            .chars()
            .rev()
            .take(4)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        vec![
            Counterparty {
                key: format!(
                    "account:{}:{}:{}",
                    p.country,
                    b.bank_code.as_deref().unwrap_or_default(),
                    b.account_number
                ),
                label: format!("account ····{last_four} ({})", b.account_name),
            },
            Counterparty {
                key: format!("country:{}", p.country),
                label: format!("the country {}", p.country),
            },
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, PayoutProgress>,
        p: &PayoutPayload,
    ) -> Result<Step<PayoutPayload>, ExecError> {
        // A payout from an earlier run: settle what happened to it first.
        if let Some(payout_id) = run.progress.payout_id.clone() {
            let payout = run.client()?.payout(&payout_id).await?;
            return match payout.status {
                PayoutStatus::Initiated => finalize(run, &payout).await,
                PayoutStatus::Expired => fresh_quote(run).await,
                _ => settled(run, &payout).await,
            };
        }
        if let Some(id) = &p.beneficiary_id {
            if !saved_beneficiary_unchanged(run, id, &p.beneficiary).await {
                return Ok(Step::Failed(
                    "The saved beneficiary changed or was deleted after the request was filed; file a new request."
                        .to_owned(),
                ));
            }
        }
        let reference = match run.progress.attempt {
            0 => run.reference().to_owned(),
            n => format!("{}-{n}", run.reference()),
        };
        let quote = run
            .client()?
            .create_payout_quote(&QuoteRequest {
                amount: Some(p.amount),
                country: p.country.clone(),
                from_asset: p.from_asset.clone(),
                to_currency: p.to_currency.clone(),
                source: p.funding.source().to_owned(),
                chain: p.funding.chain(),
                reference: reference.clone(),
                ..Default::default()
            })
            .await?;
        if quote.status == PayoutStatus::Expired || Utc::now() >= quote.expires_at {
            return fresh_quote(run).await;
        }
        if run
            .policy
            .rate_moved_too_far(p.indicative_rate, quote.exchange_rate.rate)
        {
            let why = format!(
                "the rate moved from {} to {}",
                p.indicative_rate, quote.exchange_rate.rate
            );
            let payload = PayoutPayload {
                indicative_rate: quote.exchange_rate.rate,
                indicative_settlement: quote.settlement_amount,
                indicative_fees: quote.fees,
                ..p.clone()
            };
            return Ok(Step::SendBack { payload, why });
        }
        if p.funding == Funding::Wallet {
            if let Some(short) = wallet_short(run, &quote).await? {
                return Ok(Step::Failed(short));
            }
        }
        // Saved before anything moves, so a crash from here on is
        // reconciled by reading this payout back.
        run.progress.payout_id = Some(quote.id.to_string());
        run.progress.quote_id = Some(quote.quote_id.clone());
        run.progress.reference = Some(reference.clone());
        run.save(
            "quoted",
            &format!(
                "{} {} for {} {} at {}",
                quote.amount,
                quote.from_asset,
                quote.settlement_amount,
                quote.to_currency,
                quote.exchange_rate.rate
            ),
        )
        .await?;
        let initialized = run
            .client()?
            .initialize_payout(
                &quote.quote_id,
                &InitializeRequest {
                    quote_id: quote.quote_id.clone(),
                    reference,
                    payment_reason: p.payment_reason.clone(),
                    callback_url: None,
                    beneficiary: p.beneficiary.clone(),
                },
            )
            .await;
        let payout = match initialized {
            Ok(payout) => payout,
            Err(e) if e.code() == Some(codes::QUOTE_EXPIRED) => return fresh_quote(run).await,
            Err(e) => return Err(e.into()),
        };
        match p.funding {
            // Nobody knew the address before now: there is nothing to
            // finalize until its deposit is read back.
            Funding::Deposit(_) => await_deposit(run, &payout).await,
            // No timeline entry of its own: finalize follows at once, and
            // its entry names the payout.
            Funding::Wallet => finalize(run, &payout).await,
        }
    }
}

/// Why the wallet can't pay amount + fees of `quote`; none when it can.
async fn wallet_short(run: &Run<'_, PayoutProgress>, quote: &Payout) -> Result<Option<String>, ExecError> {
    let asset = Currency::parse(&quote.from_asset).map_err(|e| ExecError::Internal(e.to_string()))?;
    let needed =
        decimal_to_units(quote.amount + quote.fees, asset.decimals().unwrap_or(6)).unwrap_or(i64::MAX);
    let available = run
        .client()?
        .balance(asset.code())
        .await?
        .available_balance
        .value();
    Ok((available < needed).then(|| {
        format!(
            "The {asset} wallet holds less than the {} this payout needs.",
            quote.amount + quote.fees
        )
    }))
}

/// An initialized onchain payout waits for its deposit: the address is
/// saved with one timeline entry, then the payout is read back (an event
/// of its deposit wakes the run sooner) until finalize is accepted.
async fn await_deposit(
    run: &mut Run<'_, PayoutProgress>,
    payout: &Payout,
) -> Result<Step<PayoutPayload>, ExecError> {
    if run.progress.deposit.is_none() {
        let Some(deposit) = Deposit::of(payout) else {
            return Ok(Step::Failed(format!(
                "The service gave onchain payout {} no deposit address; nothing was paid out.",
                payout.id
            )));
        };
        let note = format!("of {deposit}");
        run.progress.deposit = Some(deposit);
        run.save("waiting for the deposit", &note).await?;
    }
    let since = run.progress.deposit.as_ref().map(|d| d.since);
    Ok(Step::Again(approvals::read_back_after(since)))
}

async fn saved_beneficiary_unchanged(
    run: &Run<'_, PayoutProgress>,
    id: &str,
    approved: &PayoutBeneficiary,
) -> bool {
    let Ok(client) = run.client() else {
        return false;
    };
    match client.beneficiary(id).await {
        Ok(b) => matches!(&b.destination, Destination::Account { account_number, bank_code, .. }
            if *account_number == approved.account_number && Some(bank_code) == approved.bank_code.as_ref()),
        Err(_) => false,
    }
}

async fn finalize(
    run: &mut Run<'_, PayoutProgress>,
    payout: &Payout,
) -> Result<Step<PayoutPayload>, ExecError> {
    match run.client()?.finalize_payout(&payout.quote_id).await {
        Ok(done) => settled(run, &done).await,
        Err(ApiError::OutcomeUnknown { .. }) | Err(ApiError::Unavailable(_)) => {
            // Never finalize blindly again: the next run reads it back.
            run.note(
                "finalize unconfirmed",
                &format!("payout {}: reading it back", payout.id),
            )
            .await?;
            Ok(Step::Again(Duration::from_secs(2)))
        }
        Err(e) if e.code() == Some(codes::QUOTE_EXPIRED) => fresh_quote(run).await,
        // Refused, nothing changed: the deposit is not confirmed yet.
        Err(e) if e.code() == Some(codes::DEPOSIT_NOT_CONFIRMED) => await_deposit(run, payout).await,
        Err(e) => Err(e.into()),
    }
}

/// Where a finalized payout stands: done when the rail settled it, failed
/// with the rail's reason, else read back again.
async fn settled(
    run: &mut Run<'_, PayoutProgress>,
    payout: &Payout,
) -> Result<Step<PayoutPayload>, ExecError> {
    if run.progress.payout_status.as_ref() != Some(&payout.status) {
        run.progress.payout_status = Some(payout.status.clone());
        run.progress.finalized_at.get_or_insert_with(Utc::now);
        run.save(
            &payout.status.as_str().to_ascii_lowercase(),
            &format!("payout {}", payout.id),
        )
        .await?;
    }
    Ok(match payout.status {
        PayoutStatus::Completed => Step::Done(format!(
            "Payout {} completed: {} {} paid to {}.",
            payout.id,
            payout.settlement_amount,
            payout.to_currency,
            payout
                .beneficiary
                .as_ref()
                .map(|b| b.account_name.as_str())
                .unwrap_or("the beneficiary")
        )),
        PayoutStatus::Failed => Step::Failed(format!(
            "The payout failed on the rail: {}. The amount was returned to the wallet.",
            payout.failure_reason.as_deref().unwrap_or("no reason given")
        )),
        _ => Step::Again(approvals::read_back_after(run.progress.finalized_at)),
    })
}

/// The quote ran out before finalize, so nothing was paid: the next run
/// takes a fresh quote under the next reference of the series. Not so
/// once a deposit address was handed out: money may be on its way to it,
/// and a fresh quote would give another address, so the request ends.
async fn fresh_quote(run: &mut Run<'_, PayoutProgress>) -> Result<Step<PayoutPayload>, ExecError> {
    if let Some(d) = &run.progress.deposit {
        return Ok(Step::Failed(format!(
            "The quote expired before the deposit of {d} was confirmed, so nothing was paid out. \
             A deposit that reaches the address stays in the {} wallet; file a new payout to pay it out.",
            d.asset
        )));
    }
    run.progress = PayoutProgress {
        attempt: run.progress.attempt + 1,
        ..PayoutProgress::default()
    };
    run.save("quote expired", "a fresh quote will be taken").await?;
    Ok(Step::Again(Duration::ZERO))
}

/// The payout's last known status on the service, for the payouts list.
pub fn status_of(request: &crate::approvals::ActionRequest) -> Option<String> {
    let progress = request.progress_as::<PayoutProgress>();
    if progress.awaited().is_some() {
        return Some("waiting for the deposit".to_owned());
    }
    progress.payout_status.map(|s| s.to_string())
}
