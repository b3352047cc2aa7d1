//! Accounts a bank would accept: joining only by invitation, password
//! reset by mail, admins unlocking, one-time passwords that expire.

use std::net::TcpListener;

use paydesk::startup::Application;

use crate::access::{add_member, role_id as role};
use crate::helpers::{location, spawn_app, TestApp};

async fn invite(app: &TestApp, email: &str, role_name: &str) -> String {
    let role_id = role(app, role_name).await;
    let res = app
        .post_form("/members", "/members", &[("email", email), ("role_id", &role_id)])
        .await;
    app.landing(res).await
}

async fn is_member(app: &TestApp, email: &str) -> bool {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id \
         JOIN tenants t ON t.id = m.tenant_id WHERE u.email = $1 AND t.name = 'Demo Company')",
    )
    .bind(email)
    .fetch_one(&app.pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn joining_takes_the_invitees_own_password_and_the_answer_never_tells_who_has_an_account() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    // Bob has an account elsewhere: another tenant invited him first.
    app.post_form("/platform", "/platform/tenants", &[("name", "Other Co")])
        .await;
    let page = app.get_html("/").await;
    let other = page
        .split("<option value=\"")
        .skip(1)
        .find(|c| c.split('<').next().unwrap().ends_with(">Other Co"))
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let demo: String = sqlx::query_scalar("SELECT id::text FROM tenants WHERE name = 'Demo Company'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    app.post_form("/", "/tenants/switch", &[("tenant_id", &other)])
        .await;
    add_member(&app, "bob@example.com", "Viewer", "bob-harbour-kettle-19").await;
    app.post_form("/", "/tenants/switch", &[("tenant_id", &demo)])
        .await;

    let to_bob = invite(&app, "bob@example.com", "Operator").await;
    let to_new = invite(&app, "newcomer@example.com", "Operator").await;
    let notice = |page: &str| {
        page.split("<p class=\"notice\">")
            .nth(1)
            .unwrap()
            .split('<')
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        notice(&to_bob).replace("bob@example.com", "X"),
        notice(&to_new).replace("newcomer@example.com", "X"),
        "the same answer with or without an account"
    );
    assert!(
        !is_member(&app, "bob@example.com").await,
        "nobody joins without accepting"
    );
    assert!(to_new.contains("Invitations waiting") && to_new.contains("bob@example.com"));

    // Bob's link asks for his own password, and a wrong one is refused.
    let link = app.mailed_link("bob@example.com", "/invitations/").await;
    let bob = app.another_browser();
    let shown = bob.get_html(&link).await;
    assert!(shown.contains("You already have a Paydesk account"), "{shown}");
    let wrong = bob
        .post_form(&link, &link, &[("password", "not-bobs-password")])
        .await;
    assert_eq!(wrong.status().as_u16(), 422);
    let res = bob
        .post_form(&link, &link, &[("password", "bob-harbour-kettle-19")])
        .await;
    assert_eq!(res.status().as_u16(), 303);
    assert!(is_member(&app, "bob@example.com").await);
    assert_eq!(bob.get("/").await.status().as_u16(), 200, "accepting signs in");
    // The link worked once.
    assert_eq!(app.another_browser().get(&link).await.status().as_u16(), 410);

    // A new account must choose a strong password.
    let link = app.mailed_link("newcomer@example.com", "/invitations/").await;
    let newcomer = app.another_browser();
    let weak = [
        ("display_name", "New Comer"),
        ("password", "Passw0rd2026"),
        ("confirm_password", "Passw0rd2026"),
    ];
    let res = newcomer.post_form(&link, &link, &weak).await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains("password-error"));
    assert!(!is_member(&app, "newcomer@example.com").await);

    // Revoked, then re-sent: only the newest link works.
    let id: String = sqlx::query_scalar(
        "SELECT id::text FROM invitations WHERE email = 'newcomer@example.com' AND revoked_at IS NULL",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    let res = app
        .post_form("/members", &format!("/members/invitations/{id}/revoke"), &[])
        .await;
    assert!(app.landing(res).await.contains("no longer works"));
    assert_eq!(newcomer.get(&link).await.status().as_u16(), 410);
    invite(&app, "newcomer@example.com", "Operator").await;
    let fresh = app.mailed_link("newcomer@example.com", "/invitations/").await;
    sqlx::query("UPDATE invitations SET expires_at = now() - interval '1 minute' WHERE revoked_at IS NULL")
        .execute(&app.pool)
        .await
        .unwrap();
    assert_eq!(
        newcomer.get(&fresh).await.status().as_u16(),
        410,
        "an expired link is refused"
    );

    let actions = app.audit_actions().await;
    assert!(actions.contains(&("members.invited".into(), "success".into())));
    assert!(actions.contains(&("members.invitation_revoked".into(), "success".into())));
}

#[tokio::test]
async fn a_reset_link_sets_a_new_password_ends_the_lockout_and_every_session() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let other_browser = app.another_browser();
    for _ in 0..5 {
        other_browser.sign_in(&app.admin_email, "wrong-password").await;
    }
    // The same answer for an account and for an email without one.
    let forgot = |email: &'static str| {
        let browser = app.another_browser();
        async move {
            let res = browser
                .post_form("/password/forgot", "/password/forgot", &[("email", email)])
                .await;
            assert_eq!(res.status().as_u16(), 200);
            res.text()
                .await
                .unwrap()
                .split("<form")
                .next()
                .unwrap()
                .to_owned()
        }
    };
    let known = forgot("admin@paydesk.local").await;
    let unknown = forgot("nobody@example.com").await;
    assert_eq!(
        known.split("role=\"status\">").nth(1),
        unknown.split("role=\"status\">").nth(1)
    );
    let outbox = &app;
    crate::helpers::eventually("the reset mail in the outbox", move || async move {
        let mails: i64 = sqlx::query_scalar("SELECT count(*) FROM outbox WHERE recipient = $1")
            .bind(&outbox.admin_email)
            .fetch_one(&outbox.pool)
            .await
            .unwrap();
        (mails > 0).then_some(())
    })
    .await;
    let link = app.mailed_link(&app.admin_email, "/password/reset/").await;
    let nobody: i64 =
        sqlx::query_scalar("SELECT count(*) FROM outbox WHERE recipient = 'nobody@example.com'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(nobody, 0);

    let reader = app.another_browser();
    let weak = [
        ("new_password", "password1234"),
        ("confirm_password", "password1234"),
    ];
    assert_eq!(reader.post_form(&link, &link, &weak).await.status().as_u16(), 422);
    let strong = [
        ("new_password", "copper-lantern-meadow"),
        ("confirm_password", "copper-lantern-meadow"),
    ];
    let res = reader.post_form(&link, &link, &strong).await;
    assert_eq!(location(&res), "/login?reset=1");
    assert_eq!(location(&app.get("/").await), "/login", "the old session ended");
    assert_eq!(
        reader.get(&link).await.status().as_u16(),
        410,
        "the link works once"
    );
    let res = reader.sign_in(&app.admin_email, "copper-lantern-meadow").await;
    assert_eq!(res.status().as_u16(), 303, "the lockout ended too");
}

#[tokio::test]
async fn an_admin_unlocks_a_member_locked_out_by_failed_sign_ins() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    add_member(&app, "fumbler@example.com", "Viewer", "fumbler-opal-canyon").await;
    let member = app.another_browser();
    for _ in 0..5 {
        member.sign_in("fumbler@example.com", "wrong-password").await;
    }
    assert_eq!(
        member
            .sign_in("fumbler@example.com", "fumbler-opal-canyon")
            .await
            .status()
            .as_u16(),
        401
    );
    let page = app.get_html("/members").await;
    assert!(page.contains("locked out"), "{page}");
    let id: String = sqlx::query_scalar("SELECT id::text FROM users WHERE email = 'fumbler@example.com'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let res = app
        .post_form("/members", &format!("/members/{id}/unlock"), &[])
        .await;
    assert!(app.landing(res).await.contains("can sign in again"));
    assert_eq!(
        member
            .sign_in("fumbler@example.com", "fumbler-opal-canyon")
            .await
            .status()
            .as_u16(),
        303
    );
    let actions = app.audit_actions().await;
    assert!(actions.contains(&("members.unlocked".into(), "success".into())));
}

#[tokio::test]
async fn the_first_admins_one_time_password_expires_and_the_next_start_prints_a_new_one() {
    let app = spawn_app().await;
    sqlx::query("UPDATE users SET password_expires_at = now() - interval '1 minute'")
        .execute(&app.pool)
        .await
        .unwrap();
    assert_eq!(
        app.sign_in(&app.admin_email, &app.admin_password)
            .await
            .status()
            .as_u16(),
        401
    );
    let settings = paydesk::configuration::Settings {
        builtin_sandbox: false,
        ..app.settings.clone()
    };
    let restarted = Application::build_on(&settings, TcpListener::bind("127.0.0.1:0").unwrap())
        .await
        .expect("the portal starts again");
    let renewed = restarted
        .first_admin()
        .expect("a new one-time password is printed");
    let password = secrecy::ExposeSecret::expose_secret(&renewed.one_time_password).to_owned();
    assert_ne!(password, app.admin_password);
    let res = app.another_browser().sign_in(&app.admin_email, &password).await;
    assert_eq!(location(&res), "/account/password");
}

#[tokio::test]
async fn a_code_signs_in_once_and_a_recovery_code_stands_in_for_a_lost_phone_once() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let email = app.admin_email.clone();
    let password = app.admin_password.clone();

    let phone = app.another_browser();
    let res = phone.sign_in(&email, &password).await;
    assert!(
        location(&res).starts_with("/login/two-factor"),
        "the password alone is not enough"
    );
    assert_eq!(location(&phone.get("/").await), "/login", "no session yet");
    let wrong = phone
        .post_form("/login/two-factor", "/login/two-factor", &[("code", "000000")])
        .await;
    assert_eq!(wrong.status().as_u16(), 401);
    let code = app.code_for(&email).await;
    let res = phone
        .post_form("/login/two-factor", "/login/two-factor", &[("code", &code)])
        .await;
    assert_eq!(location(&res), "/");
    // The same code again, elsewhere: refused (a code works once).
    let replay = app.another_browser();
    replay.sign_in(&email, &password).await;
    let res = replay
        .post_form("/login/two-factor", "/login/two-factor", &[("code", &code)])
        .await;
    assert_eq!(res.status().as_u16(), 401);

    // New recovery codes, then one of them instead of the phone, once.
    let fresh = app.code_for(&email).await;
    let res = app
        .post_form(
            "/account/security",
            "/account/security/recovery-codes",
            &[("code", &fresh)],
        )
        .await;
    let page = res.text().await.unwrap();
    let recovery = page
        .split("<li><code>")
        .nth(1)
        .and_then(|r| r.split('<').next())
        .expect("the codes are shown once")
        .to_owned();
    let lost_phone = app.another_browser();
    lost_phone.sign_in(&email, &password).await;
    let res = lost_phone
        .post_form("/login/two-factor", "/login/two-factor", &[("code", &recovery)])
        .await;
    assert_eq!(location(&res), "/");
    let again = app.another_browser();
    again.sign_in(&email, &password).await;
    let res = again
        .post_form("/login/two-factor", "/login/two-factor", &[("code", &recovery)])
        .await;
    assert_eq!(res.status().as_u16(), 401, "a recovery code works once");

    // Sessions are listed on the security page and can be ended there.
    let page = app.get_html("/account/security").await;
    assert!(page.contains("this browser") && page.contains("/end\""), "{page}");
    let id = page
        .split("/account/security/sessions/")
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let res = app
        .post_form(
            "/account/security",
            &format!("/account/security/sessions/{id}/end"),
            &[],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let live: i64 = sqlx::query_scalar("SELECT count(*) FROM sessions WHERE encode(token_hash, 'hex') = $1")
        .bind(&id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(live, 0);
}

#[tokio::test]
async fn two_factor_is_required_by_role_and_by_tenant_setting() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    // A viewer may go without it; the portal doesn't ask.
    let viewer = add_member(&app, "reader@example.com", "Viewer", "reader-copper-fjord").await;
    assert_eq!(viewer.get("/").await.status().as_u16(), 200);
    // An approver is sent to set it up before anything else.
    let role_id = role(&app, "Approver").await;
    app.post_form(
        "/members",
        "/members",
        &[("email", "checker@example.com"), ("role_id", &role_id)],
    )
    .await;
    let link = app.mailed_link("checker@example.com", "/invitations/").await;
    let approver = app.another_browser();
    let fields = [
        ("display_name", "Che Cker"),
        ("password", "checker-amber-dune"),
        ("confirm_password", "checker-amber-dune"),
    ];
    approver.post_form(&link, &link, &fields).await;
    assert_eq!(location(&approver.get("/approvals").await), "/account/security");
    assert!(approver
        .get_html("/account/security")
        .await
        .contains("Your role requires two-factor"));
    // The tenant asks it of everyone: the viewer is sent too.
    let res = app
        .post_form("/members", "/members/two-factor", &[("required", "yes")])
        .await;
    assert!(app
        .landing(res)
        .await
        .contains("Every member now needs two-factor"));
    assert_eq!(location(&viewer.get("/").await), "/account/security");
    viewer.enrol_two_factor_if_asked().await;
    assert_eq!(viewer.get("/").await.status().as_u16(), 200);
    // And it can't be turned off while required.
    let code = app.code_for("reader@example.com").await;
    let res = viewer
        .post_form(
            "/account/security",
            "/account/security/two-factor/disable",
            &[("code", &code)],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    let actions = app.audit_actions().await;
    assert!(actions.contains(&("auth.two_factor_enabled".into(), "success".into())));
    assert!(actions.contains(&("members.two_factor_policy".into(), "success".into())));
}

#[tokio::test]
async fn guessing_codes_locks_the_account_even_across_fresh_password_steps() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let (email, password) = (app.admin_email.clone(), app.admin_password.clone());
    for _ in 0..5 {
        let guesser = app.another_browser();
        let res = guesser.sign_in(&email, &password).await;
        assert!(location(&res).starts_with("/login/two-factor"));
        let res = guesser
            .post_form("/login/two-factor", "/login/two-factor", &[("code", "000000")])
            .await;
        assert_eq!(res.status().as_u16(), 401);
    }
    let locked: bool = sqlx::query_scalar("SELECT locked_until > now() FROM users WHERE email = $1")
        .bind(&email)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert!(locked, "five wrong codes lock the account");
    // Even the right password and a right code are refused now.
    let res = app.another_browser().sign_in(&email, &password).await;
    assert_eq!(res.status().as_u16(), 401);
}

/// Wrong codes from a signed-in session count against the account as a
/// sign-in's do: the fifth locks it and ends its sessions, so a stolen
/// session can't guess its way past a code prompt (step-up, new recovery
/// codes, turning two-factor off).
#[tokio::test]
async fn wrong_codes_from_a_session_lock_the_account_and_end_its_sessions() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let failures = || async {
        let n: i32 = sqlx::query_scalar("SELECT failed_logins FROM users WHERE email = $1")
            .bind(&app.admin_email)
            .fetch_one(&app.pool)
            .await
            .unwrap();
        n
    };
    for tried in 1..5 {
        let res = app
            .post_form(
                "/account/security",
                "/account/security/recovery-codes",
                &[("code", "000000")],
            )
            .await;
        assert_eq!(res.status().as_u16(), 422);
        assert!(res.text().await.unwrap().contains("That code is not right"));
        assert_eq!(failures().await, tried, "each wrong code counts");
    }
    let res = app
        .post_form(
            "/account/security",
            "/account/security/recovery-codes",
            &[("code", "000000")],
        )
        .await;
    assert!(res.text().await.unwrap().contains("locked for 15 minutes"));
    let gone = location(&app.get("/account/security").await);
    assert!(gone.starts_with("/login"), "the session ended: {gone}");
    let again = app.another_browser();
    let res = again.sign_in(&app.admin_email, &app.admin_password).await;
    assert!(
        !location(&res).starts_with("/login/two-factor"),
        "the account is locked"
    );
}
