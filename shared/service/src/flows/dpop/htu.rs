//! `htu` against the request's URL (RFC 9449 §4.3 item 9): both without query and fragment,
//! compared after RFC 3986 §6.2.2-3 normalisation (scheme and host case, default ports, percent
//! encoding and dot segments), which the `url` crate's parser applies.

use url::Url;

/// The URL without query and fragment, normalised; `None` if it is not an absolute http(s) URL.
fn normalised(text: &str) -> Option<Url> {
    let mut url = Url::parse(text).ok()?;
    if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
        return None;
    }
    url.set_query(None);
    url.set_fragment(None);
    Some(url)
}

/// Whether the proof's `htu` names `expected` (this deployment's URL of the request).
pub fn same_url(htu: &str, expected: &str) -> bool {
    match (normalised(htu), normalised(expected)) {
        (Some(htu), Some(expected)) => htu == expected,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::same_url;

    const TOKEN: &str = "https://us.api.example.com/oauth2/v0/token";

    #[test]
    fn case_default_ports_query_and_fragment_do_not_matter() {
        for htu in [
            TOKEN,
            "HTTPS://US.API.EXAMPLE.COM/oauth2/v0/token",
            "https://us.api.example.com:443/oauth2/v0/token",
            "https://us.api.example.com/oauth2/v0/token?x=1",
            "https://us.api.example.com/oauth2/v0/token#f",
            "https://us.api.example.com/oauth2/v0/./token",
        ] {
            assert!(same_url(htu, TOKEN), "{htu}");
        }
        assert!(same_url(
            "http://127.0.0.1:80/v0/token",
            "http://127.0.0.1/v0/token"
        ));
    }

    #[test]
    fn another_url_is_refused() {
        for htu in [
            "http://us.api.example.com/oauth2/v0/token",
            "https://us.api.example.com:8443/oauth2/v0/token",
            "https://eu.api.example.com/oauth2/v0/token",
            "https://us.api.example.com/oauth2/v0/userinfo",
            "https://us.api.example.com/OAUTH2/v0/token",
            "https://us.api.example.com/oauth2/v0/token/",
            "/oauth2/v0/token",
            "ftp://us.api.example.com/oauth2/v0/token",
            "",
        ] {
            assert!(!same_url(htu, TOKEN), "{htu}");
        }
    }
}
