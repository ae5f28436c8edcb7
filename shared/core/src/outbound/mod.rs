//! Requests the server makes to addresses its clients supply (back-channel logout URIs; client
//! ID metadata documents reuse it). Such a URL must not become a way into this deployment's own
//! network, so every request:
//!
//! - uses https, unless its `host:port` is allowed (`CLIENT_ID_METADATA_ALLOW_HOSTS`, for
//!   development and tests), where http is allowed too;
//! - resolves the name once and is refused when ANY of its addresses is not public unicast
//!   (`address::refusal`), unless its `host:port` is allowed: one bad address is enough, since
//!   a resolver may hand out either;
//! - connects to an address so checked and no other (no second lookup between check and
//!   connection: DNS rebinding cannot switch it), with no proxy;
//! - follows no redirect (a 3xx is the answer), ends within [`TIMEOUT`] in all, and reads at
//!   most [`MAX_BODY_BYTES`] of the answer.

pub mod address;
#[cfg(test)]
pub(crate) mod plain_http;
mod resolve;

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use url::{Host, Url};

pub use resolve::{Resolver, SystemResolver};

/// The whole request's time limit: resolution, connection, TLS, request and answer.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// The most of an answer's body that is read.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// `host:port` pairs that may be called whatever their addresses, over http too
/// (`CLIENT_ID_METADATA_ALLOW_HOSTS`). Hosts are compared lower-case, IPv6 addresses in
/// brackets (`[::1]:8080`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedHosts(BTreeSet<String>);

/// An entry of `CLIENT_ID_METADATA_ALLOW_HOSTS` that is not `host:port`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not host:port: {0:?}")]
pub struct InvalidAllowedHost(pub String);

impl AllowedHosts {
    /// None allowed: only public addresses over https.
    pub fn none() -> Self {
        Self::default()
    }

    /// A comma- or blank-separated list of `host:port`.
    pub fn parse(list: &str) -> Result<Self, InvalidAllowedHost> {
        let mut hosts = BTreeSet::new();
        for entry in list
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|e| !e.is_empty())
        {
            let invalid = || InvalidAllowedHost(entry.to_owned());
            let (host, port) = entry.rsplit_once(':').ok_or_else(invalid)?;
            let port: u16 = port.parse().map_err(|_| invalid())?;
            // Parsed as a URL's host so that it compares as the URL's does.
            let host = Url::parse(&format!("http://{host}:{port}/"))
                .ok()
                .and_then(|url| url.host_str().map(str::to_owned))
                .filter(|parsed| !parsed.is_empty())
                .ok_or_else(invalid)?;
            hosts.insert(format!("{host}:{port}"));
        }
        Ok(Self(hosts))
    }

    pub fn allows(&self, host: &str, port: u16) -> bool {
        self.0
            .contains(&format!("{}:{port}", host.to_ascii_lowercase()))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Each allowed `host:port`.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }
}

/// Why a request was not made or did not complete.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("not an absolute http(s) URL with a host")]
    InvalidUrl,
    #[error("only https may be called (http only for an allowed host:port)")]
    SchemeNotAllowed,
    #[error("{address} is {why}: never called unless its host:port is allowed")]
    AddressNotAllowed { address: IpAddr, why: &'static str },
    #[error("the name did not resolve: {0}")]
    Resolve(#[source] std::io::Error),
    #[error("no connection could be opened: {0}")]
    Connect(#[source] std::io::Error),
    #[error("TLS: {0}")]
    Tls(#[source] std::io::Error),
    #[error("HTTP: {0}")]
    Http(String),
    #[error("no complete answer within the time limit ({} s)", TIMEOUT.as_secs())]
    Timeout,
    #[error("answer ({status}) larger than {MAX_BODY_BYTES} bytes")]
    BodyTooLarge { status: http::StatusCode },
}

/// The outbound HTTP client for client-supplied URLs (see the module's rules): the checks here,
/// the one exchange on a connection to a checked address through an [`Exchange`].
#[derive(Debug, Clone)]
pub struct Fetcher {
    allowed: AllowedHosts,
    resolver: Arc<dyn Resolver>,
    timeout: Duration,
    exchange: Arc<dyn Exchange>,
}

/// Where a checked request goes.
#[derive(Debug, Clone)]
pub struct Target {
    pub https: bool,
    pub host: Host<String>,
    /// Every address the name resolved to, each checked: the connection tries them in order.
    pub addresses: Vec<SocketAddr>,
    /// `Host` header: the host and, when not the scheme's default, the port.
    pub authority: String,
    /// The request target: path and query.
    pub path_and_query: String,
}

/// What is sent.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub method: http::Method,
    pub content_type: Option<&'static str>,
    pub accept: Option<&'static str>,
    /// An `Authorization` header (an upstream token endpoint's client authentication).
    pub authorization: Option<String>,
    pub body: Vec<u8>,
}

/// An answer, redirects included (never followed).
#[derive(Debug, Clone)]
pub struct Response {
    pub status: http::StatusCode,
    pub headers: http::HeaderMap,
    /// At most [`MAX_BODY_BYTES`].
    pub body: Vec<u8>,
}

/// One HTTP/1.1 exchange with a checked target, on a connection it opens itself to one of the
/// target's addresses and no other (`token_adapters::outbound`: hyper on rustls). It reads at
/// most [`MAX_BODY_BYTES`] of the answer and follows no redirect.
#[async_trait::async_trait]
pub trait Exchange: Send + Sync + std::fmt::Debug {
    async fn send(&self, target: &Target, outgoing: Outgoing) -> Result<Response, FetchError>;
}

/// The exchange of a process given no HTTP client: every request fails to connect.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoExchange;

#[async_trait::async_trait]
impl Exchange for NoExchange {
    async fn send(&self, _: &Target, _: Outgoing) -> Result<Response, FetchError> {
        Err(FetchError::Connect(std::io::Error::other(
            "this process has no outbound HTTP client",
        )))
    }
}

impl Fetcher {
    /// The rules above for `allowed`, each request made by `exchange`.
    pub fn new(allowed: AllowedHosts, exchange: Arc<dyn Exchange>) -> Self {
        Self {
            allowed,
            resolver: Arc::new(SystemResolver),
            timeout: TIMEOUT,
            exchange,
        }
    }

    /// A fetcher that calls nothing (the defaults of `Services`, before a binary gives it its
    /// client).
    pub fn unconnected() -> Self {
        Self::new(AllowedHosts::none(), Arc::new(NoExchange))
    }

    /// Names resolved by `resolver` instead of the system's (tests of the address rules).
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// A whole request's time limit other than [`TIMEOUT`] (tests of a slow server, which
    /// need not wait five seconds).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn allowed_hosts(&self) -> &AllowedHosts {
        &self.allowed
    }

    /// A whole request's time limit: [`TIMEOUT`] unless a test set another.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// `POST url` with `form` as `application/x-www-form-urlencoded`.
    pub async fn post_form(
        &self,
        url: &str,
        form: &[(&str, &str)],
    ) -> Result<Response, FetchError> {
        self.post_form_with(url, form, None, None).await
    }

    /// A token request: [`Self::post_form`] accepting JSON, with an `Authorization` header when
    /// one is given (client authentication at an upstream token endpoint).
    pub async fn post_token_request(
        &self,
        url: &str,
        form: &[(&str, &str)],
        authorization: Option<&str>,
    ) -> Result<Response, FetchError> {
        self.post_form_with(url, form, Some("application/json"), authorization)
            .await
    }

    async fn post_form_with(
        &self,
        url: &str,
        form: &[(&str, &str)],
        accept: Option<&'static str>,
        authorization: Option<&str>,
    ) -> Result<Response, FetchError> {
        let body = serde_urlencoded::to_string(form).map_err(|_| FetchError::InvalidUrl)?;
        let request = Outgoing {
            method: http::Method::POST,
            content_type: Some("application/x-www-form-urlencoded"),
            accept,
            authorization: authorization.map(str::to_owned),
            body: body.into_bytes(),
        };
        self.send(url, request).await
    }

    /// `GET url`, accepting `accept`.
    pub async fn get(&self, url: &str, accept: &'static str) -> Result<Response, FetchError> {
        let request = Outgoing {
            method: http::Method::GET,
            content_type: None,
            accept: Some(accept),
            authorization: None,
            body: Vec::new(),
        };
        self.send(url, request).await
    }

    async fn send(&self, url: &str, request: Outgoing) -> Result<Response, FetchError> {
        let all = async {
            let target = self.target(url).await?;
            self.exchange.send(&target, request).await
        };
        tokio::time::timeout(self.timeout, all)
            .await
            .unwrap_or(Err(FetchError::Timeout))
    }

    /// The checked destination of `url`, or why it is not called.
    async fn target(&self, url: &str) -> Result<Target, FetchError> {
        let url = Url::parse(url).map_err(|_| FetchError::InvalidUrl)?;
        let https = match url.scheme() {
            "https" => true,
            "http" => false,
            _ => return Err(FetchError::SchemeNotAllowed),
        };
        let (Some(host), Some(host_text), Some(port)) =
            (url.host(), url.host_str(), url.port_or_known_default())
        else {
            return Err(FetchError::InvalidUrl);
        };
        let allowed = self.allowed.allows(host_text, port);
        if !https && !allowed {
            return Err(FetchError::SchemeNotAllowed);
        }
        let addresses = match &host {
            Host::Ipv4(ip) => vec![IpAddr::V4(*ip)],
            Host::Ipv6(ip) => vec![IpAddr::V6(*ip)],
            Host::Domain(name) => self
                .resolver
                .resolve(name, port)
                .await
                .map_err(FetchError::Resolve)?,
        };
        if addresses.is_empty() {
            return Err(FetchError::Resolve(std::io::Error::other("no address")));
        }
        if !allowed {
            for address in &addresses {
                if let Some(why) = address::refusal(*address) {
                    return Err(FetchError::AddressNotAllowed {
                        address: *address,
                        why,
                    });
                }
            }
        }
        let authority = match url.port() {
            Some(port) => format!("{host_text}:{port}"),
            None => host_text.to_owned(),
        };
        let path_and_query = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        };
        Ok(Target {
            https,
            host: host.to_owned(),
            addresses: addresses
                .into_iter()
                .map(|ip| SocketAddr::new(ip, port))
                .collect(),
            authority,
            path_and_query,
        })
    }
}
