//! `htu` against the request's URL (RFC 9449 §4.3 item 9): both without query and fragment,
//! compared after RFC 3986 §6.2.2-3 normalisation: scheme and host case, default ports and dot
//! segments (the `url` crate's parser), and percent-encoding in the path (`path_normalised`:
//! unreserved characters decoded, the hex digits of the other escapes in upper case).

use url::Url;

/// The URL without query and fragment, normalised; `None` if it is not an absolute http(s) URL.
fn normalised(text: &str) -> Option<Url> {
    let mut url = Url::parse(text).ok()?;
    if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
        return None;
    }
    url.set_query(None);
    url.set_fragment(None);
    let path = path_normalised(url.path());
    url.set_path(&path);
    Some(url)
}

/// RFC 3986 §6.2.2.1-2: `%6F` is `o`, `%2f` is `%2F`; an escape of a reserved character stays
/// one, since decoding it would change the path's meaning.
fn path_normalised(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = String::with_capacity(path.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match escaped {
            Some(byte) if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) => {
                out.push(char::from(byte));
                i += 3;
            }
            Some(byte) => {
                out.push_str(&format!("%{byte:02X}"));
                i += 3;
            }
            None => {
                // `path` is valid UTF-8 and we only ever skip whole ASCII escapes.
                let c = path[i..].chars().next().unwrap_or_default();
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
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
            "https://us.api.example.com/oauth2/v0/t%6Fken",
            "https://us.api.example.com/%6Fauth2/v0/%74%6F%6B%65%6E",
        ] {
            assert!(same_url(htu, TOKEN), "{htu}");
        }
        assert!(same_url(
            "http://127.0.0.1:80/v0/token",
            "http://127.0.0.1/v0/token"
        ));
        assert!(same_url(
            "https://x.example/a%2fb",
            "https://x.example/a%2Fb"
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
            "https://us.api.example.com/oauth2%2Fv0/token",
            "https://us.api.example.com/oauth2/v0/token%",
            "/oauth2/v0/token",
            "ftp://us.api.example.com/oauth2/v0/token",
            "",
        ] {
            assert!(!same_url(htu, TOKEN), "{htu}");
        }
    }
}
