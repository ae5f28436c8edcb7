//! What makes a rotation safe to retry on DynamoDB: one idempotency token per rotation, and
//! reading the family back when the transaction's outcome is unknown.

use super::super::codec::{key, keys};
use super::super::DynamoStore;
use crate::domain::{Family, FamilyId};
use crate::secrets::TokenHash;
use crate::{Failure, Rotation, StoreError, StoreResult};

/// The `ClientRequestToken` of the rotation to `generation`: every attempt at that rotation,
/// whichever request makes it, carries the same one, so DynamoDB applies at most one of them
/// and an SDK resubmission after a lost answer cannot fail against its own write.
pub(in super::super) fn rotation_request_token(family_id: &FamilyId, generation: u32) -> String {
    let digest = TokenHash::of(&format!("rotate-refresh-token/{family_id}/{generation}"));
    digest.to_hex()[..36].to_owned()
}

impl DynamoStore {
    /// Resolves a rotation whose outcome is unknown by reading the family back (`true`: it
    /// happened): the successor is derived, so whether it is current is a comparison. Still the
    /// presented token: nothing landed, and the caller's 503 invites a retry, which is safe.
    pub(in super::super) async fn read_back_rotation(
        &self,
        rotation: &Rotation,
        reason: Failure,
    ) -> StoreResult<bool> {
        let family = self
            .get::<Family>(
                "RotateRefreshTokenReadBack",
                keys::family(&rotation.family_id),
            )
            .await?;
        match family {
            Some(family) if family.current_token == rotation.successor.token_hash => {
                // Current either through this very write or a concurrent one; only this write
                // stored this access token.
                let (pk, sk) = keys::access(&rotation.access_token.jti);
                let ours = self
                    .get_item("RotateRefreshTokenReadBack", key(pk, sk))
                    .await?
                    .is_some();
                tracing::info!(family_id = %rotation.family_id, ours, "ambiguous rotation resolved");
                Ok(ours)
            }
            Some(family)
                if family.current_token == rotation.presented && family.revoked_at.is_none() =>
            {
                Err(StoreError::Unavailable(reason))
            }
            _ => Ok(false),
        }
    }
}
