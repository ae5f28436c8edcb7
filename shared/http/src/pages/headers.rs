//! The response headers every page carries (docs/decisions.md, "Authorization code flow").
//!
//! The stylesheet is inlined and allowed by its SHA-256 hash rather than served from a route:
//! one request per page, nothing more to route on three deployments, and the policy still
//! forbids every other inline style. Scripts: only files from the service's own origin (the
//! passkey script), never inline code or `eval`; its requests go to the same origin only.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;
use url::Url;

use super::STYLESHEET;

pub const CONTENT_TYPE_HTML: &str = "text/html; charset=utf-8";

/// `'sha256-…'` of the inlined stylesheet, as CSP Level 2 spells it.
fn stylesheet_source() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| {
        format!(
            "'sha256-{}'",
            STANDARD.encode(Sha256::digest(STYLESHEET.as_bytes()))
        )
    })
}

/// The security headers of a page, as (name, value) pairs.
///
/// `form_targets`: where a page's forms' redirects may end besides `'self'`: the client's
/// registered address on pages whose form ends in a redirect to it (sign-in and consent), a
/// scheme (`https:`) or origins of company identity providers on sign-in pages. Browsers apply
/// `form-action` to the redirects after a form submission too, so these must be listed. Empty
/// for the error page.
pub fn security_headers(form_targets: &[String]) -> Vec<(&'static str, String)> {
    let mut form_action = String::from("'self'");
    for source in form_targets.iter().filter_map(|target| source_of(target)) {
        form_action.push(' ');
        form_action.push_str(&source);
    }
    let policy = format!(
        "default-src 'none'; style-src {}; script-src 'self'; connect-src 'self'; form-action {form_action}; frame-ancestors 'none'; base-uri 'none'",
        stylesheet_source()
    );
    vec![
        ("content-type", CONTENT_TYPE_HTML.to_owned()),
        ("content-security-policy", policy),
        ("x-frame-options", "DENY".to_owned()),
        ("cache-control", "no-store".to_owned()),
        ("referrer-policy", "no-referrer".to_owned()),
        ("x-content-type-options", "nosniff".to_owned()),
    ]
}

/// A scheme source (`https:`) as it is, or the origin of a URL.
fn source_of(target: &str) -> Option<String> {
    if target == "https:" {
        return Some(target.to_owned());
    }
    origin_of(target)
}

/// `scheme://host[:port]` of an absolute http(s) URL; anything else adds nothing.
fn origin_of(uri: &str) -> Option<String> {
    let url = Url::parse(uri).ok()?;
    matches!(url.scheme(), "http" | "https").then(|| url.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header<'a>(headers: &'a [(&'static str, String)], name: &str) -> &'a str {
        headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
            .unwrap()
    }

    #[test]
    fn policy_allows_the_stylesheet_by_hash_and_only_our_own_scripts() {
        let headers = security_headers(&["https://app.example:8443/cb?x=1".to_owned()]);
        let csp = header(&headers, "content-security-policy");
        assert!(
            csp.starts_with("default-src 'none'; style-src 'sha256-"),
            "{csp}"
        );
        assert!(
            !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
            "{csp}"
        );
        assert!(
            csp.contains("; script-src 'self'; connect-src 'self';"),
            "{csp}"
        );
        assert!(
            csp.contains("form-action 'self' https://app.example:8443;"),
            "{csp}"
        );
        assert!(csp.contains("frame-ancestors 'none'"));
        assert_eq!(header(&headers, "x-frame-options"), "DENY");
        assert_eq!(header(&headers, "cache-control"), "no-store");
        assert_eq!(header(&headers, "referrer-policy"), "no-referrer");
    }

    #[test]
    fn the_error_page_allows_forms_to_itself_only() {
        let headers = security_headers(&[]);
        let csp = header(&headers, "content-security-policy");
        assert!(csp.contains("form-action 'self';"), "{csp}");
        assert_eq!(
            header(
                &security_headers(&["urn:x".to_owned()]),
                "content-security-policy"
            ),
            csp
        );
    }
}
