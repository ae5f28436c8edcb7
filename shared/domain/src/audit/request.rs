//! Where the request that caused an event came from (docs/decisions.md, Audit events): its
//! source address, and the two values its caller wrote, bounded and printable.

use std::future::Future;
use std::net::IpAddr;

use serde::{Deserialize, Deserializer, Serialize};

/// The `User-Agent` a caller sent: printable ASCII, at most [`UserAgent::MAX_LEN`] bytes (cut
/// there), or none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct UserAgent(String);

impl UserAgent {
    pub const MAX_LEN: usize = 256;

    pub fn from_header(value: &[u8]) -> Option<Self> {
        let value = value.get(..Self::MAX_LEN).unwrap_or(value);
        let printable = value.iter().all(|b| (b' '..=b'~').contains(b));
        let text = std::str::from_utf8(value).ok()?.trim();
        (printable && !text.is_empty()).then(|| Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for UserAgent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::from_header(text.as_bytes()).ok_or_else(|| serde::de::Error::custom("user agent"))
    }
}

/// A request's correlation id: 1 to 128 visible ASCII characters (what the service accepts in
/// `X-Correlation-Id`, or the UUID it generated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct CorrelationId(String);

impl CorrelationId {
    pub fn parse(text: &str) -> Option<Self> {
        let valid =
            !text.is_empty() && text.len() <= 128 && text.bytes().all(|b| b.is_ascii_graphic());
        valid.then(|| Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for CorrelationId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).ok_or_else(|| serde::de::Error::custom("correlation id"))
    }
}

/// Where the request that caused an event came from, as the HTTP layer saw it. Empty for what
/// no request caused (`tokenctl`, the scheduled key rotation).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestFacts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_address: Option<IpAddr>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<UserAgent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<CorrelationId>,
}

tokio::task_local! {
    static CURRENT_REQUEST: RequestFacts;
}

impl RequestFacts {
    /// The facts of the request being served by this task, set by [`RequestFacts::scope`];
    /// empty outside one. A task-local rather than a parameter of every flow: an event can
    /// arise deep in any grant, and its origin is the same wherever that is.
    pub fn current() -> Self {
        CURRENT_REQUEST.try_with(Clone::clone).unwrap_or_default()
    }

    /// Runs `work` with these facts as [`RequestFacts::current`].
    pub async fn scope<F: Future>(self, work: F) -> F::Output {
        CURRENT_REQUEST.scope(self, work).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caller_written_values_are_bounded_printable_ascii() {
        assert_eq!(UserAgent::from_header(b"a\nb"), None);
        assert_eq!(UserAgent::from_header(b"   "), None);
        let long = UserAgent::from_header(&[b'x'; 1000]).unwrap();
        assert_eq!(long.0.len(), UserAgent::MAX_LEN);
        assert_eq!(CorrelationId::parse("has space"), None);
        assert_eq!(CorrelationId::parse(&"x".repeat(129)), None);
        assert_eq!(CorrelationId::parse("abc-123").unwrap().as_str(), "abc-123");
    }

    #[tokio::test]
    async fn request_facts_follow_the_task() {
        assert_eq!(RequestFacts::current(), RequestFacts::default());
        let facts = RequestFacts {
            correlation_id: CorrelationId::parse("c"),
            ..RequestFacts::default()
        };
        let seen = facts.clone().scope(async { RequestFacts::current() }).await;
        assert_eq!(seen, facts);
    }
}
