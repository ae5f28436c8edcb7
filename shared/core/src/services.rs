//! The dependencies of every endpoint, bundled once per process.

use std::sync::Arc;

use crate::client_documents::ClientDocuments;
use crate::client_keys::ClientKeySets;
use crate::config::Policy;
use crate::context::Context;
use crate::device_pace::DevicePacer;
use crate::domain::Geolocation;
use crate::idp_documents::Providers;
use crate::issuance::Issuer;
use crate::jwt::AccessTokenCodec;
use crate::limits::{Limiter, RefusalMemory};
use crate::logout_delivery::{Deliverer, InProcessLogoutQueue, LogoutQueue, RetrySchedule};
use crate::mail::{Mailer, NoMailer};
use crate::outbound::Fetcher;

#[derive(Debug, Clone)]
pub struct Services {
    pub ctx: Context,
    pub codec: AccessTokenCodec,
    pub policy: Policy,
    /// Where one-time passwords are sent (docs/decisions.md, "One-time passwords"); [`NoMailer`]
    /// unless set.
    pub mailer: Arc<dyn Mailer>,
    /// Where back-channel logout deliveries go (`crate::logout_delivery`): background tasks of
    /// this process calling public https addresses only, unless set.
    pub logout_queue: Arc<dyn LogoutQueue>,
    /// The rate-limit counters this process saw refuse, until their windows end.
    pub refusals: Arc<RefusalMemory>,
    /// The pace of device-code polls this instance answered (`grants::device_code`): kept in
    /// memory so that a well-paced pending poll writes nothing.
    pub device_pacer: Arc<DevicePacer>,
    /// Client ID metadata documents (`CLIENT_ID_METADATA_DOCUMENTS`), fetched from public https
    /// addresses only, unless set ([`Self::with_document_fetcher`]).
    pub client_documents: ClientDocuments,
    /// What company identity providers publish, as this instance read it, fetched under the
    /// same rules as client ID metadata documents.
    pub upstream: Arc<Providers>,
    /// The keys self-registered clients publish at their `jwks_uri`, as this instance read
    /// them, fetched under the same rules.
    pub client_keys: Arc<ClientKeySets>,
}

impl Services {
    pub fn new(ctx: Context, codec: AccessTokenCodec, policy: Policy) -> Self {
        let logout_queue = Arc::new(InProcessLogoutQueue::new(
            Deliverer::new(ctx.clone(), Fetcher::unconnected()),
            RetrySchedule::production(),
        ));
        let client_documents =
            ClientDocuments::new(policy.client_id_metadata_documents, Fetcher::unconnected());
        Self {
            ctx,
            codec,
            policy,
            client_documents,
            mailer: Arc::new(NoMailer),
            logout_queue,
            refusals: Arc::new(RefusalMemory::default()),
            device_pacer: Arc::new(DevicePacer::default()),
            upstream: Arc::new(Providers::new(Fetcher::unconnected())),
            client_keys: Arc::new(ClientKeySets::new(Fetcher::unconnected())),
        }
    }

    pub fn with_logout_queue(mut self, queue: Arc<dyn LogoutQueue>) -> Self {
        self.logout_queue = queue;
        self
    }

    /// Client ID metadata documents, company identity providers' documents and clients' key
    /// sets fetched by
    /// `fetcher` (the configuration's allowed hosts; in tests, a resolver or a time limit of
    /// their own).
    pub fn with_document_fetcher(mut self, fetcher: Fetcher) -> Self {
        self.upstream = Arc::new(Providers::new(fetcher.clone()));
        self.client_keys = Arc::new(ClientKeySets::new(fetcher.clone()));
        self.client_documents = self.client_documents.with_fetcher(fetcher);
        self
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
        Limiter::new(
            self.ctx.store.rate_limits(),
            self.policy.rate_limits,
            &self.refusals,
            self.geolocation().as_str(),
        )
    }

    /// This deployment's base address (`GEOLOCATION`).
    pub fn geolocation(&self) -> &Geolocation {
        self.codec.issuer()
    }
}
