//! The WebAuthn relying party (docs/decisions.md, "Passkeys"), free of HTTP and of any store: the
//! RP ID and origin, and the two halves of each ceremony over serialised state. The ceremonies'
//! state and the credentials are kept by [`super`]; this module only runs `webauthn-rs`.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use url::Url;
use webauthn_rs::prelude::{
    AuthenticationResult, CreationChallengeResponse, CredentialID, DiscoverableAuthentication,
    Passkey, PasskeyRegistration, PublicKeyCredential, RegisterPublicKeyCredential,
    RequestChallengeResponse, Uuid, Webauthn, WebauthnBuilder,
};

use crate::domain::audit::PasskeyRefusal;
use crate::domain::{Geolocation, PrincipalId};

/// The relying party of one deployment.
#[derive(Debug)]
pub struct RelyingParty {
    webauthn: Webauthn,
}

/// The RP ID or origin cannot be used (`WEBAUTHN_RP_ID` is not the geolocation's host or a
/// parent domain of it).
#[derive(Debug, thiserror::Error)]
#[error("WEBAUTHN_RP_ID {rp_id:?} cannot be used with the origin {origin}")]
pub struct InvalidRelyingParty {
    pub rp_id: String,
    pub origin: String,
}

/// The RP ID when `WEBAUTHN_RP_ID` is not set: the geolocation's host.
pub fn default_rp_id(geolocation: &Geolocation) -> String {
    Url::parse(geolocation.as_str())
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The credential id as stored and shown: base64url without padding.
pub fn credential_key(id: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(id)
}

impl RelyingParty {
    /// The relying party for `origin` (the geolocation's scheme, host and port) with `rp_id`.
    pub fn new(rp_id: &str, origin: &str) -> Result<Self, InvalidRelyingParty> {
        let invalid = || InvalidRelyingParty {
            rp_id: rp_id.to_owned(),
            origin: origin.to_owned(),
        };
        let origin = Url::parse(origin).map_err(|_| invalid())?;
        let origin = Url::parse(&origin.origin().ascii_serialization()).map_err(|_| invalid())?;
        let webauthn = WebauthnBuilder::new(rp_id, &origin)
            .and_then(|builder| builder.rp_name("Sign-in").build())
            .map_err(|_| invalid())?;
        Ok(Self { webauthn })
    }

    /// The options of a new discoverable passkey for `user` (the user handle is the principal
    /// id), excluding the credentials the user has; and the state to keep until the answer.
    pub fn start_registration(
        &self,
        user: &PrincipalId,
        login: &str,
        existing: Vec<CredentialID>,
    ) -> Result<(serde_json::Value, String), PasskeyRefusal> {
        let exclude = (!existing.is_empty()).then_some(existing);
        let (options, state): (CreationChallengeResponse, _) = self
            .webauthn
            .start_passkey_registration(*user.as_uuid(), login, login, exclude)
            .map_err(|_| PasskeyRefusal::Invalid)?;
        // webauthn-rs asks for a non-discoverable key; a passkey signs in without a login, so
        // the credential must be resident. The stored state does not depend on this choice.
        let mut options = serde_json::to_value(&options).map_err(|_| PasskeyRefusal::Invalid)?;
        let selection = &mut options["publicKey"]["authenticatorSelection"];
        selection["residentKey"] = "required".into();
        selection["requireResidentKey"] = true.into();
        Ok((options, to_json(&state)?))
    }

    /// The answer to a registration: the new passkey (serialised) and its credential id.
    pub fn finish_registration(
        &self,
        state: &str,
        answer: &str,
    ) -> Result<(String, String), PasskeyRefusal> {
        let state: PasskeyRegistration = from_json(state)?;
        let answer: RegisterPublicKeyCredential = from_json(answer)?;
        let passkey = self
            .webauthn
            .finish_passkey_registration(&answer, &state)
            .map_err(|_| PasskeyRefusal::Invalid)?;
        Ok((credential_key(passkey.cred_id()), to_json(&passkey)?))
    }

    /// The options of a sign-in with any discoverable passkey, and the state to keep.
    pub fn start_authentication(
        &self,
    ) -> Result<(RequestChallengeResponse, String), PasskeyRefusal> {
        let (options, state) = self
            .webauthn
            .start_discoverable_authentication()
            .map_err(|_| PasskeyRefusal::Invalid)?;
        Ok((options, to_json(&state)?))
    }

    /// Who an authentication answer claims to be: the user handle and the credential id. Nothing
    /// is verified yet.
    pub fn identify(
        answer: &str,
    ) -> Result<(PrincipalId, String, PublicKeyCredential), PasskeyRefusal> {
        let answer: PublicKeyCredential = from_json(answer)?;
        let user = answer
            .get_user_unique_id()
            .and_then(|handle| Uuid::from_slice(handle).ok())
            .ok_or(PasskeyRefusal::UnknownCredential)?;
        let credential = credential_key(answer.get_credential_id());
        Ok((PrincipalId::new(user), credential, answer))
    }

    /// Verifies the answer against the stored passkey (origin, RP ID, challenge, signature, user
    /// verification, counter); answers the passkey as it is to be stored after this use.
    pub fn finish_authentication(
        &self,
        state: &str,
        answer: &PublicKeyCredential,
        passkey: &str,
    ) -> Result<String, PasskeyRefusal> {
        let state: DiscoverableAuthentication = from_json(state)?;
        let mut passkey: Passkey = from_json(passkey)?;
        let result: AuthenticationResult = self
            .webauthn
            .finish_discoverable_authentication_v2(answer, state, &passkey)
            .map_err(|_| PasskeyRefusal::Invalid)?;
        // The counter and backup state, as the library advises after every authentication.
        passkey.update_credential(&result);
        to_json(&passkey)
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, PasskeyRefusal> {
    serde_json::to_string(value).map_err(|_| PasskeyRefusal::Invalid)
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, PasskeyRefusal> {
    serde_json::from_str(text).map_err(|_| PasskeyRefusal::Invalid)
}
