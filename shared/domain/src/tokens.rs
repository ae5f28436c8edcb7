//! Issued credentials: token families with their refresh tokens, access-token records, and
//! company auth tokens.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{
    ClientId, FamilyId, Geolocation, IdpId, PrincipalId, PrincipalType, Resource, Scopes,
    SessionId, TokenId,
};
use crate::amr::AuthMethod;
use crate::clock::UnixTime;
use crate::secrets::TokenHash;

/// Access tokens live one hour (spec part 8).
pub const ACCESS_TOKEN_TTL_SECONDS: i64 = 3600;
/// Company auth tokens live 24 hours and may be reused within them (spec part 8).
pub const AUTH_TOKEN_TTL_SECONDS: i64 = 86_400;

/// Everything that descends from one grant. Exactly one refresh token, `current_token`, is live
/// at a time; rotation replaces it under a condition on its old value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Family {
    pub id: FamilyId,
    pub client_id: ClientId,
    pub principal_type: PrincipalType,
    pub principal_id: PrincipalId,
    pub scopes: Scopes,
    /// The principal's home deployment; refreshing elsewhere answers code 16.
    pub geolocation: Geolocation,
    pub current_token: TokenHash,
    /// 0 for the first refresh token, +1 per rotation.
    pub generation: u32,
    pub created_at: UnixTime,
    /// Expiry of the current refresh token; rotation renews it.
    pub expires_at: UnixTime,
    pub revoked_at: Option<UnixTime>,
    /// The RFC 7638 thumbprint of the key the family's refresh tokens are bound to (DPoP,
    /// RFC 9449 §5): a refresh needs a proof by that key. Families started without a proof,
    /// and those written before the field existed, are unbound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jkt: Option<String>,
    /// When the principal signed in to start the family (a password, a one-time password, the
    /// sign-in page): every ID token of the family carries it as `auth_time` (OpenID Connect
    /// Core 12.2: a refreshed ID token keeps the original sign-in's). `None` for families no
    /// sign-in started (the old-token exchange) and those written before the field existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<UnixTime>,
    /// The sign-in session the family was started in (the ID token's `sid`), when it was
    /// started from the pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<SessionId>,
    /// How the principal signed in to start the family (RFC 8176): every ID token of the family
    /// carries it as `amr`, as it carries `auth_time`. Empty when no page sign-in started it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<AuthMethod>,
    /// The company identity provider the principal signed in through to start the family:
    /// every ID token of the family carries it as `idp`, as it carries `amr`. `None` for a
    /// sign-in here, for families no page sign-in started, and for those written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp: Option<IdpId>,
    /// The resources (RFC 8707) granted when the family started: each refresh may name some of
    /// them, never another. Empty: tokens for this deployment, as before resource indicators.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
    /// When the family last rotated (both backends; `None` for families last rotated before it
    /// was kept, whose rotated token's record carries [`RefreshTokenRecord::rotated_at`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotated_at: Option<UnixTime>,
    /// The `jti` of the access token minted by the rotation that made `current_token` current:
    /// a request whose write's outcome was lost reads it back to tell its own rotation from a
    /// concurrent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotated_by: Option<TokenId>,
    /// The DPoP key `current_token` is bound to by the rotation that made it
    /// ([`RefreshTokenRecord::jkt`]): a named token has no record to keep it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_jkt: Option<String>,
    /// The generation from which the family's refresh tokens are bound to `current_jkt`: set by
    /// the first rotation with a DPoP proof in a family started without one (both backends).
    /// A named token ([`crate::RefreshTokenName`]) has no record of its own, so this is what
    /// tells whether an older one was bound (those before stay unbound: replaying one is reuse).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_from: Option<u32>,
}

impl Family {
    pub fn is_live(&self, now: UnixTime) -> bool {
        self.revoked_at.is_none() && self.expires_at > now
    }
}

/// One refresh token ever issued in a family. Kept after rotation so that a replay of a rotated
/// token is recognised (RFC 9700 §4.14.2) rather than looking unknown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefreshTokenRecord {
    pub token_hash: TokenHash,
    pub family_id: FamilyId,
    pub client_id: ClientId,
    pub generation: u32,
    pub issued_at: UnixTime,
    pub expires_at: UnixTime,
    /// Set when this token was rotated away.
    pub rotated_at: Option<UnixTime>,
    /// The RFC 7638 thumbprint of the DPoP key this token is bound to: refreshing it needs a
    /// proof by that key. A rotation made with a proof binds its successor to the proof's key,
    /// even in a family started without one (a token request with a DPoP proof gets refresh
    /// tokens bound to its key); the family's own binding ([`Family::jkt`]) holds for every token.
    /// The tokens issued before such a rotation stay unbound, so a replay of one is still
    /// reuse, which revokes the family.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jkt: Option<String>,
}

/// The persisted side of an access token (its `jti`), for revocation and introspection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessTokenRecord {
    pub jti: TokenId,
    pub client_id: ClientId,
    pub principal_type: PrincipalType,
    /// The `sub` claim: the principal, or the client itself for application tokens.
    pub subject: Uuid,
    /// `None` for application tokens, which belong to no family.
    pub family_id: Option<FamilyId>,
    pub scopes: Scopes,
    pub issued_at: UnixTime,
    pub expires_at: UnixTime,
    /// Set by the store on read when the token or its family has been revoked.
    pub revoked: bool,
    /// The DPoP key the token is bound to (its `cnf.jkt`): presented only with a proof by that
    /// key. `None`: a bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jkt: Option<String>,
    /// The token's `aud` (RFC 8707): the resources it was issued for. Empty: this deployment
    /// (its geolocation), as every token without `resource`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audience: Vec<Resource>,
    /// RFC 8693 §4.1: for a token made by a token exchange with an actor token, who acts for
    /// the subject (its `act` claim), nesting the subject token's own `act`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act: Option<Actor>,
    /// The client's `client_id` when it is a URL (a client known by its metadata document,
    /// [`crate::Client::document_url`]): what the token's `client_id` claim, its ID token's
    /// `aud` and introspection show, while `client_id` holds the id derived from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_url: Option<String>,
    /// RFC 9068 §2.2.1: when the user signed in (the family's [`Family::auth_time`]); `None`
    /// for application tokens and families no sign-in started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<UnixTime>,
    /// RFC 9068 §2.2.1: how the user signed in (the family's [`Family::amr`]), so that a
    /// resource server can tell a password alone from two factors. Empty: not a user's sign-in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<AuthMethod>,
    /// For a token made by a token exchange from one of this service's access tokens: the
    /// `jti` of each access token it was exchanged from, the chain's root first, its subject
    /// last. It reads revoked when any of them does (or is gone), so revoking a subject ends
    /// what was exchanged from it, however far down, family or none. At most
    /// [`MAX_EXCHANGE_CHAIN`] long: each read of the token reads these too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exchanged_from: Vec<TokenId>,
}

/// How many exchanges a chain may hold: a token exchanged from this many others is not
/// exchanged again, so that reading a token never reads more than this many others.
pub const MAX_EXCHANGE_CHAIN: usize = 4;

impl AccessTokenRecord {
    /// The `client_id` the token shows: the client's URL, or its UUID.
    pub fn wire_client_id(&self) -> String {
        self.client_url
            .clone()
            .unwrap_or_else(|| self.client_id.to_string())
    }
}

/// An `act` claim (RFC 8693 §4.1): the actor, and whoever acted before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    pub sub: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act: Option<Box<Actor>>,
}

/// A company auth token (spec 4.4, 5.4): bound to one company and one client, reusable for 24 h.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthToken {
    pub token_hash: TokenHash,
    pub company_id: PrincipalId,
    pub client_id: ClientId,
    /// The administrator who obtained it.
    pub issued_by: PrincipalId,
    pub issued_at: UnixTime,
    pub expires_at: UnixTime,
}
