//! Injected faults (`POST /sandbox/faults`): the next `count` calls of the
//! company that match a method and path prefix fail in a chosen way, so
//! integrators can test their handling of lost answers and outages. Control
//! paths (`/sandbox/...`) are never faulted, so a fault can always be
//! cleared.

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

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Fault {
    /// Uppercase method, or `*` for any.
    pub method: String,
    pub path_prefix: String,
    pub mode: FaultMode,
    pub remaining: u32,
}

impl Fault {
    pub fn new(method: &str, path_prefix: &str, mode: &str, count: u32) -> Result<Self, ApiError> {
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
        if count == 0 || count > 1000 {
            return Err(ApiError::field("count", "must be from 1 to 1000"));
        }
        Ok(Fault {
            method,
            path_prefix: path_prefix.to_owned(),
            mode,
            remaining: count,
        })
    }
}

/// Takes one use of the first fault that matches, if any.
pub fn take_matching(faults: &mut Vec<Fault>, method: &str, path: &str) -> Option<FaultMode> {
    if path.starts_with("/sandbox/") {
        return None;
    }
    let index = faults.iter().position(|f| {
        (f.method == "*" || f.method.eq_ignore_ascii_case(method)) && path.starts_with(&f.path_prefix)
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
