//! The dependencies of every endpoint, bundled once per process.

use std::sync::Arc;

use crate::config::Policy;
use crate::context::Context;
use crate::domain::Geolocation;
use crate::issuance::Issuer;
use crate::jwt::AccessTokenCodec;
use crate::limits::Limiter;
use crate::mail::{Mailer, NoMailer};

#[derive(Debug, Clone)]
pub struct Services {
    pub ctx: Context,
    pub codec: AccessTokenCodec,
    pub policy: Policy,
    /// Where one-time passwords are sent (docs/decisions.md, "One-time passwords"); [`NoMailer`]
    /// unless set.
    pub mailer: Arc<dyn Mailer>,
}

impl Services {
    pub fn new(ctx: Context, codec: AccessTokenCodec, policy: Policy) -> Self {
        Self {
            ctx,
            codec,
            policy,
            mailer: Arc::new(NoMailer),
        }
    }

    pub fn with_mailer(mut self, mailer: Arc<dyn Mailer>) -> Self {
        self.mailer = mailer;
        self
    }

    /// Minting, with this process's store, clock, randomness, keys and policy.
    pub fn issuer(&self) -> Issuer<'_> {
        Issuer::new(&self.ctx, &self.codec, &self.policy)
    }

    /// The rate-limit counters of this process's store and configuration.
    pub fn limiter(&self) -> Limiter<'_> {
        Limiter::new(self.ctx.store.rate_limits(), self.policy.rate_limits)
    }

    /// This deployment's base address (`GEOLOCATION`).
    pub fn geolocation(&self) -> &Geolocation {
        self.codec.issuer()
    }
}
