//! SCIM 2.0 at `/scim/v2` (RFC 7644; docs/decisions.md, "SCIM provisioning"): reads the
//! request, runs `token_core::provisioning` and answers `application/scim+json`, errors as SCIM
//! errors (503 with `Retry-After` for ours, 429 for the company's limit).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use http::HeaderMap;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::domain::scim::{ScimError, LIST_RESPONSE_SCHEMA};
use crate::services::Services;
use token_core::provisioning::{self as scim, ListQuery, ScimReply};

mod answers;
mod discovery;

pub use discovery::*;
pub(crate) use discovery::{no_such_endpoint, BASE_PATH};

use answers::{answer, caller, error_response, if_match, parsed_query, too_large, MAX_BODY_BYTES};

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

/// What a request does to one resource.
#[derive(Clone, Copy)]
enum Change {
    Replace,
    Patch,
    Delete,
}

async fn read(
    services: Arc<Services>,
    headers: HeaderMap,
    kind: Kind,
    id: String,
    raw: Option<String>,
) -> Response {
    let shown: Shown = match parsed_query(raw.as_deref()) {
        Ok(shown) => shown,
        Err(response) => return *response,
    };
    let (attributes, excluded) = (
        shown.attributes.as_deref(),
        shown.excluded_attributes.as_deref(),
    );
    let outcome = async {
        let p = caller(&services, &headers).await?;
        match kind {
            Kind::Users => scim::get_user(&services, &p, &id, attributes, excluded).await,
            Kind::Groups => scim::get_group(&services, &p, &id, attributes, excluded).await,
        }
    };
    answer(outcome.await)
}

async fn change(
    services: Arc<Services>,
    headers: HeaderMap,
    (kind, change): (Kind, Change),
    id: String,
    body: Bytes,
) -> Response {
    if body.len() > MAX_BODY_BYTES {
        return too_large();
    }
    let outcome = async {
        let p = caller(&services, &headers).await?;
        let version = if_match(&headers);
        let (services, id) = (&services, id.as_str());
        match (kind, change) {
            (Kind::Users, Change::Replace) => {
                scim::replace_user(services, &p, id, &body, version).await
            }
            (Kind::Users, Change::Patch) => {
                scim::patch_user(services, &p, id, &body, version).await
            }
            (Kind::Users, Change::Delete) => scim::delete_user(services, &p, id, version).await,
            (Kind::Groups, Change::Replace) => {
                scim::replace_group(services, &p, id, &body, version).await
            }
            (Kind::Groups, Change::Patch) => {
                scim::patch_group(services, &p, id, &body, version).await
            }
            (Kind::Groups, Change::Delete) => scim::delete_group(services, &p, id, version).await,
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
    read(services, headers, Kind::Users, id, raw).await
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
    change(services, headers, (Kind::Users, Change::Replace), id, body).await
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
    change(services, headers, (Kind::Users, Change::Patch), id, body).await
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
    change(
        services,
        headers,
        (Kind::Users, Change::Delete),
        id,
        Bytes::new(),
    )
    .await
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
    read(services, headers, Kind::Groups, id, raw).await
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
    change(services, headers, (Kind::Groups, Change::Replace), id, body).await
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
    change(services, headers, (Kind::Groups, Change::Patch), id, body).await
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
    change(
        services,
        headers,
        (Kind::Groups, Change::Delete),
        id,
        Bytes::new(),
    )
    .await
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
