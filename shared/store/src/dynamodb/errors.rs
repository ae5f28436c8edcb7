//! DynamoDB's errors as store errors: what is worth a retry later (503), what is not (500), and
//! error text that never carries a lookup key.

use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};

use crate::StoreError;

/// Error codes that mean "too much traffic, try later": the caller answers 503.
pub(super) const THROTTLING_CODES: &[&str] = &[
    "ProvisionedThroughputExceededException",
    // A single-item write refused while a transaction holds its item: nothing was written.
    "TransactionConflictException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "Throttling",
    "TooManyRequestsException",
];

/// Error codes after which a write may or may not have landed: also 503.
/// - `TransactionInProgressException`: a transaction with the same `ClientRequestToken` (the
///   SDK's own retry after a lost answer) is still running; it will finish either way.
/// - `IdempotentParameterMismatchException`: a transaction with the same `ClientRequestToken`
///   and other items already ran.
pub(super) const OUTCOME_UNKNOWN_CODES: &[&str] = &[
    "TransactionInProgressException",
    "IdempotentParameterMismatchException",
];

pub(super) fn build_error(e: aws_sdk_dynamodb::error::BuildError) -> StoreError {
    StoreError::internal(format!("cannot build request: {e}")).caused_by(e)
}

/// Error text for logs and 500 bodies: short, and with every long hex run (a token hash that a
/// decoding error or the service might echo back) cut to a prefix, so no lookup key leaks.
pub(super) fn sanitize(text: &str) -> String {
    const MAX: usize = 300;
    const HEX_KEEP: usize = 8;
    const HEX_RUN: usize = 16;
    let mut out = String::with_capacity(text.len().min(MAX + 4));
    let mut hex_run = String::new();
    let flush = |out: &mut String, run: &mut String| {
        if run.len() >= HEX_RUN {
            out.push_str(&run[..HEX_KEEP]);
            out.push('…');
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_hexdigit() {
            hex_run.push(c);
            continue;
        }
        flush(&mut out, &mut hex_run);
        out.push(c);
    }
    flush(&mut out, &mut hex_run);
    if out.len() > MAX {
        let mut end = MAX;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push('…');
    }
    out
}

/// Timeouts, throttling, unreachable endpoints and unknown outcomes are `Unavailable` (503,
/// retry later); the SDK has already retried them by then. A timeout or a dropped answer after
/// the request was sent may hide a write that landed: `Unavailable` therefore never means
/// "nothing was changed". Everything else is `Internal` (500). The SDK's error is kept as the
/// source.
pub(super) fn store_error<E>(op: &str, err: SdkError<E>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let error = match &err {
        SdkError::TimeoutError(_) => StoreError::unavailable(format!("{op}: timed out")),
        SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            StoreError::unavailable(sanitize(&format!(
                "{op}: cannot reach DynamoDB: {}",
                DisplayErrorContext(&err)
            )))
        }
        SdkError::ServiceError(service) => {
            let code = err.code().unwrap_or("unknown error");
            let message = sanitize(&format!("{op}: {code}: {}", err.message().unwrap_or("")));
            if THROTTLING_CODES.contains(&code)
                || OUTCOME_UNKNOWN_CODES.contains(&code)
                || service.raw().status().is_server_error()
            {
                StoreError::unavailable(message)
            } else {
                StoreError::internal(message)
            }
        }
        _ => StoreError::internal(sanitize(&format!("{op}: {}", DisplayErrorContext(&err)))),
    };
    error.caused_by(err)
}

/// The per-item codes of a cancelled transaction: from `CancellationReasons`, or, if a server
/// does not send them, from the message (`... [None, ConditionalCheckFailed]`).
pub(super) fn cancellation_codes(
    e: &aws_sdk_dynamodb::types::error::TransactionCanceledException,
) -> Vec<String> {
    let reasons = e.cancellation_reasons();
    if !reasons.is_empty() {
        return reasons
            .iter()
            .map(|r| r.code().unwrap_or("None").to_owned())
            .collect();
    }
    let message = e.message().unwrap_or_default();
    match (message.rfind('['), message.rfind(']')) {
        (Some(open), Some(close)) if open < close => message[open + 1..close]
            .split(',')
            .map(|code| code.trim().to_owned())
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::TokenHash;

    #[test]
    fn sanitize_cuts_hashes_to_a_prefix_and_bounds_length() {
        let hash = TokenHash::of("secret").to_hex();
        let cleaned = sanitize(&format!(
            "invalid value: string \"{hash}\" in REFRESH#{hash}"
        ));
        assert!(!cleaned.contains(&hash), "{cleaned}");
        assert!(cleaned.contains(&format!("{}…", &hash[..8])), "{cleaned}");
        assert!(sanitize(&"x".repeat(1000)).chars().count() <= 301);
        assert_eq!(sanitize("GetItem: timed out"), "GetItem: timed out");
    }

    #[test]
    fn cancellation_codes_fall_back_to_the_message() {
        let cancelled = aws_sdk_dynamodb::types::error::TransactionCanceledException::builder()
            .message("Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]")
            .build();
        assert_eq!(
            cancellation_codes(&cancelled),
            ["None", "ConditionalCheckFailed"]
        );
    }
}
