//! Authorization codes (docs/decisions.md, "Authorization code flow"): stored as a hash, redeemed
//! once, and remembered after redemption with the family the redemption started, so that a second
//! use can revoke it (RFC 6749 §4.1.2).

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::{AuthorizationCode, ClientId, FamilyId};
use crate::secrets::TokenHash;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeRedeemed {
    /// This call marked the code redeemed: the caller may issue tokens for it.
    Redeemed,
    /// The code was already redeemed, expired, unknown or issued to another client: nothing
    /// was written. Of concurrent redemptions of one code, all but one end here.
    NotRedeemable,
}

#[async_trait]
pub trait AuthorizationCodeStore: Send + Sync {
    async fn put_authorization_code(&self, code: &AuthorizationCode) -> StoreResult<()>;
    /// Returns redeemed codes too (reuse detection needs them) until `expires_at`, which the
    /// redemption moved to a day later; expired ones are absent.
    async fn get_authorization_code(
        &self,
        hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<AuthorizationCode>>;
    /// Marks the code redeemed at `now`, only if it is unredeemed, unexpired and was issued to
    /// `client_id`, and records the family the redemption started (for a later reuse to
    /// revoke), in one conditional write: a code is redeemed at most once, and never without
    /// its family. A refused code is used up with `family_id` `None`. The record is then kept
    /// until [`REDEEMED_CODE_RETENTION_SECONDS`] after `now` (its `expires_at` moves there).
    ///
    /// [`REDEEMED_CODE_RETENTION_SECONDS`]: crate::domain::REDEEMED_CODE_RETENTION_SECONDS
    ///
    /// Repeating a redemption that landed, with the same family, answers `Redeemed` again: the
    /// SDK resubmitting after a lost answer, or a read-back after a timeout, finds its own
    /// write instead of a competitor's.
    async fn redeem_authorization_code(
        &self,
        hash: &TokenHash,
        client_id: &ClientId,
        family_id: Option<&FamilyId>,
        now: UnixTime,
    ) -> StoreResult<CodeRedeemed>;
}
