//! The database: connect (creating the database when the server has none
//! of that name) and apply migrations at start-up.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgPool};

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("DATABASE_URL is not a valid Postgres URL: {0}")]
    BadUrl(sqlx::Error),
    #[error(
        "cannot reach PostgreSQL at {host}:{port} ({source}). Start a local server (for example \
         `pg_ctlcluster 15 main start`, or `docker run -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres`) \
         or set DATABASE_URL to one that runs"
    )]
    Unreachable {
        host: String,
        port: u16,
        source: sqlx::Error,
    },
    #[error("cannot create the database '{name}': {source}")]
    Create { name: String, source: sqlx::Error },
    #[error("migrations failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// How long a pooled connection sits idle before it is pinged on its next
/// use.
const IDLE_BEFORE_PING: Duration = Duration::from_secs(1);

/// What this process's connections call themselves to Postgres
/// (`application_name`), unique per process.
pub fn process_name(pool: &PgPool) -> String {
    pool.connect_options()
        .get_application_name()
        .unwrap_or_default()
        .to_owned()
}

/// A name for this process's connections, unique per process: the gate's
/// job notifications name the process that wrote the job (see
/// `process_name`). Postgres keeps 63 bytes of ASCII of a name (it cuts the
/// rest and replaces other characters), so the name is already that, or a
/// job would look another process's.
fn unique_name(given: Option<&str>) -> String {
    let given: String = given
        .unwrap_or("paydesk")
        .chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(40)
        .collect();
    format!("{given} {}", &uuid::Uuid::new_v4().simple().to_string()[..12])
}

/// Connects to `url`, creating its database first when it does not exist,
/// then migrates.
pub async fn connect_and_migrate(url: &str, max_connections: u32) -> Result<PgPool, DbError> {
    let options = PgConnectOptions::from_str(url).map_err(DbError::BadUrl)?;
    let name = unique_name(options.get_application_name());
    let options = options.application_name(&name);
    create_database_if_missing(&options).await?;
    let pool = PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(10))
        // A connection is checked before use only when it sat idle: sqlx's
        // default pings every one it hands out, a round trip more for
        // every statement made on the pool (about sixty a payout through
        // the gate). One used within the second is alive but for a server
        // restart in that second, which fails statements in flight anyway.
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= IDLE_BEFORE_PING {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
        .connect_with(options.clone())
        .await
        .map_err(|source| DbError::Unreachable {
            host: options.get_host().to_owned(),
            port: options.get_port(),
            source,
        })?;
    sqlx::migrate!("./migrations").run(&pool).await?;
    Ok(pool)
}

async fn create_database_if_missing(options: &PgConnectOptions) -> Result<(), DbError> {
    let name = options.get_database().unwrap_or("postgres").to_owned();
    let unreachable = |source| DbError::Unreachable {
        host: options.get_host().to_owned(),
        port: options.get_port(),
        source,
    };
    let mut admin = options
        .clone()
        .database("postgres")
        .connect()
        .await
        .map_err(unreachable)?;
    let exists = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS "exists!""#,
        name
    )
    .fetch_one(&mut admin)
    .await
    .map_err(unreachable)?;
    if !exists {
        // The one statement not checked at compile time: a database name is
        // an identifier, which can't be a bound parameter.
        let statement = format!("CREATE DATABASE \"{}\"", name.replace('"', "\"\""));
        if let Err(source) = sqlx::query(&statement).execute(&mut admin).await {
            // Another replica may have created it a moment ago.
            let raced = sqlx::query_scalar!(
                r#"SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS "exists!""#,
                name
            )
            .fetch_one(&mut admin)
            .await
            .unwrap_or(false);
            if !raced {
                return Err(DbError::Create { name, source });
            }
        }
    }
    admin.close().await.ok();
    Ok(())
}

/// A duration as a Postgres `interval` parameter.
pub fn interval(d: chrono::Duration) -> sqlx::postgres::types::PgInterval {
    sqlx::postgres::types::PgInterval {
        months: 0,
        days: 0,
        microseconds: d.num_microseconds().unwrap_or(i64::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::unique_name;

    #[test]
    fn a_process_name_is_unique_and_kept_whole_by_postgres() {
        assert_ne!(unique_name(None), unique_name(None));
        assert!(unique_name(None).starts_with("paydesk "));
        let long = unique_name(Some(&format!("{}é{}", "a".repeat(30), "b".repeat(60))));
        assert!(long.len() <= 63 && long.is_ascii(), "{long}");
    }
}
