//! The webhook receiver: signature on the raw body, once per event_id, and
//! the built-in sandbox's events arriving on their own.

use paydesk_api::models::addresses::GenerateAddress;
use paydesk_api::models::control::SimulateDeposit;
use paydesk_api::units::BaseUnits;
use paydesk_api::webhook::sign_webhook;
use secrecy::ExposeSecret;
use serde_json::json;

use crate::helpers::spawn_app;

async fn builtin(app: &crate::helpers::TestApp) -> (String, String) {
    let (id, sealed): (uuid::Uuid, Vec<u8>) =
        sqlx::query_as("SELECT id, client_secret_enc FROM connections WHERE is_builtin")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    (
        id.to_string(),
        app.key.open(&sealed).unwrap().expose_secret().to_owned(),
    )
}

async fn post_event(app: &crate::helpers::TestApp, connection: &str, body: &str, signature: &str) -> u16 {
    app.http
        .post(app.url(&format!("/hooks/{connection}")))
        .header("content-type", "application/json")
        .header("x-service-signature", signature)
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn count(app: &crate::helpers::TestApp) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM webhook_events")
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn signed_events_are_stored_once_and_forged_ones_refused() {
    let mut app = spawn_app().await;
    let (connection, secret) = builtin(&app).await;
    let body = json!({
        "event": "payouts.processing", "event_id": "evt_1", "company_id": uuid::Uuid::new_v4(),
        "data": {"status": "processing"}, "created_at": "2026-11-23T00:00:00Z"
    })
    .to_string();
    let good = sign_webhook(&secret, body.as_bytes());
    assert_eq!(post_event(&app, &connection, &body, &good).await, 200);
    assert_eq!(
        post_event(&app, &connection, &body, &good).await,
        200,
        "a repeat is acknowledged"
    );
    assert_eq!(count(&app).await, 1, "and stored once");

    let forged = sign_webhook("not-the-secret", body.as_bytes());
    assert_eq!(post_event(&app, &connection, &body, &forged).await, 401);
    let tampered = body.replace("processing", "success");
    assert_eq!(post_event(&app, &connection, &tampered, &good).await, 401);
    assert_eq!(post_event(&app, &connection, &body, "").await, 401);
    assert_eq!(count(&app).await, 1);
    assert_eq!(
        rejected_minutes(&app).await.iter().map(|(_, n)| n).sum::<i64>(),
        3
    );
    assert_eq!(
        post_event(&app, &uuid::Uuid::new_v4().to_string(), &body, &good).await,
        404
    );

    app.sign_in_as_admin().await;
    let page = app.get_html("/events").await;
    assert!(page.contains("payouts.processing") && page.contains("evt_1"));

    // The connections page gives the URL to paste into the provider's
    // dashboard, and asks the service who the connection is on opening.
    let connections = app.get_html("/connections").await;
    assert!(
        connections.contains(&format!("/hooks/{connection}</code>"))
            && connections.contains("data-copy=\"http"),
        "{connections}"
    );
    assert!(connections.contains(&format!(
        "hx-post=\"/connections/{connection}/test\" hx-trigger=\"load\""
    )));

    // A received event can be run through the receiver again, on record.
    let id: i64 = sqlx::query_scalar("SELECT id FROM webhook_events")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let detail = format!("/events/{id}");
    let res = app.post_form(&detail, &format!("{detail}/replay"), &[]).await;
    assert_eq!(res.status().as_u16(), 303);
    let landed = app.landing(res).await;
    assert!(landed.contains("went through the receiver again"), "{landed}");
    assert_eq!(count(&app).await, 1, "a replay stores nothing new");
    app.link_audit().await;
    let replays: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE action = 'webhooks.replayed'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(replays, 1);
}

#[tokio::test]
async fn the_built_in_sandbox_delivers_its_events_to_the_portal() {
    let mut app = spawn_app().await;
    let client = app.sandbox().await;
    let address = client
        .generate_address(&GenerateAddress {
            chain: "ethereum".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .address;
    client
        .sandbox_deposit(&SimulateDeposit {
            chain: "ethereum".into(),
            address,
            currency: "USDT".into(),
            amount: BaseUnits(5_000_000),
        })
        .await
        .unwrap();
    client.sandbox_advance_clock(120).await.unwrap();
    assert_eq!(count(&app).await, 1);
    app.sign_in_as_admin().await;
    let page = app.get_html("/events").await;
    assert!(page.contains("deposit.success"));
    let id = page
        .split("<a href=\"/events/")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let detail = app.get_html(&format!("/events/{id}")).await;
    assert!(detail.contains("is_simulated"));
}

/// The rejection records once every minute so far is finished: each
/// minute's first-delivery time and count.
async fn rejected_minutes(app: &crate::helpers::TestApp) -> Vec<(String, i64)> {
    let later = chrono::Utc::now() + chrono::Duration::minutes(2);
    paydesk::webhooks::receiver::sweep_rejections(&app.pool, later)
        .await
        .unwrap();
    app.link_audit().await;
    sqlx::query_as(
        "SELECT details->>'minute', (details->>'count')::bigint FROM audit_log \
         WHERE action = 'webhooks.rejected' ORDER BY id",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_flood_of_unsigned_posts_is_one_record_a_minute_with_the_count() {
    let app = spawn_app().await;
    let (connection, _) = builtin(&app).await;
    for _ in 0..300 {
        assert_eq!(post_event(&app, &connection, "{}", "").await, 401);
    }
    let minutes = rejected_minutes(&app).await;
    assert!(
        !minutes.is_empty() && minutes.len() <= 2,
        "one record per minute: {minutes:?}"
    );
    let mut seen: Vec<&String> = minutes.iter().map(|(m, _)| m).collect();
    seen.dedup();
    assert_eq!(seen.len(), minutes.len(), "at most one record for a minute");
    assert_eq!(minutes.iter().map(|(_, n)| n).sum::<i64>(), 300);
    assert!(
        rejected_minutes(&app).await.len() == minutes.len(),
        "a minute is recorded once"
    );
    let (target,): (String,) =
        sqlx::query_as("SELECT target FROM audit_log WHERE action = 'webhooks.rejected' LIMIT 1")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(target, "connection:Built-in sandbox", "the connection by name");
}
