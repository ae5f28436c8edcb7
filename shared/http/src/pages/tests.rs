//! The rendered pages: escaping, labels, CSRF fields, and the stylesheet the CSP hash allows.

use super::*;

fn sign_in(error: Option<&str>) -> String {
    render_sign_in(&SignInPage {
        app_name: "Expense <Pro>",
        form_action: "/oauth2/v0/authorize",
        csrf_token: "tok\"en",
        login: "ann@example.com",
        error,
        action_field: None,
        idp_choices: &[],
    })
}

#[test]
fn a_choice_of_identity_providers_is_a_button_each_carrying_the_login() {
    let choices = [
        IdpChoice {
            id: "idp-1".into(),
            name: "Sign in with <Acme>".into(),
        },
        IdpChoice {
            id: "idp-2".into(),
            name: "Contractors".into(),
        },
    ];
    let html = render_sign_in(&SignInPage {
        app_name: "Expense",
        form_action: "/oauth2/v0/authorize",
        csrf_token: "token",
        login: "ann@acme.example",
        error: None,
        action_field: None,
        idp_choices: &choices,
    });
    assert!(
        html.contains(">Sign in with &#60;Acme&#62;</button>")
            || html.contains(">Sign in with &lt;Acme&gt;</button>"),
        "{html}"
    );
    assert!(html.contains(r#"name="idp" value="idp-1""#), "{html}");
    assert!(html.contains(r#"name="idp" value="idp-2""#), "{html}");
    assert_eq!(
        html.matches(r#"type="hidden" name="login" value="ann@acme.example""#)
            .count(),
        2
    );
    assert!(
        !html.contains(r#"autocomplete="current-password" required"#),
        "{html}"
    );
}

#[test]
fn sign_in_has_labelled_fields_and_escapes_input() {
    let html = sign_in(Some(
        "The login or password is not correct. Please try again.",
    ));
    assert!(html.contains(r#"<label for="login">Login</label>"#));
    assert!(html.contains(r#"<label for="password">Password</label>"#));
    assert!(html.contains(r#"id="login""#) && html.contains(r#"id="password""#));
    assert!(html.contains("Expense &#60;Pro&#62;") || html.contains("Expense &lt;Pro&gt;"));
    assert!(!html.contains("<Pro>"));
    assert!(html.contains(r#"name="csrf_token""#));
    assert!(!html.contains("tok\"en"), "attribute values are escaped");
    assert!(html.contains(r#"role="alert""#));
    assert!(html.contains(r#"name="viewport""#));
    assert!(!sign_in(None).contains(r#"role="alert""#));
}

#[test]
fn sign_in_offers_passkeys_by_button_and_autofill_with_one_script_of_our_own() {
    let html = sign_in(None);
    assert!(html.contains(r#"autocomplete="username webauthn""#));
    assert!(html.contains(r#"data-options="/oauth2/v0/passkeys/options""#));
    assert!(html.contains("Sign in with a passkey"));
    assert!(html.contains("needs JavaScript"), "the page says so");
    assert_eq!(html.matches("<script").count(), 1);
    assert!(html.contains(r#"<script src="/oauth2/v0/passkeys.js"></script>"#));
    assert!(!html.contains(" on"), "no inline event handlers");
}

#[test]
fn the_account_page_lists_passkeys_with_their_forms() {
    let passkeys = [PasskeyRow {
        credential_id: "cred-1".into(),
        name: "My <key>".into(),
        created: "2026-01-01T00:00:00Z".into(),
        last_used: "never".into(),
    }];
    let html = render_account(&AccountPage {
        action: "/oauth2/v0/account",
        csrf_token: "t",
        sessions: &[],
        apps: &[],
        totp_enrolled: false,
        passkeys: &passkeys,
        error: Some("Please give the passkey a name."),
        factors_unlocked: true,
    });
    assert!(html.contains("My &#60;key&#62;") || html.contains("My &lt;key&gt;"));
    assert!(html.contains(r#"name="action" value="rename_passkey""#));
    assert!(html.contains(r#"name="action" value="remove_passkey""#));
    assert!(html.contains(r#"name="credential_id" value="cred-1""#));
    assert!(html.contains(r#"data-options="/oauth2/v0/account/passkeys/options""#));
    assert!(html.contains("Adding a passkey needs JavaScript."));
    assert!(html.contains(r#"role="alert""#));
    // Each section once, in the page's body; the title is words only.
    assert!(html.contains("<title>Your account</title>"), "{html}");
    for once in [
        "<h2>Passkeys</h2>",
        r#"id="passkey-add""#,
        "<h2>Authenticator app</h2>",
    ] {
        assert_eq!(html.matches(once).count(), 1, "{once}");
    }
    assert!(!html.contains(r#"value="reauthenticate""#));
}

#[test]
fn without_a_fresh_sign_in_the_account_page_offers_to_sign_in_again_instead_of_factor_forms() {
    let passkeys = [PasskeyRow {
        credential_id: "cred-1".into(),
        name: "Laptop".into(),
        created: "2026-01-01T00:00:00Z".into(),
        last_used: "never".into(),
    }];
    let html = render_account(&AccountPage {
        action: "/oauth2/v0/account",
        csrf_token: "t",
        sessions: &[],
        apps: &[],
        totp_enrolled: true,
        passkeys: &passkeys,
        error: None,
        factors_unlocked: false,
    });
    assert!(
        html.contains(r#"name="action" value="reauthenticate""#),
        "{html}"
    );
    assert!(html.contains(r#"name="action" value="rename_passkey""#));
    for gone in ["remove_passkey", "add_passkey", "totp_remove", "totp_start"] {
        assert!(!html.contains(&format!(r#"value="{gone}""#)), "{gone}");
    }
}

#[test]
fn consent_names_the_app_and_its_scopes_in_words() {
    let html = render_consent(&ConsentPage {
        app_name: "Demo App",
        form_action: "/oauth2/v0/authorize/consent",
        csrf_token: "t",
        scopes: &["openid", "payroll", "x.custom"],
        unverified_host: None,
        resources: &[],
        policy_uri: None,
        tos_uri: None,
    });
    assert!(!html.contains("not verified"));
    assert!(html.contains("Demo App"));
    assert!(html.contains("Confirm who you are when you sign in"));
    assert!(html.contains("See and manage your payroll data"));
    assert!(html.contains("x.custom"));
    assert!(html.contains(r#"name="decision" value="approve""#));
    assert!(html.contains(r#"name="decision" value="deny""#));
    assert!(html.contains(r#"name="csrf_token" value="t""#));
    assert!(!html.contains("Only at"), "no resource asked for");
}

#[test]
fn consent_names_each_resource_asked_for() {
    let resources = [
        "https://mcp.example.com/mcp".to_owned(),
        "https://api.example.com/<b>".to_owned(),
    ];
    let html = render_consent(&ConsentPage {
        app_name: "Agent",
        form_action: "/oauth2/v0/authorize/consent",
        csrf_token: "t",
        scopes: &["read"],
        unverified_host: None,
        resources: &resources,
        policy_uri: None,
        tos_uri: None,
    });
    assert!(html.contains("Only at"), "{html}");
    assert!(
        html.contains("<code>https://mcp.example.com/mcp</code>"),
        "{html}"
    );
    assert!(
        html.contains("https://api.example.com/&#60;b&#62;")
            || html.contains("https://api.example.com/&lt;b&gt;"),
        "escaped: {html}"
    );
}

#[test]
fn every_page_inlines_exactly_the_hashed_stylesheet() {
    let pages = [
        sign_in(None),
        render_error("The application that sent you here is not known."),
    ];
    for html in pages {
        assert!(html.contains(&format!("<style>{STYLESHEET}</style>")));
        assert_eq!(html.matches("<style").count(), 1);
        assert!(!html.contains("style=\""), "no inline style attributes");
    }
}

#[test]
fn a_self_registered_app_is_marked_not_verified_with_its_host() {
    let html = render_consent(&ConsentPage {
        app_name: "Some Agent",
        form_action: "/oauth2/v0/authorize/consent",
        csrf_token: "t",
        scopes: &["openid"],
        unverified_host: Some("agent.example"),
        resources: &[],
        policy_uri: None,
        tos_uri: None,
    });
    assert!(html.contains("not verified"), "{html}");
    assert!(html.contains("agent.example"), "{html}");
}

#[test]
fn a_self_registered_apps_policy_and_terms_are_links_and_no_image_is_loaded() {
    let html = render_consent(&ConsentPage {
        app_name: "Some Agent",
        form_action: "/oauth2/v0/authorize/consent",
        csrf_token: "t",
        scopes: &["openid"],
        unverified_host: Some("agent.example"),
        resources: &[],
        policy_uri: Some("https://agent.example/privacy?a=1&b=<2>"),
        tos_uri: Some("https://agent.example/terms"),
    });
    assert!(
        html.contains(r#"href="https://agent.example/terms""#),
        "{html}"
    );
    assert!(html.contains("Privacy policy"), "{html}");
    assert!(html.contains("Terms of service"), "{html}");
    assert!(!html.contains("<2>"), "the address is escaped: {html}");
    assert!(!html.contains("<img"), "no image: {html}");
    let without = render_consent(&ConsentPage {
        app_name: "Some Agent",
        form_action: "/oauth2/v0/authorize/consent",
        csrf_token: "t",
        scopes: &["openid"],
        unverified_host: Some("agent.example"),
        resources: &[],
        policy_uri: None,
        tos_uri: None,
    });
    assert!(!without.contains("Privacy policy"), "{without}");
}
