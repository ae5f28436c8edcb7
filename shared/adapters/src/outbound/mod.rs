//! The exchange of `token_core::outbound`'s fetcher: one HTTP/1.1 request with hyper, over
//! rustls with ring for https, on a connection opened here to an address the fetcher checked
//! (never handed to a component that might resolve the name again or use a proxy).

mod exchange;

use std::sync::Arc;

use token_core::outbound::{
    AllowedHosts, Exchange, FetchError, Fetcher, Outgoing, Response, Target,
};

/// hyper on rustls, trusting the system's certificates or the given roots.
#[derive(Debug, Clone, Default)]
pub struct HyperExchange {
    /// TLS trusting other roots than the system's; `None`: the system's.
    tls: Option<Arc<rustls::ClientConfig>>,
}

impl HyperExchange {
    /// https trusting `roots` only, instead of the system's certificates (tests: a server on
    /// loopback with a certificate from a test authority). Nothing else about a request
    /// changes: the name is still checked against the certificate.
    pub fn with_roots(roots: rustls::RootCertStore) -> Self {
        Self {
            tls: Some(exchange::client_config(roots)),
        }
    }
}

#[async_trait::async_trait]
impl Exchange for HyperExchange {
    async fn send(&self, target: &Target, outgoing: Outgoing) -> Result<Response, FetchError> {
        exchange::send(target, outgoing, self.tls.as_ref()).await
    }
}

/// The service's fetcher: the rules for `allowed`, the system's certificates.
pub fn fetcher(allowed: AllowedHosts) -> Fetcher {
    Fetcher::new(allowed, Arc::new(HyperExchange::default()))
}

/// [`fetcher`] trusting `roots` only (tests).
pub fn fetcher_with_roots(allowed: AllowedHosts, roots: rustls::RootCertStore) -> Fetcher {
    Fetcher::new(allowed, Arc::new(HyperExchange::with_roots(roots)))
}

#[cfg(test)]
mod tests;
