//! The relying party of a company's OpenID Provider: the authorization request (the code flow
//! with PKCE `S256`, `state` and `nonce`), the code's redemption at the IdP's token endpoint
//! (`client_secret_basic`, or `client_secret_post` when the connection says so) and the ID
//! token's checks, which the `openidconnect` crate makes: a signature by a key of the IdP's
//! JWKS in an asymmetric algorithm (never `none`, never HS256 with the client secret), `iss`,
//! `aud` and `azp`, `exp`, `nonce`; `iat` within five minutes is ours.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use openidconnect::core::{CoreIdToken, CoreIdTokenVerifier, CoreJwsSigningAlgorithm};
use openidconnect::{
    ClaimsVerificationError, ClientId, IssuerUrl, Nonce, SignatureVerificationError,
};
use std::str::FromStr;
use url::Url;

use crate::clock::UnixTime;
use crate::domain::pkce::s256_challenge;
use crate::domain::{AuthMethod, OidcConnection, TokenEndpointAuth, UpstreamSubject};
use crate::idp_documents::{Provider, ProviderError};
use crate::services::Services;

/// How far an ID token's `iat` may lie from our clock, either way.
pub const ISSUED_AT_LEEWAY_SECONDS: i64 = 300;

const IAT: &str = "iat is not within the leeway";

/// The algorithms an upstream ID token may be signed with: public-key ones only.
pub(crate) const ALLOWED_ALGORITHMS: [CoreJwsSigningAlgorithm; 10] = [
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
    CoreJwsSigningAlgorithm::RsaSsaPssSha256,
    CoreJwsSigningAlgorithm::RsaSsaPssSha384,
    CoreJwsSigningAlgorithm::RsaSsaPssSha512,
    CoreJwsSigningAlgorithm::EcdsaP256Sha256,
    CoreJwsSigningAlgorithm::EcdsaP384Sha384,
    CoreJwsSigningAlgorithm::EcdsaP521Sha512,
    CoreJwsSigningAlgorithm::EdDsa,
];

/// Who the IdP says signed in, and how.
#[derive(Debug, Clone)]
pub struct UpstreamIdentity {
    pub subject: UpstreamSubject,
    /// Only when the IdP said it is verified.
    pub email: Option<String>,
    /// The methods the IdP reported (RFC 8176 names we know; others are left out).
    pub amr: Vec<AuthMethod>,
    /// When the user authenticated at the IdP, if it said.
    pub auth_time: Option<UnixTime>,
    /// The ID token itself, for the IdP's logout (`id_token_hint`); never logged.
    pub id_token: String,
}

/// Why a sign-in at the IdP did not give us a user. Each is a reason of `federation.refused`.
#[derive(Debug, thiserror::Error)]
pub enum OidcRefusal {
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error("the identity provider's token endpoint refused the code ({0})")]
    TokenEndpoint(http::StatusCode),
    #[error("the identity provider's token answer is not valid")]
    TokenAnswer,
    #[error("the ID token is not signed by a key of the identity provider")]
    Signature,
    #[error("the ID token's algorithm is not allowed")]
    Algorithm,
    #[error("the ID token names another issuer")]
    Issuer,
    #[error("the ID token is for another client")]
    Audience,
    #[error("the ID token has expired")]
    Expired,
    #[error("the ID token was not issued now")]
    IssuedAt,
    #[error("the ID token's nonce is not this sign-in's")]
    Nonce,
    #[error("the ID token is not valid")]
    Malformed,
}

impl OidcRefusal {
    /// The audit event's reason: a fixed word, never upstream text.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Provider(_) => "idp_unavailable",
            Self::TokenEndpoint(_) | Self::TokenAnswer => "token_endpoint",
            Self::Signature => "signature",
            Self::Algorithm => "algorithm",
            Self::Issuer => "issuer",
            Self::Audience => "audience",
            Self::Expired => "expired",
            Self::IssuedAt => "issued_at",
            Self::Nonce => "nonce",
            Self::Malformed => "malformed",
        }
    }
}

/// What is sent to the IdP, and what must be kept to check its answer.
#[derive(Debug)]
pub struct AuthorizationRequest {
    pub location: String,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

/// The one field of the IdP's token answer we read.
#[derive(serde::Deserialize)]
struct TokenAnswer {
    id_token: String,
}

/// Where our callback is, as registered at the IdP.
pub fn redirect_uri(services: &Services) -> String {
    format!(
        "{}/federation/v0/oidc/callback",
        services.geolocation().as_str().trim_end_matches('/')
    )
}

/// The authorization request to the IdP, with fresh `state`, `nonce` and PKCE verifier.
pub fn authorization_request(
    services: &Services,
    provider: &Provider,
    oidc: &OidcConnection,
    login_hint: Option<&str>,
) -> Result<AuthorizationRequest, ProviderError> {
    let random = services.ctx.random.as_ref();
    let token = || {
        let mut bytes = [0u8; 32];
        random.fill(&mut bytes);
        URL_SAFE_NO_PAD.encode(bytes)
    };
    let (state, nonce, pkce_verifier) = (token(), token(), token());
    let mut location = Url::parse(provider.metadata.authorization_endpoint().as_str())
        .map_err(|_| ProviderError::Invalid("authorization endpoint"))?;
    {
        let mut query = location.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &oidc.client_id)
            .append_pair("redirect_uri", &redirect_uri(services))
            .append_pair("scope", &oidc.scopes.join(" "))
            .append_pair("state", &state)
            .append_pair("nonce", &nonce)
            .append_pair("code_challenge", &s256_challenge(&pkce_verifier))
            .append_pair("code_challenge_method", "S256");
        if let Some(hint) = login_hint.filter(|hint| !hint.is_empty()) {
            query.append_pair("login_hint", hint);
        }
    }
    Ok(AuthorizationRequest {
        location: location.into(),
        state,
        nonce,
        pkce_verifier,
    })
}

/// The code redeemed at the IdP and its ID token checked: who signed in.
pub async fn redeem(
    services: &Services,
    oidc: &OidcConnection,
    client_secret: &str,
    code: &str,
    pkce_verifier: &str,
    nonce: &str,
) -> Result<UpstreamIdentity, OidcRefusal> {
    let providers = &services.upstream;
    let now = services.ctx.clock.now();
    let provider = providers.get(&oidc.issuer, now).await?;
    let token_endpoint = provider
        .metadata
        .token_endpoint()
        .ok_or(ProviderError::Invalid("token endpoint"))?
        .to_string();
    let redirect_uri = redirect_uri(services);
    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect_uri.as_str()),
        ("code_verifier", pkce_verifier),
    ];
    let basic = match oidc.token_endpoint_auth {
        TokenEndpointAuth::ClientSecretBasic => Some(basic_credentials(oidc, client_secret)),
        TokenEndpointAuth::ClientSecretPost => {
            form.push(("client_id", &oidc.client_id));
            form.push(("client_secret", client_secret));
            None
        }
    };
    let response = providers
        .fetcher()
        .post_token_request(&token_endpoint, &form, basic.as_deref())
        .await
        .map_err(ProviderError::from)?;
    if response.status != http::StatusCode::OK {
        return Err(OidcRefusal::TokenEndpoint(response.status));
    }
    let answer: TokenAnswer =
        serde_json::from_slice(&response.body).map_err(|_| OidcRefusal::TokenAnswer)?;
    match verify_id_token(&answer.id_token, &provider, oidc, nonce, now) {
        Err(OidcRefusal::Signature) => {
            // Perhaps a key the IdP rolled to since we read its keys: read them again, once.
            let Some(renewed) = providers.with_new_keys(&oidc.issuer, now).await? else {
                return Err(OidcRefusal::Signature);
            };
            verify_id_token(&answer.id_token, &renewed, oidc, nonce, now)
        }
        checked => checked,
    }
}

/// RFC 6749 §2.3.1: the client id and secret, each form-encoded, as Basic credentials.
fn basic_credentials(oidc: &OidcConnection, client_secret: &str) -> String {
    let encode =
        |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", encode(&oidc.client_id), encode(client_secret));
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// Every check of an ID token from `provider` for this sign-in.
pub fn verify_id_token(
    id_token: &str,
    provider: &Provider,
    oidc: &OidcConnection,
    nonce: &str,
    now: UnixTime,
) -> Result<UpstreamIdentity, OidcRefusal> {
    let parsed = CoreIdToken::from_str(id_token).map_err(|_| OidcRefusal::Malformed)?;
    let issuer = IssuerUrl::new(oidc.issuer.clone()).map_err(|_| OidcRefusal::Issuer)?;
    let at = |seconds: i64| DateTime::<Utc>::from_timestamp(seconds, 0).unwrap_or_default();
    let verifier = CoreIdTokenVerifier::new_public_client(
        ClientId::new(oidc.client_id.clone()),
        issuer,
        provider.keys.clone(),
    )
    .set_allowed_algs(ALLOWED_ALGORITHMS)
    .set_time_fn(move || at(now))
    .set_issue_time_verifier_fn(move |issued: DateTime<Utc>| {
        let skew = (issued.timestamp() - now).abs();
        if skew <= ISSUED_AT_LEEWAY_SECONDS {
            Ok(())
        } else {
            Err(IAT.to_owned())
        }
    });
    let claims = parsed
        .claims(&verifier, &Nonce::new(nonce.to_owned()))
        .map_err(refusal_of)?;
    let subject = UpstreamSubject::new(claims.issuer().as_str(), claims.subject().as_str())
        .map_err(|_| OidcRefusal::Malformed)?;
    let email = claims
        .email()
        .filter(|_| claims.email_verified() == Some(true))
        .map(|email| email.as_str().to_owned());
    let amr = claims
        .auth_method_refs()
        .map(|methods| {
            methods
                .iter()
                .filter_map(|method| AuthMethod::parse(method.as_str()))
                .collect()
        })
        .unwrap_or_default();
    Ok(UpstreamIdentity {
        subject,
        email,
        amr,
        auth_time: claims.auth_time().map(|time| time.timestamp()),
        id_token: id_token.to_owned(),
    })
}

fn refusal_of(error: ClaimsVerificationError) -> OidcRefusal {
    match error {
        // Our `iat` check answers through the crate's expiry error, with this text.
        ClaimsVerificationError::Expired(reason) if reason == IAT => OidcRefusal::IssuedAt,
        ClaimsVerificationError::Expired(_) => OidcRefusal::Expired,
        ClaimsVerificationError::InvalidAudience(_) => OidcRefusal::Audience,
        ClaimsVerificationError::InvalidIssuer(_) => OidcRefusal::Issuer,
        ClaimsVerificationError::InvalidNonce(_) => OidcRefusal::Nonce,
        ClaimsVerificationError::SignatureVerification(
            SignatureVerificationError::DisallowedAlg(_)
            | SignatureVerificationError::UnsupportedAlg(_)
            | SignatureVerificationError::NoSignature,
        ) => OidcRefusal::Algorithm,
        ClaimsVerificationError::SignatureVerification(_) => OidcRefusal::Signature,
        _ => OidcRefusal::Malformed,
    }
}
