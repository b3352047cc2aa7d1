//! `spawn_app()`: a fresh, randomly named database migrated from scratch,
//! the app on a random port with its built-in sandbox, and a cookie-keeping
//! HTTP client that signs in like a browser.

use std::net::TcpListener;

use paydesk::approvals::Runner;
use paydesk::auth::session_cache::SessionCache;
use paydesk::configuration::Settings;
use paydesk::crypto::MasterKey;
use paydesk::startup::Application;
use reqwest::redirect::Policy;
use secrecy::{ExposeSecret, SecretString};
use sqlx::PgPool;
use uuid::Uuid;

#[derive(Clone)]
pub struct TestApp {
    pub key: std::sync::Arc<MasterKey>,
    pub address: String,
    pub http: reqwest::Client,
    pub pool: PgPool,
    pub admin_email: String,
    pub admin_password: String,
    pub sandbox_url: String,
    /// What the app was started with, for a replica on the same database.
    pub settings: Settings,
    /// The app's job runner, to see how it rests.
    pub runner: std::sync::Arc<Runner>,
    /// The app's session cache, to see when it heard a change.
    pub sessions: std::sync::Arc<SessionCache>,
}

/// The Postgres server of DATABASE_URL (or the local one), without a database.
fn server_url() -> String {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let host_start = url.find("://").map_or(0, |i| i + 3);
    match url[host_start..].find('/') {
        Some(i) => url[..host_start + i].to_owned(),
        None => url,
    }
}

/// Every test's logs are kept in memory (and also go to stderr when
/// TEST_LOG is set: `TEST_LOG=1 cargo test ...`), so tests can check what
/// never reaches a log.
static TRACING: std::sync::Once = std::sync::Once::new();
static LOGS: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());

struct Capture;

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        LOGS.lock().unwrap().extend_from_slice(buf);
        if std::env::var_os("TEST_LOG").is_some() {
            std::io::stderr().write_all(buf)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What every test in this process has logged so far, at debug level for
/// Paydesk's own crates.
/// What a check found once it found something, polling every 50 ms for
/// up to 30 s (a loaded CI machine runs many tests at once); None when it
/// never did. The one place tests wait on a condition.
pub async fn within<T, F, Fut>(mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Some(found) = check().await {
            return Some(found);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// `within`, for a condition that must come true: panics naming `what`.
pub async fn eventually<T, F, Fut>(what: &str, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    match within(check).await {
        Some(found) => found,
        None => panic!("waited 30 s for {what}"),
    }
}

pub fn captured_logs() -> String {
    String::from_utf8_lossy(&LOGS.lock().unwrap()).into_owned()
}

pub async fn spawn_app() -> TestApp {
    spawn(true).await
}

/// Production mode: no built-in sandbox, no demo tenant.
pub async fn spawn_app_without_sandbox() -> TestApp {
    spawn(false).await
}

async fn spawn(builtin_sandbox: bool) -> TestApp {
    TRACING.call_once(|| {
        let _ = tracing_subscriber::fmt()
            .with_env_filter("info,paydesk=debug,paydesk_api=debug,paydesk_sandbox=debug")
            .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
            .with_ansi(false)
            .with_writer(|| Capture)
            .try_init();
    });
    let database_url = format!("{}/paydesk_test_{}", server_url(), Uuid::new_v4().simple());
    let (key, encoded) = MasterKey::generate();
    let settings = Settings {
        listen: "127.0.0.1:0".parse().unwrap(),
        database_url: SecretString::from(database_url),
        master_key: Some(SecretString::from(encoded)),
        data_dir: std::env::temp_dir().join(format!("paydesk-test-{}", Uuid::new_v4().simple())),
        secure_cookies: false,
        builtin_sandbox,
        metrics_token: None,
        smtp_url: None,
        mail_from: "Paydesk <paydesk@localhost>".into(),
        public_url: None,
        audit_checkpoint_minutes: 10,
        gate_workers: 8,
    };
    let app = Application::build_on(&settings, TcpListener::bind("127.0.0.1:0").unwrap())
        .await
        .expect("the app starts");
    let admin = app.first_admin().expect("a fresh database gets a first admin");
    let test = TestApp {
        key: std::sync::Arc::new(key),
        address: format!("http://{}", app.addr()),
        http: new_browser(),
        pool: app.pool().clone(),
        admin_email: admin.email.clone(),
        admin_password: admin.one_time_password.expose_secret().to_owned(),
        sandbox_url: app.sandbox_url().unwrap_or_default().to_owned(),
        settings,
        runner: app.runner(),
        sessions: app.sessions(),
    };
    tokio::spawn(app.run_until_stopped());
    test
}

impl TestApp {
    /// Runs `query` as a DBA or another replica would, then waits until
    /// this portal has forgotten its sessions since (up to 10 s), as its session
    /// cache does within milliseconds.
    pub async fn change_behind_the_portal(
        &self,
        query: sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments>,
    ) {
        // Read first: the portal may hear of it before `execute` returns.
        let seen = self.sessions.generation();
        query.execute(&self.pool).await.unwrap();
        for _ in 0..1_000 {
            if self.sessions.generation() > seen {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the portal never heard of the change");
    }

    /// A second portal process on the same database, as a second replica
    /// behind a load balancer: its own address and job runner, the same
    /// browser (cookies are per host, not per port).
    pub async fn replica(&self) -> TestApp {
        let settings = Settings {
            builtin_sandbox: false,
            data_dir: std::env::temp_dir().join(format!("paydesk-test-{}", Uuid::new_v4().simple())),
            ..self.settings.clone()
        };
        let app = Application::build_on(&settings, TcpListener::bind("127.0.0.1:0").unwrap())
            .await
            .expect("the replica starts");
        let replica = TestApp {
            address: format!("http://{}", app.addr()),
            settings,
            runner: app.runner(),
            sessions: app.sessions(),
            ..self.clone()
        };
        tokio::spawn(app.run_until_stopped());
        replica
    }
}

/// A client that keeps cookies and does not follow redirects, so tests see them.
pub fn new_browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(Policy::none())
        .build()
        .unwrap()
}

/// The value of the first `csrf_token` field in a page.
pub fn csrf_in(html: &str) -> String {
    let marker = "name=\"csrf_token\" value=\"";
    let start = html.find(marker).expect("the page has a CSRF field") + marker.len();
    html[start..].split('"').next().unwrap().to_owned()
}

pub fn location(res: &reqwest::Response) -> String {
    res.headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.http.get(self.url(path)).send().await.unwrap()
    }

    pub async fn get_html(&self, path: &str) -> String {
        self.get(path).await.text().await.unwrap()
    }

    /// Posts a form with the CSRF token taken from `page`.
    pub async fn post_form(&self, page: &str, path: &str, fields: &[(&str, &str)]) -> reqwest::Response {
        let token = csrf_in(&self.get_html(page).await);
        let mut form: Vec<(&str, &str)> = vec![("csrf_token", &token)];
        form.extend_from_slice(fields);
        self.http.post(self.url(path)).form(&form).send().await.unwrap()
    }

    /// A change that succeeded redirects (post, then redirect): the page it
    /// lands on, which shows the change's notice once.
    pub async fn landing(&self, res: reqwest::Response) -> String {
        let status = res.status().as_u16();
        if status != 303 {
            panic!(
                "expected a redirect after the change, got {status}: {}",
                res.text().await.unwrap()
            );
        }
        self.get_html(&location(&res)).await
    }

    pub async fn sign_in(&self, email: &str, password: &str) -> reqwest::Response {
        self.post_form("/login", "/login", &[("email", email), ("password", password)])
            .await
    }

    /// The same app seen from another browser, with no cookies yet.
    pub fn another_browser(&self) -> TestApp {
        TestApp {
            http: new_browser(),
            ..self.clone()
        }
    }

    /// The path of the link (starting `prefix`) in the newest mail to
    /// `to` in the outbox.
    pub async fn mailed_link(&self, to: &str, prefix: &str) -> String {
        let body: String = sqlx::query_scalar(
            "SELECT body FROM outbox WHERE recipient = $1 ORDER BY created_at DESC LIMIT 1",
        )
        .bind(to)
        .fetch_one(&self.pool)
        .await
        .unwrap_or_else(|e| panic!("no mail to {to}: {e}"));
        let start = body
            .find(&format!("{}{prefix}", self.address))
            .expect("the mail has the link");
        body[start + self.address.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .to_owned()
    }

    /// Signs in as the first admin, replaces the one-time password and
    /// sets up two-factor (an Owner must have it), as a new admin would.
    pub async fn sign_in_as_admin(&mut self) {
        let res = self
            .sign_in_with_code(&self.admin_email.clone(), &self.admin_password.clone())
            .await;
        assert_eq!(res.status().as_u16(), 303);
        if location(&res) == "/account/password" {
            let new_password = "a-long-enough-test-password";
            let res = self
                .post_form(
                    "/account/password",
                    "/account/password",
                    &[
                        ("current_password", &self.admin_password.clone()),
                        ("new_password", new_password),
                        ("confirm_password", new_password),
                    ],
                )
                .await;
            assert_eq!(res.status().as_u16(), 303, "{}", res.text().await.unwrap());
            self.admin_password = new_password.to_owned();
        }
        self.enrol_two_factor_if_asked().await;
    }

    /// Signs in, giving a current two-factor code when the account has
    /// two-factor on; the answer to the last step.
    pub async fn sign_in_with_code(&self, email: &str, password: &str) -> reqwest::Response {
        let res = self.sign_in(email, password).await;
        self.second_step(res, email, "").await
    }

    /// The code page's step after a password was accepted, when the
    /// answer leads there (`next` as the page carries it).
    pub async fn second_step(&self, res: reqwest::Response, email: &str, next: &str) -> reqwest::Response {
        let to = location(&res);
        if !to.starts_with("/login/two-factor") {
            return res;
        }
        let code = self.code_for(email).await;
        self.post_form(&to, "/login/two-factor", &[("code", &code), ("next", next)])
            .await
    }

    /// Sets up two-factor through the security page when the portal sends
    /// this browser there (its role requires it).
    pub async fn enrol_two_factor_if_asked(&self) {
        if !self
            .get_html("/account/security")
            .await
            .contains("requires two-factor sign-in")
        {
            return;
        }
        let res = self
            .post_form("/account/security", "/account/security/two-factor", &[])
            .await;
        assert_eq!(res.status().as_u16(), 200);
        let page = res.text().await.unwrap();
        let secret = page
            .split("<code class=\"totp-secret\">")
            .nth(1)
            .and_then(|rest| rest.split('<').next())
            .expect("the page shows the key");
        let code = current_code(secret);
        let res = self
            .post_form(
                "/account/security",
                "/account/security/two-factor/confirm",
                &[("code", &code)],
            )
            .await;
        let page = res.text().await.unwrap();
        assert!(page.contains("Two-factor is on."), "{page}");
    }

    /// A two-factor code for the account not used before: the current
    /// step's, or the next one's (the portal allows a step of drift).
    pub async fn code_for(&self, email: &str) -> String {
        loop {
            let (sealed, last_step): (Vec<u8>, i64) =
                sqlx::query_as("SELECT totp_secret_enc, totp_last_step FROM users WHERE email = $1")
                    .bind(email)
                    .fetch_one(&self.pool)
                    .await
                    .unwrap();
            let encoded = secrecy::ExposeSecret::expose_secret(&self.key.open(&sealed).unwrap()).to_owned();
            let secret = totp_rs::Secret::try_from_base32(&encoded).unwrap();
            let totp = paydesk::auth::two_factor::totp(secret, email).unwrap();
            let now = chrono::Utc::now().timestamp() as u64;
            if let Some(t) = [now, now + 30].into_iter().find(|t| (t / 30) as i64 > last_step) {
                return totp.generate(t).to_string();
            }
            // Both usable steps are spent: the next one starts within 30 s.
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        }
    }

    /// The demo tenant's credentials for the built-in sandbox, read back
    /// from the database the way the portal does, to act as the outside
    /// world (deposits, clock).
    pub async fn sandbox_credentials(&self) -> paydesk_api::Credentials {
        let (client_id, sealed): (String, Vec<u8>) =
            sqlx::query_as("SELECT client_id, client_secret_enc FROM connections WHERE is_builtin")
                .fetch_one(&self.pool)
                .await
                .unwrap();
        let secret = self.key.open(&sealed).unwrap();
        paydesk_api::Credentials::new(client_id, secret.expose_secret())
    }

    /// A client of the built-in sandbox as the demo tenant.
    pub async fn sandbox(&self) -> paydesk_api::Client {
        paydesk_api::Client::new(self.sandbox_url.clone(), self.sandbox_credentials().await)
    }

    /// Links every staged audit record into its log, as the portal's
    /// readers do before reading: for a test that reads the table itself.
    pub async fn link_audit(&self) {
        paydesk::audit::store::link_all(&self.pool).await.unwrap();
    }

    /// Audit actions recorded so far, oldest first.
    pub async fn audit_actions(&self) -> Vec<(String, String)> {
        self.link_audit().await;
        sqlx::query_as("SELECT action, outcome FROM audit_log ORDER BY id")
            .fetch_all(&self.pool)
            .await
            .unwrap()
    }
}

/// The current code of a base32 TOTP key, as an authenticator app shows it.
pub fn current_code(secret: &str) -> String {
    let secret = totp_rs::Secret::try_from_base32(secret).unwrap();
    let totp = paydesk::auth::two_factor::totp(secret, "test@example.com").unwrap();
    totp.generate(chrono::Utc::now().timestamp() as u64).to_string()
}
