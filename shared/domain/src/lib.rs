//! The domain layer (crate `token-domain`): plain values and rules, no I/O.
//!
//! The domain model: identifiers, scopes, addresses, one-time passwords, and the records the
//! grants read and write. Plain values with their own rules; nothing here reaches a store, the
//! mail or HTTP.

mod amr;
pub mod audit;
mod authorization_code;
mod channel;
mod client;
mod client_secrets;
mod device;
mod directory;
mod federation;
mod geolocation;
mod id_jag;
mod ids;
mod legacy;
mod one_time_password;
mod passkey;
mod principal;
mod pushed_authorization;
mod refresh_token_name;
mod resource;
pub mod scim;
mod scopes;
mod second_factor;
mod session;
mod tokens;

pub use amr::AuthMethod;
pub use authorization_code::{
    AuthorizationCode, RedemptionRefusal, AUTHORIZATION_CODE_TTL_SECONDS, FAPI2_CODE_TTL_SECONDS,
    REDEEMED_CODE_RETENTION_SECONDS,
};
pub use channel::{AddressKey, ChannelHandle, InvalidChannelHandle};
pub use client::{
    cache_lifetime, check_backchannel_logout_uri, check_connect_url,
    check_post_logout_redirect_uri, check_redirect_uri, CheckedMetadata, Client, ClientAuthMethod,
    ClientMetadata, ClientProfile, DocumentClient, DocumentRefusal, DocumentUrl,
    DynamicRegistration, GrantType, InvalidBackchannelLogoutUri, InvalidConnectUrl,
    InvalidRedirectUri, MetadataDocument, NewClient, RefreshRotation, RegisteredAuthMethod,
    RegistrationError, RegistrationErrorKind, DOCUMENT_MAX_AGE_SECONDS, DOCUMENT_MIN_AGE_SECONDS,
    DOCUMENT_STALE_SECONDS, MAX_DOCUMENT_URL_LEN,
};
pub use client_secrets::{
    ClientSecret, ClientSecrets, ListedSecret, SecretCheck, SecretsRefusal,
    LAST_USED_RESOLUTION_SECONDS, MAX_CLIENT_SECRETS,
};
pub use device::{
    DeviceAuthorization, DeviceDecision, DeviceStatus, PollVerdict, UserCode,
    DEVICE_CODE_RETENTION_SECONDS, DEVICE_CODE_TTL_SECONDS, DEVICE_POLL_INTERVAL_SECONDS,
    DEVICE_SLOW_DOWN_SECONDS, USER_CODE_ALPHABET, USER_CODE_LENGTH,
};
pub use directory::{DirectoryGroup, DirectoryProfile, ProvisioningToken, MAX_GROUP_MEMBERS};
pub use federation::{
    FederationLink, IdentityProvider, IdpDomain, IdpDomains, IdpProtocol, InvalidDomains,
    InvalidUpstreamSubject, LinkBy, OidcConnection, PendingUpstreamRequest, SamlConnection,
    SealedSecret, SsoPolicy, TokenEndpointAuth, UpstreamSubject, MAX_IDP_DOMAINS,
    MAX_UPSTREAM_SUBJECT_BYTES, UPSTREAM_REQUEST_TTL_SECONDS,
};
pub use geolocation::{Geolocation, InvalidGeolocation};
pub use id_jag::{
    IdJagTarget, ID_JAG_GRANT_PROFILE, ID_JAG_MAX_LIFETIME_SECONDS, ID_JAG_TOKEN_TYPE, ID_JAG_TYP,
    MAX_ID_JAG_TARGETS,
};
pub use ids::{
    is_url_client_id, ClientId, ConsumerKey, FamilyId, IdpId, InvalidConsumerKey, InvalidId,
    InvalidLogin, Login, PrincipalId, SecretId, TokenId,
};
pub use legacy::{LegacyApp, LegacyExchange, LegacyToken};
pub use one_time_password::{OneTimePassword, OtpHash, OTP_DIGITS, OTP_VALIDITY_MINUTES};
pub use passkey::{
    passkey_name, CeremonyPurpose, PasskeyCeremony, PasskeyCredential,
    PASSKEY_CEREMONY_TTL_SECONDS, PASSKEY_NAME_MAX_CHARS,
};
pub use principal::{Company, CompanyStatus, PrincipalType, User, UserStatus};
pub use pushed_authorization::{
    PushedAuthorization, PUSHED_REQUEST_TTL_SECONDS, REQUEST_URI_PREFIX,
};
pub use refresh_token_name::RefreshTokenName;
pub use resource::{
    narrowed, InvalidResource, Resource, ResourcePolicy, TargetRefusal, MAX_RESOURCES_PER_REQUEST,
    MAX_RESOURCE_LENGTH,
};
pub use scopes::{InvalidScope, Scopes, OPENID, SECRETS_MANAGEMENT_SCOPE};
pub use second_factor::{
    normalise_recovery_code, recovery_codes, MfaPolicy, TotpFactor, TotpSecret,
    RECOVERY_CODE_COUNT, TOTP_DIGITS, TOTP_SKEW_STEPS, TOTP_STEP_SECONDS,
};
pub use session::{
    Consent, SessionCookie, SessionId, SessionLimits, SessionOrigin, SignInSession, StartedSession,
    UpstreamSession, LAST_SEEN_RESOLUTION_SECONDS,
};
pub use tokens::{
    AccessTokenRecord, Actor, AuthToken, Family, RefreshTokenRecord, ACCESS_TOKEN_TTL_SECONDS,
    AUTH_TOKEN_TTL_SECONDS, MAX_EXCHANGE_CHAIN,
};

pub mod clock;
pub mod jose;
pub mod pkce;
pub mod random;
pub mod secrets;
