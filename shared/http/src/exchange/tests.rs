//! The exchange end to end through its router: what its request log line says, and does not.

use std::sync::Arc;

use axum::body::Body;
use http::{header, StatusCode};

use crate::domain::{ConsumerKey, Geolocation};
use crate::secrets::TokenHash;
use crate::services::Services;
use token_store_conformance::records;

/// Captures what the log subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// The request log line names the calling app and the outcome, and no credential.
#[tokio::test]
async fn request_log_has_client_and_code_and_no_credentials() {
    use tower::ServiceExt;

    use crate::domain::NewClient;
    use crate::domain::{LegacyApp, Scopes};
    use crate::jwt::AccessTokenCodec;
    use crate::signing::KeyRing;
    use crate::store::sqlite::SqliteStore;
    use token_core::context::Context;
    use token_domain::clock::{Clock, ManualClock};
    use token_domain::random::{OsRandom, RandomExt};

    let log = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(log.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let dir = std::env::temp_dir().join(format!("exchange-log-{}", OsRandom.uuid()));
    let clock = Arc::new(ManualClock::new(1_700_000_000));
    let ctx =
        Context::new(Arc::new(SqliteStore::open_in_dir(&dir).unwrap())).with_clock(clock.clone());
    let geolocation = Geolocation::parse("https://us.api.example.com").unwrap();
    let codec = AccessTokenCodec::new(
        Arc::new(KeyRing::generate(&OsRandom, clock.as_ref())),
        geolocation,
    );
    let services = Arc::new(Services::new(ctx, codec, Default::default()));
    let store = &services.ctx.store;
    let secret = "5f0c4b9e-secret-value";
    let client = NewClient::named("app", Scopes::parse("read").unwrap()).into_client(
        crate::domain::ClientId::new(OsRandom.uuid()),
        crate::domain::ClientSecrets::from_single_hash(TokenHash::of(secret)),
        clock.now(),
    );
    store.clients().put_client(&client).await.unwrap();
    let key = ConsumerKey::parse("old-app").unwrap();
    store
        .legacy()
        .put_legacy_app(&LegacyApp {
            consumer_key: key.clone(),
            client_id: client.id,
            linked_at: clock.now(),
        })
        .await
        .unwrap();
    let old = "old-token-value-1234";
    // The exchange refuses a principal the store does not know.
    let user = records::user(clock.now(), "old-user");
    store.principals().put_user(&user).await.unwrap();
    store
        .legacy()
        .put_legacy_tokens(&[records::user_legacy_token(old, key, user.id)])
        .await
        .unwrap();
    let app_token = services
        .issuer()
        .issue_application_token(&client, Scopes::empty())
        .await
        .unwrap()
        .access_token;

    let router = crate::exchange_router(services.clone());
    let send = |body: String| {
        let request = http::Request::post("/appmgmt/v0/legacyApps/old-app/exchangeRefreshToken/me")
            .header(header::AUTHORIZATION, format!("Bearer {app_token}"))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .unwrap();
        router.clone().oneshot(request)
    };
    let ok = send(format!("token={old}&secret={secret}")).await.unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    let bytes = axum::body::to_bytes(ok.into_body(), usize::MAX)
        .await
        .unwrap();
    let issued: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let refused = send(format!("token={old}&secret=wrong-{secret}"))
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);

    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("request completed"))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].contains(&format!("client_id={}", client.id)),
        "{text}"
    );
    assert!(lines[0].contains("code=\"OK\""), "{text}");
    assert!(lines[1].contains("code=\"UNAUTHORIZED\""), "{text}");
    for credential in [
        old,
        secret,
        app_token.as_str(),
        issued["accessToken"].as_str().unwrap(),
        issued["refreshToken"].as_str().unwrap(),
    ] {
        assert!(
            !text.contains(credential),
            "a credential was logged: {text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
