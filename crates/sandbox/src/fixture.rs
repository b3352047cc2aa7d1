//! The fixture file (DESIGN.md, "Fixture file"): companies with opening
//! balances in base units, webhook settings and API clients. With no
//! fixture the sandbox makes one demo company with fresh credentials.

use std::collections::BTreeMap;
use std::path::Path;

use paydesk_api::models::identity::Environment;
use paydesk_api::units::{BaseUnits, Currency};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fixture {
    pub companies: Vec<CompanyFixture>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompanyFixture {
    #[serde(default)]
    pub id: Option<Uuid>,
    pub name: String,
    /// Opening balances: currency code to base-unit string.
    #[serde(default)]
    pub balances: BTreeMap<String, BaseUnits>,
    #[serde(default)]
    pub webhook_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_secret: Option<String>,
    pub clients: Vec<ClientFixture>,
}

#[derive(Clone, Serialize, Deserialize)]
pub struct ClientFixture {
    pub client_id: Uuid,
    pub client_secret: String,
    #[serde(default = "default_client_name")]
    pub name: String,
    #[serde(default = "default_true")]
    pub active: bool,
    #[serde(default)]
    pub permissions: Option<Vec<String>>,
    #[serde(default = "default_environment")]
    pub environment: Environment,
}

impl std::fmt::Debug for ClientFixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFixture")
            .field("client_id", &self.client_id)
            .field("client_secret", &"[redacted]")
            .field("name", &self.name)
            .field("active", &self.active)
            .field("permissions", &self.permissions)
            .finish()
    }
}

fn default_client_name() -> String {
    "Default".to_owned()
}

fn default_true() -> bool {
    true
}

fn default_environment() -> Environment {
    Environment::Sandbox
}

#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("cannot read the fixture file {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("the fixture file is not valid: {0}")]
    Parse(#[from] serde_json::Error),
    #[error("the fixture is not valid: {0}")]
    Invalid(String),
}

/// A fresh client secret: 32 random bytes as hex.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

impl Fixture {
    /// One demo company with fresh credentials and the rules' demo
    /// balances: 2.5 BTC, 10,000 USDT, 10,000 USDC, 50,000 NGN.
    pub fn demo() -> Self {
        Self::single_company("Demo Company", Uuid::new_v4(), new_secret())
    }

    /// A company with the demo balances and one client of the given
    /// credentials (the portal's default mode and tests use this).
    pub fn single_company(name: &str, client_id: Uuid, client_secret: String) -> Self {
        let balances = [
            ("BTC", 250_000_000),
            ("USDT", 10_000_000_000),
            ("USDC", 10_000_000_000),
            ("NGN", 5_000_000),
        ]
        .into_iter()
        .map(|(c, v)| (c.to_owned(), BaseUnits(v)))
        .collect();
        Fixture {
            companies: vec![CompanyFixture {
                id: None,
                name: name.to_owned(),
                balances,
                webhook_url: None,
                webhook_secret: None,
                clients: vec![ClientFixture {
                    client_id,
                    client_secret,
                    name: "Default".to_owned(),
                    active: true,
                    permissions: None,
                    environment: Environment::Sandbox,
                }],
            }],
        }
    }

    pub fn load(path: &Path) -> Result<Self, FixtureError> {
        let text = std::fs::read_to_string(path).map_err(|source| FixtureError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let fixture: Fixture = serde_json::from_str(&text)?;
        fixture.validate()?;
        Ok(fixture)
    }

    /// Checks what serde cannot: known currencies, non-negative balances,
    /// unique client ids, at least one client per company.
    pub fn validate(&self) -> Result<(), FixtureError> {
        let mut seen = std::collections::HashSet::new();
        for company in &self.companies {
            if company.clients.is_empty() {
                return Err(FixtureError::Invalid(format!(
                    "company '{}' has no clients",
                    company.name
                )));
            }
            for (code, amount) in &company.balances {
                let currency = Currency::parse(code).map_err(|e| FixtureError::Invalid(e.to_string()))?;
                if currency.decimals().is_none() {
                    return Err(FixtureError::Invalid(format!(
                        "company '{}': {code} is not a ledger currency (BTC, USDT, USDC, NGN)",
                        company.name
                    )));
                }
                if amount.value() < 0 {
                    return Err(FixtureError::Invalid(format!(
                        "company '{}': {code} balance is negative",
                        company.name
                    )));
                }
            }
            for client in &company.clients {
                if !seen.insert(client.client_id) {
                    return Err(FixtureError::Invalid(format!(
                        "client id {} appears twice",
                        client.client_id
                    )));
                }
                if client.client_secret.is_empty() {
                    return Err(FixtureError::Invalid(format!(
                        "client {} has an empty secret",
                        client.client_id
                    )));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_design_example() {
        let text = r#"{"companies": [{
          "name": "Acme Ltd",
          "balances": {"BTC": "250000000", "USDT": "10000000000", "USDC": "10000000000", "NGN": "5000000"},
          "webhook_url": "http://127.0.0.1:8080/hooks/x",
          "clients": [{"client_id": "6f1c2f8e-9d43-4a43-9a43-2b1b0e6c1a11", "client_secret": "s", "name": "Ops",
                       "active": true, "permissions": null, "environment": "sandbox"}]
        }]}"#;
        let f: Fixture = serde_json::from_str(text).unwrap();
        f.validate().unwrap();
        assert_eq!(f.companies[0].balances["NGN"], BaseUnits(5_000_000));
        assert!(!format!("{:?}", f).contains("\"s\""));
    }

    #[test]
    fn refuses_unknown_currencies_and_duplicate_clients() {
        let mut f = Fixture::demo();
        f.companies[0].balances.insert("DOGE".into(), BaseUnits(1));
        assert!(f.validate().is_err());
        let mut f = Fixture::demo();
        let dup = f.companies[0].clients[0].clone();
        f.companies[0].clients.push(dup);
        assert!(f.validate().is_err());
    }
}
