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
use http::{header, HeaderMap};

use super::body::read_optional_pairs;
use super::error_response::ServerErrorBody;
use super::observability::Outcome;
use super::params::BodyDenial;
use crate::error_response::ErrorResponse;
use crate::errors::EXCHANGE_OK;
use crate::flows::legacy_exchange::{
    exchange as run_exchange, ExchangeDenial, ExchangeRequest, InvalidReturnType, ReturnType,
};
use crate::requests::{ExchangeBody, FromParameters};
use crate::services::Services;
use answers::{ExchangeErrorBody, ExchangeResponse};

mod answers;
#[cfg(test)]
mod tests;

/// The only value `returnType` may have.
const COMPANY_TOKEN: &str = "companyToken";

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
        (ExchangeBody = "application/x-www-form-urlencoded"),
        (ExchangeBody = "application/json"),
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
) -> Response {
    // An undecodable path segment names no old app: refused at step 5, after authentication.
    let consumer_key = consumer_key.map(|Path(key)| key).unwrap_or_default();
    // An empty body has no parameters, so a bare request is refused for its missing `secret`,
    // not its missing content type; any other body is a form or JSON of at most 16 KiB.
    let body = read_optional_pairs(&headers, body)
        .await
        .and_then(|pairs| ExchangeBody::parse(pairs).map_err(BodyDenial::Format))
        .map_err(|denial| match denial {
            BodyDenial::TooLarge => ExchangeDenial::BodyTooLarge,
            BodyDenial::Format(_) => ExchangeDenial::BodyUnreadable,
        });
    let request = ExchangeRequest {
        consumer_key: &consumer_key,
        authorization: headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok()),
        body,
        return_type: return_type(query.as_deref()),
    };
    match run_exchange(&services, request).await {
        Ok(issued) => {
            let response = Json(ExchangeResponse::new(issued)).into_response();
            Outcome::Name(EXCHANGE_OK).attach(response)
        }
        Err(refusal) => refusal.into_response(),
    }
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
mod return_type_tests {
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
            assert_eq!(return_type(Some(bad)), Err(InvalidReturnType), "{bad}");
        }
    }
}
