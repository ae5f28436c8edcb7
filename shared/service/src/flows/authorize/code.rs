//! Minting an authorization code once the user approved.

use super::pending::PendingAuthorization;
use crate::clock::UnixTime;
use crate::domain::{AuthorizationCode, PrincipalId, AUTHORIZATION_CODE_TTL_SECONDS};
use crate::random::{RandomExt, RandomSource};
use crate::secrets::TokenHash;

/// The code for the redirect (shown once) and the record to store (its hash only).
#[derive(Debug)]
pub struct IssuedCode {
    pub code: String,
    pub record: AuthorizationCode,
}

/// An opaque 256-bit code bound to everything the token request must match.
pub fn issue_code(
    pending: &PendingAuthorization,
    user_id: PrincipalId,
    random: &dyn RandomSource,
    now: UnixTime,
) -> IssuedCode {
    let code = random.opaque_token();
    let request = &pending.request;
    let record = AuthorizationCode {
        code_hash: TokenHash::of(&code),
        client_id: request.client_id,
        redirect_uri: request.redirect_uri.clone(),
        user_id,
        scopes: request.scopes.clone(),
        code_challenge: request.code_challenge.clone(),
        nonce: request.nonce.clone(),
        issued_at: now,
        expires_at: now + AUTHORIZATION_CODE_TTL_SECONDS,
        redeemed_at: None,
        family_id: None,
    };
    IssuedCode { code, record }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authorize::request::{Prompt, ValidatedAuthorization};
    use crate::domain::{ClientId, Scopes};
    use crate::random::OsRandom;

    #[test]
    fn only_the_hash_is_kept_and_the_binding_is_complete() {
        let request = ValidatedAuthorization {
            client_id: ClientId::new(OsRandom.uuid()),
            redirect_uri: "https://app.example/cb".into(),
            scopes: Scopes::parse("openid").unwrap(),
            state: Some("s".into()),
            nonce: Some("n".into()),
            prompt: Prompt::default(),
            code_challenge: Some("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into()),
        };
        let pending = PendingAuthorization::new(request.clone(), &OsRandom, 100);
        let user = PrincipalId::new(OsRandom.uuid());
        let IssuedCode { code, record } = issue_code(&pending, user, &OsRandom, 100);
        assert_eq!(code.len(), 43, "256 bits, unpadded base64url");
        assert!(record.code_hash.verify(&code));
        assert!(!format!("{record:?}").contains(&code));
        assert_eq!(record.client_id, request.client_id);
        assert_eq!(record.redirect_uri, request.redirect_uri);
        assert_eq!(record.code_challenge, request.code_challenge);
        assert_eq!(record.nonce.as_deref(), Some("n"));
        assert_eq!(record.user_id, user);
        assert_eq!(record.expires_at - record.issued_at, 300);
        assert!(record.is_redeemable(399) && !record.is_redeemable(400));
    }
}
