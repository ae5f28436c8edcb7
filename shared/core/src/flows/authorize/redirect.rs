//! The redirects back to the client's registered `redirect_uri`: an error (docs/decisions.md,
//! "Authorization code flow": `error_code`, `error_description`, `state`, plus RFC 6749's own
//! `error`) or a code. Both carry the issuer as `iss` (RFC 9207), so a client talking to several
//! servers can tell which one answered.

use url::Url;

use crate::domain::Geolocation;
use crate::errors::{ErrorCode, OAuthError};

/// An error sent back to an address already matched against the client's registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorRedirect {
    redirect_uri: String,
    state: Option<String>,
    error: &'static str,
    error_code: Option<u16>,
    description: &'static str,
}

impl ErrorRedirect {
    pub fn from_code(redirect_uri: &str, state: Option<&str>, code: ErrorCode) -> Self {
        Self {
            redirect_uri: redirect_uri.to_owned(),
            state: state.map(str::to_owned),
            error: code.error().as_str(),
            error_code: Some(code.code()),
            description: code.description(),
        }
    }

    /// The same code with RFC 6749 §4.1.2.1's own `error` where the catalogue's names a token
    /// endpoint error: code 60's `invalid_grant` is no authorization response error, so a client
    /// may not use the flow (`unauthorized_client`), a `response_type` other than `code`
    /// (`unsupported_response_type`, or `invalid_request` when there is none) and a PKCE
    /// challenge that is not S256 (`invalid_request`) keep code 60 under the RFC's names.
    pub fn with_error(self, error: &'static str) -> Self {
        Self { error, ..self }
    }

    /// The user pressed "Deny": RFC 6749 §4.1.2.1's `error=access_denied`, with the catalogue's
    /// code 12 ("Logon Denied"). The catalogue has no row for a user's own refusal and the
    /// contract requires an `error_code`; 12 is the one whose meaning ("this sign-in was
    /// refused") fits. 59 would tell the client it is disabled, and a new number would be a row
    /// the specification's table does not have. The description says what really happened.
    pub fn denied(redirect_uri: &str, state: Option<&str>) -> Self {
        Self {
            redirect_uri: redirect_uri.to_owned(),
            state: state.map(str::to_owned),
            error: OAuthError::AccessDenied.as_str(),
            error_code: Some(ErrorCode::LogonDenied.code()),
            description: "the user denied the request",
        }
    }

    /// `prompt=none` (OpenID Connect Core §3.1.2.6) without a live sign-in session that may
    /// answer it (none, `prompt=login` or `max_age` asking for a fresh sign-in, a hint naming
    /// another user): OpenID Connect's own `error=login_required`, which clients handle by
    /// retrying with a page. No `error_code`: `prompt=none` is a valid prompt, and the
    /// catalogue's 119 says it is not.
    pub fn login_required(redirect_uri: &str, state: Option<&str>) -> Self {
        Self {
            redirect_uri: redirect_uri.to_owned(),
            state: state.map(str::to_owned),
            error: "login_required",
            error_code: None,
            description: "prompt=none: the user is not signed in",
        }
    }

    /// `prompt=none` for a signed-in user who has not approved these scopes for this client:
    /// `error=consent_required`, without an `error_code` like `login_required`.
    pub fn consent_required(redirect_uri: &str, state: Option<&str>) -> Self {
        Self {
            redirect_uri: redirect_uri.to_owned(),
            state: state.map(str::to_owned),
            error: "consent_required",
            error_code: None,
            description: "prompt=none: the user has not approved this request",
        }
    }

    /// An OpenID Connect refusal outside the error catalogue (OpenID Connect Core §3.1.2.6,
    /// e.g. `request_not_supported`): `error` and a description, no `error_code`.
    pub fn openid(
        redirect_uri: &str,
        state: Option<&str>,
        error: &'static str,
        description: &'static str,
    ) -> Self {
        Self {
            redirect_uri: redirect_uri.to_owned(),
            state: state.map(str::to_owned),
            error,
            error_code: None,
            description,
        }
    }

    pub fn error_code(&self) -> Option<u16> {
        self.error_code
    }

    pub fn error(&self) -> &'static str {
        self.error
    }

    pub fn description(&self) -> &'static str {
        self.description
    }

    /// The `Location` header value; `issuer` is this deployment's geolocation.
    pub fn location(&self, issuer: &Geolocation) -> String {
        let code = self.error_code.map(|c| c.to_string());
        let mut pairs = vec![
            ("error", self.error),
            ("error_description", self.description),
        ];
        if let Some(code) = code.as_deref() {
            pairs.push(("error_code", code));
        }
        if let Some(state) = self.state.as_deref() {
            pairs.push(("state", state));
        }
        pairs.push(("iss", issuer.as_str()));
        append_query(&self.redirect_uri, &pairs)
    }
}

/// The success redirect: `redirect_uri?code=...&geolocation=<base URL>&state=...&iss=<base URL>`
/// (the geolocation is the issuer).
pub fn code_location(
    redirect_uri: &str,
    code: &str,
    geolocation: &Geolocation,
    state: Option<&str>,
) -> String {
    let mut pairs = vec![("code", code), ("geolocation", geolocation.as_str())];
    if let Some(state) = state {
        pairs.push(("state", state));
    }
    pairs.push(("iss", geolocation.as_str()));
    append_query(redirect_uri, &pairs)
}

/// Adds to the registered URI's own query, which RFC 6749 §3.1.2 says must be kept.
fn append_query(redirect_uri: &str, pairs: &[(&str, &str)]) -> String {
    match Url::parse(redirect_uri) {
        Ok(mut url) => {
            url.query_pairs_mut().extend_pairs(pairs);
            url.to_string()
        }
        // Registered URIs are validated at registration; this only keeps a bad one from
        // panicking the page.
        Err(_) => {
            let separator = if redirect_uri.contains('?') { '&' } else { '?' };
            let query = serde_urlencoded::to_string(pairs).unwrap_or_default();
            format!("{redirect_uri}{separator}{query}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(location: &str) -> Vec<(String, String)> {
        Url::parse(location)
            .unwrap()
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    fn issuer() -> Geolocation {
        Geolocation::parse("https://us.api.example.com").unwrap()
    }

    #[test]
    fn error_redirect_carries_code_description_and_state() {
        let redirect = ErrorRedirect::from_code(
            "https://app.example/cb?keep=1",
            Some("xyz"),
            ErrorCode::DisplayInvalid,
        );
        let pairs = query(&redirect.location(&issuer()));
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("keep"), Some("1"));
        assert_eq!(get("error"), Some("invalid_request"));
        assert_eq!(get("error_code"), Some("118"));
        assert_eq!(get("error_description"), Some("display is invalid"));
        assert_eq!(get("state"), Some("xyz"));
        assert_eq!(get("iss"), Some("https://us.api.example.com"));
    }

    #[test]
    fn denial_says_access_denied() {
        let location = ErrorRedirect::denied("https://app.example/cb", None).location(&issuer());
        assert!(location.starts_with("https://app.example/cb?error=access_denied&"));
        assert!(!location.contains("state="));
    }

    #[test]
    fn code_redirect() {
        let location = code_location("http://127.0.0.1:8080/cb", "abc", &issuer(), Some("s t"));
        assert_eq!(
            location,
            "http://127.0.0.1:8080/cb?code=abc&geolocation=https%3A%2F%2Fus.api.example.com&state=s+t\
             &iss=https%3A%2F%2Fus.api.example.com"
        );
    }
}
