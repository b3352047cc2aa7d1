//! Lightning over real HTTP: BOLT11 invoices decoded to the
//! specification's published values, invoices of one company paid by
//! another inside the sandbox, no route for outside invoices, fees, max_fee,
//! expiry on the clock, idempotent payments and the webhook.

mod support;

use paydesk_api::models::lightning::{NewInvoice, SendPayment};
use paydesk_api::units::Sats;
use paydesk_api::Client;
use paydesk_sandbox::areas::lightning::bolt11::{payment_hash, NodeKey};
use paydesk_sandbox::fixture::Fixture;
use sha2::{Digest, Sha256};
use uuid::Uuid;

const SPEC_COFFEE: &str = "lnbc2500u1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdq5xysxxatsyp3k7enxv4jsxqzpu9qrsgquk0rl77nj30yxdy8j9vdx85fkpmdla2087ne0xh8nhedh8w27kyke0lp53ut353s06fv3qfegext0eh0ymjpf39tuven09sam30g4vgpfna3rh";

fn invoice(amount: i64, reference: &str, expiry: Option<u32>) -> NewInvoice {
    NewInvoice {
        amount: Sats(amount),
        description: "coffee beans".into(),
        expiry,
        reference: reference.into(),
        ..NewInvoice::default()
    }
}

fn pay(request: &str, reference: &str, max_fee: Option<u64>) -> SendPayment {
    SendPayment {
        request: request.into(),
        reference: reference.into(),
        max_fee,
        ..SendPayment::default()
    }
}

async fn btc(c: &Client) -> i64 {
    c.balance("BTC").await.unwrap().available_balance.value()
}

/// A sandbox with two companies, each with its own client.
async fn two_companies() -> (support::TestSandbox, Client) {
    let mut fixture = Fixture::demo();
    let second = Fixture::single_company("Second Co", Uuid::new_v4(), "second-secret".into());
    fixture.companies.extend(second.companies.clone());
    let t = support::spawn_with(fixture).await;
    let other = support::client_for(
        &t.sandbox,
        &second.companies[0].clients[0].client_id.to_string(),
        "second-secret",
    );
    (t, other)
}

#[tokio::test]
async fn the_specifications_invoice_decodes_to_its_published_values() {
    let t = support::spawn().await;
    let d = t.client.decode_invoice(SPEC_COFFEE).await.unwrap();
    assert_eq!(
        d.payment_hash,
        "0001020304050607080900010203040506070809000102030405060708090102"
    );
    assert_eq!(
        d.destination,
        "03e7156ae33b0a208d0744199163177e909e80176e55d97a2f221ede0f934dd9ad"
    );
    assert_eq!((d.amount_sat, d.amount_msat), (250_000, 250_000_000));
    assert_eq!(d.description, "1 cup coffee");
    assert_eq!(
        (d.timestamp, d.expires_at, d.is_expired),
        (1_496_314_658, 1_496_314_718, true)
    );
    assert_eq!(d.network, "bitcoin");
    let bad = t.client.decode_invoice("lnbc1notaninvoice").await.unwrap_err();
    assert_eq!(bad.status(), Some(400));
}

#[tokio::test]
async fn an_invoice_round_trips_and_is_paid_by_another_company_once() {
    let (t, payer) = two_companies().await;
    let payee = &t.client;
    let hook = support::Receiver::start(0).await;
    payee.sandbox_set_webhook(&hook.url, None).await.unwrap();
    for (amount, ok) in [(0, false), (1, true), (20_000_000, true), (20_000_001, false)] {
        let r = payee
            .create_invoice(&invoice(amount, &format!("bound-{amount}"), None))
            .await;
        assert_eq!(r.is_ok(), ok, "{amount} sats");
    }
    let inv = payee
        .create_invoice(&invoice(50_000, "inv-1", Some(600)))
        .await
        .unwrap();
    assert!(inv.request.starts_with("lntbs500u1"), "{}", inv.request);
    assert_eq!((inv.status.as_str(), inv.preimage.as_str()), ("pending", ""));
    assert!(
        chrono::DateTime::parse_from_rfc3339(&inv.expires_at).is_ok(),
        "RFC 3339 on create"
    );
    let shown = payee.invoice(&inv.id.to_string()).await.unwrap();
    assert!(shown.expires_at.parse::<i64>().is_ok(), "Unix seconds on get");
    assert_eq!(
        payee
            .create_invoice(&invoice(50_000, "inv-1", Some(600)))
            .await
            .unwrap()
            .id,
        inv.id
    );

    let d = payer.decode_invoice(&inv.request).await.unwrap();
    assert_eq!(
        (d.payment_hash.as_str(), d.amount_sat, d.network.as_str()),
        (inv.payment_hash.as_str(), 50_000, "signet")
    );
    let preview = payer.initiate_payment(&inv.request).await.unwrap();
    // 1 sat + 0.1% of 50,000 = 51 sats.
    assert!(preview.route_found);
    assert_eq!((preview.fee_sat, preview.total_sat), (Sats(51), Sats(50_051)));
    let own = payee.initiate_payment(&inv.request).await.unwrap();
    assert!(!own.route_found, "no self-payments");
    let short = payee
        .create_invoice(&invoice(1_000, "short-lived", Some(5)))
        .await
        .unwrap();
    payee.sandbox_advance_clock(5).await.unwrap();
    let gone = payer.initiate_payment(&short.request).await.unwrap();
    assert!(
        !gone.route_found && gone.is_expired,
        "an expired invoice has no route"
    );

    let capped = payer
        .send_payment(&pay(&inv.request, "pay-0", Some(50)))
        .await
        .unwrap_err();
    assert_eq!(capped.status(), Some(422));
    let (payer0, payee0) = (btc(&payer).await, btc(payee).await);
    let paid = payer
        .send_payment(&pay(&inv.request, "pay-1", Some(51)))
        .await
        .unwrap();
    assert_eq!((paid.status.as_str(), paid.fee_sat), ("paid", Sats(51)));
    let preimage = hex::decode(&paid.preimage).unwrap();
    assert_eq!(hex::encode(Sha256::digest(&preimage)), inv.payment_hash);
    assert_eq!(btc(&payer).await, payer0 - 50_051);
    assert_eq!(btc(payee).await, payee0 + 50_000);
    let replay = payer
        .send_payment(&pay(&inv.request, "pay-1", Some(51)))
        .await
        .unwrap();
    assert_eq!(replay.id, paid.id, "the same reference is one payment");
    let twice = payer
        .send_payment(&pay(&inv.request, "pay-2", None))
        .await
        .unwrap_err();
    assert_eq!(twice.status(), Some(422));
    assert_eq!(btc(&payer).await, payer0 - 50_051);

    let settled = payee.verify_invoice(&inv.payment_hash).await.unwrap();
    assert!(settled.is_paid && settled.ledger_credited && !settled.settled_at.is_empty());
    assert_eq!(settled.preimage, paid.preimage);
    let received = hook.wait_for("btc.lightning.received.success").await;
    assert_eq!(received.json["data"]["payment_hash"], inv.payment_hash.as_str());
    let outgoing = payer.invoices(None, None, None, Some("outgoing")).await.unwrap();
    assert_eq!(
        (
            outgoing.total_count.as_str(),
            outgoing.invoices[0].status.as_str()
        ),
        ("1", "paid")
    );
    let paged = payee
        .invoices(Some(2), Some(1), Some("pending"), None)
        .await
        .unwrap();
    assert_eq!((paged.total_count.as_str(), paged.invoices.len()), ("2", 1));
}

#[tokio::test]
async fn outside_invoices_have_no_route_and_expired_ones_cannot_be_paid() {
    let t = support::spawn().await;
    let c = &t.client;
    let elsewhere = NodeKey::generate();
    let now = c.sandbox_clock().await.unwrap().now.timestamp() as u64;
    let (request, hash) = elsewhere
        .sign(&[9u8; 32], 10_000_000, "outside", now, 3600)
        .unwrap();
    assert_eq!(hash, payment_hash(&[9u8; 32]));
    let preview = c.initiate_payment(&request).await.unwrap();
    assert!(!preview.route_found);
    let before = btc(c).await;
    let failed = c.send_payment(&pay(&request, "out-1", None)).await.unwrap();
    assert_eq!(
        (failed.status.as_str(), failed.transaction_id.as_str()),
        ("failed", "")
    );
    assert_eq!(
        c.send_payment(&pay(&request, "out-1", None)).await.unwrap().id,
        failed.id
    );
    assert_eq!(btc(c).await, before, "nothing debited");

    let inv = c
        .create_invoice(&invoice(1_000, "short", Some(60)))
        .await
        .unwrap();
    c.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(
        c.invoice(&inv.id.to_string()).await.unwrap().status.as_str(),
        "expired"
    );
    let late = c.sandbox_pay_invoice(&inv.request).await.unwrap_err();
    assert_eq!(late.status(), Some(422));
    let far = c.invoices(Some(u32::MAX), Some(100), None, None).await.unwrap();
    assert!(
        far.invoices.is_empty(),
        "a page far past the end is empty, never a crash"
    );

    // An outside payer settles a live invoice: credited, preimage shown.
    let live = c.create_invoice(&invoice(2_000, "live", None)).await.unwrap();
    let paid = c.sandbox_pay_invoice(&live.request).await.unwrap();
    assert_eq!(paid.status.as_str(), "paid");
    assert_eq!(
        hex::encode(Sha256::digest(hex::decode(&paid.preimage).unwrap())),
        live.payment_hash
    );
    assert_eq!(btc(c).await, before + 2_000);
    assert_eq!(
        c.verify_invoice(&"0".repeat(64)).await.unwrap_err().status(),
        Some(404)
    );
}

#[tokio::test]
async fn hold_invoices_stay_pending_then_settle_or_fail() {
    let (t, payee) = two_companies().await;
    let payer = &t.client;
    let hold = |description: &str, reference: &str| NewInvoice {
        description: description.into(),
        ..invoice(10_000, reference, None)
    };
    let ok = payee.create_invoice(&hold("hold", "h-1")).await.unwrap();
    let bad = payee.create_invoice(&hold("hold fail", "h-2")).await.unwrap();
    let payer_before = btc(payer).await;
    let payee_before = btc(&payee).await;

    let sent = payer.send_payment(&pay(&ok.request, "ph-1", None)).await.unwrap();
    assert_eq!(sent.status.as_str(), "pending");
    let failing = payer
        .send_payment(&pay(&bad.request, "ph-2", None))
        .await
        .unwrap();
    assert_eq!(failing.status.as_str(), "pending");
    // 10,000 sats + 11 sats fee each, held.
    assert_eq!(btc(payer).await, payer_before - 2 * 10_011);
    assert_eq!(
        payee.invoice(&ok.id.to_string()).await.unwrap().status.as_str(),
        "pending"
    );

    payer.sandbox_advance_clock(59).await.unwrap();
    assert_eq!(btc(&payee).await, payee_before, "not before 60 s");
    payer.sandbox_advance_clock(1).await.unwrap();
    assert_eq!(
        payee.invoice(&ok.id.to_string()).await.unwrap().status.as_str(),
        "paid"
    );
    assert_eq!(btc(&payee).await, payee_before + 10_000);
    assert_eq!(
        btc(payer).await,
        payer_before - 10_011,
        "the failed one is released"
    );
    let shown = payer.invoice(&sent.id.to_string()).await.unwrap();
    assert_eq!(shown.status.as_str(), "paid");
    assert!(!shown.preimage.is_empty());
    assert_eq!(
        payer
            .invoice(&failing.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "failed"
    );
    assert_eq!(
        payee.invoice(&bad.id.to_string()).await.unwrap().status.as_str(),
        "pending"
    );
    support::assert_ledger_adds_up(payer).await;
}

#[tokio::test]
async fn an_invoice_without_an_amount_needs_one_in_the_send() {
    let t = support::spawn().await;
    let c = &t.client;
    let outside = NodeKey::generate();
    let now = c.sandbox_clock().await.unwrap().now.timestamp() as u64;
    let (request, _) = outside.sign(&[7u8; 32], 0, "tip jar", now, 3600).unwrap();
    let err = c.send_payment(&pay(&request, "amt-1", None)).await.unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert_eq!(err.problem().unwrap().errors[0].field, "amount");
    let sent = c
        .send_payment(&SendPayment {
            amount: Some(2_000),
            ..pay(&request, "amt-2", None)
        })
        .await
        .unwrap();
    assert_eq!((sent.status.as_str(), sent.amount_sat), ("failed", Sats(2_000)));
}
