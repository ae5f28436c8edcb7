//! SCIM 2.0 at `/scim/v2` (RFC 7644; docs/decisions.md, "SCIM provisioning"): reads the
//! request, runs `token_core::provisioning` and answers `application/scim+json`, errors as SCIM
//! errors (503 with `Retry-After` for ours, 429 for the company's limit).

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::domain::scim::schema::{ENTERPRISE_USER, GROUP, GROUP_RESOURCE, USER, USER_RESOURCE};
use crate::domain::scim::{service_provider_config, ScimError, LIST_RESPONSE_SCHEMA};
use crate::services::Services;
use token_core::provisioning::{self as scim, Failure, ListQuery, Provisioner, ScimReply};

const SCIM_JSON: &str = "application/scim+json";
/// A Bulk request's maxPayloadSize; every other request is far smaller.
const MAX_BODY_BYTES: usize = 1_048_576;

fn base(services: &Services) -> String {
    format!(
        "{}/scim/v2",
        services.geolocation().as_str().trim_end_matches('/')
    )
}

fn scim_json(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(SCIM_JSON));
    response
}

fn error_response(error: &ScimError) -> Response {
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::BAD_REQUEST);
    scim_json(status, &error.to_json())
}

fn failure_response(failure: Failure) -> Response {
    match failure {
        Failure::Scim(error) => error_response(&error),
        Failure::RateLimited { retry_after } => {
            let error = ScimError::new(429, None, "too many SCIM requests for this company");
            let mut response = error_response(&error);
            if let Ok(value) = HeaderValue::from_str(&retry_after.max(1).to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
        Failure::Server(server) => {
            let unavailable = server.is_unavailable();
            tracing::error!(
                error = &server as &(dyn std::error::Error + 'static),
                "server failure"
            );
            let status = if unavailable { 503 } else { 500 };
            let mut response =
                error_response(&ScimError::new(status, None, server.public_message()));
            if unavailable {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            response
        }
    }
}

fn reply_response(reply: ScimReply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
    let mut response = match &reply.body {
        Some(body) => scim_json(status, body),
        None => (status, Body::empty()).into_response(),
    };
    let headers = response.headers_mut();
    if let Some(value) = reply.location.and_then(|l| HeaderValue::from_str(&l).ok()) {
        headers.insert(header::LOCATION, value);
    }
    if let Some(value) = reply.etag.and_then(|e| HeaderValue::from_str(&e).ok()) {
        headers.insert(header::ETAG, value);
    }
    response
}

fn answer(outcome: Result<ScimReply, Failure>) -> Response {
    match outcome {
        Ok(reply) => reply_response(reply),
        Err(failure) => failure_response(failure),
    }
}

async fn caller(services: &Services, headers: &HeaderMap) -> Result<Provisioner, Failure> {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    scim::authenticate(services, authorization, &base(services)).await
}

/// The query's parameters; a malformed one (a `startIndex` past i64, say) is a SCIM 400.
fn parsed_query<T: serde::de::DeserializeOwned + Default>(
    raw: Option<&str>,
) -> Result<T, Box<Response>> {
    match raw {
        None => Ok(T::default()),
        Some(raw) => serde_urlencoded::from_str(raw).map_err(|_| {
            Box::new(error_response(&ScimError::bad_request(
                crate::domain::scim::ScimType::InvalidValue,
                "a query parameter is malformed",
            )))
        }),
    }
}

fn if_match(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::IF_MATCH)
        .and_then(|value| value.to_str().ok())
}

fn too_large() -> Response {
    error_response(&ScimError::new(
        413,
        None,
        "the request is larger than 1048576 bytes",
    ))
}

/// The `attributes` and `excludedAttributes` of a read.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Shown {
    attributes: Option<String>,
    excluded_attributes: Option<String>,
}

/// Which resource a route serves.
#[derive(Clone, Copy)]
enum Kind {
    Users,
    Groups,
}

async fn create(services: Arc<Services>, headers: HeaderMap, body: Bytes, kind: Kind) -> Response {
    if body.len() > MAX_BODY_BYTES {
        return too_large();
    }
    let outcome = async {
        let p = caller(&services, &headers).await?;
        match kind {
            Kind::Users => scim::create_user(&services, &p, &body).await,
            Kind::Groups => scim::create_group(&services, &p, &body).await,
        }
    };
    answer(outcome.await)
}

async fn list(
    services: Arc<Services>,
    headers: HeaderMap,
    query: ListQuery,
    kind: Kind,
) -> Response {
    let outcome = async {
        let p = caller(&services, &headers).await?;
        match kind {
            Kind::Users => scim::list_users(&services, &p, &query).await,
            Kind::Groups => scim::list_groups(&services, &p, &query).await,
        }
    };
    answer(outcome.await)
}

fn search_query(body: &[u8]) -> Result<ListQuery, Box<Response>> {
    if body.len() > MAX_BODY_BYTES {
        return Err(Box::new(too_large()));
    }
    serde_json::from_slice(body).map_err(|_| {
        Box::new(error_response(&ScimError::bad_request(
            crate::domain::scim::ScimType::InvalidSyntax,
            "the body is not a SearchRequest",
        )))
    })
}

#[utoipa::path(get, path = "/scim/v2/Users", tag = "scim",
    params(("filter" = Option<String>, Query, description = "RFC 7644 3.4.2.2"),
        ("startIndex" = Option<i64>, Query), ("count" = Option<i64>, Query, description = "At most 200"),
        ("attributes" = Option<String>, Query), ("excludedAttributes" = Option<String>, Query)),
    responses((status = 200, description = "A ListResponse of the company's users", content_type = "application/scim+json"),
        (status = 400, description = "invalidFilter", content_type = "application/scim+json"),
        (status = 401), (status = 403), (status = 429), (status = 503),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json")))]
pub async fn list_users(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Response {
    match parsed_query(raw.as_deref()) {
        Ok(query) => list(services, headers, query, Kind::Users).await,
        Err(response) => *response,
    }
}

#[utoipa::path(post, path = "/scim/v2/Users", tag = "scim",
    request_body(content_type = "application/scim+json", description = "A User"),
    responses((status = 201, description = "The created User, with Location and ETag", content_type = "application/scim+json"),
        (status = 400), (status = 401), (status = 403), (status = 409, description = "uniqueness"), (status = 429), (status = 503),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json")))]
pub async fn create_user(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    create(services, headers, body, Kind::Users).await
}

#[utoipa::path(post, path = "/scim/v2/Users/.search", tag = "scim",
    request_body(content_type = "application/scim+json", description = "A SearchRequest"),
    responses((status = 200, description = "A ListResponse", content_type = "application/scim+json"), (status = 400), (status = 401),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn search_users(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match search_query(&body) {
        Ok(query) => list(services, headers, query, Kind::Users).await,
        Err(response) => *response,
    }
}

#[utoipa::path(get, path = "/scim/v2/Users/{id}", tag = "scim",
    params(("id" = String, Path), ("attributes" = Option<String>, Query), ("excludedAttributes" = Option<String>, Query)),
    responses((status = 200, description = "The User, with ETag", content_type = "application/scim+json"), (status = 404), (status = 401),
        (status = 400, description = "A SCIM error (`scimType`)", content_type = "application/scim+json"),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn get_user(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    let shown: Shown = match parsed_query(raw.as_deref()) {
        Ok(shown) => shown,
        Err(response) => return *response,
    };
    let outcome = async {
        let p = caller(&services, &headers).await?;
        scim::get_user(
            &services,
            &p,
            &id,
            shown.attributes.as_deref(),
            shown.excluded_attributes.as_deref(),
        )
        .await
    };
    answer(outcome.await)
}

#[utoipa::path(put, path = "/scim/v2/Users/{id}", tag = "scim", params(("id" = String, Path), ("If-Match" = Option<String>, Header)),
    request_body(content_type = "application/scim+json", description = "The whole User"),
    responses((status = 200, content_type = "application/scim+json"), (status = 400), (status = 404), (status = 409), (status = 412),
        (status = 401, description = "No, a bad or a revoked credential", content_type = "application/scim+json"),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn replace_user(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if body.len() > MAX_BODY_BYTES {
        return too_large();
    }
    let outcome = async {
        let p = caller(&services, &headers).await?;
        scim::replace_user(&services, &p, &id, &body, if_match(&headers)).await
    };
    answer(outcome.await)
}

#[utoipa::path(patch, path = "/scim/v2/Users/{id}", tag = "scim", params(("id" = String, Path), ("If-Match" = Option<String>, Header)),
    request_body(content_type = "application/scim+json", description = "A PatchOp request (RFC 7644 3.5.2)"),
    responses((status = 200, content_type = "application/scim+json"), (status = 400), (status = 404), (status = 409), (status = 412),
        (status = 401, description = "No, a bad or a revoked credential", content_type = "application/scim+json"),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn patch_user(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if body.len() > MAX_BODY_BYTES {
        return too_large();
    }
    let outcome = async {
        let p = caller(&services, &headers).await?;
        scim::patch_user(&services, &p, &id, &body, if_match(&headers)).await
    };
    answer(outcome.await)
}

#[utoipa::path(delete, path = "/scim/v2/Users/{id}", tag = "scim", params(("id" = String, Path), ("If-Match" = Option<String>, Header)),
    responses((status = 204, description = "Deleted: every session, token and credential of the user ended"), (status = 404), (status = 412),
        (status = 400, description = "A SCIM error (`scimType`)", content_type = "application/scim+json"),
        (status = 401, description = "No, a bad or a revoked credential", content_type = "application/scim+json"),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn delete_user(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let outcome = async {
        let p = caller(&services, &headers).await?;
        scim::delete_user(&services, &p, &id, if_match(&headers)).await
    };
    answer(outcome.await)
}

#[utoipa::path(get, path = "/scim/v2/Groups", tag = "scim",
    params(("filter" = Option<String>, Query), ("startIndex" = Option<i64>, Query), ("count" = Option<i64>, Query),
        ("attributes" = Option<String>, Query), ("excludedAttributes" = Option<String>, Query)),
    responses((status = 200, content_type = "application/scim+json"), (status = 400), (status = 401),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn list_groups(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Response {
    match parsed_query(raw.as_deref()) {
        Ok(query) => list(services, headers, query, Kind::Groups).await,
        Err(response) => *response,
    }
}

#[utoipa::path(post, path = "/scim/v2/Groups", tag = "scim",
    request_body(content_type = "application/scim+json", description = "A Group"),
    responses((status = 201, content_type = "application/scim+json"), (status = 400), (status = 401),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn create_group(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    create(services, headers, body, Kind::Groups).await
}

#[utoipa::path(post, path = "/scim/v2/Groups/.search", tag = "scim",
    request_body(content_type = "application/scim+json", description = "A SearchRequest"),
    responses((status = 200, content_type = "application/scim+json"), (status = 400),
        (status = 401, description = "No, a bad or a revoked credential", content_type = "application/scim+json"),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn search_groups(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match search_query(&body) {
        Ok(query) => list(services, headers, query, Kind::Groups).await,
        Err(response) => *response,
    }
}

#[utoipa::path(get, path = "/scim/v2/Groups/{id}", tag = "scim",
    params(("id" = String, Path), ("attributes" = Option<String>, Query), ("excludedAttributes" = Option<String>, Query)),
    responses((status = 200, content_type = "application/scim+json"), (status = 404),
        (status = 400, description = "A SCIM error (`scimType`)", content_type = "application/scim+json"),
        (status = 401, description = "No, a bad or a revoked credential", content_type = "application/scim+json"),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn get_group(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Response {
    let shown: Shown = match parsed_query(raw.as_deref()) {
        Ok(shown) => shown,
        Err(response) => return *response,
    };
    let outcome = async {
        let p = caller(&services, &headers).await?;
        scim::get_group(
            &services,
            &p,
            &id,
            shown.attributes.as_deref(),
            shown.excluded_attributes.as_deref(),
        )
        .await
    };
    answer(outcome.await)
}

#[utoipa::path(put, path = "/scim/v2/Groups/{id}", tag = "scim", params(("id" = String, Path), ("If-Match" = Option<String>, Header)),
    request_body(content_type = "application/scim+json", description = "The whole Group"),
    responses((status = 200, content_type = "application/scim+json"), (status = 400), (status = 404), (status = 412),
        (status = 401, description = "No, a bad or a revoked credential", content_type = "application/scim+json"),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn replace_group(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if body.len() > MAX_BODY_BYTES {
        return too_large();
    }
    let outcome = async {
        let p = caller(&services, &headers).await?;
        scim::replace_group(&services, &p, &id, &body, if_match(&headers)).await
    };
    answer(outcome.await)
}

#[utoipa::path(patch, path = "/scim/v2/Groups/{id}", tag = "scim", params(("id" = String, Path), ("If-Match" = Option<String>, Header)),
    request_body(content_type = "application/scim+json", description = "A PatchOp request"),
    responses((status = 200, content_type = "application/scim+json"), (status = 400), (status = 404), (status = 412),
        (status = 401, description = "No, a bad or a revoked credential", content_type = "application/scim+json"),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn patch_group(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    if body.len() > MAX_BODY_BYTES {
        return too_large();
    }
    let outcome = async {
        let p = caller(&services, &headers).await?;
        scim::patch_group(&services, &p, &id, &body, if_match(&headers)).await
    };
    answer(outcome.await)
}

#[utoipa::path(delete, path = "/scim/v2/Groups/{id}", tag = "scim", params(("id" = String, Path), ("If-Match" = Option<String>, Header)),
    responses((status = 204), (status = 404), (status = 412),
        (status = 400, description = "A SCIM error (`scimType`)", content_type = "application/scim+json"),
        (status = 401, description = "No, a bad or a revoked credential", content_type = "application/scim+json"),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn delete_group(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let outcome = async {
        let p = caller(&services, &headers).await?;
        scim::delete_group(&services, &p, &id, if_match(&headers)).await
    };
    answer(outcome.await)
}

#[utoipa::path(post, path = "/scim/v2/Bulk", tag = "scim",
    request_body(content_type = "application/scim+json", description = "A BulkRequest: at most 100 operations and 1 MiB"),
    responses((status = 200, description = "A BulkResponse", content_type = "application/scim+json"), (status = 400), (status = 413),
        (status = 401, description = "No, a bad or a revoked credential", content_type = "application/scim+json"),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn bulk(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let outcome = async {
        let p = caller(&services, &headers).await?;
        scim::bulk(&services, &p, &body).await
    };
    answer(outcome.await)
}

#[utoipa::path(post, path = "/scim/v2/.search", tag = "scim",
    request_body(content_type = "application/scim+json", description = "A SearchRequest over Users and Groups"),
    responses((status = 200, content_type = "application/scim+json"), (status = 400),
        (status = 401, description = "No, a bad or a revoked credential", content_type = "application/scim+json"),
        (status = 403, description = "A user or application token, a token without scope scim, an inactive company", content_type = "application/scim+json"),
        (status = 413, description = "A body over 1 MiB", content_type = "application/scim+json"),
        (status = 429, description = "The company is over RATE_LIMIT_SCIM_PER_MINUTE, with Retry-After", content_type = "application/scim+json"),
        (status = 500, description = "Ours", content_type = "application/scim+json"),
        (status = 503, description = "The store failed: retry (Retry-After)", content_type = "application/scim+json")))]
pub async fn search_all(
    State(services): State<Arc<Services>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let query = match search_query(&body) {
        Ok(query) => query,
        Err(response) => return *response,
    };
    let outcome = async {
        let p = caller(&services, &headers).await?;
        // Each resource type's matches, users first; the page is taken over the union.
        let whole = ListQuery {
            start_index: Some(1),
            count: Some(200),
            ..query.clone()
        };
        let users = scim::list_users(&services, &p, &whole).await?;
        let groups = scim::list_groups(&services, &p, &whole).await?;
        let mut resources = Vec::new();
        let mut total = 0;
        for reply in [users, groups] {
            let body = reply.body.unwrap_or_default();
            total += body["totalResults"].as_u64().unwrap_or(0);
            resources.extend(body["Resources"].as_array().cloned().unwrap_or_default());
        }
        let skip = usize::try_from(query.start_index.unwrap_or(1).max(1) - 1).unwrap_or(0);
        let count = usize::try_from(query.count.unwrap_or(100).clamp(0, 200)).unwrap_or(0);
        let page: Vec<Value> = resources.into_iter().skip(skip).take(count).collect();
        Ok(ScimReply {
            status: 200,
            body: Some(json!({
                "schemas": [LIST_RESPONSE_SCHEMA],
                "totalResults": total,
                "startIndex": skip + 1,
                "itemsPerPage": page.len(),
                "Resources": page,
            })),
            location: None,
            etag: None,
        })
    };
    answer(outcome.await)
}

#[utoipa::path(get, path = "/scim/v2/ServiceProviderConfig", tag = "scim",
    responses((status = 200, description = "What this service supports", content_type = "application/scim+json")))]
pub async fn service_provider(State(services): State<Arc<Services>>) -> Response {
    scim_json(
        StatusCode::OK,
        &service_provider_config(&base(&services), None),
    )
}

fn list_of(resources: Vec<Value>) -> Value {
    json!({
        "schemas": [LIST_RESPONSE_SCHEMA],
        "totalResults": resources.len(),
        "startIndex": 1,
        "itemsPerPage": resources.len(),
        "Resources": resources,
    })
}

#[utoipa::path(get, path = "/scim/v2/ResourceTypes", tag = "scim",
    responses((status = 200, description = "User and Group", content_type = "application/scim+json")))]
pub async fn resource_types(State(services): State<Arc<Services>>) -> Response {
    let base = base(&services);
    let types = vec![USER_RESOURCE.to_json(&base), GROUP_RESOURCE.to_json(&base)];
    scim_json(StatusCode::OK, &list_of(types))
}

#[utoipa::path(get, path = "/scim/v2/ResourceTypes/{name}", tag = "scim", params(("name" = String, Path)),
    responses((status = 200, content_type = "application/scim+json"), (status = 404)))]
pub async fn resource_type(
    State(services): State<Arc<Services>>,
    Path(name): Path<String>,
) -> Response {
    let base = base(&services);
    match name.as_str() {
        "User" => scim_json(StatusCode::OK, &USER_RESOURCE.to_json(&base)),
        "Group" => scim_json(StatusCode::OK, &GROUP_RESOURCE.to_json(&base)),
        _ => error_response(&ScimError::new(404, None, "no such resource type")),
    }
}

#[utoipa::path(get, path = "/scim/v2/Schemas", tag = "scim",
    responses((status = 200, description = "The User, enterprise User and Group schemas, as supported", content_type = "application/scim+json")))]
pub async fn schemas(State(services): State<Arc<Services>>) -> Response {
    let base = base(&services);
    let all = [&USER, &ENTERPRISE_USER, &GROUP].map(|schema| schema.to_json(&base));
    scim_json(StatusCode::OK, &list_of(all.to_vec()))
}

#[utoipa::path(get, path = "/scim/v2/Schemas/{id}", tag = "scim", params(("id" = String, Path)),
    responses((status = 200, content_type = "application/scim+json"), (status = 404)))]
pub async fn schema(State(services): State<Arc<Services>>, Path(id): Path<String>) -> Response {
    let base = base(&services);
    match [&USER, &ENTERPRISE_USER, &GROUP]
        .into_iter()
        .find(|schema| schema.id == id)
    {
        Some(schema) => scim_json(StatusCode::OK, &schema.to_json(&base)),
        None => error_response(&ScimError::new(404, None, "no such schema")),
    }
}

#[utoipa::path(get, path = "/scim/v2/Me", tag = "scim",
    responses((status = 501, description = "Not implemented: a provisioning client is no user", content_type = "application/scim+json")))]
pub async fn me() -> Response {
    error_response(&ScimError::new(501, None, "/Me is not supported"))
}

/// Where every SCIM route lives.
pub(crate) const BASE_PATH: &str = "/scim/v2/";

/// Any other path under [`BASE_PATH`]: a SCIM 404, not the service's JSON one.
pub(crate) fn no_such_endpoint() -> Response {
    error_response(&ScimError::new(404, None, "no such SCIM endpoint"))
}
