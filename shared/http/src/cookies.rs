//! The pages' cookies: the one place a `Set-Cookie` header is written (`infra/check-cookies.sh`
//! refuses one anywhere else) and the request's cookies read. Each cookie is built with the
//! `cookie` crate (axum-extra's jar is built on it) from what core names: its value and, for the
//! ones core defines, its name, path and lifetime.
//!
//! Whether a cookie is `Secure` is decided once, by [`Jar::for_site`]: wherever the service is
//! served over HTTPS; only the local server on plain-HTTP loopback goes without (browsers treat
//! loopback as secure, so `__Host-session` keeps its name and `Secure` there too).

use axum::response::Response;
use cookie::time::Duration;
use cookie::{Cookie, SameSite};
use http::{header, HeaderMap, HeaderValue};

use crate::domain::SessionLimits;
use crate::flows::account::{ACCOUNT_PATH, SIGN_IN_NONCE_COOKIE, SIGN_IN_NONCE_TTL_SECONDS};
use crate::flows::authorize::{PENDING_COOKIE_NAME, PENDING_COOKIE_PATH, PENDING_TTL_SECONDS};
use crate::flows::device::{DEVICE_NONCE_COOKIE, DEVICE_NONCE_TTL_SECONDS, DEVICE_PATH};
use crate::flows::sessions::SESSION_COOKIE_NAME;
use crate::services::Services;

/// The value of the request's cookie `name`.
pub fn read<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|cookies| cookies.split(';'))
        .filter_map(|cookie| cookie.trim().split_once('='))
        .find(|(found, _)| *found == name)
        .map(|(_, value)| value)
}

/// The cookies one answer sets, in order.
#[derive(Debug)]
pub struct Jar {
    secure: bool,
    set: Vec<Cookie<'static>>,
}

impl Jar {
    /// An empty jar for this deployment: `Secure` cookies unless it is served over plain HTTP.
    pub fn for_site(services: &Services) -> Self {
        Self {
            secure: services.geolocation().is_https(),
            set: Vec::new(),
        }
    }

    /// A cookie of this site: `HttpOnly`, `SameSite=Lax` (never sent on a cross-site POST; the
    /// forms' CSRF tokens are the real protection), for `path`, for `max_age` seconds.
    fn add(&mut self, name: &'static str, value: String, path: &'static str, max_age: i64) {
        let cookie = Cookie::build((name, value))
            .path(path)
            .max_age(Duration::seconds(max_age))
            .http_only(true)
            .same_site(SameSite::Lax)
            .secure(self.secure)
            .build();
        self.set.push(cookie);
    }

    /// The sign-in session's cookie. `__Host-` needs `Secure`, `Path=/` and no `Domain`, so no
    /// other host or path can set or shadow it. It outlives no session: `Max-Age` is the
    /// absolute limit.
    pub fn session(mut self, value: &str, limits: SessionLimits) -> Self {
        self.add(
            SESSION_COOKIE_NAME,
            value.to_owned(),
            "/",
            limits.max_seconds,
        );
        self.set.last_mut().expect("just added").set_secure(true);
        self
    }

    /// Removes the session's cookie (a sign-out).
    pub fn end_session(mut self) -> Self {
        self.add(SESSION_COOKIE_NAME, String::new(), "/", 0);
        self.set.last_mut().expect("just added").set_secure(true);
        self
    }

    /// The authorize page's sealed pending request.
    pub fn pending(mut self, sealed: &str) -> Self {
        let (name, path, ttl) = (
            PENDING_COOKIE_NAME,
            PENDING_COOKIE_PATH,
            PENDING_TTL_SECONDS,
        );
        self.add(name, sealed.to_owned(), path, ttl);
        self
    }

    /// Removes the pending request once the flow is over (approve or deny).
    pub fn end_pending(mut self) -> Self {
        self.add(PENDING_COOKIE_NAME, String::new(), PENDING_COOKIE_PATH, 0);
        self
    }

    /// The account page's sign-in nonce, sent to that page only.
    pub fn account_nonce(mut self, nonce: &str) -> Self {
        let ttl = SIGN_IN_NONCE_TTL_SECONDS;
        self.add(SIGN_IN_NONCE_COOKIE, nonce.to_owned(), ACCOUNT_PATH, ttl);
        self
    }

    /// The device page's pre-sign-in nonce, sent to that page only.
    pub fn device_nonce(mut self, nonce: &str) -> Self {
        let ttl = DEVICE_NONCE_TTL_SECONDS;
        self.add(DEVICE_NONCE_COOKIE, nonce.to_owned(), DEVICE_PATH, ttl);
        self
    }

    /// These cookies, then `later`'s.
    pub fn and(mut self, later: Jar) -> Self {
        self.set.extend(later.set);
        self
    }

    /// Writes the cookies onto `response`, each its own `Set-Cookie` header.
    pub fn apply(self, response: &mut Response) {
        for cookie in self.set {
            // Names, paths and values are fixed text and base64url: always a valid header.
            if let Ok(value) = HeaderValue::from_str(&cookie.to_string()) {
                response.headers_mut().append(header::SET_COOKIE, value);
            }
        }
    }

    /// The `Set-Cookie` values, for tests.
    #[cfg(test)]
    fn values(&self) -> Vec<String> {
        self.set.iter().map(|cookie| cookie.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jar(secure: bool) -> Jar {
        Jar {
            secure,
            set: Vec::new(),
        }
    }

    fn attributes(value: &str) -> Vec<&str> {
        let mut parts: Vec<&str> = value.split("; ").collect();
        parts.sort_unstable();
        parts
    }

    #[test]
    fn the_session_cookie_is_host_only_secure_and_not_sent_cross_site() {
        let values = jar(false)
            .session("v", SessionLimits::DEFAULT)
            .end_session()
            .values();
        assert_eq!(
            attributes(&values[0]),
            [
                "HttpOnly",
                "Max-Age=86400",
                "Path=/",
                "SameSite=Lax",
                "Secure",
                "__Host-session=v"
            ]
        );
        assert!(!values[0].contains("Domain"));
        assert!(values[1].starts_with("__Host-session=;"), "{}", values[1]);
        assert!(values[1].contains("Max-Age=0"));
    }

    #[test]
    fn page_cookies_are_secure_on_https_only_and_kept_to_their_page() {
        let values = jar(true).pending("sealed").end_pending().values();
        assert_eq!(
            attributes(&values[0]),
            [
                "HttpOnly",
                "Max-Age=600",
                "Path=/oauth2/v0/authorize",
                "SameSite=Lax",
                "Secure",
                "authorize_pending=sealed"
            ]
        );
        assert!(values[1].contains("Max-Age=0"));
        let local = jar(false).device_nonce("n").account_nonce("m").values();
        assert!(!local[0].contains("Secure"), "{}", local[0]);
        assert!(local[0].contains("Path=/oauth2/v0/device"));
        assert!(local[1].contains("Path=/oauth2/v0/account"));
    }

    #[test]
    fn a_cookie_is_read_by_its_exact_name() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a_b=1; authorize_pending=sealed; x=2"),
        );
        assert_eq!(read(&headers, "authorize_pending"), Some("sealed"));
        assert_eq!(read(&headers, "a"), None);
    }
}
