//! The authorize request's checks, one contract row at a time.

use super::*;
use crate::domain::{ClientId, Geolocation, Scopes};
use crate::errors::ErrorCode;

const REDIRECT: &str = "https://app.example/cb";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

struct Fixture {
    id: ClientId,
    scopes: Scopes,
    redirects: Vec<String>,
}

impl Fixture {
    fn new() -> Self {
        Self {
            id: ClientId::parse("6f1d6a52-0c3b-4a3e-9d55-1a2b3c4d5e6f").unwrap(),
            scopes: Scopes::parse("openid read offline_access").unwrap(),
            redirects: vec![REDIRECT.to_owned()],
        }
    }

    fn client(&self) -> RegisteredClient<'_> {
        RegisteredClient {
            id: self.id,
            enabled: true,
            allowed_scopes: &self.scopes,
            redirect_uris: &self.redirects,
            may_use_authorization_code: true,
            requires_pkce: false,
        }
    }
}

fn issuer() -> Geolocation {
    Geolocation::parse("https://us.api.example.com").unwrap()
}

fn params() -> AuthorizeParams {
    AuthorizeParams {
        client_id: Some("6f1d6a52-0c3b-4a3e-9d55-1a2b3c4d5e6f".into()),
        redirect_uri: Some(REDIRECT.into()),
        response_type: Some("code".into()),
        scope: Some("openid read".into()),
        state: Some("st".into()),
        ..Default::default()
    }
}

fn page<T>(reason: UntrustedRedirect) -> Result<T, AuthorizeRejection> {
    Err(AuthorizeRejection::Page(reason))
}

fn redirected_code(result: Result<ValidatedAuthorization, AuthorizeRejection>) -> u16 {
    match result {
        Err(AuthorizeRejection::Redirect(redirect)) => {
            let location = redirect.location(&issuer());
            assert!(location.starts_with(REDIRECT), "{location}");
            assert!(location.contains("state=st"), "{location}");
            redirect.error_code().expect("a catalogue code")
        }
        other => panic!("expected a redirect, got {other:?}"),
    }
}

#[test]
fn a_good_request_passes_with_its_values() {
    let fixture = Fixture::new();
    let mut p = params();
    p.nonce = Some("n".into());
    p.code_challenge = Some(CHALLENGE.into());
    p.code_challenge_method = Some("S256".into());
    p.prompt = Some("login consent".into());
    p.display = Some("touch".into());
    let ok = p.validate(&fixture.client()).unwrap();
    assert_eq!(ok.client_id, fixture.id);
    assert_eq!(ok.redirect_uri, REDIRECT);
    assert_eq!(ok.scopes.to_string(), "openid read");
    assert_eq!(ok.nonce.as_deref(), Some("n"));
    assert_eq!(ok.code_challenge.as_deref(), Some(CHALLENGE));
    assert!(ok.prompt.login && ok.prompt.consent && !ok.prompt.none);
}

#[test]
fn client_and_redirect_problems_are_pages_never_redirects() {
    let fixture = Fixture::new();
    let mut p = params();
    p.client_id = None;
    assert_eq!(p.client_id(), page(UntrustedRedirect::ClientIdMissing));
    p.client_id = Some("not-a-uuid".into());
    assert_eq!(p.client_id(), page(UntrustedRedirect::UnknownClient));

    let mut p = params();
    p.redirect_uri = None;
    assert_eq!(
        p.validate(&fixture.client()),
        page(UntrustedRedirect::RedirectUriMissing)
    );
    // Exact match only: no prefix, no trailing slash, no other query.
    for near_miss in [
        "https://app.example/cb/",
        "https://app.example/cb?x=1",
        "https://evil.example/cb",
    ] {
        p.redirect_uri = Some(near_miss.into());
        assert_eq!(
            p.validate(&fixture.client()),
            page(UntrustedRedirect::RedirectUriNotRegistered)
        );
    }
    // Even with every other parameter wrong, the untrusted address wins.
    let mut p = params();
    p.redirect_uri = Some("https://evil.example/cb".into());
    p.display = Some("bogus".into());
    let mut disabled = fixture.client();
    disabled.enabled = false;
    assert_eq!(
        p.validate(&disabled),
        page(UntrustedRedirect::RedirectUriNotRegistered)
    );
}

#[test]
fn client_state_codes() {
    let fixture = Fixture::new();
    let mut client = fixture.client();
    client.enabled = false;
    assert_eq!(redirected_code(params().validate(&client)), 59);
    let mut client = fixture.client();
    client.may_use_authorization_code = false;
    assert_eq!(redirected_code(params().validate(&client)), 60);
}

#[test]
fn response_type_codes() {
    let fixture = Fixture::new();
    let with = |rt: Option<&str>, nonce: Option<&str>| {
        let mut p = params();
        p.response_type = rt.map(Into::into);
        p.nonce = nonce.map(Into::into);
        p.validate(&fixture.client())
    };
    assert_eq!(redirected_code(with(Some("code id_token"), None)), 117);
    assert_eq!(redirected_code(with(Some("id_token"), None)), 117);
    assert!(with(Some("code id_token"), Some("n")).is_ok());
    assert_eq!(redirected_code(with(Some("token"), None)), 60);
    assert_eq!(redirected_code(with(None, None)), 60);
}

#[test]
fn display_and_prompt_codes() {
    let fixture = Fixture::new();
    let mut p = params();
    p.display = Some("desktop".into());
    assert_eq!(redirected_code(p.validate(&fixture.client())), 118);

    for bad in ["select_account", "none login"] {
        let mut p = params();
        p.prompt = Some(bad.into());
        let Err(AuthorizeRejection::Redirect(r)) = p.validate(&fixture.client()) else {
            panic!("{bad} accepted");
        };
        assert!(r.location(&issuer()).contains("prompt+is+invalid"), "{bad}");
    }

    let mut p = params();
    p.scope = Some("openid offline_access".into());
    let Err(AuthorizeRejection::Redirect(r)) = p.validate(&fixture.client()) else {
        panic!("offline_access without consent accepted");
    };
    assert_eq!(r.error_code(), Some(119));
    assert!(r
        .location(&issuer())
        .contains("prompt+must+be+set+to+consent+for+offline_access"));
    p.prompt = Some("consent".into());
    assert!(p.validate(&fixture.client()).is_ok());
}

#[test]
fn scope_codes() {
    let fixture = Fixture::new();
    let mut p = params();
    p.scope = Some("openid admin".into());
    assert_eq!(
        redirected_code(p.validate(&fixture.client())),
        ErrorCode::ScopeExceedsGrant.code()
    );
    p.scope = None;
    p.prompt = Some("consent".into());
    assert_eq!(
        p.validate(&fixture.client()).unwrap().scopes,
        fixture.scopes
    );
}

#[test]
fn pkce_codes() {
    let fixture = Fixture::new();
    let with = |challenge: Option<&str>, method: Option<&str>| {
        let mut p = params();
        p.code_challenge = challenge.map(Into::into);
        p.code_challenge_method = method.map(Into::into);
        p.validate(&fixture.client())
    };
    assert_eq!(redirected_code(with(Some(CHALLENGE), Some("plain"))), 60);
    assert_eq!(
        redirected_code(with(Some(CHALLENGE), None)),
        60,
        "absent method means plain"
    );
    assert_eq!(redirected_code(with(None, Some("S256"))), 60);
    assert_eq!(redirected_code(with(Some("too-short"), Some("S256"))), 60);
    assert!(with(None, None).unwrap().code_challenge.is_none());
}

#[test]
fn a_public_client_must_send_an_s256_challenge() {
    let fixture = Fixture::new();
    let public = RegisteredClient {
        requires_pkce: true,
        ..fixture.client()
    };
    let mut p = params();
    assert_eq!(redirected_code(p.validate(&public)), 60);
    p.code_challenge = Some(CHALLENGE.into());
    p.code_challenge_method = Some("S256".into());
    assert_eq!(
        p.validate(&public).unwrap().code_challenge.as_deref(),
        Some(CHALLENGE)
    );
}

#[test]
fn openid_needs_no_registration() {
    let fixture = Fixture {
        scopes: Scopes::parse("read").unwrap(),
        ..Fixture::new()
    };
    let ok = params().validate(&fixture.client()).unwrap();
    assert_eq!(ok.scopes.to_string(), "openid read");
}

#[test]
fn openid_parameters_are_kept_for_the_sign_in() {
    let fixture = Fixture::new();
    let mut p = params();
    p.max_age = Some("0".into());
    p.login_hint = Some("olivia".into());
    let ok = p.validate(&fixture.client()).unwrap();
    assert_eq!(ok.max_age, Some(0));
    assert_eq!(ok.login_hint.as_deref(), Some("olivia"));
    for bad in ["-1", "soon", "1.5"] {
        let mut p = params();
        p.max_age = Some(bad.into());
        let Err(AuthorizeRejection::Redirect(r)) = p.validate(&fixture.client()) else {
            panic!("max_age {bad} accepted");
        };
        assert_eq!(r.error(), "invalid_request", "{bad}");
        assert!(r.location(&issuer()).contains("iss=https"), "{bad}");
    }
}

#[test]
fn request_objects_are_refused_as_unsupported() {
    let fixture = Fixture::new();
    let mut p = params();
    p.request = Some("eyJhbGciOiJub25lIn0.e30.".into());
    let Err(AuthorizeRejection::Redirect(r)) = p.validate(&fixture.client()) else {
        panic!("a request object was accepted");
    };
    assert_eq!(r.error(), "request_not_supported");
    let mut p = params();
    p.request_uri = Some("https://app.example/request.jwt".into());
    let Err(AuthorizeRejection::Redirect(r)) = p.validate(&fixture.client()) else {
        panic!("a request_uri was accepted");
    };
    assert_eq!(r.error(), "request_uri_not_supported");
}
