//! Enterprise-managed authorization for agents (draft-ietf-oauth-identity-assertion-authz-grant,
//! "ID-JAG"; docs/decisions.md, "Identity assertion grants"): the names both roles share, and
//! the targets a client may ask this service, as the company's identity provider, to assert a
//! user to.

use serde::{Deserialize, Serialize};

use crate::clock::UnixTime;
use crate::{Resource, Scopes};

/// RFC 8693 token type of an ID-JAG: `requested_token_type` at our token exchange, and the
/// `issued_token_type` of its answer.
pub const ID_JAG_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// The JWS `typ` an ID-JAG carries, and the only one a redeemed assertion may carry: an ID token
/// or an access token signed by the same keys is never taken for one.
pub const ID_JAG_TYP: &str = "oauth-id-jag+jwt";

/// The draft's authorization grant profile, as the resource authorization server's metadata
/// names it (`authorization_grant_profiles_supported`).
pub const ID_JAG_GRANT_PROFILE: &str = "urn:ietf:params:oauth:grant-profile:id-jag";

/// How long an ID-JAG lives at most, issued or redeemed: it is a one-shot grant, used at once.
pub const ID_JAG_MAX_LIFETIME_SECONDS: UnixTime = 300;

/// The most targets one client may have: each is part of the client's record.
pub const MAX_ID_JAG_TARGETS: usize = 20;

/// An authorization server a client may ask ID-JAGs for (`tokenctl clients id-jag-targets add`):
/// its issuer, the client's id there, and what the assertion may name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdJagTarget {
    /// The target's issuer: the token exchange's `audience`, the ID-JAG's `aud`. Compared as
    /// written (RFC 8414 §2: an issuer is compared as a string).
    pub audience: String,
    /// The requesting client's `client_id` at the target: the ID-JAG's `client_id`.
    pub client_id: String,
    /// The resources an ID-JAG for this target may name. Empty: any the request names (the
    /// target checks its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
    /// The scopes an ID-JAG for this target may carry. `None`: any the request names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Scopes>,
}

impl IdJagTarget {
    /// Whether this target allows an assertion naming `resource` (none named: always).
    pub fn allows_resource(&self, resource: Option<&Resource>) -> bool {
        match resource {
            None => true,
            Some(resource) => self.resources.is_empty() || self.resources.contains(resource),
        }
    }

    /// Whether this target allows an assertion carrying `scopes`.
    pub fn allows_scopes(&self, scopes: &Scopes) -> bool {
        self.scopes
            .as_ref()
            .is_none_or(|allowed| scopes.is_subset_of(allowed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(resources: &[&str], scopes: Option<&str>) -> IdJagTarget {
        IdJagTarget {
            audience: "https://as.example".into(),
            client_id: "agent".into(),
            resources: resources
                .iter()
                .map(|r| Resource::parse(r).unwrap())
                .collect(),
            scopes: scopes.map(|s| Scopes::parse(s).unwrap()),
        }
    }

    #[test]
    fn a_target_bounds_what_it_lists_and_nothing_else() {
        let mcp = Resource::parse("https://mcp.example/mcp").unwrap();
        let other = Resource::parse("https://other.example").unwrap();
        let open = target(&[], None);
        assert!(open.allows_resource(Some(&other)) && open.allows_resource(None));
        assert!(open.allows_scopes(&Scopes::parse("anything").unwrap()));
        let bounded = target(&["https://mcp.example/mcp"], Some("tools:read tools:call"));
        assert!(bounded.allows_resource(Some(&mcp)) && !bounded.allows_resource(Some(&other)));
        assert!(bounded.allows_scopes(&Scopes::parse("tools:read").unwrap()));
        assert!(!bounded.allows_scopes(&Scopes::parse("tools:read admin").unwrap()));
    }

    #[test]
    fn stored_without_what_it_does_not_bound() {
        let json = serde_json::to_value(target(&[], None)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({ "audience": "https://as.example", "client_id": "agent" })
        );
        let back: IdJagTarget = serde_json::from_value(json).unwrap();
        assert_eq!(back, target(&[], None));
    }
}
