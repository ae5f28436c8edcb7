//! Initial access tokens of dynamic client registration (RFC 7591 §3): bearer credentials an
//! administrator hands out so that only their holders may register clients. Only a digest is
//! kept, until the token's expiry.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::secrets::TokenHash;

#[async_trait]
pub trait RegistrationTokenStore: Send + Sync {
    /// Keeps the digest of a new initial access token until `expires_at`.
    async fn put_registration_token(
        &self,
        hash: &TokenHash,
        expires_at: UnixTime,
    ) -> StoreResult<()>;

    /// Whether a token with this digest was created and has not expired at `now`.
    async fn registration_token_valid(&self, hash: &TokenHash, now: UnixTime) -> StoreResult<bool>;
}
