//! Device authorizations (RFC 8628; docs/decisions.md, "Device authorization grant"): found by
//! the device code's digest when the device polls and by the user code's digest on the page;
//! every change of state is one conditional write, so a code is decided once and redeemed once.

use async_trait::async_trait;

use super::StoreResult;
use crate::clock::UnixTime;
use crate::domain::{ClientId, DeviceAuthorization, DeviceDecision};
use crate::secrets::TokenHash;

#[async_trait]
pub trait DeviceAuthorizationStore: Send + Sync {
    /// Stores a new authorization. `false` (nothing written) when its user code is held by
    /// another live authorization: the caller draws another code.
    async fn put_device_authorization(&self, record: &DeviceAuthorization) -> StoreResult<bool>;

    /// By the device code's digest, until the record's TTL (`expires_at`), whatever its state.
    async fn get_device_authorization(
        &self,
        device_code_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<DeviceAuthorization>>;

    /// By the user code's digest, until the record's TTL, whatever its state.
    async fn find_device_authorization(
        &self,
        user_code_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<DeviceAuthorization>>;

    /// Records the user's decision if the authorization is still pending and its codes are
    /// valid (`issued_at > valid_after`). `false`: it was decided, redeemed or expired already.
    async fn decide_device_authorization(
        &self,
        device_code_hash: &TokenHash,
        decision: &DeviceDecision,
        valid_after: UnixTime,
    ) -> StoreResult<bool>;

    /// Records a poll at `now` with the interval it leaves (a `slow_down`: well-paced polls
    /// write nothing), if no other poll was recorded since the one the caller read (`seen`).
    /// `false`: another poll came first.
    async fn record_device_poll(
        &self,
        device_code_hash: &TokenHash,
        seen: Option<UnixTime>,
        now: UnixTime,
        interval: UnixTime,
    ) -> StoreResult<bool>;

    /// Marks an approved authorization of `client_id` redeemed, if its codes are valid
    /// (`issued_at > valid_after`). Of concurrent redemptions exactly one answers `true`.
    async fn redeem_device_authorization(
        &self,
        device_code_hash: &TokenHash,
        client_id: &ClientId,
        valid_after: UnixTime,
    ) -> StoreResult<bool>;
}
