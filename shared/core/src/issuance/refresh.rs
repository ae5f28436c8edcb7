//! A refresh of a family: rotated to its derived successor, a retry answered with that same
//! successor, or (the `sliding` policy) the same token with its expiry renewed.

use super::Issuer;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::audit;
use crate::clock::UnixTime;
use crate::domain::audit::{AuditEvent, AuditId, AuditKind};
use crate::domain::{
    AccessTokenRecord, Family, FamilyId, RefreshTokenName, RefreshTokenRecord, Resource, Scopes,
};
use crate::errors::{GrantError, ServerError};
use crate::limits::{Limit, Limiter};
use crate::secrets::Secret;
use crate::store::{
    FamilyOrigin, FamilyWrite, Gated, RefreshTokenWithOrigin, Renewal, Rotation, StoreError,
    WriteBatch,
};

use super::{family_tokens, IssuedTokens};

/// The purpose the successor key is derived for, and the MAC's domain separator.
const SUCCESSOR_PURPOSE: &str = "refresh-successor-v1";

impl Issuer<'_> {
    /// The one successor `presented` (of generation `generation - 1`) can ever have: the token
    /// named by its family and `generation` ([`RefreshTokenName`]) whose secret is
    /// HMAC-SHA256(key, purpose || family id || generation || token). Derived rather than random
    /// so that a retry can be answered with it without storing it in the clear, and so that an
    /// older token of the family can be recognised by deriving forward from it
    /// (docs/decisions.md, "What a refresh writes"). Fails (503) only while the key ring has
    /// never been read and cannot be now.
    pub async fn successor_token(
        &self,
        family_id: &FamilyId,
        generation: u32,
        presented: &Secret,
    ) -> Result<Secret, ServerError> {
        let key = self.successor_key().await?;
        Ok(successor(&key, family_id, generation, presented))
    }

    pub(super) async fn successor_key(&self) -> Result<[u8; 32], ServerError> {
        Ok(self.codec.keys().derive_key(SUCCESSOR_PURPOSE).await?)
    }

    /// The successor of `presented` (of generation `family.generation - 1`) if it is the
    /// family's current token, in either form: named, or the bare secret the release before
    /// named tokens issued, so that a retry across that deployment still gets its successor.
    pub async fn current_successor(
        &self,
        family: &Family,
        presented: &Secret,
    ) -> Result<Option<Secret>, ServerError> {
        let key = self.successor_key().await?;
        let secret = successor_secret(&key, &family.id, family.generation, presented);
        let named = RefreshTokenName::new(family.id, family.generation).token(&secret);
        let bare = Secret::new(URL_SAFE_NO_PAD.encode(secret));
        Ok([named, bare]
            .into_iter()
            .find(|candidate| family.current_token.verify(candidate.expose())))
    }

    /// Rotates `presented` (read as `token`, unrotated) to its derived successor and mints an
    /// access token with `grant`: scopes and audience, subsets of the family's. `Ok(None)` when
    /// the token is not the family's current one, or the family is revoked or expired: another
    /// request rotated (or revoked) first, and nothing was written. The write's condition
    /// decides, so the family need not have been read.
    ///
    /// With `counter`, the request is counted against its client's limit in the rotation's own
    /// write ([`Limiter::count_in`]): over the limit nothing is written and the answer is the
    /// limit's refusal.
    pub async fn rotate_family(
        &self,
        token: &RefreshTokenWithOrigin,
        presented: &Secret,
        grant: (Scopes, Vec<Resource>),
        jkt: Option<&str>,
        counter: Option<Limiter<'_>>,
    ) -> Result<Option<IssuedTokens>, GrantError> {
        let (current, origin) = (&token.record, &token.origin);
        let generation = current.generation + 1;
        let refresh_token = self
            .successor_token(&current.family_id, generation, presented)
            .await?;
        let successor = RefreshTokenRecord {
            jkt: bound_successor(origin.jkt.as_deref(), jkt),
            ..self.refresh_record(
                &refresh_token,
                current.family_id,
                origin.client_id,
                generation,
            )
        };
        let now = self.ctx.clock.now();
        let mut refresh = self.refresh_of(token, generation, grant, jkt).await?;
        // Recorded under the rotation's own id, so that a retry completing it records the same.
        refresh.event.id = AuditId::of_rotation(&current.family_id, generation, now);
        refresh.event.time = now;
        let rotation = Rotation {
            family_id: current.family_id,
            presented: current.token_hash.clone(),
            successor: successor.clone(),
            access_token: refresh.access.clone(),
            now,
        };
        let events = vec![refresh.event.clone()];
        let writes = self.ctx.store.writes();
        let landed = match counter {
            None => writes.rotate(rotation, events).await?,
            Some(limiter) => {
                let subject = origin.client_id.to_string();
                limiter
                    .count_in(Limit::ClientTokenRequests, &subject, now, |gate| {
                        let (rotation, events) = (rotation.clone(), events.clone());
                        async move {
                            match gate {
                                Some(gate) => writes.rotate_counted(rotation, events, gate).await,
                                None => Ok(Gated::Counted {
                                    count: 0,
                                    outcome: writes.rotate(rotation, events).await?,
                                }),
                            }
                        }
                    })
                    .await?
            }
        };
        Ok(refresh.answer(landed, refresh_token, &successor, origin))
    }

    /// Writes what the family's last rotation (at `rotated_at`) left unwritten, if it failed
    /// after its decisive write ([`crate::store::BatchWrites::complete_rotation`]): `true` if
    /// anything was missing, which means its answer never reached the client.
    pub async fn complete_rotation(
        &self,
        family: &Family,
        rotated_at: UnixTime,
    ) -> Result<bool, StoreError> {
        let mut event = self.family_event(
            AuditKind::FamilyRefreshed {
                generation: family.generation,
            },
            family.id,
            family.into(),
        );
        event.id = AuditId::of_rotation(&family.id, family.generation, rotated_at);
        event.time = rotated_at;
        let completed = self
            .ctx
            .store
            .writes()
            .complete_rotation(family, std::slice::from_ref(&event))
            .await?;
        if completed {
            audit::logged(&[event]);
        }
        Ok(completed)
    }

    /// A retry of a rotation that already happened (docs/decisions.md, "Refresh tokens"): the same
    /// successor again, with a freshly minted access token recorded with the family. The caller has
    /// checked that `family.current_token` is the successor derived from `rotated`.
    pub async fn reissue_successor(
        &self,
        family: &Family,
        rotated: &RefreshTokenRecord,
        presented: &Secret,
        grant: (Scopes, Vec<Resource>),
        jkt: Option<&str>,
    ) -> Result<IssuedTokens, ServerError> {
        let refresh_token = self
            .current_successor(family, presented)
            .await?
            .ok_or_else(|| ServerError::internal("a retry's successor is not current"))?;
        let access = self.family_access_record(family.id, &FamilyOrigin::from(family), grant, jkt);
        let access_token = self.codec.encode(&access).await?;
        self.ctx.store.families().put_access_token(&access).await?;
        let successor = RefreshTokenRecord {
            issued_at: rotated
                .rotated_at
                .or(family.rotated_at)
                .unwrap_or(rotated.issued_at),
            expires_at: family.expires_at,
            jkt: bound_successor(family.jkt.as_deref(), jkt),
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
            (
                family.auth_time,
                family.sid.clone(),
                family.amr.clone(),
                family.idp,
            ),
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
        grant: (Scopes, Vec<Resource>),
        jkt: Option<&str>,
    ) -> Result<Option<IssuedTokens>, ServerError> {
        let record = &token.record;
        let now = self.ctx.clock.now();
        let renewed = RefreshTokenRecord {
            expires_at: now + self.policy.refresh_token_ttl_seconds,
            ..record.clone()
        };
        let refresh = self
            .refresh_of(token, record.generation, grant, jkt)
            .await?;
        let renewal = FamilyWrite::Renew(Renewal {
            family_id: record.family_id,
            presented: record.token_hash.clone(),
            expires_at: renewed.expires_at,
            access_token: refresh.access.clone(),
            now,
            renews_record: RefreshTokenName::of(presented).is_none(),
        });
        let landed = self.commit_with_event(renewal, &refresh.event).await?;
        Ok(refresh.answer(landed, presented.clone(), &renewed, &token.origin))
    }

    /// Writes a rotation or a renewal with its event: `false` when its condition failed (the
    /// token is no longer current, or the family is revoked or expired) and nothing was written.
    async fn commit_with_event(
        &self,
        write: FamilyWrite,
        event: &AuditEvent,
    ) -> Result<bool, StoreError> {
        let batch = WriteBatch::of([write.into(), event.clone().into()]);
        let committed = self.ctx.store.writes().commit(batch).await?;
        Ok(matches!(committed, crate::store::Committed::Applied { .. }))
    }

    /// What a rotation and a renewal both write besides the refresh token: the access token
    /// with `grant`'s scopes and audience, signed before anything is written, and the family's
    /// `family.refreshed` event for `generation`.
    async fn refresh_of(
        &self,
        token: &RefreshTokenWithOrigin,
        generation: u32,
        grant: (Scopes, Vec<Resource>),
        jkt: Option<&str>,
    ) -> Result<Refresh, ServerError> {
        let (family_id, origin) = (token.record.family_id, &token.origin);
        let access = self.family_access_record(family_id, origin, grant, jkt);
        let event = self.family_event(
            AuditKind::FamilyRefreshed { generation },
            family_id,
            origin.into(),
        );
        let access_token = self.codec.encode(&access).await?;
        Ok(Refresh {
            access,
            access_token,
            event,
        })
    }
}

/// [`Issuer::successor_token`] with the key read.
pub(super) fn successor(
    key: &[u8; 32],
    family_id: &FamilyId,
    generation: u32,
    presented: &Secret,
) -> Secret {
    RefreshTokenName::new(*family_id, generation)
        .token(&successor_secret(key, family_id, generation, presented))
}

fn successor_secret(
    key: &[u8; 32],
    family_id: &FamilyId,
    generation: u32,
    presented: &Secret,
) -> [u8; 32] {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(SUCCESSOR_PURPOSE.as_bytes());
    mac.update(family_id.as_uuid().as_bytes());
    mac.update(&generation.to_be_bytes());
    mac.update(presented.expose().as_bytes());
    mac.finalize().into_bytes().into()
}

/// The key a rotation's successor is bound to: the family's, or else the proof's that came with
/// the rotation ([`RefreshTokenRecord::jkt`]).
fn bound_successor(family_jkt: Option<&str>, proof_jkt: Option<&str>) -> Option<String> {
    family_jkt.or(proof_jkt).map(str::to_owned)
}

/// A refresh's access token and event, made before the write that stores them with the
/// refresh token. Holds a live access token: it has no `Debug`.
struct Refresh {
    access: AccessTokenRecord,
    access_token: String,
    event: AuditEvent,
}

impl Refresh {
    /// The grant's answer once the write has `landed`, its event logged; `None` when the
    /// write's condition failed and nothing was written.
    fn answer(
        self,
        landed: bool,
        refresh_token: Secret,
        refresh: &RefreshTokenRecord,
        origin: &FamilyOrigin,
    ) -> Option<IssuedTokens> {
        if !landed {
            return None;
        }
        audit::logged(&[self.event]);
        let tokens = family_tokens(
            self.access_token,
            self.access,
            refresh_token,
            refresh,
            origin.geolocation.clone(),
            (
                origin.auth_time,
                origin.sid.clone(),
                origin.amr.clone(),
                origin.idp,
            ),
        );
        Some(tokens.into())
    }
}
