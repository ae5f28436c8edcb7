//! The token endpoint's error catalogue (spec part 7) as data: each entry has its numeric
//! `code`, its RFC 6749 `error` and its `error_description`, exactly as the specification
//! spells them. The HTTP status follows from `error` (docs/decisions.md, "Token formats").

use http::StatusCode;
use serde::Serialize;

/// The RFC 6749 §5.2 `error` values the catalogue uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OAuthError {
    InvalidRequest,
    InvalidGrant,
    InvalidClient,
    InvalidScope,
    AccessDenied,
    /// A rate limit (RFC 8628 §3.5's name for "ask less often").
    SlowDown,
    /// RFC 9449 §5: the DPoP proof is missing where required, malformed or does not verify.
    InvalidDpopProof,
    /// RFC 9449 §8: retry with the server's nonce (sent in `DPoP-Nonce`).
    UseDpopNonce,
    /// RFC 8628 §3.5: the user has not decided yet; poll again after the interval.
    AuthorizationPending,
    /// RFC 8628 §3.5's `slow_down` for a device polling faster than its interval: a 400 like
    /// every poll answer, unlike the rate limits' 429 of the same name.
    DevicePollSlowDown,
    /// RFC 8628 §3.5's `access_denied`, a 400: the user denied; the device stops polling.
    DeviceAccessDenied,
    /// RFC 8628 §3.5: the device code expired; the device may start again.
    ExpiredToken,
    /// RFC 8707 §2: a `resource` that is malformed or may not be granted to the client.
    InvalidTarget,
    /// RFC 9101 §6.2: the `request` object does not verify or its claims are not acceptable.
    InvalidRequestObject,
}

impl OAuthError {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::InvalidGrant => "invalid_grant",
            Self::InvalidClient => "invalid_client",
            Self::InvalidScope => "invalid_scope",
            // RFC 8628 reuses these two names for poll answers with another status.
            Self::AccessDenied | Self::DeviceAccessDenied => "access_denied",
            Self::SlowDown | Self::DevicePollSlowDown => "slow_down",
            Self::InvalidDpopProof => "invalid_dpop_proof",
            Self::UseDpopNonce => "use_dpop_nonce",
            Self::AuthorizationPending => "authorization_pending",
            Self::ExpiredToken => "expired_token",
            Self::InvalidTarget => "invalid_target",
            Self::InvalidRequestObject => "invalid_request_object",
        }
    }

    /// 400 for request, grant and scope errors and every device poll answer (RFC 8628 §3.5
    /// answers as RFC 6749 §5.2 does); 401 for client authentication; 403 for a denied client;
    /// 429 for a rate limit (with `Retry-After`).
    pub fn status(self) -> StatusCode {
        match self {
            Self::InvalidClient => StatusCode::UNAUTHORIZED,
            Self::AccessDenied => StatusCode::FORBIDDEN,
            Self::SlowDown => StatusCode::TOO_MANY_REQUESTS,
            Self::InvalidRequest
            | Self::InvalidGrant
            | Self::InvalidScope
            | Self::InvalidDpopProof
            | Self::UseDpopNonce
            | Self::AuthorizationPending
            | Self::DevicePollSlowDown
            | Self::DeviceAccessDenied
            | Self::ExpiredToken
            | Self::InvalidTarget
            | Self::InvalidRequestObject => StatusCode::BAD_REQUEST,
        }
    }
}

macro_rules! catalogue {
    ($($(#[$doc:meta])* $variant:ident = ($code:literal, $error:ident, $description:literal),)*) => {
        /// One entry of the catalogue. Variants are named for the situation; a numeric code may
        /// appear twice (119) where the specification gives two descriptions.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            pub fn code(self) -> u16 {
                match self { $(ErrorCode::$variant => $code,)* }
            }

            pub fn error(self) -> OAuthError {
                match self { $(ErrorCode::$variant => OAuthError::$error,)* }
            }

            pub fn description(self) -> &'static str {
                match self { $(ErrorCode::$variant => $description,)* }
            }
        }
    };
}

catalogue! {
    IncorrectCredentials = (5, InvalidGrant, "Incorrect credentials. Please Retry"),
    AccountDisabled = (10, InvalidGrant, "Account is disabled. Please contact support"),
    AccountDisabledAlt = (11, InvalidGrant, "Account is disabled. Please contact support"),
    LogonDenied = (12, InvalidGrant, "Logon Denied. Please contact support"),
    LogonDeniedAlt = (13, InvalidGrant, "Logon Denied. Please contact support"),
    AccountLocked = (14, InvalidGrant, "Account Locked. Please contact support"),
    /// Carries the `geolocation` of the principal's home deployment.
    UserLivesElsewhere = (16, InvalidRequest, "user lives elsewhere"),
    /// The company auth token is unknown, expired or does not match the company.
    IncorrectAuthToken = (19, InvalidGrant, "Incorrect credentials. Please Retry"),
    LogonDeniedIpRestriction = (20, InvalidGrant, "Logon Denied. Please contact support (typically due to IP restriction)"),
    UsernameMissing = (51, InvalidRequest, "username was not supplied"),
    PasswordMissing = (52, InvalidRequest, "password was not supplied"),
    CompanyNotEnabledForClient = (53, InvalidClient, "company is not enabled for this client"),
    ScopeExceedsGrant = (54, InvalidScope, "requested scope exceeds granted scope"),
    UnknownEmail = (55, InvalidRequest, "we don't know this email"),
    OtpMissing = (56, InvalidRequest, "otp was not supplied"),
    ChannelTypeMissing = (57, InvalidRequest, "channel_type missing"),
    ChannelHandleMissing = (58, InvalidRequest, "channel_handle missing"),
    ClientDisabled = (59, AccessDenied, "client disabled"),
    UnsupportedGrant = (60, InvalidGrant, "these are not the grants you are looking for"),
    ClientNotFound = (61, InvalidClient, "client not found"),
    ClientIdMissing = (62, InvalidRequest, "client_id was not supplied"),
    ClientSecretMissing = (63, InvalidRequest, "client_secret was not supplied"),
    /// `private_key_jwt`: the client assertion does not authenticate the client (bad signature,
    /// claims, algorithm, or a replayed `jti`); 63 as the secret it stands in for.
    ClientAssertionInvalid = (63, InvalidClient, "client_assertion is invalid"),
    /// A secret past the expiry it was added with (docs/decisions.md, Client secrets).
    ClientSecretExpired = (64, InvalidClient, "client_secret has expired"),
    IncorrectClientSecret = (64, InvalidClient, "Incorrect credentials. Please Retry"),
    GrantTypeMissing = (65, InvalidRequest, "grant_type was not supplied"),
    InvalidChannelType = (80, InvalidRequest, "invalid channel type"),
    BadChannelHandle = (81, InvalidRequest, "bad channel handle"),
    /// docs/decisions.md, "One-time passwords": five open requests for one address within 15
    /// minutes.
    TooManyOpenOtpRequests = (82, InvalidRequest, "number of open otp requests has been exceeded"),
    OtpNotFound = (83, InvalidRequest, "otp not found"),
    FactVerificationFailed = (84, InvalidRequest, "fact verification failed"),
    OtpVerificationFailed = (85, InvalidRequest, "otp verification failed"),
    /// A `link` for the one-time-password mail outside the client's registered addresses.
    OtpLinkNotRegistered = (86, InvalidRequest, "link is not an address registered for this client"),
    UnknownBackendUsername = (100, InvalidRequest, "backend does not know about this username"),
    CodeMissing = (101, InvalidRequest, "code was not supplied"),
    RedirectUriMissing = (102, InvalidRequest, "redirect_uri was not supplied"),
    CodeBadOrExpired = (103, InvalidRequest, "code is bad or expired"),
    RedirectUriMismatch = (104, InvalidGrant, "redirect_uri does not match the previous grant"),
    /// An auth token or refresh token presented by a client it was not issued to.
    GrantNotIssuedToClient = (105, InvalidGrant, "this grant was not issued to you!"),
    RefreshTokenMissing = (106, InvalidRequest, "refresh_token was not supplied"),
    RefreshDisallowed = (107, InvalidRequest, "refresh disallowed for app"),
    BadRefreshToken = (108, InvalidGrant, "bad or expired refresh token"),
    LoginIdMissing = (109, InvalidRequest, "loginid was not supplied"),
    UnauthenticatedClient = (115, InvalidRequest, "unauthenticated client will not be issued token!"),
    NonceMandatory = (117, InvalidRequest, "nonce is mandatory for this response_type"),
    DisplayInvalid = (118, InvalidRequest, "display is invalid"),
    PromptInvalid = (119, InvalidRequest, "prompt is invalid"),
    PromptConsentRequiredForOffline = (119, InvalidRequest, "prompt must be set to consent for offline_access"),
    CredtypeInvalid = (120, InvalidRequest, "credtype is invalid"),
    LoginTypeInvalid = (121, InvalidRequest, "login_type is invalid"),
    ProxiesInvalid = (122, InvalidRequest, "proxies supplied are invalid"),
    PrincipalDisabled = (123, InvalidRequest, "principal is disabled"),
    CompanyMaintenance = (134, InvalidRequest, "Company undergoing scheduled maintenance."),
    /// docs/decisions.md, "Requests and client authentication": a body that is neither form-encoded
    /// nor JSON.
    UnsupportedRequestFormat = (135, InvalidRequest, "unsupported request format"),
    /// The rate limits (429 with `Retry-After`); 0 in the configuration turns one off.
    ClientRateLimited = (140, SlowDown, "too many token requests for this client; retry later (RATE_LIMIT_CLIENT_PER_MINUTE)"),
    AddressRateLimited = (141, SlowDown, "too many password attempts from this address; retry later (RATE_LIMIT_ADDRESS_PER_MINUTE)"),
    OtpClientRateLimited = (142, SlowDown, "too many otp requests for this client; retry later (RATE_LIMIT_OTP_CLIENT_PER_HOUR)"),
    OtpFailuresRateLimited = (143, SlowDown, "too many wrong one-time passwords for this address; blocked for a day (RATE_LIMIT_OTP_FAILURES_PER_HOUR)"),
    RegistrationsRateLimited = (144, SlowDown, "too many client registrations from this address; retry later (RATE_LIMIT_REGISTRATIONS_PER_HOUR)"),
    DocumentFetchesRateLimited = (145, SlowDown, "too many client ID metadata documents fetched for this address; retry later (RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR)"),
    /// RFC 9449: a token request whose DPoP proof is malformed, fails a check, or is missing
    /// for a client that requires one or a code bound to a key.
    InvalidDpopProof = (150, InvalidDpopProof, "invalid DPoP proof"),
    /// RFC 9449 §8 (`DPOP_NONCE=on`): the proof lacks the server's current nonce, sent in the
    /// `DPoP-Nonce` header of this answer.
    UseDpopNonce = (151, UseDpopNonce, "DPoP proof requires the server's nonce (DPoP-Nonce header)"),
    /// RFC 8707: a `resource` that is not an absolute http(s) URI without fragment, or one the
    /// deployment's `RESOURCES` or the client's `--resource` list does not allow, or (continuing
    /// a grant) one that was not granted.
    InvalidTarget = (160, InvalidTarget, "resource is not allowed for this client"),
    /// Token exchange (RFC 8693): `subject_token_type` missing or not one this service issues
    /// (also an `actor_token_type` or `requested_token_type` it does not).
    TokenTypeUnsupported = (164, InvalidRequest, "token type is missing or not supported"),
    /// The subject token is unknown, expired, revoked, or not one this client may exchange.
    SubjectTokenInvalid = (165, InvalidGrant, "subject_token is invalid or not exchangeable"),
    /// The actor token likewise.
    ActorTokenInvalid = (166, InvalidGrant, "actor_token is invalid"),
    /// The jwt-bearer grant (RFC 7523 §2.1): the `assertion` is not an identity assertion
    /// (ID-JAG) signed by a trusted issuer for this service and client, within its lifetime,
    /// whose subject is an active user of that issuer's company (or one a first sign-in would
    /// link).
    IdJagInvalid = (167, InvalidGrant, "assertion is not a valid identity assertion from a trusted issuer"),
    /// The assertion's `jti` was redeemed before (RFC 7523 §3 item 7).
    IdJagReplayed = (168, InvalidGrant, "assertion was already used"),
    /// No `assertion`.
    AssertionMissing = (169, InvalidRequest, "assertion was not supplied"),
    /// The device authorization grant (RFC 8628 §3.5): the poll's answers while the user has
    /// not approved, and a device code used again.
    DeviceAuthorizationPending = (170, AuthorizationPending, "the user has not yet approved this device code"),
    DeviceSlowDown = (171, DevicePollSlowDown, "polling too fast; the interval grew by 5 seconds"),
    DeviceAccessDenied = (172, DeviceAccessDenied, "the user denied the authorization request"),
    DeviceCodeExpired = (173, ExpiredToken, "device code has expired"),
    DeviceCodeBadOrUsed = (174, InvalidGrant, "device code is bad or already used"),
    /// No `device_code`. 175 belongs to a client that must push its requests.
    DeviceCodeMissing = (176, InvalidRequest, "device_code was not supplied"),
    /// A client registered with `--require-par` (or
    /// `require_pushed_authorization_requests`) sent an authorization request without a
    /// `request_uri` from the PAR endpoint.
    PushedRequestRequired = (175, InvalidRequest, "this client must push its authorization requests (PAR)"),
    /// RFC 9101: a `request` object that does not verify with the client's
    /// keys, or whose `iss`, `aud`, `exp`, `nbf` or claims are not acceptable.
    InvalidRequestObject = (177, InvalidRequestObject, "the request object is invalid"),
    /// The user's company requires a second factor (`tokenctl companies set-mfa COMPANY_ID
    /// required`): the password and one-time password grants, one factor each, are refused
    /// after the credential was found right; the pages ask for a passkey or a code instead.
    SecondFactorRequired = (180, AccessDenied, "a second factor is required"),
    /// The user's company signs its users in through its identity providers only (`tokenctl
    /// companies set-sso COMPANY_ID required`) and the user is not marked for local sign-in:
    /// the password and one-time password grants are refused after the credential was found
    /// right.
    SsoRequired = (181, AccessDenied, "sign in with your company's identity provider"),
    /// The user's company turned identity assertions for agents off (`tokenctl companies
    /// set-id-jag COMPANY_ID off`): no ID-JAG is issued for its users.
    IdJagDisabled = (182, AccessDenied, "your company does not allow identity assertions for agents"),
}

impl ErrorCode {
    pub fn status(self) -> StatusCode {
        self.error().status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_rows_are_spelled_exactly() {
        let rows = [
            (5, "invalid_grant", "Incorrect credentials. Please Retry"),
            (16, "invalid_request", "user lives elsewhere"),
            (
                53,
                "invalid_client",
                "company is not enabled for this client",
            ),
            (59, "access_denied", "client disabled"),
            (180, "access_denied", "a second factor is required"),
            (
                181,
                "access_denied",
                "sign in with your company's identity provider",
            ),
            (
                60,
                "invalid_grant",
                "these are not the grants you are looking for",
            ),
            (105, "invalid_grant", "this grant was not issued to you!"),
            (
                134,
                "invalid_request",
                "Company undergoing scheduled maintenance.",
            ),
        ];
        for (code, error, description) in rows {
            let entry = ErrorCode::ALL
                .iter()
                .find(|e| e.code() == code)
                .unwrap_or_else(|| panic!("code {code} missing"));
            assert_eq!(entry.error().as_str(), error, "code {code}");
            assert_eq!(entry.description(), description, "code {code}");
        }
    }

    #[test]
    fn every_spec_code_is_present() {
        let expected = [
            5, 10, 11, 12, 13, 14, 16, 19, 20, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
            64, 65, 80, 81, 82, 83, 84, 85, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 115,
            117, 118, 119, 120, 121, 122, 123, 134, 135, 180, 181,
        ];
        for code in expected {
            assert!(
                ErrorCode::ALL.iter().any(|e| e.code() == code),
                "code {code}"
            );
        }
        assert_eq!(
            ErrorCode::ALL.iter().filter(|e| e.code() == 119).count(),
            2,
            "119 has two descriptions"
        );
    }

    #[test]
    fn statuses_follow_the_error() {
        assert_eq!(ErrorCode::ClientNotFound.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(ErrorCode::ClientDisabled.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            ErrorCode::SecondFactorRequired.status(),
            StatusCode::FORBIDDEN
        );
        assert_eq!(ErrorCode::SsoRequired.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            ErrorCode::ScopeExceedsGrant.status(),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(ErrorCode::BadRefreshToken.status(), StatusCode::BAD_REQUEST);
        for poll in [
            ErrorCode::DeviceAuthorizationPending,
            ErrorCode::DeviceSlowDown,
            ErrorCode::DeviceAccessDenied,
            ErrorCode::DeviceCodeExpired,
            ErrorCode::DeviceCodeBadOrUsed,
        ] {
            assert_eq!(poll.status(), StatusCode::BAD_REQUEST, "{poll:?}");
        }
        assert_eq!(
            ErrorCode::DeviceSlowDown.error().as_str(),
            "slow_down",
            "RFC 8628 names it as the rate limits' answer"
        );
    }
}
