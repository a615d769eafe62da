//! Clock helpers: the API speaks integer Unix seconds unless a field says ISO-8601.

use std::time::{SystemTime, UNIX_EPOCH};

/// The current time as integer Unix seconds.
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The current time as Unix milliseconds (used where ordering within a second matters).
pub fn unix_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Formats Unix seconds as ISO-8601 UTC (`2026-11-22T02:34:37Z`), the form the
/// spec uses for blast and schedule times.
pub fn iso8601(unix: i64) -> String {
    let t =
        time::OffsetDateTime::from_unix_timestamp(unix).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_owned())
}

/// Parses an ISO-8601 / RFC 3339 date-time with an offset (`Z` or `+02:00`)
/// into Unix seconds; fractions of a second are dropped.
pub fn parse_iso8601(s: &str) -> Result<i64, String> {
    time::OffsetDateTime::parse(s.trim(), &time::format_description::well_known::Rfc3339)
        .map(|t| t.unix_timestamp())
        .map_err(|_| {
            format!("`{s}` is not an ISO-8601 date-time with an offset, like 2026-11-22T09:30:00Z")
        })
}

/// Formats Unix seconds as `YYYY-MM-DD HH:MM:SS` (UTC), the stored-contact format.
pub fn sql_datetime(unix: i64) -> String {
    let t =
        time::OffsetDateTime::from_unix_timestamp(unix).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let f = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    t.format(&f)
        .unwrap_or_else(|_| "1970-01-01 00:00:00".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_round_trips_and_accepts_offsets() {
        assert_eq!(iso8601(1_795_314_877), "2026-11-22T02:34:37Z");
        assert_eq!(
            parse_iso8601("2026-11-22T02:34:37Z").unwrap(),
            1_795_314_877
        );
        assert_eq!(
            parse_iso8601("2026-11-22T03:34:37+01:00").unwrap(),
            1_795_314_877
        );
        assert_eq!(
            parse_iso8601("2026-11-22T02:34:37.999Z").unwrap(),
            1_795_314_877
        );
        assert!(parse_iso8601("2026-11-22 02:34:37").is_err());
        assert!(parse_iso8601("tomorrow").is_err());
    }

    #[test]
    fn the_contact_format_has_a_space_and_no_zone() {
        assert_eq!(sql_datetime(1_795_314_877), "2026-11-22 02:34:37");
    }
}
