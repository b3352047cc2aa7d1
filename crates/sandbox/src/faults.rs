//! Injected faults (`POST /sandbox/faults`): the next `count` calls of the
//! company that match a method and path prefix fail in a chosen way, so
//! integrators can test their handling of lost answers and outages. Control
//! paths (`/sandbox/...`) are never faulted, so a fault can always be
//! cleared.
//!
//! With a `probability`, each matching call fails with that chance instead
//! (until `count` faults were injected), drawn from a generator seeded with
//! `seed`: the same seed and the same sequence of matching calls give the
//! same faults, so a chaos run repeats. The generator (SplitMix64) is
//! written out here so its sequence never changes with a dependency.

use crate::error::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FaultMode {
    /// Runs, then the answer is replaced by an empty 500.
    LostAnswer,
    /// Refused with 503 before anything runs.
    Unavailable,
    /// Refused with 429 and Retry-After before anything runs.
    RateLimited,
    /// Runs; the answer is held 60 s, then the connection closes.
    Timeout,
    /// Runs and answers after the delay.
    Delay { ms: u64 },
}

impl FaultMode {
    pub fn parse(mode: &str) -> Option<Self> {
        match mode {
            "500_no_body" => Some(FaultMode::LostAnswer),
            "503" => Some(FaultMode::Unavailable),
            "429" => Some(FaultMode::RateLimited),
            "timeout" => Some(FaultMode::Timeout),
            other => {
                let ms = other.strip_prefix("delay_ms:")?.parse().ok()?;
                (ms <= 120_000).then_some(FaultMode::Delay { ms })
            }
        }
    }

    pub fn name(self) -> String {
        match self {
            FaultMode::LostAnswer => "500_no_body".to_owned(),
            FaultMode::Unavailable => "503".to_owned(),
            FaultMode::RateLimited => "429".to_owned(),
            FaultMode::Timeout => "timeout".to_owned(),
            FaultMode::Delay { ms } => format!("delay_ms:{ms}"),
        }
    }
}

/// The most faults one armed fault may inject: a plain one, and one with a
/// probability (a chaos run over many calls).
pub const MAX_COUNT: u32 = 1_000;
pub const MAX_CHANCE_COUNT: u32 = 1_000_000;

/// A seeded chance: whether each matching event is hit.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Chance {
    pub probability: f64,
    pub seed: u64,
    /// The generator's state: the seed, moved on by every draw.
    state: u64,
}

impl Chance {
    /// A chance from the request's fields (the seed drawn at random when
    /// none is given, and shown in the list so the run can be repeated).
    pub fn new(probability: Option<f64>, seed: Option<u64>) -> Result<Option<Self>, ApiError> {
        let Some(probability) = probability else {
            if seed.is_some() {
                return Err(ApiError::field("seed", "goes with a probability"));
            }
            return Ok(None);
        };
        if !(probability > 0.0 && probability <= 1.0) {
            return Err(ApiError::field("probability", "must be above 0 and at most 1"));
        }
        let seed = seed.unwrap_or_else(rand::random);
        Ok(Some(Chance {
            probability,
            seed,
            state: seed,
        }))
    }

    /// SplitMix64's next value.
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Draws once: true when this event is hit.
    pub fn hits(&mut self) -> bool {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        unit < self.probability
    }
}

/// Checks a fault's `count` (higher with a probability).
pub fn check_count(count: u32, chance: &Option<Chance>) -> Result<(), ApiError> {
    let max = if chance.is_some() {
        MAX_CHANCE_COUNT
    } else {
        MAX_COUNT
    };
    if count == 0 || count > max {
        return Err(ApiError::field(
            "count",
            format!("must be from 1 to {max} (up to {MAX_CHANCE_COUNT} with a probability)"),
        ));
    }
    Ok(())
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Fault {
    /// Uppercase method, or `*` for any.
    pub method: String,
    pub path_prefix: String,
    pub mode: FaultMode,
    pub remaining: u32,
    /// Each matching call is hit with this chance; without it, every one.
    #[serde(default)]
    pub chance: Option<Chance>,
}

impl Fault {
    pub fn new(method: &str, path_prefix: &str, mode: &str, count: u32) -> Result<Self, ApiError> {
        Self::with_chance(method, path_prefix, mode, count, None)
    }

    pub fn with_chance(
        method: &str,
        path_prefix: &str,
        mode: &str,
        count: u32,
        chance: Option<Chance>,
    ) -> Result<Self, ApiError> {
        let method = method.trim().to_ascii_uppercase();
        if !matches!(method.as_str(), "*" | "GET" | "POST" | "PUT" | "DELETE" | "PATCH") {
            return Err(ApiError::field(
                "method",
                "must be GET, POST, PUT, DELETE, PATCH or *",
            ));
        }
        if !path_prefix.starts_with('/') {
            return Err(ApiError::field("path_prefix", "must start with '/'"));
        }
        let mode = FaultMode::parse(mode).ok_or_else(|| {
            ApiError::field(
                "mode",
                "must be 500_no_body, 503, 429, timeout or delay_ms:N (N up to 120000)",
            )
        })?;
        check_count(count, &chance)?;
        Ok(Fault {
            method,
            path_prefix: path_prefix.to_owned(),
            mode,
            remaining: count,
            chance,
        })
    }
}

/// Takes one use of the first fault that matches, if any.
pub fn take_matching(faults: &mut Vec<Fault>, method: &str, path: &str) -> Option<FaultMode> {
    if path.starts_with("/sandbox/") {
        return None;
    }
    let index = faults.iter_mut().position(|f| {
        (f.method == "*" || f.method.eq_ignore_ascii_case(method))
            && path.starts_with(&f.path_prefix)
            && f.chance.as_mut().is_none_or(Chance::hits)
    })?;
    let mode = faults[index].mode;
    faults[index].remaining -= 1;
    if faults[index].remaining == 0 {
        faults.remove(index);
    }
    Some(mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_fires_count_times_on_matching_calls_only() {
        let mut faults = vec![Fault::new("post", "/api/addresses", "503", 2).unwrap()];
        assert_eq!(take_matching(&mut faults, "GET", "/api/addresses"), None);
        assert_eq!(take_matching(&mut faults, "POST", "/api/balances"), None);
        assert_eq!(
            take_matching(&mut faults, "POST", "/api/addresses"),
            Some(FaultMode::Unavailable)
        );
        assert_eq!(
            take_matching(&mut faults, "POST", "/api/addresses/validate"),
            Some(FaultMode::Unavailable)
        );
        assert_eq!(take_matching(&mut faults, "POST", "/api/addresses"), None);
    }

    #[test]
    fn control_paths_are_never_faulted() {
        let mut faults = vec![Fault::new("*", "/", "503", 5).unwrap()];
        assert_eq!(take_matching(&mut faults, "DELETE", "/sandbox/faults"), None);
    }

    #[test]
    fn a_seeded_chance_repeats_and_hits_about_as_often_as_asked() {
        let run = |seed| {
            let mut faults = vec![Fault::with_chance(
                "*",
                "/api",
                "503",
                1_000,
                Chance::new(Some(0.3), Some(seed)).unwrap(),
            )
            .unwrap()];
            (0..1_000)
                .map(|_| take_matching(&mut faults, "GET", "/api/balances").is_some())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(42), run(42), "the same seed, the same faults");
        assert_ne!(run(42), run(43));
        let hits = run(42).into_iter().filter(|h| *h).count();
        assert!((240..360).contains(&hits), "{hits} hits of 1,000 at 0.3");
        assert!(Chance::new(Some(0.0), None).is_err());
        assert!(Chance::new(Some(1.5), None).is_err());
        assert!(Chance::new(None, Some(1)).is_err());
    }

    #[test]
    fn modes_parse() {
        assert_eq!(
            FaultMode::parse("delay_ms:250"),
            Some(FaultMode::Delay { ms: 250 })
        );
        assert_eq!(FaultMode::parse("delay_ms:x"), None);
        assert_eq!(FaultMode::parse("boom"), None);
        assert!(Fault::new("GET", "api", "503", 1).is_err());
        assert!(Fault::new("GET", "/api", "503", 0).is_err());
    }
}
