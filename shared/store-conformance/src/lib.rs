//! The conformance suite every storage backend must pass (crate `token-store-conformance`).
//!
//! Its own crate, a dependency of the tests only: the crates the binaries link are built once,
//! the same for `cargo run` and for the tests.
//!
//! Plain async functions over a borrowed store (`&dyn Store`), each panicking with a message that
//! says which rule of the [`Store`] contract was broken. A backend's tests run them all with
//! [`conformance_suite!`](crate::conformance_suite), so every backend is held to the same list;
//! the library's own tests run it against SQLite, so the suite itself is tested by
//! `cargo test -p token-store-conformance`.
//!
//! Timestamps are real (`SystemClock`) and expiries are relative to them, because DynamoDB Local
//! may look at TTL attributes; ids are random, so the functions never depend on a store being
//! empty. The records come from [`records`], which other tests may use as well.

use token_store::Store;

// The layers under test, under the names their paths had in one crate.
use token_domain as domain;
use token_domain::{clock, random, secrets};
use token_store as store;

mod audit;
mod audit_refreshes;
mod auth_tokens;
mod authorization_codes;
#[cfg(test)]
mod backends;
mod batch;
mod client_secrets;
mod clients;
mod device_authorizations;
mod directory;
mod document_clients;
mod families;
mod federation;
pub mod fixtures;
mod legacy;
mod legacy_exchange;
mod lockout;
mod otp;
mod passkeys;
mod principals;
mod pushed_authorizations;
mod rate_limits;
pub mod records;
mod refresh_origin;
mod registration_tokens;
pub mod registry;
mod renewal;
mod replays;
mod revocation;
mod rotation;
mod second_factors;
mod sessions;
pub mod signing_key_ring;
pub mod writes;

pub use audit::*;
pub use audit_refreshes::*;
pub use auth_tokens::*;
pub use authorization_codes::*;
pub use batch::*;
pub use client_secrets::*;
pub use clients::*;
pub use device_authorizations::*;
pub use directory::*;
pub use document_clients::*;
pub use families::*;
pub use federation::*;
pub use legacy::*;
pub use legacy_exchange::*;
pub use lockout::*;
pub use otp::*;
pub use passkeys::*;
pub use principals::*;
pub use pushed_authorizations::*;
pub use rate_limits::*;
pub use refresh_origin::*;
pub use registration_tokens::*;
pub use renewal::*;
pub use replays::*;
pub use revocation::*;
pub use rotation::*;
pub use second_factors::*;
pub use sessions::*;

/// What a backend's factory hands the suite: the store under test, together with whatever must
/// outlive it (the temporary directory of a SQLite file), dropped after the test.
pub trait Fixture {
    fn store(&self) -> &dyn Store;
}

/// A store that needs nothing kept beside it. (Named, not blanket over every `Store`: this crate
/// does not own `Store`, so a blanket impl would overlap the tuple's below.)
impl Fixture for token_store::dynamodb::DynamoStore {
    fn store(&self) -> &dyn Store {
        self
    }
}

/// A store and what it lives in, e.g. `(SqliteStore, TempDir)`: fields drop in order, so the
/// store is closed before its directory is removed.
impl<S: Store, KeepAlive> Fixture for (S, KeepAlive) {
    fn store(&self) -> &dyn Store {
        &self.0
    }
}

/// Expands to one `#[tokio::test]` per suite function, named after it, each calling the suite
/// function with a store from `$factory`: a path to an `async fn` returning
/// `Option<impl Fixture>`, where `None` means the backend was explicitly opted out (and the
/// factory has said so).
///
/// Attributes after the factory go on every generated test, e.g.
/// `conformance_suite!(fresh_table, #[cfg_attr(skip_dynamodb, ignore = "SKIP_DYNAMODB=1")])`,
/// so that an opted-out backend's tests are listed as ignored instead of passing without running.
///
/// Every `pub async fn` of the suite must be listed here; the unit test
/// `every_suite_function_is_registered` enforces it.
#[macro_export]
macro_rules! conformance_suite {
    ($factory:path $(, #[$attribute:meta])* $(,)?) => {
        $crate::conformance_suite!(@tests $factory; [$(#[$attribute])*];
            client_round_trip_and_replace,
            clients_are_listed_oldest_first,
            a_registered_client_is_replaced_only_from_its_current_token,
            registration_token_is_valid_until_it_expires,
            document_client_is_kept_past_its_freshness_until_it_expires,
            client_secrets_change_only_from_the_version_read,
            a_single_secret_record_is_one_secret_until_migrated_in_place,
            a_secrets_last_use_is_written_at_most_hourly,
            user_round_trip_and_case_insensitive_login,
            duplicate_user_id_or_login_is_rejected,
            external_ids_are_unique_within_a_company_only,
            provisioning_tokens_are_found_by_digest_until_revoked_or_expired,
            a_companys_users_are_listed_by_id_with_their_count,
            a_user_replacement_is_conditional_and_moves_its_unique_values,
            groups_are_the_companys_and_change_from_the_revision_read,
            company_round_trip_and_client_enablement,
            legacy_app_round_trip_and_relink,
            legacy_token_round_trip_and_replace,
            legacy_tokens_repeated_within_one_import_are_written_once,
            legacy_tokens_batch_import_of_10000_loses_nothing,
            auth_token_is_reusable_for_24_hours,
            family_refresh_and_access_records_round_trip,
            application_access_token_round_trip,
            expired_items_read_as_absent,
            rotation_replaces_current_token,
            rotation_with_non_current_token_writes_nothing,
            rotation_of_revoked_or_expired_family_is_refused,
            rotation_has_exactly_one_winner_of_20,
            renewal_keeps_the_token_and_slides_its_expiry,
            renewal_of_a_non_current_token_or_revoked_family_writes_nothing,
            revoke_family_revokes_its_tokens,
            refresh_token_reads_with_its_family_origin,
            a_rotation_is_kept_by_its_family,
            legacy_exchange_link_moves_only_from_the_seen_family,
            concurrent_first_legacy_exchanges_have_one_winner,
            login_attempts_lock_at_the_threshold_until_the_window_ends,
            a_login_reads_locked_exactly_while_locked_and_reading_counts_nothing,
            refunded_login_attempts_never_lock,
            parallel_login_attempts_never_exceed_the_threshold,
            a_family_write_takes_back_its_login_attempt,
            otp_newest_open_record_counts_and_consumption,
            otp_requests_of_one_client_neither_count_for_nor_hide_another_clients,
            otp_tries_are_spent_atomically_by_12_parallel_requests,
            otp_is_consumed_once_by_10_parallel_requests,
            users_are_found_by_unique_case_insensitive_email,
            authorization_code_is_redeemed_once_and_remembers_its_family,
            expired_authorization_code_is_not_redeemable,
            concurrent_redemptions_have_one_winner,
            device_authorization_reads_by_either_code_and_is_decided_once,
            device_polls_are_recorded_only_from_the_poll_read,
            device_authorization_is_redeemed_once_by_its_client,
            pushed_authorization_is_taken_once_by_its_client,
            expired_pushed_authorization_is_not_taken,
            concurrent_takes_of_a_pushed_authorization_have_one_winner,
            revoke_access_token_revokes_only_that_token,
            revoking_an_access_token_records_only_the_first_time,
            an_exchanged_token_reads_revoked_once_a_token_it_came_from_is,
            revoke_connection_revokes_the_principals_families_with_that_client,
            revoke_connection_started_by_spares_families_started_later,
            user_connections_list_the_clients_of_live_families,
            rate_limit_refuses_over_the_limit_until_the_window_ends,
            a_counted_access_token_is_stored_only_when_counted,
            a_counted_rotation_is_written_only_when_counted,
            parallel_rate_limit_hits_never_exceed_the_limit,
            refunded_rate_limit_hits_free_their_place,
            rate_limit_blocks_last_until_their_end_and_never_shorten,
            jti_is_used_once_until_it_expires,
            parallel_first_uses_of_one_jti_have_one_winner,
            a_first_use_in_a_batch_decides_it,
            a_family_started_with_a_named_token_has_no_token_record,
            audit_events_are_read_by_subject_newest_first,
            audit_events_land_only_with_the_family_writes_they_record,
            a_repeated_exchange_records_only_the_revocation_it_makes,
            refreshes_are_listed_for_the_familys_client_and_principal,
            a_refused_required_part_writes_nothing_of_its_batch,
            an_optional_part_that_fails_is_skipped_and_the_rest_written,
            an_integrity_condition_failing_is_an_error_that_writes_nothing,
            sessions_are_listed_per_principal_and_end_once,
            expired_sessions_read_as_absent_and_are_not_revived,
            a_session_is_touched_forward_reauthenticated_and_collects_its_clients,
            consent_is_kept_per_user_and_client_until_forgotten,
            a_totp_enrolment_is_kept_once_and_each_step_used_once,
            each_recovery_code_is_used_once_even_when_uses_race,
            passkeys_are_kept_per_user_renamed_used_and_removed_once,
            a_passkey_ceremony_is_taken_once_before_it_expires,
            concurrent_takes_of_a_passkey_ceremony_have_one_winner,
            identity_providers_are_found_by_id_company_and_domain,
            assertion_issuers_are_found_by_issuer,
            a_replaced_identity_provider_reads_anew_everywhere,
            a_company_claims_a_domain_for_one_identity_provider_only,
            removing_an_identity_provider_removes_its_claims_and_links,
            a_link_is_written_once_and_never_moves,
            an_identity_providers_links_are_listed_oldest_first,
            concurrent_first_links_of_a_subject_have_one_winner,
            an_upstream_request_is_taken_once_before_it_expires,
            concurrent_takes_of_an_upstream_request_have_one_winner,
        );
    };
    (@tests $factory:path; $attributes:tt; $($name:ident),+ $(,)?) => {
        $(
            $crate::conformance_suite!(@test $factory; $attributes; $name);
        )+
    };
    (@test $factory:path; [$(#[$attribute:meta])*]; $name:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        $(#[$attribute])*
        async fn $name() {
            if let ::std::option::Option::Some(fixture) = $factory().await {
                let store = $crate::Fixture::store(&fixture);
                $crate::$name(store).await;
            }
        }
    };
}

/// The suite against SQLite, a fresh database file in a temporary directory per function.
#[cfg(test)]
mod sqlite {
    use crate::store::sqlite::SqliteStore;

    async fn fixture() -> Option<(SqliteStore, tempfile::TempDir)> {
        let dir = tempfile::Builder::new()
            .prefix("conformance-")
            .tempdir()
            .expect("create a temporary directory");
        let store = SqliteStore::open_in_dir(dir.path()).expect("open the SQLite store");
        Some((store, dir))
    }

    crate::conformance_suite!(fixture);
}
