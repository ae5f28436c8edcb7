//! The floor the token endpoint is measured against (docs/benchmarks.md, "The floor"): HTTP and
//! one ES256 signature per token, nothing else. It parses the form, signs an access token with
//! the service's own key code (`AccessTokenCodec` over a key ring made as a rotation makes it)
//! and answers; no client check, no store, no `jti` kept.
//!
//!   PORT=8099 target/release/floor-server

// The shared test support (tests/support/), compiled in: this package has no library
// (tests/Cargo.toml). Each target uses a part of it.
#[allow(dead_code, unused_imports)]
#[path = "../support/mod.rs"]
mod support;

use std::collections::HashMap;
use std::sync::Arc;

use crate::support::signing_lifecycle as lifecycle;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Form, Json, Router};
use token_core::jwt::AccessTokenCodec;
use token_core::signing::{rotation, SigningBackend, SigningKeys};
use token_domain::clock::{Clock, ManualClock, SystemClock};
use token_domain::{AccessTokenRecord, ClientId, Geolocation, PrincipalType, Scopes, TokenId};
use token_store::sqlite::SqliteStore;
use token_store::SigningKeyRingStore;

struct Floor {
    codec: AccessTokenCodec,
    client_id: ClientId,
}

async fn token(
    State(floor): State<Arc<Floor>>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
        return StatusCode::BAD_REQUEST.into_response();
    }
    let now = SystemClock.now();
    let record = AccessTokenRecord {
        jti: TokenId::new(uuid::Uuid::new_v4()),
        client_id: floor.client_id,
        principal_type: PrincipalType::Application,
        subject: uuid::Uuid::nil(),
        family_id: None,
        scopes: Scopes::parse(form.get("scope").map_or("", String::as_str))
            .unwrap_or_else(|_| Scopes::parse("").expect("the empty scope parses")),
        issued_at: now,
        expires_at: now + 3600,
        revoked: false,
        jkt: None,
        audience: Vec::new(),
        act: None,
        client_url: None,
        auth_time: None,
        amr: Vec::new(),
        exchanged_from: Vec::new(),
    };
    match floor.codec.encode(&record).await {
        Ok(access_token) => Json(serde_json::json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": 3600,
        }))
        .into_response(),
        Err(_) => StatusCode::SERVICE_UNAVAILABLE.into_response(),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let store: Arc<dyn SigningKeyRingStore> = Arc::new(SqliteStore::open_in_dir(dir.path())?);
    let clock = Arc::new(ManualClock::starting_now());
    let mut legacy = lifecycle::legacy_document(&ManualClock::new(0));
    legacy.keys.clear();
    let factory = SigningBackend::Local.factory(&legacy.server_secret()?);
    rotation::rotate(store.as_ref(), &factory, &legacy, clock.now()).await?;
    let keys = SigningKeys::open(store, legacy, SigningBackend::Local, clock).await?;
    let floor = Arc::new(Floor {
        codec: AccessTokenCodec::new(keys, Geolocation::parse("https://us.api.example.com")?),
        client_id: ClientId::new(uuid::Uuid::new_v4()),
    });
    let app = Router::new()
        .route("/v0/token", post(token))
        .with_state(floor);
    let port = std::env::var("PORT").unwrap_or_else(|_| "8099".to_owned());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    axum::serve(listener, app).await?;
    Ok(())
}
