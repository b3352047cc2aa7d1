//! NGN virtual accounts: issued from a customer's page once, listed, and
//! on a sandbox a bank transfer into one credits NGN and shows on its page.

use paydesk_api::models::customers::NewCustomer;

use crate::helpers::{location, spawn_app};

#[tokio::test]
async fn a_virtual_account_is_issued_once_and_shows_the_transfers_it_receives() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let sandbox = app.sandbox().await;
    let customer = sandbox
        .create_customer(&NewCustomer {
            email: "va@example.com".into(),
            customer_type: "individual".into(),
            first_name: Some("Ada".into()),
            last_name: Some("Okafor".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let page = format!("/customers/{}", customer.id);
    let shown = app.get_html(&page).await;
    let reference = shown
        .split("name=\"reference\" value=\"")
        .nth(1)
        .expect("an issue button")
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let issue = format!("{page}/virtual-accounts");
    let res = app.post_form(&page, &issue, &[("reference", &reference)]).await;
    let account_page = location(&res);
    let landed = app.landing(res).await;
    assert!(
        landed.contains("issued") && landed.contains("Nothing received yet"),
        "{landed}"
    );
    let again = app.post_form(&page, &issue, &[("reference", &reference)]).await;
    assert_eq!(
        location(&again),
        account_page,
        "a double submit is the same account"
    );
    let listed = sandbox
        .virtual_accounts(None, None, None)
        .await
        .unwrap()
        .virtual_accounts;
    assert_eq!(listed.len(), 1);
    assert!(app
        .get_html("/virtual-accounts")
        .await
        .contains(&listed[0].account_number));
    assert!(
        app.get_html(&page).await.contains(&listed[0].account_number),
        "on the customer's page"
    );

    let bad = app
        .post_form(
            &account_page,
            &format!("{account_page}/transfers"),
            &[("amount", "1,000")],
        )
        .await;
    assert_eq!(bad.status().as_u16(), 422);
    assert!(bad.text().await.unwrap().contains(r#"id="amount-error""#));
    let res = app
        .post_form(
            &account_page,
            &format!("{account_page}/transfers"),
            &[("amount", "2500"), ("sender_name", "Chidi")],
        )
        .await;
    let landed = app.landing(res).await;
    assert!(
        landed.contains("A transfer of 2500 NGN from Chidi arrived"),
        "{landed}"
    );
    assert!(landed.contains("2500.00 NGN"), "received so far: {landed}");
    let deposits = app.get_html(&format!("{account_page}/deposits")).await;
    assert!(
        deposits.contains("Chidi") && !deposits.contains("<html"),
        "{deposits}"
    );
}
