//! RFC 3339 times (UTC, whole seconds) for audit events, without a date-time dependency: the
//! civil calendar conversion of Howard Hinnant's `days_from_civil` / `civil_from_days`.

use crate::clock::UnixTime;

const SECONDS_PER_DAY: i64 = 86_400;

/// `1970-01-01T00:00:00Z` for 0.
pub fn format(at: UnixTime) -> String {
    let days = at.div_euclid(SECONDS_PER_DAY);
    let second_of_day = at.rem_euclid(SECONDS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        second_of_day / 3600,
        second_of_day % 3600 / 60,
        second_of_day % 60
    )
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (also with a space or `t` for `T`, `z`
/// for `Z`), or a date alone (`YYYY-MM-DD`, midnight UTC). A fraction is truncated.
pub fn parse(text: &str) -> Option<UnixTime> {
    let text = text.trim();
    let date = text.get(..10)?;
    let days = parse_date(date)?;
    if text.len() == 10 {
        return Some(days * SECONDS_PER_DAY);
    }
    let rest = text.get(10..)?;
    let mut chars = rest.chars();
    if !matches!(chars.next()?, 'T' | 't' | ' ') {
        return None;
    }
    let rest = chars.as_str();
    let time = rest.get(..8)?;
    let (hour, minute, second) = (
        number(time.get(0..2)?)?,
        number(time.get(3..5)?)?,
        number(time.get(6..8)?)?,
    );
    if time.as_bytes()[2] != b':' || time.as_bytes()[5] != b':' || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    // A leap second reads as the last second of its minute.
    let second = second.min(59);
    let mut rest = rest.get(8..)?;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &fraction[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            let (hours, minutes) = (number(&rest[1..3])?, number(&rest[4..6])?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            sign * (hours * 3600 + minutes * 60)
        }
    };
    Some(days * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second - offset)
}

fn parse_date(date: &str) -> Option<i64> {
    let bytes = date.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    let (year, month, day) = (
        number(&date[0..4])?,
        number(&date[5..7])?,
        number(&date[8..10])?,
    );
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

fn number(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
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
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
