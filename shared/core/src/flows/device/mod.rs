//! The device authorization grant's flow (RFC 8628; docs/decisions.md, "Device authorization
//! grant"): the device's request for codes ([`start`]); the page where the user enters the user
//! code, signs in and decides, is `page`. The token endpoint's poll is `grants::device_code`.

mod page;

pub use page::{
    act, resume_upstream, show, DeviceCookies, DeviceDenial, DeviceForm, DevicePageError,
    DeviceStep, DEVICE_NONCE_COOKIE, DEVICE_NONCE_TTL_SECONDS, DEVICE_PATH,
};

use crate::domain::{
    Client, DeviceAuthorization, DeviceStatus, GrantType, UserCode, DEVICE_POLL_INTERVAL_SECONDS,
};
use crate::errors::{ErrorCode, GrantError};
use crate::issuance::requested_family_scopes;
use crate::limits::Limit;
use crate::random::RandomExt;
use crate::services::Services;
use crate::store::StoreError;

/// How many user codes are drawn before giving up: a collision with a live code is about one in
/// a billion per draw, so a second draw is already rare.
const USER_CODE_DRAWS: usize = 4;

/// The codes of a new device authorization, shown once.
#[derive(Debug)]
pub struct DeviceCodes {
    pub device_code: String,
    pub user_code: UserCode,
    pub interval: i64,
}

/// Issues a device code and a user code for an authenticated `client` that may use the grant
/// (60 otherwise), for `scope` (54 beyond what the client may ask for a user) and the
/// `resources` the tokens are for (160 when not allowed, as at the token endpoint).
pub async fn start(
    services: &Services,
    client: &Client,
    (scope, resources): (Option<&str>, &[String]),
) -> Result<DeviceCodes, GrantError> {
    let now = services.ctx.clock.now();
    // Counted as a token request of the client: each one writes a record.
    services
        .limiter()
        .count(Limit::ClientTokenRequests, &client.id.to_string(), now)
        .await?;
    if !client.may_use(GrantType::DeviceCode) {
        return Err(ErrorCode::UnsupportedGrant.into());
    }
    let scopes = requested_family_scopes(scope, client)?;
    let resources = services
        .policy
        .resources
        .requested(&client.resources, resources)
        .map_err(|_| ErrorCode::InvalidTarget)?;
    let random = services.ctx.random.as_ref();
    for _ in 0..USER_CODE_DRAWS {
        let device_code = random.opaque_token();
        let user_code = UserCode::generate(random);
        let record = DeviceAuthorization {
            device_code_hash: crate::secrets::TokenHash::of(&device_code),
            user_code_hash: user_code.hash(),
            client_id: client.id,
            scopes: scopes.clone(),
            issued_at: now,
            expires_at: DeviceAuthorization::retained_until(now),
            interval: DEVICE_POLL_INTERVAL_SECONDS,
            last_polled_at: None,
            status: DeviceStatus::Pending,
            user_id: None,
            auth_time: None,
            sid: None,
            amr: Vec::new(),
            resources: resources.clone(),
        };
        if services
            .ctx
            .store
            .device_authorizations()
            .put_device_authorization(&record)
            .await?
        {
            return Ok(DeviceCodes {
                device_code,
                user_code,
                interval: DEVICE_POLL_INTERVAL_SECONDS,
            });
        }
    }
    Err(StoreError::unavailable("no free user code after several draws").into())
}
