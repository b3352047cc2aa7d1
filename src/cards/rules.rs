//! The card rules Paydesk checks before calling the service, as plain
//! functions, so a person's mistake is named on the form at once and a
//! refused card never reaches the service (spec "Cards" and "Limits").

use chrono::{DateTime, NaiveDate, Utc};
use paydesk_api::models::cards::{CardLimits, NewCard};
use paydesk_api::units::MicroUnits;
use serde::Deserialize;
use uuid::Uuid;

pub const LITE_MIN: MicroUnits = MicroUnits(2_000_000);
pub const LITE_MAX: MicroUnits = MicroUnits(250_000_000);
/// Cards younger than this can't be terminated (freeze them instead).
pub const MIN_AGE_TO_TERMINATE_HOURS: i64 = 24;

/// The new-card form as typed: amounts in whole USD.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct CardDraft {
    #[serde(default)]
    pub card_type: String,
    #[serde(default)]
    pub customer_id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub card_brand: String,
    #[serde(default)]
    pub amount: String,
    #[serde(default)]
    pub swipe_count: String,
    #[serde(default)]
    pub terminate_date: String,
    #[serde(default)]
    pub contactless: Option<String>,
    #[serde(flatten)]
    pub limits: LimitsDraft,
    /// Fixed when the form is shown, so a double submit issues one card.
    #[serde(default)]
    pub reference: String,
}

/// An amount field in whole USD; empty is `None`.
pub fn usd(field: &str, text: &str) -> Result<Option<MicroUnits>, String> {
    let text = text.trim().trim_start_matches('$');
    if text.is_empty() {
        return Ok(None);
    }
    let value = crate::web::amount::parse(field, text, "USD", 6)?;
    paydesk_api::units::decimal_to_units(value, 6)
        .map(|v| Some(MicroUnits(v)))
        .map_err(|_| format!("{field} is too large for a card."))
}

/// Spend limits as typed, in whole USD; an empty box is no limit.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct LimitsDraft {
    #[serde(default)]
    pub transaction_limit: String,
    #[serde(default)]
    pub daily_limit: String,
    #[serde(default)]
    pub weekly_limit: String,
    #[serde(default)]
    pub monthly_limit: String,
    #[serde(default)]
    pub yearly_limit: String,
    #[serde(default)]
    pub all_time_limit: String,
}

impl LimitsDraft {
    /// The form filled with a card's limits.
    pub fn from_limits(l: &CardLimits) -> Self {
        let show = |v: Option<MicroUnits>| v.map(MicroUnits::display).unwrap_or_default();
        LimitsDraft {
            transaction_limit: show(l.transaction_limit),
            daily_limit: show(l.daily_limit),
            weekly_limit: show(l.weekly_limit),
            monthly_limit: show(l.monthly_limit),
            yearly_limit: show(l.yearly_limit),
            all_time_limit: show(l.all_time_limit),
        }
    }

    pub fn check(&self) -> Result<CardLimits, String> {
        Ok(CardLimits {
            transaction_limit: usd("The per-transaction limit", &self.transaction_limit)?,
            daily_limit: usd("The daily limit", &self.daily_limit)?,
            weekly_limit: usd("The 7-day limit", &self.weekly_limit)?,
            monthly_limit: usd("The monthly limit", &self.monthly_limit)?,
            yearly_limit: usd("The yearly limit", &self.yearly_limit)?,
            all_time_limit: usd("The all-time limit", &self.all_time_limit)?,
        })
    }
}

/// Checks a draft against the spec's rules and builds the request.
pub fn check(draft: &CardDraft, today: NaiveDate) -> Result<NewCard, String> {
    let lite = match draft.card_type.as_str() {
        "virtual" => false,
        "lite" => true,
        _ => return Err("Choose a virtual or a lite card.".to_owned()),
    };
    let customer_id = Uuid::parse_str(draft.customer_id.trim())
        .map_err(|_| "Choose the customer the card is for.".to_owned())?;
    let amount =
        usd("The amount", &draft.amount)?.ok_or_else(|| "Enter the amount to load, in USD.".to_owned())?;
    let card_brand = match draft.card_brand.as_str() {
        "visa" | "mastercard" => Some(draft.card_brand.clone()),
        "" if !lite => None,
        _ => return Err("Choose the card brand: Visa or Mastercard.".to_owned()),
    };
    let (swipe_count, terminate_date) = if lite {
        if amount < LITE_MIN || amount > LITE_MAX {
            return Err(format!(
                "A lite card is loaded with {} to {} USD.",
                LITE_MIN.display(),
                LITE_MAX.display()
            ));
        }
        let swipes: i64 = draft
            .swipe_count
            .trim()
            .parse()
            .map_err(|_| "Enter how many times the lite card can be used (a whole number).".to_owned())?;
        if swipes <= 0 {
            return Err("A lite card must allow at least one use.".to_owned());
        }
        let date = NaiveDate::parse_from_str(draft.terminate_date.trim(), "%Y-%m-%d")
            .map_err(|_| "Choose the day the lite card ends.".to_owned())?;
        if date <= today {
            return Err(format!("The end date must be after today ({today})."));
        }
        (Some(swipes), Some(date.to_string()))
    } else {
        (None, None)
    };
    let card_limits = draft.limits.check()?;
    Ok(NewCard {
        amount,
        card_type: Some(draft.card_type.clone()),
        currency: "USD".to_owned(),
        name: Some(draft.name.trim().to_owned()).filter(|n| !n.is_empty()),
        customer_id: Some(customer_id),
        contactless_payment: Some(draft.contactless.is_some()),
        card_brand,
        reference: Some(draft.reference.clone()).filter(|r| !r.is_empty()),
        card_limits: Some(card_limits).filter(|l| *l != CardLimits::default()),
        swipe_count,
        terminate_date,
        ..NewCard::default()
    })
}

/// When a card may be terminated, or `None` if it may now.
pub fn termination_opens_at(created_at: DateTime<Utc>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let opens = created_at + chrono::Duration::hours(MIN_AGE_TO_TERMINATE_HOURS);
    (now < opens).then_some(opens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, 23).unwrap()
    }

    fn lite(amount: &str, swipes: &str, date: &str) -> CardDraft {
        CardDraft {
            card_type: "lite".into(),
            customer_id: Uuid::new_v4().to_string(),
            card_brand: "visa".into(),
            amount: amount.into(),
            swipe_count: swipes.into(),
            terminate_date: date.into(),
            ..CardDraft::default()
        }
    }

    #[test]
    fn lite_cards_follow_every_rule_on_both_sides_of_each_boundary() {
        assert!(check(&lite("2", "1", "2026-11-24"), today()).is_ok());
        assert!(check(&lite("250", "1", "2026-11-24"), today()).is_ok());
        assert!(check(&lite("1.999999", "1", "2026-11-24"), today()).is_err());
        assert!(check(&lite("250.000001", "1", "2026-11-24"), today()).is_err());
        assert!(check(&lite("5", "0", "2026-11-24"), today()).is_err());
        assert!(check(&lite("5", "", "2026-11-24"), today()).is_err());
        assert!(check(&lite("5", "1", "2026-11-23"), today())
            .unwrap_err()
            .contains("after today"));
        assert!(check(&lite("5", "1", ""), today()).is_err());
        let mut no_brand = lite("5", "1", "2026-11-24");
        no_brand.card_brand.clear();
        assert!(check(&no_brand, today()).unwrap_err().contains("brand"));
        let ok = check(&lite("5.5", "3", "2026-12-01"), today()).unwrap();
        assert_eq!(ok.amount, MicroUnits(5_500_000));
        assert_eq!(ok.swipe_count, Some(3));
        assert!(ok.is_lite());
    }

    #[test]
    fn virtual_cards_need_a_customer_and_a_positive_amount() {
        let mut d = CardDraft {
            card_type: "virtual".into(),
            customer_id: Uuid::new_v4().to_string(),
            amount: "10".into(),
            ..CardDraft::default()
        };
        let card = check(&d, today()).unwrap();
        assert_eq!((card.amount, card.card_brand), (MicroUnits(10_000_000), None));
        d.amount = "0".into();
        assert!(check(&d, today()).is_err());
        d.amount = "ten".into();
        assert!(check(&d, today()).is_err());
        d.amount = "10".into();
        d.customer_id = "someone".into();
        assert!(check(&d, today()).unwrap_err().contains("customer"));
    }

    #[test]
    fn limits_are_optional_but_positive() {
        let draft = |t: &str, d: &str| LimitsDraft {
            transaction_limit: t.into(),
            daily_limit: d.into(),
            ..LimitsDraft::default()
        };
        assert_eq!(draft("", "").check().unwrap(), CardLimits::default());
        let l = draft("50", "100.5").check().unwrap();
        assert_eq!(l.transaction_limit, Some(MicroUnits(50_000_000)));
        assert_eq!(l.daily_limit, Some(MicroUnits(100_500_000)));
        assert_eq!(LimitsDraft::from_limits(&l).daily_limit, "100.50");
        assert!(draft("0", "").check().is_err());
        assert!(draft("", "-5").check().is_err());
    }

    #[test]
    fn termination_waits_24_hours() {
        let created = Utc::now();
        assert!(termination_opens_at(created, created + chrono::Duration::hours(23)).is_some());
        assert!(termination_opens_at(created, created + chrono::Duration::hours(24)).is_none());
    }
}
