//! The one duration syntax of every command: `90` or `90s` (seconds), `1.5m`, `30m`, `2h`,
//! `1d`. Fractions are fine (`0.5` for half a second); zero, negatives, `nan`, `inf`
//! and anything beyond a year are not.

use std::time::Duration;

const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// A duration as [`parse_duration`] reads it, or zero in any unit (`0`, `0s`) for a
/// step turned off.
pub fn parse_duration_or_off(text: &str) -> Result<Duration, String> {
    let number = text.trim().strip_suffix(['s', 'm', 'h', 'd']).unwrap_or(text.trim());
    let zero =
        !number.is_empty() && number.chars().all(|c| c.is_ascii_digit() || c == '.') && number.parse() == Ok(0.0);
    if zero {
        return Ok(Duration::ZERO);
    }
    parse_duration(text).map_err(|_| {
        format!(
            "'{}' is not a duration: expected 0 (off) or a positive time up to 365d, like 90, 90s, 30m or 2h",
            text.trim()
        )
    })
}

pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let problem =
        || format!("'{text}' is not a duration: expected a positive time up to 365d, like 90, 90s, 30m or 2h");
    let (number, scale) = match text.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        None => (text, 1.0),
        Some((at, _)) => {
            let scale = match &text[at..] {
                "s" => 1.0,
                "m" => 60.0,
                "h" => 3600.0,
                "d" => 86400.0,
                _ => return Err(problem()),
            };
            (&text[..at], scale)
        }
    };
    // Digits and one point only: no signs, exponents, `inf` or `nan`.
    let plain = !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        && number.chars().filter(|&c| c == '.').count() <= 1;
    let seconds = if plain { number.parse::<f64>().map_err(|_| problem())? * scale } else { return Err(problem()) };
    if !(seconds > 0.0 && seconds <= MAX_SECONDS) {
        return Err(problem());
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_form_parses() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86400)));
        assert_eq!(parse_duration("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5m"), Ok(Duration::from_secs(90)));
    }

    #[test]
    fn out_of_range_and_malformed_durations_are_refused() {
        for bad in ["", "0", "0s", "-1", "nan", "inf", "1e20", "1e3", "5x", "m", ".", "1..2", "+3", "400d", "2 h"] {
            let e = parse_duration(bad).unwrap_err();
            assert!(e.contains("not a duration"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_step_turned_off_takes_zero_in_any_unit_and_nothing_else_new() {
        for off in ["0", "0s", "0.0m", "00"] {
            assert_eq!(parse_duration_or_off(off), Ok(Duration::ZERO), "{off}");
        }
        assert_eq!(parse_duration_or_off("3m"), Ok(Duration::from_secs(180)));
        for bad in ["", "-0", "0x", "s", ".", "-1", "400d"] {
            let e = parse_duration_or_off(bad).unwrap_err();
            assert!(e.contains("expected 0 (off)"), "{bad}: {e}");
        }
    }
}
