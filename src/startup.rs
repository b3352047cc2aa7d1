//! Builds the application: the in-process sandbox (the default upstream),
//! the HTTP server bound to a listener, and the shared state.

use std::net::{SocketAddr, TcpListener};

use actix_web::dev::Server;
use actix_web::web::{self, Data};
use actix_web::{App, HttpServer};
use paydesk_api::{Client, Credentials};
use paydesk_sandbox::{Fixture, RunningSandbox};

use crate::configuration::Settings;
use crate::routes::health;

pub struct Application {
    addr: SocketAddr,
    server: Server,
    sandbox: RunningSandbox,
}

impl Application {
    pub async fn build(settings: &Settings) -> std::io::Result<Self> {
        let listener = TcpListener::bind(settings.listen)?;
        Self::build_on(listener).await
    }

    /// Builds on an already bound listener (tests bind port 0).
    pub async fn build_on(listener: TcpListener) -> std::io::Result<Self> {
        let fixture = Fixture::demo();
        let demo = &fixture.companies[0].clients[0];
        let credentials = Credentials::new(demo.client_id.to_string(), demo.client_secret.clone());
        let sandbox = RunningSandbox::start(&fixture).await?;
        let upstream = Data::new(Client::new(sandbox.base_url.clone(), credentials));
        let addr = listener.local_addr()?;
        let server = HttpServer::new(move || {
            App::new()
                .app_data(upstream.clone())
                .route("/healthz", web::get().to(health::healthz))
                .route("/readyz", web::get().to(health::readyz))
        })
        .listen(listener)?
        .run();
        Ok(Self {
            addr,
            server,
            sandbox,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn sandbox_url(&self) -> &str {
        &self.sandbox.base_url
    }

    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}
