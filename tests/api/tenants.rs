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
    assert!(res.text().await.unwrap().contains("allow-list"));

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
    assert_eq!(res.status().as_u16(), 200);
    let page = res.text().await.unwrap();
    assert!(page.contains("be shown again"));
    assert!(!page.contains(&secret), "the secret never reaches a page");

    let stored: Vec<Vec<u8>> = sqlx::query_scalar("SELECT client_secret_enc FROM connections")
        .fetch_all(&app.pool)
        .await
        .unwrap();
    assert!(stored
        .iter()
        .all(|s| !s.windows(secret.len()).any(|w| w == secret.as_bytes())));
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
    assert_eq!(res.status().as_u16(), 200);
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
    assert_eq!(res.status().as_u16(), 200);
    assert!(res.text().await.unwrap().contains("Created"));
    let res = app
        .post_form("/platform", "/platform/tenants", &[("name", "globex")])
        .await;
    assert_eq!(res.status().as_u16(), 422);

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
    assert_eq!(res.status().as_u16(), 200);
    let home = app.get_html("/").await;
    assert!(home.contains("Acme") && home.contains("has no API connection yet"));
}
