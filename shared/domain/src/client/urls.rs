//! The addresses a client registration names: redirect URIs, post-logout redirect URIs and the
//! Connect URL, each a place the browser is sent with a credential or `state` in the query; and
//! the back-channel logout URI, where the server itself POSTs logout tokens. All are https only,
//! except on loopback hosts.

use url::{Host, Url};

/// Why a redirect URI is refused at registration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidRedirectUri {
    #[error("redirect URI must be an absolute https URL without fragment: {0}")]
    Malformed(String),
    #[error(
        "redirect URI must use https, because the redirect to it carries the authorization code \
         (http is allowed only for loopback hosts: localhost, 127.0.0.0/8, [::1]): {0}"
    )]
    NotHttps(String),
}

/// Checks a redirect URI at registration (RFC 9700 §2.1: exact match, https or loopback).
pub fn check_redirect_uri(uri: &str) -> Result<(), InvalidRedirectUri> {
    check_connect_url(uri).map_err(|e| match e {
        InvalidConnectUrl::Malformed(u) => InvalidRedirectUri::Malformed(u),
        InvalidConnectUrl::NotHttps(u) => InvalidRedirectUri::NotHttps(u),
    })
}

/// Checks a post-logout redirect URI at registration, by the redirect URIs' rules: the browser
/// is sent there with the relying party's `state`.
pub fn check_post_logout_redirect_uri(uri: &str) -> Result<(), InvalidRedirectUri> {
    check_redirect_uri(uri)
}

/// Why a back-channel logout URI is refused at registration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidBackchannelLogoutUri {
    #[error("back-channel logout URI must be an absolute https URL without fragment: {0}")]
    Malformed(String),
    #[error(
        "back-channel logout URI must use https, because the logout token is sent to it (http is \
         allowed only for loopback hosts: localhost, 127.0.0.0/8, [::1]): {0}"
    )]
    NotHttps(String),
}

/// Checks a back-channel logout URI at registration (Back-Channel Logout 1.0 §2.2: absolute,
/// no fragment). Which addresses the server will actually call is decided at each delivery,
/// after resolving the name (`token_core::outbound`): a name can point anywhere later, so a
/// check here could only be advisory.
pub fn check_backchannel_logout_uri(uri: &str) -> Result<(), InvalidBackchannelLogoutUri> {
    check_connect_url(uri).map_err(|e| match e {
        InvalidConnectUrl::Malformed(u) => InvalidBackchannelLogoutUri::Malformed(u),
        InvalidConnectUrl::NotHttps(u) => InvalidBackchannelLogoutUri::NotHttps(u),
    })
}

/// Why a Connect URL is refused. The URL is echoed: it is configuration, not a credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidConnectUrl {
    #[error("connect URL must be an absolute https URL without fragment: {0}")]
    Malformed(String),
    #[error(
        "connect URL must use https, because the redirect to it carries the company auth token \
         (http is allowed only for loopback hosts: localhost, 127.0.0.0/8, [::1]): {0}"
    )]
    NotHttps(String),
}

/// Checks a Connect URL (spec 4.5): the company auth-token endpoint answers 301 to it with the
/// auth token in its query, so anything but https would send that token in clear. Plain http is
/// allowed only for loopback hosts, where the request never leaves the machine (local
/// development).
pub fn check_connect_url(url: &str) -> Result<(), InvalidConnectUrl> {
    let parsed = match Url::parse(url) {
        Ok(parsed) if parsed.fragment().is_none() && parsed.has_host() => parsed,
        _ => return Err(InvalidConnectUrl::Malformed(url.to_owned())),
    };
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(parsed.host()) => Ok(()),
        "http" => Err(InvalidConnectUrl::NotHttps(url.to_owned())),
        _ => Err(InvalidConnectUrl::Malformed(url.to_owned())),
    }
}

fn is_loopback(host: Option<Host<&str>>) -> bool {
    match host {
        // The URL parser has lower-cased the name already.
        Some(Host::Domain(name)) => name == "localhost",
        Some(Host::Ipv4(address)) => address.is_loopback(),
        Some(Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_is_accepted_anywhere() {
        for url in [
            "https://crm.example.com/connect?tenant=1",
            "https://203.0.113.7:8443/c",
            "HTTPS://CRM.EXAMPLE.COM/",
        ] {
            assert_eq!(check_connect_url(url), Ok(()), "{url}");
        }
    }

    #[test]
    fn http_is_accepted_only_for_loopback_hosts() {
        for url in [
            "http://localhost:3000/connect",
            "http://LOCALHOST/",
            "http://127.0.0.1:8080/c",
            "http://127.8.9.10/c",
            "http://[::1]:8080/c",
        ] {
            assert_eq!(check_connect_url(url), Ok(()), "{url}");
        }
        for url in [
            "http://crm.example.com/connect",
            "http://10.0.0.1/c",
            "http://128.0.0.1/c",
            "http://[::ffff:127.0.0.1]/c",
            "http://localhost.example.com/c",
            "http://0.0.0.0/c",
        ] {
            assert_eq!(
                check_connect_url(url),
                Err(InvalidConnectUrl::NotHttps(url.to_owned())),
                "{url}"
            );
        }
    }

    #[test]
    fn other_schemes_relative_urls_and_fragments_are_malformed() {
        for url in [
            "ftp://x",
            "/connect",
            "https://crm.example.com/c#frag",
            "mailto:a@b.example",
            "javascript:alert(1)",
        ] {
            assert_eq!(
                check_connect_url(url),
                Err(InvalidConnectUrl::Malformed(url.to_owned())),
                "{url}"
            );
        }
    }

    #[test]
    fn backchannel_logout_uris_follow_the_same_rules() {
        for uri in [
            "https://rp.example.com/backchannel?tenant=1",
            "http://127.0.0.1:9000/logout",
            "http://[::1]/logout",
        ] {
            assert_eq!(check_backchannel_logout_uri(uri), Ok(()), "{uri}");
        }
        assert_eq!(
            check_backchannel_logout_uri("http://rp.example.com/logout"),
            Err(InvalidBackchannelLogoutUri::NotHttps(
                "http://rp.example.com/logout".into()
            ))
        );
        for uri in [
            "https://rp.example.com/logout#x",
            "/logout",
            "ftp://rp.example.com/",
        ] {
            assert_eq!(
                check_backchannel_logout_uri(uri),
                Err(InvalidBackchannelLogoutUri::Malformed(uri.to_owned())),
                "{uri}"
            );
        }
    }

    #[test]
    fn the_refusal_says_why() {
        let message = check_connect_url("http://crm.example.com/c")
            .unwrap_err()
            .to_string();
        assert!(message.contains("must use https"), "{message}");
        assert!(message.contains("auth token"), "{message}");
        assert!(message.contains("loopback"), "{message}");
    }
}
