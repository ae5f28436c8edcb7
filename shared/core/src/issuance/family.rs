//! Starting a family: its first refresh and access tokens and its audit event in one write,
//! optionally taking back a login attempt or moving a legacy exchange's link to it.

use super::Issuer;
use crate::audit;
use crate::domain::audit::AuditEvent;
use crate::domain::audit::AuditKind;
use crate::domain::{AccessTokenRecord, Family, FamilyId, RefreshTokenName};
use crate::errors::ServerError;
use crate::random::{RandomExt, TOKEN_BYTES};
use crate::store::{Committed, FamilyWrite, LegacyLink, LoginRefund, NewFamily, WriteBatch};

use super::{family_tokens, FamilyStart, FamilyTokens};

impl Issuer<'_> {
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
        link: LegacyExchangeLink,
    ) -> Result<Option<FamilyTokens>, ServerError> {
        self.create_family(start, Some(link), None).await
    }

    async fn create_family(
        &self,
        start: FamilyStart,
        link: Option<LegacyExchangeLink>,
        login_refund: Option<LoginRefund>,
    ) -> Result<Option<FamilyTokens>, ServerError> {
        let now = self.ctx.clock.now();
        let family_id = FamilyId::new(self.ctx.random.uuid());
        let mut secret = [0u8; TOKEN_BYTES];
        self.ctx.random.fill(&mut secret);
        let refresh_token = RefreshTokenName::new(family_id, 0).token(&secret);
        let refresh = self.refresh_record(&refresh_token, family_id, start.client_id, 0);
        let access = AccessTokenRecord {
            audience: start.audience,
            auth_time: start.auth_time,
            amr: start.amr.clone(),
            ..self.access_record(
                start.client_id,
                start.principal_type,
                *start.principal_id.as_uuid(),
                Some(family_id),
                start.scopes.clone(),
                start.jkt.clone(),
            )
        };
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
            auth_time: start.auth_time,
            sid: start.sid.clone(),
            amr: start.amr.clone(),
            idp: start.idp,
            resources: start.resources,
            rotated_at: None,
            rotated_by: None,
            current_jkt: None,
            bound_from: None,
        };
        let started = self.family_event(
            AuditKind::FamilyStarted {
                grant: start.grant,
                issued_by: start.issued_by,
            },
            family_id,
            (&family).into(),
        );
        let mut batch = WriteBatch::new();
        batch.require([
            // The first token names its family: no record of its own (docs/decisions.md, "What
            // a refresh writes").
            FamilyWrite::Start(NewFamily {
                family,
                refresh_token: None,
                access_token: access.clone(),
            })
            .into(),
            started.clone().into(),
        ]);
        // Nothing to take back once the attempt's window ended: the family is written anyway.
        if let Some(refund) = login_refund {
            batch.if_possible([refund.into()]);
        }
        let mut moved = None;
        let mut revoked = None;
        if let Some(mut link) = link {
            link.link.exchange.family_id = family_id;
            let exchanged_at = link.link.exchange.exchanged_at;
            moved = Some(batch.require([link.link.into()]));
            // Only a live family is revoked here, with its event: one revoked already (or gone)
            // is left as it is, and the new family is written all the same.
            if let Some((previous, events)) = link.revoke_previous {
                revoked = Some((
                    batch.if_possible([
                        FamilyWrite::Revoke {
                            id: previous,
                            now: exchanged_at,
                        }
                        .into(),
                        events.clone().into(),
                    ]),
                    events,
                ));
            }
        }
        let committed = self.ctx.store.writes().commit(batch).await?;
        match committed {
            Committed::Applied { .. } => {}
            Committed::Refused(part) if Some(part) == moved => return Ok(None),
            Committed::Refused(_) | Committed::Limited { .. } => {
                return Err(ServerError::internal(
                    "the store refused a new family's write without a condition that can fail",
                ))
            }
        }
        audit::logged(&[started]);
        if let Some((part, events)) = revoked {
            if committed.applied(part) {
                audit::logged(&events);
            }
        }
        Ok(Some(family_tokens(
            access_token,
            access,
            refresh_token,
            &refresh,
            start.geolocation,
            (start.auth_time, start.sid, start.amr, start.idp),
        )))
    }
}

/// A legacy exchange's link to the family it starts, and the family the previous exchange
/// created, to revoke with its `family.revoked` events if it is still live.
#[derive(Debug, Clone)]
pub struct LegacyExchangeLink {
    pub link: LegacyLink,
    pub revoke_previous: Option<(FamilyId, Vec<AuditEvent>)>,
}
