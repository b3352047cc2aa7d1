//! Lightning from the portal: an invoice with its QR code, paid by
//! someone outside and shown paid live; paying a request of another
//! company through the gate, once; requests that can't be paid refused.

use paydesk_api::models::lightning::NewInvoice;
use paydesk_api::units::Sats;
use paydesk_api::{Client, Credentials};
use paydesk_sandbox::{Fixture, RunningSandbox};
use secrecy::SecretString;

use crate::approvals::{approve, members, wait_for_status};
use crate::cards::form_reference;
use crate::helpers::{location, spawn_app, TestApp};

/// Creates an invoice through the form; returns its page's path.
async fn create_invoice(app: &TestApp, amount: &str, description: &str) -> String {
    let reference = form_reference(app, "/lightning/invoices/new").await;
    let res = app
        .post_form(
            "/lightning/invoices/new",
            "/lightning/invoices",
            &[
                ("amount", amount),
                ("description", description),
                ("expiry", "30"),
                ("reference", &reference),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    location(&res)
}

#[tokio::test]
async fn an_invoice_shows_its_qr_code_and_turns_paid_with_the_preimage() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;

    // Refused beside the field, with what was typed kept.
    let res = app
        .post_form(
            "/lightning/invoices/new",
            "/lightning/invoices",
            &[
                ("amount", "20000001"),
                ("description", "too much"),
                ("expiry", "30"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    let body = res.text().await.unwrap();
    assert!(
        body.contains(r#"id="amount-error""#) && body.contains("value=\"too much\""),
        "{body}"
    );

    let page = create_invoice(&app, "21000", "Coffee beans").await;
    assert!(page.starts_with("/lightning/invoices/"), "{page}");
    let shown = app.get_html(&page).await;
    assert!(
        shown.contains("<svg")
            && shown.contains("lntbs")
            && shown.contains("pending")
            && shown.contains("Expires in")
            && shown.contains("21000 sats"),
        "{shown}"
    );
    let request = shown
        .split("class=\"bolt11\" readonly value=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let paid = app.sandbox().await.sandbox_pay_invoice(&request).await.unwrap();
    assert_eq!(paid.status.as_str(), "paid");
    let live = app.get_html(&format!("{page}/live")).await;
    assert!(
        live.contains("paid") && live.contains(&paid.preimage) && !live.contains("hx-trigger"),
        "{live}"
    );
    let listed = app.get_html("/lightning?direction=incoming&status=paid").await;
    assert!(
        listed.contains(&page) && listed.contains("Coffee beans"),
        "{listed}"
    );
    let none = app.get_html("/lightning?direction=outgoing").await;
    assert!(none.contains("No invoices or payments match."), "{none}");
    let audited = app.audit_actions().await;
    assert!(
        audited.iter().any(|(a, _)| a == "lightning.invoice_created"),
        "{audited:?}"
    );
}

#[tokio::test]
async fn bad_requests_and_requests_without_a_route_are_refused_beside_the_field() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let res = app
        .post_form(
            "/lightning/pay",
            "/lightning/pay/check",
            &[("request", "hello world")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    let body = res.text().await.unwrap();
    assert!(
        body.contains(r#"id="request-error""#) && body.contains("hello world"),
        "{body}"
    );
    let res = app
        .post_form(
            "/lightning/pay",
            "/lightning/pay/check",
            &[("request", "lntbs1000n1pnotarealinvoiceatall0000000000")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains(r#"id="request-error""#));

    // Our own invoice: the service finds no route to it.
    let page = create_invoice(&app, "1000", "Ours").await;
    let invoice = app
        .sandbox()
        .await
        .invoice(page.trim_start_matches("/lightning/invoices/"))
        .await
        .unwrap();
    let res = app
        .post_form(
            "/lightning/pay",
            "/lightning/pay/check",
            &[("request", &invoice.request)],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    let body = res.text().await.unwrap();
    assert!(
        body.contains("no route")
            && body.contains("No route to this payee was found")
            && !body.contains("Pay…"),
        "{body}"
    );
    let res = app
        .post_form(
            "/lightning/pay",
            "/lightning/payments",
            &[("request", &invoice.request), ("confirmed", "yes")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res
        .text()
        .await
        .unwrap()
        .contains("No route to this payee was found"));
    let outgoing = app
        .sandbox()
        .await
        .invoices(None, None, None, Some("outgoing"))
        .await
        .unwrap();
    assert!(outgoing.invoices.is_empty(), "nothing was sent");
}

/// A sandbox of two companies, the demo tenant's connection pointed at the
/// first; a client of the second.
pub(crate) async fn two_companies(app: &TestApp) -> (RunningSandbox, Client) {
    let (ours, theirs) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    let (our_secret, their_secret) = (
        paydesk_sandbox::fixture::new_secret(),
        paydesk_sandbox::fixture::new_secret(),
    );
    let mut fixture = Fixture::single_company("Demo Company", ours, our_secret.clone());
    let payee = Fixture::single_company("Payee Co", theirs, their_secret.clone());
    fixture.companies.extend(payee.companies);
    let sandbox = RunningSandbox::start(&fixture).await.unwrap();
    let sealed = app.key.seal(&SecretString::from(our_secret));
    app.change_behind_the_portal(
        sqlx::query(
        "UPDATE connections SET base_url = $1, client_id = $2, client_secret_enc = $3, updated_at = now() \
         WHERE is_builtin",
    )
    .bind(&sandbox.base_url)
    .bind(ours.to_string())
    .bind(sealed)
    )
    .await;
    let payee = Client::new(
        sandbox.base_url.clone(),
        Credentials::new(theirs.to_string(), &their_secret),
    );
    (sandbox, payee)
}

#[tokio::test]
async fn a_request_of_another_company_is_paid_once_after_an_approver_approves() {
    let app = spawn_app().await;
    let (sandbox, payee) = two_companies(&app).await;
    let invoice = payee
        .create_invoice(&NewInvoice {
            amount: Sats(5_000_000),
            description: "Supplier invoice 42".into(),
            reference: "supplier-42".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let operator = members(&app, "Operator", &["ln-operator@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["ln-approver@example.com".into()])
        .await
        .remove(0);

    let checked = operator
        .post_form(
            "/lightning/pay",
            "/lightning/pay/check",
            &[("request", &invoice.request)],
        )
        .await;
    assert_eq!(checked.status().as_u16(), 200);
    let body = checked.text().await.unwrap();
    // Fee: 1 sat + 0.1% of 5,000,000, rounded up.
    assert!(
        body.contains("5000000 sats")
            && body.contains("Supplier invoice 42")
            && body.contains("found")
            && body.contains("5001 sats")
            && body.contains("Pay…"),
        "{body}"
    );
    let fields = [("request", invoice.request.as_str()), ("max_fee", "5001")];
    let confirm = operator
        .post_form("/lightning/pay", "/lightning/payments", &fields)
        .await;
    assert_eq!(confirm.status().as_u16(), 200);
    let shown = confirm.text().await.unwrap();
    assert!(
        shown.contains("Fee at most") && shown.contains("name=\"confirmed\""),
        "{shown}"
    );
    let mut confirmed = fields.to_vec();
    confirmed.push(("confirmed", "yes"));
    let res = operator
        .post_form("/lightning/pay", "/lightning/payments", &confirmed)
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let request = location(&res).trim_start_matches("/approvals/").to_owned();
    assert!(!request.starts_with('/'), "it waits for approval: {request}");
    assert_eq!(
        payee
            .invoice(&invoice.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "pending"
    );
    // A second submit while it waits files nothing new.
    let again = operator
        .post_form("/lightning/pay", "/lightning/payments", &confirmed)
        .await;
    assert_eq!(location(&again), format!("/approvals/{request}"));

    assert_eq!(approve(&approver, &request).await.status().as_u16(), 303);
    wait_for_status(&app, &request, "executed").await;
    let settled = payee.invoice(&invoice.id.to_string()).await.unwrap();
    assert_eq!(settled.status.as_str(), "paid");
    let ours = Client::new(sandbox.base_url.clone(), app.sandbox_credentials().await);
    let sent = ours.invoices(None, None, None, Some("outgoing")).await.unwrap();
    assert_eq!(sent.invoices.len(), 1, "paid exactly once");
    let payment = &sent.invoices[0];
    assert_eq!((payment.status.as_str(), payment.fee_sat), ("paid", Sats(5001)));
    let page = operator
        .get_html(&format!("/lightning/invoices/{}", payment.id))
        .await;
    assert!(
        page.contains(&settled.preimage) && page.contains("Payment"),
        "{page}"
    );
}

#[tokio::test]
async fn a_lost_answer_is_settled_by_the_same_reference_never_a_second_payment() {
    let mut app = spawn_app().await;
    let (sandbox, payee) = two_companies(&app).await;
    app.sign_in_as_admin().await;
    let ours = Client::new(sandbox.base_url.clone(), app.sandbox_credentials().await);
    ours.sandbox_add_fault(&paydesk_api::models::control::AddFault {
        method: "POST".into(),
        path_prefix: "/api/lightning/payments/send".into(),
        mode: "500_no_body".into(),
        count: 2,
    })
    .await
    .unwrap();
    let invoice = payee
        .create_invoice(&NewInvoice {
            amount: Sats(10_000),
            description: "Small supplier invoice".into(),
            reference: "supplier-small".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    // Small: confirmed, it runs at once (or goes on settling in the background).
    let res = crate::cards::confirm(
        &app,
        "/lightning/pay",
        "/lightning/payments",
        &[("request", &invoice.request)],
        "Fee at most",
    )
    .await;
    assert_eq!(res.status().as_u16(), 303, "{}", res.text().await.unwrap());
    let request: String =
        sqlx::query_scalar("SELECT id::text FROM action_requests WHERE kind = 'lightning_payment'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    wait_for_status(&app, &request, "executed").await;
    assert_eq!(
        payee
            .invoice(&invoice.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "paid"
    );
    let sent = ours.invoices(None, None, None, Some("outgoing")).await.unwrap();
    assert_eq!(sent.invoices.len(), 1, "paid exactly once: {:?}", sent.invoices);
    app.link_audit().await;
    let posts: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM audit_log WHERE action = 'upstream.call' \
         AND details->>'method' = 'POST' AND details->>'path' = '/api/lightning/payments/send'",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert!(posts >= 2, "the lost answer was asked again ({posts} calls)");
}
