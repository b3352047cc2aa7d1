//! Builds the application: database and migrations, the master key, the
//! audit writer, default mode's first admin and demo tenant with the
//! in-process sandbox, and the HTTP server bound to a listener (tests bind
//! port 0).

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::web::{self, Data};
use actix_web::{middleware, App, HttpServer};
use secrecy::ExposeSecret;
use sqlx::PgPool;

use crate::access::permissions::Permission;
use crate::approvals::Registry;
use crate::approvals::Runner;
use crate::area::Area;
use crate::audit::writer::AuditWriter;
use crate::auth::session_cache::SessionCache;
use crate::bootstrap::{self, FirstAdmin};
use crate::configuration::Settings;
use crate::crypto::{CryptoError, MasterKey};
use crate::db::{self, DbError};
use crate::state::AppState;
use crate::tenants::upstream::Upstreams;
use crate::web::menu;
use crate::{routes, web as portal_web};

/// The portal's areas, each declared beside its routes, in the order
/// the menu lists their entries.
pub const AREAS: &[&Area] = &[
    &crate::wallet::AREA,
    &crate::statements::AREA,
    &crate::payouts::routes::AREA,
    &crate::beneficiaries::routes::AREA,
    &crate::withdrawals::routes::AREA,
    &crate::bulk::routes::AREA,
    &crate::virtual_accounts::routes::AREA,
    &crate::lightning::routes::AREA,
    &crate::trading::routes::AREA,
    &crate::rates::routes::AREA,
    &crate::cards::AREA,
    &crate::customers::routes::AREA,
    &crate::approvals::AREA,
    &crate::audit::routes::AREA,
    &crate::access::routes::AREA,
    &crate::tenants::routes::AREA,
    &crate::webhooks::routes::AREA,
    &crate::sandbox_tools::routes::AREA,
    &crate::auth::routes::AREA,
    &crate::mail::routes::AREA,
    &crate::search::AREA,
    &crate::controls::AREA,
];

/// Every kind of action the gate runs, as the areas declare them.
pub fn registry() -> Registry {
    AREAS
        .iter()
        .fold(Registry::default(), |gate, area| (area.kinds)(gate))
}

/// The menu: the areas' entries, and who the gate's inbox lets in
/// (readers, makers and checkers of its kinds, and auditors).
fn install_menu(gate: &Registry) {
    let gate_readers = gate
        .kinds()
        .flat_map(|k| [k.read_permission, k.request_permission, k.approve_permission])
        .chain([Permission::AuditRead])
        .collect();
    menu::install(AREAS.iter().flat_map(|a| a.menu), gate_readers);
}

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("database error during start-up: {0}")]
    Sql(#[from] sqlx::Error),
    #[error(transparent)]
    Key(#[from] CryptoError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Mail(#[from] crate::mail::MailError),
}

pub struct Application {
    addr: SocketAddr,
    server: Server,
    sandbox: Option<embedded::Embedded>,
    first_admin: Option<FirstAdmin>,
    pool: PgPool,
    runner: Arc<Runner>,
    sessions: Arc<SessionCache>,
}

/// The master key: from PAYDESK_MASTER_KEY, else (default mode) a key
/// generated once and kept in the data directory.
fn master_key(settings: &Settings) -> Result<MasterKey, StartupError> {
    if let Some(key) = &settings.master_key {
        return Ok(MasterKey::from_base64(key.expose_secret())?);
    }
    let path = settings.data_dir.join("master.key");
    let key = if path.exists() {
        // A key an older Paydesk wrote may be readable by others.
        #[cfg(unix)]
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        MasterKey::from_base64(&std::fs::read_to_string(&path)?)?
    } else {
        let (key, encoded) = MasterKey::generate();
        write_private(&path, &encoded)?;
        key
    };
    tracing::warn!(
        path = %path.display(),
        "PAYDESK_MASTER_KEY is not set: stored secrets are sealed with a generated key kept in this file. \
         Set PAYDESK_MASTER_KEY in production."
    );
    Ok(key)
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    std::io::Write::write_all(&mut options.open(path)?, contents.as_bytes())
}

/// The sandbox started in-process in default mode (cargo feature
/// `builtin-sandbox`, on by default): the demo tenant's connection points
/// at it and its events come to this portal's receiver.
#[cfg(feature = "builtin-sandbox")]
mod embedded {
    use std::net::SocketAddr;
    use std::path::PathBuf;

    use paydesk_api::{Client, Credentials};
    use paydesk_sandbox::state::Options;
    use paydesk_sandbox::{Fixture, RunningSandbox};
    use secrecy::ExposeSecret;
    use sqlx::PgPool;

    use super::StartupError;
    use crate::bootstrap;
    use crate::crypto::MasterKey;
    use crate::tenants::store as tenants;

    pub struct Embedded(RunningSandbox);

    impl Embedded {
        pub fn base_url(&self) -> &str {
            &self.0.base_url
        }
    }

    /// The sandbox keeps its data under `data_dir`, so a restart of the
    /// portal shows the same cards, customers and history. The folder is
    /// named after the demo tenant's client id: a new demo tenant (a fresh
    /// database) starts a fresh sandbox instead of meeting another's data.
    pub async fn start(
        pool: &PgPool,
        key: &MasterKey,
        portal: SocketAddr,
        data_dir: PathBuf,
    ) -> Result<Embedded, StartupError> {
        let demo = bootstrap::ensure_demo_tenant(pool, key).await?;
        let fixture = Fixture::single_company(
            bootstrap::DEMO_TENANT,
            demo.client_id,
            demo.client_secret.expose_secret().to_owned(),
        );
        let options = Options {
            data_dir: Some(data_dir.join(format!("sandbox-{}", demo.client_id.simple()))),
            ..Options::default()
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let sandbox = RunningSandbox::start_with(&fixture, listener, 1, options).await?;
        tenants::set_base_url(pool, demo.connection_id, &sandbox.base_url).await?;
        let hooks = format!("http://{portal}/hooks/{}", demo.connection_id);
        let client = Client::new(
            sandbox.base_url.clone(),
            Credentials::new(demo.client_id.to_string(), demo.client_secret.expose_secret()),
        );
        if let Err(e) = client.sandbox_set_webhook(&hooks, None).await {
            tracing::warn!(error = %e, "could not point the built-in sandbox's webhooks at the portal");
        }
        Ok(Embedded(sandbox))
    }
}

/// Built without the `builtin-sandbox` feature: default mode can't start
/// a sandbox, so it says so and refuses to start rather than run with a
/// tenant connected to nothing.
#[cfg(not(feature = "builtin-sandbox"))]
mod embedded {
    use std::net::SocketAddr;
    use std::path::PathBuf;

    use sqlx::PgPool;

    use super::StartupError;
    use crate::crypto::MasterKey;

    pub enum Embedded {}

    impl Embedded {
        pub fn base_url(&self) -> &str {
            match *self {}
        }
    }

    pub async fn start(
        _: &PgPool,
        _: &MasterKey,
        _: SocketAddr,
        _: PathBuf,
    ) -> Result<Embedded, StartupError> {
        Err(StartupError::Io(std::io::Error::other(
            "this build has no built-in sandbox (feature builtin-sandbox); set PAYDESK_BUILTIN_SANDBOX=false",
        )))
    }
}

/// The address to reach this server at from the same machine.
fn loopback(addr: SocketAddr) -> SocketAddr {
    if addr.ip().is_unspecified() {
        SocketAddr::from(([127, 0, 0, 1], addr.port()))
    } else {
        addr
    }
}

impl Application {
    pub async fn build(settings: &Settings) -> Result<Self, StartupError> {
        let listener = TcpListener::bind(settings.listen)?;
        Self::build_on(settings, listener).await
    }

    pub async fn build_on(settings: &Settings, listener: TcpListener) -> Result<Self, StartupError> {
        // The pages' connections and, for each of the gate's workers, one for
        // its claim and one its runs share to record what they do.
        let workers = settings.gate_workers.max(1);
        let pool =
            db::connect_and_migrate(settings.database_url.expose_secret(), 16 + 2 * workers as u32).await?;
        let key = master_key(settings)?;
        let granted = crate::access::builtin::grant_new(&pool).await?;
        if granted > 0 {
            tracing::info!(
                granted,
                "gave existing tenants' built-in roles the catalogue's new grants"
            );
        }
        let first_admin = bootstrap::ensure_first_admin(&pool).await?;
        let addr = listener.local_addr()?;
        let sandbox = if settings.builtin_sandbox {
            Some(embedded::start(&pool, &key, loopback(addr), settings.data_dir.clone()).await?)
        } else {
            None
        };
        crate::audit::writer::start_linker(pool.clone());
        let sessions = Arc::new(SessionCache::default());
        SessionCache::start_hearing(sessions.clone(), pool.clone());
        crate::audit::sweeper::start(
            pool.clone(),
            key.derive_audit_signing_key(),
            chrono::TimeDelta::minutes(settings.audit_checkpoint_minutes.max(1).into()),
        );
        let notices = portal_web::notice::framework(key.derive_cookie_key(), settings.secure_cookies);
        let gate = registry();
        install_menu(&gate);
        let state = Data::new(AppState {
            pool: pool.clone(),
            key,
            audit: AuditWriter::start(pool.clone()),
            upstreams: Upstreams::default(),
            corridors: Default::default(),
            secure_cookies: settings.secure_cookies,
            gate,
            metrics_token: settings.metrics_token.clone(),
            mailer: crate::mail::Mailer::new(settings.smtp_url.as_ref(), &settings.mail_from)?,
            public_url: settings.public_url(loopback(addr)),
            sessions,
        });
        let runner = crate::approvals::start(state.clone(), workers);
        let sessions = state.sessions.clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(state.clone())
                .wrap(middleware::from_fn(portal_web::middleware::sign_in_redirects))
                .wrap(middleware::from_fn(crate::metrics::record_requests))
                .wrap(middleware::from_fn(portal_web::middleware::session_and_csrf))
                // Outside the session middleware, which hands its notices to the page.
                .wrap(notices.clone())
                .wrap(middleware::from_fn(portal_web::middleware::security_headers))
                // Outermost: one span per request, with its request id.
                .wrap(tracing_actix_web::TracingLogger::default())
                .configure(portal_web::error::extractor_config)
                .route("/healthz", web::get().to(routes::health::healthz))
                .route("/metrics", web::get().to(crate::metrics::scrape))
                .route("/readyz", web::get().to(routes::health::readyz))
                .route("/static/{name}", web::get().to(portal_web::assets::serve))
                .route("/favicon.ico", web::get().to(portal_web::assets::favicon))
                .configure(|cfg| AREAS.iter().for_each(|area| (area.routes)(cfg)))
                .default_service(web::to(portal_web::error::not_found))
        })
        .shutdown_timeout(10)
        .listen(listener)?
        .run();
        Ok(Self {
            addr,
            server,
            sandbox,
            first_admin,
            pool,
            runner,
            sessions,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The built-in sandbox's address, in default mode.
    pub fn sandbox_url(&self) -> Option<&str> {
        self.sandbox.as_ref().map(|s| s.base_url())
    }

    /// The first admin, when this start created it.
    pub fn first_admin(&self) -> Option<&FirstAdmin> {
        self.first_admin.as_ref()
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The gate's job runner, to see whether it is idle.
    pub fn runner(&self) -> Arc<Runner> {
        self.runner.clone()
    }

    /// The session cache, to see when it heard a change made elsewhere.
    pub fn sessions(&self) -> Arc<SessionCache> {
        self.sessions.clone()
    }

    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}
