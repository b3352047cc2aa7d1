//! Bulk transfers and virtual accounts over real HTTP: per-item validation
//! (inline and CSV), confirm, items settling and failing on the clock,
//! retry of failed items only, recurring schedules, and bank transfers into
//! virtual accounts. Money is counted after each scenario.

mod support;

use paydesk_api::models::beneficiaries::NewBeneficiary;
use paydesk_api::models::bulk::{BulkItemInput, BulkScheduleUpdate, NewBatch, NewBulkSchedule};
use paydesk_api::models::customers::NewCustomer;
use paydesk_api::models::transactions::TransactionType;
use paydesk_api::models::virtual_accounts::{NewVirtualAccount, SimulateBankTransfer};
use paydesk_api::units::BaseUnits;
use paydesk_api::Client;
use serde_json::json;

const ETH: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
const ETH_2: &str = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359";

fn item(address: &str, amount: i64, reference: &str, memo: Option<&str>) -> BulkItemInput {
    BulkItemInput {
        address: Some(address.into()),
        chain: Some("ethereum".into()),
        amount: BaseUnits(amount),
        reference: reference.into(),
        memo: memo.map(Into::into),
        ..BulkItemInput::default()
    }
}

async fn usdt(c: &Client) -> i64 {
    c.balance("USDT").await.unwrap().available_balance.value()
}

#[tokio::test]
async fn a_batch_checks_every_item_and_one_bad_row_never_stops_the_others() {
    let t = support::spawn().await;
    let c = &t.client;
    let saved = c
        .create_beneficiary(&NewBeneficiary {
            kind: "crypto".into(),
            name: "Treasury".into(),
            destination: json!({"address": ETH_2, "chain": "ethereum"}),
        })
        .await
        .unwrap();
    let bank = c
        .create_beneficiary(&NewBeneficiary {
            kind: "bank".into(),
            name: "Ada".into(),
            destination: json!({"account_name": "Ada", "account_number": "0123456789", "bank_code": "058"}),
        })
        .await
        .unwrap();
    let csv = format!(
        "reference,address,chain,beneficiary_id,amount,memo\n\
         r1,{ETH},ethereum,,10000000,\n\
         r2,{},ethereum,,5000000,\n\
         r3,,,{},7000000,\n\
         r4,,,{},1000000,\n\
         r1,{ETH},ethereum,,1000000,\n\
         r6,{ETH},ethereum,,abc,\n\
         r7,{ETH_2},ethereum,,3000000,fail\n",
        ETH.replace('a', "A"),
        saved.id,
        bank.id
    );
    let body = NewBatch {
        currency: "USDT".into(),
        reference: "batch-1".into(),
        csv: Some(csv),
        ..NewBatch::default()
    };
    let preview = c.preview_bulk_transfer(&body).await.unwrap();
    let statuses: Vec<&str> = preview.items.iter().map(|i| i.status.as_str()).collect();
    assert_eq!(
        statuses,
        ["valid", "invalid", "valid", "invalid", "invalid", "invalid", "valid"]
    );
    assert!(
        preview.items[1].errors[0].contains("checksum"),
        "{:?}",
        preview.items[1].errors
    );
    assert!(preview.items[3].errors[0].contains("payout"));
    assert!(preview.items[4].errors[0].contains("repeats row 1"));
    assert_eq!(preview.items[2].address, ETH_2, "the saved beneficiary's address");
    // Three valid items: 10 + 7 + 3 USDT, and 1 USDT of fee each.
    assert_eq!(
        (preview.totals.valid_items, preview.totals.total),
        (3, BaseUnits(23_000_000))
    );
    assert!(
        c.bulk_transfers(None, None, None)
            .await
            .unwrap()
            .batches
            .is_empty(),
        "a preview stores nothing"
    );
    let bad_status = c.bulk_transfers(Some("lost"), None, None).await.unwrap_err();
    assert_eq!(bad_status.status(), Some(400));

    let start = usdt(c).await;
    let draft = c.create_bulk_transfer(&body).await.unwrap();
    assert_eq!(draft.status.as_str(), "draft");
    assert_eq!(
        c.create_bulk_transfer(&body).await.unwrap().id,
        draft.id,
        "idempotent"
    );
    assert_eq!(usdt(c).await, start, "a draft holds nothing");
    let batch = c.confirm_bulk_transfer(&draft.id.to_string()).await.unwrap();
    assert_eq!(batch.status.as_str(), "processing");
    assert_eq!(
        batch
            .items
            .iter()
            .filter(|i| i.status.as_str() == "skipped")
            .count(),
        4
    );
    assert_eq!(usdt(c).await, start - 23_000_000);
    assert_eq!(
        c.confirm_bulk_transfer(&draft.id.to_string())
            .await
            .unwrap_err()
            .status(),
        Some(422)
    );

    c.sandbox_advance_clock(70).await.unwrap();
    let done = c.bulk_transfer(&draft.id.to_string()).await.unwrap();
    assert_eq!(done.status.as_str(), "partially_failed");
    let failed: Vec<_> = done
        .items
        .iter()
        .filter(|i| i.status.as_str() == "failed")
        .collect();
    assert_eq!((failed.len(), failed[0].reference.as_str()), (1, "r7"));
    assert_eq!(
        usdt(c).await,
        start - 19_000_000,
        "the failed item's money is back"
    );

    // Retry sends the failed item only, under a new withdrawal.
    let before_retry = failed[0].withdrawal_id;
    let retried = c.retry_bulk_transfer(&draft.id.to_string()).await.unwrap();
    let r7 = retried.items.iter().find(|i| i.reference == "r7").unwrap();
    assert_eq!((r7.attempts, r7.status.as_str()), (2, "pending"));
    assert_ne!(r7.withdrawal_id, before_retry);
    let withdrawals = c.withdrawals(None, None, Some(100)).await.unwrap();
    assert_eq!(
        withdrawals.total_count, 4,
        "three sent, one retried, nothing doubled"
    );
    c.sandbox_advance_clock(70).await.unwrap();
    // The retried item still carries the failing memo, so it fails again.
    let again = c.bulk_transfer(&draft.id.to_string()).await.unwrap();
    assert_eq!(again.status.as_str(), "partially_failed");
    assert_eq!(usdt(c).await, start - 19_000_000);

    // Inline items; a batch the wallet can't pay is refused whole.
    let big = NewBatch {
        currency: "USDT".into(),
        items: vec![
            item(ETH, 5_000_000, "a", None),
            item(ETH, usdt(c).await, "b", None),
        ],
        ..NewBatch::default()
    };
    let draft = c.create_bulk_transfer(&big).await.unwrap();
    let e = c.confirm_bulk_transfer(&draft.id.to_string()).await.unwrap_err();
    assert_eq!((e.status(), e.code()), (Some(422), Some("INSUFFICIENT_BALANCE")));
    assert_eq!(
        c.bulk_transfer(&draft.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "draft"
    );
    for bad in [
        NewBatch {
            currency: "NGN".into(),
            items: vec![item(ETH, 1, "x", None)],
            ..NewBatch::default()
        },
        NewBatch {
            currency: "USDT".into(),
            ..NewBatch::default()
        },
        NewBatch {
            currency: "USDT".into(),
            csv: Some("amount,address\n".into()),
            ..NewBatch::default()
        },
    ] {
        assert_eq!(
            c.preview_bulk_transfer(&bad).await.unwrap_err().status(),
            Some(400)
        );
    }
}

#[tokio::test]
async fn a_bulk_schedule_sends_its_batch_on_each_tick_and_survives_a_poor_wallet() {
    let t = support::spawn().await;
    let c = &t.client;
    let now = c.sandbox_clock().await.unwrap().now;
    let time = (now + chrono::Duration::minutes(5)).format("%H:%M").to_string();
    let schedule = NewBulkSchedule {
        name: "Payroll".into(),
        currency: "USDT".into(),
        items: vec![
            item(ETH, 2_000_000, "alice", None),
            item(ETH_2, 3_000_000, "bob", None),
        ],
        frequency: "daily".into(),
        execution_time: time,
        reference: "payroll".into(),
        ..NewBulkSchedule::default()
    };
    let mut invalid = schedule.clone();
    invalid.items[1].address = Some("0x123".into());
    let e = c.create_bulk_schedule(&invalid).await.unwrap_err();
    assert_eq!(e.status(), Some(400));
    let s = c.create_bulk_schedule(&schedule).await.unwrap();
    let start = usdt(c).await;
    c.sandbox_advance_clock(2 * 86_400).await.unwrap();
    let ran = c.bulk_schedules().await.unwrap().remove(0);
    assert_eq!(ran.total_executions, 2);
    let execs = c.bulk_schedule_executions(&s.id.to_string()).await.unwrap();
    assert!(execs.iter().all(|e| e.status.as_str() == "completed"));
    let batch = c.bulk_transfer(&execs[0].batch_id).await.unwrap();
    assert_eq!((batch.status.as_str(), batch.items.len()), ("completed", 2));
    assert_eq!(usdt(c).await, start - 2 * 7_000_000);

    // Items too big for the wallet: the tick fails, the schedule goes on.
    let mut huge = schedule.items.clone();
    huge[0].amount = BaseUnits(start * 2);
    let updated = c
        .update_bulk_schedule(
            &s.id.to_string(),
            &BulkScheduleUpdate {
                items: Some(huge),
                ..BulkScheduleUpdate::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        updated.next_execution_at, ran.next_execution_at,
        "items don't move the tick"
    );
    c.sandbox_advance_clock(86_400).await.unwrap();
    let execs = c.bulk_schedule_executions(&s.id.to_string()).await.unwrap();
    assert_eq!(execs[0].status.as_str(), "failed");
    assert!(execs[0].reason.as_deref().unwrap().contains("USDT wallet"));
    assert_eq!(
        c.bulk_transfer(&execs[0].batch_id).await.unwrap().status.as_str(),
        "draft"
    );
    let cancelled = c.cancel_bulk_schedule(&s.id.to_string()).await.unwrap();
    assert_eq!(
        (cancelled.status.as_str(), cancelled.next_execution_at),
        ("cancelled", None)
    );
}

#[tokio::test]
async fn a_bank_transfer_into_a_virtual_account_credits_naira() {
    let t = support::spawn().await;
    let c = &t.client;
    let hook = support::Receiver::start(0).await;
    c.sandbox_set_webhook(&hook.url, None).await.unwrap();
    let customer = c
        .create_customer(&NewCustomer {
            email: "ada@example.com".into(),
            customer_type: "individual".into(),
            first_name: Some("Ada".into()),
            last_name: Some("Okafor".into()),
            ..NewCustomer::default()
        })
        .await
        .unwrap();
    let body = NewVirtualAccount {
        customer_id: customer.id,
        reference: "va-1".into(),
    };
    let account = c.create_virtual_account(&body).await.unwrap();
    assert_eq!(account.account_number.len(), 10);
    assert_eq!(
        (account.account_name.as_str(), account.currency.as_str()),
        ("Ada Okafor", "NGN")
    );
    assert_eq!(c.create_virtual_account(&body).await.unwrap().id, account.id);
    let second = NewVirtualAccount {
        customer_id: customer.id,
        reference: "va-2".into(),
    };
    assert_eq!(
        c.create_virtual_account(&second).await.unwrap_err().status(),
        Some(422)
    );
    let unknown = NewVirtualAccount {
        customer_id: uuid::Uuid::new_v4(),
        reference: String::new(),
    };
    assert_eq!(
        c.create_virtual_account(&unknown).await.unwrap_err().status(),
        Some(400)
    );

    let before = c.balance("NGN").await.unwrap().available_balance.value();
    let tx = c
        .sandbox_bank_transfer(
            &account.id.to_string(),
            &SimulateBankTransfer {
                amount: BaseUnits(2_500_000),
                sender_name: Some("Kofi Mensah".into()),
                ..SimulateBankTransfer::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(tx.kind, TransactionType::DepositConfirmed);
    assert_eq!(tx.metadata["virtual_account_id"], json!(account.id));
    assert_eq!(
        c.balance("NGN").await.unwrap().available_balance.value(),
        before + 2_500_000
    );
    let found = c.transaction(&tx.transaction_id.to_string()).await.unwrap();
    assert_eq!(found.metadata["sender_name"], "Kofi Mensah");
    assert_eq!(
        c.virtual_account(&account.id.to_string())
            .await
            .unwrap()
            .total_received,
        BaseUnits(2_500_000)
    );
    let deposit = hook.wait_for("deposit.success").await;
    assert_eq!(deposit.json["data"]["amount"], "2500000");
    let listed = c
        .virtual_accounts(Some(&customer.id.to_string()), None, None)
        .await
        .unwrap();
    assert_eq!(listed.total, 1);
    support::assert_ledger_adds_up(c).await;
}
