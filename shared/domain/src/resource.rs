//! Resource indicators (RFC 8707): the APIs a token is meant for. A request names them with
//! `resource` (repeatable); the access token's `aud` is then those resources instead of this
//! deployment. Which resources a client may name is the deployment's `RESOURCES` narrowed by the
//! client's own list ([`ResourcePolicy`]).

use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};
use url::{Host, Url};

/// The most resources one request may name: each is a value of every token's `aud`, so a
/// request cannot make tokens (and the records behind them) arbitrarily large.
pub const MAX_RESOURCES_PER_REQUEST: usize = 16;

/// The longest resource URI accepted, in bytes.
pub const MAX_RESOURCE_LENGTH: usize = 2048;

/// An absolute `http` or `https` URI without fragment, kept in its normal form: no dot segments,
/// lower-case scheme and host, no default port. That form is what the allow-list compares, so it
/// is also the `aud` a token carries: a resource server must never see a spelling
/// (`https://api.example.com/a/../mcp`) other than the one that was allowed (`/mcp`). Two
/// resources are the same when their parsed forms are: `https://API.example.com` names
/// `https://api.example.com/`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Resource {
    /// The normal form as shown and sent: an origin written without a path stays without the
    /// `/` the parser adds, as resource servers name themselves so.
    text: String,
    /// The parsed form, for comparisons.
    normalized: String,
    /// `https`, or `http` on a loopback host: what the deployment accepts when `RESOURCES` is
    /// empty.
    secure: bool,
}

/// Why a `resource` value is not a resource indicator (RFC 8707 §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InvalidResource {
    #[error("a resource must be an absolute URI")]
    NotAbsolute,
    #[error("a resource must not have a fragment")]
    Fragment,
    #[error("a resource must be an http or https URI with a host")]
    Scheme,
    #[error("a resource must be at most 2048 bytes")]
    TooLong,
}

impl Resource {
    pub fn parse(text: &str) -> Result<Self, InvalidResource> {
        if text.len() > MAX_RESOURCE_LENGTH {
            return Err(InvalidResource::TooLong);
        }
        // The URL parser would quietly drop what it cannot keep; a value with blanks or
        // control characters is no URI at all.
        if text.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(InvalidResource::NotAbsolute);
        }
        let url = Url::parse(text).map_err(|_| InvalidResource::NotAbsolute)?;
        if url.fragment().is_some() || text.contains('#') {
            return Err(InvalidResource::Fragment);
        }
        if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
            return Err(InvalidResource::Scheme);
        }
        let secure = url.scheme() == "https" || is_loopback(url.host());
        let normalized = url.to_string();
        let written_without_path =
            url.path() == "/" && url.query().is_none() && !text.ends_with('/');
        let text = match normalized.strip_suffix('/') {
            Some(origin) if written_without_path => origin.to_owned(),
            _ => normalized.clone(),
        };
        Ok(Self {
            text,
            normalized,
            secure,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `https`, or `http` on `localhost`, `127.0.0.0/8` or `[::1]` (RFC 8252's loopback).
    pub fn is_secure(&self) -> bool {
        self.secure
    }
}

fn is_loopback(host: Option<Host<&str>>) -> bool {
    match host {
        Some(Host::Domain(name)) => name == "localhost",
        Some(Host::Ipv4(address)) => address.is_loopback(),
        Some(Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    }
}

impl PartialEq for Resource {
    fn eq(&self, other: &Self) -> bool {
        self.normalized == other.normalized
    }
}

impl Eq for Resource {}

impl Hash for Resource {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.normalized.hash(state);
    }
}

impl TryFrom<String> for Resource {
    type Error = InvalidResource;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::parse(&text)
    }
}

impl From<Resource> for String {
    fn from(resource: Resource) -> Self {
        resource.text
    }
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// A request's `resource` values that may not be granted: malformed, too many, or not allowed.
/// All are RFC 8707's `invalid_target` (code 160).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TargetRefusal {
    #[error(transparent)]
    Invalid(#[from] InvalidResource),
    #[error("more than 16 resources")]
    TooMany,
    #[error("resource not allowed for this client")]
    NotAllowed,
}

/// The deployment's `RESOURCES`: empty, any secure resource (see [`Resource::is_secure`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourcePolicy {
    pub deployment: Vec<Resource>,
}

impl ResourcePolicy {
    /// `RESOURCES`: comma-separated resource URIs (blanks around each ignored).
    pub fn parse(text: &str) -> Result<Self, InvalidResource> {
        let deployment = text
            .split(',')
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(Resource::parse)
            .collect::<Result<_, _>>()?;
        Ok(Self { deployment })
    }

    /// Whether `client` (its `--resource` list; empty: every resource the deployment allows)
    /// may have a token for `resource`.
    pub fn allows(&self, client: &[Resource], resource: &Resource) -> bool {
        let deployment = if self.deployment.is_empty() {
            resource.is_secure()
        } else {
            self.deployment.contains(resource)
        };
        deployment && (client.is_empty() || client.contains(resource))
    }

    /// The resources a grant's request names, each allowed for the client: without `resource`,
    /// none (the token is for this deployment, as without resource indicators).
    pub fn requested(
        &self,
        client: &[Resource],
        values: &[String],
    ) -> Result<Vec<Resource>, TargetRefusal> {
        let requested = parse_all(values)?;
        if requested.iter().all(|r| self.allows(client, r)) {
            Ok(requested)
        } else {
            Err(TargetRefusal::NotAllowed)
        }
    }
}

/// The resources a request continuing a grant names (a code's redemption, a refresh, a device
/// code's poll), among those `granted`: without `resource`, all of them; a resource never
/// granted is refused, so a refresh may narrow the audience but never widen it.
pub fn narrowed(granted: &[Resource], values: &[String]) -> Result<Vec<Resource>, TargetRefusal> {
    let requested = parse_all(values)?;
    if requested.is_empty() {
        return Ok(granted.to_vec());
    }
    if requested.iter().all(|r| granted.contains(r)) {
        Ok(requested)
    } else {
        Err(TargetRefusal::NotAllowed)
    }
}

/// Each value parsed, repeats dropped (the first spelling kept), at most
/// [`MAX_RESOURCES_PER_REQUEST`].
fn parse_all(values: &[String]) -> Result<Vec<Resource>, TargetRefusal> {
    let mut resources: Vec<Resource> = Vec::new();
    for value in values {
        let resource = Resource::parse(value)?;
        if !resources.contains(&resource) {
            resources.push(resource);
        }
        if resources.len() > MAX_RESOURCES_PER_REQUEST {
            return Err(TargetRefusal::TooMany);
        }
    }
    Ok(resources)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> Resource {
        Resource::parse(text).unwrap()
    }

    fn strings(values: &[&str]) -> Vec<String> {
        values.iter().map(|v| (*v).to_owned()).collect()
    }

    #[test]
    fn absolute_http_uris_without_fragment_are_resources() {
        for text in [
            "https://api.example.com",
            "https://api.example.com/mcp",
            "https://api.example.com/v1?tenant=a",
            "http://localhost:3000/mcp",
            "http://10.0.0.1/api",
        ] {
            assert_eq!(Resource::parse(text).unwrap().as_str(), text);
        }
        for (text, refusal) in [
            ("/api", InvalidResource::NotAbsolute),
            ("api.example.com", InvalidResource::NotAbsolute),
            ("", InvalidResource::NotAbsolute),
            ("https://api.example.com/ x", InvalidResource::NotAbsolute),
            ("https://api.example.com/#", InvalidResource::Fragment),
            ("https://api.example.com/a#b", InvalidResource::Fragment),
            ("urn:example:api", InvalidResource::Scheme),
            ("ftp://api.example.com/", InvalidResource::Scheme),
            ("file:///etc/passwd", InvalidResource::Scheme),
        ] {
            assert_eq!(Resource::parse(text).err(), Some(refusal), "{text}");
        }
        let long = format!("https://api.example.com/{}", "a".repeat(2048));
        assert_eq!(Resource::parse(&long).err(), Some(InvalidResource::TooLong));
    }

    #[test]
    fn resources_compare_and_are_kept_in_their_normal_form() {
        assert_eq!(r("https://API.example.com"), r("https://api.example.com/"));
        assert_eq!(
            r("https://api.example.com:443/a"),
            r("https://api.example.com/a")
        );
        assert_ne!(
            r("https://api.example.com/a"),
            r("https://api.example.com/b")
        );
        let stored = serde_json::to_value(r("https://API.example.com")).unwrap();
        assert_eq!(stored, "https://api.example.com");
        let read: Resource = serde_json::from_value(stored).unwrap();
        assert_eq!(read.as_str(), "https://api.example.com");
        for (spelled, normal) in [
            (
                "https://api.example.com/a/../mcp",
                "https://api.example.com/mcp",
            ),
            (
                "https://api.example.com/./mcp",
                "https://api.example.com/mcp",
            ),
            (
                "HTTPS://API.Example.COM:443/mcp",
                "https://api.example.com/mcp",
            ),
            ("http://LOCALHOST:80/mcp", "http://localhost/mcp"),
            ("https://api.example.com/", "https://api.example.com/"),
            ("https://api.example.com/a/..", "https://api.example.com"),
            (
                "https://api.example.com:8443/v1?x=1",
                "https://api.example.com:8443/v1?x=1",
            ),
        ] {
            assert_eq!(r(spelled).as_str(), normal, "{spelled}");
            assert_eq!(r(spelled).to_string(), normal, "{spelled}");
        }
        assert_eq!(
            r("https://api.example.com/a/../mcp"),
            r("https://api.example.com/mcp")
        );
        assert!(serde_json::from_value::<Resource>("/relative".into()).is_err());
    }

    #[test]
    fn without_resources_the_deployment_allows_https_and_loopback_http() {
        let policy = ResourcePolicy::default();
        assert!(policy.allows(&[], &r("https://api.example.com/")));
        assert!(policy.allows(&[], &r("http://127.0.0.1:8080/mcp")));
        assert!(policy.allows(&[], &r("http://[::1]/mcp")));
        assert!(!policy.allows(&[], &r("http://api.example.com/")));
        assert!(!policy.allows(&[], &r("http://10.0.0.1/")));
    }

    #[test]
    fn the_deployment_list_then_the_client_list_narrow() {
        let policy =
            ResourcePolicy::parse(" https://a.example.com , https://b.example.com,").unwrap();
        assert_eq!(policy.deployment.len(), 2);
        assert!(policy.allows(&[], &r("https://a.example.com/")));
        assert!(!policy.allows(&[], &r("https://c.example.com/")));
        let client = [r("https://b.example.com")];
        assert!(policy.allows(&client, &r("https://b.example.com")));
        assert!(!policy.allows(&client, &r("https://a.example.com")));
        assert!(ResourcePolicy::parse("https://a.example.com,/x").is_err());
        assert_eq!(
            ResourcePolicy::parse("").unwrap(),
            ResourcePolicy::default()
        );
    }

    #[test]
    fn requests_are_parsed_deduplicated_and_bounded() {
        let policy = ResourcePolicy::default();
        let got = policy
            .requested(
                &[],
                &strings(&[
                    "https://a.example.com",
                    "https://A.example.com/",
                    "https://b.example.com",
                ]),
            )
            .unwrap();
        assert_eq!(
            got,
            vec![r("https://a.example.com"), r("https://b.example.com")]
        );
        assert_eq!(policy.requested(&[], &[]).unwrap(), Vec::<Resource>::new());
        assert_eq!(
            policy.requested(&[], &strings(&["https://a.example.com#x"])),
            Err(TargetRefusal::Invalid(InvalidResource::Fragment))
        );
        assert_eq!(
            policy.requested(&[], &strings(&["http://a.example.com"])),
            Err(TargetRefusal::NotAllowed)
        );
        let many: Vec<String> = (0..17)
            .map(|i| format!("https://{i}.example.com"))
            .collect();
        assert_eq!(policy.requested(&[], &many), Err(TargetRefusal::TooMany));
    }

    #[test]
    fn a_continued_grant_narrows_to_granted_resources_only() {
        let granted = [r("https://a.example.com"), r("https://b.example.com")];
        assert_eq!(narrowed(&granted, &[]).unwrap(), granted.to_vec());
        assert_eq!(
            narrowed(&granted, &strings(&["https://b.example.com/"])).unwrap(),
            vec![r("https://b.example.com/")]
        );
        assert_eq!(
            narrowed(&granted, &strings(&["https://c.example.com"])),
            Err(TargetRefusal::NotAllowed)
        );
        assert_eq!(
            narrowed(&[], &strings(&["https://a.example.com"])),
            Err(TargetRefusal::NotAllowed)
        );
    }
}
