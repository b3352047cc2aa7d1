//! The portal starts with its in-process sandbox and reports ready.

use std::net::TcpListener;

use paydesk::startup::Application;

#[tokio::test]
async fn the_portal_is_live_and_its_upstream_ready() {
    let app = Application::build_on(TcpListener::bind("127.0.0.1:0").unwrap())
        .await
        .unwrap();
    let base = format!("http://{}", app.addr());
    tokio::spawn(app.run_until_stopped());
    let http = reqwest::Client::new();
    let live = http.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(live.status().as_u16(), 200);
    let ready = http.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status().as_u16(), 200);
    assert_eq!(ready.text().await.unwrap(), "ready");
}
