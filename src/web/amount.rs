//! Amounts as people type them, checked once at the edge: plain digits
//! with at most one decimal point, no sign, exponent, thousands separator
//! or hex, more than zero, and no more decimals than the unit has (the
//! spec's unit table: BTC 8, USDT and USDC 6, NGN 2). A refusal says what
//! to type instead.

use rust_decimal::Decimal;

/// `text` as an amount of a unit with `decimals` places; `field` and
/// `unit` name them in the message.
pub fn parse(field: &str, text: &str, unit: &str, decimals: u32) -> Result<Decimal, String> {
    let text = text.trim();
    let example = if decimals == 0 {
        "25".to_owned()
    } else {
        format!("25 or 25.{}", "5".repeat(decimals.min(2) as usize))
    };
    let plain = !text.is_empty()
        && text.chars().all(|c| c.is_ascii_digit() || c == '.')
        && text.matches('.').count() <= 1
        && !text.starts_with('.')
        && !text.ends_with('.');
    if !plain {
        return Err(format!(
            "{field} must be a plain number of {unit}, such as {example} (no commas, signs or exponents)."
        ));
    }
    let value: Decimal = text
        .parse()
        .map_err(|_| format!("{field} is too large; enter an amount of {unit} such as {example}."))?;
    if value.scale() > decimals {
        return Err(format!(
            "{field} has more decimals than {unit} has ({decimals} at most)."
        ));
    }
    if value.is_zero() {
        return Err(format!("{field} must be more than 0 {unit}."));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_amounts_within_the_units_precision_pass() {
        assert_eq!(parse("The amount", " 25.5 ", "USDT", 6), Ok(Decimal::new(255, 1)));
        assert_eq!(
            parse("The amount", "0.00000001", "BTC", 8),
            Ok(Decimal::new(1, 8))
        );
        for bad in [
            "1e3", "1,000.5", "-0", "0x10", "-5", "+5", "", ".5", "5.", "1.2.3", "NaN", "25 USDT",
        ] {
            let err = parse("The amount", bad, "USDT", 6).unwrap_err();
            assert!(err.contains("plain number"), "{bad}: {err}");
        }
        assert!(parse("The amount", "0.000000001", "BTC", 8)
            .unwrap_err()
            .contains("8 at most"));
        assert!(parse("The amount", "10.005", "NGN", 2)
            .unwrap_err()
            .contains("2 at most"));
        assert!(parse("The amount", "0.00", "NGN", 2)
            .unwrap_err()
            .contains("more than 0"));
        assert!(parse("The amount", "99999999999999999999999999999999", "USDT", 6)
            .unwrap_err()
            .contains("too large"));
    }
}
