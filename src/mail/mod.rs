//! Mail the portal sends: invitations and password resets. With an SMTP
//! server configured (`smtp_url`) it goes out through lettre; without one
//! (default mode, tests) it lands in the outbox table, which platform
//! admins read at `/platform/outbox`, so the portal can be tried, and
//! tested, with no mail server.

pub mod routes;

use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use secrecy::{ExposeSecret, SecretString};
use sqlx::PgPool;
use uuid::Uuid;

/// One message, plain text.
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub body: String,
}

#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("the mail settings are not valid: {0}")]
    Settings(String),
    #[error("the mail could not be sent: {0}")]
    Send(String),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

#[derive(Clone)]
pub enum Mailer {
    Smtp {
        transport: AsyncSmtpTransport<Tokio1Executor>,
        from: Mailbox,
    },
    Outbox,
}

impl Mailer {
    /// SMTP when `smtp_url` is given (`smtps://user:password@host`, or
    /// `smtp://host:587?tls=required`), else the outbox.
    pub fn new(smtp_url: Option<&SecretString>, from: &str) -> Result<Self, MailError> {
        let Some(url) = smtp_url else {
            return Ok(Mailer::Outbox);
        };
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url.expose_secret())
            // The URL carries the password: say what is wrong, not the URL.
            .map_err(|_| {
                MailError::Settings("smtp_url is not an SMTP URL (smtps://user:password@host)".into())
            })?
            .build();
        let from = from
            .parse()
            .map_err(|_| MailError::Settings(format!("mail_from {from:?} is not a mail address")))?;
        Ok(Mailer::Smtp { transport, from })
    }

    #[tracing::instrument(skip_all, fields(subject = %mail.subject))]
    pub async fn send(&self, pool: &PgPool, mail: Mail) -> Result<(), MailError> {
        match self {
            Mailer::Outbox => {
                sqlx::query!(
                    "INSERT INTO outbox (id, recipient, subject, body) VALUES ($1, $2, $3, $4)",
                    Uuid::new_v4(),
                    mail.to,
                    mail.subject,
                    mail.body,
                )
                .execute(pool)
                .await?;
                Ok(())
            }
            Mailer::Smtp { transport, from } => {
                let to: Mailbox = mail
                    .to
                    .parse()
                    .map_err(|_| MailError::Send("the recipient is not a mail address".into()))?;
                let message = Message::builder()
                    .from(from.clone())
                    .to(to)
                    .subject(mail.subject)
                    .body(mail.body)
                    .map_err(|e| MailError::Send(e.to_string()))?;
                transport
                    .send(message)
                    .await
                    .map_err(|e| MailError::Send(e.to_string()))?;
                Ok(())
            }
        }
    }
}

/// A message in the outbox, for the platform admin's page and for tests.
pub struct OutboxMail {
    pub id: Uuid,
    pub recipient: String,
    pub subject: String,
    pub body: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

pub async fn outbox(pool: &PgPool, limit: i64) -> Result<Vec<OutboxMail>, sqlx::Error> {
    sqlx::query_as!(
        OutboxMail,
        "SELECT id, recipient, subject, body, created_at FROM outbox ORDER BY created_at DESC LIMIT $1",
        limit
    )
    .fetch_all(pool)
    .await
}
