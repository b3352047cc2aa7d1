//! Forms the user can get wrong: one refusal type for every form, carried
//! from the domain function that found the problem to the page that shows
//! it beside the field, with what the user typed kept.

use super::error::PortalError;

/// Something the user can fix: the field it is about (none when it is the
/// whole form) and what to do, in the user's terms.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    pub field: Option<&'static str>,
    pub message: String,
}

impl Refusal {
    pub fn field(field: &'static str, message: impl Into<String>) -> Self {
        Refusal {
            field: Some(field),
            message: message.into(),
        }
    }

    pub fn form(message: impl Into<String>) -> Self {
        Refusal {
            field: None,
            message: message.into(),
        }
    }
}

/// What a domain function behind a form answers when it does not succeed:
/// the user's to fix (a 422 with the form shown again) or the portal's.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(transparent)]
    Portal(#[from] PortalError),
}

impl From<sqlx::Error> for Failure {
    fn from(e: sqlx::Error) -> Self {
        Failure::Portal(e.into())
    }
}

impl From<paydesk_api::ApiError> for Failure {
    fn from(e: paydesk_api::ApiError) -> Self {
        Failure::Portal(e.into())
    }
}

/// The messages a refused form shows: beside a field, or above the form.
#[derive(Debug, Default, Clone)]
pub struct FieldErrors(Vec<Refusal>);

impl FieldErrors {
    pub fn get(&self, field: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|r| r.field == Some(field))
            .map(|r| r.message.as_str())
    }

    /// The message for the whole form, if there is one.
    pub fn form(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|r| r.field.is_none())
            .map(|r| r.message.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Refusal> for FieldErrors {
    fn from(r: Refusal) -> Self {
        FieldErrors(vec![r])
    }
}

/// Splits a domain result for a handler: success, a refusal to show on the
/// form, or a portal error that goes to the error page.
pub fn split<T>(result: Result<T, Failure>) -> Result<Result<T, Refusal>, PortalError> {
    match result {
        Ok(v) => Ok(Ok(v)),
        Err(Failure::Refused(r)) => Ok(Err(r)),
        Err(Failure::Portal(e)) => Err(e),
    }
}

/// Text the user typed, trimmed and bounded, so a 300-character name can't
/// stretch a page or a column.
pub fn bounded(value: &str, field: &'static str, what: &str, max: usize) -> Result<String, Refusal> {
    let value = value.trim();
    if value.is_empty() || value.chars().count() > max {
        return Err(Refusal::field(
            field,
            format!("Give {what} of 1 to {max} characters."),
        ));
    }
    Ok(value.to_owned())
}

/// An e-mail address, lower-cased; refused with a message when it isn't one.
pub fn email(value: &str, field: &'static str) -> Result<String, Refusal> {
    let email = value.trim().to_lowercase();
    let valid = email.split_once('@').is_some_and(|(local, domain)| {
        !local.is_empty()
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !email.contains(char::is_whitespace)
            && !email.contains(char::is_control)
            && email.len() <= 254
    });
    if valid {
        Ok(email)
    } else {
        Err(Refusal::field(
            field,
            format!(
                "'{}' is not an email address; enter one like name@company.com.",
                value.trim()
            ),
        ))
    }
}

/// The constraint a failed statement violated, when the database refused a
/// duplicate: uniqueness is the database's to enforce, the portal only
/// says it in the user's terms.
pub fn unique_violation(e: &sqlx::Error) -> Option<&str> {
    match e {
        sqlx::Error::Database(db) if db.is_unique_violation() => db.constraint(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_is_lower_cased_and_checked() {
        assert_eq!(email(" Ann@Example.COM ", "email").unwrap(), "ann@example.com");
        for bad in [
            "ann",
            "ann@",
            "@example.com",
            "ann@example",
            "a n@example.com",
            "ann@example.",
            "a\0nn@example.com",
        ] {
            assert_eq!(email(bad, "email").unwrap_err().field, Some("email"), "{bad}");
        }
    }

    #[test]
    fn bounded_text_refuses_empty_and_long() {
        assert_eq!(
            bounded("  Treasury ", "name", "the role a name", 60).unwrap(),
            "Treasury"
        );
        assert!(bounded("   ", "name", "the role a name", 60).is_err());
        let long = "x".repeat(61);
        let refused = bounded(&long, "name", "the role a name", 60).unwrap_err();
        assert_eq!(refused.message, "Give the role a name of 1 to 60 characters.");
    }

    #[test]
    fn errors_find_their_field() {
        let errors = FieldErrors::from(Refusal::field("email", "Enter an email."));
        assert_eq!(errors.get("email"), Some("Enter an email."));
        assert_eq!(errors.get("name"), None);
        assert_eq!(errors.form(), None);
        assert_eq!(FieldErrors::from(Refusal::form("No.")).form(), Some("No."));
    }
}
