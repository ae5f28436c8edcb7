//! Minting an authorization code once the user approved. The token request that redeems it is
//! checked by the domain's `AuthorizationCode::check_redemption`.

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
        expires_at: now + pending.code_ttl.unwrap_or(AUTHORIZATION_CODE_TTL_SECONDS),
        redeemed_at: None,
        family_id: None,
        auth_time: pending.signed_in_at,
        sid: pending.sid.clone(),
        amr: pending.amr.clone(),
        idp: pending.idp,
        dpop_jkt: request.dpop_jkt.clone(),
        resources: request.resources.clone(),
    };
    IssuedCode { code, record }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::RedemptionRefusal;
    use crate::flows::authorize::ValidatedAuthorization;
    use crate::random::OsRandom;

    #[test]
    fn only_the_hash_is_kept_and_the_binding_is_complete() {
        let request = ValidatedAuthorization {
            state: Some("s".into()),
            nonce: Some("n".into()),
            code_challenge: Some("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into()),
            ..ValidatedAuthorization::for_tests("openid")
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

    #[test]
    fn redemption_repeats_the_redirect_uri_and_answers_the_challenge() {
        const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let request = ValidatedAuthorization {
            code_challenge: Some("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into()),
            ..ValidatedAuthorization::for_tests("")
        };
        let pending = PendingAuthorization::new(request, &OsRandom, 100);
        let user = PrincipalId::new(OsRandom.uuid());
        let mut record = issue_code(&pending, user, &OsRandom, 100).record;
        let uri = "https://app.example/cb";
        assert_eq!(record.check_redemption(uri, Some(VERIFIER)), Ok(()));
        assert_eq!(
            record.check_redemption("https://app.example/other", Some(VERIFIER)),
            Err(RedemptionRefusal::RedirectUriMismatch)
        );
        let bad = Err(RedemptionRefusal::VerifierMismatch);
        assert_eq!(record.check_redemption(uri, None), bad);
        assert_eq!(record.check_redemption(uri, Some(&VERIFIER[1..])), bad);
        record.code_challenge = None;
        assert_eq!(record.check_redemption(uri, None), Ok(()));
        assert_eq!(
            record.check_redemption(uri, Some(VERIFIER)),
            bad,
            "a verifier for a code issued without a challenge is a downgrade"
        );
    }
}
