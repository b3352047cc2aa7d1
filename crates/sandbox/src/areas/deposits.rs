//! Simulated on-chain deposits (`POST /sandbox/deposits`). A deposit is one
//! transaction throughout: DEPOSIT_DETECTED / PENDING when it arrives
//! (counted in `pending_balance`), DEPOSIT_CONFIRMED / SETTLED 60 s of
//! sandbox time later (moved to `available_balance`), when
//! `deposit.success` is emitted. An onchain payout's `deposit_address`
//! takes deposits like the company's own addresses, and they carry the
//! payout's id in `metadata.payout_id`.

use actix_web::http::StatusCode;
use actix_web::web::Data;
use chrono::Duration;
use paydesk_api::models::control::SimulateDeposit;
use paydesk_api::models::events::names;
use paydesk_api::models::transactions::{Transaction, TransactionState, TransactionType};
use paydesk_api::units::{format_decimal, Currency};
use serde_json::json;
use uuid::Uuid;

use crate::chains;
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::respond::{envelope, Caller, JsonAnswer, JsonBody};
use crate::scheduler::Job;
use crate::state::{Company, Effects, Shared};

use super::addresses::parse_chain;

/// Sandbox seconds from detection to confirmation.
pub const CONFIRMATION_DELAY_SECS: i64 = 60;

/// Records an arriving deposit and schedules its confirmation.
pub fn arrive(
    company: &mut Company,
    request: &SimulateDeposit,
    fx: &mut Effects<'_>,
) -> Result<Transaction, ApiError> {
    let chain = parse_chain("chain", &request.chain)?;
    // An onchain payout's deposit address is the company's too: its
    // deposit is detected and confirmed like any other (sandbox-rules.md).
    let payout_id = company
        .payouts
        .by_deposit_address(chain, &request.address)
        .map(|p| p.id);
    if payout_id.is_none() && !company.addresses.owns(chain, &request.address) {
        return Err(ApiError::NotFound(format!(
            "'{}' is not a deposit address of this company on {}; generate one with POST /api/addresses",
            request.address,
            chain.name()
        )));
    }
    let currency =
        Currency::parse(&request.currency).map_err(|e| ApiError::field("currency", e.to_string()))?;
    let on_chain = chain.native_token().0 == currency.code()
        || chain
            .stablecoins()
            .iter()
            .any(|(symbol, _)| *symbol == currency.code());
    let decimals = currency.decimals().filter(|_| on_chain).ok_or_else(|| {
        ApiError::field(
            "currency",
            format!(
                "{currency} deposits on {} are not supported by the sandbox ledger",
                chain.name()
            ),
        )
    })?;
    if !request.amount.is_positive() {
        return Err(ApiError::field(
            "amount",
            "must be a positive integer in base units",
        ));
    }
    let mut rng = rand::thread_rng();
    let tx_hash = chains::random_tx_hash(chain, &mut rng);
    let mut metadata = json!({
        "address": request.address,
        "chain": chain.name(),
        "channel": "blockchain",
        "company_id": company.id,
        "deposit_type": "crypto",
        "explorer_url": chain.explorer_tx_url(&tx_hash),
        "tx_hash": tx_hash,
        "original_amount": format_decimal(request.amount.value(), decimals),
        "settlement_type": "on_confirmation",
        "is_simulated": true,
    });
    if let Some(id) = payout_id {
        metadata["payout_id"] = json!(id);
    }
    let tx = company
        .ledger
        .post(
            NewTransaction {
                currency,
                kind: TransactionType::DepositDetected,
                state: TransactionState::Pending,
                amount: request.amount,
                fee: Default::default(),
                reference: format!("DEP_{}", Uuid::new_v4().simple()),
                idempotency_key: String::new(),
                metadata: metadata.as_object().cloned().unwrap_or_default(),
            },
            fx.now,
        )?
        .clone();
    fx.scheduler.schedule(
        fx.now + Duration::seconds(CONFIRMATION_DELAY_SECS),
        Job::ConfirmDeposit {
            company_id: company.id,
            transaction_id: tx.transaction_id,
        },
    );
    Ok(tx)
}

/// Confirms a detected deposit, credits it and emits `deposit.success`.
pub fn confirm(company: &mut Company, transaction_id: Uuid, fx: &mut Effects<'_>) {
    let confirmed = company.ledger.transition(
        transaction_id,
        TransactionType::DepositConfirmed,
        TransactionState::Settled,
        fx.now,
    );
    match confirmed {
        Ok(tx) => {
            let data = serde_json::to_value(tx).unwrap_or_default();
            fx.outbox.emit(
                company.id,
                &company.webhook_targets(&[]),
                names::DEPOSIT_SUCCESS,
                data,
                fx.now,
            );
        }
        Err(e) => tracing::warn!(%transaction_id, error = %e, "deposit could not be confirmed"),
    }
}

/// `POST /sandbox/deposits`.
pub async fn simulate(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<SimulateDeposit>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let tx = arrive(company, &body.value, &mut fx)?;
    Ok(envelope(
        StatusCode::CREATED,
        "Deposit detected",
        tx,
        &caller.request_id,
        now,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::areas::addresses::generate;
    use crate::fixture::Fixture;
    use crate::state::Store;
    use chrono::Utc;
    use paydesk_api::models::addresses::GenerateAddress;
    use paydesk_api::units::BaseUnits;

    #[test]
    fn a_deposit_is_pending_then_confirmed_and_announced() {
        let now = Utc::now();
        let mut store = Store::from_fixture(&Fixture::demo(), now).unwrap();
        let id = *store.companies.keys().next().unwrap();
        let (company, mut fx) = store.company(id, now).unwrap();
        company.webhook_url = Some("http://127.0.0.1:9/hook".into());
        let address = generate(
            company,
            &GenerateAddress {
                chain: "ethereum".into(),
                ..Default::default()
            },
            now,
        )
        .unwrap();
        let usdt = Currency::parse("USDT").unwrap();
        let before = company.ledger.account(&usdt).unwrap().available_balance();
        let request = SimulateDeposit {
            chain: "ethereum".into(),
            address: address.address.clone(),
            currency: "USDT".into(),
            amount: BaseUnits(5_000_000),
        };
        let tx = arrive(company, &request, &mut fx).unwrap();
        assert_eq!(tx.kind, TransactionType::DepositDetected);
        assert_eq!(tx.metadata["is_simulated"], true);
        let account = company.ledger.account(&usdt).unwrap();
        assert_eq!(account.pending_balance(), BaseUnits(5_000_000));
        assert_eq!(account.available_balance(), before);

        confirm(company, tx.transaction_id, &mut fx);
        let account = company.ledger.account(&usdt).unwrap();
        assert_eq!(account.available_balance(), BaseUnits(before.value() + 5_000_000));
        assert_eq!(account.pending_balance(), BaseUnits(0));
        assert_eq!(
            company.ledger.find(&tx.reference).unwrap().kind,
            TransactionType::DepositConfirmed
        );
        assert!(store.outbox.has_ready());
    }

    #[test]
    fn refuses_foreign_addresses_and_currencies_off_the_chain() {
        let now = Utc::now();
        let mut store = Store::from_fixture(&Fixture::demo(), now).unwrap();
        let id = *store.companies.keys().next().unwrap();
        let (company, mut fx) = store.company(id, now).unwrap();
        let mut request = SimulateDeposit {
            chain: "ethereum".into(),
            address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed".into(),
            currency: "USDT".into(),
            amount: BaseUnits(1),
        };
        assert_eq!(
            arrive(company, &request, &mut fx).unwrap_err().code(),
            "NOT_FOUND"
        );
        let btc_addr = generate(
            company,
            &GenerateAddress {
                chain: "bitcoin".into(),
                ..Default::default()
            },
            now,
        )
        .unwrap();
        request.chain = "bitcoin".into();
        request.address = btc_addr.address;
        assert_eq!(
            arrive(company, &request, &mut fx).unwrap_err().code(),
            "VALIDATION_ERROR"
        );
        assert_eq!(company.ledger.entries().len(), 4);
        assert!(store.scheduler.is_empty());
    }
}
