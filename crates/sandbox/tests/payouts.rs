//! Payouts and beneficiaries over real HTTP, the rail driven by the clock.

mod support;

use std::str::FromStr;

use paydesk_api::models::beneficiaries::{BeneficiaryUpdate, Destination, NewBeneficiary};
use paydesk_api::models::payouts::{AccountLookup, InitializeRequest, PayoutBeneficiary, QuoteRequest};
use paydesk_api::units::BaseUnits;
use paydesk_api::webhook::verify_webhook;
use reqwest::Method;
use rust_decimal::Decimal;
use serde_json::json;

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

fn quote_usdt_ngn(amount: &str, reference: &str) -> QuoteRequest {
    QuoteRequest {
        amount: Some(dec(amount)),
        country: "NG".into(),
        from_asset: "USDT".into(),
        to_currency: "NGN".into(),
        source: "offchain".into(),
        reference: reference.into(),
        ..Default::default()
    }
}

fn beneficiary(account: &str) -> PayoutBeneficiary {
    PayoutBeneficiary {
        destination_type: "bank".into(),
        country: "NG".into(),
        account_name: "Ada Okafor".into(),
        account_number: account.into(),
        bank_code: Some("058".into()),
    }
}

fn init(quote_id: &str, reference: &str, account: &str, callback: Option<&str>) -> InitializeRequest {
    InitializeRequest {
        quote_id: quote_id.into(),
        reference: reference.into(),
        payment_reason: "salary".into(),
        callback_url: callback.map(Into::into),
        beneficiary: beneficiary(account),
    }
}

#[tokio::test]
async fn corridors_banks_limits_and_account_lookup() {
    let t = support::spawn().await;
    let countries: Vec<_> = t
        .client
        .payout_countries()
        .await
        .unwrap()
        .countries
        .into_iter()
        .map(|c| c.country)
        .collect();
    assert_eq!(countries, ["NG", "KE", "GH"]);
    let gh = t.client.payout_corridor("GH").await.unwrap();
    assert!(gh.payment_reason_required_from_list);
    assert_eq!(
        gh.payment_reasons,
        ["salary", "family_support", "business", "education"]
    );
    assert_eq!(
        t.client.payout_corridor("ZZ").await.unwrap_err().status(),
        Some(404)
    );
    let banks = t.client.payout_banks("KE").await.unwrap().banks;
    assert!(banks
        .iter()
        .any(|b| b.code == "MPESA" && b.kind == "mobile_money"));
    let limits = t.client.payout_limits().await.unwrap();
    assert_eq!(limits.len(), 3);

    let mut lookup = AccountLookup {
        country: "NG".into(),
        account_number: "0123456789".into(),
        bank_code: "058".into(),
        kind: "bank".into(),
    };
    let found = t.client.lookup_account(&lookup).await.unwrap();
    assert!(!found.account_name.is_empty());
    assert_eq!(
        t.client.lookup_account(&lookup).await.unwrap().account_name,
        found.account_name
    );
    lookup.account_number = "0000000000".into();
    assert_eq!(
        t.client.lookup_account(&lookup).await.unwrap_err().status(),
        Some(404)
    );
}

#[tokio::test]
async fn an_offchain_payout_runs_quote_to_completed_with_its_webhooks() {
    let t = support::spawn().await;
    let hooks = support::Receiver::start(0).await;
    let callback = support::Receiver::start(0).await;
    t.client
        .sandbox_set_webhook(&hooks.url, Some("whsec"))
        .await
        .unwrap();

    let quote = t
        .client
        .create_payout_quote(&quote_usdt_ngn("100", "pay-1"))
        .await
        .unwrap();
    assert_eq!(quote.status.as_str(), "QUOTE");
    assert_eq!(quote.settlement_amount, dec("150000"));
    assert_eq!(quote.fees, dec("1"));
    assert_eq!(quote.cent_amount, "15000000");
    assert_eq!(quote.source, "OFFCHAIN");
    assert_eq!(
        (quote.expires_at - quote.trip.quote_at.unwrap()).num_seconds(),
        900
    );
    assert_eq!(t.client.payout_quote(&quote.quote_id).await.unwrap().id, quote.id);

    let initialized = t
        .client
        .initialize_payout(
            &quote.quote_id,
            &init(&quote.quote_id, "pay-1", "0123456789", Some(&callback.url)),
        )
        .await
        .unwrap();
    assert_eq!(initialized.status.as_str(), "INITIATED");
    assert_eq!(initialized.payment_reason, "salary");
    let (status, raw) = t
        .send(Method::GET, &format!("/api/payouts/{}", quote.id), "")
        .await;
    assert_eq!(status, 200);
    assert_eq!(raw["data"]["beneficiary"]["account_number"], "0123456789");

    let before = t.client.balance("USDT").await.unwrap().available_balance;
    let finalized = t.client.finalize_payout(&quote.quote_id).await.unwrap();
    assert_eq!(finalized.status.as_str(), "PENDING");
    assert!(!finalized.provider_settlement_id.is_empty());
    let after = t.client.balance("USDT").await.unwrap().available_balance;
    assert_eq!(
        before.value() - after.value(),
        101_000_000,
        "amount + fees in USDT base units"
    );
    // A repeated finalize is the same answer and debits nothing more.
    assert_eq!(
        t.client
            .finalize_payout(&quote.quote_id)
            .await
            .unwrap()
            .provider_settlement_id,
        finalized.provider_settlement_id
    );
    assert_eq!(t.client.balance("USDT").await.unwrap().available_balance, after);

    t.client.sandbox_advance_clock(30).await.unwrap();
    assert_eq!(
        t.client
            .payout(&quote.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "PROCESSING"
    );
    t.client.sandbox_advance_clock(60).await.unwrap();
    let done = t.client.payout(&quote.id.to_string()).await.unwrap();
    assert_eq!(done.status.as_str(), "COMPLETED");
    assert!(done.trip.completion_time.is_some());

    let events: Vec<_> = hooks
        .deliveries()
        .iter()
        .map(|d| d.json["event"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        events,
        [
            "payouts.initialized",
            "payouts.processing",
            "payouts.withdrawal.success"
        ]
    );
    let last = hooks.deliveries().pop().unwrap();
    assert!(verify_webhook("whsec", &last.body, &last.signature));
    let data = &last.json["data"];
    assert_eq!(data["status"], "success");
    assert_eq!(data["from_asset"], "usdt");
    assert_eq!(data["to_currency"], "ngn");
    assert_eq!(data["destination"]["account_number"], "****6789");
    assert!(data["completion_time"].is_string());
    let statuses: Vec<_> = callback
        .deliveries()
        .iter()
        .map(|d| d.json["data"]["status"].clone())
        .collect();
    assert_eq!(
        statuses,
        [json!("initiated"), json!("processing"), json!("success")]
    );
    let ids: std::collections::HashSet<_> = hooks
        .deliveries()
        .iter()
        .map(|d| d.json["event_id"].clone())
        .collect();
    assert_eq!(ids.len(), 3);
}

#[tokio::test]
async fn a_rejected_account_fails_and_the_money_comes_back() {
    let t = support::spawn().await;
    let hooks = support::Receiver::start(0).await;
    t.client.sandbox_set_webhook(&hooks.url, None).await.unwrap();
    let before = t.client.balance("USDT").await.unwrap().available_balance;
    let quote = t
        .client
        .create_payout_quote(&quote_usdt_ngn("50", "fail-1"))
        .await
        .unwrap();
    t.client
        .initialize_payout(
            &quote.quote_id,
            &init(&quote.quote_id, "fail-1", "1234509999", None),
        )
        .await
        .unwrap();
    t.client.finalize_payout(&quote.quote_id).await.unwrap();
    t.client.sandbox_advance_clock(86_400).await.unwrap();
    let failed = t.client.payout(&quote.id.to_string()).await.unwrap();
    assert_eq!(failed.status.as_str(), "FAILED");
    assert!(failed.failure_reason.is_some());
    assert_eq!(t.client.balance("USDT").await.unwrap().available_balance, before);
    let reversal = t.client.transaction("fail-1_REVERSAL").await.unwrap();
    assert_eq!(reversal.amount, BaseUnits(50_500_000));
    let last = hooks.deliveries().pop().unwrap();
    assert_eq!(last.json["event"], "payouts.withdrawal.failed");
    assert!(last.json["data"]["failure_reason"].is_string());
}

#[tokio::test]
async fn quotes_expire_and_expired_quotes_cannot_go_on() {
    let t = support::spawn().await;
    let hooks = support::Receiver::start(0).await;
    t.client.sandbox_set_webhook(&hooks.url, None).await.unwrap();
    let quote = t
        .client
        .create_payout_quote(&quote_usdt_ngn("10", "exp-1"))
        .await
        .unwrap();
    t.client
        .initialize_payout(
            &quote.quote_id,
            &init(&quote.quote_id, "exp-1", "0123456789", None),
        )
        .await
        .unwrap();
    t.client.sandbox_advance_clock(901).await.unwrap();
    assert_eq!(
        t.client
            .payout(&quote.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "EXPIRED"
    );
    let err = t.client.finalize_payout(&quote.quote_id).await.unwrap_err();
    assert_eq!(err.status(), Some(422));
    assert_eq!(err.code(), Some("QUOTE_EXPIRED"));
    let last = hooks.deliveries().pop().unwrap();
    assert_eq!(last.json["event"], "payouts.withdrawal.expired");
    assert_eq!(last.json["data"]["status"], "expired");

    let stale = t
        .client
        .create_payout_quote(&quote_usdt_ngn("10", "exp-2"))
        .await
        .unwrap();
    t.client.sandbox_advance_clock(901).await.unwrap();
    let err = t
        .client
        .initialize_payout(
            &stale.quote_id,
            &init(&stale.quote_id, "exp-2", "0123456789", None),
        )
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(422));
    assert_eq!(err.code(), Some("QUOTE_EXPIRED"));
}

#[tokio::test]
async fn refusals_name_the_field_and_change_nothing() {
    let t = support::spawn().await;
    let mut q = quote_usdt_ngn("0.5", "lim-1");
    let err = t.client.create_payout_quote(&q).await.unwrap_err();
    assert_eq!(
        err.problem().unwrap().errors[0].field,
        "settlement_amount",
        "750 NGN is under the limit"
    );
    q.amount = Some(dec("1.0000001"));
    assert_eq!(
        t.client
            .create_payout_quote(&q)
            .await
            .unwrap_err()
            .problem()
            .unwrap()
            .errors[0]
            .field,
        "amount"
    );
    q.amount = None;
    q.settlement_amount = Some(dec("30000"));
    let by_settlement = t.client.create_payout_quote(&q).await.unwrap();
    assert_eq!(by_settlement.amount, dec("20"));
    q.reference = "lim-2".into();
    q.to_currency = "KES".into();
    assert_eq!(
        t.client
            .create_payout_quote(&q)
            .await
            .unwrap_err()
            .problem()
            .unwrap()
            .errors[0]
            .field,
        "to_currency"
    );

    // GH demands a reason from its list.
    let gh = QuoteRequest {
        amount: Some(dec("10")),
        country: "GH".into(),
        from_asset: "USDC".into(),
        to_currency: "GHS".into(),
        source: "offchain".into(),
        reference: "gh-1".into(),
        ..Default::default()
    };
    let gh_quote = t.client.create_payout_quote(&gh).await.unwrap();
    let mut req = init(&gh_quote.quote_id, "gh-1", "0123456789", None);
    req.beneficiary.country = "GH".into();
    req.beneficiary.bank_code = Some("GCB".into());
    req.payment_reason = "gift".into();
    let err = t
        .client
        .initialize_payout(&gh_quote.quote_id, &req)
        .await
        .unwrap_err();
    assert_eq!(err.problem().unwrap().errors[0].field, "payment_reason");
    req.payment_reason = "family_support".into();
    req.beneficiary.bank_code = None;
    assert_eq!(
        t.client
            .initialize_payout(&gh_quote.quote_id, &req)
            .await
            .unwrap_err()
            .problem()
            .unwrap()
            .errors[0]
            .field,
        "beneficiary.bank_code"
    );
    req.beneficiary.bank_code = Some("GCB".into());
    req.quote_id = by_settlement.quote_id.clone();
    assert_eq!(
        t.client
            .initialize_payout(&gh_quote.quote_id, &req)
            .await
            .unwrap_err()
            .problem()
            .unwrap()
            .errors[0]
            .field,
        "quote_id"
    );
    req.quote_id = gh_quote.quote_id.clone();
    assert_eq!(
        t.client
            .initialize_payout(&gh_quote.quote_id, &req)
            .await
            .unwrap()
            .status
            .as_str(),
        "INITIATED"
    );

    // Finalize before initialize, and a payout larger than the wallet.
    let err = t
        .client
        .finalize_payout(&by_settlement.quote_id)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some("INVALID_STATE"));
    // Three payouts of 3,000 USDT (plus fees) leave 910 USDT: not enough for 1,000.
    for i in 0..3 {
        let reference = format!("drain-{i}");
        let q = t
            .client
            .create_payout_quote(&quote_usdt_ngn("3000", &reference))
            .await
            .unwrap();
        t.client
            .initialize_payout(&q.quote_id, &init(&q.quote_id, &reference, "0123456789", None))
            .await
            .unwrap();
        t.client.finalize_payout(&q.quote_id).await.unwrap();
    }
    let big = t
        .client
        .create_payout_quote(&quote_usdt_ngn("1000", "big-1"))
        .await
        .unwrap();
    t.client
        .initialize_payout(&big.quote_id, &init(&big.quote_id, "big-1", "0123456789", None))
        .await
        .unwrap();
    let err = t.client.finalize_payout(&big.quote_id).await.unwrap_err();
    assert_eq!(err.code(), Some("INSUFFICIENT_BALANCE"));
    assert_eq!(
        t.client
            .payout(&big.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "INITIATED"
    );
    assert_eq!(
        t.client.balance("USDT").await.unwrap().available_balance,
        BaseUnits(910_000_000)
    );
}

#[tokio::test]
async fn quotes_and_initialize_are_idempotent_by_reference() {
    let t = support::spawn().await;
    let a = t
        .client
        .create_payout_quote(&quote_usdt_ngn("20", "idem-1"))
        .await
        .unwrap();
    let b = t
        .client
        .create_payout_quote(&quote_usdt_ngn("20", "idem-1"))
        .await
        .unwrap();
    assert_eq!(a.id, b.id);
    let err = t
        .client
        .create_payout_quote(&quote_usdt_ngn("21", "idem-1"))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(409));
    let req = init(&a.quote_id, "idem-1", "0123456789", None);
    let first = t.client.initialize_payout(&a.quote_id, &req).await.unwrap();
    let again = t.client.initialize_payout(&a.quote_id, &req).await.unwrap();
    assert_eq!(first.trip.initialized_at, again.trip.initialized_at);
    assert_eq!(t.client.payouts(None, None).await.unwrap().total, 1);
}

#[tokio::test]
async fn the_rail_settles_on_demand() {
    let t = support::spawn().await;
    let q = t
        .client
        .create_payout_quote(&quote_usdt_ngn("10", "now-1"))
        .await
        .unwrap();
    t.client
        .initialize_payout(&q.quote_id, &init(&q.quote_id, "now-1", "0123456789", None))
        .await
        .unwrap();
    let err = t
        .client
        .sandbox_settle_payout(&q.id.to_string(), true)
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(422), "not finalized yet");
    t.client.finalize_payout(&q.quote_id).await.unwrap();
    let settled = t
        .client
        .sandbox_settle_payout(&q.id.to_string(), false)
        .await
        .unwrap();
    assert_eq!(settled.status.as_str(), "FAILED");
    let listed = t.client.payouts(Some("FAILED"), None).await.unwrap();
    assert_eq!(listed.payouts.len(), 1);
}

#[tokio::test]
async fn beneficiaries_are_saved_listed_changed_and_deleted() {
    let t = support::spawn().await;
    let bank = t
        .client
        .create_beneficiary(&NewBeneficiary {
            kind: "bank".into(),
            name: "Ada's salary account".into(),
            destination: json!({"account_name": "Ada Okafor", "account_number": "0123456789", "bank_code": "058", "country": "NG"}),
        })
        .await
        .unwrap();
    assert!(bank.is_active && !bank.is_blacklisted);
    let crypto = t
        .client
        .create_beneficiary(&NewBeneficiary {
            kind: "crypto".into(),
            name: "Cold wallet".into(),
            destination: json!({"address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "chain": "ethereum"}),
        })
        .await
        .unwrap();
    assert!(matches!(crypto.destination, Destination::Crypto { .. }));
    let bad = t
        .client
        .create_beneficiary(&NewBeneficiary {
            kind: "crypto".into(),
            name: "Typo".into(),
            destination: json!({"address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "chain": "ethereum"}),
        })
        .await
        .unwrap_err();
    assert_eq!(bad.problem().unwrap().errors[0].field, "destination.address");

    let page = t.client.beneficiaries(Some(1), Some(1)).await.unwrap();
    assert_eq!(page.total, 2);
    assert_eq!(page.beneficiaries[0].id, crypto.id);

    let renamed = t
        .client
        .update_beneficiary(
            &bank.id.to_string(),
            &BeneficiaryUpdate {
                name: Some("Ada (new bank)".into()),
                is_active: Some(false),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(renamed.name, "Ada (new bank)");
    assert!(!renamed.is_active);
    assert_eq!(renamed.destination, bank.destination);

    t.client.delete_beneficiary(&bank.id.to_string()).await.unwrap();
    assert_eq!(
        t.client
            .beneficiary(&bank.id.to_string())
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
    assert_eq!(t.client.beneficiaries(None, None).await.unwrap().total, 1);
}

#[tokio::test]
async fn market_prices_move_payout_rates() {
    let t = support::spawn().await;
    let prices = t.client.trading_prices().await.unwrap().prices;
    let usdt_ngn = prices
        .iter()
        .find(|p| p.base_currency == "USDT" && p.quote_currency == "NGN")
        .unwrap();
    assert_eq!(usdt_ngn.price, dec("1500"));
    t.client
        .sandbox_set_price("USDT", "NGN", dec("1520.5"))
        .await
        .unwrap();
    let quote = t
        .client
        .create_payout_quote(&quote_usdt_ngn("10", "rate-1"))
        .await
        .unwrap();
    assert_eq!(quote.exchange_rate.rate, dec("1520.5"));
    assert_eq!(quote.settlement_amount, dec("15205"));
    let err = t
        .client
        .sandbox_set_price("DOGE", "NGN", dec("1"))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    let err = t
        .client
        .sandbox_set_price("USDT", "NGN", dec("0"))
        .await
        .unwrap_err();
    assert_eq!(err.problem().unwrap().errors[0].field, "price");
}

#[tokio::test]
async fn an_onchain_payout_waits_for_its_confirmed_deposit_then_runs_as_offchain() {
    use paydesk_api::models::control::SimulateDeposit;
    let t = support::spawn().await;
    let mut request = quote_usdt_ngn("100", "chain-1");
    request.source = "onchain".into();
    request.chain = Some("ethereum".into());
    let quote = t.client.create_payout_quote(&request).await.unwrap();
    assert!(quote.deposit_address.is_none(), "a quote has no address yet");
    let before = t.client.balance("USDT").await.unwrap().available_balance;

    let initialized = t
        .client
        .initialize_payout(
            &quote.quote_id,
            &init(&quote.quote_id, "chain-1", "0123456789", None),
        )
        .await
        .unwrap();
    let address = initialized.deposit_address.clone().expect("a deposit address");
    assert!(address.starts_with("0x") && address.len() == 42);
    assert!(initialized.awaits_deposit());
    assert_eq!(t.client.balance("USDT").await.unwrap().available_balance, before);
    // Initialize's idempotent repeat and a read give the same address.
    let read = t.client.payout(&quote.id.to_string()).await.unwrap();
    assert_eq!(read.deposit_address.as_deref(), Some(address.as_str()));

    // No deposit: finalize is refused, and nothing changes.
    let refused = t.client.finalize_payout(&quote.quote_id).await.unwrap_err();
    assert!(refused.is_deposit_not_confirmed(), "{refused:?}");
    assert!(refused.problem().unwrap().detail.contains(&address));
    assert_eq!(
        t.client
            .payout(&quote.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "INITIATED"
    );

    // A deposit short of amount + fees (101 USDT), and a detected one that
    // is not confirmed yet, are not enough either.
    let deposit = |amount: i64| SimulateDeposit {
        chain: "ethereum".into(),
        address: address.clone(),
        currency: "USDT".into(),
        amount: BaseUnits(amount),
    };
    let first = t.client.sandbox_deposit(&deposit(60_000_000)).await.unwrap();
    assert_eq!(first.metadata["payout_id"], json!(quote.id));
    t.client.sandbox_advance_clock(60).await.unwrap();
    t.client.sandbox_deposit(&deposit(41_000_000)).await.unwrap();
    let refused = t.client.finalize_payout(&quote.quote_id).await.unwrap_err();
    assert!(refused.is_deposit_not_confirmed());
    t.client.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(
        t.client.balance("USDT").await.unwrap().available_balance.value(),
        before.value() + 101_000_000,
        "the deposits credit the wallet"
    );

    let finalized = t.client.finalize_payout(&quote.quote_id).await.unwrap();
    assert_eq!(finalized.status.as_str(), "PENDING");
    assert!(!finalized.awaits_deposit());
    assert_eq!(
        t.client.balance("USDT").await.unwrap().available_balance,
        before,
        "finalize debits amount + fees as offchain does"
    );
    t.client.sandbox_advance_clock(90).await.unwrap();
    assert_eq!(
        t.client
            .payout(&quote.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "COMPLETED"
    );
}

#[tokio::test]
async fn a_failed_onchain_payout_returns_its_debit_and_a_stranger_address_is_refused() {
    use paydesk_api::models::control::SimulateDeposit;
    let t = support::spawn().await;
    let mut request = quote_usdt_ngn("50", "chain-fail");
    request.source = "onchain".into();
    request.chain = Some("tron".into());
    let quote = t.client.create_payout_quote(&request).await.unwrap();
    let payout = t
        .client
        .initialize_payout(
            &quote.quote_id,
            &init(&quote.quote_id, "chain-fail", "1234509999", None),
        )
        .await
        .unwrap();
    let address = payout.deposit_address.unwrap();
    assert!(address.starts_with('T'));
    let deposit = SimulateDeposit {
        chain: "tron".into(),
        address,
        currency: "USDT".into(),
        amount: BaseUnits(50_500_000),
    };
    // The address is the payout's on tron only.
    let elsewhere = SimulateDeposit {
        chain: "ethereum".into(),
        ..deposit.clone()
    };
    assert!(t.client.sandbox_deposit(&elsewhere).await.is_err());
    t.client.sandbox_deposit(&deposit).await.unwrap();
    t.client.sandbox_advance_clock(60).await.unwrap();
    let before = t.client.balance("USDT").await.unwrap().available_balance;
    t.client.finalize_payout(&quote.quote_id).await.unwrap();
    t.client.sandbox_advance_clock(86_400).await.unwrap();
    assert_eq!(
        t.client
            .payout(&quote.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "FAILED"
    );
    assert_eq!(t.client.balance("USDT").await.unwrap().available_balance, before);
    let reversal = t.client.transaction("chain-fail_REVERSAL").await.unwrap();
    assert_eq!(reversal.amount, BaseUnits(50_500_000));
}
