//! Authorization codes (RFC 6749 §4.1; docs/decisions.md, "Authorization code flow"): what the
//! consent screen hands the browser and the `authorization_code` grant redeems once.

use serde::{Deserialize, Serialize};

use super::{AuthMethod, ClientId, FamilyId, IdpId, PrincipalId, Resource, Scopes, SessionId};
use crate::clock::UnixTime;
use crate::secrets::TokenHash;

/// A code is good for five minutes (docs/decisions.md, "Authorization code flow"); the token
/// request follows the redirect within seconds, so a short window only costs a retry to a very slow
/// client.
pub const AUTHORIZATION_CODE_TTL_SECONDS: i64 = 300;

/// A code's lifetime under the FAPI 2.0 Security Profile (§5.3.2.1: at most 60 seconds).
pub const FAPI2_CODE_TTL_SECONDS: i64 = 60;

/// How long a redeemed code is remembered after its redemption: a second use within that time
/// (a replay, or a client retrying late) revokes the family the first use created.
pub const REDEEMED_CODE_RETENTION_SECONDS: i64 = 86_400;

/// The stored side of an authorization code. The code itself (256 random bits, URL-safe) is
/// shown once in the redirect; only its digest is kept, and it doubles as the lookup key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorizationCode {
    pub code_hash: TokenHash,
    pub client_id: ClientId,
    /// The exact `redirect_uri` of the authorize request; the token request must repeat it (104).
    pub redirect_uri: String,
    /// The user who signed in and approved.
    pub user_id: PrincipalId,
    pub scopes: Scopes,
    /// RFC 7636 S256 challenge (base64url of SHA-256 of the verifier), when one was sent.
    pub code_challenge: Option<String>,
    /// OpenID Connect `nonce`, copied into the ID token.
    pub nonce: Option<String>,
    pub issued_at: UnixTime,
    /// Until redeemed: the end of the code's validity. The redemption moves it to
    /// [`REDEEMED_CODE_RETENTION_SECONDS`] later, the record's TTL.
    pub expires_at: UnixTime,
    /// Set when the code is redeemed. The record stays until `expires_at` so that a second use
    /// is recognised and can revoke the family the first use created (RFC 6749 §4.1.2).
    pub redeemed_at: Option<UnixTime>,
    /// The family the redemption started, recorded right after it was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family_id: Option<FamilyId>,
    /// When the user signed in on the page that approved this code: the ID token's `auth_time`.
    /// Codes stored before the field existed read `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<UnixTime>,
    /// The sign-in session the code was approved in: the ID token's `sid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<SessionId>,
    /// How the user signed in then (RFC 8176): the ID token's `amr`. Empty in codes stored before it
    /// was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub amr: Vec<AuthMethod>,
    /// The company identity provider the user signed in through then: the ID token's `idp`.
    /// `None` for a sign-in here, and in codes stored before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp: Option<IdpId>,
    /// RFC 9449 §10: the thumbprint of the DPoP key the authorize request named; the token
    /// request redeeming the code must carry a proof by that key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_jkt: Option<String>,
    /// The resources (RFC 8707) the authorize request named and the user approved: the token
    /// request may narrow them, never add one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
}

impl AuthorizationCode {
    /// Unredeemed and unexpired. Expiry is checked on read: DynamoDB's TTL deletes late.
    pub fn is_redeemable(&self, now: UnixTime) -> bool {
        self.redeemed_at.is_none() && self.expires_at > now
    }
}

/// Why a token request may not redeem a code it names (the grant answers each with its
/// catalogue code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedemptionRefusal {
    /// Not the `redirect_uri` of the authorize request.
    RedirectUriMismatch,
    /// No verifier for the code's challenge, a wrong one, or one for a code issued without.
    VerifierMismatch,
}

impl AuthorizationCode {
    /// What the token request must repeat of the authorize request it continues: the same
    /// `redirect_uri` (RFC 6749 §4.1.3), and the verifier of the code's PKCE challenge if it has
    /// one (RFC 7636 §4.6), and no verifier for a code issued without a challenge (RFC 9700
    /// §4.8.2: a verifier there is a downgrade attempt, or an attacker injecting a code stolen
    /// from a flow without PKCE). The grant checks first that the code is redeemable, by this
    /// client.
    pub fn check_redemption(
        &self,
        redirect_uri: &str,
        code_verifier: Option<&str>,
    ) -> Result<(), RedemptionRefusal> {
        if self.redirect_uri != redirect_uri {
            return Err(RedemptionRefusal::RedirectUriMismatch);
        }
        let answered = match (&self.code_challenge, code_verifier) {
            (Some(challenge), verifier) => {
                crate::pkce::verify_s256(verifier.unwrap_or_default(), challenge)
            }
            (None, verifier) => verifier.is_none(),
        };
        if !answered {
            return Err(RedemptionRefusal::VerifierMismatch);
        }
        Ok(())
    }
}
