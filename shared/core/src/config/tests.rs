//! The configuration read from pairs of variables: defaults, each variable's parsing, and the
//! refusals that name their variable.

use super::*;
use std::collections::HashMap;

fn config(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let env: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_lookup(|k| env.get(k).cloned())
}

#[test]
fn defaults_match_the_contract() {
    let c = config(&[]).unwrap();
    assert_eq!(c.store.kind, StoreKind::Sqlite);
    assert_eq!(c.data_dir, PathBuf::from(".data"));
    assert_eq!(c.store.table_name, "tokens");
    assert_eq!(c.store.dynamodb_endpoint, None);
    assert_eq!(c.geolocation.as_str(), "http://127.0.0.1:8080");
    assert_eq!(c.policy, Policy::default());
    assert_eq!(c.policy.refresh_token_ttl_seconds, 15_552_000);
    assert_eq!(c.store.read_cache_seconds, 5);
    assert_eq!(
        c.policy.rate_limits,
        RateLimits {
            client_per_minute: 6000,
            address_per_minute: 60,
            otp_client_per_hour: 1000,
            otp_failures_per_hour: 10,
            registrations_per_hour: 20,
            document_fetches_per_hour: 60,
            scim_per_minute: 600,
        }
    );
    assert_eq!(c.policy.registration.mode, RegistrationMode::Off);
    assert_eq!(
        c.policy.registration.scopes.to_string(),
        "email offline_access openid profile"
    );
}

#[test]
fn the_webauthn_rp_id_is_the_geolocations_host_or_a_registrable_parent() {
    let at = |geolocation: &str, rp_id: &str| {
        config(&[("GEOLOCATION", geolocation), ("WEBAUTHN_RP_ID", rp_id)])
            .map(|c| c.policy.webauthn_rp_id.unwrap())
    };
    let host = "https://us.api.example.com";
    for good in [
        "us.api.example.com",
        "api.example.com",
        "example.com",
        "US.API.Example.COM",
    ] {
        assert!(at(host, good).is_ok(), "{good}");
    }
    assert_eq!(at(host, " Example.COM ").unwrap(), "example.com");
    assert!(at("http://localhost:8080", "localhost").is_ok());
    for bad in [
        "com",
        "other.example.com",
        "xample.com",
        "eu.api.example.com",
        "api.example.com.evil.org",
        "evil.org",
        "127.0.0.1",
        "[::1]",
        "example..com",
        "www.us.api.example.com",
    ] {
        let error = at(host, bad).expect_err(bad);
        assert!(
            matches!(error, ConfigError::RelyingPartyId { .. }),
            "{bad}: {error}"
        );
        let message = error.to_string();
        assert!(message.contains("WEBAUTHN_RP_ID"), "{message}");
        assert!(message.contains("us.api.example.com"), "{message}");
    }
    let ip = at("http://127.0.0.1:8080", "127.0.0.1").unwrap_err();
    assert!(ip.to_string().contains("IP address"), "{ip}");
    assert!(at("http://127.0.0.1:8080", "localhost").is_err());
    // Unset or empty: the geolocation's host, whatever it is (passkeys off on an IP).
    assert_eq!(
        config(&[
            ("GEOLOCATION", "http://127.0.0.1:8080"),
            ("WEBAUTHN_RP_ID", " ")
        ])
        .unwrap()
        .policy
        .webauthn_rp_id,
        None
    );
}

#[test]
fn dynamic_registration_is_off_open_or_token() {
    for (text, mode) in [
        ("off", RegistrationMode::Off),
        ("open", RegistrationMode::Open),
        ("token", RegistrationMode::Token),
    ] {
        let c = config(&[("DYNAMIC_REGISTRATION", text)]).unwrap();
        assert_eq!(c.policy.registration.mode, mode);
    }
    let err = config(&[("DYNAMIC_REGISTRATION", "on")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("DYNAMIC_REGISTRATION"), "{err}");
    let c = config(&[("REGISTRATION_SCOPES", "openid mcp:tools")]).unwrap();
    assert_eq!(c.policy.registration.scopes.to_string(), "mcp:tools openid");
    let c = config(&[("RATE_LIMIT_REGISTRATIONS_PER_HOUR", "0")]).unwrap();
    assert_eq!(c.policy.rate_limits.registrations_per_hour, 0);
    let c = config(&[("RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR", "0")]).unwrap();
    assert_eq!(c.policy.rate_limits.document_fetches_per_hour, 0);
}

#[test]
fn resources_are_a_comma_separated_list_of_uris() {
    assert!(config(&[]).unwrap().policy.resources.deployment.is_empty());
    let c = config(&[(
        "RESOURCES",
        "https://a.example.com, https://b.example.com/mcp",
    )])
    .unwrap();
    assert_eq!(c.policy.resources.deployment.len(), 2);
    let err = config(&[("RESOURCES", "https://a.example.com#x")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("RESOURCES"), "{err}");
}

#[test]
fn client_id_metadata_documents_are_off_unless_on() {
    assert!(!config(&[]).unwrap().policy.client_id_metadata_documents);
    let on = config(&[("CLIENT_ID_METADATA_DOCUMENTS", "on")]).unwrap();
    assert!(on.policy.client_id_metadata_documents);
    let off = config(&[("CLIENT_ID_METADATA_DOCUMENTS", "off")]).unwrap();
    assert!(!off.policy.client_id_metadata_documents);
    let err = config(&[("CLIENT_ID_METADATA_DOCUMENTS", "true")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("CLIENT_ID_METADATA_DOCUMENTS"), "{err}");
}

#[test]
fn allowed_outbound_hosts_are_host_port_pairs() {
    assert!(config(&[]).unwrap().outbound_allowed_hosts.is_empty());
    let c = config(&[(
        "CLIENT_ID_METADATA_ALLOW_HOSTS",
        "127.0.0.1:9000, localhost:3000",
    )])
    .unwrap();
    assert!(c.outbound_allowed_hosts.allows("127.0.0.1", 9000));
    assert!(c.outbound_allowed_hosts.allows("localhost", 3000));
    let err = config(&[("CLIENT_ID_METADATA_ALLOW_HOSTS", "localhost")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("CLIENT_ID_METADATA_ALLOW_HOSTS"), "{err}");
}

#[test]
fn zero_turns_a_rate_limit_off() {
    let c = config(&[
        ("RATE_LIMIT_CLIENT_PER_MINUTE", "0"),
        ("RATE_LIMIT_OTP_FAILURES_PER_HOUR", "3"),
    ])
    .unwrap();
    assert_eq!(c.policy.rate_limits.client_per_minute, 0);
    assert_eq!(c.policy.rate_limits.otp_failures_per_hour, 3);
    let err = config(&[("RATE_LIMIT_ADDRESS_PER_MINUTE", "-1")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("RATE_LIMIT_ADDRESS_PER_MINUTE"), "{err}");
}

#[test]
fn the_read_cache_is_at_most_five_seconds() {
    assert_eq!(
        config(&[("READ_CACHE_SECONDS", "0")])
            .unwrap()
            .store
            .read_cache_seconds,
        0
    );
    let err = config(&[("READ_CACHE_SECONDS", "6")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("READ_CACHE_SECONDS"), "{err}");
}

#[test]
fn dpop_nonces_are_off_unless_on() {
    assert!(!config(&[]).unwrap().policy.dpop_nonce);
    assert!(!config(&[("DPOP_NONCE", "off")]).unwrap().policy.dpop_nonce);
    assert!(config(&[("DPOP_NONCE", "on")]).unwrap().policy.dpop_nonce);
    let err = config(&[("DPOP_NONCE", "yes")]).unwrap_err().to_string();
    assert!(err.contains("DPOP_NONCE"), "{err}");
}

#[test]
fn metrics_are_on_unless_off() {
    assert!(config(&[]).unwrap().telemetry.metrics);
    assert!(config(&[("METRICS", " on ")]).unwrap().telemetry.metrics);
    assert!(!config(&[("METRICS", "off")]).unwrap().telemetry.metrics);
    let err = config(&[("METRICS", "0")]).unwrap_err().to_string();
    assert!(err.contains("METRICS"), "{err}");
}

#[test]
fn geolocation_defaults_to_the_port() {
    assert_eq!(
        config(&[("PORT", "9999")]).unwrap().geolocation.as_str(),
        "http://127.0.0.1:9999"
    );
}

#[test]
fn rejects_bad_values_by_name() {
    let err = config(&[("STORE", "postgres")]).unwrap_err().to_string();
    assert!(err.contains("STORE"), "{err}");
    let err = config(&[("LOCKOUT_THRESHOLD", "many")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("LOCKOUT_THRESHOLD"), "{err}");
    assert!(config(&[("REFRESH_TOKEN_TTL_DAYS", "0")]).is_err());
    assert!(config(&[("GEOLOCATION", "not a url")]).is_err());
}
