//! The dashboard, proxied through signed calls to the built-in sandbox.

use crate::helpers::spawn_app;

#[tokio::test]
async fn the_dashboard_shows_balances_and_latest_transactions_in_a_sandbox_banner() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let page = app.get_html("/").await;
    assert!(page.contains("Sandbox — test data"));
    assert!(page.contains("Demo Company"));
    assert!(page.contains("2.50000000 BTC"));
    assert!(page.contains("10000.000000 USDT"));
    assert!(page.contains("OPENING_USDT"));
    assert!(!page.contains("<script>"), "no inline scripts");

    // Each upstream call is in the audit log, with method, path and status.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let calls: Vec<(String, serde_json::Value)> =
        sqlx::query_as("SELECT outcome, details FROM audit_log WHERE action = 'upstream.call' ORDER BY id")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    assert!(calls.len() >= 2, "{calls:?}");
    let balances = calls.iter().find(|(_, d)| d["path"] == "/api/balances").unwrap();
    assert_eq!(balances.0, "ok");
    assert_eq!(balances.1["method"], "GET");
    assert_eq!(balances.1["status"], 200);
    assert!(balances.1["request_id"].is_string());
}
