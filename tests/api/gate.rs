//! Every route of the portal that can move money or change a card's or a
//! payout's state goes through the approval gate. The test finds the
//! portal's routes in its source (a route added later is found too),
//! requires each to be in the route table the isolation walk uses, posts
//! every one as an Owner holding every permission (confirmed, where a
//! route asks for confirmation), and then reads the audit log of upstream
//! calls: every call that moves money or changes a card's or a payout's
//! state was made by the gate, never by a handler for a member.

use std::collections::BTreeSet;
use std::path::Path;

use paydesk_api::paths::Operation;

use crate::helpers::{spawn_app, TestApp};
use crate::isolation::{call, fill, populate_a, ROUTES};

/// The service's operations that move money or change the state of a
/// card, a payout, an order or a batch.
const MONEY: &[Operation] = &[
    Operation::CreateWithdrawal,
    Operation::CreateWalletTransfer,
    Operation::SendPayment,
    Operation::CreateBulkTransfer,
    Operation::ConfirmBulkTransfer,
    Operation::RetryBulkTransfer,
    Operation::CreateBulkSchedule,
    Operation::UpdateBulkSchedule,
    Operation::CancelBulkSchedule,
    Operation::InitializePayout,
    Operation::FinalizePayout,
    Operation::CreateOrder,
    Operation::CancelOrder,
    Operation::CreateScheduledOrder,
    Operation::UpdateScheduledOrder,
    Operation::CancelScheduledOrder,
    Operation::CreateTargetOrder,
    Operation::CancelTargetOrder,
    Operation::CreateCard,
    Operation::TerminateCard,
    Operation::ChangeCardBalance,
    Operation::SetCardStatus,
];

/// Routes the walk leaves out, because they end the walk itself.
const CUTS_THE_WALK: &[&str] = &[
    "/connections/{}/delete",
    "/tenants/switch",
    "/members/{}/remove",
    "/members/{}/disable",
    "/logout",
    "/logout/everywhere",
];

/// `{anything}` becomes `{}` and a query string goes, so the source's and
/// the table's templates compare.
fn normalize(template: &str) -> String {
    let path = template.split('?').next().unwrap_or_default();
    let mut out = String::new();
    let mut in_param = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push_str("{}");
            }
            '}' => in_param = false,
            _ if in_param => {}
            _ => out.push(c),
        }
    }
    out
}

/// Every source file of the portal, with its text.
fn sources() -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                found.push((path, text));
            }
        }
    }
    found
}

/// (method, normalized path) of every route the portal's source registers.
fn registered_routes() -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    for (_, text) in sources() {
        let source: String = text.split_whitespace().collect::<Vec<_>>().join("");
        for chunk in source.split(".route(\"").skip(1) {
            let Some((route, rest)) = chunk.split_once("\",web::") else {
                continue;
            };
            let method = rest.split("()").next().unwrap_or_default().to_uppercase();
            found.insert((method, normalize(route)));
        }
    }
    found
}

/// Handlers stay thin: each extracts, calls a domain function and maps the
/// result, in 40 lines at most. A handler is a function a route names that
/// answers with an `HttpResponse`.
#[test]
fn no_handler_is_longer_than_40_lines() {
    let sources = sources();
    let named: BTreeSet<String> = sources
        .iter()
        .flat_map(|(_, text)| text.split(".to(").skip(1).map(str::to_owned).collect::<Vec<_>>())
        .filter_map(|chunk| Some(chunk.split(')').next()?.trim().rsplit("::").next()?.to_owned()))
        .collect();
    let mut handlers = 0;
    let mut long = Vec::new();
    for (path, text) in &sources {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.trim_start();
            let Some(rest) = code
                .strip_prefix("pub async fn ")
                .or_else(|| code.strip_prefix("async fn "))
            else {
                continue;
            };
            let name = rest.split(['(', '<']).next().unwrap();
            let signature_end = i + lines[i..].iter().position(|l| l.contains('{')).unwrap();
            let signature = lines[i..=signature_end].join(" ");
            if !named.contains(name) || !signature.contains("HttpResponse") {
                continue;
            }
            let close = format!("{}}}", &line[..line.len() - code.len()]);
            let length = lines[i..].iter().position(|l| l.trim_end() == close).unwrap() + 1;
            handlers += 1;
            if length > 40 {
                long.push(format!("{}: {name} ({length} lines)", path.display()));
            }
        }
    }
    assert!(handlers > 80, "the scan finds the handlers ({handlers})");
    assert!(long.is_empty(), "handlers over 40 lines: {long:#?}");
}

fn is_money(method: &str, path: &str) -> bool {
    MONEY.iter().any(|op| {
        op.method().as_str() == method && {
            let template: Vec<&str> = op.template().split('/').collect();
            let concrete: Vec<&str> = path.split('?').next().unwrap_or_default().split('/').collect();
            template.len() == concrete.len()
                && template
                    .iter()
                    .zip(&concrete)
                    .all(|(t, c)| t.starts_with('{') || t == c)
        }
    })
}

/// Mutating upstream calls on record, once the asynchronous audit writer
/// has caught up (their count holds still for a moment).
async fn upstream_calls(app: &TestApp) -> Vec<(String, String, String)> {
    let mut calls: Option<Vec<(String, String, String)>> = None;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        app.link_audit().await;
        let now: Vec<(String, String, String)> = sqlx::query_as(
            "SELECT actor_email, details->>'method', details->>'path' FROM audit_log \
             WHERE action = 'upstream.call' ORDER BY id",
        )
        .fetch_all(&app.pool)
        .await
        .unwrap();
        if calls.as_ref().is_some_and(|c| c.len() == now.len()) {
            break;
        }
        calls = Some(now);
    }
    calls.unwrap_or_default()
}

#[tokio::test]
async fn every_route_that_moves_money_goes_through_the_gate() {
    let registered = registered_routes();
    assert!(
        registered.len() > 60,
        "the route scan found {} routes",
        registered.len()
    );
    // A table entry covers a route when each segment is equal or the
    // route's is a parameter (the table has concrete ids).
    let covers = |(method, route): &(String, String)| {
        ROUTES.iter().any(|(m, p, _)| {
            let table: Vec<&str> = p.split('?').next().unwrap_or_default().split('/').collect();
            let source: Vec<&str> = route.split('/').collect();
            *m == method
                && table.len() == source.len()
                && table
                    .iter()
                    .zip(&source)
                    .all(|(t, s)| *s == "{}" || normalize(t) == *s)
        })
    };
    let public = [
        "/login",
        "/logout",
        "/logout/everywhere",
        "/account/password",
        "/password/forgot",
        "/login/two-factor",
        "/account/security",
        "/account/security/two-factor",
        "/account/security/two-factor/confirm",
        "/account/security/two-factor/disable",
        "/account/security/recovery-codes",
        "/account/security/sessions/{}/end",
        "/password/reset/{}",
        "/invitations/{}",
        "/healthz",
        "/metrics",
        "/readyz",
        "/",
        "/static/{}",
        "/favicon.ico",
        "/search",
    ];
    let missing: Vec<_> = registered
        .iter()
        .filter(|(_, p)| !public.contains(&p.as_str()) && !p.starts_with("/notifications"))
        .filter(|r| !covers(r))
        .collect();
    assert!(
        missing.is_empty(),
        "routes missing from the route table in tests/api/isolation.rs (add each, with its form fields): {missing:?}"
    );

    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let a = populate_a(&app).await;
    let sandbox = app.sandbox().await;
    sandbox.sandbox_advance_clock(24 * 3600).await.unwrap();
    let mut walked = 0;
    for (method, template, fields) in ROUTES.iter().filter(|(m, _, _)| *m == "POST") {
        if CUTS_THE_WALK.contains(&normalize(template).as_str()) {
            continue;
        }
        let mut fields: Vec<(String, String)> =
            fields.iter().map(|(k, v)| (k.to_string(), fill(v, &a))).collect();
        fields.push(("confirmed".to_owned(), "yes".to_owned()));
        call(&app, method, &fill(template, &a), &fields).await;
        walked += 1;
    }
    assert!(walked > 30);

    let calls = upstream_calls(&app).await;
    let money: Vec<_> = calls.iter().filter(|(_, m, p)| is_money(m, p)).collect();
    assert!(
        money.len() >= 2,
        "the walk moved money (card funding, freezing): {calls:?}"
    );
    let around: Vec<_> = money
        .iter()
        .filter(|(actor, _, _)| actor != "approval gate")
        .collect();
    assert!(around.is_empty(), "money moved around the gate: {around:?}");
    assert_eq!(sandbox.card(&a.card_id).await.unwrap().status.as_str(), "frozen");
}

/// Prefixes of the routes that decide who can file or approve, or how much
/// waits: members, roles, policies and connections.
const CONTROL_PREFIXES: &[&str] = &["/members", "/roles", "/policies", "/connections"];

/// Routes under those prefixes that change no control, and why.
const NOT_CONTROLS: &[(&str, &str)] = &[
    (
        "/members/{}/unlock",
        "ends a lockout: it gives the member back only what they had",
    ),
    (
        "/members/grants/{}/confirm",
        "is the second admin's confirmation itself",
    ),
    (
        "/roles",
        "creates a role with no permissions: giving it any goes through the gate",
    ),
    ("/roles/{}/delete", "deletes a role nobody holds"),
    ("/connections/{}/test", "reads the service through the connection"),
];

/// What the controls decide, as one text: members and their roles,
/// invitations, roles' permissions, policies, the tenant's settings,
/// connections and accounts' standing.
async fn controls_as_they_stand(app: &TestApp) -> String {
    sqlx::query_scalar(
        "SELECT concat_ws(' | ',
            (SELECT string_agg(m::text, ',' ORDER BY user_id) FROM memberships m),
            (SELECT string_agg(concat(id, email, revoked_at, accepted_at), ',' ORDER BY id) FROM invitations),
            (SELECT string_agg(concat(role_id, permission), ',' ORDER BY role_id, permission) FROM role_permissions),
            (SELECT count(*) FROM approval_policies),
            (SELECT string_agg(concat(id, reporting_currency, require_two_factor), ',' ORDER BY id) FROM tenants),
            (SELECT string_agg(c::text, ',' ORDER BY id) FROM connections c),
            (SELECT string_agg(concat(id, disabled_at), ',' ORDER BY id) FROM users))",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap()
}

/// With a second admin, every route that changes members, roles, policies
/// or connections only files a request: walked as an Owner holding every
/// permission, nothing changes until the second admin decides, and no
/// invitation's link is mailed. Routes are found in the source, so a new
/// setting must be walked here or say why it is no control.
#[tokio::test]
async fn every_route_that_changes_a_control_waits_for_a_second_admin() {
    let controls: Vec<String> = registered_routes()
        .into_iter()
        .filter(|(m, p)| m == "POST" && CONTROL_PREFIXES.iter().any(|c| p.starts_with(c)))
        .map(|(_, p)| p)
        .filter(|p| !NOT_CONTROLS.iter().any(|(n, _)| n == p))
        .collect();
    // A table path walks a source route when each segment is equal or the
    // route's is a parameter.
    let walks = |table: &str, route: &str| {
        let table: Vec<String> = normalize(table).split('/').map(str::to_owned).collect();
        let route: Vec<&str> = route.split('/').collect();
        table.len() == route.len() && table.iter().zip(&route).all(|(t, r)| *r == "{}" || t == r)
    };
    let walked: Vec<_> = ROUTES
        .iter()
        .filter(|(m, p, _)| *m == "POST" && controls.iter().any(|c| walks(p, c)))
        .collect();
    let missing: Vec<_> = controls
        .iter()
        .filter(|c| !walked.iter().any(|(_, p, _)| walks(p, c)))
        .collect();
    assert!(
        missing.is_empty(),
        "control routes missing from the walk: {missing:?}"
    );
    assert!(walked.len() >= 11, "{walked:?}");

    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let a = populate_a(&app).await;
    crate::approvals::members(&app, "Admin", &["second-admin@example.com".into()]).await;
    let before = controls_as_they_stand(&app).await;
    let requests_before: i64 = sqlx::query_scalar("SELECT count(*) FROM action_requests")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    for (method, template, fields) in &walked {
        let mut fields: Vec<(String, String)> =
            fields.iter().map(|(k, v)| (k.to_string(), fill(v, &a))).collect();
        fields.push(("confirmed".to_owned(), "yes".to_owned()));
        let (status, body) = call(&app, method, &fill(template, &a), &fields).await;
        assert!(
            status == 303 || status == 200 || status == 422,
            "{method} {template}: {status} {body}"
        );
    }
    assert_eq!(
        controls_as_they_stand(&app).await,
        before,
        "a control changed without a second admin"
    );
    let filed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM action_requests WHERE status = 'pending' AND kind IN \
         ('membership', 'member_role', 'role_permissions', 'approval_policy', 'reporting_currency', 'connection_change')",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    let requests_after: i64 = sqlx::query_scalar("SELECT count(*) FROM action_requests")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert!(filed >= 9, "each control was filed and waits ({filed} waiting)");
    assert_eq!(requests_after - requests_before, filed, "all it filed waits");
    let mailed: i64 = sqlx::query_scalar("SELECT count(*) FROM outbox WHERE recipient = 'x@example.com'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(mailed, 0, "no link before a second admin approves");
}
