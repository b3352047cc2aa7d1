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
    assert!(
        page.contains("10,000.000000 USDT"),
        "amounts read with thousands separators"
    );
    assert!(page.contains("OPENING_USDT"));
    // The balances add up in the reporting currency at the service's rates:
    // 2.5 BTC alone is worth more than 100,000 dollars on the sandbox.
    let total = page
        .split("Total available <strong class=\"num\">")
        .nth(1)
        .and_then(|rest| rest.split("</strong>").next())
        .unwrap_or_else(|| panic!("no total on {page}"));
    assert!(
        total.ends_with(" USD") && total.matches(',').count() >= 1,
        "{total}"
    );
    assert!(page.contains("Nothing failed in the last 24 hours."));
    // The menu comes in groups, each under its heading.
    for group in ["Money", "Cards", "Controls", "Admin", "Developers"] {
        assert!(
            page.contains(&format!("<h2 class=\"nav-group\">{group}</h2>")),
            "{group}"
        );
    }
    assert!(!page.contains("<script>"), "no inline scripts");

    // Reading a page writes nothing to the audit log: its upstream reads
    // are counted in the metrics instead.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    app.link_audit().await;
    let reads: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE action = 'upstream.call'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(reads, 0);
    let metrics = app.get_html("/metrics").await;
    assert!(
        metrics.contains("paydesk_upstream_call_duration_seconds_count{operation=\"/api/balances\""),
        "{metrics}"
    );
}
