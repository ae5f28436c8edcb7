//! Where a request came from, as the platform saw it: API Gateway's `requestContext` source IP
//! on Lambda (`lambda_http` puts the context in the request's extensions), the peer's socket
//! address locally (axum's `ConnectInfo`). Never a header: `X-Forwarded-For` and the like are
//! written by the caller and would let one client spread its attempts over made-up addresses.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts};
use http::request::Parts;
use http::Extensions;
use lambda_http::request::RequestContext;

/// The caller's address; `None` when the platform gave none (a router driven without a socket,
/// as some tests do): then no per-address limit applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceAddress(pub Option<IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for SourceAddress {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(source_address(&parts.extensions)))
    }
}

pub fn source_address(extensions: &Extensions) -> Option<IpAddr> {
    if let Some(context) = extensions.get::<RequestContext>() {
        let source_ip = match context {
            RequestContext::ApiGatewayV2(context) => context.http.source_ip.as_deref(),
            RequestContext::ApiGatewayV1(context) => context.identity.source_ip.as_deref(),
            _ => None,
        };
        return source_ip.and_then(|ip| ip.parse().ok());
    }
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_peer_is_the_local_source() {
        let mut extensions = Extensions::new();
        assert_eq!(source_address(&extensions), None);
        extensions.insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 2], 4000))));
        assert_eq!(
            source_address(&extensions),
            Some(IpAddr::from([127, 0, 0, 2]))
        );
    }
}
