//! The token endpoint's error table as the specification words it (its "Token endpoint error
//! codes" table) and the rows the service adds, pinned here: what every error assertion
//! compares a body with (`assertions::assert_token_error`), never the code's own catalogue,
//! which `error_catalogue::every_spec_row_is_in_the_catalogue` holds to these rows.

/// The specification's table, verbatim: `code | error | error_description`, 49 rows for 48
/// codes (119 has two descriptions). Copied here rather than read from the spec file, so that the
/// tests stand inside the repository.
pub const SPEC_TABLE: &str = "\
5 | invalid_grant | Incorrect credentials. Please Retry
10 | invalid_grant | Account is disabled. Please contact support
11 | invalid_grant | Account is disabled. Please contact support
12 | invalid_grant | Logon Denied. Please contact support
13 | invalid_grant | Logon Denied. Please contact support
14 | invalid_grant | Account Locked. Please contact support
16 | invalid_request | user lives elsewhere
19 | invalid_grant | Incorrect credentials. Please Retry
20 | invalid_grant | Logon Denied. Please contact support (typically due to IP restriction)
51 | invalid_request | username was not supplied
52 | invalid_request | password was not supplied
53 | invalid_client | company is not enabled for this client
54 | invalid_scope | requested scope exceeds granted scope
55 | invalid_request | we don't know this email
56 | invalid_request | otp was not supplied
57 | invalid_request | channel_type missing
58 | invalid_request | channel_handle missing
59 | access_denied | client disabled
60 | invalid_grant | these are not the grants you are looking for
61 | invalid_client | client not found
62 | invalid_request | client_id was not supplied
63 | invalid_request | client_secret was not supplied
64 | invalid_client | Incorrect credentials. Please Retry
65 | invalid_request | grant_type was not supplied
80 | invalid_request | invalid channel type
81 | invalid_request | bad channel handle
83 | invalid_request | otp not found
84 | invalid_request | fact verification failed
85 | invalid_request | otp verification failed
100 | invalid_request | backend does not know about this username
101 | invalid_request | code was not supplied
102 | invalid_request | redirect_uri was not supplied
103 | invalid_request | code is bad or expired
104 | invalid_grant | redirect_uri does not match the previous grant
105 | invalid_grant | this grant was not issued to you!
106 | invalid_request | refresh_token was not supplied
107 | invalid_request | refresh disallowed for app
108 | invalid_grant | bad or expired refresh token
109 | invalid_request | loginid was not supplied
115 | invalid_request | unauthenticated client will not be issued token!
117 | invalid_request | nonce is mandatory for this response_type
118 | invalid_request | display is invalid
119 | invalid_request | prompt is invalid
119 | invalid_request | prompt must be set to consent for offline_access
120 | invalid_request | credtype is invalid
121 | invalid_request | login_type is invalid
122 | invalid_request | proxies supplied are invalid
123 | invalid_request | principal is disabled
134 | invalid_request | Company undergoing scheduled maintenance.
";

/// Rows the service adds beyond the specification's table, pinned as the service words
/// them: `(code, error, error_description)`. 135: a body neither form nor JSON; 82: too many
/// open one-time-password requests for one address.
pub const SERVICE_ROWS: &[(u16, &str, &str)] = &[
    (135, "invalid_request", "unsupported request format"),
    // A client secret past its expiry (docs/decisions.md, Client secrets).
    (64, "invalid_client", "client_secret has expired"),
    (
        82,
        "invalid_request",
        "number of open otp requests has been exceeded",
    ),
    // private_key_jwt (RFC 7523): a refused client assertion, 401 like the secret it replaces.
    (63, "invalid_client", "client_assertion is invalid"),
    (
        86,
        "invalid_request",
        "link is not an address registered for this client",
    ),
    (
        140,
        "slow_down",
        "too many token requests for this client; retry later (RATE_LIMIT_CLIENT_PER_MINUTE)",
    ),
    (
        141,
        "slow_down",
        "too many password attempts from this address; retry later (RATE_LIMIT_ADDRESS_PER_MINUTE)",
    ),
    (
        142,
        "slow_down",
        "too many otp requests for this client; retry later (RATE_LIMIT_OTP_CLIENT_PER_HOUR)",
    ),
    (
        143,
        "slow_down",
        "too many wrong one-time passwords for this address; blocked for a day (RATE_LIMIT_OTP_FAILURES_PER_HOUR)",
    ),
    (
        144,
        "slow_down",
        "too many client registrations from this address; retry later (RATE_LIMIT_REGISTRATIONS_PER_HOUR)",
    ),
    (
        145,
        "slow_down",
        "too many client ID metadata documents fetched for this address; retry later (RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR)",
    ),
    (150, "invalid_dpop_proof", "invalid DPoP proof"),
    (
        151,
        "use_dpop_nonce",
        "DPoP proof requires the server's nonce (DPoP-Nonce header)",
    ),
    // RFC 8707: a resource malformed, not allowed, or (continuing a grant) not granted.
    (160, "invalid_target", "resource is not allowed for this client"),
    // Token exchange (RFC 8693).
    (164, "invalid_request", "token type is missing or not supported"),
    (165, "invalid_grant", "subject_token is invalid or not exchangeable"),
    (166, "invalid_grant", "actor_token is invalid"),
    // Identity assertions (ID-JAG): redeemed with the jwt-bearer grant, or refused by the
    // user's company at the token exchange.
    (
        167,
        "invalid_grant",
        "assertion is not a valid identity assertion from a trusted issuer",
    ),
    (168, "invalid_grant", "assertion was already used"),
    (169, "invalid_request", "assertion was not supplied"),
    (
        182,
        "access_denied",
        "your company does not allow identity assertions for agents",
    ),
    // The device authorization grant's poll (RFC 8628 §3.5), every one a 400.
    (
        170,
        "authorization_pending",
        "the user has not yet approved this device code",
    ),
    (
        171,
        "slow_down",
        "polling too fast; the interval grew by 5 seconds",
    ),
    (
        172,
        "access_denied",
        "the user denied the authorization request",
    ),
    (173, "expired_token", "device code has expired"),
    (174, "invalid_grant", "device code is bad or already used"),
    (176, "invalid_request", "device_code was not supplied"),
    (
        175,
        "invalid_request",
        "this client must push its authorization requests (PAR)",
    ),
    (
        177,
        "invalid_request_object",
        "the request object is invalid",
    ),
    // A company that requires a second factor: the one-factor grants are refused (403).
    (180, "access_denied", "a second factor is required"),
    // A company that signs its users in through its identity providers only: likewise.
    (
        181,
        "access_denied",
        "sign in with your company's identity provider",
    ),
];

pub fn spec_rows() -> Vec<(u16, &'static str, &'static str)> {
    SPEC_TABLE
        .lines()
        .map(|line| {
            let mut cells = line.splitn(3, " | ");
            let (code, error, description) = (
                cells.next().unwrap(),
                cells.next().unwrap(),
                cells.next().unwrap(),
            );
            (code.parse().unwrap(), error, description)
        })
        .collect()
}

/// The `(error, error_description)` pairs a body may carry with `code`: the specification's
/// (two for 119), else the pinned service row's.
pub fn expected_rows(code: u64) -> Vec<(&'static str, &'static str)> {
    let spec: Vec<_> = spec_rows()
        .into_iter()
        .filter(|row| u64::from(row.0) == code)
        .map(|(_, error, description)| (error, description))
        .collect();
    let service = SERVICE_ROWS
        .iter()
        .filter(|row| u64::from(row.0) == code)
        .map(|(_, error, description)| (*error, *description));
    spec.into_iter().chain(service).collect()
}
