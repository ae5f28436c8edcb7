use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::outbound::{AllowedHosts, Exchange, Outgoing, Response, Target};

const JWKS_URI: &str = "http://127.0.0.1:9/jwks";

/// A client publishing one EdDSA key and an encryption key, counting the reads.
#[derive(Debug, Default)]
struct CountingClient {
    reads: AtomicUsize,
}

#[async_trait::async_trait]
impl Exchange for CountingClient {
    async fn send(&self, _: &Target, _: Outgoing) -> Result<Response, FetchError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        let x =
            base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, [7u8; 32]);
        let body = serde_json::json!({"keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "sig"},
            {"kty": "OKP", "crv": "X25519", "x": x, "kid": "enc", "use": "enc"},
        ]});
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::CACHE_CONTROL,
            http::HeaderValue::from_static("max-age=600"),
        );
        Ok(Response {
            status: http::StatusCode::OK,
            headers,
            body: body.to_string().into_bytes(),
        })
    }
}

#[tokio::test]
async fn keys_are_kept_per_cache_control_and_read_again_at_most_once_a_minute() {
    let client = Arc::new(CountingClient::default());
    let allowed = AllowedHosts::parse("127.0.0.1:9").unwrap();
    let sets = ClientKeySets::new(Fetcher::new(allowed, client.clone()));
    let now = 1_800_000_000;
    let kept = sets.get(JWKS_URI, now).await.unwrap();
    let kids: Vec<_> = kept.keys.keys().iter().map(|key| key.kid()).collect();
    assert_eq!(kids, [Some("sig")], "the signing key only");
    assert_eq!(client.reads.load(Ordering::SeqCst), 1);
    // Kept for the document's max-age: a second assertion reads nothing.
    sets.get(JWKS_URI, now + 599).await.unwrap();
    assert_eq!(client.reads.load(Ordering::SeqCst), 1);
    // An unknown `kid` within the minute: nothing new to try.
    let again = sets.with_new_keys(JWKS_URI, now + KEYS_REFETCH_SECONDS - 1);
    assert!(again.await.unwrap().is_none());
    assert_eq!(client.reads.load(Ordering::SeqCst), 1);
    // After it: read again, and the next read waits another minute.
    let later = now + KEYS_REFETCH_SECONDS;
    assert!(sets.with_new_keys(JWKS_URI, later).await.unwrap().is_some());
    assert_eq!(client.reads.load(Ordering::SeqCst), 2);
    assert!(sets
        .with_new_keys(JWKS_URI, later + 1)
        .await
        .unwrap()
        .is_none());
    // Aged out: read again.
    sets.get(JWKS_URI, later + 600).await.unwrap();
    assert_eq!(client.reads.load(Ordering::SeqCst), 3);
}
