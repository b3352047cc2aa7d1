//! Two portal processes on one database behave as one: a session made on
//! one works on the other, and approvals clicked across both run the
//! action once.

use crate::approvals::{digest_in, file_payout, members, request_id, wait_for_finalize};
use crate::helpers::{csrf_in, spawn_app};

#[tokio::test]
async fn two_replicas_share_sessions_and_run_each_approved_action_once() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let other = app.replica().await;
    let res = other.get("/balances").await;
    assert_eq!(
        res.status().as_u16(),
        200,
        "a session made on one replica works on the other"
    );

    let operator = members(&app, "Operator", &["replica-maker@example.com".into()])
        .await
        .remove(0);
    let emails: Vec<String> = (0..20)
        .map(|i| format!("replica-checker{i}@example.com"))
        .collect();
    let approvers = members(&app, "Approver", &emails).await;
    let res = app
        .post_form(
            "/policies",
            "/policies/payout",
            &[
                ("required_approvals", "2"),
                ("expires_after_hours", "24"),
                ("rate_tolerance_percent", "1"),
                ("reason", "four eyes on payouts"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303, "the policy is saved");
    let id = request_id(&file_payout(&operator, "0123456789", "10").await);
    let path = format!("/approvals/{id}/approve");
    let pages: Vec<String> = futures_util::future::join_all(
        approvers
            .iter()
            .map(|a| async { a.get_html(&format!("/approvals/{id}")).await }),
    )
    .await;
    // Half the clicks reach one replica, half the other.
    let clicks = approvers.iter().zip(&pages).enumerate().map(|(i, (a, page))| {
        let base = if i % 2 == 0 { &app.address } else { &other.address };
        a.http
            .post(format!("{base}{path}"))
            .form(&[
                ("csrf_token", csrf_in(page).as_str()),
                ("digest", digest_in(page).as_str()),
                ("confirmed", "yes"),
            ])
            .send()
    });
    let answers = futures_util::future::join_all(clicks).await;
    let accepted = answers
        .iter()
        .filter(|r| r.as_ref().unwrap().status().as_u16() == 303)
        .count();
    assert!(accepted >= 2);
    wait_for_finalize(&app, &id).await;
    let jobs: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE request_id = $1::uuid")
        .bind(&id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(jobs, 1, "one job for one approval");
    let sandbox = app.sandbox().await;
    let reference: String =
        sqlx::query_scalar("SELECT upstream_reference FROM action_requests WHERE id = $1::uuid")
            .bind(&id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let paid: Vec<_> = sandbox
        .payouts(None, Some(100))
        .await
        .unwrap()
        .payouts
        .into_iter()
        .filter(|p| p.reference == reference && p.status.as_str() != "EXPIRED")
        .collect();
    assert_eq!(paid.len(), 1, "one payout, whichever replica ran it");
}
