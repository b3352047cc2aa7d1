//! Balances and the opening transactions, over real HTTP.

mod support;

use paydesk_api::units::BaseUnits;

#[tokio::test]
async fn lists_every_wallet_with_formatted_balances() {
    let t = support::spawn().await;
    let list = t.client.balances().await.unwrap();
    let me = t.client.whoami().await.unwrap();
    assert_eq!(list.company_id, me.active_company_id);
    let mut currencies: Vec<_> = list.accounts.iter().map(|a| a.currency.to_string()).collect();
    currencies.sort();
    assert_eq!(currencies, ["BTC", "NGN", "USDC", "USDT"]);
    let btc = list.accounts.iter().find(|a| a.currency.code() == "BTC").unwrap();
    assert_eq!(btc.available_balance, BaseUnits(250_000_000));
    assert_eq!(btc.ledger_balance_formatted, "2.50000000 BTC");
    let ngn = list.accounts.iter().find(|a| a.currency.code() == "NGN").unwrap();
    assert_eq!(ngn.available_balance_formatted, "50000.00 NGN");
}

#[tokio::test]
async fn one_balance_and_404_without_a_wallet() {
    let t = support::spawn().await;
    let usdt = t.client.balance("USDT").await.unwrap();
    assert_eq!(usdt.available_balance, BaseUnits(10_000_000_000));
    assert_eq!(usdt.pending_balance, BaseUnits(0));
    assert_eq!(usdt.total_balance, BaseUnits(10_000_000_000));
    let lower = t.client.balance("usdt").await.unwrap();
    assert_eq!(lower.account_number, usdt.account_number);

    for missing in ["ETH", "EUR", "not-a-currency"] {
        let err = t.client.balance(missing).await.unwrap_err();
        assert_eq!(err.status(), Some(404), "{missing}");
        assert_eq!(err.code(), Some("NOT_FOUND"));
    }
}

#[tokio::test]
async fn opening_balances_are_settled_transactions() {
    let t = support::spawn().await;
    let tx = t.client.transaction("OPENING_USDT").await.unwrap();
    assert_eq!(tx.amount, BaseUnits(10_000_000_000));
    assert_eq!(serde_json::to_value(tx.kind).unwrap(), "DEPOSIT_CONFIRMED");
    assert_eq!(serde_json::to_value(tx.state).unwrap(), "SETTLED");
    assert_eq!(tx.amount_formatted, "10000.000000 USDT");
}
