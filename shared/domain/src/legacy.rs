//! Records of the deprecated pre-2017 framework, kept only until they are exchanged.

use serde::{Deserialize, Serialize};

use super::{ClientId, ConsumerKey, FamilyId, PrincipalId, PrincipalType, Scopes};
use crate::clock::UnixTime;
use crate::secrets::TokenHash;

/// Links an old application's consumer key to the new OAuth 2.0 client that replaces it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyApp {
    pub consumer_key: ConsumerKey,
    pub client_id: ClientId,
    pub linked_at: UnixTime,
}

/// An imported old refresh token. Immutable once imported, so a re-import simply overwrites it
/// with the same content; which family it was exchanged for lives in [`LegacyExchange`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyToken {
    pub token_hash: TokenHash,
    pub consumer_key: ConsumerKey,
    /// `User` or `Company`.
    pub principal_type: PrincipalType,
    pub principal_id: PrincipalId,
    pub scopes: Scopes,
    /// A WSAdmin token may be exchanged for a company-level family (`returnType=companyToken`).
    pub wsadmin: bool,
    /// The company a WSAdmin token administers.
    pub company_id: Option<PrincipalId>,
    /// Absent: valid until exchanged.
    pub expires_at: Option<UnixTime>,
}

impl LegacyToken {
    pub fn is_expired(&self, now: UnixTime) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

/// Which family the latest exchange of a legacy token created. A repeated exchange replaces it
/// and revokes the previous family, so one old token never has two live families.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyExchange {
    pub token_hash: TokenHash,
    pub family_id: FamilyId,
    pub exchanged_at: UnixTime,
}
