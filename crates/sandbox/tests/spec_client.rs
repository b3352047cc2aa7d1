//! A request signed by a client written from the spec alone — a Python
//! script using only its standard library, not this project's code — is
//! accepted, and a wrong secret is refused.

mod support;

#[tokio::test]
async fn an_independent_client_written_from_the_spec_is_accepted() {
    let t = support::spawn().await;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spec_client.py");
    let output = tokio::process::Command::new("python3")
        .args([script, &t.sandbox.base_url, &t.client_id, &t.secret])
        .output()
        .await
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(results["whoami"]["status"], 200);
    assert_eq!(results["whoami"]["body"]["data"]["client_id"], t.client_id);
    assert_eq!(results["balances"]["status"], 200);
    assert_eq!(results["generate"]["status"], 201);
    assert_eq!(results["generate"]["body"]["data"]["label"], "spec client");
    assert_eq!(results["wrong_secret"]["status"], 401);
}
