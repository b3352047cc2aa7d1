//! The top bar's search: one box that finds what the member may see.

use crate::approvals::{file_payout, members, request_id};
use crate::helpers::spawn_app;

#[tokio::test]
async fn one_box_finds_transactions_requests_and_members_the_member_may_see() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op-search@example.com".into()])
        .await
        .remove(0);
    let viewer = members(&app, "Viewer", &["viewer-search@example.com".into()])
        .await
        .remove(0);
    let request = request_id(&file_payout(&operator, "0123456789", "100").await);

    let page = app.get_html("/").await;
    assert!(page.contains(r#"action="/search""#), "the box is in the top bar");

    // A transaction by its reference, a request by words of its summary,
    // a member by part of their email.
    let found = app.get_html("/search?q=OPENING_USDT").await;
    assert!(
        found.contains("Transaction") && found.contains("/transactions/"),
        "{found}"
    );
    let found = app.get_html("/search?q=pay+100").await;
    assert!(found.contains(&format!("/approvals/{request}")), "{found}");
    assert!(
        !found.contains("<p class=\"error\""),
        "words are no failure of the id lookups: {found}"
    );
    let found = app.get_html(&format!("/search?q={request}")).await;
    assert!(found.contains(&format!("/approvals/{request}")), "by id: {found}");
    let found = app.get_html("/search?q=op-search").await;
    assert!(
        found.contains("Member") && found.contains("op-search@example.com"),
        "{found}"
    );

    // A viewer reads balances and transactions, not the member list.
    let seen = viewer.get_html("/search?q=op-search").await;
    assert!(!seen.contains("op-search@example.com"), "{seen}");
    assert!(seen.contains("Nothing you may see matches"), "{seen}");

    // Nothing found says so; a single character asks for more.
    let none = app.get_html("/search?q=no-such-thing-anywhere").await;
    assert!(none.contains("Nothing you may see matches"), "{none}");
    let short = app.get_html("/search?q=x").await;
    assert!(short.contains("Type at least two characters."), "{short}");
}
