//! Default mode's first start: a platform admin with a one-time password,
//! and a demo tenant connected to the in-process sandbox. Later starts find
//! both and reuse them (the sandbox is started again with the same
//! credentials; its state, being in memory, starts fresh).

use secrecy::SecretString;
use sqlx::PgPool;
use uuid::Uuid;

use crate::access::store as access;
use crate::audit::Event;
use crate::audit::{self, outcome, Actor, NewRecord};
use crate::auth::{password, store as users};
use crate::crypto::MasterKey;
use crate::tenants::store::{self as tenants, NewConnection};

pub const FIRST_ADMIN_EMAIL: &str = "admin@paydesk.local";
pub const DEMO_TENANT: &str = "Demo Company";

/// The first admin, with the password only on the start that created it.
#[derive(Debug)]
pub struct FirstAdmin {
    pub email: String,
    pub one_time_password: SecretString,
}

fn system() -> Actor {
    Actor {
        email: "system".to_owned(),
        ..Actor::default()
    }
}

/// Creates the first platform admin when there are no users at all, or
/// gives them a new one-time password when theirs expired unused.
pub async fn ensure_first_admin(pool: &PgPool) -> Result<Option<FirstAdmin>, sqlx::Error> {
    if users::count(pool).await? > 0 {
        return renew_expired_one_time_password(pool).await;
    }
    let one_time = password::one_time();
    let hash = password::hash(SecretString::from(one_time.clone())).await;
    let mut tx = pool.begin().await?;
    let id = users::create(&mut *tx, FIRST_ADMIN_EMAIL, "Administrator", &hash, true, true).await?;
    audit::store::append_in(
        &mut tx,
        &[NewRecord::new(
            &system(),
            None,
            Event::UsersCreated,
            format!("user:{id}"),
            outcome::SUCCESS,
        )
        .with_details(serde_json::json!({"email": FIRST_ADMIN_EMAIL, "platform_admin": true}))],
    )
    .await?;
    tx.commit().await?;
    Ok(Some(FirstAdmin {
        email: FIRST_ADMIN_EMAIL.to_owned(),
        one_time_password: SecretString::from(one_time),
    }))
}

async fn renew_expired_one_time_password(pool: &PgPool) -> Result<Option<FirstAdmin>, sqlx::Error> {
    let expired = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM users WHERE email = $1 AND must_change_password
                          AND password_expires_at <= now()) AS "expired!""#,
        FIRST_ADMIN_EMAIL,
    )
    .fetch_one(pool)
    .await?;
    if !expired {
        return Ok(None);
    }
    let one_time = password::one_time();
    let hash = password::hash(SecretString::from(one_time.clone())).await;
    sqlx::query!(
        "UPDATE users SET password_hash = $2, password_expires_at = now() + $3::interval WHERE email = $1",
        FIRST_ADMIN_EMAIL,
        hash,
        crate::db::interval(users::ONE_TIME_PASSWORD_LIFETIME),
    )
    .execute(pool)
    .await?;
    Ok(Some(FirstAdmin {
        email: FIRST_ADMIN_EMAIL.to_owned(),
        one_time_password: SecretString::from(one_time),
    }))
}

/// The demo tenant's sandbox credentials.
pub struct DemoCredentials {
    pub connection_id: Uuid,
    pub client_id: Uuid,
    pub client_secret: SecretString,
}

/// Finds or creates the demo tenant and its connection to the built-in
/// sandbox; platform admins become its owners.
pub async fn ensure_demo_tenant(pool: &PgPool, key: &MasterKey) -> Result<DemoCredentials, sqlx::Error> {
    if let Some(existing) = tenants::builtin_connection(pool).await? {
        if let (Ok(secret), Ok(client_id)) = (
            key.open(&existing.client_secret_enc),
            Uuid::parse_str(&existing.client_id),
        ) {
            return Ok(DemoCredentials {
                connection_id: existing.id,
                client_id,
                client_secret: secret,
            });
        }
        tracing::warn!(
            "the built-in sandbox connection can't be read with this master key; making a new one"
        );
    }
    let client_id = Uuid::new_v4();
    let client_secret = SecretString::from(crate::auth::session::random_token());
    let mut tx = pool.begin().await?;
    let tenant_name = if tenant_exists(pool, DEMO_TENANT).await? {
        format!("{DEMO_TENANT} {}", &client_id.simple().to_string()[..6])
    } else {
        DEMO_TENANT.to_owned()
    };
    let (tenant_id, owner_role) = tenants::create_tenant(&mut tx, &tenant_name).await?;
    let connection_id = tenants::add_connection(
        &mut *tx,
        NewConnection {
            tenant_id,
            name: "Built-in sandbox",
            environment: "sandbox",
            base_url: "http://127.0.0.1",
            client_id: &client_id.to_string(),
            client_secret_enc: key.seal(&client_secret),
            webhook_secret_enc: Some(key.seal(&client_secret)),
            is_builtin: true,
        },
    )
    .await?;
    let admins: Vec<Uuid> =
        sqlx::query_scalar!("SELECT id FROM users WHERE is_platform_admin ORDER BY created_at")
            .fetch_all(&mut *tx)
            .await?;
    for admin in &admins {
        access::add_member(
            &mut tx,
            tenant_id,
            *admin,
            owner_role,
            access::GrantedBy::default(),
        )
        .await?;
    }
    audit::store::append_in(
        &mut tx,
        &[
            // The tenant's creation is the platform's business (its log).
            NewRecord::new(
                &system(),
                None,
                Event::TenantsCreated,
                format!("tenant:{tenant_name}"),
                outcome::SUCCESS,
            )
            .with_details(serde_json::json!({"id": tenant_id})),
            NewRecord::new(
                &system(),
                Some(tenant_id),
                Event::ConnectionsCreated,
                format!("connection:{connection_id}"),
                outcome::SUCCESS,
            )
            .with_details(serde_json::json!({"name": "Built-in sandbox", "environment": "sandbox"})),
        ],
    )
    .await?;
    tx.commit().await?;
    tracing::info!(tenant = %tenant_name, %client_id, "created the demo tenant");
    Ok(DemoCredentials {
        connection_id,
        client_id,
        client_secret,
    })
}

async fn tenant_exists(pool: &PgPool, name: &str) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM tenants WHERE name = $1) AS "exists!""#,
        name
    )
    .fetch_one(pool)
    .await
}
