//! What the log may show of personal data and card details: enough to tell
//! records apart, never the value itself.

/// `ada@example.com` -> `a***@example.com`.
pub fn email(address: &str) -> String {
    match address.split_once('@') {
        Some((local, domain)) => {
            let first: String = local.chars().take(1).collect();
            format!("{first}***@{domain}")
        }
        None => "***".to_owned(),
    }
}

/// A card number as its last four digits: `•••• 4242`.
pub fn card_number(pan: &str) -> String {
    let digits: Vec<char> = pan.chars().filter(char::is_ascii_digit).collect();
    let last: String = digits[digits.len().saturating_sub(4)..].iter().collect();
    format!("•••• {last}")
}

/// A person as the log names them: their name, else their masked email.
pub fn person(first: &str, last: &str, address: &str) -> String {
    let name = format!("{} {}", first.trim(), last.trim());
    match name.trim() {
        "" => email(address),
        name => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_keep_only_what_tells_records_apart() {
        assert_eq!(email("ada@example.com"), "a***@example.com");
        assert_eq!(email("nonsense"), "***");
        assert_eq!(card_number("4242 4242 4242 1234"), "•••• 1234");
        assert_eq!(person("Ada", "Lovelace", "ada@example.com"), "Ada Lovelace");
        assert_eq!(person(" ", "", "ada@example.com"), "a***@example.com");
    }
}
