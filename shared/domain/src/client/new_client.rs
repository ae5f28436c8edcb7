//! An application's registration as an administrator describes it: what
//! `tokenctl clients create` checks (in the admin layer) before it becomes a [`Client`].

use std::collections::BTreeSet;

use super::{Client, ClientProfile, GrantType, RefreshRotation};
use crate::clock::UnixTime;
use crate::jose::PublicJwkSet;
use crate::{ClientId, ClientSecrets, Resource, Scopes};

// Independent registration switches, as `Client`'s.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Clone)]
pub struct NewClient {
    pub name: String,
    pub scopes: Scopes,
    pub grants: BTreeSet<GrantType>,
    pub connect_url: Option<String>,
    pub refresh_allowed: bool,
    pub first_party: bool,
    pub redirect_uris: Vec<String>,
    pub refresh_rotation: RefreshRotation,
    /// Where RP-initiated logout may return the browser (`--post-logout-redirect-uri`).
    pub post_logout_redirect_uris: Vec<String>,
    /// Public keys for `private_key_jwt` (`--jwks-file`), already checked by
    /// [`PublicJwkSet::parse`].
    pub jwks: Option<PublicJwkSet>,
    /// Every token request must carry a DPoP proof (`--require-dpop`).
    pub require_dpop: bool,
    /// Authorization requests must be pushed (`--require-par`).
    pub require_par: bool,
    /// Its security profile (`--profile`).
    pub profile: ClientProfile,
    /// Where back-channel logout tokens are POSTed (`--backchannel-logout-uri`).
    pub backchannel_logout_uri: Option<String>,
    /// The resources (RFC 8707) it may ask tokens for (`--resource`); empty: any the
    /// deployment allows.
    pub resources: Vec<Resource>,
}

impl NewClient {
    /// A client with every grant, refresh allowed, and no Connect URL.
    pub fn named(name: impl Into<String>, scopes: Scopes) -> Self {
        Self {
            name: name.into(),
            scopes,
            grants: GrantType::ALL.into_iter().collect(),
            connect_url: None,
            refresh_allowed: true,
            first_party: false,
            redirect_uris: Vec::new(),
            refresh_rotation: RefreshRotation::Rotate,
            post_logout_redirect_uris: Vec::new(),
            jwks: None,
            require_dpop: false,
            require_par: false,
            profile: ClientProfile::Default,
            backchannel_logout_uri: None,
            resources: Vec::new(),
        }
    }

    /// The client this registration describes, enabled from `now`, with `id` and `secrets`.
    /// Unchecked: `admin::create_client` checks the name, grants and addresses before it calls this.
    pub fn into_client(self, id: ClientId, secrets: ClientSecrets, now: UnixTime) -> Client {
        Client {
            id,
            name: self.name,
            secrets,
            allowed_scopes: self.scopes,
            grants: self.grants,
            connect_url: self.connect_url,
            refresh_allowed: self.refresh_allowed,
            enabled: true,
            created_at: now,
            first_party: self.first_party,
            redirect_uris: self.redirect_uris,
            refresh_rotation: self.refresh_rotation,
            post_logout_redirect_uris: self.post_logout_redirect_uris,
            jwks: self.jwks,
            require_dpop: self.require_dpop,
            require_par: self.require_par,
            profile: self.profile,
            auth_method: None,
            backchannel_logout_uri: self.backchannel_logout_uri,
            registration: None,
            resources: self.resources,
            document_url: None,
            id_jag_targets: Vec::new(),
        }
    }
}
