//! `POST /appmgmt/v0/legacyApps/{OLDConsumerKey}/exchangeRefreshToken/me` (docs/decisions.md,
//! "Old-token exchange"): reads the request, runs `flows::legacy_exchange` (which documents the
//! order of checks) and answers in the exchange's shape: `{"code", "error", "error_description"}`
//! with 400, except 404 for an unknown consumer key.
//!
//! Every refusal is in that shape, with a string `code` (never the token endpoint's numbers):
//! an undecodable consumer key in the path (`%FF`) names no old app (404 `INVALIDAPP`, answered
//! at its step of the order of checks, after authentication); an unreadable body (not a form
//! or JSON, a repeated parameter or JSON name) is a malformed request, 400 `INVALIDTOKEN` with
//! `invalid_request` as for a bad `returnType`, and an oversized one 413 with the same code.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use http::{header, HeaderMap, StatusCode};
use serde::Serialize;

use super::body::read_optional_params;
use super::error_response::ServerErrorBody;
use super::forms::ExchangeForm;
use super::observability::Outcome;
use super::params::BodyDenial;
use crate::errors::{ExchangeCode, OAuthError, EXCHANGE_OK};
use crate::flows::legacy_exchange::{
    exchange as run_exchange, ExchangeDenial, ExchangeError, ExchangeRequest, InvalidReturnType,
    ReturnType,
};
use crate::grants::FamilyTokens;
use crate::services::Services;

/// The only value `returnType` may have.
const COMPANY_TOKEN: &str = "companyToken";

/// The success body (docs/decisions.md, "Old-token exchange").
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct ExchangeResponse {
    code: &'static str,
    access_token: String,
    refresh_token: String,
    expires_in: i64,
    /// The refresh token's expiry, Unix seconds (docs/decisions.md, "Old-token exchange").
    refresh_expires_in: i64,
    scope: String,
    geolocation: String,
    id: String,
    principal_type: &'static str,
    /// `token`, `created`, `expired` (milliseconds) and `scopes` repeat the facts above in the
    /// shape of Concur's own exchange response.
    token: String,
    created: i64,
    expired: i64,
    scopes: Vec<String>,
}

impl ExchangeResponse {
    fn new(issued: FamilyTokens) -> Self {
        let refresh = issued.refresh;
        Self {
            code: EXCHANGE_OK,
            expires_in: issued.access.expires_at - issued.access.issued_at,
            refresh_expires_in: refresh.expires_at,
            refresh_token: refresh.token.expose().to_owned(),
            token: refresh.token.expose().to_owned(),
            created: refresh.issued_at * 1000,
            expired: refresh.expires_at * 1000,
            scope: issued.access.scopes.to_string(),
            scopes: issued.access.scopes.iter().map(str::to_owned).collect(),
            geolocation: refresh.geolocation.to_string(),
            id: issued.access.subject.hyphenated().to_string(),
            principal_type: issued.access.principal_type.as_str(),
            access_token: issued.access_token,
        }
    }
}

/// Every refusal of the exchange (docs/decisions.md, "Old-token exchange"): a named `code`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ExchangeErrorBody {
    /// `UNAUTHORIZED`, `INVALIDAPP`, `INVALIDTOKEN` or `INVALIDSCOPES`.
    code: &'static str,
    error: &'static str,
    error_description: &'static str,
}

impl IntoResponse for ExchangeDenial {
    fn into_response(self) -> Response {
        let (status, code, error, description) = match self {
            Self::Code(code) => (
                StatusCode::BAD_REQUEST,
                code,
                code.error(),
                code.description(),
            ),
            Self::UnknownConsumerKey => (
                StatusCode::NOT_FOUND,
                ExchangeCode::InvalidApp,
                OAuthError::InvalidClient,
                ExchangeCode::InvalidApp.description(),
            ),
            Self::InvalidReturnType => (
                StatusCode::BAD_REQUEST,
                ExchangeCode::InvalidToken,
                OAuthError::InvalidRequest,
                "returnType must be companyToken when present",
            ),
            Self::BodyUnreadable => (
                StatusCode::BAD_REQUEST,
                ExchangeCode::InvalidToken,
                OAuthError::InvalidRequest,
                "the body must be a form or a JSON object of strings, without repeated names",
            ),
            Self::BodyTooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                ExchangeCode::InvalidToken,
                OAuthError::InvalidRequest,
                "request body exceeds 16 KiB",
            ),
        };
        let body = ExchangeErrorBody {
            code: code.as_str(),
            error: error.as_str(),
            error_description: description,
        };
        Outcome::Name(code.as_str()).attach((status, Json(body)).into_response())
    }
}

/// Exchanges an old refresh token for a new token family.
#[utoipa::path(post, path = "/appmgmt/v0/legacyApps/{OLDConsumerKey}/exchangeRefreshToken/me",
    tag = "exchange",
    // The application token is required, but its absence is answered 400 UNAUTHORIZED like any bad
    // token (docs/decisions.md, "Old-token exchange"), not 401: described as optional so that the
    // document says what the endpoint does.
    security(("bearer" = []), ()),
    params(
        ("OLDConsumerKey" = String, Path, description = "The old application's consumer key"),
        ("returnType" = Option<String>, Query, description = "`companyToken` for a company family"),
    ),
    request_body(content(
        (ExchangeForm = "application/x-www-form-urlencoded"),
        (ExchangeForm = "application/json"),
    )),
    responses(
        (status = 200, body = ExchangeResponse),
        (status = 400, body = ExchangeErrorBody),
        (status = 404, description = "Unknown consumer key (INVALIDAPP)", body = ExchangeErrorBody),
        (status = 413, body = ExchangeErrorBody),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ))]
pub(super) async fn exchange(
    State(services): State<Arc<Services>>,
    consumer_key: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ExchangeError> {
    // An undecodable path segment names no old app: refused at step 5, after authentication.
    let consumer_key = consumer_key.map(|Path(key)| key).unwrap_or_default();
    // An empty body has no parameters, so a bare request is refused for its missing `secret`,
    // not its missing content type; any other body is a form or JSON of at most 16 KiB.
    let params = read_optional_params(&headers, body)
        .await
        .map_err(|denial| match denial {
            BodyDenial::TooLarge => ExchangeDenial::BodyTooLarge,
            BodyDenial::Format(_) => ExchangeDenial::BodyUnreadable,
        });
    let request = ExchangeRequest {
        consumer_key: &consumer_key,
        authorization: headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok()),
        params,
        return_type: return_type(query.as_deref()),
    };
    let issued = run_exchange(&services, request).await?;
    let response = Json(ExchangeResponse::new(issued)).into_response();
    Ok(Outcome::Name(EXCHANGE_OK).attach(response))
}

/// `returnType`: absent (or empty) or `companyToken`; anything else is a bad request.
fn return_type(query: Option<&str>) -> Result<ReturnType, InvalidReturnType> {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(query.unwrap_or_default()).map_err(|_| InvalidReturnType)?;
    let mut values = pairs
        .iter()
        .filter(|(name, value)| name == "returnType" && !value.is_empty())
        .map(|(_, value)| value.as_str());
    match (values.next(), values.next()) {
        (None, _) => Ok(ReturnType::Principal),
        (Some(COMPANY_TOKEN), None) => Ok(ReturnType::Company),
        _ => Err(InvalidReturnType),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Client, ConsumerKey, Geolocation};
    use crate::secrets::TokenHash;
    use crate::store::conformance::records;

    #[test]
    fn return_type_values() {
        assert_eq!(return_type(None).ok(), Some(ReturnType::Principal));
        assert_eq!(return_type(Some("")).ok(), Some(ReturnType::Principal));
        assert_eq!(
            return_type(Some("returnType=")).ok(),
            Some(ReturnType::Principal)
        );
        assert_eq!(
            return_type(Some("other=1&returnType=companyToken")).ok(),
            Some(ReturnType::Company)
        );
        for bad in [
            "returnType=userToken",
            "returnType=companytoken",
            "returnType=companyToken&returnType=companyToken",
        ] {
            assert_eq!(return_type(Some(bad)), Err(InvalidReturnType), "{bad}");
        }
    }

    #[test]
    fn success_body_uses_the_contract_names() {
        let body = serde_json::to_value(ExchangeResponse {
            code: "OK",
            access_token: "a".into(),
            refresh_token: "r".into(),
            expires_in: 3600,
            refresh_expires_in: 1_795_000_000,
            scope: "read".into(),
            geolocation: "https://us.api.example.com".into(),
            id: "id".into(),
            principal_type: "user",
            token: "r".into(),
            created: 1_779_448_000_000,
            expired: 1_795_000_000_000,
            scopes: vec!["read".into()],
        })
        .unwrap();
        let mut keys: Vec<&str> = body
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "accessToken",
                "code",
                "created",
                "expired",
                "expiresIn",
                "geolocation",
                "id",
                "principalType",
                "refreshExpiresIn",
                "refreshToken",
                "scope",
                "scopes",
                "token"
            ]
        );
    }

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
        use std::collections::BTreeSet;
        use tower::ServiceExt;

        use crate::clock::{Clock, ManualClock};
        use crate::context::Context;
        use crate::domain::{GrantType, LegacyApp, Scopes};
        use crate::jwt::AccessTokenCodec;
        use crate::random::{OsRandom, RandomExt};
        use crate::signing::KeyRing;
        use crate::store::sqlite::SqliteStore;

        let log = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(log.clone())
            .with_ansi(false)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);

        let dir = std::env::temp_dir().join(format!("exchange-log-{}", OsRandom.uuid()));
        let clock = Arc::new(ManualClock::new(1_700_000_000));
        let ctx = Context::new(Arc::new(SqliteStore::open_in_dir(&dir).unwrap()))
            .with_clock(clock.clone());
        let geolocation = Geolocation::parse("https://us.api.example.com").unwrap();
        let codec = AccessTokenCodec::new(
            Arc::new(KeyRing::generate(&OsRandom, clock.as_ref())),
            geolocation,
        );
        let services = Arc::new(Services::new(ctx, codec, Default::default()));
        let store = &services.ctx.store;
        let secret = "5f0c4b9e-secret-value";
        let client = Client {
            id: crate::domain::ClientId::new(OsRandom.uuid()),
            name: "app".into(),
            secrets: crate::domain::ClientSecrets::from_single_hash(TokenHash::of(secret)),
            allowed_scopes: Scopes::parse("read").unwrap(),
            grants: BTreeSet::from(GrantType::ALL),
            connect_url: None,
            refresh_allowed: true,
            enabled: true,
            created_at: clock.now(),
            first_party: false,
            redirect_uris: Vec::new(),
            refresh_rotation: Default::default(),
            post_logout_redirect_uris: Vec::new(),
            jwks: None,
            require_dpop: false,
        };
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
            .issue_application_token(&client, Scopes::empty())
            .await
            .unwrap()
            .access_token;

        let router = crate::http::exchange_router(services.clone());
        let send = |body: String| {
            let request =
                http::Request::post("/appmgmt/v0/legacyApps/old-app/exchangeRefreshToken/me")
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
}
