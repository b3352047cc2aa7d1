//! The audit log: what it records, the auditors' pages, the hash chain.

use paydesk::audit::{store, Actor, NewRecord};
use uuid::Uuid;

use crate::helpers::spawn_app;

async fn demo_tenant(app: &crate::helpers::TestApp) -> Uuid {
    sqlx::query_scalar("SELECT id FROM tenants ORDER BY created_at LIMIT 1")
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn auditors_search_page_through_and_read_records() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let tenant = demo_tenant(&app).await;
    let actor = Actor {
        email: "robot@example.com".into(),
        ..Actor::default()
    };
    let records: Vec<_> = (0..60)
        .map(|i| {
            NewRecord::new(
                &actor,
                Some(tenant),
                paydesk::audit::Event::SandboxClockAdvanced,
                format!("thing:{i}"),
                "success",
            )
        })
        .collect();
    store::append(&app.pool, &records).await.unwrap();

    let page = app.get_html("/audit?action=sandbox.").await;
    assert_eq!(
        page.matches("<td><code>sandbox.clock_advanced</code></td>")
            .count(),
        50
    );
    assert!(page.contains("thing:59") && !page.contains("thing:9<"));
    let more = page
        .split("hx-get=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .replace("&#38;", "&");
    let older = app
        .http
        .get(app.url(&more))
        .header("HX-Request", "true")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        older
            .matches("<td><code>sandbox.clock_advanced</code></td>")
            .count(),
        10
    );
    assert!(older.contains("thing:0<"));

    let signins = app.get_html("/audit?action=auth.sign_in&outcome=success").await;
    assert!(signins.contains("auth.sign_in"));
    assert!(signins.contains(&app.admin_email));
    let id = signins
        .split("<td><a href=\"/audit/")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let detail = app.get_html(&format!("/audit/{id}")).await;
    assert!(detail.contains("Previous hash"));
    assert_eq!(app.get("/audit/999999").await.status().as_u16(), 404);

    let csv = app.get("/audit/export.csv?action=sandbox.").await;
    assert_eq!(csv.status().as_u16(), 200);
    let text = csv.text().await.unwrap();
    assert_eq!(text.lines().count(), 61, "a header and every matching record");
}

#[tokio::test]
async fn the_database_refuses_to_change_audit_rows() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let update = sqlx::query("UPDATE audit_log SET outcome = 'success'")
        .execute(&app.pool)
        .await;
    assert!(update.unwrap_err().to_string().contains("append-only"));
    let delete = sqlx::query("DELETE FROM audit_log").execute(&app.pool).await;
    assert!(delete.unwrap_err().to_string().contains("append-only"));
    let truncate = sqlx::query("TRUNCATE audit_log").execute(&app.pool).await;
    assert!(truncate.is_err());
}

#[tokio::test]
async fn verify_finds_the_first_tampered_record() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let clean = app
        .post_form("/audit", "/audit/verify", &[])
        .await
        .text()
        .await
        .unwrap();
    assert!(clean.contains("The chain is intact"), "{clean}");

    // Edit a sign-in row directly, as the database owner bypassing triggers.
    let target: i64 = sqlx::query_scalar("SELECT min(id) FROM audit_log WHERE action = 'auth.sign_in'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let mut conn = app.pool.acquire().await.unwrap();
    sqlx::query("SET session_replication_role = replica")
        .execute(&mut *conn)
        .await
        .unwrap();
    sqlx::query("UPDATE audit_log SET ip = '10.9.9.9' WHERE id = $1")
        .bind(target)
        .execute(&mut *conn)
        .await
        .unwrap();
    sqlx::query("SET session_replication_role = origin")
        .execute(&mut *conn)
        .await
        .unwrap();
    drop(conn);

    let report = app
        .post_form("/audit", "/audit/verify", &[])
        .await
        .text()
        .await
        .unwrap();
    assert!(report.contains("The chain is broken"), "{report}");
    assert!(report.contains(&format!("record #{target}")), "{report}");
    assert!(report.contains("altered"));
    assert!(matches!(
        store::verify(&app.pool).await.unwrap(),
        store::ChainReport::Broken { id, .. } if id == target
    ));
}
