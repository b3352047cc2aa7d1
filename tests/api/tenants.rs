//! Tenants, connections and the platform admin's controls.

use secrecy::ExposeSecret;

use crate::helpers::{location, spawn_app, spawn_app_without_sandbox, TestApp};

/// Saves a connection through the form.
async fn add_connection(
    app: &TestApp,
    name: &str,
    base_url: &str,
    client_id: &str,
    secret: &str,
) -> reqwest::Response {
    app.post_form(
        "/connections",
        "/connections",
        &[
            ("name", name),
            ("environment", "sandbox"),
            ("base_url", base_url),
            ("client_id", client_id),
            ("client_secret", secret),
        ],
    )
    .await
}

#[tokio::test]
async fn connections_need_an_allowed_base_url_and_never_show_their_secrets() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let creds = app.sandbox_credentials().await;
    let secret: String = {
        let (_, sealed): (String, Vec<u8>) =
            sqlx::query_as("SELECT client_id, client_secret_enc FROM connections WHERE is_builtin")
                .fetch_one(&app.pool)
                .await
                .unwrap();
        app.key.open(&sealed).unwrap().expose_secret().to_owned()
    };
    let client_id = creds.client_id.clone();

    let res = add_connection(&app, "Internal", "http://169.254.169.254", &client_id, &secret).await;
    assert_eq!(res.status().as_u16(), 422);
    let refused = res.text().await.unwrap();
    assert!(
        refused.contains(r#"id="base_url-error""#) && refused.contains("allow-list"),
        "the message sits beside the base URL: {refused}"
    );
    assert!(refused.contains(r#"value="Internal""#), "the name typed stays");
    assert!(!refused.contains(&secret), "the secret is never sent back");

    let res = app
        .post_form(
            "/platform",
            "/platform/allowlist",
            &[("base_url", &app.sandbox_url)],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let res = add_connection(
        &app,
        "Second",
        &format!("{}/", app.sandbox_url),
        &client_id,
        &secret,
    )
    .await;
    let page = app.landing(res).await;
    assert!(page.contains("be shown again"));
    assert!(!page.contains(&secret), "the secret never reaches a page");

    let stored: Vec<Vec<u8>> = sqlx::query_scalar("SELECT client_secret_enc FROM connections")
        .fetch_all(&app.pool)
        .await
        .unwrap();
    assert!(stored
        .iter()
        .all(|s| !s.windows(secret.len()).any(|w| w == secret.as_bytes())));
    app.link_audit().await;
    let logged: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE details::text LIKE '%' || $1 || '%'")
            .bind(&secret)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(logged, 0, "the secret never reaches the audit log");

    // Test connection shows the identity record.
    let page = app.get_html("/connections").await;
    let test_path = page
        .split("action=\"/connections/")
        .skip(1)
        .map(|c| format!("/connections/{}", c.split('"').next().unwrap()))
        .find(|p| p.ends_with("/test"))
        .unwrap();
    let result = app
        .post_form("/connections", &test_path, &[])
        .await
        .text()
        .await
        .unwrap();
    assert!(result.contains("works"), "{result}");
    assert!(result.contains(&client_id));

    let res = add_connection(&app, "Wrong", &app.sandbox_url, &client_id, "not-the-secret").await;
    assert!(app.landing(res).await.contains("Wrong"), "the notice names it");
    let page = app.get_html("/connections").await;
    let wrong_test = page
        .split("<tr>")
        .find(|row| row.contains("Wrong"))
        .unwrap()
        .split("action=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let result = app
        .post_form("/connections", &wrong_test, &[])
        .await
        .text()
        .await
        .unwrap();
    assert!(result.contains("failed") && result.contains("401"), "{result}");
}

#[tokio::test]
async fn a_platform_admin_creates_a_tenant_and_switches_to_it() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let res = app
        .post_form("/platform", "/platform/tenants", &[("name", "Globex")])
        .await;
    assert!(app.landing(res).await.contains("Created"));
    let res = app
        .post_form("/platform", "/platform/tenants", &[("name", "globex")])
        .await;
    assert_eq!(res.status().as_u16(), 422, "names differ in more than case");
    let refused = res.text().await.unwrap();
    assert!(
        refused.contains(r#"id="name-error""#) && refused.contains("already exists"),
        "{refused}"
    );
    let same = app
        .post_form("/platform", "/platform/tenants", &[("name", "Globex")])
        .await;
    assert_eq!(
        same.status().as_u16(),
        422,
        "the exact name again is refused the same way"
    );
    assert!(same.text().await.unwrap().contains("already exists"));

    let home = app.get_html("/").await;
    let globex = home
        .split("<option value=\"")
        .skip(1)
        .find(|c| c.contains(">Globex<"))
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let res = app
        .post_form("/", "/tenants/switch", &[("tenant_id", &globex)])
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let home = app.get_html("/").await;
    assert!(home.contains("has no API connection yet"));
    assert!(
        !home.contains("Sandbox — test data"),
        "no banner without a connection"
    );
    assert_eq!(app.get("/balances").await.status().as_u16(), 409);
    // The next sign-in, anywhere, lands in the tenant last chosen.
    let elsewhere = app.another_browser();
    elsewhere
        .sign_in_with_code(&app.admin_email, &app.admin_password)
        .await;
    assert!(
        elsewhere
            .get_html("/")
            .await
            .contains("has no API connection yet"),
        "lands in Globex"
    );

    let stranger = uuid::Uuid::new_v4().to_string();
    let res = app
        .post_form("/", "/tenants/switch", &[("tenant_id", &stranger)])
        .await;
    assert_eq!(res.status().as_u16(), 404);
}

#[tokio::test]
async fn a_fresh_production_install_leads_the_admin_to_create_a_tenant() {
    let mut app = spawn_app_without_sandbox().await;
    app.sign_in_as_admin().await;
    assert_eq!(location(&app.get("/").await), "/platform");
    let page = app.get_html("/platform").await;
    assert!(page.contains("No tenant yet"));
    let res = app
        .post_form("/platform", "/platform/tenants", &[("name", "Acme")])
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let home = app.get_html("/").await;
    assert!(home.contains("Acme") && home.contains("has no API connection yet"));
}

/// With a second admin, control changes (here a policy and a connection)
/// wait for them: shown as pending, never approved by the admin who made
/// them, applied once approved; a connection's secret travels sealed.
#[tokio::test]
async fn controls_wait_for_a_second_admin() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let second = crate::approvals::members(&app, "Admin", &["second-admin@example.com".into()])
        .await
        .remove(0);
    let res = app
        .post_form(
            "/policies",
            "/policies/payout",
            &[
                ("required_approvals", "0"),
                ("expires_after_hours", "24"),
                ("rate_tolerance_percent", "1"),
                ("reason", "let payouts run at once"),
            ],
        )
        .await;
    let page = app.landing(res).await;
    assert!(
        page.contains("Pending changes") && page.contains("New payouts policy"),
        "{page}"
    );
    let versions: i64 = sqlx::query_scalar("SELECT count(*) FROM approval_policies")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(versions, 0, "nothing changes before a second admin approves");
    let request: String =
        sqlx::query_scalar("SELECT id::text FROM action_requests WHERE kind = 'approval_policy'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let own = crate::approvals::approve(&app, &request).await;
    assert_eq!(own.status().as_u16(), 422, "the maker never approves their own");
    assert_eq!(
        crate::approvals::approve(&second, &request)
            .await
            .status()
            .as_u16(),
        303
    );
    crate::approvals::wait_for_status(&app, &request, "executed").await;
    let policies = app.get_html("/policies").await;
    assert!(policies.contains("version 1"), "{policies}");

    let creds = app.sandbox_credentials().await;
    app.post_form(
        "/platform",
        "/platform/allowlist",
        &[("base_url", &app.sandbox_url)],
    )
    .await;
    let secret = "a-secret-nobody-may-see";
    let res = add_connection(&app, "Second", &app.sandbox_url, &creds.client_id, secret).await;
    let page = app.landing(res).await;
    assert!(page.contains("Add the sandbox connection") && !page.contains(secret));
    let payload: String =
        sqlx::query_scalar("SELECT payload::text FROM action_requests WHERE kind = 'connection_change'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert!(!payload.contains(secret), "the secret is sealed in the request");
    let request: String =
        sqlx::query_scalar("SELECT id::text FROM action_requests WHERE kind = 'connection_change'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let review = second.get_html(&format!("/approvals/{request}")).await;
    assert!(review.contains("stored encrypted, never shown") && !review.contains(secret));
}

/// Payees: saved, listed, changed and deleted (after a confirmation) by a
/// tenant's only admin at once; with a second admin, saving one waits;
/// a payout to a payee saved today always waits for approval.
#[tokio::test]
async fn payees_are_saved_changed_and_deleted_through_the_gate() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let fields = [
        ("name", "Ada payroll"),
        ("kind", "bank"),
        ("country", "NG"),
        ("bank_code", "058"),
        ("account_number", "0123456789"),
        ("account_name", "Ada Okafor"),
    ];
    let res = app
        .post_form("/beneficiaries/new", "/beneficiaries", &fields)
        .await;
    let list = app.landing(res).await;
    assert!(list.contains("Payee &#39;Ada payroll&#39; saved."), "{list}");
    let sandbox = app.sandbox().await;
    let saved = sandbox.beneficiaries(None, None).await.unwrap().beneficiaries;
    assert_eq!(saved.len(), 1);
    let id = saved[0].id.to_string();

    let bad = app
        .post_form(
            "/beneficiaries/new",
            "/beneficiaries",
            &[("name", "x"), ("kind", "bank"), ("country", "NG")],
        )
        .await;
    assert_eq!(bad.status().as_u16(), 422);
    let refused = bad.text().await.unwrap();
    assert!(
        refused.contains(r#"<span class="field-error" id="account_number-error" role="alert">The account number is 6 to 20 digits"#),
        "{refused}"
    );

    let page = format!("/beneficiaries/{id}");
    let mut changed = fields.to_vec();
    changed[0] = ("name", "Ada Okafor (salary)");
    let res = app.post_form(&page, &page, &changed).await;
    assert_eq!(res.status().as_u16(), 303);
    assert_eq!(
        sandbox.beneficiary(&id).await.unwrap().name,
        "Ada Okafor (salary)"
    );

    // A payout to it, saved minutes ago, waits whatever the policy says.
    crate::approvals::members(&app, "Approver", &["payee-checker@example.com".into()]).await;
    crate::approvals::members(&app, "Operator", &["payee-maker@example.com".into()])
        .await
        .remove(0);
    let res = app
        .post_form(
            "/policies",
            "/policies/payout",
            &[
                ("required_approvals", "0"),
                ("expires_after_hours", "24"),
                ("rate_tolerance_percent", "1"),
                ("reason", "small payouts run at once"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let res = app
        .post_form(
            "/payouts/new?country=NG",
            "/payouts",
            &[
                ("country", "NG"),
                ("from_asset", "USDT"),
                ("amount", "5"),
                ("beneficiary_id", &id),
                ("payment_reason", "salary"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let request = location(&res).trim_start_matches("/approvals/").to_owned();
    let detail = app.get_html(&format!("/approvals/{request}")).await;
    assert!(
        detail.contains("saved less than 24 hours ago") && detail.contains("pending"),
        "{detail}"
    );

    // Deleting asks first, then goes.
    let confirm = app.post_form(&page, &format!("{page}/delete"), &[]).await;
    assert_eq!(confirm.status().as_u16(), 200);
    assert!(confirm.text().await.unwrap().contains("Delete payee"));
    let res = app
        .post_form(&page, &format!("{page}/delete"), &[("confirmed", "yes")])
        .await;
    assert_eq!(res.status().as_u16(), 303);
    assert!(sandbox
        .beneficiaries(None, None)
        .await
        .unwrap()
        .beneficiaries
        .is_empty());

    // With a second admin, saving a payee waits for them.
    crate::approvals::members(&app, "Admin", &["payee-admin@example.com".into()]).await;
    let res = app
        .post_form("/beneficiaries/new", "/beneficiaries", &fields)
        .await;
    assert!(app.landing(res).await.contains("waits for a second admin"));
    assert!(sandbox
        .beneficiaries(None, None)
        .await
        .unwrap()
        .beneficiaries
        .is_empty());
}

/// Default mode keeps the built-in sandbox's data under the portal's data
/// directory: a portal started again on the same database and directory
/// finds the same customers.
#[tokio::test]
async fn the_built_in_sandbox_keeps_its_data_across_restarts() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let sandbox = app.sandbox().await;
    let customer = sandbox
        .create_customer(&paydesk_api::models::customers::NewCustomer {
            email: "kept@example.com".into(),
            customer_type: "individual".into(),
            first_name: Some("Kept".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let again = paydesk::startup::Application::build_on(
        &app.settings,
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
    )
    .await
    .expect("the portal starts again");
    let url = again.sandbox_url().unwrap().to_owned();
    assert_ne!(url, app.sandbox_url, "a new sandbox process");
    let restarted = paydesk_api::Client::new(url, app.sandbox_credentials().await);
    let found = restarted.customer(&customer.id.to_string()).await.unwrap();
    assert_eq!(found.email, "kept@example.com");
}
