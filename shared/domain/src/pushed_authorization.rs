//! Pushed authorization requests (RFC 9126): a client sends its authorization request's
//! parameters to the PAR endpoint, directly and authenticated, and the browser then carries only
//! a `request_uri` naming them. The `request_uri`'s random part is stored only as a SHA-256
//! digest; the record is taken (deleted) by its first use, by its own client, within its
//! lifetime.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::clock::UnixTime;
use crate::ids::ClientId;
use crate::secrets::TokenHash;

/// `expires_in` of the PAR response: a `request_uri` is meant to be used at once (RFC 9126 §2.2
/// suggests 5 to 600 seconds; the contract says 60).
pub const PUSHED_REQUEST_TTL_SECONDS: UnixTime = 60;

/// RFC 9126 §2.2's URN prefix of every `request_uri`, followed by the random part.
pub const REQUEST_URI_PREFIX: &str = "urn:ietf:params:oauth:request_uri:";

/// A pushed authorization request, as stored until it is used or expires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushedAuthorization {
    /// The digest of the `request_uri`'s random part.
    pub request_uri_hash: TokenHash,
    /// The client that pushed it: only this client may use it.
    pub client_id: ClientId,
    /// The authorization request's parameters, as checked at the push (a request object's
    /// claims in place of the body's parameters); the authorize endpoint checks them again.
    pub parameters: BTreeMap<String, String>,
    pub pushed_at: UnixTime,
    /// The TTL attribute; the record is refused from this second on.
    pub expires_at: UnixTime,
}

impl PushedAuthorization {
    /// The random part of a `request_uri` this service issued, or `None` for any other text.
    pub fn random_part(request_uri: &str) -> Option<&str> {
        request_uri
            .strip_prefix(REQUEST_URI_PREFIX)
            .filter(|rest| !rest.is_empty())
    }

    pub fn is_live(&self, now: UnixTime) -> bool {
        self.expires_at > now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_urn_has_a_random_part() {
        assert_eq!(
            PushedAuthorization::random_part("urn:ietf:params:oauth:request_uri:abc"),
            Some("abc")
        );
        for other in [
            "urn:ietf:params:oauth:request_uri:",
            "https://app.example/request.jwt",
            "abc",
        ] {
            assert_eq!(PushedAuthorization::random_part(other), None, "{other}");
        }
    }
}
