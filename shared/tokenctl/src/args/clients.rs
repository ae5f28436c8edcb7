//! `tokenctl clients`: its verbs and their arguments.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use token_domain::{
    ClientId, ClientProfile, GrantType, RefreshRotation, Resource, Scopes, SecretId,
};

use super::{parse_grant, parse_resource, parse_scopes};

#[derive(Subcommand)]
pub enum ClientsCommand {
    /// Register an application; prints its client_id and client_secret (shown only this once).
    Create(ClientsCreate),
    /// Disable an application: its credentials stop working (code 59).
    Disable {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
    },
    /// Register the application's public keys for `private_key_jwt` client authentication
    /// (a JWK Set file; replaces any registered before). Private or symmetric keys are refused.
    SetJwks {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Choose what a refresh does to the refresh token (takes effect at the next refresh).
    SetRefreshRotation {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
        #[arg(value_enum)]
        rotation: RefreshRotationArg,
    },
    /// Require (true) or stop requiring (false) a DPoP proof (RFC 9449) with every token
    /// request of this application.
    SetRequireDpop {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
        #[arg(value_name = "true|false", action = clap::ArgAction::Set)]
        require_dpop: bool,
    },
    /// Put the application under a security profile: `fapi2` (the FAPI 2.0 Security Profile)
    /// or `default`.
    SetProfile {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
        #[arg(value_enum)]
        profile: ProfileArg,
    },
    /// Pin the application to one way of authenticating (`any`: its secret, or `private_key_jwt`
    /// when it has keys; `none`: a public client, its client_id alone). A pinned client's other
    /// method is refused even with right credentials.
    SetAuthMethod {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
        #[arg(value_enum)]
        method: AuthMethodArg,
    },
    /// Set where OpenID Connect back-channel logout tokens are POSTed when a session in which
    /// the application received tokens ends (https, or http on a loopback host), or remove it.
    SetBackchannelLogoutUri {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
        #[arg(value_name = "URL", required_unless_present = "clear")]
        uri: Option<String>,
        /// Remove the URI: the application is no longer told of logouts.
        #[arg(long, conflicts_with = "uri")]
        clear: bool,
    },
    /// List every application, oldest first (never their secrets); `registration` tells
    /// self-registered ones (`dynamic`) from those made here (`static`).
    List,
    /// Print an application's registration (never its secrets).
    Show {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
    },
    /// An application's secrets (up to 5 at once): rotate without downtime by adding a new
    /// one, deploying it, then revoking the old one.
    #[command(subcommand)]
    Secrets(ClientSecretsCommand),
    /// The authorization servers the application may ask identity assertions (ID-JAG) for, by
    /// token exchange with `requested_token_type=urn:ietf:params:oauth:token-type:id-jag`.
    #[command(subcommand)]
    IdJagTargets(IdJagTargetsCommand),
}

#[derive(Subcommand)]
pub enum IdJagTargetsCommand {
    /// Allow assertions for an authorization server (replacing what was set for its issuer).
    Add {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
        /// The target's issuer: the exchange's `audience`, the assertion's `aud`.
        #[arg(long, value_name = "ISSUER")]
        audience: String,
        /// The application's client_id at the target: the assertion's `client_id`.
        #[arg(long = "client-id", value_name = "ID")]
        target_client_id: String,
        /// A resource an assertion for this target may name (repeatable) [default: any].
        #[arg(long = "resource", value_name = "URI", value_parser = parse_resource)]
        resources: Vec<Resource>,
        /// The scopes an assertion for this target may carry [default: any asked].
        #[arg(long, value_parser = parse_scopes)]
        scopes: Option<Scopes>,
    },
    /// The application's targets.
    List {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
    },
    /// Stop issuing assertions for a target (those issued expire within five minutes).
    Remove {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
        #[arg(long, value_name = "ISSUER")]
        audience: String,
    },
}

#[derive(Subcommand)]
pub enum ClientSecretsCommand {
    /// Add a secret; prints its secret_id and client_secret (shown only this once).
    Add {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
        /// Days until the secret stops working [default: never].
        #[arg(long, value_name = "DAYS")]
        expires_in: Option<u32>,
    },
    /// List the secrets' ids and dates (never the secrets).
    List {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
    },
    /// Revoke a secret (not the last unexpired one).
    Revoke {
        #[arg(value_name = "CLIENT_ID")]
        client_id: ClientId,
        #[arg(value_name = "SECRET_ID")]
        secret_id: SecretId,
    },
}

/// The client authentication methods a client may be pinned to.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AuthMethodArg {
    /// Its secret, or `private_key_jwt` when it has keys.
    Any,
    /// `client_secret_basic` or `client_secret_post` only.
    ClientSecret,
    /// Signed assertions only: its secrets stop authenticating.
    PrivateKeyJwt,
    /// A public client (a device or command-line tool that cannot keep a secret): its
    /// `client_id` alone authenticates it; its secrets stop authenticating. Not with
    /// `client_credentials`.
    None,
}

impl From<AuthMethodArg> for Option<token_domain::ClientAuthMethod> {
    fn from(arg: AuthMethodArg) -> Self {
        match arg {
            AuthMethodArg::Any => None,
            AuthMethodArg::ClientSecret => Some(token_domain::ClientAuthMethod::ClientSecret),
            AuthMethodArg::PrivateKeyJwt => Some(token_domain::ClientAuthMethod::PrivateKeyJwt),
            AuthMethodArg::None => Some(token_domain::ClientAuthMethod::Public),
        }
    }
}

/// The client's refresh policy (docs/decisions.md, Refresh tokens).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RefreshRotationArg {
    /// Every use returns a successor; a retry within the grace window gets the same one.
    Rotate,
    /// The token stays the same; each use renews its expiry (Concur's behaviour).
    Sliding,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ProfileArg {
    /// The rules every client follows.
    Default,
    /// The FAPI 2.0 Security Profile: pushed requests only, PKCE S256, `private_key_jwt` only,
    /// DPoP on every token request, codes valid 60 s, refresh tokens not rotated.
    Fapi2,
}

impl From<ProfileArg> for ClientProfile {
    fn from(arg: ProfileArg) -> Self {
        match arg {
            ProfileArg::Default => Self::Default,
            ProfileArg::Fapi2 => Self::Fapi2,
        }
    }
}

impl From<RefreshRotationArg> for RefreshRotation {
    fn from(arg: RefreshRotationArg) -> Self {
        match arg {
            RefreshRotationArg::Rotate => Self::Rotate,
            RefreshRotationArg::Sliding => Self::Sliding,
        }
    }
}

// Command-line switches: each an independent flag of the new client.
#[allow(clippy::struct_excessive_bools)]
#[derive(Args)]
pub struct ClientsCreate {
    #[arg(long)]
    pub name: String,
    /// Allowed scopes, space separated.
    #[arg(long, value_parser = parse_scopes, default_value = "")]
    pub scopes: Scopes,
    /// Allowed grants, comma separated [default: all].
    #[arg(
        long,
        alias = "grant",
        value_delimiter = ',',
        value_parser = parse_grant,
        value_name = "client_credentials,refresh_token,password,authorization_code,otp,device_code,token_exchange"
    )]
    pub grants: Vec<GrantType>,
    /// Where the company auth-token flow redirects (https; http only for loopback hosts).
    #[arg(long, value_name = "URL")]
    pub connect_url: Option<String>,
    /// Refuse the refresh grant for this application (code 107).
    #[arg(long)]
    pub no_refresh: bool,
    /// A redirect URI of the authorization code flow (repeatable; exact match; https, or
    /// http on a loopback host).
    #[arg(long = "redirect-uri", value_name = "URL")]
    pub redirect_uris: Vec<String>,
    /// Where OpenID Connect RP-initiated logout may send the browser afterwards (repeatable;
    /// exact match; https, or http on a loopback host).
    #[arg(long = "post-logout-redirect-uri", value_name = "URL")]
    pub post_logout_redirect_uris: Vec<String>,
    /// A first-party client (the company administration console): its users' tokens may call
    /// the company auth-token endpoint.
    #[arg(long)]
    pub first_party: bool,
    /// What a refresh does to the refresh token.
    #[arg(long, value_enum, default_value = "rotate")]
    pub refresh_rotation: RefreshRotationArg,
    /// A JWK Set file of the application's public keys (ES256, PS256, EdDSA), so that it may
    /// authenticate with `private_key_jwt` besides its secret.
    #[arg(long, value_name = "FILE")]
    pub jwks_file: Option<PathBuf>,
    /// Every token request must carry a DPoP proof (RFC 9449): its tokens are always bound to
    /// the client's key.
    #[arg(long)]
    pub require_dpop: bool,
    /// Authorization requests must be pushed (RFC 9126, `POST /oauth2/v0/par`): the authorize
    /// endpoint refuses one without a `request_uri` (code 175).
    #[arg(long)]
    pub require_par: bool,
    /// The security profile: `fapi2` (the FAPI 2.0 Security Profile) or `default`.
    #[arg(long, value_enum, default_value = "default")]
    pub profile: ProfileArg,
    /// Where OpenID Connect back-channel logout tokens are POSTed when a session in which the
    /// application received tokens ends (https, or http on a loopback host).
    #[arg(long, value_name = "URL")]
    pub backchannel_logout_uri: Option<String>,
    /// A resource (RFC 8707) the application may ask tokens for (repeatable; an absolute URI
    /// without fragment), within the deployment's RESOURCES [default: any the deployment
    /// allows].
    #[arg(long = "resource", value_name = "URI", value_parser = parse_resource)]
    pub resources: Vec<Resource>,
}
