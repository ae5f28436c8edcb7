//! Client authentication at the token endpoint (RFC 6749 §2.3.1): `client_id` and
//! `client_secret` in the body, or HTTP Basic. Both at once must agree. A signed client
//! assertion (`private_key_jwt`) is the other method, in `client_assertion.rs`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use super::client_assertion;
use crate::clock::UnixTime;
use crate::context::Context;
use crate::domain::{Client, ClientId, SecretCheck, SecretId};
use crate::errors::{ErrorCode, GrantDenial, GrantError, OAuthError};
use crate::params::TokenParams;
use crate::secrets::Secret;
use crate::services::Services;
use crate::store::StoreError;

/// The credentials a request presents, before they are checked.
#[derive(Debug)]
struct Presented {
    id: Option<String>,
    secret: Option<Secret>,
    via_basic: bool,
}

impl Services {
    /// The client registered as `id`, or the caller's `unknown` refusal when there is none. Every
    /// endpoint that names a client looks it up this way; a store failure stays the caller's 503.
    pub async fn registered_client<E: From<StoreError>>(
        &self,
        id: &ClientId,
        unknown: impl FnOnce() -> E,
    ) -> Result<Client, E> {
        self.ctx
            .store
            .clients()
            .get_client(id)
            .await?
            .ok_or_else(unknown)
    }
}

/// Authenticates the calling client, or says why not.
pub async fn authenticate_client(
    services: &Services,
    params: &TokenParams,
    authorization: Option<&str>,
) -> Result<Client, GrantError> {
    if client_assertion::presents_assertion(params) {
        let via_basic = uses_basic(authorization);
        return client_assertion::authenticate(services, params, via_basic)
            .await
            .map_err(|error| with_basic_challenge(error, via_basic));
    }
    let presented = presented_credentials(params, authorization)?;
    let deny = |code: ErrorCode| {
        GrantError::Denied(GrantDenial {
            basic_challenge: presented.via_basic && code.error() == OAuthError::InvalidClient,
            ..GrantDenial::new(code)
        })
    };
    let id = presented
        .id
        .as_deref()
        .ok_or_else(|| deny(ErrorCode::ClientIdMissing))?;
    let secret = presented
        .secret
        .as_ref()
        .ok_or_else(|| deny(ErrorCode::ClientSecretMissing))?;
    let id = ClientId::parse(id).map_err(|_| deny(ErrorCode::ClientNotFound))?;
    let store = services.ctx.store.clients();
    let now = services.ctx.clock.now();
    let mut client = services
        .registered_client(&id, || deny(ErrorCode::ClientNotFound))
        .await?;
    let mut checked = client.check_secret(secret.expose(), now);
    if checked == SecretCheck::Wrong && store.caches_clients() {
        // A secret added elsewhere since this instance cached the client works at once too.
        client = store
            .get_client_uncached(&id)
            .await?
            .ok_or_else(|| deny(ErrorCode::ClientNotFound))?;
        checked = client.check_secret(secret.expose(), now);
    }
    let (secret_id, record_use) = match checked {
        SecretCheck::Valid { id, record_use } => (id, record_use),
        SecretCheck::Expired => return Err(deny(ErrorCode::ClientSecretExpired)),
        SecretCheck::Wrong => return Err(deny(ErrorCode::IncorrectClientSecret)),
    };
    // Only an authenticated client learns that it is disabled.
    if !client.enabled {
        return Err(deny(ErrorCode::ClientDisabled));
    }
    if record_use {
        record_secret_use(&services.ctx, &client, &secret_id, now).await;
    }
    Ok(client)
}

fn presented_credentials(
    params: &TokenParams,
    authorization: Option<&str>,
) -> Result<Presented, GrantError> {
    let body = Presented {
        id: params.get("client_id").map(str::to_owned),
        secret: params.secret("client_secret"),
        via_basic: false,
    };
    let Some(basic) = authorization.and_then(basic_credentials) else {
        return Ok(body);
    };
    let (id, secret) = basic.map_err(|code| {
        GrantError::Denied(GrantDenial {
            basic_challenge: true,
            ..GrantDenial::new(code)
        })
    })?;
    let conflicting = body.id.as_deref().is_some_and(|b| b != id)
        || body
            .secret
            .as_ref()
            .is_some_and(|b| b.expose() != secret.expose());
    if conflicting {
        return Err(ErrorCode::UnauthenticatedClient.into());
    }
    // An empty half is a missing one (62, 63), as an empty body field is.
    Ok(Presented {
        id: Some(id).filter(|id| !id.is_empty()),
        secret: Some(secret).filter(|secret| !secret.expose().is_empty()),
        via_basic: true,
    })
}

/// `error`, with `WWW-Authenticate: Basic` if it is an `invalid_client` refusal (401) to a client
/// that sent HTTP Basic, whichever check refused it (RFC 6749 §5.2).
pub fn with_basic_challenge(error: GrantError, via_basic: bool) -> GrantError {
    match error {
        GrantError::Denied(denial) if denial.code.error() == OAuthError::InvalidClient => {
            GrantError::Denied(GrantDenial {
                basic_challenge: denial.basic_challenge || via_basic,
                ..denial
            })
        }
        other => other,
    }
}

/// Whether the request's `Authorization` header is HTTP Basic, well-formed or not.
pub fn uses_basic(authorization: Option<&str>) -> bool {
    authorization.is_some_and(|header| basic_credentials(header).is_some())
}

/// `None` when the header is not Basic at all; `Some(Err)` when it is Basic but malformed.
fn basic_credentials(header: &str) -> Option<Result<(String, Secret), ErrorCode>> {
    let (scheme, value) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    Some(decode_basic(value.trim()).ok_or(ErrorCode::IncorrectClientSecret))
}

fn decode_basic(value: &str) -> Option<(String, Secret)> {
    let decoded = String::from_utf8(STANDARD.decode(value).ok()?).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    // RFC 6749 §2.3.1: both halves are form-urlencoded before being joined.
    let id = form_decode(id)?;
    let secret = form_decode(secret)?;
    Some((id, Secret::new(secret)))
}

fn form_decode(text: &str) -> Option<String> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(&format!("v={text}")).ok()?;
    pairs
        .into_iter()
        .next()
        .map(|(_, v)| v)
        .or(Some(String::new()))
}

/// Records that `secret_id` authenticated `client` at `now` (the caller has checked that it is
/// due: at most hourly). An earlier single-secret record is migrated by this write. Best
/// effort: a failure is logged and the request goes on, since `last_used` only informs.
pub async fn record_secret_use(
    ctx: &Context,
    client: &Client,
    secret_id: &SecretId,
    now: UnixTime,
) {
    let store = ctx.store.clients();
    let written = if client.secrets.is_legacy() {
        let next = client
            .secrets
            .with_use_recorded(client.created_at, secret_id, now);
        store
            .replace_client_secrets(&client.id, client.secrets.version(), &next)
            .await
    } else {
        store.record_secret_use(&client.id, secret_id, now).await
    };
    if let Err(error) = written {
        tracing::warn!(
            error = &error as &(dyn std::error::Error + 'static),
            "could not record a client secret's use"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(id: &str, secret: &str) -> String {
        format!("Basic {}", STANDARD.encode(format!("{id}:{secret}")))
    }

    #[test]
    fn basic_is_decoded_with_form_encoding() {
        let header = basic("my%20id", "s%3Acret+x");
        let (id, secret) = basic_credentials(&header).unwrap().unwrap();
        assert_eq!(id, "my id");
        assert_eq!(secret.expose(), "s:cret x");
    }

    #[test]
    fn other_schemes_are_ignored_and_garbage_is_refused() {
        assert!(basic_credentials("Bearer abc").is_none());
        assert_eq!(
            basic_credentials("Basic !!!").unwrap().unwrap_err(),
            ErrorCode::IncorrectClientSecret
        );
    }

    #[test]
    fn an_empty_half_of_basic_is_missing() {
        let params = TokenParams::from_pairs([("grant_type", "client_credentials")]).unwrap();
        let no_secret = presented_credentials(&params, Some(&basic("a", ""))).unwrap();
        assert_eq!(no_secret.id.as_deref(), Some("a"));
        assert!(no_secret.secret.is_none());
        let no_id = presented_credentials(&params, Some(&basic("", "s"))).unwrap();
        assert!(no_id.id.is_none());
        assert_eq!(
            no_id.secret.map(|s| s.expose().to_owned()).as_deref(),
            Some("s")
        );
    }

    #[test]
    fn body_and_basic_must_agree() {
        let params = TokenParams::from_pairs([("client_id", "a")]).unwrap();
        let err = presented_credentials(&params, Some(&basic("b", "s"))).unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::UnauthenticatedClient));
        let params = TokenParams::from_pairs([("client_id", "a")]).unwrap();
        let ok = presented_credentials(&params, Some(&basic("a", "s"))).unwrap();
        assert!(ok.via_basic);
    }
}
