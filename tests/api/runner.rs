//! The gate's job runner: woken by the database's notifications instead
//! of polling, several executions at once per process and across
//! replicas, each approved action still carried out once, and nothing
//! sent to the database while there is nothing to do.

use std::time::Duration;

use paydesk::approvals::Rest;

use crate::approvals::{
    approve, file_payout, members, payout_id_of, payout_on_the_rail, request_id, wait_for_finalize,
    wait_for_status,
};
use crate::helpers::{csrf_in, spawn_app, within, TestApp};

/// Waits until the runner rests as `wanted` says, for up to 30 s.
async fn wait_for_rest(app: &TestApp, wanted: impl Fn(Rest) -> bool) -> Rest {
    let wanted = &wanted;
    let rest = within(move || async move {
        let rest = app.runner.rest();
        wanted(rest).then_some(rest)
    })
    .await;
    rest.unwrap_or_else(|| panic!("the runner never came to rest as wanted: {:?}", app.runner.rest()))
}

/// A request filed and waiting leaves nothing for the runner but its
/// reminder an hour away; when the approval commits, the notification
/// wakes a worker. Nothing else could: no timer is armed before the
/// reminder, and the wait here is far shorter.
#[tokio::test]
async fn an_approved_payout_is_run_when_the_approval_commits() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["woken-maker@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["woken-checker@example.com".into()])
        .await
        .remove(0);
    let id = request_id(&file_payout(&operator, "0123456789", "100").await);

    let soon = chrono::Utc::now() + chrono::Duration::minutes(10);
    let rest = wait_for_rest(&app, |r| matches!(r, Rest::Until(at) if at > soon)).await;
    assert!(
        matches!(rest, Rest::Until(_)),
        "asleep until the reminder: {rest:?}"
    );
    assert_eq!(approve(&approver, &id).await.status().as_u16(), 303);
    wait_for_finalize(&app, &id).await;
}

/// A job runs on the tenant's primary connection as it stands when the
/// job is taken (read with the job), not as it stood when the request was
/// filed: here a new primary connection whose client id the service does
/// not know, so the payout is refused and nothing is paid.
#[tokio::test]
async fn a_job_runs_on_the_connection_that_is_primary_when_it_is_taken() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["switch-maker@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["switch-checker@example.com".into()])
        .await
        .remove(0);
    let id = request_id(&file_payout(&operator, "0123456789", "100").await);

    app.change_behind_the_portal(sqlx::query(
        "WITH old AS (UPDATE connections SET is_primary = false RETURNING *) \
         INSERT INTO connections (id, tenant_id, name, environment, base_url, client_id, client_secret_enc, \
                                  is_primary) \
         SELECT gen_random_uuid(), tenant_id, 'Unknown client', environment, base_url, 'unknown-client', \
                client_secret_enc, true FROM old",
    ))
    .await;
    assert_eq!(approve(&approver, &id).await.status().as_u16(), 303);

    wait_for_status(&app, &id, "failed").await;
    let reason = crate::approvals::failure_reason_of(&app, &id).await;
    assert!(!reason.is_empty());
    let paid = app
        .sandbox()
        .await
        .payouts(None, Some(100))
        .await
        .unwrap()
        .payouts;
    assert!(
        paid.iter()
            .all(|p| p.status.as_str() == "QUOTE" || p.status.as_str() == "EXPIRED"),
        "nothing paid on the old connection: {reason}"
    );
}

/// Many payouts approved at once on two replicas, each with several
/// workers: every one is carried out, each exactly once on the rail.
#[tokio::test]
async fn workers_on_two_replicas_run_each_of_many_approved_payouts_once() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let other = app.replica().await;
    let operator = members(&app, "Operator", &["many-maker@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["many-checker@example.com".into()])
        .await
        .remove(0);
    let mut ids = Vec::new();
    for i in 0..24 {
        let res = file_payout(&operator, &format!("01234{i:05}"), "10").await;
        assert_eq!(res.status().as_u16(), 303);
        ids.push(request_id(&res));
    }
    // Approved in two bulk decisions, one through each replica.
    let inbox = approver.get_html("/approvals").await;
    let token = csrf_in(&inbox);
    let picks: Vec<String> = inbox
        .split("name=\"pick\" value=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_owned())
        .collect();
    assert_eq!(picks.len(), ids.len());
    let halves = picks.chunks(picks.len() / 2).zip([&app.address, &other.address]);
    let posts = halves.map(|(half, base)| {
        let mut form = vec![("csrf_token".to_owned(), token.clone())];
        form.extend(half.iter().map(|p| ("pick".to_owned(), p.clone())));
        form.push(("confirmed".to_owned(), "yes".to_owned()));
        approver
            .http
            .post(format!("{base}/approvals/bulk"))
            .form(&form)
            .send()
    });
    for res in futures_util::future::join_all(posts).await {
        assert_eq!(res.unwrap().status().as_u16(), 200);
    }
    for id in &ids {
        wait_for_finalize(&app, id).await;
    }

    let references: Vec<String> = sqlx::query_scalar(
        "SELECT upstream_reference FROM action_requests WHERE kind = 'payout' ORDER BY upstream_reference",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    let mut paid: Vec<String> = app
        .sandbox()
        .await
        .payouts(None, Some(100))
        .await
        .unwrap()
        .payouts
        .into_iter()
        .filter(|p| p.status.as_str() != "EXPIRED" && p.status.as_str() != "QUOTE")
        .map(|p| p.reference)
        .collect();
    paid.sort();
    assert_eq!(paid, references, "each payout once on the rail");
    let quoted: i64 = sqlx::query_scalar("SELECT count(*) FROM request_timeline WHERE what = 'quoted'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(quoted, ids.len() as i64, "each run's first step taken once");
}

/// With nothing waiting, the runner arms no timer: its workers wait for
/// a notification and so does its scheduler, and pages served meanwhile
/// don't wake it.
#[tokio::test]
async fn an_idle_runner_sends_nothing_to_the_database() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    wait_for_rest(&app, |r| r == Rest::Told).await;
    let wakeups = app.runner.wakeups();
    for _ in 0..20 {
        assert_eq!(app.get("/approvals").await.status().as_u16(), 200);
    }
    assert_eq!(app.runner.rest(), Rest::Told);
    assert_eq!(app.runner.wakeups(), wakeups, "nothing woke the runner");
}

/// Makes the request's job due now, as the process named `writer` (the
/// tests' own connections have no name), and waits until a run
/// rescheduled it or failed.
async fn read_back_now(app: &TestApp, request: &str, writer: &str) {
    let mut tx = app.pool.begin().await.unwrap();
    sqlx::query("SELECT set_config('application_name', $1, true)")
        .bind(writer)
        .execute(&mut *tx)
        .await
        .unwrap();
    sqlx::query("UPDATE jobs SET run_at = now() WHERE request_id = $1::uuid AND done_at IS NULL")
        .bind(request)
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let pool = &app.pool;
    crate::helpers::eventually("the job to run again", move || async move {
        let rescheduled: bool = sqlx::query_scalar(
            "SELECT run_at > now() OR last_error IS NOT NULL FROM jobs WHERE request_id = $1::uuid",
        )
        .bind(request)
        .fetch_one(pool)
        .await
        .unwrap();
        rescheduled.then_some(())
    })
    .await;
}

/// A payout read back on the rail more often than a job may fail in a row
/// is not given up on at its first failed read: failures count in a row,
/// not over the job's life.
#[tokio::test]
async fn a_payout_read_back_many_times_survives_one_failed_read() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let (_, _, id) = payout_on_the_rail(&app, "patient", "0123456789").await;
    for _ in 0..12 {
        read_back_now(&app, &id, "").await;
    }

    let payout_id = payout_id_of(&app, &id).await;
    let sandbox = app.sandbox().await;
    sandbox
        .sandbox_add_fault(&paydesk_api::models::control::AddFault {
            method: "GET".into(),
            path_prefix: format!("/api/payouts/{payout_id}"),
            mode: "503".into(),
            count: 3,
        })
        .await
        .unwrap();
    read_back_now(&app, &id, "").await;
    let (status, last_error): (String, Option<String>) = sqlx::query_as(
        "SELECT r.status::text, j.last_error FROM action_requests r JOIN jobs j ON j.request_id = r.id \
         WHERE r.id = $1::uuid",
    )
    .bind(&id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert!(last_error.is_some(), "the read failed");
    assert_eq!(status, "executing", "still waiting for the rail");

    sandbox.sandbox_settle_payout(&payout_id, true).await.unwrap();
    read_back_now(&app, &id, "").await;
    wait_for_status(&app, &id, "executed").await;
}

/// A job rescheduled by another portal process that then died is not left
/// waiting: this process takes it once the handover time has passed.
#[tokio::test]
async fn a_job_another_process_wrote_before_it_died_is_run_after_the_handover() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let (_, _, id) = payout_on_the_rail(&app, "orphan", "0123456789").await;
    read_back_now(&app, &id, "paydesk gone").await;
}

/// A claim takes up to as many due jobs as asked, oldest first, and its
/// runs' outcomes are written in one statement: done, again after a
/// while (a run that got on clears the failures), or failed and retried
/// later. Inside one transaction, rolled back, so the runner never sees
/// these jobs.
#[tokio::test]
async fn a_claim_takes_several_due_jobs_and_settles_each_as_its_run_left_it() {
    use paydesk::approvals::store::{claim_jobs, settle_jobs, Settled, Take};

    let app = spawn_app().await;
    let mut tx = app.pool.begin().await.unwrap();
    let ids: Vec<i64> = sqlx::query_scalar(
        "INSERT INTO jobs (kind, run_at, attempts, last_error) \
         SELECT 'execute', now() - make_interval(secs => 10 - n), 2, 'an earlier failure' \
         FROM generate_series(1, 4) AS n RETURNING id",
    )
    .fetch_all(&mut *tx)
    .await
    .unwrap();

    let claimed = claim_jobs(&mut *tx, Take::Due(3)).await.unwrap();
    let taken: Vec<i64> = claimed.iter().map(|c| c.id).collect();
    assert_eq!(taken, ids[..3], "the three oldest due, oldest first");
    let settled = [
        Settled {
            job: ids[0],
            done: true,
            after: None,
            attempts: 3,
            error: None,
        },
        Settled {
            job: ids[1],
            done: false,
            after: Some(Duration::from_secs(30)),
            attempts: 0,
            error: None,
        },
        Settled {
            job: ids[2],
            done: false,
            after: Some(Duration::from_secs(4)),
            attempts: 3,
            error: Some("the service did not answer".into()),
        },
    ];
    settle_jobs(&mut *tx, &settled).await.unwrap();

    let rows: Vec<(bool, f64, i32, Option<String>)> = sqlx::query_as(
        "SELECT done_at IS NOT NULL, extract(epoch FROM run_at - now())::float8, attempts, last_error \
         FROM jobs WHERE id = ANY($1) ORDER BY id",
    )
    .bind(&ids)
    .fetch_all(&mut *tx)
    .await
    .unwrap();
    let (done, wait, attempts, error) = &rows[0];
    assert!(*done && *wait < 0.0 && *attempts == 3);
    assert_eq!(
        error.as_deref(),
        Some("an earlier failure"),
        "done keeps the last failure"
    );
    let (done, wait, attempts, error) = &rows[1];
    assert!(!*done && (29.0..=30.0).contains(wait) && *attempts == 0 && error.is_none());
    let (done, wait, attempts, error) = &rows[2];
    assert!(!*done && (3.0..=4.0).contains(wait) && *attempts == 3);
    assert_eq!(error.as_deref(), Some("the service did not answer"));
    let (done, wait, attempts, error) = &rows[3];
    assert!(
        !*done && *wait < 0.0 && *attempts == 2 && error.is_some(),
        "not taken, untouched"
    );
    tx.rollback().await.unwrap();
}
