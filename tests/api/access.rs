//! Roles, permissions and members, as admins and members use them.

use crate::helpers::{spawn_app, TestApp};

/// The id of the tenant's role named `role`, from the members page.
pub async fn role_id(app: &TestApp, role: &str) -> String {
    let page = app.get_html("/members").await;
    page.split("<option value=\"")
        .skip(1)
        .find(|chunk| chunk.split('<').next().unwrap().ends_with(&format!(">{role}")))
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned()
}

/// Invites `email` with `role` through the members page; the invitee
/// opens the mailed link in their own browser and chooses `password`.
/// Returns that browser, signed in.
pub async fn add_member(app: &TestApp, email: &str, role: &str, password: &str) -> TestApp {
    let role_id = role_id(app, role).await;
    let res = app
        .post_form("/members", "/members", &[("email", email), ("role_id", &role_id)])
        .await;
    let landed = app.landing(res).await;
    assert!(
        landed.contains(&format!("An invitation is on its way to {email}")),
        "{landed}"
    );
    accept_invitation(app, email, password).await
}

/// The invitee opens the newest mailed link in their own browser and
/// chooses `password`; that browser, signed in.
pub async fn accept_invitation(app: &TestApp, email: &str, password: &str) -> TestApp {
    let link = app.mailed_link(email, "/invitations/").await;
    let invitee = app.another_browser();
    let res = invitee
        .post_form(
            &link,
            &link,
            &[
                ("display_name", "Test Person"),
                ("password", password),
                ("confirm_password", password),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303, "{}", res.text().await.unwrap());
    invitee.enrol_two_factor_if_asked().await;
    invitee
}

#[tokio::test]
async fn a_viewer_sees_only_what_viewers_may_and_is_refused_the_rest() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let viewer = add_member(&app, "viewer@example.com", "Viewer", "viewer-password-123").await;
    let home = viewer.get_html("/").await;
    assert!(home.contains("2.50000000 BTC"));
    assert!(home.contains("href=\"/balances\""));
    assert!(
        !home.contains("href=\"/members\""),
        "menus show only what the user may do"
    );
    assert!(!home.contains("href=\"/audit\""));
    for path in [
        "/members",
        "/roles",
        "/audit",
        "/audit/export.csv",
        "/transactions/export.csv",
    ] {
        let res = viewer.get(path).await;
        assert_eq!(res.status().as_u16(), 403, "{path}");
        assert!(res.text().await.unwrap().contains("ask an admin"));
    }
    let res = viewer
        .post_form(
            "/balances",
            "/addresses",
            &[("chain", "ethereum"), ("reference", "x")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 403);

    // The admin grants Viewers the audit log in the matrix.
    let matrix = app.get_html("/roles").await;
    let checked: Vec<String> = matrix
        .split("<input type=\"checkbox\" name=\"")
        .skip(1)
        .filter(|c| {
            let tag = c.split('>').next().unwrap();
            tag.contains(" checked") && !tag.contains(" disabled")
        })
        .map(|c| c.split('"').next().unwrap().to_owned())
        .collect();
    let members = app.get_html("/members").await;
    let viewer_id = members
        .split("<option value=\"")
        .skip(1)
        .find(|c| c.split('<').next().unwrap().ends_with(">Viewer"))
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let mut form: Vec<(String, String)> = checked.into_iter().map(|f| (f, "on".to_owned())).collect();
    form.push((format!("{viewer_id}:audit.read"), "on".to_owned()));
    let fields: Vec<(&str, &str)> = form.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let res = app.post_form("/roles", "/roles/matrix", &fields).await;
    let saved = app.landing(res).await;
    let notice = saved
        .split("<p class=\"notice\">")
        .nth(1)
        .unwrap_or("")
        .split('<')
        .next()
        .unwrap();
    assert_eq!(notice, "Permissions of 1 role(s) changed.");
    assert_eq!(viewer.get("/audit").await.status().as_u16(), 200);
    let log = app.get_html("/audit?action=roles.").await;
    assert!(log.contains("roles.permissions_changed"));
}

#[tokio::test]
async fn the_last_owner_cannot_be_removed_or_demoted() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let page = app.get_html("/members").await;
    let admin_id: String = sqlx::query_scalar("SELECT id::text FROM users WHERE email = $1")
        .bind(&app.admin_email)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let viewer_role = page
        .split("<option value=\"")
        .skip(1)
        .find(|c| c.split('<').next().unwrap().ends_with(">Viewer"))
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let res = app
        .post_form(
            "/members",
            &format!("/members/{admin_id}/role"),
            &[("role_id", &viewer_role)],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains("last owner"));
    let res = app
        .post_form("/members", &format!("/members/{admin_id}/remove"), &[])
        .await;
    assert_eq!(res.status().as_u16(), 422);

    // With a second owner, the first may step down; with two admins the
    // change waits for the other one (four eyes), shown as pending.
    let second = crate::approvals::members(&app, "Owner", &["second-owner@example.com".into()])
        .await
        .remove(0);
    let res = app
        .post_form(
            "/members",
            &format!("/members/{admin_id}/role"),
            &[("role_id", &viewer_role)],
        )
        .await;
    let body = app.landing(res).await;
    assert!(
        body.contains("Pending changes") && body.contains("waits for a second admin"),
        "{body}"
    );
    let request: String = sqlx::query_scalar(
        "SELECT id::text FROM action_requests WHERE kind = 'member_role' AND status = 'pending'",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    let role: String = sqlx::query_scalar(
        "SELECT r.name FROM memberships m JOIN roles r ON r.id = m.role_id JOIN users u ON u.id = m.user_id WHERE u.email = $1",
    )
    .bind(&app.admin_email)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(role, "Owner", "nothing changes before the approval");
    assert_eq!(
        crate::approvals::approve(&second, &request)
            .await
            .status()
            .as_u16(),
        303
    );
    crate::approvals::wait_for_status(&app, &request, "executed").await;
}

#[tokio::test]
async fn disabling_an_account_ends_its_sessions() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let leaver = add_member(&app, "leaver@example.com", "Operator", "leaver-password-123").await;
    assert_eq!(leaver.get("/").await.status().as_u16(), 200);

    let user_id: String = sqlx::query_scalar("SELECT id::text FROM users WHERE email = 'leaver@example.com'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let res = app
        .post_form("/members", &format!("/members/{user_id}/disable"), &[])
        .await;
    assert_eq!(res.status().as_u16(), 303);
    assert_eq!(crate::helpers::location(&leaver.get("/").await), "/login");
    let res = leaver.sign_in("leaver@example.com", "leaver-password-123").await;
    assert_eq!(res.status().as_u16(), 401);
}

#[tokio::test]
async fn custom_roles_are_created_and_deleted() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let res = app.post_form("/roles", "/roles", &[("name", "Treasury")]).await;
    assert_eq!(res.status().as_u16(), 303);
    let page = app.get_html("/roles").await;
    assert!(page.contains("Treasury"));
    let res = app.post_form("/roles", "/roles", &[("name", "Treasury")]).await;
    assert_eq!(res.status().as_u16(), 422);
    let refused = res.text().await.unwrap();
    assert!(
        refused.contains(r#"<span class="field-error" id="name-error" role="alert">A role named &#39;Treasury&#39; already exists"#)
            && refused.contains(r#"value="Treasury""#),
        "the message sits beside the field and the name typed stays: {refused}"
    );
    let id = page
        .split("action=\"/roles/")
        .skip(1)
        .find(|c| c.split('"').next().unwrap().ends_with("/delete"))
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let ask = app.post_form("/roles", &format!("/roles/{id}/delete"), &[]).await;
    assert!(ask.text().await.unwrap().contains("Delete the role Treasury?"));
    assert!(
        app.get_html("/roles").await.contains("Treasury"),
        "nothing deleted yet"
    );
    let res = app
        .post_form("/roles", &format!("/roles/{id}/delete"), &[("confirmed", "yes")])
        .await;
    let page = app.landing(res).await;
    assert!(page.contains("Role &#39;Treasury&#39; deleted."), "{page}");
    assert!(
        !app.get_html("/roles").await.contains("Treasury"),
        "the notice shows once"
    );
}

/// A refused form comes back as a 422 with what was typed and the message
/// beside the field; a change that succeeds redirects with a notice shown
/// once (post, then redirect), so a reload never repeats it.
#[tokio::test]
async fn refused_member_forms_keep_the_input_and_successes_redirect_with_a_notice() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let page = app.get_html("/members").await;
    let viewer_role = page
        .split("<option value=\"")
        .skip(1)
        .find(|c| c.split('<').next().unwrap().ends_with(">Viewer"))
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let unknown_role = uuid::Uuid::new_v4().to_string();
    for (email, role, field, message) in [
        (
            "not-an-email",
            viewer_role.as_str(),
            "email",
            "is not an email address",
        ),
        (
            "ann@example.com",
            unknown_role.as_str(),
            "role_id",
            "Choose one of this tenant",
        ),
    ] {
        let res = app
            .post_form("/members", "/members", &[("email", email), ("role_id", role)])
            .await;
        assert_eq!(res.status().as_u16(), 422);
        let body = res.text().await.unwrap();
        assert!(
            body.contains(&format!(r#"id="{field}-error" role="alert">"#)) && body.contains(message),
            "{field}: {body}"
        );
        assert!(
            body.contains(&format!(r#"value="{email}""#)),
            "what was typed stays"
        );
        assert!(body.contains(r#"aria-invalid="true""#));
    }

    add_member(&app, "ann@example.com", "Viewer", "ann-cobalt-meadow").await;
    let res = app.post_form("/roles", "/roles", &[("name", "Auditors 2")]).await;
    assert_eq!(res.status().as_u16(), 303);
    let landed = app.landing(res).await;
    assert!(
        landed.contains(r#"<p class="notice">Role &#39;Auditors 2&#39; created"#),
        "{landed}"
    );
    assert!(
        !app.get_html("/roles").await.contains(r#"<p class="notice">"#),
        "the notice is shown once"
    );
    let again = app
        .post_form(
            "/members",
            "/members",
            &[("email", "ann@example.com"), ("role_id", &viewer_role)],
        )
        .await;
    assert_eq!(again.status().as_u16(), 422);
    assert!(again
        .text()
        .await
        .unwrap()
        .contains("ann@example.com is already a member"));
}

/// A permission the catalogue gives a built-in role reaches existing
/// tenants' roles at the next start, and only once: an admin who takes it
/// away afterwards keeps it away.
#[tokio::test]
async fn built_in_grants_reach_existing_tenants_once() {
    let app = spawn_app().await;
    let holders = || async {
        let names: Vec<String> = sqlx::query_scalar(
            "SELECT r.name FROM role_permissions rp JOIN roles r ON r.id = rp.role_id \
             WHERE r.is_builtin AND rp.permission = 'bulk.request' ORDER BY r.name",
        )
        .fetch_all(&app.pool)
        .await
        .unwrap();
        names
    };
    assert_eq!(holders().await, ["Admin", "Operator", "Owner"]);
    // As if `bulk.request` were new in the catalogue: no start gave it yet,
    // and the tenant's built-in roles lack it.
    sqlx::query("DELETE FROM builtin_grants WHERE permission = 'bulk.request'")
        .execute(&app.pool)
        .await
        .unwrap();
    sqlx::query(
        "DELETE FROM role_permissions rp USING roles r \
         WHERE rp.role_id = r.id AND r.is_builtin AND rp.permission = 'bulk.request'",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    assert!(holders().await.is_empty());

    app.replica().await;
    assert_eq!(
        holders().await,
        ["Admin", "Operator", "Owner"],
        "the next start gives it"
    );

    sqlx::query(
        "DELETE FROM role_permissions rp USING roles r \
         WHERE rp.role_id = r.id AND r.name = 'Operator' AND rp.permission = 'bulk.request'",
    )
    .execute(&app.pool)
    .await
    .unwrap();
    app.replica().await;
    assert_eq!(
        holders().await,
        ["Admin", "Owner"],
        "a grant taken away stays away"
    );
}
