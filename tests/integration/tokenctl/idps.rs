//! `companies idps add|list|show|remove` and `companies set-sso`: an OpenID Connect IdP added
//! with every option reads back as given, its client secret is never printed and stored only
//! sealed, a domain claimed twice in a company is a conflict; `set-sso required` refuses the
//! password grant (181) but to break-glass users (`users set-local-sign-in`).

use token_domain::audit::{AuditKind, AuditSubject};
use token_domain::clock::{Clock, SystemClock};
use token_domain::{
    FederationLink, IdpId, IdpProtocol, LinkBy, PrincipalId, SsoPolicy, UpstreamSubject,
};
use token_store::AuditQuery;

use super::output::{str_field, success_json};
use super::target::{Target, HOME, UNKNOWN};
use crate::authorize::flow::{LOGIN, PASSWORD};
use crate::support::assertions::assert_token_error;

/// The client secret at the IdP: nowhere in what the tool prints or the store holds in clear.
const SECRET: &str = "upstream-Secret-7f3c9a0e55d1";
const OTHER_SECRET: &str = "upstream-Secret-second-b81d2e";
pub(super) const ISSUER: &str = "https://idp.acme.example/oauth2/default";
const CLIENT_ID: &str = "concur-at-acme-0o4x";

pub(super) fn company(t: &Target, name: &str) -> String {
    let created = t.json(&["companies", "create", "--name", name]);
    str_field(&created, "company_id").to_owned()
}

/// `companies idps add` with the secret on standard input; what it printed.
fn add_with_stdin(t: &Target, args: &[&str], secret: &str) -> serde_json::Value {
    let mut all = vec!["--json", "companies", "idps", "add"];
    all.extend_from_slice(args);
    all.push("--client-secret-stdin");
    let out = t
        .command()
        .args(&all)
        .write_stdin(format!("{secret}\n"))
        .output()
        .unwrap();
    success_json(&t.recorded(out), &all)
}

pub async fn add_list_show_remove(t: &Target) {
    let acme = company(t, "Acme");
    let redirect_uri = format!("{HOME}/federation/v0/oidc/callback");
    let every_option = [
        acme.as_str(),
        "--oidc",
        "--issuer",
        ISSUER,
        "--client-id",
        CLIENT_ID,
        "--name",
        "Sign in with Acme",
        "--domains",
        "acme.example,Corp.Acme.example",
        "--scopes",
        "openid email groups",
        "--link-by",
        "none",
        "--jit",
        "off",
        "--trust-mfa",
        "--id-jag",
    ];
    let added = add_with_stdin(t, &every_option, SECRET);
    assert_eq!(added["redirect_uri"], redirect_uri.as_str());
    let idp_id = str_field(&added, "idp_id").to_owned();
    let id = IdpId::parse(&idp_id).unwrap();
    let stored = t.store.federation().get_identity_provider(&id).await;
    let stored = stored.unwrap().expect("the IdP is stored");
    assert_eq!(stored.company_id.to_string(), acme);
    assert_eq!(stored.name, "Sign in with Acme");
    let domains: Vec<&str> = stored
        .domains
        .as_slice()
        .iter()
        .map(|d| d.as_str())
        .collect();
    assert_eq!(domains, ["acme.example", "corp.acme.example"]);
    assert_eq!(stored.link_by, LinkBy::None);
    assert!(!stored.jit && stored.trust_mfa && stored.id_jag);
    let IdpProtocol::Oidc(oidc) = &stored.protocol else {
        panic!("an OIDC IdP");
    };
    assert_eq!(
        (oidc.issuer.as_str(), oidc.client_id.as_str()),
        (ISSUER, CLIENT_ID)
    );
    assert_eq!(oidc.scopes, ["openid", "email", "groups"]);
    assert!(!oidc.client_secret.as_str().contains(SECRET));

    // The defaults, the secret as an argument, and the readable text.
    let args = [
        "companies",
        "idps",
        "add",
        &acme,
        "--oidc",
        "--issuer",
        "https://login.acme.example",
        "--client-id",
        "second",
        "--client-secret",
        OTHER_SECRET,
        "--name",
        "Acme staff",
    ];
    let text = t.text(&args);
    assert!(text.contains(&redirect_uri), "{text}");
    let listed = t.json(&["companies", "idps", "list", &acme]);
    let listed = listed.as_array().expect("a listing");
    assert_eq!(listed.len(), 2);
    // Both added within a second: which lists first is the store's to decide.
    let second = listed.iter().find(|idp| idp["idp_id"] != idp_id.as_str());
    let second = second.expect("the second IdP");
    assert_eq!(second["scopes"], "openid email profile");
    assert_eq!(
        (second["link_by"].as_str(), second["jit"].as_str()),
        (Some("email"), Some("on"))
    );
    assert_eq!(second["trust_mfa"], false);
    let shown = t.json(&["companies", "idps", "show", &idp_id]);
    assert_eq!(shown["protocol"], "oidc");
    assert_eq!(shown["issuer"], ISSUER);
    assert_eq!(shown["client_id"], CLIENT_ID);
    assert_eq!(shown["domains"][1], "corp.acme.example");
    assert_eq!(shown["redirect_uri"], redirect_uri.as_str());
    assert_eq!(shown["id_jag"], true);
    assert!(shown.get("client_secret").is_none(), "{shown}");
    let text = t.text(&["companies", "idps", "show", &idp_id]);
    assert!(text.contains(ISSUER), "{text}");
    t.text(&["companies", "idps", "list", &acme]);

    // Neither secret was printed by any run, sealed or not, nor is stored in clear.
    let sealed = oidc.client_secret.as_str();
    for needle in [SECRET, OTHER_SECRET, sealed] {
        assert_eq!(t.runs_that_printed(needle), 0, "{needle} printed");
    }
    assert!(
        t.stored_anywhere(CLIENT_ID).await,
        "the check reads the data"
    );
    assert!(!t.stored_anywhere(SECRET).await, "stored sealed");
    assert!(!t.stored_anywhere(OTHER_SECRET).await, "stored sealed");

    refusals(t, &acme).await;

    // Removal takes the links with it.
    let user = t.json(&["users", "create", "--login", LOGIN, "--password", PASSWORD]);
    let user_id = PrincipalId::parse(str_field(&user, "user_id")).unwrap();
    let company_id = PrincipalId::parse(&acme).unwrap();
    link(t, id, user_id, company_id, "00u-removed").await;
    let removed = t.json(&["companies", "idps", "remove", &idp_id]);
    assert_eq!(removed["links_removed"], 1);
    assert_eq!(
        removed["sessions_ended"], 0,
        "the linked user had no session"
    );
    assert_eq!(
        t.store
            .federation()
            .get_identity_provider(&id)
            .await
            .unwrap(),
        None
    );
    assert!(t
        .store
        .federation()
        .list_user_links(&user_id)
        .await
        .unwrap()
        .is_empty());
    t.fails(&["companies", "idps", "show", &idp_id], 3);
    t.fails(&["companies", "idps", "remove", &idp_id], 3);
    let left = t.json(&["companies", "idps", "list", &acme]);
    assert_eq!(left.as_array().map(Vec::len), Some(1));
    let kinds = audited(t, company_id).await;
    assert!(kinds.contains(&"company.idp_added") && kinds.contains(&"company.idp_removed"));
}

/// What `add` refuses: a domain another IdP of the company claims (4, while another company
/// may claim it), unknown ids (3), and arguments it cannot take (2).
async fn refusals(t: &Target, acme: &str) {
    let base = |company: &str, domains: &str| {
        vec![
            "companies".to_owned(),
            "idps".to_owned(),
            "add".to_owned(),
            company.to_owned(),
            "--oidc".to_owned(),
            "--issuer".to_owned(),
            "https://idp.other.example".to_owned(),
            "--client-id".to_owned(),
            "x".to_owned(),
            "--client-secret".to_owned(),
            "s".to_owned(),
            "--name".to_owned(),
            "Other".to_owned(),
            "--domains".to_owned(),
            domains.to_owned(),
        ]
    };
    let taken = base(acme, "other.example,ACME.example");
    let reason = t.fails(&args(&taken), 4);
    assert!(reason.contains("acme.example"), "{reason}");
    let globex = company(t, "Globex");
    t.json(&args(&base(&globex, "acme.example")));
    t.fails(&args(&base(UNKNOWN, "unknown.example")), 3);
    for (flag, value) in [
        ("--issuer", "http://idp.other.example"),
        ("--issuer", "not a url"),
        ("--scopes", "email profile"),
        ("--domains", "not_a_domain"),
    ] {
        let mut refused = base(acme, "fresh.example");
        refused.extend([flag.to_owned(), value.to_owned()]);
        t.fails(&args(&refused), 2);
    }
    let mut saml = base(acme, "saml.example");
    "--saml".clone_into(&mut saml[4]);
    t.fails(&args(&saml), 2);
    let no_secret = [
        "companies",
        "idps",
        "add",
        acme,
        "--oidc",
        "--issuer",
        ISSUER,
        "--client-id",
        "x",
        "--name",
        "Nameless",
    ];
    t.fails(&no_secret, 2);
    t.fails(&["companies", "idps", "list", UNKNOWN], 3);
    t.fails(&["companies", "idps", "show", UNKNOWN], 3);
    t.fails(&["companies", "idps", "remove", UNKNOWN], 3);
}

fn args(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// A link as the sign-in makes it, through the store.
pub(super) async fn link(
    t: &Target,
    idp: IdpId,
    user: PrincipalId,
    company: PrincipalId,
    subject: &str,
) {
    let link = FederationLink {
        idp_id: idp,
        subject: UpstreamSubject::new(ISSUER, subject).unwrap(),
        user_id: user,
        company_id: company,
        linked_at: SystemClock.now(),
    };
    t.store
        .federation()
        .put_federation_link(&link)
        .await
        .unwrap();
}

/// The kinds of the audit events about `principal`, newest first.
pub(super) async fn audited(t: &Target, principal: PrincipalId) -> Vec<&'static str> {
    let query = AuditQuery {
        subject: AuditSubject::Principal(principal),
        since: None,
        now: SystemClock.now(),
    };
    let events = t.store.audit().audit_events(query).await.unwrap();
    events.iter().map(|event| event.kind.name()).collect()
}

/// `set-sso required` refuses the password grant (403, 181) after the password; a break-glass
/// user still gets tokens; `optional` changes nothing.
pub async fn sso_and_local_sign_in(t: &Target) {
    let app = super::app_on(t).await;
    let company = app.create_company("Acme").await;
    let company_id = company.id.to_string();
    let user = app
        .create_user_with(LOGIN, PASSWORD, |new| new.company_id = Some(company.id))
        .await;
    let user_id = user.id.to_string();
    let client = app.create_client("read").await;
    app.user_tokens(&client, LOGIN, PASSWORD).await;

    let set = t.json(&["companies", "set-sso", &company_id, "required"]);
    assert_eq!(set["sso"], "required");
    let stored = t.store.principals().get_company(&company.id).await.unwrap();
    assert_eq!(stored.map(|c| c.sso_policy), Some(SsoPolicy::Required));
    let grant = app.password_grant(&client, LOGIN, PASSWORD, &[]).await;
    assert_token_error(&grant, 403, "access_denied", 181);
    let wrong = app
        .password_grant(&client, LOGIN, "not the password", &[])
        .await;
    assert_token_error(&wrong, 400, "invalid_grant", 5);

    let on = t.json(&["users", "set-local-sign-in", &user_id, "on"]);
    assert_eq!(on["local_sign_in"], "on");
    app.user_tokens(&client, LOGIN, PASSWORD).await;
    let text = t.text(&["users", "set-local-sign-in", &user_id, "off"]);
    assert!(text.contains("policy"), "{text}");
    let grant = app.password_grant(&client, LOGIN, PASSWORD, &[]).await;
    assert_token_error(&grant, 403, "access_denied", 181);

    let text = t.text(&["companies", "set-sso", &company_id, "optional"]);
    assert!(text.contains("optional"), "{text}");
    app.user_tokens(&client, LOGIN, PASSWORD).await;

    let sso: Vec<SsoPolicy> = crate::audit::events_of(&app, AuditSubject::Principal(company.id))
        .await
        .into_iter()
        .filter_map(|event| match event.kind {
            AuditKind::CompanySsoSet { policy } => Some(policy),
            _ => None,
        })
        .collect();
    assert_eq!(sso, [SsoPolicy::Optional, SsoPolicy::Required]);
    let local: Vec<bool> = crate::audit::events_of(&app, AuditSubject::Principal(user.id))
        .await
        .into_iter()
        .filter_map(|event| match event.kind {
            AuditKind::UserLocalSignInSet { local_sign_in } => Some(local_sign_in),
            _ => None,
        })
        .collect();
    assert_eq!(local, [false, true]);
    t.fails(&["companies", "set-sso", UNKNOWN, "required"], 3);
    t.fails(&["companies", "set-sso", &company_id, "sometimes"], 2);
    t.fails(&["users", "set-local-sign-in", UNKNOWN, "on"], 3);
}
