//! One HTTP/1.1 request on a connection opened here to a checked address: the connection is
//! never handed to a component that might resolve the name again or use a proxy.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use url::Host;

use token_core::outbound::{FetchError, Outgoing, Response, Target, MAX_BODY_BYTES};

/// `tls`: the configuration to use instead of the system roots' one.
pub(super) async fn send(
    target: &Target,
    outgoing: Outgoing,
    tls: Option<&Arc<rustls::ClientConfig>>,
) -> Result<Response, FetchError> {
    let tcp = connect(&target.addresses).await?;
    let mut request = http::Request::builder()
        .method(outgoing.method)
        .uri(&target.path_and_query)
        .header(http::header::HOST, &target.authority)
        .header(http::header::USER_AGENT, "token-service")
        .header(http::header::CONNECTION, "close");
    if let Some(content_type) = outgoing.content_type {
        request = request.header(http::header::CONTENT_TYPE, content_type);
    }
    if let Some(accept) = outgoing.accept {
        request = request.header(http::header::ACCEPT, accept);
    }
    if let Some(authorization) = &outgoing.authorization {
        request = request.header(http::header::AUTHORIZATION, authorization);
    }
    let request = request
        .body(Full::new(Bytes::from(outgoing.body)))
        .map_err(|_| FetchError::InvalidUrl)?;
    if target.https {
        let name = match &target.host {
            Host::Domain(name) => ServerName::try_from(name.clone()),
            Host::Ipv4(ip) => Ok(ServerName::from(std::net::IpAddr::V4(*ip))),
            Host::Ipv6(ip) => Ok(ServerName::from(std::net::IpAddr::V6(*ip))),
        }
        .map_err(|_| FetchError::InvalidUrl)?;
        let config = tls.map_or_else(system_tls_config, Arc::clone);
        let tls = tokio_rustls::TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .map_err(FetchError::Tls)?;
        exchange(TokioIo::new(tls), request).await
    } else {
        exchange(TokioIo::new(tcp), request).await
    }
}

/// The first of `addresses` that accepts a connection.
async fn connect(addresses: &[SocketAddr]) -> Result<TcpStream, FetchError> {
    let mut last = None;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => return Ok(stream),
            Err(error) => last = Some(error),
        }
    }
    Err(FetchError::Connect(last.unwrap_or_else(|| {
        std::io::Error::other("no address to connect to")
    })))
}

async fn exchange<S>(io: S, request: http::Request<Full<Bytes>>) -> Result<Response, FetchError>
where
    S: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(http_error)?;
    // Aborted when this function returns or its caller's timeout drops it, so a stalled peer
    // cannot keep a task alive.
    let driver = AbortOnDrop(tokio::spawn(connection));
    let response = sender.send_request(request).await.map_err(http_error)?;
    let (parts, body) = response.into_parts();
    let body = match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) => {
            return Err(match error.downcast::<hyper::Error>() {
                Ok(error) => http_error(*error),
                Err(_) => FetchError::BodyTooLarge {
                    status: parts.status,
                },
            })
        }
    };
    drop(driver);
    Ok(Response {
        status: parts.status,
        headers: parts.headers,
        body: body.to_vec(),
    })
}

fn http_error(error: hyper::Error) -> FetchError {
    FetchError::Http(error.to_string())
}

struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Trusting the system's certificates (as the AWS SDK's client does), built once.
fn system_tls_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore::empty();
            let native = rustls_native_certs::load_native_certs();
            let (added, _) = roots.add_parsable_certificates(native.certs);
            if added == 0 {
                tracing::warn!("no system certificates found: outbound https will fail");
            }
            client_config(roots)
        })
        .clone()
}

/// HTTP/1.1 over TLS 1.2 or 1.3 with ring, trusting `roots`.
pub(super) fn client_config(roots: rustls::RootCertStore) -> Arc<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}
