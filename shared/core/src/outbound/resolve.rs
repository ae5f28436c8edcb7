//! Name resolution as a port, so that tests can make a name resolve to any address.

use std::net::IpAddr;

/// Resolves a host name to its addresses (all of them: each is checked).
#[async_trait::async_trait]
pub trait Resolver: Send + Sync + std::fmt::Debug {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<IpAddr>>;
}

/// The operating system's resolver.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

#[async_trait::async_trait]
impl Resolver for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<IpAddr>> {
        let mut addresses: Vec<IpAddr> = tokio::net::lookup_host((host, port))
            .await?
            .map(|socket| socket.ip())
            .collect();
        addresses.dedup();
        Ok(addresses)
    }
}
