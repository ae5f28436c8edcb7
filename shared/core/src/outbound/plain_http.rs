//! The unit tests' exchange: plain HTTP/1.1 to the test's own loopback server, one request per
//! connection, the answer read to its end. The service's exchange (TLS, hyper) is an adapter.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Exchange, FetchError, Outgoing, Response, Target, MAX_BODY_BYTES};

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PlainHttp;

#[async_trait::async_trait]
impl Exchange for PlainHttp {
    async fn send(&self, target: &Target, outgoing: Outgoing) -> Result<Response, FetchError> {
        let mut stream = TcpStream::connect(target.addresses.as_slice())
            .await
            .map_err(FetchError::Connect)?;
        let mut head = format!(
            "{} {} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\ncontent-length: {}\r\n",
            outgoing.method,
            target.path_and_query,
            target.authority,
            outgoing.body.len()
        );
        if let Some(content_type) = outgoing.content_type {
            head.push_str(&format!("content-type: {content_type}\r\n"));
        }
        head.push_str("\r\n");
        let io = |e: std::io::Error| FetchError::Http(e.to_string());
        stream.write_all(head.as_bytes()).await.map_err(io)?;
        stream.write_all(&outgoing.body).await.map_err(io)?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.map_err(io)?;
        parse(&raw)
    }
}

fn parse(raw: &[u8]) -> Result<Response, FetchError> {
    let bad = || FetchError::Http("not an HTTP/1.1 answer".to_owned());
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(bad)?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| bad())?;
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(bad)?;
    let status = http::StatusCode::from_u16(status).map_err(|_| bad())?;
    let mut headers = http::HeaderMap::new();
    for line in lines {
        let (name, value) = line.split_once(':').ok_or_else(bad)?;
        let name = http::HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| bad())?;
        let value = http::HeaderValue::from_str(value.trim()).map_err(|_| bad())?;
        headers.append(name, value);
    }
    let body = raw[end + 4..].to_vec();
    if body.len() > MAX_BODY_BYTES {
        return Err(FetchError::BodyTooLarge { status });
    }
    Ok(Response {
        status,
        headers,
        body,
    })
}
