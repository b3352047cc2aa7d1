//! Money as exact types, one per unit the spec's amount table names. Amounts
//! travel as strings; inside they are integers of the smallest unit, never
//! floats.

use std::fmt;
use std::str::FromStr;

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

/// A currency code such as `USDT` or `NGN`: 2-10 uppercase ASCII letters.
/// Kept open (not an enum) so the client still reads records in currencies
/// this crate does not know yet.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Currency(String);

impl Currency {
    pub const BTC: &'static str = "BTC";
    pub const USDT: &'static str = "USDT";
    pub const USDC: &'static str = "USDC";
    pub const NGN: &'static str = "NGN";

    /// Accepts any case; stores the uppercase code.
    pub fn parse(code: &str) -> Result<Self, AmountError> {
        let upper = code.trim().to_ascii_uppercase();
        if (2..=10).contains(&upper.len()) && upper.bytes().all(|b| b.is_ascii_uppercase()) {
            Ok(Self(upper))
        } else {
            Err(AmountError::UnknownCurrency(code.to_owned()))
        }
    }

    pub fn code(&self) -> &str {
        &self.0
    }

    /// Decimal places of one base unit, for the currencies of the ledger.
    pub fn decimals(&self) -> Option<u32> {
        match self.0.as_str() {
            "BTC" => Some(8),
            "USDT" | "USDC" => Some(6),
            "NGN" => Some(2),
            _ => None,
        }
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Currency {
    type Err = AmountError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for Currency {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some("A currency code such as USDT or NGN"))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for Currency {}

impl Serialize for Currency {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Currency::parse(&s).map_err(de::Error::custom)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    #[error("must be an integer in the currency's smallest unit, without decimals")]
    NotAnInteger,
    #[error("has decimals; amounts here are integers of the smallest unit")]
    TooManyDecimals,
    #[error("is too large")]
    Overflow,
    #[error("must be greater than zero")]
    NotPositive,
    #[error("'{0}' is not a currency code")]
    UnknownCurrency(String),
}

/// Parses an optionally negative integer string.
fn parse_integer(s: &str) -> Result<i64, AmountError> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() {
        return Err(AmountError::NotAnInteger);
    }
    if digits.contains('.') && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(AmountError::TooManyDecimals);
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(AmountError::NotAnInteger);
    }
    s.parse::<i64>().map_err(|_| AmountError::Overflow)
}

/// Formats `units` with `decimals` places: `250000000, 8` -> `2.50000000`.
pub fn format_decimal(units: i64, decimals: u32) -> String {
    let sign = if units < 0 { "-" } else { "" };
    let abs = units.unsigned_abs();
    if decimals == 0 {
        return format!("{sign}{abs}");
    }
    let scale = 10u64.pow(decimals);
    format!(
        "{sign}{}.{:0width$}",
        abs / scale,
        abs % scale,
        width = decimals as usize
    )
}

#[cfg(feature = "openapi")]
fn integer_string_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .pattern(Some("^-?[0-9]{1,18}$"))
        .description(Some("An integer amount in the smallest unit, as a string"))
        .into()
}

macro_rules! integer_amount {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub i64);

        impl $name {
            pub const ZERO: Self = Self(0);

            /// Parses an integer string (optionally negative).
            pub fn parse(s: &str) -> Result<Self, AmountError> {
                parse_integer(s).map(Self)
            }

            /// Parses a strictly positive amount, as every request amount must be.
            pub fn parse_positive(s: &str) -> Result<Self, AmountError> {
                let v = Self::parse(s)?;
                if v.0 <= 0 {
                    return Err(AmountError::NotPositive);
                }
                Ok(v)
            }

            pub fn value(self) -> i64 {
                self.0
            }

            pub fn checked_add(self, other: Self) -> Option<Self> {
                self.0.checked_add(other.0).map(Self)
            }

            pub fn checked_sub(self, other: Self) -> Option<Self> {
                self.0.checked_sub(other.0).map(Self)
            }

            pub fn is_positive(self) -> bool {
                self.0 > 0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }

        impl std::ops::Neg for $name {
            type Output = Self;
            fn neg(self) -> Self {
                Self(-self.0)
            }
        }

        /// On the wire an integer string; requests may also send a JSON
        /// integer, but the document states the one form responses use.
        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                integer_string_schema()
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $name {}

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(&self.0)
            }
        }

        /// Accepts an integer string or a JSON integer, as the wire and the
        /// sandbox's control API do.
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("an integer amount as a string or a JSON integer")
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::parse(v).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Ok($name(v))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        i64::try_from(v).map($name).map_err(|_| E::custom(AmountError::Overflow))
                    }
                    fn visit_f64<E: de::Error>(self, _: f64) -> Result<$name, E> {
                        Err(E::custom(AmountError::TooManyDecimals))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

integer_amount!(
    /// Integer base units of a ledger currency (balances and transactions):
    /// satoshi for BTC, 10^-6 for USDT and USDC, kobo for NGN.
    BaseUnits
);

integer_amount!(
    /// Micro-units of a card's currency: 1 whole unit = 1,000,000.
    MicroUnits
);

integer_amount!(
    /// Satoshis (Lightning): 1 BTC = 100,000,000 sat.
    Sats
);

impl MicroUnits {
    /// Whole units as typed by a person ("25", "25.50"), at most 6 decimals.
    pub fn from_decimal_str(text: &str) -> Result<Self, AmountError> {
        let value: rust_decimal::Decimal = text.trim().parse().map_err(|_| AmountError::NotAnInteger)?;
        decimal_to_units(value, 6).map(Self)
    }

    /// Whole units with at least 2 decimals, as people read money: 5000000
    /// is "5.00", 1234567 is "1.234567".
    pub fn display(self) -> String {
        let mut d = rust_decimal::Decimal::new(self.0, 6).normalize();
        if d.scale() < 2 {
            d.rescale(2);
        }
        d.to_string()
    }
}

impl BaseUnits {
    /// The decimal amount with all its decimals, a space and the currency,
    /// e.g. `2.50000000 BTC`.
    pub fn formatted(self, currency: &Currency) -> String {
        format!(
            "{} {}",
            format_decimal(self.0, currency.decimals().unwrap_or(0)),
            currency
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_all_decimals() {
        let btc = Currency::parse("btc").unwrap();
        assert_eq!(BaseUnits(250_000_000).formatted(&btc), "2.50000000 BTC");
        let ngn = Currency::parse("NGN").unwrap();
        assert_eq!(BaseUnits(5_000_000).formatted(&ngn), "50000.00 NGN");
        assert_eq!(
            BaseUnits(-1).formatted(&Currency::parse("USDT").unwrap()),
            "-0.000001 USDT"
        );
    }

    #[test]
    fn parses_integer_strings_only() {
        assert_eq!(BaseUnits::parse("42"), Ok(BaseUnits(42)));
        assert_eq!(BaseUnits::parse("-42"), Ok(BaseUnits(-42)));
        assert_eq!(BaseUnits::parse("1.5"), Err(AmountError::TooManyDecimals));
        assert_eq!(BaseUnits::parse("1e5"), Err(AmountError::NotAnInteger));
        assert_eq!(BaseUnits::parse(""), Err(AmountError::NotAnInteger));
        assert_eq!(BaseUnits::parse("+5"), Err(AmountError::NotAnInteger));
        assert_eq!(
            BaseUnits::parse("99999999999999999999"),
            Err(AmountError::Overflow)
        );
        assert_eq!(BaseUnits::parse_positive("0"), Err(AmountError::NotPositive));
        assert_eq!(BaseUnits::parse_positive("-3"), Err(AmountError::NotPositive));
    }

    #[test]
    fn deserializes_strings_and_integers_but_not_floats() {
        assert_eq!(serde_json::from_str::<BaseUnits>("\"7\"").unwrap(), BaseUnits(7));
        assert_eq!(serde_json::from_str::<BaseUnits>("7").unwrap(), BaseUnits(7));
        assert!(serde_json::from_str::<BaseUnits>("7.5").is_err());
        assert!(serde_json::from_str::<BaseUnits>("18446744073709551615").is_err());
        assert_eq!(
            serde_json::to_string(&MicroUnits(5_000_000)).unwrap(),
            "\"5000000\""
        );
    }
}

/// Payout amounts travel as decimal strings in the asset's or currency's
/// own units ("100.50"); this converts one to integer smallest units,
/// refusing more decimals than the unit has.
pub fn decimal_to_units(amount: rust_decimal::Decimal, decimals: u32) -> Result<i64, AmountError> {
    let normalized = amount.normalize();
    if normalized.scale() > decimals {
        return Err(AmountError::TooManyDecimals);
    }
    let scaled = normalized
        .checked_mul(rust_decimal::Decimal::from(10i64.pow(decimals)))
        .ok_or(AmountError::Overflow)?;
    i64::try_from(scaled.trunc()).map_err(|_| AmountError::Overflow)
}

/// Integer smallest units back to a decimal with all its places.
pub fn units_to_decimal(units: i64, decimals: u32) -> rust_decimal::Decimal {
    rust_decimal::Decimal::new(units, decimals)
}

#[cfg(test)]
mod decimal_tests {
    use super::*;
    use rust_decimal::Decimal;
    use std::str::FromStr;

    #[test]
    fn micro_units_read_and_display_like_money() {
        assert_eq!(MicroUnits::from_decimal_str("25.5"), Ok(MicroUnits(25_500_000)));
        assert_eq!(MicroUnits::from_decimal_str(" 2 "), Ok(MicroUnits(2_000_000)));
        assert_eq!(
            MicroUnits::from_decimal_str("0.0000001"),
            Err(AmountError::TooManyDecimals)
        );
        assert!(MicroUnits::from_decimal_str("ten").is_err());
        assert_eq!(MicroUnits(5_000_000).display(), "5.00");
        assert_eq!(MicroUnits(1_234_567).display(), "1.234567");
        assert_eq!(MicroUnits(0).display(), "0.00");
    }

    #[test]
    fn decimals_convert_exactly_both_ways() {
        let d = Decimal::from_str("100.50").unwrap();
        assert_eq!(decimal_to_units(d, 6), Ok(100_500_000));
        assert_eq!(
            decimal_to_units(Decimal::from_str("0.00000001").unwrap(), 8),
            Ok(1)
        );
        assert_eq!(
            decimal_to_units(Decimal::from_str("0.000000001").unwrap(), 8),
            Err(AmountError::TooManyDecimals)
        );
        assert_eq!(units_to_decimal(150, 2).to_string(), "1.50");
    }
}
