//! authlib (`OAuth2Session`, `CodeIDToken`), `tests/interop/python/rp.py`.

use crate::support::relying_party::Driver;

super::cases!(Driver::Python;
    oidcc_server => "oidcc-server",
    oidcc_userinfo_get => "oidcc-userinfo-get",
    oidcc_userinfo_post_header => "oidcc-userinfo-post-header",
    oidcc_userinfo_post_body => "oidcc-userinfo-post-body",
    oidcc_refresh_token => "oidcc-refresh-token",
    rfc7662_introspection => "rfc7662-introspection",
    rfc7009_revocation => "rfc7009-revocation",
);
