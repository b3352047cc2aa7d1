//! The sandbox's payout corridors (sandbox-rules.md, "Payouts"): NG, KE and
//! GH, each with bank and mobile-money destinations. GH demands a payment
//! reason from a fixed list. Limits are the sandbox's own; rates come from
//! the market (`areas/market/prices.rs`).

pub struct Corridor {
    pub country: &'static str,
    pub name: &'static str,
    pub currency: &'static str,
    /// The country's flag and telephone prefix (the official client shows
    /// them with a corridor's requirements).
    pub flag: &'static str,
    pub dial_code: &'static str,
    /// Settlement bounds in whole units of the currency.
    pub lower_limit: i64,
    pub higher_limit: i64,
    pub reasons: &'static [&'static str],
    /// When true, `payment_reason` must be one of `reasons`.
    pub reasons_fixed: bool,
    /// (name, code, destination type)
    pub banks: &'static [(&'static str, &'static str, &'static str)],
}

/// Reasons shown for every corridor; GH accepts only these.
const REASONS: &[&str] = &["salary", "family_support", "business", "education"];

pub const CORRIDORS: &[Corridor] = &[
    Corridor {
        country: "NG",
        name: "Nigeria",
        currency: "NGN",
        flag: "🇳🇬",
        dial_code: "+234",
        lower_limit: 1_000,
        higher_limit: 5_000_000,
        reasons: REASONS,
        reasons_fixed: false,
        banks: &[
            ("Access Bank", "044", "bank"),
            ("Guaranty Trust Bank", "058", "bank"),
            ("Zenith Bank", "057", "bank"),
            ("OPay", "999992", "mobile_money"),
        ],
    },
    Corridor {
        country: "KE",
        name: "Kenya",
        currency: "KES",
        flag: "🇰🇪",
        dial_code: "+254",
        lower_limit: 100,
        higher_limit: 1_000_000,
        reasons: REASONS,
        reasons_fixed: false,
        banks: &[
            ("Equity Bank", "068", "bank"),
            ("KCB Bank", "001", "bank"),
            ("M-Pesa", "MPESA", "mobile_money"),
        ],
    },
    Corridor {
        country: "GH",
        name: "Ghana",
        currency: "GHS",
        flag: "🇬🇭",
        dial_code: "+233",
        lower_limit: 10,
        higher_limit: 100_000,
        reasons: REASONS,
        reasons_fixed: true,
        banks: &[
            ("GCB Bank", "GCB", "bank"),
            ("Ecobank Ghana", "ECO", "bank"),
            ("MTN Mobile Money", "MTN", "mobile_money"),
        ],
    },
];

pub fn find(country: &str) -> Option<&'static Corridor> {
    CORRIDORS
        .iter()
        .find(|c| c.country.eq_ignore_ascii_case(country.trim()))
}

impl Corridor {
    pub fn bank(&self, code: &str) -> Option<&(&'static str, &'static str, &'static str)> {
        self.banks
            .iter()
            .find(|(_, c, _)| c.eq_ignore_ascii_case(code.trim()))
    }

    pub fn destination_types(&self) -> Vec<String> {
        let mut types: Vec<String> = self.banks.iter().map(|(_, _, t)| (*t).to_owned()).collect();
        types.dedup();
        types
    }
}
