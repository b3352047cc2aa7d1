//! Customers, card KYC and cards over real HTTP, driven by the sandbox
//! clock. After each scenario the money is counted: the USDT wallet, the
//! cards' balances, the fees and the merchants' takings add up to the
//! opening balance.

mod support;

use paydesk_api::models::cards::{
    BalanceChange, BalanceDirection, CardLimits, CardQuery, CardState, NewCard, SimulateSpend,
};
use paydesk_api::models::customers::{CustomerQuery, CustomerUpdate, KycDetails, NewCustomer};
use paydesk_api::units::MicroUnits;
use paydesk_api::{ApiError, Client};
use reqwest::Method;
use serde_json::json;
use support::TestSandbox;

const OPENING_USDT: i64 = 10_000_000_000;

fn problem_code(e: &ApiError) -> (u16, String) {
    (e.status().unwrap_or(0), e.code().unwrap_or_default().to_owned())
}

fn kyc(id_number: &str) -> KycDetails {
    KycDetails {
        country: "NGA".into(),
        date_of_birth: "1990-04-01".into(),
        id_type: "national_id".into(),
        id_number: id_number.into(),
        dial_code: "+234".into(),
        phone_number: "8012345678".into(),
        line1: "1 Marina".into(),
        city: "Lagos".into(),
        state: "Lagos".into(),
        postal_code: "100001".into(),
    }
}

async fn customer(c: &Client, email: &str) -> String {
    c.create_customer(&NewCustomer {
        email: email.into(),
        customer_type: "individual".into(),
        first_name: Some("Ada".into()),
        last_name: Some("Okafor".into()),
        ..NewCustomer::default()
    })
    .await
    .unwrap()
    .id
    .to_string()
}

/// A customer whose card KYC is approved.
async fn approved_customer(t: &TestSandbox, email: &str) -> String {
    let id = customer(&t.client, email).await;
    t.client.submit_card_kyc(&id, &kyc("A1234567")).await.unwrap();
    t.client.sandbox_advance_clock(60).await.unwrap();
    id
}

fn virtual_card(customer_id: &str, amount: i64) -> NewCard {
    NewCard {
        amount: MicroUnits(amount),
        card_type: Some("virtual".into()),
        currency: "USD".into(),
        customer_id: Some(customer_id.parse().unwrap()),
        ..NewCard::default()
    }
}

fn lite_card(customer_id: &str, amount: i64, terminate_date: &str) -> NewCard {
    NewCard {
        amount: MicroUnits(amount),
        card_type: Some("lite".into()),
        currency: "USD".into(),
        customer_id: Some(customer_id.parse().unwrap()),
        card_brand: Some("visa".into()),
        swipe_count: Some(2),
        terminate_date: Some(terminate_date.into()),
        ..NewCard::default()
    }
}

async fn usdt(c: &Client) -> i64 {
    c.balance("USDT").await.unwrap().available_balance.value()
}

async fn day(c: &Client, offset_days: i64) -> String {
    let now = c.sandbox_clock().await.unwrap().now;
    (now + chrono::Duration::days(offset_days))
        .format("%Y-%m-%d")
        .to_string()
}

/// No money appears or vanishes: wallet + cards + fees + spends = opening.
async fn assert_money_kept(c: &Client) {
    let wallet = usdt(c).await;
    let cards = c
        .cards(&CardQuery {
            limit: Some(100),
            ..CardQuery::default()
        })
        .await
        .unwrap()
        .cards;
    let mut on_cards = 0;
    let mut fees = 0;
    let mut spent = 0;
    let mut in_flight = 0;
    for card in &cards {
        on_cards += card.balance_amount.value();
        let txs = c
            .card_transactions(&card.id.to_string(), None, Some(100))
            .await
            .unwrap()
            .transactions;
        for tx in txs {
            match (tx.kind.as_str(), tx.status.as_str()) {
                (_, "failed") => {}
                ("spend", "completed") => spent += tx.amount.value(),
                ("funding", "pending") => {
                    // Paid by the wallet, not yet on the card.
                    in_flight += tx.amount.value();
                    fees += tx.fee_amount.value();
                }
                ("funding", _) | ("withdrawal", "completed") => fees += tx.fee_amount.value(),
                _ => {}
            }
        }
    }
    assert_eq!(
        wallet + on_cards + fees + spent + in_flight,
        OPENING_USDT,
        "wallet {wallet} + cards {on_cards} + fees {fees} + spends {spent}"
    );
}

#[tokio::test]
async fn customers_are_created_found_updated_blacklisted_and_deleted() {
    let t = support::spawn().await;
    let c = &t.client;
    let id = customer(c, "ada@example.com").await;
    let dup = c
        .create_customer(&NewCustomer {
            email: "ADA@example.com".into(),
            customer_type: "individual".into(),
            ..NewCustomer::default()
        })
        .await
        .unwrap_err();
    assert_eq!(problem_code(&dup), (400, "VALIDATION_ERROR".into()));
    for (email, kind) in [("not-an-email", "individual"), ("b@example.com", "team")] {
        let e = c
            .create_customer(&NewCustomer {
                email: email.into(),
                customer_type: kind.into(),
                ..NewCustomer::default()
            })
            .await
            .unwrap_err();
        assert_eq!(e.status(), Some(400), "{email} {kind}");
    }
    customer(c, "kofi@example.com").await;

    let found = c
        .customers(&CustomerQuery {
            email: Some("ada@example.com".into()),
            ..CustomerQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(found.total, 1);
    assert_eq!(found.customers[0].id.to_string(), id);
    let all = c
        .customers(&CustomerQuery {
            limit: Some(1),
            ..CustomerQuery::default()
        })
        .await
        .unwrap();
    assert_eq!((all.total, all.customers.len(), all.has_more), (2, 1, true));

    let updated = c
        .update_customer(
            &id,
            &CustomerUpdate {
                last_name: Some("Mensah".into()),
                ..CustomerUpdate::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (updated.first_name.as_str(), updated.last_name.as_str()),
        ("Ada", "Mensah")
    );
    assert!(!c.blacklist_customer(&id, true).await.unwrap().is_active);
    let inactive = c
        .customers(&CustomerQuery {
            is_active: Some(false),
            ..CustomerQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(inactive.total, 1);
    assert!(c.blacklist_customer(&id, false).await.unwrap().is_active);

    c.delete_customer(&id).await.unwrap();
    assert_eq!(c.customer(&id).await.unwrap_err().status(), Some(404));
    let (status, _) = t.send(Method::GET, "/api/customers/not-a-uuid", "").await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn card_kyc_is_reviewed_on_the_clock_and_gates_cards() {
    let t = support::spawn().await;
    let c = &t.client;
    let ada = customer(c, "ada@example.com").await;
    let no_kyc = c.create_card(&virtual_card(&ada, 5_000_000)).await.unwrap_err();
    assert_eq!(problem_code(&no_kyc), (422, "KYC_NOT_APPROVED".into()));

    let pending = c.submit_card_kyc(&ada, &kyc("A1234567")).await.unwrap();
    assert_eq!(pending.status.as_str(), "pending");
    let again = c.submit_card_kyc(&ada, &kyc("A1234567")).await.unwrap_err();
    assert_eq!(again.status(), Some(422));
    let refused = c.create_card(&virtual_card(&ada, 5_000_000)).await.unwrap_err();
    assert_eq!(problem_code(&refused), (422, "KYC_NOT_APPROVED".into()));
    assert_eq!(usdt(c).await, OPENING_USDT, "a refused card moves nothing");

    c.sandbox_advance_clock(59).await.unwrap();
    assert_eq!(c.card_kyc(&ada).await.unwrap().status.as_str(), "pending");
    c.sandbox_advance_clock(1).await.unwrap();
    assert_eq!(c.card_kyc(&ada).await.unwrap().status.as_str(), "approved");

    let kofi = customer(c, "kofi@example.com").await;
    let mut bad = kyc("X0000");
    bad.date_of_birth = "01/04/1990".into();
    let e = c.submit_card_kyc(&kofi, &bad).await.unwrap_err();
    assert_eq!(e.status(), Some(400));
    bad.date_of_birth = "1990-04-01".into();
    c.submit_card_kyc(&kofi, &bad).await.unwrap();
    c.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(c.card_kyc(&kofi).await.unwrap().status.as_str(), "rejected");
    let rejected = c.create_card(&virtual_card(&kofi, 5_000_000)).await.unwrap_err();
    assert_eq!(problem_code(&rejected), (422, "KYC_NOT_APPROVED".into()));
    // A corrected submission after a rejection is reviewed again.
    c.submit_card_kyc(&kofi, &kyc("X1111")).await.unwrap();
    c.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(c.card_kyc(&kofi).await.unwrap().status.as_str(), "approved");
    assert_money_kept(c).await;
    support::assert_ledger_adds_up(c).await;
}

#[tokio::test]
async fn a_virtual_card_is_provisioned_funded_frozen_and_terminated_on_the_clock() {
    let t = support::spawn().await;
    let hook = support::Receiver::start(0).await;
    let c = &t.client;
    c.sandbox_set_webhook(&hook.url, None).await.unwrap();
    let ada = approved_customer(&t, "ada@example.com").await;

    let card = c.create_card(&virtual_card(&ada, 10_000_000)).await.unwrap();
    assert_eq!(
        (
            card.status.as_str(),
            card.created_status.as_str(),
            card.masked_pan.as_str()
        ),
        ("pending", "processing", "")
    );
    assert_eq!(card.balance_amount, MicroUnits(0));
    assert_eq!(card.name, "Ada Okafor");
    assert_eq!(card.reference, format!("CARD_CREATE_{}", card.id));
    assert_eq!(usdt(c).await, OPENING_USDT - 10_100_000, "amount + 1% fee");
    let id = card.id.to_string();

    c.sandbox_advance_clock(29).await.unwrap();
    assert_eq!(c.card(&id).await.unwrap().status.as_str(), "pending");
    c.sandbox_advance_clock(1).await.unwrap();
    let active = c.card(&id).await.unwrap();
    assert_eq!(
        (active.status.as_str(), active.created_status.as_str()),
        ("active", "completed")
    );
    assert_eq!(active.balance_amount, MicroUnits(10_000_000));
    assert_eq!(active.masked_pan.len(), 16);
    assert_eq!(&active.masked_pan[6..12], "******");
    assert_eq!(&active.masked_pan[..6], active.first_six_digit);
    assert_eq!(&active.masked_pan[12..], active.last_four_digit);
    let ready = hook
        .deliveries()
        .into_iter()
        .find(|d| d.json["event"] == "virtualcard.created.completed")
        .expect("card-ready webhook");
    assert_eq!(ready.json["data"]["card_id"], json!(id));
    assert_eq!(ready.json["data"]["status"], "active");

    // Fund: pending with equal balances, then completed on the clock.
    let fund = |reference: &str, amount: i64| BalanceChange {
        amount: MicroUnits(amount),
        direction: BalanceDirection::Fund,
        reference: reference.into(),
    };
    let first = c
        .change_card_balance(&id, &fund("fund-1", 5_000_000))
        .await
        .unwrap();
    assert!(!first.success);
    let tx = first.transaction;
    assert_eq!((tx.kind.as_str(), tx.status.as_str()), ("funding", "pending"));
    assert_eq!(tx.balance_before, tx.balance_after);
    assert_eq!(
        (tx.fee_amount, tx.fee_type.as_str()),
        (MicroUnits(50_000), "funding_fee")
    );
    let replay = c
        .change_card_balance(&id, &fund("fund-1", 5_000_000))
        .await
        .unwrap();
    assert_eq!(replay.transaction.id, tx.id, "same reference, same transaction");
    let too_soon = c
        .change_card_balance(&id, &fund("fund-2", 1_000_000))
        .await
        .unwrap_err();
    assert_eq!(problem_code(&too_soon), (429, "RATE_LIMITED".into()));
    let conflict = c
        .change_card_balance(&id, &fund("fund-1", 6_000_000))
        .await
        .unwrap_err();
    assert_eq!(conflict.status(), Some(409));
    let as_withdrawal = BalanceChange {
        direction: BalanceDirection::Withdraw,
        ..fund("fund-1", 5_000_000)
    };
    let e = c.change_card_balance(&id, &as_withdrawal).await.unwrap_err();
    assert_eq!(e.status(), Some(409), "fund and withdraw share their references");
    let huge = c
        .change_card_balance(&id, &fund("fund-huge", i64::MAX))
        .await
        .unwrap_err();
    assert_eq!(
        huge.status(),
        Some(400),
        "a huge amount is refused, never a crash"
    );

    c.sandbox_advance_clock(20).await.unwrap();
    let done = c.card_transaction(&id, &tx.id.to_string()).await.unwrap();
    assert_eq!(done.status.as_str(), "completed");
    assert_eq!(
        (done.balance_before, done.balance_after),
        (MicroUnits(10_000_000), MicroUnits(15_000_000))
    );
    assert_eq!(c.card(&id).await.unwrap().balance_amount, MicroUnits(15_000_000));
    assert!(hook
        .deliveries()
        .iter()
        .any(|d| d.json["event"] == "virtualcard.topup.completed" && d.json["data"]["id"] == json!(tx.id)));
    c.sandbox_advance_clock(10).await.unwrap();
    c.change_card_balance(&id, &fund("fund-2", 1_000_000))
        .await
        .unwrap();

    // Withdraw: the card gives amount, the wallet gets amount - 1%.
    let withdraw = |reference: &str, amount: i64| BalanceChange {
        amount: MicroUnits(amount),
        direction: BalanceDirection::Withdraw,
        reference: reference.into(),
    };
    let too_much = c
        .change_card_balance(&id, &withdraw("w-0", 99_000_000))
        .await
        .unwrap_err();
    assert_eq!(problem_code(&too_much), (422, "INSUFFICIENT_BALANCE".into()));
    let before = usdt(c).await;
    c.change_card_balance(&id, &withdraw("w-1", 4_000_000))
        .await
        .unwrap();
    let again = c
        .change_card_balance(&id, &withdraw("w-2", 1_000_000))
        .await
        .unwrap_err();
    assert_eq!(again.status(), Some(429));
    c.sandbox_advance_clock(20).await.unwrap();
    assert_eq!(usdt(c).await, before + 4_000_000 - 40_000);
    assert_eq!(c.card(&id).await.unwrap().balance_amount, MicroUnits(12_000_000));
    assert!(hook
        .deliveries()
        .iter()
        .any(|d| d.json["event"] == "virtualcard.withdrawal.completed"));

    // Freeze blocks spends; other statuses are refused.
    let bogus = c.set_card_status(&id, &CardState::Terminated).await.unwrap_err();
    assert_eq!(bogus.status(), Some(400));
    assert_eq!(
        c.set_card_status(&id, &CardState::Frozen)
            .await
            .unwrap()
            .status
            .as_str(),
        "frozen"
    );
    let declined = c
        .sandbox_card_spend(
            &id,
            &SimulateSpend {
                amount: MicroUnits(1_000_000),
                merchant: Some("Coffee".into()),
            },
        )
        .await
        .unwrap();
    assert!(!declined.approved);
    assert_eq!(
        c.set_card_status(&id, &CardState::Active)
            .await
            .unwrap()
            .status
            .as_str(),
        "active"
    );
    let spent = c
        .sandbox_card_spend(
            &id,
            &SimulateSpend {
                amount: MicroUnits(2_000_000),
                merchant: Some("Coffee".into()),
            },
        )
        .await
        .unwrap();
    assert!(spent.approved);
    assert_eq!(c.card(&id).await.unwrap().balance_amount, MicroUnits(10_000_000));
    let debit = hook.wait_for("virtualcard.transaction.debit").await;
    assert_eq!(debit.json["data"]["card_id"], json!(id));
    assert_eq!(debit.json["data"]["amount"], "2000000");

    // Termination: refused under 24 hours, then returns the balance.
    let young = c.terminate_card(&id, "lost").await.unwrap_err();
    assert_eq!(problem_code(&young), (422, "CARD_TOO_NEW".into()));
    assert!(young.to_string().contains("freeze"), "{young}");
    c.sandbox_advance_clock(24 * 3600).await.unwrap();
    let before = usdt(c).await;
    let (status, body) = t.send(Method::DELETE, &format!("/api/cards/{id}"), "{}").await;
    assert_eq!(status, 400, "a reason is required: {body}");
    let ended = c.terminate_card(&id, "customer left").await.unwrap();
    assert_eq!(ended.status.as_str(), "terminated");
    assert_eq!(ended.remaining_balance, MicroUnits(10_000_000));
    assert!(ended.balance_returned);
    assert_eq!(usdt(c).await, before + 10_000_000, "no fee on termination");
    let gone = c.card(&id).await.unwrap();
    assert_eq!(
        (gone.status.as_str(), gone.balance_amount),
        ("terminated", MicroUnits(0))
    );
    for e in [
        c.change_card_balance(&id, &fund("fund-3", 1_000_000))
            .await
            .unwrap_err(),
        c.set_card_status(&id, &CardState::Active).await.unwrap_err(),
        c.terminate_card(&id, "again").await.unwrap_err(),
    ] {
        assert_eq!(e.status(), Some(422), "{e}");
    }
    assert_money_kept(c).await;
    support::assert_ledger_adds_up(c).await;
}

#[tokio::test]
async fn lite_cards_check_every_rule_before_anything_moves() {
    let t = support::spawn().await;
    let c = &t.client;
    let ada = approved_customer(&t, "ada@example.com").await;
    let tomorrow = day(c, 1).await;
    let today = day(c, 0).await;

    let mut cases: Vec<(&str, NewCard)> = Vec::new();
    cases.push(("amount below 2.00", lite_card(&ada, 1_999_999, &tomorrow)));
    cases.push(("amount above 250.00", lite_card(&ada, 250_000_001, &tomorrow)));
    let mut no_brand = lite_card(&ada, 5_000_000, &tomorrow);
    no_brand.card_brand = None;
    cases.push(("card_brand", no_brand));
    let mut zero_swipes = lite_card(&ada, 5_000_000, &tomorrow);
    zero_swipes.swipe_count = Some(0);
    cases.push(("swipe_count", zero_swipes));
    let mut no_swipes = lite_card(&ada, 5_000_000, &tomorrow);
    no_swipes.swipe_count = None;
    cases.push(("swipe_count", no_swipes));
    cases.push(("terminate_date", lite_card(&ada, 5_000_000, &today)));
    let mut no_date = lite_card(&ada, 5_000_000, &tomorrow);
    no_date.terminate_date = None;
    cases.push(("terminate_date", no_date));
    for (what, body) in cases {
        let e = c.create_card(&body).await.unwrap_err();
        assert_eq!(problem_code(&e), (400, "VALIDATION_ERROR".into()), "{what}");
    }
    let pending = customer(c, "kofi@example.com").await;
    c.submit_card_kyc(&pending, &kyc("B7654321")).await.unwrap();
    let e = c
        .create_card(&lite_card(&pending, 5_000_000, &tomorrow))
        .await
        .unwrap_err();
    assert_eq!(problem_code(&e), (422, "KYC_NOT_APPROVED".into()));
    assert_eq!(usdt(c).await, OPENING_USDT, "refusals fund nothing");
    assert_eq!(c.cards(&CardQuery::default()).await.unwrap().page_info.total, 0);

    // Both ends of the amount range are accepted.
    let low = c
        .create_card(&lite_card(&ada, 2_000_000, &tomorrow))
        .await
        .unwrap();
    let high = c
        .create_card(&lite_card(&ada, 250_000_000, &day(c, 3).await))
        .await
        .unwrap();
    assert_eq!(low.card_type, "lite");
    c.sandbox_advance_clock(30).await.unwrap();
    let id = high.id.to_string();
    let e = c
        .change_card_balance(
            &id,
            &BalanceChange {
                amount: MicroUnits(1_000_000),
                direction: BalanceDirection::Fund,
                reference: "lite-fund".into(),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(422), "lite cards are not funded");

    // Two swipes, then declined.
    let swipe = SimulateSpend {
        amount: MicroUnits(1_000_000),
        merchant: None,
    };
    assert!(c.sandbox_card_spend(&id, &swipe).await.unwrap().approved);
    assert!(c.sandbox_card_spend(&id, &swipe).await.unwrap().approved);
    let third = c.sandbox_card_spend(&id, &swipe).await.unwrap();
    assert!(!third.approved);
    assert!(third.decline_reason.unwrap().contains("swipes"));
    assert_eq!(c.card(&id).await.unwrap().balance_amount, MicroUnits(248_000_000));

    // The terminate_date ends the card and returns its balance.
    let before = usdt(c).await;
    c.sandbox_advance_clock(4 * 86_400).await.unwrap();
    let ended = c.card(&id).await.unwrap();
    assert_eq!(ended.status.as_str(), "terminated");
    assert_eq!(
        c.card(&low.id.to_string()).await.unwrap().status.as_str(),
        "terminated"
    );
    assert_eq!(usdt(c).await, before + 248_000_000 + 2_000_000);
    assert_money_kept(c).await;
    support::assert_ledger_adds_up(c).await;
}

#[tokio::test]
async fn secure_details_limits_spend_limits_and_listing() {
    let t = support::spawn().await;
    let c = &t.client;
    let ada = approved_customer(&t, "ada@example.com").await;
    let mut body = virtual_card(&ada, 20_000_000);
    body.name = Some("Travel Card".into());
    body.reference = Some("card-ref-1".into());
    let card = c.create_card(&body).await.unwrap();
    let replay = c.create_card(&body).await.unwrap();
    assert_eq!(replay.id, card.id, "the same reference issues one card");
    body.amount = MicroUnits(30_000_000);
    assert_eq!(c.create_card(&body).await.unwrap_err().status(), Some(409));
    let id = card.id.to_string();
    assert_eq!(c.card_secure_details(&id).await.unwrap_err().status(), Some(422));
    c.sandbox_advance_clock(30).await.unwrap();

    let details = c.card_secure_details(&id).await.unwrap();
    assert_eq!(details.card_number.len(), 16);
    assert!(paydesk_sandbox::areas::cards::model::passes_luhn(
        &details.card_number
    ));
    assert_eq!(details.cvv.len(), 3);
    assert_eq!(details.expiry_month.len(), 2);
    assert_eq!(details.expiry_year.len(), 4);
    let active = c.card(&id).await.unwrap();
    assert!(details.card_number.ends_with(&active.last_four_digit));
    c.card_secure_details(&id).await.unwrap();
    let third = c.card_secure_details(&id).await.unwrap_err();
    assert_eq!(problem_code(&third), (429, "RATE_LIMITED".into()));
    // Waiting exactly Retry-After is enough.
    let ApiError::Problem {
        retry_after: Some(wait),
        ..
    } = third
    else {
        panic!("a 429 carries Retry-After: {third:?}");
    };
    assert!((1..=60).contains(&wait.as_secs()), "{wait:?}");
    c.sandbox_advance_clock(wait.as_secs()).await.unwrap();
    c.card_secure_details(&id).await.unwrap();

    let limits = CardLimits {
        transaction_limit: Some(MicroUnits(5_000_000)),
        daily_limit: Some(MicroUnits(8_000_000)),
        ..CardLimits::default()
    };
    let limited = c.set_card_spend_limits(&id, &limits).await.unwrap();
    assert_eq!(limited.card_limits, limits);
    let spend = |amount| SimulateSpend {
        amount: MicroUnits(amount),
        merchant: Some("Shop".into()),
    };
    assert!(
        !c.sandbox_card_spend(&id, &spend(5_000_001))
            .await
            .unwrap()
            .approved
    );
    assert!(
        c.sandbox_card_spend(&id, &spend(5_000_000))
            .await
            .unwrap()
            .approved
    );
    let over_day = c.sandbox_card_spend(&id, &spend(3_000_001)).await.unwrap();
    assert!(over_day.decline_reason.unwrap().contains("daily_limit"));
    assert!(
        c.sandbox_card_spend(&id, &spend(3_000_000))
            .await
            .unwrap()
            .approved
    );
    let (status, _) = t
        .send(
            Method::PUT,
            &format!("/api/cards/{id}/spend-limits"),
            r#"{"daily_limit": 0}"#,
        )
        .await;
    assert_eq!(status, 400);

    // Listing: filters, search by last four or name, page_info.
    let other = c.create_card(&virtual_card(&ada, 1_000_000)).await.unwrap();
    let page = c
        .cards(&CardQuery {
            limit: Some(1),
            ..CardQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(page.cards[0].id, other.id, "newest first");
    assert!(page.page_info.has_next_page && !page.page_info.has_previous_page);
    assert_eq!(page.page_info.total, 2);
    let next = c
        .cards(&CardQuery {
            limit: Some(1),
            cursor: Some(page.page_info.next_cursor.clone()),
            ..CardQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(next.cards[0].id, card.id);
    assert!(next.page_info.has_previous_page);
    let search = |s: &str| CardQuery {
        search: Some(s.into()),
        ..CardQuery::default()
    };
    assert_eq!(
        c.cards(&search(&active.last_four_digit)).await.unwrap().cards[0].id,
        card.id
    );
    assert_eq!(c.cards(&search("travel")).await.unwrap().page_info.total, 1);
    let pending = c
        .cards(&CardQuery {
            status: Some("pending".into()),
            ..CardQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(pending.cards.len(), 1);
    let (status, _) = t.send(Method::GET, "/api/cards?status=lost", "").await;
    assert_eq!(status, 400);
    let of_ada = c.customer_cards(&ada, None, None).await.unwrap();
    assert_eq!(of_ada.page_info.total, 2);
    let e = c.delete_customer(&ada).await.unwrap_err();
    assert_eq!(e.status(), Some(422), "a customer with live cards stays");
    let txs = c.card_transactions(&id, None, None).await.unwrap();
    assert_eq!(txs.transactions.len(), 5, "the load, two spends and two declines");
    assert_money_kept(c).await;
    support::assert_ledger_adds_up(c).await;
}

#[tokio::test]
async fn the_older_form_creates_the_customer_with_its_kyc() {
    let t = support::spawn().await;
    let (status, body) = t
        .send(
            Method::POST,
            "/api/cards",
            &json!({
                "amount": 3000000, "card_type": "virtual", "currency": "USD", "name": "Ama Owusu",
                "customer": {
                    "customer_type": "individual", "first_name": "Ama", "last_name": "Owusu",
                    "email": "ama@example.com", "phone_number": "241234567", "dial_code": "+233",
                    "date_of_birth": "1992-02-02", "id_type": "passport", "id_number": "G123",
                    "line1": "2 Ring Road", "city": "Accra", "state": "Greater Accra",
                    "postal_code": "00233", "country": "GHA"
                }
            })
            .to_string(),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let customer_id = body["data"]["card"]["customer_id"].as_str().unwrap().to_owned();
    let customer = t.client.customer(&customer_id).await.unwrap();
    assert_eq!(customer.email, "ama@example.com");
    assert_eq!(
        t.client.card_kyc(&customer_id).await.unwrap().status.as_str(),
        "approved"
    );
}

/// Clients sort by the time text (the spec lists newest first), so every
/// time carries exactly three fractional digits, even on a whole second.
#[tokio::test]
async fn times_on_the_wire_have_a_fixed_width() {
    let t = support::spawn().await;
    let ada = approved_customer(&t, "ada@example.com").await;
    for amount in [20_000_000, 21_000_000] {
        t.client.create_card(&virtual_card(&ada, amount)).await.unwrap();
    }
    let (status, body) = t.send(reqwest::Method::GET, "/api/cards", "").await;
    assert_eq!(status, 200);
    let cards = body["data"]["cards"]
        .as_array()
        .unwrap_or_else(|| panic!("a list of cards: {body}"));
    assert_eq!(cards.len(), 2);
    for card in cards {
        for field in ["created_at", "updated_at"] {
            let at = card[field].as_str().expect("a time");
            let parsed = chrono::DateTime::parse_from_rfc3339(at).expect("RFC 3339");
            assert_eq!(at, paydesk_api::time::wire(parsed.to_utc()), "{field} is {at}");
            assert_eq!(at.len(), "2026-11-26T03:10:46.000Z".len(), "{field} is {at}");
        }
    }
}
