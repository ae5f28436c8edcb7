//! OpenID Connect ID tokens on the grants' answers (contract part 8): every grant that starts
//! or continues a user or company family returns one, signed with the access tokens' keys.

use super::IssuedTokens;
use crate::domain::PrincipalType;
use crate::jwt::AccessTokenCodec;
use crate::signing::SigningError;

impl IssuedTokens {
    /// Adds the ID token for a user or company family, unless the grant already set one (the
    /// authorization code grant sets its own, with the authorize request's `nonce`).
    /// Application tokens get none. The OTP grant calls this with `None` as well.
    pub async fn with_id_token(
        mut self,
        codec: &AccessTokenCodec,
        nonce: Option<&str>,
    ) -> Result<Self, SigningError> {
        let for_principal = matches!(
            self.access.principal_type,
            PrincipalType::User | PrincipalType::Company
        );
        if for_principal && self.id_token.is_none() {
            self.id_token = Some(
                codec
                    .encode_id_token(&self.access, &self.access_token, nonce)
                    .await?,
            );
        }
        Ok(self)
    }
}
