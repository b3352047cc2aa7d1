//! On-chain withdrawals: filed by an Operator, approved by an Approver,
//! sent exactly once under the form's reference, settled on the sandbox
//! clock; a bad address refused beside its field before anything is
//! filed; a double submit filing once.

use paydesk_api::models::addresses::GenerateAddress;

use crate::approvals::{approve, members, request_id, wait_for_status};
use crate::cards::{confirm, form_reference};
use crate::helpers::{spawn_app, TestApp};

/// A well-formed ethereum address (the EIP-55 test vector, lower case).
const ADDRESS: &str = "0x52908400098527886e0f7030069857d2e4169ee7";

async fn withdrawal_requests(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM action_requests WHERE kind = 'withdrawal'")
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

async fn sent(app: &TestApp) -> Vec<paydesk_api::models::withdrawals::Withdrawal> {
    app.sandbox()
        .await
        .withdrawals(None, None, Some(100))
        .await
        .unwrap()
        .withdrawals
}

/// The sandbox's withdrawals once the approved request has sent one (the
/// request is executing before its run reaches the service).
async fn wait_for_sent(app: &TestApp) -> Vec<paydesk_api::models::withdrawals::Withdrawal> {
    crate::helpers::eventually("a withdrawal to be sent", move || async move {
        let withdrawals = sent(app).await;
        (!withdrawals.is_empty()).then_some(withdrawals)
    })
    .await
}

#[tokio::test]
async fn an_operator_files_an_approver_approves_and_the_withdrawal_runs_once_and_settles() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["operator@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["approver@example.com".into()])
        .await
        .remove(0);

    let reference = form_reference(&operator, "/withdrawals/new").await;
    let fields = [
        ("chain", "ethereum"),
        ("currency", "USDT"),
        ("to_address", ADDRESS),
        ("amount", "25"),
        ("reference", reference.as_str()),
    ];
    let res = confirm(
        &operator,
        "/withdrawals/new",
        "/withdrawals",
        &fields,
        "25.000000 USDT on ethereum",
    )
    .await;
    assert_eq!(res.status().as_u16(), 303);
    let id = request_id(&res);
    let page = operator.get_html(&format!("/approvals/{id}")).await;
    assert!(page.contains("First payment to"), "{page}");
    assert!(sent(&app).await.is_empty(), "nothing is sent before approval");
    let list = operator.get_html("/withdrawals").await;
    assert!(
        list.contains("Waiting for approval") && list.contains(&id),
        "{list}"
    );

    assert_eq!(approve(&approver, &id).await.status().as_u16(), 303);
    wait_for_status(&app, &id, "executing").await;
    let withdrawals = wait_for_sent(&app).await;
    assert_eq!(withdrawals.len(), 1, "sent exactly once");
    let w = &withdrawals[0];
    assert_eq!(w.reference, reference);
    assert_eq!(w.amount.value(), 25_000_000);
    assert_eq!(w.to_address.to_ascii_lowercase(), ADDRESS);

    // The page follows it live while it is on chain.
    let page = operator.get_html(&format!("/withdrawals/{}", w.id)).await;
    assert!(page.contains("hx-trigger=\"every 2s\""), "{page}");
    assert!(page.contains(&format!("/approvals/{id}")), "{page}");

    // The chain settles it when the sandbox clock moves.
    app.sandbox().await.sandbox_advance_clock(300).await.unwrap();
    wait_for_status(&app, &id, "executed").await;
    let w = app.sandbox().await.withdrawal(&w.id.to_string()).await.unwrap();
    assert_eq!(w.status.as_str(), "completed");
    let live = operator.get_html(&format!("/withdrawals/{}/live", w.id)).await;
    assert!(live.contains("completed") && live.contains(&w.tx_hash), "{live}");
    assert!(!live.contains("hx-trigger"), "a settled withdrawal stops polling");
    assert!(live.contains("https://etherscan.io/tx/"), "{live}");
    assert!(live.contains(&w.transaction_id.to_string()), "{live}");
    let list = operator.get_html("/withdrawals").await;
    assert!(list.contains(&format!("/withdrawals/{}", w.id)), "{list}");
    assert_eq!(sent(&app).await.len(), 1, "still one withdrawal");
    // The service's event about it reaches the request that sent it.
    let (request, pool) = (&id, &app.pool);
    crate::helpers::eventually(
        "the transfer.success event on the request's timeline",
        move || async move {
            let noted: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM request_timeline WHERE request_id = $1::uuid \
             AND what = 'event' AND detail = 'transfer.success')",
            )
            .bind(request)
            .fetch_one(pool)
            .await
            .unwrap();
            noted.then_some(())
        },
    )
    .await;

    // The next withdrawal to that address (however it is cased) is no
    // longer a first payment; it still waits for an approval.
    let reference = form_reference(&operator, "/withdrawals/new").await;
    let res = operator
        .post_form(
            "/withdrawals/new",
            "/withdrawals",
            &[
                ("chain", "ethereum"),
                ("currency", "USDT"),
                ("to_address", "0x52908400098527886E0F7030069857D2E4169EE7"),
                ("amount", "5"),
                ("reference", reference.as_str()),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 200);
    let preview = res.text().await.unwrap();
    assert!(!preview.contains("First payment to"), "{preview}");
    assert!(preview.contains("needs 1 approval by"), "{preview}");
}

#[tokio::test]
async fn a_double_submit_files_once() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    members(&app, "Approver", &["approver@example.com".into()]).await;
    let reference = form_reference(&app, "/withdrawals/new").await;
    let fields = [
        ("chain", "ethereum"),
        ("currency", "USDT"),
        ("to_address", ADDRESS),
        ("amount", "10"),
        ("reference", reference.as_str()),
        ("confirmed", "yes"),
    ];
    let first = app.post_form("/withdrawals/new", "/withdrawals", &fields).await;
    let second = app.post_form("/withdrawals/new", "/withdrawals", &fields).await;
    assert_eq!(first.status().as_u16(), 303);
    assert_eq!(second.status().as_u16(), 303);
    assert_eq!(
        request_id(&first),
        request_id(&second),
        "both land on the one request"
    );
    assert_eq!(withdrawal_requests(&app).await, 1);
    // An admin can give withdrawals a policy of their own.
    assert!(app.get_html("/policies").await.contains("On-chain withdrawals"));
}

#[tokio::test]
async fn a_bad_address_is_refused_beside_the_field_before_anything_is_filed() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    members(&app, "Approver", &["approver@example.com".into()]).await;
    // One letter's case changed in a checksummed (EIP-55) address.
    let typo = "0x52908400098527886E0F7030069857D2E4169Ee7";
    for confirmed in ["no", "yes"] {
        let reference = form_reference(&app, "/withdrawals/new").await;
        let res = app
            .post_form(
                "/withdrawals/new",
                "/withdrawals",
                &[
                    ("chain", "ethereum"),
                    ("currency", "USDT"),
                    ("to_address", typo),
                    ("amount", "10"),
                    ("reference", reference.as_str()),
                    ("confirmed", confirmed),
                ],
            )
            .await;
        assert_eq!(res.status().as_u16(), 422);
        let body = res.text().await.unwrap();
        assert!(body.contains("id=\"to_address-error\""), "{body}");
        assert!(body.contains("not a valid ethereum address"), "{body}");
        assert!(body.contains(typo), "the input is kept");
    }
    // The form checks the address while it is typed.
    let check = |address: &str| format!("/withdrawals/check?chain=ethereum&to_address={address}");
    assert!(app
        .get_html(&check(typo))
        .await
        .contains("not a valid ethereum address"));
    assert!(app
        .get_html(&check(ADDRESS))
        .await
        .contains("A valid ethereum address"));
    // A Stellar withdrawal needs the recipient's memo.
    let stellar = app
        .sandbox()
        .await
        .generate_address(&GenerateAddress {
            chain: "stellar".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .address;
    let reference = form_reference(&app, "/withdrawals/new").await;
    let res = app
        .post_form(
            "/withdrawals/new",
            "/withdrawals",
            &[
                ("chain", "stellar"),
                ("currency", "USDC"),
                ("to_address", stellar.as_str()),
                ("amount", "10"),
                ("reference", reference.as_str()),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    let body = res.text().await.unwrap();
    assert!(body.contains("id=\"memo-error\""), "{body}");
    // An amount finer than the asset's unit.
    let res = app
        .post_form(
            "/withdrawals/new",
            "/withdrawals",
            &[
                ("chain", "ethereum"),
                ("currency", "USDT"),
                ("to_address", ADDRESS),
                ("amount", "1.0000001"),
                ("reference", reference.as_str()),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains("id=\"amount-error\""));
    // More than the wallet holds (10,000 USDT in the demo fixture).
    let res = app
        .post_form(
            "/withdrawals/new",
            "/withdrawals",
            &[
                ("chain", "ethereum"),
                ("currency", "USDT"),
                ("to_address", ADDRESS),
                ("amount", "20000"),
                ("reference", reference.as_str()),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    let body = res.text().await.unwrap();
    assert!(
        body.contains("id=\"amount-error\"") && body.contains("top up the wallet"),
        "{body}"
    );
    assert_eq!(withdrawal_requests(&app).await, 0, "nothing was filed");
    assert!(sent(&app).await.is_empty(), "nothing was sent");
}

/// Files a withdrawal as the admin, confirmed, and approves it as a fresh
/// Approver; the request's id.
async fn file_and_approve(app: &TestApp, fields: &[(&str, &str)]) -> String {
    let approver = members(app, "Approver", &["approver@example.com".into()])
        .await
        .remove(0);
    let reference = form_reference(app, "/withdrawals/new").await;
    let mut fields = fields.to_vec();
    fields.push(("reference", reference.as_str()));
    fields.push(("confirmed", "yes"));
    let res = app.post_form("/withdrawals/new", "/withdrawals", &fields).await;
    assert_eq!(res.status().as_u16(), 303);
    let id = request_id(&res);
    assert_eq!(approve(&approver, &id).await.status().as_u16(), 303);
    id
}

#[tokio::test]
async fn a_lost_answer_is_settled_by_the_same_reference_never_a_second_withdrawal() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    app.sandbox()
        .await
        .sandbox_add_fault(&paydesk_api::models::control::AddFault {
            method: "POST".into(),
            path_prefix: "/api/withdrawals".into(),
            mode: "500_no_body".into(),
            count: 2,
        })
        .await
        .unwrap();
    let id = file_and_approve(
        &app,
        &[
            ("chain", "ethereum"),
            ("currency", "USDT"),
            ("to_address", ADDRESS),
            ("amount", "5"),
        ],
    )
    .await;
    wait_for_status(&app, &id, "executing").await;
    assert_eq!(wait_for_sent(&app).await.len(), 1, "sent exactly once");
    // It was sent more than once, each time under the one reference.
    let audit = &app;
    crate::helpers::eventually("the lost answers asked again (3 calls)", move || async move {
        audit.link_audit().await;
        let posts = sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM audit_log WHERE action = 'upstream.call' \
             AND details->>'method' = 'POST' AND details->>'path' = '/api/withdrawals'",
        )
        .fetch_one(&audit.pool)
        .await
        .unwrap();
        (posts >= 3).then_some(())
    })
    .await;
    assert_eq!(sent(&app).await.len(), 1, "still exactly one withdrawal");
}

#[tokio::test]
async fn a_withdrawal_that_fails_on_chain_ends_the_request_as_failed() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let stellar = app
        .sandbox()
        .await
        .generate_address(&GenerateAddress {
            chain: "stellar".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .address;
    // The sandbox's test value: a withdrawal with the memo "fail" fails on chain.
    let id = file_and_approve(
        &app,
        &[
            ("chain", "stellar"),
            ("currency", "USDC"),
            ("to_address", stellar.as_str()),
            ("memo", "fail"),
            ("amount", "7"),
        ],
    )
    .await;
    wait_for_status(&app, &id, "executing").await;
    wait_for_sent(&app).await;
    app.sandbox().await.sandbox_advance_clock(300).await.unwrap();
    wait_for_status(&app, &id, "failed").await;
    let reason = crate::approvals::failure_reason_of(&app, &id).await;
    assert!(reason.contains("failed on chain"), "{reason}");
    let w = sent(&app).await.remove(0);
    assert_eq!(w.status.as_str(), "failed");
    let page = app.get_html(&format!("/withdrawals/{}", w.id)).await;
    assert!(page.contains("back in the wallet"), "{page}");
}

#[tokio::test]
async fn a_saved_crypto_payee_gives_the_chain_and_address_and_a_new_one_is_flagged() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    members(&app, "Approver", &["approver@example.com".into()]).await;
    let payee = app
        .sandbox()
        .await
        .create_beneficiary(&paydesk_api::models::beneficiaries::NewBeneficiary {
            kind: "crypto".into(),
            name: "Cold wallet".into(),
            destination: serde_json::json!({"address": ADDRESS, "chain": "ethereum"}),
        })
        .await
        .unwrap();
    let form = app.get_html("/withdrawals/new").await;
    assert!(form.contains("Cold wallet"), "{form}");
    let reference = form_reference(&app, "/withdrawals/new").await;
    let payee_id = payee.id.to_string();
    let fields = [
        ("beneficiary_id", payee_id.as_str()),
        ("currency", "USDT"),
        ("amount", "3"),
        ("reference", reference.as_str()),
    ];
    let res = confirm(
        &app,
        "/withdrawals/new",
        "/withdrawals",
        &fields,
        "3.000000 USDT on ethereum",
    )
    .await;
    assert_eq!(res.status().as_u16(), 303);
    let page = app.get_html(&format!("/approvals/{}", request_id(&res))).await;
    assert!(
        page.contains("Cold wallet") && page.contains("saved less than 24 hours ago"),
        "{page}"
    );
}
