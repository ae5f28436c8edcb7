//! Company identity providers (docs/decisions.md, "Company identity providers: what is
//! stored"): a company's connections to its own OpenID Connect or SAML 2.0 IdPs, the links from
//! an upstream subject to one of the company's users, and the sign-ins sent to an IdP that have
//! not come back yet.
//!
//! What must be read back but never shown (an upstream client secret, a PKCE verifier, where
//! the browser continues) is held as a [`SealedSecret`]: `core` seals it with a key derived from
//! the deployment's server secret, as it seals TOTP secrets; this layer only keeps the bytes.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::clock::UnixTime;
use crate::ids::{IdpId, PrincipalId};
use crate::secrets::TokenHash;

/// How long a browser has between leaving for the IdP and coming back: a user who must type a
/// password and a second factor there takes minutes, not hours.
pub const UPSTREAM_REQUEST_TTL_SECONDS: UnixTime = 600;

/// The most domains one IdP claims: each is an item written in the IdP's one transaction
/// (DynamoDB allows 100), and home-realm discovery needs only the few a company mails from.
pub const MAX_IDP_DOMAINS: usize = 20;

/// An upstream subject's key (issuer and subject) is a DynamoDB sort key, at most 1024 bytes.
pub const MAX_UPSTREAM_SUBJECT_BYTES: usize = 1000;

/// Sealed bytes (already encrypted by the caller), kept as text. `Debug` never shows them, so
/// that a record holding one may be logged.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SealedSecret(String);

impl SealedSecret {
    pub fn new(sealed: impl Into<String>) -> Self {
        Self(sealed.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SealedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SealedSecret(..)")
    }
}

/// Whether a company's users may sign in otherwise than through one of its IdPs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SsoPolicy {
    #[default]
    Optional,
    /// Only through an IdP, except for users marked for local sign-in (break-glass).
    Required,
}

impl SsoPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }

    pub fn is_required(self) -> bool {
        self == Self::Required
    }
}

/// How a first sign-in finds the user to link when no `externalId` matches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkBy {
    /// The company's user with the (verified) email the IdP reported.
    #[default]
    Email,
    None,
}

impl LinkBy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Email => "email",
            Self::None => "none",
        }
    }
}

/// How we authenticate at an OpenID Provider's token endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenEndpointAuth {
    #[default]
    ClientSecretBasic,
    /// Only when the IdP supports nothing else.
    ClientSecretPost,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OidcConnection {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: SealedSecret,
    pub scopes: Vec<String>,
    #[serde(default)]
    pub token_endpoint_auth: TokenEndpointAuth,
}

/// What a SAML IdP's metadata said, as read when it was added or last refreshed, and our own
/// keys for it (one service provider per connection, so that rolling one IdP's keys touches no
/// other).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SamlConnection {
    pub entity_id: String,
    /// The metadata document as received (XML), re-read when certificates or endpoints are
    /// needed.
    pub metadata: String,
    pub metadata_url: Option<String>,
    #[serde(default)]
    pub allow_idp_initiated: bool,
    pub email_attribute: Option<String>,
    /// Our signing key (`AuthnRequest`, `LogoutRequest`, `LogoutResponse`): PKCS#8, sealed.
    pub sp_signing_key: SealedSecret,
    /// Its self-signed certificate, base64 DER, as our metadata publishes it.
    pub sp_signing_certificate: String,
    /// The key the IdP encrypts assertions to: PKCS#8, sealed.
    pub sp_encryption_key: SealedSecret,
    pub sp_encryption_certificate: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "protocol", rename_all = "snake_case")]
pub enum IdpProtocol {
    Oidc(OidcConnection),
    Saml(SamlConnection),
}

/// A DNS name an IdP signs in: lower case, no trailing dot, at least two labels of letters,
/// digits and hyphens (an internationalised name in its `xn--` form).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct IdpDomain(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidDomains {
    #[error("`{0}` is not a domain name")]
    Malformed(String),
    #[error("`{0}` is listed twice")]
    Repeated(String),
    #[error("at most {MAX_IDP_DOMAINS} domains")]
    TooMany,
}

impl IdpDomain {
    pub fn parse(text: &str) -> Result<Self, InvalidDomains> {
        let name = text.trim().trim_end_matches('.').to_ascii_lowercase();
        let label_ok = |label: &str| {
            (1..=63).contains(&label.len())
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        };
        if name.len() > 253 || !name.contains('.') || !name.split('.').all(label_ok) {
            return Err(InvalidDomains::Malformed(text.trim().to_owned()));
        }
        Ok(Self(name))
    }

    /// The domain of a login as typed on a sign-in page (`alice@Acme.example`), if it has one.
    pub fn of_login(login: &str) -> Option<Self> {
        let (_, domain) = login.trim().rsplit_once('@')?;
        Self::parse(domain).ok()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for IdpDomain {
    type Error = InvalidDomains;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<IdpDomain> for String {
    fn from(value: IdpDomain) -> Self {
        value.0
    }
}

/// An IdP's domains: each valid, none twice, at most [`MAX_IDP_DOMAINS`], in the order given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<String>", into = "Vec<String>")]
pub struct IdpDomains(Vec<IdpDomain>);

impl IdpDomains {
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<Self, InvalidDomains> {
        if names.len() > MAX_IDP_DOMAINS {
            return Err(InvalidDomains::TooMany);
        }
        let mut domains: Vec<IdpDomain> = Vec::with_capacity(names.len());
        for name in names {
            let domain = IdpDomain::parse(name.as_ref())?;
            if domains.contains(&domain) {
                return Err(InvalidDomains::Repeated(domain.0));
            }
            domains.push(domain);
        }
        Ok(Self(domains))
    }

    pub fn as_slice(&self) -> &[IdpDomain] {
        &self.0
    }
}

impl TryFrom<Vec<String>> for IdpDomains {
    type Error = InvalidDomains;
    fn try_from(value: Vec<String>) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<IdpDomains> for Vec<String> {
    fn from(value: IdpDomains) -> Self {
        value.0.into_iter().map(String::from).collect()
    }
}

/// A company's connection to one of its identity providers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdentityProvider {
    pub id: IdpId,
    pub company_id: PrincipalId,
    /// What the sign-in page's button says ("Sign in with Acme").
    pub name: String,
    #[serde(flatten)]
    pub protocol: IdpProtocol,
    /// Logins of these domains are sent to this IdP (home-realm discovery).
    #[serde(default)]
    pub domains: IdpDomains,
    #[serde(default)]
    pub link_by: LinkBy,
    /// Whether a first sign-in that links no one creates a user of the company.
    #[serde(default = "just_in_time_default")]
    pub jit: bool,
    /// Whether a sign-in here counts as two factors even when the IdP did not report `mfa`.
    #[serde(default)]
    pub trust_mfa: bool,
    /// Whether the IdP may present ID-JAG assertions for its users.
    #[serde(default)]
    pub id_jag: bool,
    pub created_at: UnixTime,
}

fn just_in_time_default() -> bool {
    true
}

/// Who the IdP says signed in: for OpenID Connect (`iss`, `sub`), for SAML (the IdP's entity
/// id, the NameID). Its [`key`](Self::key) names it among the links of one IdP.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UpstreamSubject {
    pub issuer: String,
    pub subject: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the upstream issuer or subject is empty, too long or not printable")]
pub struct InvalidUpstreamSubject;

impl UpstreamSubject {
    /// The issuer is a URL or a URI, so it has no whitespace, which makes the first space of
    /// the key the boundary; the subject is any printable text.
    pub fn new(issuer: &str, subject: &str) -> Result<Self, InvalidUpstreamSubject> {
        let issuer_ok = !issuer.is_empty() && !issuer.chars().any(|c| c.is_whitespace());
        let subject_ok = !subject.is_empty() && !subject.chars().any(char::is_control);
        if !issuer_ok
            || !subject_ok
            || issuer.len() + 1 + subject.len() > MAX_UPSTREAM_SUBJECT_BYTES
        {
            return Err(InvalidUpstreamSubject);
        }
        Ok(Self {
            issuer: issuer.to_owned(),
            subject: subject.to_owned(),
        })
    }

    pub fn key(&self) -> String {
        format!("{} {}", self.issuer, self.subject)
    }
}

/// An upstream subject linked to a user of the IdP's company. Written once: the link decides
/// every later sign-in, and it never moves to another user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FederationLink {
    pub idp_id: IdpId,
    pub subject: UpstreamSubject,
    pub user_id: PrincipalId,
    pub company_id: PrincipalId,
    pub linked_at: UnixTime,
}

/// A sign-in sent to an IdP and not back yet: stored under the digest of the `state` (OIDC) or
/// `RelayState` (SAML) the browser carries, taken by the first answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingUpstreamRequest {
    pub state_hash: TokenHash,
    pub idp_id: IdpId,
    /// Sent in the authorization request, so not secret; compared with the ID token's.
    pub nonce: String,
    /// Sealed, though it lives minutes and is useless without the upstream code: with the code
    /// (which passes through the browser) it redeems a sign-in, so it is kept like the client
    /// secret that goes with it.
    pub pkce_verifier: SealedSecret,
    /// Where the original request continues (consent, a code, a device's approval), sealed by
    /// the caller and opaque here.
    pub continuation: SealedSecret,
    pub created_at: UnixTime,
    /// The TTL attribute; the request is refused from this second on.
    pub expires_at: UnixTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_are_folded_checked_and_never_repeated() {
        let domains = IdpDomains::parse(&[" Acme.EXAMPLE. ", "xn--bcher-kva.example"]).unwrap();
        let names: Vec<&str> = domains.as_slice().iter().map(IdpDomain::as_str).collect();
        assert_eq!(names, ["acme.example", "xn--bcher-kva.example"]);
        for bad in [
            "localhost",
            "a..example",
            "-a.example",
            "a_b.example",
            "bücher.example",
        ] {
            assert!(IdpDomain::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            IdpDomains::parse(&["a.example", "A.example"]),
            Err(InvalidDomains::Repeated("a.example".to_owned()))
        );
        let many: Vec<String> = (0..=MAX_IDP_DOMAINS)
            .map(|i| format!("d{i}.example"))
            .collect();
        assert_eq!(IdpDomains::parse(&many), Err(InvalidDomains::TooMany));
        assert!(serde_json::from_str::<IdpDomains>(r#"["a.example","a.example"]"#).is_err());
    }

    #[test]
    fn a_logins_domain_is_after_its_last_at() {
        assert_eq!(
            IdpDomain::of_login("first@x@Acme.Example").map(String::from),
            Some("acme.example".to_owned())
        );
        assert_eq!(IdpDomain::of_login("alice"), None);
    }

    #[test]
    fn upstream_subjects_are_keyed_unambiguously() {
        let subject = UpstreamSubject::new("https://idp.example", "a b").unwrap();
        assert_eq!(subject.key(), "https://idp.example a b");
        assert!(UpstreamSubject::new("https://idp .example", "x").is_err());
        assert!(UpstreamSubject::new("urn:idp", "").is_err());
        assert!(UpstreamSubject::new("urn:idp", &"x".repeat(MAX_UPSTREAM_SUBJECT_BYTES)).is_err());
    }

    #[test]
    fn secrets_never_print_and_defaults_hold() {
        let json = r#"{"id":"0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f6",
            "company_id":"0e8f3c4a-1b2c-4d5e-8f90-a1b2c3d4e5f7","name":"Acme",
            "protocol":"oidc","issuer":"https://idp.example","client_id":"c",
            "client_secret":"sealed-bytes","scopes":["openid"],"created_at":1}"#;
        let idp: IdentityProvider = serde_json::from_str(json).unwrap();
        assert!(!format!("{idp:?}").contains("sealed-bytes"));
        assert_eq!(
            (idp.link_by, idp.jit, idp.trust_mfa),
            (LinkBy::Email, true, false)
        );
        let IdpProtocol::Oidc(oidc) = &idp.protocol else {
            panic!("an OIDC IdP")
        };
        assert_eq!(
            oidc.token_endpoint_auth,
            TokenEndpointAuth::ClientSecretBasic
        );
        let again: IdentityProvider =
            serde_json::from_value(serde_json::to_value(&idp).unwrap()).unwrap();
        assert_eq!(again, idp);
    }
}
