//! Just enough HTTP/1.1 for the proxy, by hand: keep-alive and `Content-Length` bodies, which
//! is what the AWS SDK sends. Hand-written because a fault must own the socket itself (close it
//! after the request took effect upstream, without an answer).

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// The header naming the DynamoDB operation: `DynamoDB_20120810.GetItem`.
const TARGET_HEADER: &str = "x-amz-target";
/// Request heads and bodies larger than this are refused: DynamoDB's own request limit.
const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;
/// Headers that describe one hop, not the message: never copied across the proxy.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "proxy-connection",
    "upgrade",
    "te",
    "trailer",
];

/// A request as read from the client.
pub(super) struct Request {
    pub(super) method: String,
    pub(super) path: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
}

impl Request {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `GetItem` from `DynamoDB_20120810.GetItem`.
    pub(super) fn operation(&self) -> String {
        let target = self.header(TARGET_HEADER).unwrap_or("unknown");
        target.rsplit('.').next().unwrap_or(target).to_owned()
    }
}

/// A response to write back.
pub(super) struct Response {
    pub(super) status: u16,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
}

impl Response {
    pub(super) fn dynamodb_error(status: u16, error_type: &str, message: &str) -> Self {
        let body = serde_json::json!({
            "__type": format!("com.amazonaws.dynamodb.v20120810#{error_type}"),
            "message": message,
        });
        Self {
            status,
            headers: vec![(
                "content-type".to_owned(),
                "application/x-amz-json-1.0".to_owned(),
            )],
            body: body.to_string().into_bytes(),
        }
    }
}

pub(super) fn is_hop_by_hop(name: &str) -> bool {
    HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h))
}

fn invalid(message: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message.to_owned())
}

/// The next request on a keep-alive connection; `None` when the client closed it in between.
pub(super) async fn read_request<R>(reader: &mut BufReader<R>) -> std::io::Result<Option<Request>>
where
    R: tokio::io::AsyncRead + Unpin,
{
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).await? == 0 {
        return Ok(None);
    }
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
        return Err(invalid("malformed request line"));
    };
    let (method, path) = (method.to_owned(), path.to_owned());
    let mut headers = Vec::new();
    let mut head_bytes = request_line.len();
    loop {
        let mut line = String::new();
        head_bytes += reader.read_line(&mut line).await?;
        if head_bytes > MAX_REQUEST_BYTES {
            return Err(invalid("request head too large"));
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').ok_or_else(|| invalid("bad header"))?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let mut request = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if request.header("transfer-encoding").is_some() {
        // The SDK always sends a length; a chunked body means a client this proxy is not for.
        return Err(invalid("chunked request bodies are not supported"));
    }
    let length: usize = match request.header("content-length") {
        Some(value) => value.parse().map_err(|_| invalid("bad content-length"))?,
        None => 0,
    };
    if length > MAX_REQUEST_BYTES {
        return Err(invalid("request body too large"));
    }
    request.body = vec![0; length];
    reader.read_exact(&mut request.body).await?;
    Ok(Some(request))
}

pub(super) async fn write_response<W>(writer: &mut W, response: &Response) -> std::io::Result<()>
where
    W: tokio::io::AsyncWrite + Unpin,
{
    let reason = http::StatusCode::from_u16(response.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut head = format!("HTTP/1.1 {} {reason}\r\n", response.status);
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", response.body.len()));
    writer.write_all(head.as_bytes()).await?;
    writer.write_all(&response.body).await?;
    writer.flush().await
}
