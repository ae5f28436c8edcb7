//! The abuse limits as one table: each row is a variable, its default, the window it counts
//! over and the catalogue entry its 429 answers with. `crate::limits` counts by these rows, the
//! configuration reads by them, and the README's table is checked against them.

use crate::errors::ErrorCode;

use super::vars::Vars;
use super::ConfigError;

/// One of the limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Token requests per authenticated client, per minute.
    ClientTokenRequests,
    /// Password grants and sign-in form posts per source address, per minute.
    AddressPasswordAttempts,
    /// One-time-password requests per client, per hour.
    ClientOtpRequests,
    /// Wrong one-time passwords per address and client, per hour; then that client is blocked
    /// from that address for a day (other clients are not: they reach other passwords).
    AddressOtpFailures,
    /// Dynamic client registrations per source address, per hour.
    AddressRegistrations,
    /// Client ID metadata documents fetched for requests from one source address, per hour
    /// (a kept, fresh document costs nothing): each fetch is a request to an address the
    /// caller chose, and up to 5 s of ours.
    AddressDocumentFetches,
    /// SCIM requests per company, per minute.
    CompanyScimRequests,
}

/// The abuse limits (requests per fixed window); 0 turns a limit off. See `crate::limits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// `RATE_LIMIT_CLIENT_PER_MINUTE`: token requests per authenticated client.
    pub client_per_minute: u32,
    /// `RATE_LIMIT_ADDRESS_PER_MINUTE`: password grants and sign-in posts per source address.
    pub address_per_minute: u32,
    /// `RATE_LIMIT_OTP_CLIENT_PER_HOUR`: one-time-password requests per client.
    pub otp_client_per_hour: u32,
    /// `RATE_LIMIT_OTP_FAILURES_PER_HOUR`: wrong one-time passwords of one client per address,
    /// whichever of its passwords they were meant for; then that client is blocked from the
    /// address for a day.
    pub otp_failures_per_hour: u32,
    /// `RATE_LIMIT_REGISTRATIONS_PER_HOUR`: dynamic client registrations per source address.
    pub registrations_per_hour: u32,
    /// `RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR`: client ID metadata documents fetched (not found
    /// kept and fresh) for requests from one source address.
    pub document_fetches_per_hour: u32,
    /// `RATE_LIMIT_SCIM_PER_MINUTE`: SCIM requests per company.
    pub scim_per_minute: u32,
}

/// One limit's row.
#[derive(Debug, Clone, Copy)]
pub struct LimitRow {
    pub limit: Limit,
    pub variable: &'static str,
    pub default: u32,
    pub window_seconds: i64,
    /// What a refused request answers (429, `slow_down`).
    pub code: ErrorCode,
    field: fn(&mut RateLimits) -> &mut u32,
}

const MINUTE: i64 = 60;
const HOUR: i64 = 3600;

/// Every limit, once.
pub const LIMITS: [LimitRow; 7] = [
    LimitRow {
        limit: Limit::ClientTokenRequests,
        variable: "RATE_LIMIT_CLIENT_PER_MINUTE",
        default: 6000,
        window_seconds: MINUTE,
        code: ErrorCode::ClientRateLimited,
        field: |limits| &mut limits.client_per_minute,
    },
    LimitRow {
        limit: Limit::AddressPasswordAttempts,
        variable: "RATE_LIMIT_ADDRESS_PER_MINUTE",
        default: 60,
        window_seconds: MINUTE,
        code: ErrorCode::AddressRateLimited,
        field: |limits| &mut limits.address_per_minute,
    },
    LimitRow {
        limit: Limit::ClientOtpRequests,
        variable: "RATE_LIMIT_OTP_CLIENT_PER_HOUR",
        default: 1000,
        window_seconds: HOUR,
        code: ErrorCode::OtpClientRateLimited,
        field: |limits| &mut limits.otp_client_per_hour,
    },
    LimitRow {
        limit: Limit::AddressOtpFailures,
        variable: "RATE_LIMIT_OTP_FAILURES_PER_HOUR",
        default: 10,
        window_seconds: HOUR,
        code: ErrorCode::OtpFailuresRateLimited,
        field: |limits| &mut limits.otp_failures_per_hour,
    },
    LimitRow {
        limit: Limit::AddressRegistrations,
        variable: "RATE_LIMIT_REGISTRATIONS_PER_HOUR",
        default: 20,
        window_seconds: HOUR,
        code: ErrorCode::RegistrationsRateLimited,
        field: |limits| &mut limits.registrations_per_hour,
    },
    LimitRow {
        limit: Limit::AddressDocumentFetches,
        variable: "RATE_LIMIT_DOCUMENT_FETCHES_PER_HOUR",
        default: 60,
        window_seconds: HOUR,
        code: ErrorCode::DocumentFetchesRateLimited,
        field: |limits| &mut limits.document_fetches_per_hour,
    },
    LimitRow {
        limit: Limit::CompanyScimRequests,
        variable: "RATE_LIMIT_SCIM_PER_MINUTE",
        default: 600,
        window_seconds: MINUTE,
        // SCIM answers its own error body; the catalogue entry is the client limit's.
        code: ErrorCode::ClientRateLimited,
        field: |limits| &mut limits.scim_per_minute,
    },
];

impl LimitRow {
    /// The row of `limit`.
    pub fn of(limit: Limit) -> &'static LimitRow {
        LIMITS
            .iter()
            .find(|row| row.limit == limit)
            .unwrap_or_else(|| unreachable!("every limit has a row"))
    }

    /// The configured maximum of this row's limit in `limits`.
    pub fn max(&self, limits: &RateLimits) -> u32 {
        let mut limits = *limits;
        *(self.field)(&mut limits)
    }
}

impl Default for RateLimits {
    fn default() -> Self {
        let mut limits = Self::OFF;
        for row in &LIMITS {
            *(row.field)(&mut limits) = row.default;
        }
        limits
    }
}

impl RateLimits {
    /// Every limit off (tests that are not about limits, benchmarks).
    pub const OFF: Self = Self {
        client_per_minute: 0,
        address_per_minute: 0,
        otp_client_per_hour: 0,
        otp_failures_per_hour: 0,
        registrations_per_hour: 0,
        document_fetches_per_hour: 0,
        scim_per_minute: 0,
    };

    pub(super) fn read(vars: &Vars) -> Result<Self, ConfigError> {
        let mut limits = Self::OFF;
        for row in &LIMITS {
            *(row.field)(&mut limits) = vars.number(row.variable, row.default)?;
        }
        Ok(limits)
    }
}
