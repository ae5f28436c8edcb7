//! An access token for the user an identity assertion (ID-JAG) of a company IdP named: no
//! family, so no refresh token and no ID token; stored with its audit event in one write, as an
//! exchanged token is, so that introspection and revocation know it.

use super::{IssuedTokens, Issuer};
use crate::clock::UnixTime;
use crate::domain::audit::AuditKind;
use crate::domain::{AuthMethod, Client, IdpId, PrincipalType, Resource, Scopes, User};
use crate::errors::ServerError;
use crate::store::FirstUse;

/// What a redeemed assertion grants, and where it came from.
#[derive(Debug, Clone)]
pub struct Asserted {
    pub scopes: Scopes,
    pub audience: Vec<Resource>,
    pub jkt: Option<String>,
    /// How and when the user signed in at the IdP, as the assertion said.
    pub auth_time: Option<UnixTime>,
    pub amr: Vec<AuthMethod>,
    pub idp: IdpId,
    pub assertion_jti: String,
    /// The assertion's `jti` spent, in the token's write.
    pub first_use: FirstUse,
}

impl Issuer<'_> {
    /// Signs the token, then stores it and `token.id_jag_redeemed` together with the
    /// assertion's first use: `None` if the assertion was used before (nothing is written).
    pub async fn issue_asserted_token(
        &self,
        client: &Client,
        user: &User,
        asserted: Asserted,
    ) -> Result<Option<IssuedTokens>, ServerError> {
        let own = self.for_client(client).access_record(
            client.id,
            PrincipalType::User,
            *user.id.as_uuid(),
            None,
            asserted.scopes,
            asserted.jkt,
        );
        let access = crate::domain::AccessTokenRecord {
            audience: asserted.audience,
            auth_time: asserted.auth_time,
            amr: asserted.amr,
            ..own
        };
        let event = crate::audit::event(
            self.ctx,
            AuditKind::TokenIdJagRedeemed {
                idp: asserted.idp,
                assertion_jti: asserted.assertion_jti,
                access_jti: access.jti,
            },
        )
        .client(client.id)
        .principal(PrincipalType::User, user.id);
        self.sign_and_store_with_event(access, event, Some(asserted.first_use))
            .await
    }
}
