//! The checks of each registration member, by the rules for self-registered clients: the same
//! address rules as `tokenctl`'s options, and nothing a self-registered client may not be.

use std::collections::BTreeSet;

use super::super::{
    check_backchannel_logout_uri, check_connect_url, check_post_logout_redirect_uri,
    check_redirect_uri, GrantType, InvalidRedirectUri,
};
use super::{RegisteredAuthMethod, RegistrationError, MAX_REDIRECT_URIS};

pub(super) fn check_redirect_uris(
    uris: Option<Vec<String>>,
) -> Result<Vec<String>, RegistrationError> {
    let uris = uris.unwrap_or_default();
    if uris.is_empty() {
        return Err(RegistrationError::redirect("redirect_uris is required"));
    }
    if uris.len() > MAX_REDIRECT_URIS {
        return Err(RegistrationError::redirect(format!(
            "at most {MAX_REDIRECT_URIS} redirect_uris"
        )));
    }
    for uri in &uris {
        // Redirect URIs are matched exactly (RFC 9700 §2.1): a `*` would be read as a pattern
        // by a client that expects one, and never match here.
        if uri.contains('*') {
            return Err(RegistrationError::redirect(format!(
                "redirect URI must not contain a wildcard: {uri}"
            )));
        }
        check_redirect_uri(uri).map_err(|e| match e {
            InvalidRedirectUri::Malformed(_) | InvalidRedirectUri::NotHttps(_) => {
                RegistrationError::redirect(e.to_string())
            }
        })?;
    }
    Ok(uris)
}

/// The `tokenctl clients create --post-logout-redirect-uri` rules: https (or loopback http), no
/// fragment, matched exactly (so no wildcard), at most as many as redirect URIs.
pub(super) fn check_post_logout_redirect_uris(
    uris: Option<Vec<String>>,
) -> Result<Vec<String>, RegistrationError> {
    let uris = uris.unwrap_or_default();
    if uris.len() > MAX_REDIRECT_URIS {
        return Err(RegistrationError::metadata(format!(
            "at most {MAX_REDIRECT_URIS} post_logout_redirect_uris"
        )));
    }
    for uri in &uris {
        if uri.contains('*') {
            return Err(RegistrationError::metadata(format!(
                "post_logout_redirect_uris must not contain a wildcard: {uri}"
            )));
        }
        check_post_logout_redirect_uri(uri)
            .map_err(|e| RegistrationError::metadata(format!("post_logout_redirect_uris: {e}")))?;
    }
    Ok(uris)
}

/// The `--backchannel-logout-uri` rules; where it may point at delivery time is the outbound
/// fetcher's to check (public addresses only, unless the deployment allows the host).
pub(super) fn check_backchannel_logout(
    uri: Option<String>,
) -> Result<Option<String>, RegistrationError> {
    match uri {
        Some(uri) => match check_backchannel_logout_uri(&uri) {
            Ok(()) => Ok(Some(uri)),
            Err(e) => Err(RegistrationError::metadata(format!(
                "backchannel_logout_uri: {e}"
            ))),
        },
        None => Ok(None),
    }
}

/// `jwks_uri` (RFC 7591 §2) for `private_key_jwt` only, never beside a `jwks`: https, or http
/// on loopback (where it may point is the outbound fetcher's to check, at use).
pub(super) fn check_jwks_uri(
    auth_method: RegisteredAuthMethod,
    has_jwks: bool,
    uri: Option<String>,
) -> Result<Option<String>, RegistrationError> {
    let Some(uri) = uri else {
        return Ok(None);
    };
    if auth_method != RegisteredAuthMethod::PrivateKeyJwt {
        return Err(RegistrationError::metadata(
            "jwks_uri is only accepted with token_endpoint_auth_method private_key_jwt",
        ));
    }
    if has_jwks {
        return Err(RegistrationError::metadata(
            "jwks and jwks_uri must not both be present",
        ));
    }
    match check_connect_url(&uri) {
        Ok(()) => Ok(Some(uri)),
        Err(_) => Err(RegistrationError::metadata(
            "jwks_uri must be an https URL without fragment",
        )),
    }
}

pub(super) fn check_grant_types(
    grants: Option<Vec<String>>,
) -> Result<BTreeSet<GrantType>, RegistrationError> {
    let Some(grants) = grants else {
        return Ok(BTreeSet::from([GrantType::AuthorizationCode]));
    };
    let mut checked = BTreeSet::new();
    for text in &grants {
        match text.as_str() {
            "authorization_code" => checked.insert(GrantType::AuthorizationCode),
            "refresh_token" => checked.insert(GrantType::RefreshToken),
            other => {
                return Err(RegistrationError::metadata(format!(
                    "grant_types may only name authorization_code and refresh_token, not {other}"
                )))
            }
        };
    }
    if !checked.contains(&GrantType::AuthorizationCode) {
        return Err(RegistrationError::metadata(
            "grant_types must include authorization_code",
        ));
    }
    Ok(checked)
}

pub(super) fn check_response_types(types: Option<Vec<String>>) -> Result<(), RegistrationError> {
    match types {
        Some(types) if types.iter().any(|t| t != "code") => Err(RegistrationError::metadata(
            "response_types may only name code",
        )),
        _ => Ok(()),
    }
}

/// `client_uri` and `logo_uri` are shown to users: https (or loopback http) only, so that a
/// `javascript:` or `data:` address never reaches the page.
pub(super) fn check_web_uri(
    member: &str,
    uri: Option<String>,
) -> Result<Option<String>, RegistrationError> {
    match uri {
        Some(uri) => match check_redirect_uri(&uri) {
            Ok(()) => Ok(Some(uri)),
            Err(_) => Err(RegistrationError::metadata(format!(
                "{member} must be an https URL"
            ))),
        },
        None => Ok(None),
    }
}

/// `policy_uri` and `tos_uri` are links on the consent page the user follows from their browser:
/// `https` only, so that neither a script nor a plain-text page is linked.
pub(super) fn check_https_uri(
    member: &str,
    uri: Option<String>,
) -> Result<Option<String>, RegistrationError> {
    match uri {
        Some(uri) => match url::Url::parse(&uri) {
            Ok(url) if url.scheme() == "https" && url.has_host() && url.fragment().is_none() => {
                Ok(Some(uri))
            }
            _ => Err(RegistrationError::metadata(format!(
                "{member} must be an https URL without fragment"
            ))),
        },
        None => Ok(None),
    }
}
