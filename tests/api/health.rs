use crate::helpers::spawn_app;

#[tokio::test]
async fn the_portal_is_live_and_ready() {
    let app = spawn_app().await;
    assert_eq!(app.get("/healthz").await.status().as_u16(), 200);
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status().as_u16(), 200);
    assert_eq!(ready.text().await.unwrap(), "ready");
}

#[tokio::test]
async fn the_favicon_is_served_where_browsers_ask_for_it() {
    let app = spawn_app().await;
    let res = app.get("/favicon.ico").await;
    assert_eq!(res.status().as_u16(), 301);
    let to = crate::helpers::location(&res);
    let icon = app.get(&to).await;
    assert_eq!(icon.status().as_u16(), 200);
    assert_eq!(icon.headers()["content-type"], "image/svg+xml");
    assert!(app.get_html("/login").await.contains("rel=\"icon\""));
}

#[tokio::test]
async fn unknown_pages_are_a_finished_404_page() {
    let app = spawn_app().await;
    let res = app.get("/no/such/page").await;
    assert_eq!(res.status().as_u16(), 404);
    let body = res.text().await.unwrap();
    assert!(body.contains("Not found"));
    assert!(body.contains("Back to the dashboard"));
}

/// `/metrics` is scraped without a session: request latency per route
/// pattern, upstream calls per operation, approval requests by status and
/// the job queue.
#[tokio::test]
async fn metrics_are_scraped_without_a_session() {
    let mut app = crate::helpers::spawn_app().await;
    app.sign_in_as_admin().await;
    app.get_html("/balances").await;
    let scraper = crate::helpers::TestApp {
        http: crate::helpers::new_browser(),
        ..app.clone()
    };
    let res = scraper.get("/metrics").await;
    assert_eq!(res.status().as_u16(), 200);
    let body = res.text().await.unwrap();
    assert!(
        body.contains("paydesk_http_request_duration_seconds_bucket{route=\"/balances\""),
        "{body}"
    );
    assert!(
        body.contains("paydesk_upstream_call_duration_seconds_count{operation=\"/api/balances\""),
        "{body}"
    );
    assert!(
        body.contains("paydesk_approval_requests{status=\"pending\"}"),
        "{body}"
    );
    assert!(body.contains("paydesk_job_queue_depth"), "{body}");
}
