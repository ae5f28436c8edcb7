//! A SAML IdP's endpoints at `/federation/v0/saml/{idp_id}/…`: our metadata for the IdP to
//! import, the assertion consumer service (HTTP-POST) where its `Response` comes back, and the
//! single logout service (HTTP-Redirect). Every refusal is an error page with a readable
//! message and a reference (the `federation.refused` event's id), never the IdP's document.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, StatusCode};

use super::authorize::is_form;
use super::error_response::ServerErrorBody;
use super::federation::refused_page;
use super::pages::{render_signed_out, PageAnswer};
use super::params::{field, form_pairs};
use crate::cookies::Jar;
use crate::domain::{IdpId, IdpProtocol};
use crate::error_response::ErrorResponse;
use crate::flows::saml_logout::{self, SingleLogout};
use crate::flows::sign_in::{self, AcsPost, Returned};
use crate::services::Services;
use token_core::federation::saml::{self, LogoutBinding};

/// The ACS form: a base64 response of at most 256 KiB, URL-encoded (`+`, `/` and `=` take three
/// bytes each).
const MAX_ACS_FORM_BYTES: usize = 1024 * 1024;

fn idp_id(path: Result<Path<String>, PathRejection>) -> String {
    path.map(|Path(id)| id).unwrap_or_default()
}

/// The HTTP-POST binding's form fields; none for a body too large or not a form.
async fn posted_form(headers: &HeaderMap, body: Body) -> Vec<(String, String)> {
    match axum::body::to_bytes(body, MAX_ACS_FORM_BYTES).await {
        Ok(bytes) if is_form(headers) => form_pairs(&bytes).unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn unknown() -> Response {
    PageAnswer::refused("There is no such identity provider here.", None).into_response()
}

#[utoipa::path(
    get,
    path = "/federation/v0/saml/{idp_id}/metadata",
    tag = "federation",
    params(("idp_id" = String, Path, description = "The SAML identity provider's id")),
    responses(
        (status = 200, description = "Our SAML 2.0 metadata for this IdP (its entity id is this URL): the assertion consumer service, the single logout service and our signing and encryption certificates",
            content_type = "application/samlmetadata+xml", body = String),
        (status = 400, description = "No SAML identity provider of that id", content_type = "text/html", body = String),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn saml_metadata(
    State(services): State<Arc<Services>>,
    path: Result<Path<String>, PathRejection>,
) -> Response {
    let Ok(id) = IdpId::parse(&idp_id(path)) else {
        return unknown();
    };
    let idp = match services
        .ctx
        .store
        .federation()
        .get_identity_provider(&id)
        .await
    {
        Ok(idp) => idp,
        Err(error) => return crate::errors::ServerError::from(error).into_response(),
    };
    let Some(idp) = idp else {
        return unknown();
    };
    let IdpProtocol::Saml(connection) = &idp.protocol else {
        return unknown();
    };
    let document = saml::metadata_of(&services, &idp, connection);
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/samlmetadata+xml"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        document,
    )
        .into_response()
}

#[utoipa::path(
    post,
    path = "/federation/v0/saml/{idp_id}/acs",
    tag = "federation",
    params(("idp_id" = String, Path, description = "The SAML identity provider's id")),
    request_body(content_type = "application/x-www-form-urlencoded", description = "`SAMLResponse` (base64) and `RelayState`, as the HTTP-POST binding posts them"),
    responses(
        (status = 303, description = "Back to the page the sign-in left (authorize, account or device), or for a sign-in the IdP started to the account page, with `upstream`, the sealed step it continues with",
            headers(("Location" = String), ("Set-Cookie" = String))),
        (status = 400, description = "Error page: an unsigned, wrongly signed, wrapped, expired, replayed or misaddressed response, one for another request, an unsolicited one, the IdP's refusal, no account; with a reference",
            content_type = "text/html", body = String),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn saml_acs(
    State(services): State<Arc<Services>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let id = idp_id(path);
    let form = posted_form(&headers, body).await;
    let post = AcsPost {
        saml_response: field(&form, "SAMLResponse"),
        relay_state: field(&form, "RelayState"),
    };
    match sign_in::returned_from_saml(&services, &id, post).await {
        Ok(Returned::Resume {
            location,
            account_nonce,
        }) => {
            let answer = PageAnswer::redirect(StatusCode::SEE_OTHER, location);
            match account_nonce {
                Some(nonce) => answer
                    .cookies(Jar::for_site(&services).account_nonce(&nonce))
                    .into_response(),
                None => answer.into_response(),
            }
        }
        Ok(Returned::Refused { message, reference }) => refused_page(message, &reference),
        Err(error) => error.into_response(),
    }
}

#[utoipa::path(
    get,
    path = "/federation/v0/saml/{idp_id}/slo",
    tag = "federation",
    params(
        ("idp_id" = String, Path, description = "The SAML identity provider's id"),
        ("SAMLRequest" = Option<String>, Query, description = "The IdP's `LogoutRequest` (HTTP-Redirect binding): ends the sessions it started for that NameID"),
        ("SAMLResponse" = Option<String>, Query, description = "The IdP's `LogoutResponse` to ours"),
        ("RelayState" = Option<String>, Query, description = "Carried back as it was sent"),
        ("SigAlg" = Option<String>, Query, description = "RSA with SHA-256 or stronger"),
        ("Signature" = Option<String>, Query, description = "The binding's signature, by a certificate of the IdP's metadata"),
    ),
    responses(
        (status = 302, description = "Our signed `LogoutResponse` to the IdP, or on to where our sign-out ends",
            headers(("Location" = String))),
        (status = 200, description = "The signed-out page", content_type = "text/html", body = String),
        (status = 400, description = "Error page: unsigned, wrongly signed or misaddressed; nothing changed; with a reference",
            content_type = "text/html", body = String),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn saml_slo(
    State(services): State<Arc<Services>>,
    path: Result<Path<String>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Response {
    let id = idp_id(path);
    let query = query.unwrap_or_default();
    let binding = LogoutBinding::Redirect { query: &query };
    logged_out(saml_logout::single_logout(&services, &id, binding).await)
}

#[utoipa::path(
    post,
    path = "/federation/v0/saml/{idp_id}/slo",
    operation_id = "saml_slo_post",
    tag = "federation",
    params(("idp_id" = String, Path, description = "The SAML identity provider's id")),
    request_body(content_type = "application/x-www-form-urlencoded", description = "`SAMLRequest` or `SAMLResponse` (base64, signed with an enveloped XML Signature by the IdP) and `RelayState`, as the HTTP-POST binding posts them"),
    responses(
        (status = 302, description = "Our signed `LogoutResponse` to the IdP, or on to where our sign-out ends",
            headers(("Location" = String))),
        (status = 200, description = "The signed-out page", content_type = "text/html", body = String),
        (status = 400, description = "Error page: unsigned, wrongly signed or misaddressed; nothing changed; with a reference",
            content_type = "text/html", body = String),
        (status = 500, body = ServerErrorBody),
        (status = 503, body = ServerErrorBody),
    ),
)]
pub async fn saml_slo_post(
    State(services): State<Arc<Services>>,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let id = idp_id(path);
    let form = posted_form(&headers, body).await;
    let message = field(&form, "SAMLRequest")
        .or(field(&form, "SAMLResponse"))
        .unwrap_or_default();
    let binding = LogoutBinding::Post {
        message,
        relay_state: field(&form, "RelayState"),
    };
    logged_out(saml_logout::single_logout(&services, &id, binding).await)
}

fn logged_out(outcome: Result<SingleLogout, crate::errors::ServerError>) -> Response {
    match outcome {
        Ok(SingleLogout::Redirect(location)) => {
            PageAnswer::redirect(StatusCode::FOUND, location).into_response()
        }
        Ok(SingleLogout::SignedOut) => PageAnswer::page(render_signed_out()).into_response(),
        Ok(SingleLogout::Refused { message, reference }) => refused_page(message, &reference),
        Err(error) => error.into_response(),
    }
}
