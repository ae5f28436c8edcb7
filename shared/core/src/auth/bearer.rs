//! Bearer authentication (RFC 6750 §2.1) with our own access tokens, for the endpoints that are
//! called with one: the old-token exchange (an application token) and the company auth-token
//! endpoint (a user's token).
//!
//! A token is accepted when its signature, `typ`, issuer, audience and expiry verify against the
//! injected clock, and its `jti` is still in the store and not revoked. Which principal type the
//! endpoint needs is the caller's check ([`BearerToken::principal_type`]).

use crate::domain::{AccessTokenRecord, ClientId, PrincipalId, PrincipalType, TokenId, UserStatus};
use crate::errors::{Denial, Refusal, ServerError};
use crate::jwt::{AccessTokenClaims, InvalidAccessToken};
use crate::services::Services;

/// A verified, live access token. Holds no credential: the token itself is not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BearerToken {
    pub claims: AccessTokenClaims,
    /// The persisted side, as the store has it now.
    pub record: AccessTokenRecord,
}

impl BearerToken {
    /// The client the token was issued to (for an application token: the calling app).
    pub fn client_id(&self) -> ClientId {
        self.record.client_id
    }

    pub fn principal_type(&self) -> PrincipalType {
        self.record.principal_type
    }

    /// The `sub`: the principal, or the client itself for application tokens.
    pub fn subject(&self) -> uuid::Uuid {
        self.record.subject
    }
}

/// Why a request is not authenticated. Every variant means "no, bad or expired token" to the
/// caller; the variants exist for the log (they never contain the token).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BearerDenial {
    /// No `Authorization` header, or another scheme (Basic).
    #[error("no bearer token")]
    Missing,
    /// `Bearer` with an empty or malformed credential.
    #[error("malformed Authorization header")]
    MalformedHeader,
    /// Signature, `typ`, issuer, audience or expiry did not verify.
    #[error("invalid access token: {0}")]
    Invalid(InvalidAccessToken),
    /// The `jti` is not in the store (its record expired or was never written), or the record
    /// does not match the token's claims.
    #[error("access token unknown to the store")]
    Unknown,
    /// The token, or its family, was revoked.
    #[error("access token revoked")]
    Revoked,
    /// A DPoP-bound token (RFC 9449 §7.2) presented as a bearer token: it needs its proof.
    #[error("DPoP-bound access token presented as a bearer token")]
    DpopBound,
    /// A bearer token presented with the `DPoP` scheme: no key to check the proof against.
    #[error("bearer access token presented with the DPoP scheme")]
    NotDpopBound,
}

/// The token of an `Authorization: Bearer <token>` header value. The scheme is
/// case-insensitive (RFC 9110 §11.1). `Err(Missing)` for another scheme or no credentials.
pub fn bearer_credential(authorization: &str) -> Result<&str, BearerDenial> {
    let value = authorization.trim();
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(BearerDenial::Missing);
    }
    let token = rest.trim_start_matches(' ');
    // RFC 6750 b64token: one run of visible characters.
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(BearerDenial::MalformedHeader);
    }
    Ok(token)
}

/// Why a bearer token did not authenticate the request, or the store failed.
pub type BearerError = Refusal<BearerDenial>;

impl Denial for BearerDenial {}

/// Authenticates the `Authorization` header value.
pub async fn authenticate_bearer(
    services: &Services,
    authorization: Option<&str>,
) -> Result<BearerToken, BearerError> {
    let token = bearer_credential(authorization.ok_or(BearerDenial::Missing)?)?;
    authenticate_access_token(services, token).await
}

/// Authenticates a bearer access token however it was presented (RFC 6750 §2: the header, or
/// the `access_token` form field). A DPoP-bound token is refused: without its proof, it is
/// just what a thief would present (RFC 9449 §7.2).
pub async fn authenticate_access_token(
    services: &Services,
    token: &str,
) -> Result<BearerToken, BearerError> {
    let bearer = verify_access_token(services, token).await?;
    if bearer.record.jkt.is_some() {
        return Err(BearerDenial::DpopBound.into());
    }
    Ok(bearer)
}

/// The token's signature, claims and stored record, whatever it is bound to: the caller checks
/// the binding.
pub async fn verify_access_token(
    services: &Services,
    token: &str,
) -> Result<BearerToken, BearerError> {
    let now = services.ctx.clock.now();
    let claims = services
        .codec
        .decode(token, now)
        .await?
        .map_err(BearerDenial::Invalid)?;
    // A token asked for other resources (RFC 8707) is theirs, not this deployment's APIs': one
    // leaked by such a resource server must not be replayable here (RFC 9068 §4).
    if !claims.aud.names(services.codec.issuer().as_str()) {
        return Err(BearerDenial::Invalid(InvalidAccessToken::BadSignatureOrClaims).into());
    }
    let jti = TokenId::parse(&claims.jti).map_err(|_| BearerDenial::Unknown)?;
    let record = services
        .ctx
        .store
        .families()
        .get_access_token(&jti, now)
        .await?
        .ok_or(BearerDenial::Unknown)?;
    // Signed by us, so these agree unless a record was overwritten; refuse rather than guess.
    let consistent = record.wire_client_id() == claims.client_id
        && record.subject.hyphenated().to_string() == claims.sub
        && record.principal_type == claims.principal_type;
    if !consistent {
        return Err(BearerDenial::Unknown.into());
    }
    if record.revoked || outlived_its_user(services, &record).await? {
        return Err(BearerDenial::Revoked.into());
    }
    Ok(BearerToken { claims, record })
}

/// Whether a user's token of no family (exchanged from an ID token, or redeemed from an
/// identity assertion) was ended by its user's deprovisioning or disabling: revoking the
/// user's families cannot reach it, so its user is read instead (from the read cache).
pub(crate) async fn outlived_its_user(
    services: &Services,
    record: &AccessTokenRecord,
) -> Result<bool, ServerError> {
    if record.family_id.is_some() || record.principal_type != PrincipalType::User {
        return Ok(false);
    }
    let user_id = PrincipalId::new(record.subject);
    let user = services.ctx.store.principals().get_user(&user_id).await?;
    Ok(match user {
        Some(user) => {
            user.status != UserStatus::Active || user.cancelled_at_issue(record.issued_at)
        }
        None => true,
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::clock::ManualClock;
    use crate::context::Context;
    use crate::domain::NewClient;
    use crate::domain::{Client, Geolocation, PrincipalId, Scopes};
    use crate::issuance::FamilyStart;
    use crate::jwt::AccessTokenCodec;
    use crate::random::{OsRandom, RandomExt};
    use crate::secrets::TokenHash;
    use crate::signing::KeyRing;
    use crate::store::sqlite::SqliteStore;

    const NOW: i64 = 1_700_000_000;

    struct Fixture {
        services: Services,
        clock: Arc<ManualClock>,
        client: Client,
        dir: PathBuf,
    }

    impl Drop for Fixture {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    fn geolocation() -> Geolocation {
        Geolocation::parse("https://us.api.example.com").unwrap()
    }

    fn codec(clock: &ManualClock) -> AccessTokenCodec {
        AccessTokenCodec::new(Arc::new(KeyRing::generate(&OsRandom, clock)), geolocation())
    }

    fn fixture() -> Fixture {
        let dir = std::env::temp_dir().join(format!("bearer-test-{}", OsRandom.uuid()));
        let store = SqliteStore::open_in_dir(&dir).unwrap();
        let clock = Arc::new(ManualClock::new(NOW));
        let ctx = Context::new(Arc::new(store)).with_clock(clock.clone());
        let services = Services::new(ctx, codec(&clock), Default::default());
        let client = NewClient::named("app", Scopes::parse("read").unwrap()).into_client(
            ClientId::new(OsRandom.uuid()),
            crate::domain::ClientSecrets::from_single_hash(TokenHash::of("secret")),
            NOW,
        );
        Fixture {
            services,
            clock,
            client,
            dir,
        }
    }

    async fn application_token(f: &Fixture) -> String {
        f.services
            .issuer()
            .issue_application_token(&f.client, Scopes::parse("read").unwrap())
            .await
            .unwrap()
            .access_token
    }

    async fn authenticate(f: &Fixture, header: Option<&str>) -> Result<BearerToken, BearerDenial> {
        authenticate_bearer(&f.services, header)
            .await
            .map_err(|error| match error {
                BearerError::Denied(denial) => denial,
                BearerError::Server(e) => panic!("store failed: {e}"),
            })
    }

    async fn auth(f: &Fixture, header: &str) -> Result<BearerToken, BearerDenial> {
        authenticate(f, Some(header)).await
    }

    #[test]
    fn header_parsing() {
        assert_eq!(bearer_credential("Bearer abc.def"), Ok("abc.def"));
        assert_eq!(bearer_credential("bEaReR  abc"), Ok("abc"));
        assert_eq!(bearer_credential("Basic abc"), Err(BearerDenial::Missing));
        assert_eq!(bearer_credential("Bearerabc"), Err(BearerDenial::Missing));
        assert_eq!(
            bearer_credential("Bearer"),
            Err(BearerDenial::MalformedHeader)
        );
        assert_eq!(
            bearer_credential("Bearer a b"),
            Err(BearerDenial::MalformedHeader)
        );
    }

    #[tokio::test]
    async fn accepts_a_live_token_and_returns_its_record() {
        let f = fixture();
        let token = application_token(&f).await;
        let bearer = auth(&f, &format!("Bearer {token}")).await.unwrap();
        assert_eq!(bearer.client_id(), f.client.id);
        assert_eq!(bearer.principal_type(), PrincipalType::Application);
        assert_eq!(bearer.subject(), *f.client.id.as_uuid());
        assert_eq!(bearer.claims.client_id, f.client.id.to_string());
        assert!(!bearer.record.revoked);
        let lower = auth(&f, &format!("bearer {token}")).await;
        assert!(lower.is_ok());
    }

    #[tokio::test]
    async fn refuses_missing_and_foreign_credentials() {
        let f = fixture();
        assert_eq!(authenticate(&f, None).await, Err(BearerDenial::Missing));
        assert_eq!(auth(&f, "Basic dTpw").await, Err(BearerDenial::Missing));
        assert_eq!(
            auth(&f, "Bearer not-a-jwt").await,
            Err(BearerDenial::Invalid(InvalidAccessToken::Malformed))
        );
        // Signed with a key this deployment does not have.
        let record = f
            .services
            .issuer()
            .issue_application_token(&f.client, Scopes::empty())
            .await
            .unwrap()
            .access;
        let foreign = codec(&f.clock).encode(&record).await.unwrap();
        assert_eq!(
            auth(&f, &format!("Bearer {foreign}")).await,
            Err(BearerDenial::Invalid(InvalidAccessToken::UnknownKey))
        );
    }

    #[tokio::test]
    async fn refuses_an_expired_token_by_the_injected_clock() {
        let f = fixture();
        let token = application_token(&f).await;
        f.clock.advance(3599);
        assert!(auth(&f, &format!("Bearer {token}")).await.is_ok());
        f.clock.advance(1);
        assert_eq!(
            auth(&f, &format!("Bearer {token}")).await,
            Err(BearerDenial::Invalid(InvalidAccessToken::Expired))
        );
    }

    #[tokio::test]
    async fn refuses_a_signed_token_whose_jti_was_never_stored() {
        let f = fixture();
        let mut record = f
            .services
            .issuer()
            .issue_application_token(&f.client, Scopes::empty())
            .await
            .unwrap()
            .access;
        record.jti = TokenId::new(OsRandom.uuid());
        let unstored = f.services.codec.encode(&record).await.unwrap();
        assert_eq!(
            auth(&f, &format!("Bearer {unstored}")).await,
            Err(BearerDenial::Unknown)
        );
    }

    #[tokio::test]
    async fn refuses_a_token_of_a_revoked_family() {
        let f = fixture();
        let issued = f
            .services
            .issuer()
            .start_family(FamilyStart {
                client_id: f.client.id,
                principal_type: PrincipalType::User,
                principal_id: PrincipalId::new(OsRandom.uuid()),
                scopes: Scopes::parse("read").unwrap(),
                geolocation: geolocation(),
                jkt: None,
                grant: crate::domain::audit::StartedBy::Password,
                auth_time: None,
                sid: None,
                amr: Vec::new(),
                idp: None,
                issued_by: None,
                resources: Vec::new(),
                audience: Vec::new(),
            })
            .await
            .unwrap();
        let header = format!("Bearer {}", issued.access_token);
        let bearer = auth(&f, &header).await.unwrap();
        assert_eq!(bearer.principal_type(), PrincipalType::User);
        let family = issued.refresh.family_id;
        assert!(f
            .services
            .ctx
            .store
            .families()
            .revoke_family(&family, NOW)
            .await
            .unwrap());
        assert_eq!(auth(&f, &header).await, Err(BearerDenial::Revoked));
    }
}
