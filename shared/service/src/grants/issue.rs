//! Minting: the one place where access tokens are signed and families are started or rotated,
//! so the token endpoint, the legacy exchange and the company flow issue identical tokens.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use uuid::Uuid;

use crate::audit;
use crate::clock::UnixTime;
use crate::domain::audit::{AuditKind, StartedBy};
use crate::domain::{
    AccessTokenRecord, Client, ClientId, Family, FamilyId, Geolocation, PrincipalId, PrincipalType,
    RefreshTokenRecord, Scopes, TokenId, ACCESS_TOKEN_TTL_SECONDS,
};
use crate::errors::ServerError;
use crate::random::RandomExt;
use crate::secrets::Secret;
use crate::services::Services;
use crate::store::{
    FamilyCreated, FamilyOrigin, LegacyExchangeUpdate, LoginRefund, NewFamily,
    RefreshTokenWithOrigin, Renewal, Renewed, Rotated, Rotation, StoreError,
};

/// The purpose the successor key is derived for, and the MAC's domain separator.
const SUCCESSOR_PURPOSE: &str = "refresh-successor-v1";

/// What a successful grant hands back. Holds live credentials: it has no `Debug`.
pub struct IssuedTokens {
    pub access_token: String,
    pub access: AccessTokenRecord,
    /// Absent for application tokens.
    pub refresh: Option<IssuedRefresh>,
    /// OpenID Connect ID token, for user and company families ([`IssuedTokens::with_id_token`]).
    pub id_token: Option<String>,
}

/// A family's tokens, as started, rotated or renewed: unlike an application token's, always
/// with a refresh token.
pub struct FamilyTokens {
    pub access_token: String,
    pub access: AccessTokenRecord,
    pub refresh: IssuedRefresh,
}

impl From<FamilyTokens> for IssuedTokens {
    fn from(tokens: FamilyTokens) -> Self {
        Self {
            access_token: tokens.access_token,
            access: tokens.access,
            refresh: Some(tokens.refresh),
            id_token: None,
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
}

impl Services {
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
        }
    }

    /// The one successor `presented` (of generation `generation - 1`) can ever have:
    /// base64url(HMAC-SHA256(key, purpose || family id || generation || token)). Derived rather
    /// than random so that a retry can be answered with it without storing it in the clear
    /// (docs/decisions.md, "Refresh tokens"); the family id and generation keep successors of
    /// different families and rotations apart.
    pub fn successor_token(
        &self,
        family_id: &FamilyId,
        generation: u32,
        presented: &Secret,
    ) -> Secret {
        let key = self.codec.keys().derive_key(SUCCESSOR_PURPOSE);
        // HMAC accepts keys of any length, so this cannot fail.
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("HMAC takes any key length");
        mac.update(SUCCESSOR_PURPOSE.as_bytes());
        mac.update(family_id.as_uuid().as_bytes());
        mac.update(&generation.to_be_bytes());
        mac.update(presented.expose().as_bytes());
        Secret::new(URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()))
    }

    /// `client_credentials`: an access token for the client itself, no family.
    pub async fn issue_application_token(
        &self,
        client: &Client,
        scopes: Scopes,
    ) -> Result<IssuedTokens, StoreError> {
        self.issue_bound_application_token(client, scopes, None)
            .await
    }

    /// The same, bound to the DPoP key `jkt` when there is one.
    pub async fn issue_bound_application_token(
        &self,
        client: &Client,
        scopes: Scopes,
        jkt: Option<String>,
    ) -> Result<IssuedTokens, StoreError> {
        let access = self.access_record(
            client.id,
            PrincipalType::Application,
            *client.id.as_uuid(),
            None,
            scopes,
            jkt,
        );
        // Signed before it is stored: a token that cannot be signed (KMS unavailable) leaves
        // nothing behind.
        let access_token = self.codec.encode(&access).await?;
        self.ctx.store.families().put_access_token(&access).await?;
        Ok(IssuedTokens {
            access_token,
            access,
            refresh: None,
            id_token: None,
        })
    }

    /// Starts a family: its first refresh token and first access token, in one write.
    pub async fn start_family(&self, start: FamilyStart) -> Result<FamilyTokens, ServerError> {
        self.start_family_refunding(start, None).await
    }

    /// [`Self::start_family`], taking back a correct password's login attempt in the same
    /// write (docs/decisions.md, Lockout). On an error the attempt may still be counted: the
    /// caller takes it back on its own.
    pub async fn start_family_refunding(
        &self,
        start: FamilyStart,
        refund: Option<LoginRefund>,
    ) -> Result<FamilyTokens, ServerError> {
        match self.create_family(start, None, refund).await? {
            Some(tokens) => Ok(tokens),
            // The store reports a lost race only for a legacy link, and there is none here.
            None => Err(ServerError::internal(
                "the store reported a legacy-link race for a family without one",
            )),
        }
    }

    /// Starts a family and moves a legacy exchange's link to it, in one write (the link's
    /// `exchange.family_id` is set here to the new family's id, which the caller cannot know).
    /// `Ok(None)` when a concurrent exchange of the same old token moved the link first: nothing
    /// was written.
    pub async fn start_family_with_legacy_link(
        &self,
        start: FamilyStart,
        link: LegacyExchangeUpdate,
    ) -> Result<Option<FamilyTokens>, StoreError> {
        self.create_family(start, Some(link), None).await
    }

    async fn create_family(
        &self,
        start: FamilyStart,
        link: Option<LegacyExchangeUpdate>,
        login_refund: Option<LoginRefund>,
    ) -> Result<Option<FamilyTokens>, StoreError> {
        let now = self.ctx.clock.now();
        let family_id = FamilyId::new(self.ctx.random.uuid());
        let refresh_token = Secret::new(self.ctx.random.opaque_token());
        let refresh = self.refresh_record(&refresh_token, family_id, start.client_id, 0);
        let access = self.access_record(
            start.client_id,
            start.principal_type,
            *start.principal_id.as_uuid(),
            Some(family_id),
            start.scopes.clone(),
            start.jkt.clone(),
        );
        // Signed before anything is written, as every access token here: a signature that fails
        // (KMS unavailable) leaves no family, rotation or token behind (docs/decisions.md,
        // Signing keys).
        let access_token = self.codec.encode(&access).await?;
        let family = Family {
            id: family_id,
            client_id: start.client_id,
            principal_type: start.principal_type,
            principal_id: start.principal_id,
            scopes: start.scopes,
            geolocation: start.geolocation.clone(),
            current_token: refresh.token_hash.clone(),
            generation: 0,
            created_at: now,
            expires_at: refresh.expires_at,
            revoked_at: None,
            jkt: start.jkt,
        };
        let previous_revoked = link
            .as_ref()
            .map(|update| update.previous_revoked.clone())
            .unwrap_or_default();
        let started = self.family_event(
            AuditKind::FamilyStarted { grant: start.grant },
            family_id,
            (&family).into(),
        );
        let created = self
            .ctx
            .store
            .families()
            .create_family(NewFamily {
                family: &family,
                refresh_token: &refresh,
                access_token: &access,
                legacy_exchange: link.map(|mut update| {
                    update.exchange.family_id = family_id;
                    update
                }),
                login_refund,
                audit: std::slice::from_ref(&started),
            })
            .await?;
        if created == FamilyCreated::LegacyExchangeRaced {
            return Ok(None);
        }
        audit::logged(&[started]);
        if created == FamilyCreated::CreatedRevokingPrevious {
            audit::logged(&previous_revoked);
        }
        Ok(Some(family_tokens(
            access_token,
            access,
            refresh_token,
            &refresh,
            start.geolocation,
        )))
    }

    /// Rotates `presented` (read as `token`, unrotated) to its derived successor and mints an
    /// access token with `scopes` (a subset of the family's). `Ok(None)` when the token is not
    /// the family's current one, or the family is revoked or expired: another request rotated
    /// (or revoked) first, and nothing was written. The write's condition decides, so the family
    /// need not have been read.
    pub async fn rotate_family(
        &self,
        token: &RefreshTokenWithOrigin,
        presented: &Secret,
        scopes: Scopes,
        jkt: Option<&str>,
    ) -> Result<Option<IssuedTokens>, StoreError> {
        let (current, origin) = (&token.record, &token.origin);
        let generation = current.generation + 1;
        let refresh_token = self.successor_token(&current.family_id, generation, presented);
        let successor = self.refresh_record(
            &refresh_token,
            current.family_id,
            origin.client_id,
            generation,
        );
        let access = self.family_access_record(current.family_id, origin, scopes, jkt);
        let refreshed = self.family_event(
            AuditKind::FamilyRefreshed { generation },
            current.family_id,
            origin.into(),
        );
        let access_token = self.codec.encode(&access).await?;
        let outcome = self
            .ctx
            .store
            .families()
            .rotate_refresh_token(Rotation {
                family_id: current.family_id,
                presented: &current.token_hash,
                successor: &successor,
                access_token: &access,
                now: self.ctx.clock.now(),
                origin: Some(origin),
                audit: std::slice::from_ref(&refreshed),
            })
            .await?;
        if outcome == Rotated::NotCurrent {
            return Ok(None);
        }
        audit::logged(&[refreshed]);
        Ok(Some(
            family_tokens(
                access_token,
                access,
                refresh_token,
                &successor,
                origin.geolocation.clone(),
            )
            .into(),
        ))
    }

    /// A retry of a rotation that already happened (docs/decisions.md, "Refresh tokens"): the same
    /// successor again, with a freshly minted access token recorded with the family. The caller has
    /// checked that `family.current_token` is the successor derived from `rotated`.
    pub async fn reissue_successor(
        &self,
        family: &Family,
        rotated: &RefreshTokenRecord,
        presented: &Secret,
        scopes: Scopes,
        jkt: Option<&str>,
    ) -> Result<IssuedTokens, StoreError> {
        let refresh_token = self.successor_token(&family.id, rotated.generation + 1, presented);
        let access = self.family_access_record(family.id, &FamilyOrigin::from(family), scopes, jkt);
        let access_token = self.codec.encode(&access).await?;
        self.ctx.store.families().put_access_token(&access).await?;
        let successor = RefreshTokenRecord {
            issued_at: rotated.rotated_at.unwrap_or(rotated.issued_at),
            expires_at: family.expires_at,
            ..self.refresh_record(
                &refresh_token,
                family.id,
                family.client_id,
                family.generation,
            )
        };
        Ok(family_tokens(
            access_token,
            access,
            refresh_token,
            &successor,
            family.geolocation.clone(),
        )
        .into())
    }

    /// The `sliding` policy (docs/decisions.md, "Refresh tokens"): the same refresh token, its
    /// expiry renewed. `Ok(None)` when the token is no longer the family's current one, or the
    /// family is revoked or expired (the write's condition decides).
    pub async fn slide_family(
        &self,
        token: &RefreshTokenWithOrigin,
        presented: &Secret,
        scopes: Scopes,
        jkt: Option<&str>,
    ) -> Result<Option<IssuedTokens>, StoreError> {
        let (record, origin) = (&token.record, &token.origin);
        let now = self.ctx.clock.now();
        let renewed = RefreshTokenRecord {
            expires_at: now + self.policy.refresh_token_ttl_seconds,
            ..record.clone()
        };
        let access = self.family_access_record(record.family_id, origin, scopes, jkt);
        let refreshed = self.family_event(
            AuditKind::FamilyRefreshed {
                generation: record.generation,
            },
            record.family_id,
            origin.into(),
        );
        let access_token = self.codec.encode(&access).await?;
        let outcome = self
            .ctx
            .store
            .families()
            .renew_refresh_token(Renewal {
                family_id: record.family_id,
                presented: &record.token_hash,
                expires_at: renewed.expires_at,
                access_token: &access,
                now,
                audit: std::slice::from_ref(&refreshed),
            })
            .await?;
        if outcome == Renewed::NotCurrent {
            return Ok(None);
        }
        audit::logged(&[refreshed]);
        Ok(Some(
            family_tokens(
                access_token,
                access,
                presented.clone(),
                &renewed,
                origin.geolocation.clone(),
            )
            .into(),
        ))
    }

    fn family_access_record(
        &self,
        family_id: FamilyId,
        origin: &FamilyOrigin,
        scopes: Scopes,
        jkt: Option<&str>,
    ) -> AccessTokenRecord {
        self.access_record(
            origin.client_id,
            origin.principal_type,
            *origin.principal_id.as_uuid(),
            Some(family_id),
            scopes,
            jkt.map(str::to_owned),
        )
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
) -> FamilyTokens {
    FamilyTokens {
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
