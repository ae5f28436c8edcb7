//! Minting: the one place where access tokens are signed and families are started or rotated,
//! so the token endpoint, the legacy exchange and the company flow issue identical tokens.

use uuid::Uuid;

use crate::domain::{
    AccessTokenRecord, Client, ClientId, Family, FamilyId, Geolocation, PrincipalId, PrincipalType,
    RefreshTokenRecord, Scopes, TokenId, ACCESS_TOKEN_TTL_SECONDS,
};
use crate::random::RandomExt;
use crate::secrets::{Secret, TokenHash};
use crate::services::Services;
use crate::store::{FamilyCreated, LegacyExchangeUpdate, NewFamily, Rotated, Rotation, StoreError};

/// What a successful grant hands back. Holds live credentials: it has no `Debug`.
pub struct IssuedTokens {
    pub access_token: String,
    pub access: AccessTokenRecord,
    /// Absent for application tokens.
    pub refresh: Option<IssuedRefresh>,
    /// OpenID Connect ID token, for user and company families ([`IssuedTokens::with_id_token`]).
    pub id_token: Option<String>,
}

pub struct IssuedRefresh {
    pub token: Secret,
    pub family_id: FamilyId,
    pub expires_in: i64,
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
    /// The legacy exchange's link update, written with the family. Its `exchange.family_id`
    /// is set by [`Services::start_family`] to the new family's id.
    pub legacy_exchange: Option<LegacyExchangeUpdate>,
}

impl Services {
    fn access_record(
        &self,
        client_id: ClientId,
        principal_type: PrincipalType,
        subject: Uuid,
        family_id: Option<FamilyId>,
        scopes: Scopes,
    ) -> AccessTokenRecord {
        let now = self.ctx.clock.now();
        AccessTokenRecord {
            jti: TokenId::new(self.ctx.random.uuid()),
            client_id,
            principal_type,
            subject,
            family_id,
            scopes,
            issued_at: now,
            expires_at: now + ACCESS_TOKEN_TTL_SECONDS,
            revoked: false,
        }
    }

    fn refresh_record(
        &self,
        family_id: FamilyId,
        client_id: ClientId,
        generation: u32,
    ) -> (Secret, RefreshTokenRecord) {
        let now = self.ctx.clock.now();
        let token = Secret::new(self.ctx.random.opaque_token());
        let record = RefreshTokenRecord {
            token_hash: token.hash(),
            family_id,
            client_id,
            generation,
            issued_at: now,
            expires_at: now + self.policy.refresh_token_ttl_seconds,
            rotated_at: None,
        };
        (token, record)
    }

    /// `client_credentials`: an access token for the client itself, no family.
    pub async fn issue_application_token(
        &self,
        client: &Client,
        scopes: Scopes,
    ) -> Result<IssuedTokens, StoreError> {
        let access = self.access_record(
            client.id,
            PrincipalType::Application,
            *client.id.as_uuid(),
            None,
            scopes,
        );
        self.ctx.store.put_access_token(&access).await?;
        Ok(IssuedTokens {
            access_token: self.codec.encode(&access),
            access,
            refresh: None,
            id_token: None,
        })
    }

    /// Starts a family: its first refresh token and first access token, in one write.
    /// `Ok(None)` only when a legacy exchange lost a race to a concurrent one.
    pub async fn start_family(
        &self,
        start: FamilyStart,
    ) -> Result<Option<IssuedTokens>, StoreError> {
        let now = self.ctx.clock.now();
        let family_id = FamilyId::new(self.ctx.random.uuid());
        let (refresh_token, refresh) = self.refresh_record(family_id, start.client_id, 0);
        let access = self.access_record(
            start.client_id,
            start.principal_type,
            *start.principal_id.as_uuid(),
            Some(family_id),
            start.scopes.clone(),
        );
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
        };
        let created = self
            .ctx
            .store
            .create_family(NewFamily {
                family: &family,
                refresh_token: &refresh,
                access_token: &access,
                // The link must name the family created here, whose id the caller cannot know.
                legacy_exchange: start.legacy_exchange.map(|mut update| {
                    update.exchange.family_id = family_id;
                    update
                }),
            })
            .await?;
        if created == FamilyCreated::LegacyExchangeRaced {
            return Ok(None);
        }
        Ok(Some(self.family_tokens(
            access,
            refresh_token,
            family_id,
            start.geolocation,
        )))
    }

    /// Rotates `presented` to a new refresh token and mints an access token with `scopes`
    /// (a subset of the family's). `Ok(None)` when the token is no longer current.
    pub async fn rotate_family(
        &self,
        family: &Family,
        presented: &TokenHash,
        scopes: Scopes,
    ) -> Result<Option<IssuedTokens>, StoreError> {
        let (refresh_token, successor) =
            self.refresh_record(family.id, family.client_id, family.generation + 1);
        let access = self.access_record(
            family.client_id,
            family.principal_type,
            *family.principal_id.as_uuid(),
            Some(family.id),
            scopes,
        );
        let outcome = self
            .ctx
            .store
            .rotate_refresh_token(Rotation {
                family_id: family.id,
                presented,
                successor: &successor,
                access_token: &access,
                now: self.ctx.clock.now(),
            })
            .await?;
        if outcome == Rotated::NotCurrent {
            return Ok(None);
        }
        Ok(Some(self.family_tokens(
            access,
            refresh_token,
            family.id,
            family.geolocation.clone(),
        )))
    }

    /// What a grant answers once a family's write has succeeded.
    fn family_tokens(
        &self,
        access: AccessTokenRecord,
        refresh_token: Secret,
        family_id: FamilyId,
        geolocation: Geolocation,
    ) -> IssuedTokens {
        IssuedTokens {
            access_token: self.codec.encode(&access),
            access,
            refresh: Some(IssuedRefresh {
                token: refresh_token,
                family_id,
                expires_in: self.policy.refresh_token_ttl_seconds,
                geolocation,
            }),
            id_token: None,
        }
    }
}
