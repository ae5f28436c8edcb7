//! Minting: the one place where access tokens are signed and families are started or rotated,
//! so the token endpoint, the legacy exchange and the company flow issue identical tokens.
//! Starting a family is in `family`, a refresh's rotation or renewal in `refresh`, finding a
//! presented refresh token (which the successors' derivation decides) in `refresh_lookup`; the
//! scopes a request may have in `scope`, ID tokens in `id_token`, the family's owner check and
//! audit in `audited`. The grants and the flows both issue through here; this module knows neither.

mod asserted;
mod audited;
mod family;
mod id_token;
mod refresh;
mod refresh_lookup;
mod scope;

pub use asserted::Asserted;
pub use audited::FamilyOwner;
pub use family::LegacyExchangeLink;
pub use refresh_lookup::{FoundRefreshToken, MAX_GENERATIONS_BEHIND};
pub use scope::{requested_family_scopes, requested_scopes};

use uuid::Uuid;

use crate::clock::UnixTime;
use crate::config::Policy;
use crate::context::Context;
use crate::domain::audit::{AuditEvent, AuditKind, StartedBy};
use crate::domain::{
    AccessTokenRecord, Actor, AuthMethod, Client, ClientId, FamilyId, Geolocation, IdpId,
    PrincipalId, PrincipalType, RefreshTokenRecord, Resource, Scopes, SessionId, TokenId,
    ACCESS_TOKEN_TTL_SECONDS,
};
use crate::errors::{GrantError, ServerError};
use crate::jwt::AccessTokenCodec;
use crate::limits::{Limit, Limiter};
use crate::random::RandomExt;
use crate::secrets::Secret;
use crate::store::{Committed, FamilyOrigin, FamilyWrite, FirstUse, WriteBatch};

/// What minting needs, borrowed from the process's `Services`: where tokens are recorded, the
/// clock and randomness (`ctx`), the codec that signs, and the policy (refresh lifetimes and
/// rotation, limits). `Services::issuer` lends one; every family, access token and ID token is
/// made through it.
#[derive(Debug, Clone, Copy)]
pub struct Issuer<'a> {
    ctx: &'a Context,
    codec: &'a AccessTokenCodec,
    policy: &'a Policy,
    /// The client tokens are minted for, when it is known by a URL (a client ID metadata
    /// document's): its id and that URL, which its tokens show as `client_id`.
    client_url: Option<(ClientId, &'a str)>,
}

impl<'a> Issuer<'a> {
    pub fn new(ctx: &'a Context, codec: &'a AccessTokenCodec, policy: &'a Policy) -> Self {
        Self {
            ctx,
            codec,
            policy,
            client_url: None,
        }
    }

    /// Minting for `client`: every access token (and so its ID token) issued to it shows its
    /// `client_id` as the client has it on the wire, the URL of a client ID metadata document's
    /// client ([`Client::wire_id`]). Grants that a document's client may use (the code and
    /// refresh) mint through this.
    pub fn for_client(self, client: &'a Client) -> Self {
        Self {
            client_url: client.document_url.as_deref().map(|url| (client.id, url)),
            ..self
        }
    }
}

/// What a successful grant hands back. Holds live credentials: it has no `Debug`.
pub struct IssuedTokens {
    pub access_token: String,
    pub access: AccessTokenRecord,
    /// Absent for application tokens.
    pub refresh: Option<IssuedRefresh>,
    /// OpenID Connect ID token, for user and company families ([`IssuedTokens::with_id_token`]).
    pub id_token: Option<String>,
    /// When the family's principal signed in, for the ID token's `auth_time`.
    pub auth_time: Option<UnixTime>,
    /// The sign-in session the family belongs to, for the ID token's `sid`.
    pub sid: Option<SessionId>,
    /// How the family's principal signed in, for the ID token's `amr`.
    pub amr: Vec<AuthMethod>,
    /// The company identity provider the family's principal signed in through, for the ID
    /// token's `idp`.
    pub idp: Option<IdpId>,
    /// RFC 8693 §2.2.1's `issued_token_type`, for a token exchange's answer.
    pub issued_token_type: Option<&'static str>,
}

impl IssuedTokens {
    /// A signed statement that is no access token of ours (an identity assertion), described by
    /// `record` for the answer: no refresh token, no ID token.
    pub fn assertion(token: String, record: AccessTokenRecord) -> Self {
        Self::application(token, record)
    }

    /// An application's access token: no refresh token, no ID token.
    fn application(access_token: String, access: AccessTokenRecord) -> Self {
        Self {
            access_token,
            access,
            refresh: None,
            id_token: None,
            auth_time: None,
            sid: None,
            amr: Vec::new(),
            idp: None,
            issued_token_type: None,
        }
    }
}

/// A family's tokens, as started, rotated or renewed: unlike an application token's, always
/// with a refresh token.
pub struct FamilyTokens {
    pub access_token: String,
    pub access: AccessTokenRecord,
    pub refresh: IssuedRefresh,
    /// When the family's principal signed in (`Family::auth_time`).
    pub auth_time: Option<UnixTime>,
    /// The family's sign-in session (`Family::sid`).
    pub sid: Option<SessionId>,
    /// How the family's principal signed in (`Family::amr`).
    pub amr: Vec<AuthMethod>,
    /// The company identity provider it signed in through (`Family::idp`).
    pub idp: Option<IdpId>,
}

impl From<FamilyTokens> for IssuedTokens {
    fn from(tokens: FamilyTokens) -> Self {
        Self {
            access_token: tokens.access_token,
            access: tokens.access,
            refresh: Some(tokens.refresh),
            id_token: None,
            auth_time: tokens.auth_time,
            sid: tokens.sid,
            amr: tokens.amr,
            idp: tokens.idp,
            issued_token_type: None,
        }
    }
}

pub struct IssuedRefresh {
    pub token: Secret,
    pub family_id: FamilyId,
    /// When this refresh token was issued (its rotation, for a successor).
    pub issued_at: UnixTime,
    /// When it expires (Unix seconds): `refresh_expires_in` at the token endpoint.
    pub expires_at: UnixTime,
    /// The family's home deployment.
    pub geolocation: Geolocation,
}

/// What a token exchange grants: at most the subject token's scopes, the requested resources,
/// the DPoP key of the request's proof, the actor, and the access tokens it is exchanged from
/// ([`AccessTokenRecord::exchanged_from`]), whose revocation ends it.
#[derive(Debug, Clone)]
pub struct Exchanged {
    pub scopes: Scopes,
    pub audience: Vec<Resource>,
    pub jkt: Option<String>,
    pub act: Option<Actor>,
    pub exchanged_from: Vec<TokenId>,
}

/// Who a new family is for.
#[derive(Debug, Clone)]
pub struct FamilyStart {
    pub client_id: ClientId,
    pub principal_type: PrincipalType,
    pub principal_id: PrincipalId,
    pub scopes: Scopes,
    pub geolocation: Geolocation,
    /// The DPoP key the family's refresh tokens and first access token are bound to.
    pub jkt: Option<String>,
    /// How, for the family's `family.started` audit event.
    pub grant: StartedBy,
    /// When the principal signed in ([`Family::auth_time`]).
    ///
    /// [`Family::auth_time`]: crate::domain::Family::auth_time
    pub auth_time: Option<UnixTime>,
    /// The sign-in session it was started in ([`crate::domain::Family::sid`]).
    pub sid: Option<SessionId>,
    /// How the principal signed in ([`crate::domain::Family::amr`]); empty without a page
    /// sign-in.
    pub amr: Vec<AuthMethod>,
    /// The company identity provider the principal signed in through
    /// ([`crate::domain::Family::idp`]); `None` for a sign-in here or none.
    pub idp: Option<IdpId>,
    /// The administrator whose credential started a company's family (the company auth token's
    /// issuer), named in its `family.started` event.
    pub issued_by: Option<PrincipalId>,
    /// The resources (RFC 8707) granted: kept by the family, so that a refresh may name them.
    pub resources: Vec<Resource>,
    /// The first access token's `aud`: [`Self::resources`], or fewer (a code's redemption may
    /// narrow them). Empty: this deployment.
    pub audience: Vec<Resource>,
}

impl Issuer<'_> {
    fn access_record(
        &self,
        client_id: ClientId,
        principal_type: PrincipalType,
        subject: Uuid,
        family_id: Option<FamilyId>,
        scopes: Scopes,
        jkt: Option<String>,
    ) -> AccessTokenRecord {
        // One reading of the clock: the jti's time is the token's `iat`.
        let now_millis = self.ctx.clock.now_millis();
        let now = UnixTime::try_from(now_millis / 1000).unwrap_or(UnixTime::MAX);
        let client_url = self
            .client_url
            .filter(|(id, _)| *id == client_id)
            .map(|(_, url)| url.to_owned());
        AccessTokenRecord {
            jti: TokenId::new(self.ctx.random.time_ordered_uuid(now_millis)),
            client_id,
            principal_type,
            subject,
            family_id,
            scopes,
            issued_at: now,
            expires_at: now + ACCESS_TOKEN_TTL_SECONDS,
            revoked: false,
            jkt,
            audience: Vec::new(),
            act: None,
            client_url,
            auth_time: None,
            amr: Vec::new(),
            exchanged_from: Vec::new(),
        }
    }

    fn refresh_record(
        &self,
        token: &Secret,
        family_id: FamilyId,
        client_id: ClientId,
        generation: u32,
    ) -> RefreshTokenRecord {
        let now = self.ctx.clock.now();
        RefreshTokenRecord {
            token_hash: token.hash(),
            family_id,
            client_id,
            generation,
            issued_at: now,
            expires_at: now + self.policy.refresh_token_ttl_seconds,
            rotated_at: None,
            jkt: None,
        }
    }

    /// An access token for the client itself, no family, counted against no limit (for tools
    /// and tests; the token endpoint's grant is [`Self::issue_counted_application_token`]).
    pub async fn issue_application_token(
        &self,
        client: &Client,
        scopes: Scopes,
    ) -> Result<IssuedTokens, ServerError> {
        self.sign_and_store(self.application_access_record(client, scopes, None))
            .await
    }

    /// Signs an application's access token, then stores it: a token that cannot be signed (KMS
    /// unavailable) leaves nothing behind.
    async fn sign_and_store(&self, access: AccessTokenRecord) -> Result<IssuedTokens, ServerError> {
        let access_token = self.codec.encode(&access).await?;
        self.ctx.store.families().put_access_token(&access).await?;
        Ok(IssuedTokens::application(access_token, access))
    }

    /// `client_credentials`: an access token for the client itself, bound to the DPoP key
    /// `jkt` when there is one, the request counted against the client's limit. Either way a
    /// token that cannot be signed leaves nothing behind, and a refused request stores nothing.
    /// `audience` is the request's resources (RFC 8707), the token's `aud`; empty: this
    /// deployment.
    pub async fn issue_counted_application_token(
        &self,
        client: &Client,
        scopes: Scopes,
        (jkt, audience): (Option<String>, Vec<Resource>),
        lifetime: Option<UnixTime>,
        limiter: Limiter<'_>,
    ) -> Result<IssuedTokens, GrantError> {
        let own = self.application_access_record(client, scopes, jkt);
        let expires_at = lifetime.map_or(own.expires_at, |seconds| {
            own.expires_at.min(own.issued_at + seconds)
        });
        let access = AccessTokenRecord {
            audience,
            expires_at,
            ..own
        };
        let (limit, subject, now) = (
            Limit::ClientTokenRequests,
            client.id.to_string(),
            self.ctx.clock.now(),
        );
        if self.codec.keys().signs_with_kms() {
            // Counted before anything is signed: a request over the limit costs no `kms:Sign`,
            // so a flood cannot spend the KMS quota every client's tokens depend on.
            limiter.count(limit, &subject, now).await?;
            return Ok(self.sign_and_store(access).await?);
        }
        // With the key in memory: signed, then counted and stored in one store write
        // (`Limiter::count_with_access_token`), one write a request instead of two. A refused
        // request costs a signature (about 30 µs), less than the second write cost every request.
        let access_token = self.codec.encode(&access).await?;
        limiter
            .count_with_access_token(self.ctx.store.as_ref(), limit, &subject, &access, now)
            .await?;
        Ok(IssuedTokens::application(access_token, access))
    }

    /// RFC 8693: an access token for `subject`'s principal, issued to `client` as `exchanged`
    /// says, and living no longer than `subject`. It belongs to the subject's family, if any,
    /// so that revoking that family revokes it too, as revoking a token it was exchanged from
    /// does. No refresh token, no ID token.
    pub async fn issue_exchanged_token(
        &self,
        client: &Client,
        subject: &AccessTokenRecord,
        exchanged: Exchanged,
    ) -> Result<IssuedTokens, ServerError> {
        let own = self.for_client(client).access_record(
            client.id,
            subject.principal_type,
            subject.subject,
            subject.family_id,
            exchanged.scopes,
            exchanged.jkt,
        );
        let access = AccessTokenRecord {
            expires_at: own.expires_at.min(subject.expires_at),
            audience: exchanged.audience,
            act: exchanged.act,
            // The same person's sign-in, whoever now holds the token.
            auth_time: subject.auth_time,
            amr: subject.amr.clone(),
            exchanged_from: exchanged.exchanged_from,
            ..own
        };
        let mut event = crate::audit::event(
            self.ctx,
            AuditKind::TokenExchanged {
                jti: access.jti,
                subject_client_id: subject.client_id,
                actor_sub: access.act.as_ref().map(|act| act.sub.clone()),
                actor_client_id: access.act.as_ref().map(|act| act.client_id.clone()),
            },
        )
        .client(client.id)
        .principal(subject.principal_type, PrincipalId::new(subject.subject));
        if let Some(family_id) = subject.family_id {
            event = event.family(family_id);
        }
        let issued = self.sign_and_store_with_event(access, event, None).await?;
        let mut issued = issued.ok_or_else(|| {
            ServerError::internal(
                "the store refused an exchanged token's write, which has no condition",
            )
        })?;
        issued.issued_token_type = Some(crate::requests::ACCESS_TOKEN_TYPE);
        Ok(issued)
    }

    /// A token of no family (exchanged or asserted): signed first, then stored with its audit
    /// event in one write, so that a failure leaves neither and introspection and revocation
    /// know every token answered. With `first_use`, that `jti`'s first use is in the write too
    /// and decides it: `None` if it was used before, and nothing is written.
    async fn sign_and_store_with_event(
        &self,
        access: AccessTokenRecord,
        event: AuditEvent,
        first_use: Option<FirstUse>,
    ) -> Result<Option<IssuedTokens>, ServerError> {
        let access_token = self.codec.encode(&access).await?;
        let mut batch = WriteBatch::new();
        let spends = first_use.map(|first_use| batch.require([first_use.into()]));
        batch.require([
            FamilyWrite::PutAccessToken(access.clone()).into(),
            event.clone().into(),
        ]);
        match self.ctx.store.writes().commit(batch).await? {
            Committed::Applied { .. } => {}
            Committed::Refused(part) if Some(part) == spends => return Ok(None),
            Committed::Refused(_) | Committed::Limited { .. } => {
                return Err(ServerError::internal(
                    "the store refused a token's write whose only condition is a jti's first use",
                ))
            }
        }
        crate::audit::logged(&[event]);
        Ok(Some(IssuedTokens::application(access_token, access)))
    }

    fn application_access_record(
        &self,
        client: &Client,
        scopes: Scopes,
        jkt: Option<String>,
    ) -> AccessTokenRecord {
        self.for_client(client).access_record(
            client.id,
            PrincipalType::Application,
            *client.id.as_uuid(),
            None,
            scopes,
            jkt,
        )
    }

    /// A family's access token with `scopes` and `audience` (a subset of the family's, for
    /// which the caller answers).
    fn family_access_record(
        &self,
        family_id: FamilyId,
        origin: &FamilyOrigin,
        (scopes, audience): (Scopes, Vec<Resource>),
        jkt: Option<&str>,
    ) -> AccessTokenRecord {
        AccessTokenRecord {
            audience,
            auth_time: origin.auth_time,
            amr: origin.amr.clone(),
            ..self.access_record(
                origin.client_id,
                origin.principal_type,
                *origin.principal_id.as_uuid(),
                Some(family_id),
                scopes,
                jkt.map(str::to_owned),
            )
        }
    }
}

/// What a grant answers once a family's write has succeeded, its access token signed
/// before that write.
fn family_tokens(
    access_token: String,
    access: AccessTokenRecord,
    refresh_token: Secret,
    refresh: &RefreshTokenRecord,
    geolocation: Geolocation,
    (auth_time, sid, amr, idp): (
        Option<UnixTime>,
        Option<SessionId>,
        Vec<AuthMethod>,
        Option<IdpId>,
    ),
) -> FamilyTokens {
    FamilyTokens {
        auth_time,
        sid,
        amr,
        idp,
        access_token,
        access,
        refresh: IssuedRefresh {
            token: refresh_token,
            family_id: refresh.family_id,
            issued_at: refresh.issued_at,
            expires_at: refresh.expires_at,
            geolocation,
        },
    }
}
