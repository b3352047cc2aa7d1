//! Sign-in, sessions, CSRF and security headers.

use crate::helpers::{csrf_in, location, new_browser, spawn_app};

#[tokio::test]
async fn the_one_time_password_signs_in_and_must_be_replaced() {
    let app = spawn_app().await;
    let res = app.sign_in(&app.admin_email, &app.admin_password).await;
    assert_eq!(res.status().as_u16(), 303);
    assert_eq!(location(&res), "/account/password");
    // Every page sends them back to choose a password.
    assert_eq!(location(&app.get("/").await), "/account/password");

    let page = app.get_html("/account/password").await;
    assert!(page.contains("Choose your password"));
    let res = app
        .post_form(
            "/account/password",
            "/account/password",
            &[
                ("current_password", &app.admin_password),
                ("new_password", "short"),
                ("confirm_password", "short"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains("at least 12 characters"));

    let new = "a-much-better-password";
    let res = app
        .post_form(
            "/account/password",
            "/account/password",
            &[
                ("current_password", &app.admin_password),
                ("new_password", new),
                ("confirm_password", new),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    // An Owner sets up two-factor next, before any other page.
    assert_eq!(location(&app.get("/").await), "/account/security");

    // The old password no longer works; the new one does.
    let other = new_browser();
    let token = csrf_in(
        &other
            .get(app.url("/login"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    );
    let res = other
        .post(app.url("/login"))
        .form(&[
            ("csrf_token", token.as_str()),
            ("email", &app.admin_email),
            ("password", &app.admin_password),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 401);
    let actions = app.audit_actions().await;
    assert!(actions.contains(&("auth.sign_in".into(), "success".into())));
    assert!(actions.contains(&("auth.password_changed".into(), "success".into())));
    assert!(actions.contains(&("auth.sign_in_failed".into(), "failure".into())));
}

/// The sign-in page's answer: its status and the alert it shows.
async fn answer(res: reqwest::Response) -> (u16, String) {
    let status = res.status().as_u16();
    let body = res.text().await.unwrap();
    let alert = body
        .split("role=\"alert\">")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .unwrap_or_default()
        .to_owned();
    (status, alert)
}

#[tokio::test]
async fn a_locked_account_answers_exactly_as_an_unknown_email_does() {
    let app = spawn_app().await;
    let (status, refused) = answer(app.sign_in(&app.admin_email, "wrong-password").await).await;
    assert_eq!(status, 401);
    assert!(refused.contains("email or password is not right"), "{refused}");
    for _ in 0..5 {
        app.sign_in(&app.admin_email, "wrong-password").await;
        app.sign_in("nobody@example.com", "wrong-password").await;
    }
    let locked: bool = sqlx::query_scalar("SELECT locked_until > now() FROM users WHERE email = $1")
        .bind(&app.admin_email)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert!(locked, "five failures lock the account");
    // Even the right password is refused while locked, in the same words
    // as an email that has no account.
    let real = answer(app.sign_in(&app.admin_email, &app.admin_password).await).await;
    let unknown = answer(app.sign_in("nobody@example.com", "whatever-it-is").await).await;
    assert_eq!(real, unknown);
    assert_eq!(real, (401, refused));
}

#[tokio::test]
async fn sign_out_ends_the_session_on_the_server() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let home = app.get_html("/").await;
    let token = csrf_in(&home);
    let cookie: String = sqlx::query_scalar("SELECT encode(token_hash, 'hex') FROM sessions LIMIT 1")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert!(!cookie.is_empty());
    let res = app
        .http
        .post(app.url("/logout"))
        .form(&[("csrf_token", token.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 303);
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM sessions")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(left, 0);
    assert_eq!(location(&app.get("/").await), "/login");
}

#[tokio::test]
async fn signing_in_again_ends_the_browsers_previous_session() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let first: Vec<u8> = sqlx::query_scalar("SELECT token_hash FROM sessions")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    // The sign-in form again in the same browser (a second tab, say).
    let fields = [
        ("email", app.admin_email.as_str()),
        ("password", app.admin_password.as_str()),
    ];
    let res = app.post_form("/", "/login", &fields).await;
    let res = app.second_step(res, &app.admin_email, "").await;
    assert_eq!(res.status().as_u16(), 303, "{}", res.text().await.unwrap());
    let sessions: Vec<Vec<u8>> = sqlx::query_scalar("SELECT token_hash FROM sessions")
        .fetch_all(&app.pool)
        .await
        .unwrap();
    assert_eq!(sessions.len(), 1, "only the new session is live");
    assert_ne!(sessions[0], first);
    assert_eq!(app.get("/").await.status().as_u16(), 200);
}

#[tokio::test]
async fn a_new_session_id_at_every_sign_in_and_sign_out_everywhere() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let second = app.another_browser();
    let res = second
        .sign_in_with_code(&app.admin_email, &app.admin_password)
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let hashes: Vec<Vec<u8>> = sqlx::query_scalar("SELECT token_hash FROM sessions")
        .fetch_all(&app.pool)
        .await
        .unwrap();
    assert_eq!(hashes.len(), 2);
    assert_ne!(hashes[0], hashes[1]);

    let res = app
        .post_form("/account/password", "/logout/everywhere", &[])
        .await;
    assert_eq!(res.status().as_u16(), 303);
    assert_eq!(location(&second.get("/").await), "/login");
    assert_eq!(location(&app.get("/").await), "/login");
}

#[tokio::test]
async fn idle_and_absolute_timeouts_end_sessions() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    app.change_behind_the_portal(sqlx::query(
        "UPDATE sessions SET last_seen_at = now() - interval '31 minutes'",
    ))
    .await;
    assert_eq!(location(&app.get("/").await), "/login");

    app.sign_in_with_code(&app.admin_email, &app.admin_password).await;
    assert_eq!(app.get("/").await.status().as_u16(), 200);
    app.change_behind_the_portal(sqlx::query(
        "UPDATE sessions SET created_at = now() - interval '12 hours 1 minute'",
    ))
    .await;
    assert_eq!(location(&app.get("/").await), "/login");
}

#[tokio::test]
async fn unsafe_requests_need_the_csrf_token() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let home = app.get_html("/").await;
    let token = csrf_in(&home);

    let res = app.http.post(app.url("/logout")).send().await.unwrap();
    assert_eq!(res.status().as_u16(), 403);
    let res = app
        .http
        .post(app.url("/logout"))
        .form(&[("csrf_token", "forged")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 403);
    assert!(res.text().await.unwrap().contains("reload the page"));
    // htmx sends it as a header.
    let res = app
        .http
        .post(app.url("/logout"))
        .header("X-CSRF-Token", &token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 303);

    // The sign-in form is protected before any session exists.
    let stranger = new_browser();
    let res = stranger
        .post(app.url("/login"))
        .form(&[
            ("csrf_token", "guess"),
            ("email", &app.admin_email),
            ("password", &app.admin_password),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 403);
}

#[tokio::test]
async fn pages_carry_security_headers_and_cookies_are_locked_down() {
    let app = spawn_app().await;
    let res = app.get("/login").await;
    let h = res.headers();
    let csp = h.get("content-security-policy").unwrap().to_str().unwrap();
    assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"));
    assert!(csp.contains("frame-ancestors 'none'"));
    assert_eq!(h.get("x-frame-options").unwrap(), "DENY");
    assert_eq!(h.get("x-content-type-options").unwrap(), "nosniff");
    assert_eq!(h.get("referrer-policy").unwrap(), "no-referrer");
    assert_eq!(h.get("cache-control").unwrap(), "no-store");
    assert!(
        h.get("strict-transport-security").is_none(),
        "no HSTS over plain HTTP"
    );

    let token = csrf_in(&res.text().await.unwrap());
    let res = app
        .http
        .post(app.url("/login"))
        .form(&[
            ("csrf_token", token.as_str()),
            ("email", &app.admin_email),
            ("password", &app.admin_password),
        ])
        .send()
        .await
        .unwrap();
    let cookie = res
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .find(|c| c.starts_with("paydesk_session="))
        .unwrap();
    assert!(cookie.contains("HttpOnly"));
    assert!(cookie.contains("SameSite=Lax"));
    assert!(!cookie.contains("Secure"));
}

/// When the session is gone, a live panel (an htmx request) sends the
/// whole browser to sign in instead of swapping the sign-in page into
/// itself, and signing in comes back to the page the member was on; a
/// `next` that leaves the site is ignored.
#[tokio::test]
async fn an_ended_session_sends_the_browser_to_sign_in_and_back() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let stranger = app.another_browser();
    let res = stranger
        .http
        .get(stranger.url("/cards/00000000-0000-0000-0000-000000000001/live"))
        .header("HX-Request", "true")
        .header("HX-Current-URL", stranger.url("/transactions?currency=USDT"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert!(res.headers().get("location").is_none());
    let to = res
        .headers()
        .get("hx-redirect")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(to, "/login?next=%2Ftransactions%3Fcurrency%3DUSDT");
    assert!(
        !res.text().await.unwrap().contains("Sign in"),
        "nothing to swap in"
    );

    let page = stranger.get("/transactions").await;
    assert_eq!(page.status().as_u16(), 303);
    assert_eq!(location(&page), "/login?next=%2Ftransactions");

    let form = stranger.get_html(&to).await;
    assert!(
        form.contains("name=\"next\" value=\"/transactions?currency=USDT\""),
        "{form}"
    );
    let password = app.admin_password.clone();
    let res = stranger
        .post_form(
            &to,
            "/login",
            &[
                ("email", &app.admin_email),
                ("password", &password),
                ("next", "/transactions?currency=USDT"),
            ],
        )
        .await;
    assert_eq!(
        location(&res),
        "/login/two-factor?next=%2Ftransactions%3Fcurrency%3DUSDT"
    );
    let res = stranger
        .second_step(res, &app.admin_email, "/transactions?currency=USDT")
        .await;
    assert_eq!(location(&res), "/transactions?currency=USDT");

    let elsewhere = app.another_browser();
    let res = elsewhere
        .post_form(
            "/login",
            "/login",
            &[
                ("email", &app.admin_email),
                ("password", &password),
                ("next", "//evil.example/"),
            ],
        )
        .await;
    assert_eq!(location(&res), "/login/two-factor?next=");
    let res = elsewhere
        .second_step(res, &app.admin_email, "//evil.example/")
        .await;
    assert_eq!(location(&res), "/");
}

/// A page costs no statement while nothing about its session changed: a
/// session deleted without announcing it (triggers off, as only a DBA
/// could) is still served, until a change is heard on `paydesk_access`.
#[tokio::test]
async fn a_session_is_served_from_memory_until_a_change_is_heard() {
    let mut app = spawn_app().await;
    let sessions = &app.sessions;
    crate::helpers::eventually("the session cache to listen", move || async move {
        sessions.is_hearing().then_some(())
    })
    .await;
    app.sign_in_as_admin().await;
    assert_eq!(app.get("/").await.status().as_u16(), 200);

    let mut unannounced = app.pool.begin().await.unwrap();
    sqlx::query("SET LOCAL session_replication_role = replica")
        .execute(&mut *unannounced)
        .await
        .unwrap();
    sqlx::query("DELETE FROM sessions")
        .execute(&mut *unannounced)
        .await
        .unwrap();
    unannounced.commit().await.unwrap();
    assert_eq!(app.get("/").await.status().as_u16(), 200, "served from memory");

    app.change_behind_the_portal(sqlx::query("SELECT pg_notify('paydesk_access', '')"))
        .await;
    assert_eq!(location(&app.get("/").await), "/login");
}
