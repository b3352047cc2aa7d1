//! An independent black-box probe, written from the documents alone (a
//! Python script using only its standard library, not this project's code),
//! runs some 570 checks of the documented behaviour against the sandbox:
//! signing, errors, idempotency, customers, cards, trading, Lightning,
//! withdrawals, rates, bulk transfers, virtual accounts and webhooks.

#[tokio::test]
async fn an_independent_probe_written_from_the_documents_passes() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let fixture: paydesk_sandbox::Fixture =
        serde_json::from_str(include_str!("conformance_fixture.json")).expect("the fixture parses");
    let sandbox = paydesk_sandbox::RunningSandbox::start(&fixture)
        .await
        .expect("the sandbox starts");
    let output = tokio::process::Command::new("python3")
        .args([&format!("{dir}/tests/conformance_probe.py"), &sandbox.base_url])
        .output()
        .await
        .expect("python3 runs");
    let report = String::from_utf8_lossy(&output.stdout);
    let summary = report
        .lines()
        .find(|l| l.contains("SUMMARY"))
        .unwrap_or("no summary");
    assert!(
        output.status.success(),
        "{summary}\n{}\n{}",
        report
            .lines()
            .filter(|l| l.starts_with("FAIL"))
            .collect::<Vec<_>>()
            .join("\n"),
        String::from_utf8_lossy(&output.stderr)
    );
    sandbox.stop().await;
}
