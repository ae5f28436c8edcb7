//! OpenID Connect ID tokens on the grants' answers (docs/decisions.md, "Authorization code flow"):
//! every grant that starts or continues a user or company family returns one, signed with the
//! access tokens' keys.

use super::IssuedTokens;
use crate::domain::PrincipalType;
use crate::jwt::{AccessTokenCodec, SignIn};
use crate::signing::SigningError;

impl IssuedTokens {
    /// Adds the ID token for a user or company family, unless the grant already set one.
    /// Application tokens get none. The authorization code grant passes the sign-in's `nonce`
    /// and `auth_time`; the other grants pass [`SignIn::default`].
    pub async fn with_id_token(
        mut self,
        codec: &AccessTokenCodec,
        sign_in: SignIn<'_>,
    ) -> Result<Self, SigningError> {
        let for_principal = matches!(
            self.access.principal_type,
            PrincipalType::User | PrincipalType::Company
        );
        if for_principal && self.id_token.is_none() {
            self.id_token = Some(
                codec
                    .encode_id_token(&self.access, &self.access_token, sign_in)
                    .await?,
            );
        }
        Ok(self)
    }
}
