//! Users' authenticator apps (TOTP) and their recovery codes (docs/decisions.md, "Second
//! factors"): one record per user, the secret sealed by `core`, the recovery codes as digests.
//! Every use is a conditional write, so that of two instances accepting the same code or
//! recovery code at once only one succeeds.

use async_trait::async_trait;

use super::StoreResult;
use crate::domain::{PrincipalId, TotpFactor};
use crate::secrets::TokenHash;

#[async_trait]
pub trait SecondFactorStore: Send + Sync {
    /// Stores a confirmed enrolment; `false` (nothing written) when the user already has one.
    async fn put_totp_factor(&self, factor: &TotpFactor) -> StoreResult<bool>;

    async fn get_totp_factor(&self, principal: &PrincipalId) -> StoreResult<Option<TotpFactor>>;

    /// Records that a code of `step` was accepted, if no code of that step or a later one was:
    /// `false` is a replay (or the enrolment was removed meanwhile).
    async fn use_totp_step(&self, principal: &PrincipalId, step: i64) -> StoreResult<bool>;

    /// Gives back a step `use_totp_step` took when what the code was for failed (the session
    /// could not be written): the last used step is `previous` again, if it is still `step`.
    /// `false` when a later code was used meanwhile (or the enrolment was removed).
    async fn release_totp_step(
        &self,
        principal: &PrincipalId,
        step: i64,
        previous: i64,
    ) -> StoreResult<bool>;

    /// Takes the unused recovery code `hash`: `false` when it is not (or no longer) one.
    async fn use_recovery_code(
        &self,
        principal: &PrincipalId,
        hash: &TokenHash,
    ) -> StoreResult<bool>;

    /// Removes the enrolment and its recovery codes; `false` when there was none.
    async fn delete_totp_factor(&self, principal: &PrincipalId) -> StoreResult<bool>;
}
