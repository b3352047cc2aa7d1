//! No one person assembles a quorum: the security tester's paths, each
//! left with the money unmoved and the change waiting or refused with a
//! reason; and the honest team's path, which still works.

use crate::access::{add_member, role_id};
use crate::approvals::{approve, file_payout, members, request_id, wait_for_status};
use crate::helpers::{spawn_app, TestApp};

/// The newest control request of `kind` and its status.
async fn newest(app: &TestApp, kind: &str) -> (String, String) {
    sqlx::query_as(
        "SELECT id::text, status::text FROM action_requests WHERE kind = $1 ORDER BY created_at DESC LIMIT 1",
    )
    .bind(kind)
    .fetch_one(&app.pool)
    .await
    .unwrap_or_else(|e| panic!("no {kind} request: {e}"))
}

async fn mails_to(app: &TestApp, to: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM outbox WHERE recipient = $1")
        .bind(to)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

/// Payouts the sandbox has been asked to initialize: money that moved.
async fn payouts_sent(app: &TestApp) -> usize {
    let journal = app.sandbox().await.sandbox_requests(None).await.unwrap();
    journal
        .requests
        .iter()
        .filter(|r| {
            r.method == "POST" && r.path.starts_with("/api/payouts") && r.path.ends_with("/initialize")
        })
        .count()
}

/// Waits until the gate has taken the approved request up (it runs, or ran).
async fn wait_until_carried_out(app: &TestApp, request: &str) {
    crate::helpers::eventually(&format!("{request} to be carried out"), move || async move {
        let status: String =
            sqlx::query_scalar("SELECT status::text FROM action_requests WHERE id = $1::uuid")
                .bind(request)
                .fetch_one(&app.pool)
                .await
                .unwrap();
        assert!(
            ["approved", "pending", "executing", "executed"].contains(&status.as_str()),
            "{request} ended {status}"
        );
        (status == "executing" || status == "executed").then_some(())
    })
    .await
}

/// The tester's tenant: an Owner and an Admin the platform vouched for.
/// The Admin invites two addresses of their own, an Operator and an
/// Approver; nothing is sent until the Owner approves, so the money they
/// would move stays where it is. The Admin can't loosen the policy or move
/// the tiers by switching the reporting currency either.
#[tokio::test]
async fn an_admin_cannot_invite_a_quorum_of_their_own_while_another_admin_exists() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let admin = members(&app, "Admin", &["second-admin@example.com".into()])
        .await
        .remove(0);
    let operator_role = role_id(&admin, "Operator").await;
    for (email, role) in [
        ("mine-op@example.com", operator_role),
        ("mine-ap@example.com", role_id(&admin, "Approver").await),
    ] {
        let res = admin
            .post_form("/members", "/members", &[("email", email), ("role_id", &role)])
            .await;
        let landed = admin.landing(res).await;
        assert!(landed.contains("waits for a second admin"), "{landed}");
        assert_eq!(
            mails_to(&app, email).await,
            0,
            "no link is mailed before approval"
        );
    }
    let (_, status) = newest(&app, "membership").await;
    assert_eq!(status, "pending");

    let res = admin
        .post_form(
            "/policies",
            "/policies/settings/currency",
            &[("reporting_currency", "NGN")],
        )
        .await;
    let landed = admin.landing(res).await;
    assert!(landed.contains("waits for a second admin"), "{landed}");
    let currency: String =
        sqlx::query_scalar("SELECT reporting_currency FROM tenants WHERE name = 'Demo Company'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(currency, "USD", "the tiers did not move");
    let res = admin
        .post_form(
            "/policies",
            "/policies/payout",
            &[
                ("required_approvals", "0"),
                ("expires_after_hours", "24"),
                ("rate_tolerance_percent", "1"),
                ("reason", "faster payouts"),
            ],
        )
        .await;
    assert!(admin.landing(res).await.contains("waits for a second admin"));
    let saved: i64 = sqlx::query_scalar("SELECT count(*) FROM approval_policies")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(saved, 0, "the policy is unchanged until a second admin approves");
    assert_eq!(payouts_sent(&app).await, 0);

    // The Owner approves the Approver's invitation: the link goes out, and
    // the membership it grants is confirmed by the Owner.
    let invitations: Vec<(String, serde_json::Value)> = sqlx::query_as(
        "SELECT id::text, payload FROM action_requests WHERE kind = 'membership' AND status = 'pending'",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    let (approver_invite, _) = invitations
        .iter()
        .find(|(_, p)| p["email"] == "mine-ap@example.com")
        .unwrap();
    assert_eq!(approve(&app, approver_invite).await.status().as_u16(), 303);
    wait_for_status(&app, approver_invite, "executed").await;
    assert_eq!(mails_to(&app, "mine-ap@example.com").await, 1);
    let confirmed_by: Option<uuid::Uuid> =
        sqlx::query_scalar("SELECT confirmed_by FROM invitations WHERE email = 'mine-ap@example.com'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert!(
        confirmed_by.is_some(),
        "the Owner's approval confirms what it grants"
    );
}

/// A tenant with one admin: the colleagues that admin added alone file and
/// approve each other's payouts (and the request says so), but the admin
/// never approves the operator they added, and the admin's own payout is
/// refused with the names of who can act instead.
#[tokio::test]
async fn grants_made_alone_tie_the_admin_to_whom_they_added() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = add_member(&app, "ops@example.com", "Operator", "ops-harbour-lantern-7").await;
    let approver = add_member(&app, "checks@example.com", "Approver", "checks-meadow-copper-3").await;

    let res = file_payout(&app, "0123456789", "10").await;
    assert_eq!(res.status().as_u16(), 422);
    let body = res.text().await.unwrap();
    assert!(body.contains("checks@example.com could"), "{body}");
    assert!(body.contains("ops@example.com can file it instead"), "{body}");

    let res = file_payout(&operator, "0123456789", "10").await;
    assert_eq!(res.status().as_u16(), 303);
    let id = request_id(&res);
    let res = approve(&app, &id).await;
    assert_eq!(
        res.status().as_u16(),
        422,
        "the admin never approves their own operator"
    );
    assert!(res.text().await.unwrap().contains("not be independent"));
    let page = approver.get_html(&format!("/approvals/{id}")).await;
    assert!(page.contains("from an admin acting alone"), "{page}");
    assert_eq!(approve(&approver, &id).await.status().as_u16(), 303);
    wait_until_carried_out(&app, &id).await;

    // Once the platform vouches for a second admin, they confirm the
    // operator's and approver's memberships, and the admin's own payout
    // can be approved by the approver.
    let second = members(&app, "Admin", &["vouched-admin@example.com".into()])
        .await
        .remove(0);
    let page = second.get_html("/members").await;
    assert!(page.contains("checks@example.com"), "{page}");
    let grants: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM access_grants WHERE confirmed_by IS NULL AND granted_by IS NOT NULL ORDER BY id",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert_eq!(grants.len(), 2, "the operator's and the approver's memberships");
    for grant in grants {
        let res = second
            .post_form("/members", &format!("/members/grants/{grant}/confirm"), &[])
            .await;
        assert!(second.landing(res).await.contains("Confirmed"));
    }
    let res = file_payout(&app, "0123456788", "10").await;
    assert_eq!(res.status().as_u16(), 303, "{}", res.text().await.unwrap());
    let own = request_id(&res);
    assert_eq!(approve(&approver, &own).await.status().as_u16(), 303);
    wait_until_carried_out(&app, &own).await;
}

/// An approval given before the approver was removed no longer counts
/// toward a request still waiting.
#[tokio::test]
async fn a_removed_approvers_approval_stops_counting_at_once() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let res = app
        .post_form(
            "/policies",
            "/policies/payout",
            &[
                ("required_approvals", "2"),
                ("expires_after_hours", "24"),
                ("rate_tolerance_percent", "1"),
                ("reason", "two approvals"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let approvers = members(
        &app,
        "Approver",
        &["leaving@example.com".into(), "staying@example.com".into()],
    )
    .await;
    let operator = members(&app, "Operator", &["files@example.com".into()])
        .await
        .remove(0);
    let id = request_id(&file_payout(&operator, "0123456789", "10").await);
    assert_eq!(approve(&approvers[0], &id).await.status().as_u16(), 303);
    let leaving: String =
        sqlx::query_scalar("SELECT id::text FROM users WHERE email = 'leaving@example.com'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let res = app
        .post_form(
            "/members",
            &format!("/members/{leaving}/remove"),
            &[("confirmed", "yes")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    assert_eq!(approve(&approvers[1], &id).await.status().as_u16(), 303);
    let status: String = sqlx::query_scalar("SELECT status::text FROM action_requests WHERE id = $1::uuid")
        .bind(&id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(status, "pending", "one approval of two still counts");
    assert_eq!(payouts_sent(&app).await, 0);
}

/// For a hosted tenant with one admin: a second platform admin confirms
/// what that admin granted alone, once the tenant lets the platform do so;
/// the admin may then approve the operator they added.
#[tokio::test]
async fn platform_admins_confirm_a_tenants_grants_once_the_tenant_lets_them() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = add_member(&app, "ops@example.com", "Operator", "ops-harbour-lantern-7").await;
    // A second platform admin, set up by whoever runs the platform.
    let hash =
        paydesk::auth::password::hash(secrecy::SecretString::from("member-password-123".to_owned())).await;
    let secret = app.key.seal(&secrecy::SecretString::from(
        totp_rs::Secret::generate().to_base32(),
    ));
    sqlx::query(
        "INSERT INTO users (id, email, display_name, password_hash, totp_secret_enc, totp_enabled_at, is_platform_admin) \
         VALUES ($1, 'operator-of-the-platform@example.com', 'Platform', $2, $3, now(), true)",
    )
    .bind(uuid::Uuid::new_v4())
    .bind(&hash)
    .bind(secret)
    .execute(&app.pool)
    .await
    .unwrap();
    let platform = app.another_browser();
    platform
        .sign_in_with_code("operator-of-the-platform@example.com", "member-password-123")
        .await;
    let (tenant, grant): (String, i64) = sqlx::query_as(
        "SELECT g.tenant_id::text, g.id FROM access_grants g JOIN users u ON u.id = g.user_id \
         WHERE u.email = 'ops@example.com'",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    let confirm = format!("/platform/tenants/{tenant}/grants/{grant}/confirm");
    let res = platform.post_form("/platform", &confirm, &[]).await;
    assert_eq!(
        res.status().as_u16(),
        422,
        "the tenant has not let the platform confirm"
    );
    assert!(res
        .text()
        .await
        .unwrap()
        .contains("Platform admins confirm grants"));

    let res = platform
        .post_form(
            "/platform",
            &format!("/platform/tenants/{tenant}/confirms"),
            &[("on", "yes")],
        )
        .await;
    assert!(platform
        .landing(res)
        .await
        .contains("Platform admins may now confirm"));
    let page = platform.get_html("/platform").await;
    assert!(page.contains("ops@example.com"), "the grant is listed: {page}");
    let res = platform.post_form("/platform", &confirm, &[]).await;
    assert!(platform.landing(res).await.contains("Confirmed"));

    members(&app, "Approver", &["another-approver@example.com".into()]).await;
    let id = request_id(&file_payout(&operator, "0123456789", "10").await);
    assert_eq!(
        approve(&app, &id).await.status().as_u16(),
        303,
        "the admin is no longer tied to the operator they added"
    );
}
