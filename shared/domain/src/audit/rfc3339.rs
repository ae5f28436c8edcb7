//! RFC 3339 times (UTC, whole seconds) for audit events, the account page and `tokenctl`, on the
//! `time` crate.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::clock::UnixTime;

/// The first and last second RFC 3339 can write (years 0000 to 9999).
const FIRST: UnixTime = -62_167_219_200;
const LAST: UnixTime = 253_402_300_799;

/// `1970-01-01T00:00:00Z` for 0; a time before year 0 or after 9999 as the first or last second
/// RFC 3339 can write.
pub fn format(at: UnixTime) -> String {
    OffsetDateTime::from_unix_timestamp(at.clamp(FIRST, LAST))
        .ok()
        .and_then(|time| time.format(&Rfc3339).ok())
        .unwrap_or_default()
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (also with a space or `t` for `T`, `z`
/// for `Z`), or a date alone (`YYYY-MM-DD`, midnight UTC). A fraction is truncated; a leap
/// second reads as the last second of its minute.
pub fn parse(text: &str) -> Option<UnixTime> {
    let text = text.trim();
    if text.len() == 10 {
        return parse(&format!("{text}T00:00:00Z"));
    }
    // `time` takes any separator, and a leap second only where one was inserted.
    if !matches!(text.as_bytes().get(10)?, b'T' | b't' | b' ') {
        return None;
    }
    let mut text = text.to_owned();
    if text.get(16..19) == Some(":60") {
        text.replace_range(17..19, "59");
    }
    OffsetDateTime::parse(&text, &Rfc3339)
        .ok()
        .map(OffsetDateTime::unix_timestamp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_back() {
        assert_eq!(format(0), "1970-01-01T00:00:00Z");
        assert_eq!(format(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format(1_795_000_000), "2026-11-18T11:06:40Z");
        for at in [0, 951_782_400, 1_795_000_000, 4_102_444_799, -86_401] {
            assert_eq!(parse(&format(at)), Some(at), "{at}");
        }
    }

    #[test]
    fn clamps_what_rfc_3339_cannot_write() {
        assert_eq!(format(FIRST), "0000-01-01T00:00:00Z");
        assert_eq!(format(LAST), "9999-12-31T23:59:59Z");
        assert_eq!(format(i64::MIN), format(FIRST));
        assert_eq!(format(i64::MAX), format(LAST));
    }

    #[test]
    fn reads_a_space_separator_a_leap_second_and_a_negative_fraction_as_before() {
        assert_eq!(parse("2026-11-18 11:06:40Z"), Some(1_795_000_000));
        assert_eq!(parse("2026-11-18T11:06:60Z"), Some(1_795_000_019));
        assert_eq!(parse(" 1969-12-31T23:59:59.9Z "), Some(-1));
        assert_eq!(parse("2026-11-18T11:06:40-00:30"), Some(1_795_001_800));
    }

    #[test]
    fn parses_offsets_fractions_and_dates() {
        assert_eq!(parse("2026-11-18T12:06:40.123+01:00"), Some(1_795_000_000));
        assert_eq!(parse("2026-11-18t11:06:40z"), Some(1_795_000_000));
        assert_eq!(parse("1970-01-02"), Some(86_400));
        for bad in [
            "",
            "2026-13-01",
            "2026-02-30T00:00:00Z",
            "2026-11-18T09:06:40",
            "2026-11-18T09:06:40+0100",
            "2026-11-18T24:00:00Z",
            "yesterday",
            "2026-11-18X09:06:40Z",
            "+2026-11-18T09:06:40Z",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
