//! Passkeys (docs/decisions.md, "Passkeys"): each user's registered credentials, kept per
//! principal so that the account page lists them with one query and a sign-in reads one by the
//! user handle and credential id the browser answers; and the state of a ceremony, kept until its
//! answer under the digest of its id and taken by one conditional delete, so that a challenge is
//! answered at most once.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::{PasskeyCeremony, PasskeyCredential, PrincipalId};
use crate::secrets::TokenHash;

#[async_trait]
pub trait PasskeyStore: Send + Sync {
    /// Keeps a new passkey. `false` (nothing written) when the user already has one with this
    /// credential id.
    async fn put_passkey(&self, passkey: &PasskeyCredential) -> StoreResult<bool>;

    /// The user's passkey with this credential id.
    async fn get_passkey(
        &self,
        principal: &PrincipalId,
        credential_id: &str,
    ) -> StoreResult<Option<PasskeyCredential>>;

    /// The user's passkeys, oldest first.
    async fn list_passkeys(&self, principal: &PrincipalId) -> StoreResult<Vec<PasskeyCredential>>;

    /// Renames the user's passkey; `false` when there is none.
    async fn rename_passkey(
        &self,
        principal: &PrincipalId,
        credential_id: &str,
        name: &str,
    ) -> StoreResult<bool>;

    /// After a sign-in: the library's updated credential (counter, backup state) and the time.
    /// `false` when the passkey was removed meanwhile, which is never written back.
    async fn record_passkey_use(
        &self,
        principal: &PrincipalId,
        credential_id: &str,
        passkey: &str,
        used_at: UnixTime,
    ) -> StoreResult<bool>;

    /// Deletes the user's passkey and answers it as it was, or `None` if there was none.
    async fn delete_passkey(
        &self,
        principal: &PrincipalId,
        credential_id: &str,
    ) -> StoreResult<Option<PasskeyCredential>>;

    /// Keeps a new ceremony's state until its `expires_at`.
    async fn put_passkey_ceremony(&self, ceremony: &PasskeyCeremony) -> StoreResult<()>;

    /// Deletes and answers the ceremony under `id_hash` if it is live at `now`, in one
    /// conditional write: of concurrent takes, one gets it. `None` for an unknown, used or
    /// expired one.
    async fn take_passkey_ceremony(
        &self,
        id_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<PasskeyCeremony>>;
}
