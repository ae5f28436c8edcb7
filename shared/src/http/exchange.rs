//! `POST /appmgmt/v0/legacyApps/{OLDConsumerKey}/exchangeRefreshToken/me` (contract part 3):
//! an old refresh token of the deprecated framework in, a new token family out.
//!
//! Order of checks, so that nothing is revealed to a caller that has not earned it:
//!
//! 1. the application token (`Authorization: Bearer`, from `client_credentials`): `UNAUTHORIZED`;
//! 2. the calling app exists (`INVALIDAPP`); the body is read (16 KiB, form or JSON);
//! 3. `secret` is the calling app's client secret, compared in constant time: `UNAUTHORIZED`;
//! 4. the app is enabled (`INVALIDAPP`), `token` is present (`INVALIDTOKEN`), `returnType` is
//!    absent or `companyToken` (`INVALIDTOKEN` with `invalid_request`);
//! 5. the consumer key: unknown answers 404 `INVALIDAPP`, linked to another app 400 `INVALIDAPP`;
//! 6. the old token: unknown, expired, issued to another old app, or not WSAdmin when a company
//!    token is asked: `INVALIDTOKEN`; its scopes within the app's: `INVALIDSCOPES`;
//! 7. the principal, if we know it, is not disabled (`INVALIDTOKEN`);
//! 8. the family is created together with the old token's link, revoking the family a previous
//!    exchange of the same old token created, in one conditional write.
//!
//! Nothing is written before step 8, and step 8 is all or nothing.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use http::{header, HeaderMap, StatusCode};
use serde::Serialize;
use serde_json::json;

use super::body::read_optional_params;
use super::error_response::store_error_response;
use uuid::Uuid;

use crate::domain::{
    Client, CompanyStatus, ConsumerKey, FamilyId, Geolocation, LegacyExchange, LegacyToken,
    PrincipalId, PrincipalType, UserStatus,
};
use crate::errors::{ExchangeCode, OAuthError};
use crate::grants::{authenticate_bearer, FamilyStart, IssuedTokens, TokenParams};
use crate::secrets::TokenHash;
use crate::services::Services;
use crate::store::{LegacyExchangeUpdate, StoreError};

pub const EXCHANGE_PATH: &str = "/appmgmt/v0/legacyApps/{OLDConsumerKey}/exchangeRefreshToken/me";

/// The only value `returnType` may have.
const COMPANY_TOKEN: &str = "companyToken";

pub(super) fn routes(services: Arc<Services>) -> Router {
    Router::new()
        .route(EXCHANGE_PATH, post(exchange))
        .with_state(services)
}

/// The success body (contract part 3).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExchangeResponse {
    code: &'static str,
    access_token: String,
    refresh_token: String,
    expires_in: i64,
    refresh_expires_in: i64,
    scope: String,
    geolocation: String,
    id: String,
    principal_type: &'static str,
}

impl ExchangeResponse {
    fn new(issued: IssuedTokens) -> Self {
        let refresh = issued
            .refresh
            .expect("an exchange always starts a family with a refresh token");
        Self {
            code: ExchangeCode::Ok.as_str(),
            expires_in: issued.access.expires_at - issued.access.issued_at,
            refresh_expires_in: refresh.expires_in,
            refresh_token: refresh.token.expose().to_owned(),
            scope: issued.access.scopes.to_string(),
            geolocation: refresh.geolocation.to_string(),
            id: issued.access.subject.hyphenated().to_string(),
            principal_type: issued.access.principal_type.as_str(),
            access_token: issued.access_token,
        }
    }
}

/// What the exchange answers instead of tokens.
enum Failure {
    /// `{"code", "error", "error_description"}` with the code's status (400) or another.
    Refused {
        status: StatusCode,
        code: ExchangeCode,
        error: OAuthError,
        description: &'static str,
    },
    /// A response already made (oversized or unreadable body). Boxed: a `Response` is large.
    Response(Box<Response>),
    Store(StoreError),
}

impl Failure {
    fn refused(code: ExchangeCode) -> Self {
        Self::Refused {
            status: code.status(),
            code,
            error: code.error().expect("a failure code has an error"),
            description: code.description(),
        }
    }

    fn into_response(self) -> Response {
        match self {
            Self::Refused {
                status,
                code,
                error,
                description,
            } => {
                tracing::Span::current().record("code", code.as_str());
                let body = json!({
                    "code": code.as_str(),
                    "error": error.as_str(),
                    "error_description": description,
                });
                (status, Json(body)).into_response()
            }
            Self::Response(response) => *response,
            Self::Store(error) => store_error_response(&error),
        }
    }
}

impl From<ExchangeCode> for Failure {
    fn from(code: ExchangeCode) -> Self {
        Self::refused(code)
    }
}

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

async fn exchange(
    State(services): State<Arc<Services>>,
    Path(consumer_key): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match run(&services, &consumer_key, query.as_deref(), &headers, body).await {
        Ok(issued) => {
            tracing::Span::current().record("code", ExchangeCode::Ok.as_str());
            Json(ExchangeResponse::new(issued)).into_response()
        }
        Err(failure) => failure.into_response(),
    }
}

/// What the caller asked for with `returnType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReturnType {
    /// The old token's own principal (a WSAdmin token: the admin user).
    Principal,
    /// `companyToken`: the company a WSAdmin token administers.
    Company,
}

async fn run(
    services: &Services,
    consumer_key: &str,
    query: Option<&str>,
    headers: &HeaderMap,
    body: Body,
) -> Result<IssuedTokens, Failure> {
    let store = &services.ctx.store;
    let span = tracing::Span::current();

    // 1. The application token.
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let bearer = match authenticate_bearer(services, authorization).await? {
        Ok(bearer) => bearer,
        Err(rejection) => {
            tracing::info!(reason = %rejection, "exchange: bearer token refused");
            return Err(ExchangeCode::Unauthorized.into());
        }
    };
    span.record("client_id", tracing::field::display(bearer.client_id()));
    if bearer.principal_type() != PrincipalType::Application {
        tracing::info!(
            principal_type = %bearer.principal_type(),
            "exchange: bearer token is not an application token"
        );
        return Err(ExchangeCode::Unauthorized.into());
    }

    // 2. The calling app, and the body.
    let client = store
        .get_client(&bearer.client_id())
        .await?
        .ok_or(ExchangeCode::InvalidApp)?;
    let params = read_body(headers, body).await?;

    // 3. The app's own secret proves the caller holds more than a (possibly leaked) token.
    let secret_ok = params
        .get("secret")
        .is_some_and(|secret| client.secret_hash.verify(secret));
    if !secret_ok {
        return Err(ExchangeCode::Unauthorized.into());
    }

    // 4. The app's state and the request's shape.
    if !client.enabled {
        return Err(ExchangeCode::InvalidApp.into());
    }
    // Only the digest is kept: the old token is looked up by it, like every stored credential.
    let hash = params
        .get("token")
        .map(TokenHash::of)
        .ok_or(ExchangeCode::InvalidToken)?;
    let return_type = return_type(query)?;

    // 5. The consumer key.
    let legacy_app = match ConsumerKey::parse(consumer_key) {
        Ok(key) => store.get_legacy_app(&key).await?,
        Err(_) => None,
    };
    let Some(legacy_app) = legacy_app else {
        return Err(Failure::Refused {
            status: StatusCode::NOT_FOUND,
            code: ExchangeCode::InvalidApp,
            error: OAuthError::InvalidClient,
            description: ExchangeCode::InvalidApp.description(),
        });
    };
    if legacy_app.client_id != client.id {
        return Err(ExchangeCode::InvalidApp.into());
    }

    // 6. The old token.
    let now = services.ctx.clock.now();
    let legacy = store
        .get_legacy_token(&hash, now)
        .await?
        .filter(|t| !t.is_expired(now) && t.consumer_key == legacy_app.consumer_key)
        .ok_or(ExchangeCode::InvalidToken)?;
    let (principal_type, principal_id) = principal(&legacy, return_type)?;
    if !legacy.scopes.is_subset_of(&client.allowed_scopes) {
        return Err(ExchangeCode::InvalidScopes.into());
    }

    // 7. The principal's state and home.
    let geolocation = principal_home(services, principal_type, &principal_id)
        .await?
        .ok_or(ExchangeCode::InvalidToken)?;

    // 8. One family per old token: this one replaces the previous exchange's.
    start_family(
        services,
        &client,
        &legacy,
        hash,
        principal_type,
        principal_id,
        geolocation,
    )
    .await
}

/// The body's parameters. An empty body has none, so a bare request is refused for its missing
/// `secret`, not its missing content type; any other body is a form or JSON of at most 16 KiB,
/// refused in the token endpoint's shape (413, or code 135).
async fn read_body(headers: &HeaderMap, body: Body) -> Result<TokenParams, Failure> {
    read_optional_params(headers, body)
        .await
        .map_err(|refusal| Failure::Response(Box::new(refusal.into_response())))
}

/// `returnType`: absent (or empty) or `companyToken`; anything else is a bad request.
fn return_type(query: Option<&str>) -> Result<ReturnType, Failure> {
    let bad = || Failure::Refused {
        status: StatusCode::BAD_REQUEST,
        code: ExchangeCode::InvalidToken,
        error: OAuthError::InvalidRequest,
        description: "returnType must be companyToken when present",
    };
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(query.unwrap_or_default()).map_err(|_| bad())?;
    let mut values = pairs
        .iter()
        .filter(|(name, value)| name == "returnType" && !value.is_empty())
        .map(|(_, value)| value.as_str());
    match (values.next(), values.next()) {
        (None, _) => Ok(ReturnType::Principal),
        (Some(COMPANY_TOKEN), None) => Ok(ReturnType::Company),
        _ => Err(bad()),
    }
}

/// Whom the new family is for.
fn principal(
    legacy: &LegacyToken,
    return_type: ReturnType,
) -> Result<(PrincipalType, PrincipalId), Failure> {
    match return_type {
        ReturnType::Principal => Ok((legacy.principal_type, legacy.principal_id)),
        ReturnType::Company => match (legacy.wsadmin, legacy.company_id) {
            (true, Some(company)) => Ok((PrincipalType::Company, company)),
            _ => Err(ExchangeCode::InvalidToken.into()),
        },
    }
}

/// The principal's home deployment if we know the principal, this deployment's otherwise;
/// `None` if the principal is disabled (its family would be refused at the first refresh).
async fn principal_home(
    services: &Services,
    principal_type: PrincipalType,
    id: &PrincipalId,
) -> Result<Option<Geolocation>, StoreError> {
    let store = &services.ctx.store;
    let known = match principal_type {
        PrincipalType::User => store
            .get_user(id)
            .await?
            .map(|user| (user.status != UserStatus::Disabled, user.geolocation)),
        PrincipalType::Company => store.get_company(id).await?.map(|company| {
            (
                company.status != CompanyStatus::Disabled,
                company.geolocation,
            )
        }),
        // The import accepts only users and companies.
        PrincipalType::Application => return Ok(None),
    };
    Ok(match known {
        Some((true, home)) => Some(home),
        Some((false, _)) => None,
        None => Some(services.geolocation().clone()),
    })
}

/// Creates the family and moves the old token's link to it, revoking the previous exchange's
/// family in the same write. A concurrent exchange of the same old token that moved the link
/// first makes the write fail without effect; it is retried once against the fresh link (this
/// request then supersedes the concurrent one, as a later retry would), and a second loss
/// answers 503 so that the client retries.
async fn start_family(
    services: &Services,
    client: &Client,
    legacy: &LegacyToken,
    hash: TokenHash,
    principal_type: PrincipalType,
    principal_id: PrincipalId,
    geolocation: Geolocation,
) -> Result<IssuedTokens, Failure> {
    const ATTEMPTS: usize = 2;
    for _ in 0..ATTEMPTS {
        let previous = services.ctx.store.get_legacy_exchange(&hash).await?;
        let start = FamilyStart {
            client_id: client.id,
            principal_type,
            principal_id,
            scopes: legacy.scopes.clone(),
            geolocation: geolocation.clone(),
            legacy_exchange: Some(LegacyExchangeUpdate {
                exchange: LegacyExchange {
                    token_hash: hash.clone(),
                    // Set to the new family's id by `Services::start_family`.
                    family_id: FamilyId::new(Uuid::nil()),
                    exchanged_at: services.ctx.clock.now(),
                },
                previous_family: previous.as_ref().map(|p| p.family_id),
            }),
        };
        if let Some(issued) = services.start_family(start).await? {
            if let Some(previous) = previous {
                tracing::info!(
                    revoked_family_id = %previous.family_id,
                    "exchange: old token exchanged again; previous family revoked"
                );
            }
            return Ok(issued);
        }
        tracing::warn!("exchange: concurrent exchange of the same old token; retrying");
    }
    Err(StoreError::Unavailable("concurrent exchanges of one old token".into()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert!(
                matches!(
                    return_type(Some(bad)),
                    Err(Failure::Refused {
                        status: StatusCode::BAD_REQUEST,
                        code: ExchangeCode::InvalidToken,
                        error: OAuthError::InvalidRequest,
                        ..
                    })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn success_body_uses_the_contract_names() {
        let body = serde_json::to_value(ExchangeResponse {
            code: "OK",
            access_token: "a".into(),
            refresh_token: "r".into(),
            expires_in: 3600,
            refresh_expires_in: 15_552_000,
            scope: "read".into(),
            geolocation: "https://us.api.example.com".into(),
            id: "id".into(),
            principal_type: "user",
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
                "expiresIn",
                "geolocation",
                "id",
                "principalType",
                "refreshExpiresIn",
                "refreshToken",
                "scope"
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
            secret_hash: TokenHash::of(secret),
            allowed_scopes: Scopes::parse("read").unwrap(),
            grants: BTreeSet::from(GrantType::ALL),
            connect_url: None,
            refresh_allowed: true,
            enabled: true,
            created_at: clock.now(),
        };
        store.put_client(&client).await.unwrap();
        let key = ConsumerKey::parse("old-app").unwrap();
        store
            .put_legacy_app(&LegacyApp {
                consumer_key: key.clone(),
                client_id: client.id,
                linked_at: clock.now(),
            })
            .await
            .unwrap();
        let old = "old-token-value-1234";
        store
            .put_legacy_tokens(&[LegacyToken {
                token_hash: TokenHash::of(old),
                consumer_key: key,
                principal_type: PrincipalType::User,
                principal_id: PrincipalId::new(OsRandom.uuid()),
                scopes: Scopes::parse("read").unwrap(),
                wsadmin: false,
                company_id: None,
                expires_at: None,
            }])
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
