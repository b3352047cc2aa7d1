//! Rules for connections, as plain functions.

/// Normalizes a base URL: absolute http(s), no credentials, query or
/// fragment, no trailing slash.
pub fn normalize_base_url(raw: &str) -> Result<String, String> {
    let url = reqwest::Url::parse(raw.trim())
        .map_err(|_| "Enter an absolute URL such as https://api.example.com.".to_owned())?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err("The base URL must start with https:// (or http:// for a local test server).".to_owned());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "Leave credentials out of the URL; enter them in the client id and secret fields.".to_owned(),
        );
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("The base URL can't have a query or fragment.".to_owned());
    }
    if url.host_str().is_none() {
        return Err("The base URL needs a host.".to_owned());
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// A base URL is allowed when it equals an allow-listed one or lies under
/// it at a path boundary (`https://a.example/api` allows
/// `https://a.example/api/v2`, not `https://a.example/apiary`).
pub fn is_allowed(base_url: &str, allow_list: &[String]) -> bool {
    allow_list.iter().any(|allowed| {
        base_url == allowed
            || base_url
                .strip_prefix(allowed.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_and_refuses_what_would_mislead() {
        assert_eq!(
            normalize_base_url("https://api.example.com/").unwrap(),
            "https://api.example.com"
        );
        assert_eq!(
            normalize_base_url(" https://api.example.com/v2/ ").unwrap(),
            "https://api.example.com/v2"
        );
        assert!(normalize_base_url("ftp://api.example.com").is_err());
        assert!(normalize_base_url("https://user:pw@api.example.com").is_err());
        assert!(normalize_base_url("https://api.example.com/?x=1").is_err());
        assert!(normalize_base_url("api.example.com").is_err());
    }

    #[test]
    fn allow_list_matches_at_path_boundaries_only() {
        let list = vec![
            "https://api.example.com".to_owned(),
            "https://b.example.com/api".to_owned(),
        ];
        assert!(is_allowed("https://api.example.com", &list));
        assert!(is_allowed("https://api.example.com/v2", &list));
        assert!(!is_allowed("https://api.example.com.evil.test", &list));
        assert!(!is_allowed("https://b.example.com/apiary", &list));
        assert!(!is_allowed("http://169.254.169.254", &list));
    }
}
