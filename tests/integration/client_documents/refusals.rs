//! Every refusal, as the server-side request forgery surface it is: no address but a public one
//! is ever called (unless its `host:port` is allowed), whatever spelling or name leads to it;
//! nothing but one answer of at most 64 KiB within the time limit is read; no redirect is
//! followed; and a document must name itself, list its redirect URIs, and authenticate with
//! `none` or `private_key_jwt`. Each ends the authorize request on the error page (400), never
//! a redirect, with the reason logged.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

crate::on_both_stores!(using super::documents;
    loopback_is_never_called_unless_allowed,
    private_addresses_are_never_called,
    the_metadata_service_is_never_called,
    ipv6_loopback_and_mapped_addresses_are_never_called,
    a_name_with_one_private_address_among_public_ones_is_refused,
    http_is_refused_for_a_host_not_allowed,
    a_redirect_is_not_followed,
    a_body_over_64_kib_is_refused,
    an_answer_other_than_200_is_refused,
    a_document_that_is_not_json_is_refused,
    a_document_naming_another_client_id_is_refused,
    a_document_without_redirect_uris_is_refused,
    a_client_secret_method_is_refused,
    a_url_that_is_not_a_client_id_url_is_refused,
    the_token_endpoint_refuses_what_the_authorize_endpoint_refuses,
);

mod slow {
    use super::*;

    crate::on_both_stores!(using super::super::impatient;
        a_slow_server_is_given_up_on_at_the_time_limit,
    );
}

/// A TCP listener on loopback that counts the connections it accepts and never answers: had
/// the fetcher connected, the count would say so.
async fn canary() -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (port, accepted)
}

async fn loopback_is_never_called_unless_allowed(documents: Documents) {
    let (port, accepted) = canary().await;
    let path = fresh_path("client.json");
    // Only agent.test:<server port> is allowed: the same address under another name or port,
    // spelled as an address or a name, is loopback like any other.
    for host in [
        format!("127.0.0.1:{port}"),
        format!("loopback.test:{port}"),
        format!("127.0.0.2:{port}"),
    ] {
        let client_id = format!("https://{host}{path}");
        assert_refused(&documents, &client_id, "is loopback").await;
    }
    // Other spellings of an address are not client ids at all (only the normal form is).
    let decimal = format!("https://2130706433:{port}{path}");
    assert_refused(&documents, &decimal, "not in its normal form").await;
    // The document server itself, by address rather than by its allowed name.
    let client_id = format!("https://127.0.0.1:{}{path}", documents.server.port);
    assert_refused(&documents, &client_id, "is loopback").await;
    assert_eq!(accepted.load(Ordering::SeqCst), 0, "never connected");
    assert_eq!(documents.server.all_hits(), 0);
}

async fn private_addresses_are_never_called(documents: Documents) {
    for host in [
        "10.1.2.3",
        "10.255.255.254",
        "192.168.1.20",
        "172.16.0.9",
        "private.test",
    ] {
        let client_id = format!("https://{host}/agent/client.json");
        assert_refused(&documents, &client_id, "is private").await;
    }
    assert_refused(
        &documents,
        "https://100.64.0.1/client.json",
        "shared address space",
    )
    .await;
}

async fn the_metadata_service_is_never_called(documents: Documents) {
    for client_id in [
        "https://169.254.169.254/latest/meta-data/iam/security-credentials/role",
        "https://metadata.test/latest/meta-data",
        "https://[::ffff:a9fe:a9fe]/latest/meta-data",
        "https://[fe80::a9fe:a9fe]/latest/meta-data",
    ] {
        assert_refused(&documents, client_id, "is link-local").await;
    }
}

async fn ipv6_loopback_and_mapped_addresses_are_never_called(documents: Documents) {
    for client_id in [
        "https://[::1]/client.json",
        "https://v6-loopback.test/client.json",
        "https://[::ffff:7f00:1]/client.json",
        "https://mapped.test/client.json",
    ] {
        assert_refused(&documents, client_id, "is loopback").await;
    }
    assert_refused(
        &documents,
        "https://[::ffff:a00:1]/client.json",
        "is private",
    )
    .await;
    assert_refused(
        &documents,
        "https://[fd12:3456::1]/client.json",
        "unique local",
    )
    .await;
    assert_refused(&documents, "https://[::]/client.json", "is unspecified").await;
    assert_refused(&documents, "https://0.0.0.0/client.json", "is unspecified").await;
}

async fn a_name_with_one_private_address_among_public_ones_is_refused(documents: Documents) {
    let before = documents.resolver.lookups();
    assert_refused(
        &documents,
        "https://mixed.test/agent/client.json",
        "10.0.0.7 is private",
    )
    .await;
    assert_eq!(documents.resolver.lookups(), before + 1, "resolved once");
}

async fn http_is_refused_for_a_host_not_allowed(documents: Documents) {
    let before = documents.resolver.lookups();
    assert_refused(
        &documents,
        "http://public.test/agent/client.json",
        "only https may be called",
    )
    .await;
    // Allowed as agent.test:<port>, not on another port.
    let client_id = format!(
        "http://{AGENT_HOST}:{}/client.json",
        documents.server.port + 1
    );
    assert_refused(&documents, &client_id, "only https may be called").await;
    assert_eq!(
        documents.resolver.lookups(),
        before,
        "refused before any lookup"
    );
}

async fn a_redirect_is_not_followed(documents: Documents) {
    let server = &documents.server;
    // Where the redirect points: a valid document of the same client_id.
    let target = fresh_path("client.json");
    let path = fresh_path("client.json");
    let url = documents.url(&path);
    server.serve(&target, Served::json(&public_document(&url), None));
    for status in [
        StatusCode::MOVED_PERMANENTLY,
        StatusCode::FOUND,
        StatusCode::SEE_OTHER,
        StatusCode::TEMPORARY_REDIRECT,
        StatusCode::PERMANENT_REDIRECT,
    ] {
        let location = documents.url(&target);
        server.serve(&path, Served::raw(status, &[("location", &location)], ""));
        assert_refused(&documents, &url, &format!("answered {}", status.as_u16())).await;
    }
    assert_eq!(server.hits(&target), 0, "the redirect was not followed");
}

async fn a_body_over_64_kib_is_refused(documents: Documents) {
    let path = fresh_path("client.json");
    let url = documents.url(&path);
    let mut document = public_document(&url);
    document["padding"] = json!("x".repeat(64 * 1024));
    documents.server.serve(&path, Served::json(&document, None));
    assert_refused(&documents, &url, "larger than 65536 bytes").await;
    // Just under the limit is read.
    document["padding"] = json!("x".repeat(60 * 1024));
    documents.server.serve(&path, Served::json(&document, None));
    let page = open_authorize(&documents.app, &url).await;
    assert_eq!(page.status(), StatusCode::OK);
}

async fn a_slow_server_is_given_up_on_at_the_time_limit(documents: Documents) {
    let path = fresh_path("client.json");
    let url = documents.url(&path);
    let served = Served::json(&public_document(&url), None).after(Duration::from_secs(3));
    documents.server.serve(&path, served);
    let started = std::time::Instant::now();
    assert_refused(&documents, &url, "time limit").await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "given up on at the limit (300 ms here), not after the server's 3 s: {:?}",
        started.elapsed()
    );
}

async fn an_answer_other_than_200_is_refused(documents: Documents) {
    let path = fresh_path("client.json");
    let url = documents.url(&path);
    assert_refused(&documents, &url, "answered 404").await;
    documents.server.serve(
        &path,
        Served::raw(StatusCode::INTERNAL_SERVER_ERROR, &[], "oops"),
    );
    assert_refused(&documents, &url, "answered 500").await;
}

async fn a_document_that_is_not_json_is_refused(documents: Documents) {
    let path = fresh_path("client.json");
    let url = documents.url(&path);
    for body in [
        "<html><body>Agent</body></html>",
        "",
        "[\"a\", \"list\"]",
        "{\"client_id\": ",
    ] {
        let served = Served::raw(StatusCode::OK, &[("content-type", "text/html")], body);
        documents.server.serve(&path, served);
        assert_refused(&documents, &url, "not a JSON object").await;
    }
}

async fn a_document_naming_another_client_id_is_refused(documents: Documents) {
    let path = fresh_path("client.json");
    let url = documents.url(&path);
    for other in [
        json!(documents.url("/someone-else/client.json")),
        json!(format!("{url}?v=2")),
        json!(url.to_uppercase()),
        Value::Null,
    ] {
        let mut document = public_document(&url);
        document["client_id"] = other;
        documents.server.serve(&path, Served::json(&document, None));
        assert_refused(
            &documents,
            &url,
            "client_id is not the URL it was fetched from",
        )
        .await;
    }
}

async fn a_document_without_redirect_uris_is_refused(documents: Documents) {
    let path = fresh_path("client.json");
    let url = documents.url(&path);
    let mut document = public_document(&url);
    document.as_object_mut().unwrap().remove("redirect_uris");
    documents.server.serve(&path, Served::json(&document, None));
    assert_refused(&documents, &url, "redirect_uris is required").await;
    document["redirect_uris"] = json!([]);
    documents.server.serve(&path, Served::json(&document, None));
    assert_refused(&documents, &url, "redirect_uris is required").await;
    document["redirect_uris"] = json!(["http://app.example.com/callback"]);
    documents.server.serve(&path, Served::json(&document, None));
    assert_refused(&documents, &url, "redirect URI must use https").await;
}

async fn a_client_secret_method_is_refused(documents: Documents) {
    let path = fresh_path("client.json");
    let url = documents.url(&path);
    for method in ["client_secret_basic", "client_secret_post"] {
        let mut document = public_document(&url);
        document["token_endpoint_auth_method"] = json!(method);
        documents.server.serve(&path, Served::json(&document, None));
        assert_refused(&documents, &url, &format!("{method} is not accepted")).await;
    }
    let mut document = public_document(&url);
    document
        .as_object_mut()
        .unwrap()
        .remove("token_endpoint_auth_method");
    documents.server.serve(&path, Served::json(&document, None));
    assert_refused(&documents, &url, "token_endpoint_auth_method is required").await;
    let mut document = public_document(&url);
    document["client_secret"] = json!("s3cret");
    documents.server.serve(&path, Served::json(&document, None));
    assert_refused(&documents, &url, "must not carry a client secret").await;
    let mut document = public_document(&url);
    document["token_endpoint_auth_method"] = json!("private_key_jwt");
    documents.server.serve(&path, Served::json(&document, None));
    assert_refused(&documents, &url, "needs jwks or jwks_uri").await;
}

async fn a_url_that_is_not_a_client_id_url_is_refused(documents: Documents) {
    let base = documents.url("");
    for (client_id, reason) in [
        (format!("{base}/"), "it has no path"),
        (base.clone(), "it has no path"),
        (format!("{base}/client.json#me"), "it has a fragment"),
        (format!("{base}/a/../client.json"), "not in its normal form"),
        (
            format!(
                "http://user:pw@{AGENT_HOST}:{}/client.json",
                documents.server.port
            ),
            "user name or password",
        ),
    ] {
        assert_refused(&documents, &client_id, reason).await;
    }
    assert_eq!(documents.server.all_hits(), 0, "none of them was fetched");
}

async fn the_token_endpoint_refuses_what_the_authorize_endpoint_refuses(documents: Documents) {
    let path = fresh_path("client.json");
    let url = documents.url(&path);
    let mut document = public_document(&url);
    document["token_endpoint_auth_method"] = json!("client_secret_basic");
    documents.server.serve(&path, Served::json(&document, None));
    let (status, body) = documents
        .app
        .token(&[
            ("grant_type", "authorization_code"),
            ("client_id", url.as_str()),
            ("code", "whatever"),
            ("redirect_uri", REDIRECT_URI),
            ("code_verifier", crate::authorize::flow::VERIFIER),
        ])
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"], "invalid_client", "{body}");
    assert_eq!(body["code"], 61, "a client not found: {body}");
    for (client_id, reason) in [
        ("https://10.0.0.1/client.json", "is private"),
        ("https://169.254.169.254/latest/meta-data", "is link-local"),
    ] {
        let (status, _) = documents
            .app
            .token(&[
                ("grant_type", "authorization_code"),
                ("client_id", client_id),
                ("code", "whatever"),
                ("redirect_uri", REDIRECT_URI),
            ])
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{client_id}");
        let logged = crate::support::logs::captured_lines_with(client_id);
        assert!(logged.iter().any(|l| l.contains(reason)), "{logged:#?}");
    }
}
