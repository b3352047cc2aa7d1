//! How pages show values, in one place so every page shows them alike:
//! times in UTC to the minute (the exact instant on hover), amounts with
//! thousands separators, and the service's codes as words.

use chrono::{DateTime, Utc};

/// `2026-11-25 19:22 UTC` inside a `<time>` whose title and `datetime`
/// carry the exact instant. The service's own times are shown as it gives
/// them (on a sandbox that is the sandbox's clock), never re-stamped.
pub fn when(at: impl Instant) -> String {
    let at = at.instant();
    let exact = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    format!(
        r#"<time datetime="{exact}" title="{exact}">{}</time>"#,
        at.format("%Y-%m-%d %H:%M UTC")
    )
}

/// A time as templates hold it: owned, or behind any number of references.
pub trait Instant {
    fn instant(&self) -> DateTime<Utc>;
}

impl Instant for DateTime<Utc> {
    fn instant(&self) -> DateTime<Utc> {
        *self
    }
}

impl<T: Instant + ?Sized> Instant for &T {
    fn instant(&self) -> DateTime<Utc> {
        (**self).instant()
    }
}

/// The first number in `text` with thousands separators: `50000.00 NGN`
/// reads `50,000.00 NGN`, `-1234567` reads `-1,234,567`. Text without a
/// number comes back as it was.
pub fn grouped(text: impl std::fmt::Display) -> String {
    let text = text.to_string();
    let Some(start) = text.find(|c: char| c.is_ascii_digit()) else {
        return text;
    };
    let digits = text[start..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(text.len(), |n| start + n);
    let int = &text[start..digits];
    let mut out = String::with_capacity(text.len() + int.len() / 3);
    out.push_str(&text[..start]);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out.push_str(&text[digits..]);
    out
}

/// A code as words: `DEPOSIT_CONFIRMED` reads `Deposit confirmed`,
/// `in_progress` reads `In progress`, `card.spend` reads `Card spend`.
pub fn humanize(code: impl std::fmt::Display) -> String {
    sentence_case(&code.to_string().replace(['_', '.', '-'], " ").to_lowercase())
}

/// Words that begin a sentence: the first letter upper-case.
pub fn sentence_case(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// A length of time as people say it, in its two largest units:
/// "2 days 3 hours", "5 hours 10 minutes", "45 minutes".
pub fn span(d: chrono::Duration) -> String {
    let unit = |n: i64, one: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {one}s"),
    };
    let (days, hours, minutes) = (d.num_days(), d.num_hours() % 24, d.num_minutes() % 60);
    match (days, hours) {
        (0, 0) => unit(minutes, "minute"),
        (0, h) if minutes == 0 => unit(h, "hour"),
        (0, h) => format!("{} {}", unit(h, "hour"), unit(minutes, "minute")),
        (d, 0) => unit(d, "day"),
        (d, h) => format!("{} {}", unit(d, "day"), unit(h, "hour")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_in_their_two_largest_units() {
        let m = chrono::Duration::minutes;
        assert_eq!(span(m(45)), "45 minutes");
        assert_eq!(span(m(60)), "1 hour");
        assert_eq!(span(m(5 * 60 + 10)), "5 hours 10 minutes");
        assert_eq!(span(m(2 * 1440 + 3 * 60 + 7)), "2 days 3 hours");
        assert_eq!(span(m(1440)), "1 day");
    }

    #[test]
    fn amounts_are_grouped_by_thousands() {
        assert_eq!(grouped("50000.00 NGN"), "50,000.00 NGN");
        assert_eq!(grouped("-1234567"), "-1,234,567");
        assert_eq!(grouped("2.50000000 BTC"), "2.50000000 BTC");
        assert_eq!(grouped("999"), "999");
        assert_eq!(grouped("1000"), "1,000");
        assert_eq!(grouped("n/a"), "n/a");
    }

    #[test]
    fn codes_read_as_words() {
        assert_eq!(humanize("DEPOSIT_CONFIRMED"), "Deposit confirmed");
        assert_eq!(humanize("in_progress"), "In progress");
        assert_eq!(humanize("card.spend"), "Card spend");
        assert_eq!(humanize(""), "");
    }

    #[test]
    fn times_show_to_the_minute_with_the_exact_instant_on_hover() {
        let at = DateTime::parse_from_rfc3339("2026-11-25T19:22:05Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            when(at),
            r#"<time datetime="2026-11-25T19:22:05Z" title="2026-11-25T19:22:05Z">2026-11-25 19:22 UTC</time>"#
        );
    }
}
