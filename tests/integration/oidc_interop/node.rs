//! openid-client 6 (on oauth4webapi), `tests/interop/node/rp.mjs`; its DPoP cases also use the
//! `dpop` package (RFC 9449 proofs built by another implementation than the tests' own).

use crate::support::relying_party::Driver;

super::cases!(Driver::Node;
    discovery => "discovery",
    oidcc_server => "oidcc-server",
    rfc9207_iss => "rfc9207-iss",
    oidcc_userinfo_get => "oidcc-userinfo-get",
    oidcc_userinfo_post_header => "oidcc-userinfo-post-header",
    oidcc_refresh_token => "oidcc-refresh-token",
    rfc7662_introspection => "rfc7662-introspection",
    rfc7009_revocation => "rfc7009-revocation",
    oidcc_codereuse => "oidcc-codereuse",
    oidcc_ensure_redirect_uri_in_authorization_request => "oidcc-ensure-redirect-uri-in-authorization-request",
    oidcc_ensure_registered_redirect_uri => "oidcc-ensure-registered-redirect-uri",
    oidcc_prompt_none_not_logged_in => "oidcc-prompt-none-not-logged-in",
    oidcc_prompt_none_logged_in => "oidcc-prompt-none-logged-in",
    oidcc_id_token_hint => "oidcc-id-token-hint",
    oidcc_prompt_login => "oidcc-prompt-login",
    oidcc_max_age_1 => "oidcc-max-age-1",
    oidcc_rp_initiated_logout => "oidcc-rp-initiated-logout",
    oidcc_unsigned_request_object => "oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported",
    dpop_openid_client => "dpop-openid-client",
    dpop_client_credentials => "dpop-client-credentials",
);

/// The DPoP cases again with `DPOP_NONCE=on`: both clients must take the server's nonce from
/// the `use_dpop_nonce` answer (400 at the token endpoint, 401 at userinfo) and retry with it.
mod dpop_nonces {
    use crate::support::app::TestApp;
    use crate::support::relying_party::Driver;

    async fn dpop_openid_client(app: TestApp) {
        crate::oidc_interop::passes(app, Driver::Node, "dpop-openid-client").await;
    }

    async fn dpop_client_credentials(app: TestApp) {
        crate::oidc_interop::passes(app, Driver::Node, "dpop-client-credentials").await;
    }

    crate::on_both_stores!(with crate::support::app::AppOptions::dpop_nonces();
        dpop_openid_client,
        dpop_client_credentials,
    );
}
