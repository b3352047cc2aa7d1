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
async fn unknown_pages_are_a_finished_404_page() {
    let app = spawn_app().await;
    let res = app.get("/no/such/page").await;
    assert_eq!(res.status().as_u16(), 404);
    let body = res.text().await.unwrap();
    assert!(body.contains("Not found"));
    assert!(body.contains("Back to the dashboard"));
}
