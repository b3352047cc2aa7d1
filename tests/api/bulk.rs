//! Bulk transfers: a CSV with a bad row refused with its row number and
//! the text kept; fixed, filed by an Operator as one request, approved by
//! an Approver, created and confirmed upstream once; the items settling on
//! the sandbox clock; a failed item retried through a request of its own;
//! a double submit filing once.

use crate::approvals::{approve, members, request_id, wait_for_status};
use crate::cards::{confirm, form_reference};
use crate::helpers::{spawn_app, TestApp};

/// A well-formed ethereum address (the EIP-55 test vector, lower case).
const ADDRESS: &str = "0x52908400098527886e0f7030069857d2e4169ee7";

async fn requests(app: &TestApp, kind: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM action_requests WHERE kind = $1")
        .bind(kind)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

async fn batches(app: &TestApp) -> Vec<paydesk_api::models::bulk::Batch> {
    app.sandbox()
        .await
        .bulk_transfers(None, None, Some(100))
        .await
        .unwrap()
        .batches
}

fn csv(second_amount: &str) -> String {
    format!(
        "asset,chain,address,amount,reference,memo\n\
         USDT,ethereum,{ADDRESS},10,\"inv, 1\",\n\
         USDT,ethereum,{ADDRESS},{second_amount},inv-2,\n\
         USDT,ethereum,{ADDRESS},2,inv-3,fail\n"
    )
}

#[tokio::test]
async fn a_batch_is_checked_filed_once_approved_confirmed_once_and_settles() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["operator@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["approver@example.com".into()])
        .await
        .remove(0);

    // The template downloads as CSV.
    let res = operator.get("/bulk-transfers/template.csv").await;
    assert_eq!(res.status().as_u16(), 200);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/csv"));
    assert!(res
        .text()
        .await
        .unwrap()
        .starts_with("asset,chain,address,amount"));

    // A bad row is refused with its row number; the text is kept.
    let reference = form_reference(&operator, "/bulk-transfers").await;
    let bad = csv("5.1234567");
    let res = operator
        .post_form(
            "/bulk-transfers",
            "/bulk-transfers",
            &[("csv", bad.as_str()), ("reference", reference.as_str())],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    let page = res.text().await.unwrap();
    assert!(page.contains("Row 2: the amount has more decimals"), "{page}");
    assert!(page.contains("5.1234567"), "the text is kept: {page}");
    assert_eq!(requests(&app, "bulk_transfer").await, 0);

    // Fixed: previewed with the totals and fees, then filed as one request.
    let good = csv("5");
    let fields = [("csv", good.as_str()), ("reference", reference.as_str())];
    let res = confirm(
        &operator,
        "/bulk-transfers",
        "/bulk-transfers",
        &fields,
        "17.000000 USDT",
    )
    .await;
    assert_eq!(res.status().as_u16(), 303);
    let id = request_id(&res);
    let page = operator.get_html(&format!("/approvals/{id}")).await;
    assert!(page.contains("Network fees") && page.contains("Row 3"), "{page}");
    assert!(batches(&app).await.is_empty(), "nothing is sent before approval");
    let list = operator.get_html("/bulk-transfers").await;
    assert!(
        list.contains("Waiting for approval") && list.contains(&id),
        "{list}"
    );

    assert_eq!(approve(&approver, &id).await.status().as_u16(), 303);
    wait_for_status(&app, &id, "executed").await;
    let sent = batches(&app).await;
    assert_eq!(sent.len(), 1, "one batch");
    let b = &sent[0];
    assert_eq!(b.reference, reference);
    assert_eq!(b.items.len(), 3);
    assert_eq!(b.totals.amount.value(), 17_000_000);
    assert!(b.confirmed_at.is_some(), "confirmed");
    let confirms: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM request_timeline WHERE request_id = $1::uuid AND what = 'confirmed'",
    )
    .bind(&id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(confirms, 1, "confirmed exactly once");

    // The batch's page follows the items while any is on the way.
    let page = operator.get_html(&format!("/bulk-transfers/{}", b.id)).await;
    assert!(page.contains("hx-trigger=\"every 2s\""), "{page}");
    assert!(page.contains("inv, 1"), "{page}");
    app.sandbox().await.sandbox_advance_clock(300).await.unwrap();
    let live = operator.get_html(&format!("/bulk-transfers/{}/live", b.id)).await;
    assert!(!live.contains("hx-trigger"), "settled items stop polling: {live}");
    assert!(live.contains("completed") && live.contains("failed"), "{live}");
    assert!(live.contains("partially_failed"), "{live}");

    // The failed item is retried through a request of its own.
    let page = operator.get_html(&format!("/bulk-transfers/{}", b.id)).await;
    assert!(page.contains("Retry failed items"), "{page}");
    let retry = format!("/bulk-transfers/{}/retry", b.id);
    let res = confirm(
        &operator,
        &format!("/bulk-transfers/{}", b.id),
        &retry,
        &[],
        "Row 3",
    )
    .await;
    assert_eq!(res.status().as_u16(), 303);
    let retry_id = request_id(&res);
    assert_eq!(approve(&approver, &retry_id).await.status().as_u16(), 303);
    wait_for_status(&app, &retry_id, "executed").await;
    let b = app
        .sandbox()
        .await
        .bulk_transfer(&b.id.to_string())
        .await
        .unwrap();
    let item = b.items.iter().find(|i| i.reference == "inv-3").unwrap();
    assert_eq!(item.attempts, 2, "sent again once");
    assert_eq!(batches(&app).await.len(), 1, "still one batch");
}

#[tokio::test]
async fn a_double_submit_files_once() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    members(&app, "Approver", &["approver@example.com".into()]).await;
    let reference = form_reference(&app, "/bulk-transfers").await;
    let good = csv("5");
    let fields = [
        ("csv", good.as_str()),
        ("reference", reference.as_str()),
        ("confirmed", "yes"),
    ];
    let first = app.post_form("/bulk-transfers", "/bulk-transfers", &fields).await;
    let second = app.post_form("/bulk-transfers", "/bulk-transfers", &fields).await;
    assert_eq!(first.status().as_u16(), 303);
    assert_eq!(second.status().as_u16(), 303);
    assert_eq!(
        request_id(&first),
        request_id(&second),
        "both land on the one request"
    );
    assert_eq!(requests(&app, "bulk_transfer").await, 1);
    assert!(batches(&app).await.is_empty(), "nothing is sent before approval");
}

#[tokio::test]
async fn a_recurring_batch_is_approved_created_once_then_paused_and_cancelled_through_the_gate() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["operator@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["approver@example.com".into()])
        .await
        .remove(0);
    let page = "/bulk-transfers/schedules";
    let reference = form_reference(&operator, page).await;
    let good = csv("5");
    let fields = [
        ("name", "Monthly salaries"),
        ("frequency", "monthly"),
        ("day_of_month", "3"),
        ("execution_time", "09:30"),
        ("csv", good.as_str()),
        ("reference", reference.as_str()),
    ];
    let res = confirm(&operator, page, page, &fields, "monthly on day 3 at 09:30 UTC").await;
    assert_eq!(res.status().as_u16(), 303);
    let id = request_id(&res);
    let sandbox = app.sandbox().await;
    assert!(
        sandbox.bulk_schedules().await.unwrap().is_empty(),
        "nothing before approval"
    );
    assert_eq!(approve(&approver, &id).await.status().as_u16(), 303);
    wait_for_status(&app, &id, "executed").await;
    let created = sandbox.bulk_schedules().await.unwrap();
    assert_eq!(created.len(), 1, "created once");
    let s = &created[0];
    assert_eq!(
        (s.reference.as_str(), s.items.len(), s.day_of_month),
        (reference.as_str(), 3, 3)
    );
    let list = operator.get_html(page).await;
    assert!(
        list.contains("Monthly salaries") && list.contains("17.000000 USDT"),
        "{list}"
    );

    // Pausing and cancelling run at once through the gate by default.
    let pause = format!("{page}/{}/pause", s.id);
    let res = confirm(&operator, page, &pause, &[], "Pause").await;
    assert_eq!(res.status().as_u16(), 303);
    assert_eq!(
        sandbox.bulk_schedules().await.unwrap()[0].status.as_str(),
        "paused"
    );
    let cancel = format!("{page}/{}/cancel", s.id);
    let res = confirm(&operator, page, &cancel, &[], "Cancel").await;
    assert_eq!(res.status().as_u16(), 303);
    assert_eq!(
        sandbox.bulk_schedules().await.unwrap()[0].status.as_str(),
        "cancelled"
    );
    assert_eq!(requests(&app, "bulk_schedule_change").await, 2);
    // A cancelled schedule can't be paused.
    let res = operator.post_form(page, &pause, &[("confirmed", "yes")]).await;
    assert_eq!(res.status().as_u16(), 422);
}

#[tokio::test]
async fn a_bad_address_and_an_unknown_asset_are_refused_by_row_before_anything_is_filed() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let reference = form_reference(&app, "/bulk-transfers").await;
    // One letter's case changed in a checksummed (EIP-55) address.
    let typo = "0x52908400098527886E0F7030069857D2E4169Ee7";
    let bad = format!(
        "asset,chain,address,amount\n\
         USDT,ethereum,{ADDRESS},1\n\
         USDT,ethereum,{typo},2\n\
         DOGE,ethereum,{ADDRESS},3\n"
    );
    let res = app
        .post_form(
            "/bulk-transfers",
            "/bulk-transfers",
            &[
                ("csv", bad.as_str()),
                ("reference", reference.as_str()),
                ("confirmed", "yes"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    let page = res.text().await.unwrap();
    assert!(
        page.contains("Row 2: This is not a valid ethereum address"),
        "{page}"
    );
    assert!(page.contains("Row 3: asset &#39;DOGE&#39;"), "{page}");
    assert!(!page.contains("Row 1:"), "{page}");
    assert_eq!(requests(&app, "bulk_transfer").await, 0);
    assert!(batches(&app).await.is_empty());
}
