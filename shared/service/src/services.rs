//! The dependencies of every endpoint, bundled once per process.

use crate::config::Policy;
use crate::context::Context;
use crate::domain::Geolocation;
use crate::jwt::AccessTokenCodec;

#[derive(Debug, Clone)]
pub struct Services {
    pub ctx: Context,
    pub codec: AccessTokenCodec,
    pub policy: Policy,
}

impl Services {
    pub fn new(ctx: Context, codec: AccessTokenCodec, policy: Policy) -> Self {
        Self { ctx, codec, policy }
    }

    /// This deployment's base address (`GEOLOCATION`).
    pub fn geolocation(&self) -> &Geolocation {
        self.codec.issuer()
    }
}
