//! The audit log: what it records, the auditors' pages, the hash chain.

use paydesk::audit::{bundle, store, verify, Actor, Event, NewRecord};
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
        .split("id=\"audit-more\"")
        .nth(1)
        .unwrap()
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
async fn the_target_filter_matches_a_kind_or_a_pasted_target_or_id_exactly_or_its_beginning() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let tenant = demo_tenant(&app).await;
    const TARGETS: [&str; 6] = [
        "approval:42",
        "approval:420",
        "approval:7",
        "connection:42",
        "POST /api/payouts/po_42",
        "POST /api/payouts/quotes/Q_77/finalize",
    ];
    let records: Vec<_> = TARGETS
        .into_iter()
        .map(|t| {
            NewRecord::new(
                &Actor::default(),
                Some(tenant),
                Event::SandboxPriceSet,
                t,
                "success",
            )
        })
        .collect();
    store::append(&app.pool, &records).await.unwrap();
    let targets = |page: &str| -> Vec<String> {
        page.split("<td>")
            .skip(1)
            .filter_map(|cell| cell.split("</td>").next())
            .filter(|cell| TARGETS.contains(cell))
            .map(str::to_owned)
            .collect()
    };

    let exact = app.get_html("/audit?target=Approval%3A42").await;
    assert_eq!(targets(&exact), ["approval:42"], "exactly, not approval:420");
    assert!(exact.contains("Target or its id is exactly"), "{exact}");
    assert_eq!(
        targets(&app.get_html("/audit?target=42").await),
        ["connection:42", "approval:42"],
        "an id alone, of any kind"
    );

    let kind = app.get_html("/audit?target=Approval").await;
    assert_eq!(targets(&kind), ["approval:7", "approval:420", "approval:42"]);
    assert!(kind.contains("Every record whose target is of kind approval"));
    assert_eq!(
        targets(&app.get_html("/audit?target=approval%3A").await),
        targets(&kind)
    );

    let prefix = app.get_html("/audit?target=approval%3A4").await;
    assert_eq!(targets(&prefix), ["approval:420", "approval:42"]);
    assert!(prefix.contains("beginning with it"), "{prefix}");

    // An upstream call by the id its path names, or by its whole text.
    for typed in ["po_42", "PO_4", "post%20%2Fapi%2Fpayouts%2Fpo"] {
        assert_eq!(
            targets(&app.get_html(&format!("/audit?target={typed}")).await),
            ["POST /api/payouts/po_42"],
            "{typed}"
        );
    }
    assert_eq!(
        targets(&app.get_html("/audit?target=q_77").await),
        ["POST /api/payouts/quotes/Q_77/finalize"]
    );
    assert_eq!(
        targets(&app.get_html("/audit?target=payouts").await),
        Vec::<String>::new(),
        "neither a kind nor the beginning of a target or id: text inside a target is not searched"
    );

    let csv = app.get("/audit/export.csv?target=connection%3A42").await;
    let text = csv.text().await.unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains("\"connection:42\""));
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
    app.link_audit().await;
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
        store::verify(&app.pool, store::Log::Tenant(demo_tenant(&app).await)).await.unwrap(),
        store::ChainReport::Broken { id, .. } if id == target
    ));
}

#[tokio::test]
async fn each_tenant_log_shows_only_that_tenant_and_platform_events_stay_in_the_platform_log() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let created = app
        .post_form("/platform", "/platform/tenants", &[("name", "Zeta Ltd")])
        .await;
    assert_eq!(created.status().as_u16(), 303);
    let allowed = app
        .post_form(
            "/platform",
            "/platform/allowlist",
            &[("base_url", "https://api.example.com")],
        )
        .await;
    assert_eq!(allowed.status().as_u16(), 303);

    // The platform admin belongs to both tenants; neither shows their
    // platform work.
    let demo = app.get_html("/audit").await;
    assert!(
        demo.contains("<code>auth.sign_in</code>"),
        "the sign-in lands in the demo tenant"
    );
    assert!(!demo.contains("tenants.created") && !demo.contains("settings.base_url_allowed"));
    let platform = app.get_html("/platform/audit").await;
    assert!(
        platform.contains("tenants.created") && platform.contains("tenant:Zeta Ltd"),
        "{platform}"
    );
    assert!(platform.contains("settings.base_url_allowed"));
    assert!(!platform.contains("<code>auth.sign_in</code>"));
    let bundle = app.get_html("/platform/audit/export.jsonl").await;
    let verified = bundle::verify(std::io::Cursor::new(bundle.as_bytes()), None).unwrap();
    assert_eq!(verified.log, "platform");
    assert!(bundle.contains("tenant:Zeta Ltd") && !bundle.contains("auth.sign_in\""));

    // A tenant joined later shows nothing of the member's earlier doings.
    let beta: Uuid = sqlx::query_scalar("SELECT id FROM tenants WHERE name = 'Zeta Ltd'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let switched = app
        .post_form("/", "/tenants/switch", &[("tenant_id", &beta.to_string())])
        .await;
    assert_eq!(switched.status().as_u16(), 303);
    let beta_log = app.get_html("/audit").await;
    assert!(beta_log.contains("auth.tenant_switched"), "{beta_log}");
    for elsewhere in [
        "<code>auth.sign_in</code>",
        "auth.password_changed",
        "tenants.created",
        "connections.created",
    ] {
        assert!(
            !beta_log.contains(elsewhere),
            "{elsewhere} is not Beta's business"
        );
    }

    // Only platform admins read the platform log.
    let auditor =
        crate::access::add_member(&app, "auditor@example.com", "Auditor", "auditor-slate-orchard").await;
    for path in ["/platform/audit", "/platform/audit/export.jsonl"] {
        assert_eq!(auditor.get(path).await.status().as_u16(), 403, "{path}");
    }
    let seen = auditor.get_html("/audit?actor=admin").await;
    assert!(!seen.contains("tenants.created"));
}

#[tokio::test]
async fn a_nul_byte_in_a_filter_is_refused_with_a_message() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    for path in [
        "/audit?actor=a%00b",
        "/audit/export.csv?target=%00",
        "/platform/audit?action=%00",
    ] {
        let res = app.get(path).await;
        assert_eq!(res.status().as_u16(), 400, "{path}");
        assert!(res.text().await.unwrap().contains("NUL character"), "{path}");
    }
}

/// Signs the demo tenant's log and exports it over HTTP.
async fn exported_bundle(app: &crate::helpers::TestApp) -> String {
    let tenant = demo_tenant(app).await;
    let actor = Actor {
        email: "robot@example.com".into(),
        ..Actor::default()
    };
    for batch in 0..3 {
        let records: Vec<_> = (0..10)
            .map(|i| {
                NewRecord::new(
                    &actor,
                    Some(tenant),
                    Event::SandboxClockAdvanced,
                    format!("thing:{batch}-{i}"),
                    "success",
                )
            })
            .collect();
        store::append(&app.pool, &records).await.unwrap();
        let signed = app
            .post_form("/audit/checkpoints", "/audit/checkpoints", &[])
            .await;
        assert_eq!(signed.status().as_u16(), 303);
    }
    let res = app.get("/audit/export.jsonl").await;
    assert_eq!(res.status().as_u16(), 200);
    res.text().await.unwrap()
}

fn seq_of(line: &str) -> Option<i64> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    (v["type"] == "record").then(|| v["seq"].as_i64()).flatten()
}

fn verify_text(text: &str) -> Result<bundle::Verified, bundle::Broken> {
    bundle::verify(std::io::Cursor::new(text.as_bytes()), None)
}

#[tokio::test]
async fn an_exported_bundle_verifies_offline_and_each_tampering_names_the_record() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let text = exported_bundle(&app).await;
    let verified = verify_text(&text).unwrap();
    assert!(
        verified.checkpoints >= 3 && verified.records >= 30,
        "{verified:?}"
    );
    assert_eq!(verified.range.unwrap().0, 1, "everything from the first record");
    assert_eq!(verified.unsigned_tail, 0, "the export signs the head first");
    let listed: serde_json::Value = app.get("/audit/checkpoints.json").await.json().await.unwrap();
    assert_eq!(listed["public_key"].as_str().unwrap(), verified.public_key);
    assert!(app
        .get_html("/audit/checkpoints")
        .await
        .contains(&verified.public_key));

    let lines: Vec<&str> = text.lines().collect();
    let at = |seq: i64| lines.iter().position(|l| seq_of(l) == Some(seq)).unwrap();
    let k = 12;

    let mut edited = lines.clone();
    let changed = edited[at(k)].replace("\"thing:", "\"thing:x");
    edited[at(k)] = &changed;
    assert!(matches!(verify_text(&edited.join("\n")), Err(bundle::Broken::Edited { seq, .. }) if seq == k));

    let mut removed = lines.clone();
    removed.remove(at(k));
    let broken = verify_text(&removed.join("\n")).unwrap_err();
    assert_eq!(
        broken,
        bundle::Broken::OutOfPlace {
            seq: k + 1,
            id: id_of(lines[at(k + 1)]),
            expected: k
        }
    );
    assert!(broken.to_string().starts_with(&format!("record {k} is missing")));

    let mut reordered = lines.clone();
    reordered.swap(at(k), at(k + 1));
    assert!(matches!(
        verify_text(&reordered.join("\n")),
        Err(bundle::Broken::OutOfPlace { seq, expected, .. }) if seq == k + 1 && expected == k
    ));

    let last = *lines
        .iter()
        .filter_map(|l| seq_of(l))
        .collect::<Vec<_>>()
        .last()
        .unwrap();
    let cut = lines[..at(last)].join("\n");
    let broken = verify_text(&cut).unwrap_err();
    assert!(
        matches!(&broken, bundle::Broken::CutOff { length, .. } if *length == last),
        "{broken}"
    );
    assert!(
        broken.to_string().contains(&format!("after record {}", last - 1)),
        "{broken}"
    );

    // The same checks from the shipped binary, as an auditor runs them.
    let dir = std::env::temp_dir().join(format!("paydesk-bundle-{}", Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |name: &str, contents: &str| {
        let path = dir.join(name);
        std::fs::write(&path, contents).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_paydesk"))
            .args(["audit", "verify"])
            .arg(&path)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, said) = run("good.jsonl", &text);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.starts_with("OK:") && said.contains(&verified.public_key),
        "{said}"
    );
    let (code, said) = run("edited.jsonl", &edited.join("\n"));
    assert_eq!(code, Some(1));
    assert!(
        said.contains(&format!("record {k} (id")) && said.contains("edited"),
        "{said}"
    );
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_paydesk"))
        .args(["audit", "verify", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("no database"));
}

fn id_of(line: &str) -> i64 {
    serde_json::from_str::<serde_json::Value>(line).unwrap()["id"]
        .as_i64()
        .unwrap()
}

#[tokio::test]
async fn the_live_check_names_a_record_edited_after_checkpoints() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    exported_bundle(&app).await;
    app.link_audit().await;
    let target: i64 = sqlx::query_scalar("SELECT id FROM audit_log WHERE target = 'thing:1-3'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let mut conn = app.pool.acquire().await.unwrap();
    sqlx::query("SET session_replication_role = replica")
        .execute(&mut *conn)
        .await
        .unwrap();
    sqlx::query("UPDATE audit_log SET target = 'thing:edited' WHERE id = $1")
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
    assert!(report.contains(&format!("record #{target}")), "{report}");
    let exported = app.get("/audit/export.jsonl").await.text().await.unwrap();
    assert!(matches!(verify_text(&exported), Err(bundle::Broken::Edited { id, .. }) if id == target));
}

/// Edits a record as the database owner, bypassing the append-only triggers.
async fn tamper(app: &crate::helpers::TestApp, id: i64) {
    let mut conn = app.pool.acquire().await.unwrap();
    sqlx::query("SET session_replication_role = replica")
        .execute(&mut *conn)
        .await
        .unwrap();
    sqlx::query("UPDATE audit_log SET target = 'thing:edited' WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await
        .unwrap();
    sqlx::query("SET session_replication_role = origin")
        .execute(&mut *conn)
        .await
        .unwrap();
}

async fn append_things(app: &crate::helpers::TestApp, tenant: Uuid, n: usize) {
    let records: Vec<_> = (0..n)
        .map(|i| {
            NewRecord::new(
                &Actor::default(),
                Some(tenant),
                Event::SandboxPriceSet,
                format!("thing:{i}"),
                "success",
            )
        })
        .collect();
    store::append(&app.pool, &records).await.unwrap();
}

#[tokio::test]
async fn a_verification_runs_as_a_job_whose_progress_the_page_shows_until_it_ends() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let tenant = demo_tenant(&app).await;
    append_things(&app, tenant, 30).await;
    let log = store::Log::Tenant(tenant);
    let job = verify::start(&app.pool, log, None, true).await.unwrap();
    assert!(job.total >= 30 && job.from.is_none());

    let htmx = |path: String| {
        let app = app.clone();
        async move {
            let res = app
                .http
                .get(app.url(&path))
                .header("HX-Request", "true")
                .send()
                .await
                .unwrap();
            res.text().await.unwrap()
        }
    };
    let running = htmx(format!("/audit/verify/{}", job.id)).await;
    assert!(
        running.contains(&format!("0 of {} records checked", job.total)),
        "{running}"
    );
    assert!(
        running.contains(&format!("hx-get=\"/audit/verify/{}\"", job.id)),
        "the partial polls itself"
    );

    let report = verify::run(&app.pool, &job, &Actor::default()).await.unwrap();
    assert!(matches!(report, store::ChainReport::Intact { records, .. } if records == job.total as u64));
    let ended = htmx(format!("/audit/verify/{}", job.id)).await;
    assert!(
        ended.contains(&format!("The chain is intact: {} records checked", job.total)),
        "{ended}"
    );
    assert!(!ended.contains("hx-get"), "a finished run stops polling");
    let page = app.get_html(&format!("/audit/verify/{}", job.id)).await;
    assert!(page.contains("Audit chain") && page.contains("The chain is intact"));
}

#[tokio::test]
async fn a_verification_starts_from_the_last_verified_point() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let tenant = demo_tenant(&app).await;
    let log = store::Log::Tenant(tenant);
    append_things(&app, tenant, 20).await;
    let first = verify::start(&app.pool, log, None, false).await.unwrap();
    assert!(
        first.from.is_none(),
        "a log never verified is walked from its start"
    );
    let Ok(store::ChainReport::Intact {
        head: Some((seq, hash)),
        records,
    }) = verify::run(&app.pool, &first, &Actor::default()).await
    else {
        panic!("the chain holds");
    };
    let point = verify::point(&app.pool, log).await.unwrap().unwrap();
    assert_eq!(
        (point.seq, &point.hash, point.records),
        (seq, &hash, records as i64)
    );

    // The run's own record, then five more.
    append_things(&app, tenant, 5).await;
    let next = verify::start(&app.pool, log, None, false).await.unwrap();
    assert_eq!(next.from.as_ref(), Some(&point));
    assert_eq!(next.total, 6, "only what came after the point is walked");
    let report = verify::run(&app.pool, &next, &Actor::default()).await.unwrap();
    assert!(matches!(report, store::ChainReport::Intact { records: r, .. } if r == records + 6));

    // A record before the point is trusted by the next run, not by a whole one.
    app.link_audit().await;
    let early: i64 =
        sqlx::query_scalar("SELECT min(id) FROM audit_log WHERE tenant_id = $1 AND target = 'thing:3'")
            .bind(tenant)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    tamper(&app, early).await;
    let since = verify::start(&app.pool, log, None, false).await.unwrap();
    assert!(matches!(
        verify::run(&app.pool, &since, &Actor::default()).await.unwrap(),
        store::ChainReport::Intact { .. }
    ));
    let whole = verify::start(&app.pool, log, None, true).await.unwrap();
    assert!(matches!(
        verify::run(&app.pool, &whole, &Actor::default()).await.unwrap(),
        store::ChainReport::Broken { id, .. } if id == early
    ));
}

#[tokio::test]
async fn a_verification_from_the_last_point_finds_a_record_altered_after_it() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let tenant = demo_tenant(&app).await;
    let log = store::Log::Tenant(tenant);
    let first = verify::start(&app.pool, log, None, false).await.unwrap();
    verify::run(&app.pool, &first, &Actor::default()).await.unwrap();
    let before = verify::point(&app.pool, log).await.unwrap();
    append_things(&app, tenant, 10).await;
    app.link_audit().await;
    let altered: i64 =
        sqlx::query_scalar("SELECT id FROM audit_log WHERE tenant_id = $1 AND target = 'thing:4'")
            .bind(tenant)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    tamper(&app, altered).await;

    let report = app
        .post_form("/audit", "/audit/verify", &[("from", "last")])
        .await
        .text()
        .await
        .unwrap();
    assert!(report.contains(&format!("record #{altered}")), "{report}");
    assert!(report.contains("altered"));
    assert_eq!(
        verify::point(&app.pool, log).await.unwrap(),
        before,
        "a broken run moves no point"
    );
}

#[tokio::test]
async fn appends_never_wait_and_each_log_is_linked_in_one_order() {
    let app = spawn_app().await;
    let first = demo_tenant(&app).await;
    let second = Uuid::new_v4();
    sqlx::query("INSERT INTO tenants (id, name) VALUES ($1, 'Second Ltd')")
        .bind(second)
        .execute(&app.pool)
        .await
        .unwrap();
    let record = |tenant: Uuid, n: usize| {
        NewRecord::new(
            &Actor::default(),
            Some(tenant),
            Event::SandboxPriceSet,
            format!("thing:{n}"),
            "success",
        )
    };
    let already = match store::verify(&app.pool, store::Log::Tenant(first)).await.unwrap() {
        store::ChainReport::Intact { records, .. } => records,
        broken => panic!("the demo log is intact: {broken:?}"),
    };
    // Someone holds the first tenant's chain lock.
    let mut holder = app.pool.begin().await.unwrap();
    store::lock_logs(&mut holder, &[store::Log::Tenant(first)])
        .await
        .unwrap();

    // Appending to that log waits for nobody: records are staged.
    let mut change = app.pool.begin().await.unwrap();
    sqlx::query("SET LOCAL lock_timeout = '50ms'")
        .execute(&mut *change)
        .await
        .unwrap();
    store::append_in(&mut change, &[record(first, 0)]).await.unwrap();
    change.commit().await.unwrap();
    // Linking the other tenant's log does not wait either; linking the
    // held log does, until the lock is let go.
    let appends = (1..=40).map(|n| {
        let (pool, tenant) = (app.pool.clone(), if n % 2 == 0 { first } else { second });
        async move { store::append(&pool, &[record(tenant, n)]).await }
    });
    for appended in futures_util::future::join_all(appends).await {
        appended.unwrap();
    }
    // The portal's own linker may have linked some already: counts are
    // checked on the chains below.
    store::link(&app.pool, store::Log::Tenant(second)).await.unwrap();
    let held = tokio::spawn({
        let pool = app.pool.clone();
        async move { store::link(&pool, store::Log::Tenant(first)).await }
    });
    let waiting = tokio::time::timeout(std::time::Duration::from_millis(200), async {
        while !held.is_finished() {
            tokio::task::yield_now().await;
        }
    });
    assert!(waiting.await.is_err(), "linking a locked log waits for its lock");
    holder.commit().await.unwrap();
    held.await.unwrap().unwrap();

    for (tenant, records) in [(first, already + 21), (second, 20)] {
        let log = store::Log::Tenant(tenant);
        assert!(
            matches!(
                store::verify(&app.pool, log).await.unwrap(),
                store::ChainReport::Intact { records: r, .. } if r == records
            ),
            "{log} is one chain of every record appended"
        );
    }
    let staged: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_staged")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(staged, 0, "nothing is left staged");
}
