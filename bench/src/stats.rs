//! Figures: latency percentiles and the rows of the printed table.

use std::time::Duration;

/// Latency samples of one measurement.
#[derive(Debug, Default, Clone)]
pub struct Samples(Vec<Duration>);

impl Samples {
    /// Room for `n` samples.
    pub fn with_capacity(n: usize) -> Self {
        Self(Vec::with_capacity(n))
    }

    /// Adds one sample.
    pub fn push(&mut self, d: Duration) {
        self.0.push(d);
    }

    /// Adds every sample of `other`.
    pub fn extend(&mut self, other: Samples) {
        self.0.extend(other.0);
    }

    /// How many samples there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The `p`-th percentile (0..=100), nearest rank; zero without samples.
    pub fn percentile(&mut self, p: f64) -> Duration {
        if self.0.is_empty() {
            return Duration::ZERO;
        }
        self.0.sort_unstable();
        let rank = ((p / 100.0) * self.0.len() as f64).ceil() as usize;
        self.0[rank.clamp(1, self.0.len()) - 1]
    }
}

/// Whether a higher or a lower figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// The figure (or its ratio to the ceiling) must reach the target.
    AtLeast,
    /// The figure must stay below the target.
    AtMost,
    /// Reported only.
    Info,
}

/// One line of the table.
#[derive(Debug, Clone)]
pub struct Row {
    /// What was measured, e.g. `P3 read: session status`.
    pub name: String,
    /// The figure with its unit.
    pub figure: String,
    /// The figure as a number.
    pub value: f64,
    /// The ceiling it is compared to (empty for absolute targets).
    pub ceiling: String,
    /// figure / ceiling, when there is a ceiling.
    pub ratio: Option<f64>,
    /// The target as printed, e.g. `≥ 0.40` or `< 10 ms`.
    pub target: String,
    /// Met, missed, or reported only.
    pub verdict: Option<bool>,
}

impl Row {
    /// A figure compared as a ratio to a ceiling: `value / ceiling` must be ≥ `target`.
    pub fn ratio(name: &str, value: f64, unit: &str, ceiling: f64, target: f64) -> Row {
        let ratio = if ceiling > 0.0 { value / ceiling } else { 0.0 };
        Row {
            name: name.into(),
            figure: format!("{} {unit}", human(value)),
            value,
            ceiling: format!("{} {unit}", human(ceiling)),
            ratio: Some(ratio),
            target: format!("≥ {target:.2}"),
            verdict: Some(ratio >= target),
        }
    }

    /// A figure with an absolute target.
    pub fn absolute(name: &str, value: f64, unit: &str, goal: Goal, target: f64) -> Row {
        let (target_text, verdict) = match goal {
            Goal::AtLeast => (format!("≥ {} {unit}", human(target)), Some(value >= target)),
            Goal::AtMost => (format!("≤ {} {unit}", human(target)), Some(value <= target)),
            Goal::Info => (String::new(), None),
        };
        Row {
            name: name.into(),
            figure: format!("{} {unit}", human(value)),
            value,
            ceiling: String::new(),
            ratio: None,
            target: target_text,
            verdict,
        }
    }

    /// An absolute figure shown beside a ceiling for context.
    pub fn with_ceiling(mut self, ceiling: f64, unit: &str) -> Row {
        self.ceiling = format!("{} {unit}", human(ceiling));
        if ceiling > 0.0 {
            self.ratio = Some(self.value / ceiling);
        }
        self
    }
}

/// A number as printed: thousands separated, at most three significant decimals.
pub fn human(v: f64) -> String {
    if v.abs() >= 100.0 {
        let n = v.round() as i64;
        let s = n.abs().to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        if n < 0 { format!("-{out}") } else { out }
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Microseconds of a duration, as a float.
pub fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Milliseconds of a duration, as a float.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The table as Markdown.
pub fn render(rows: &[Row]) -> String {
    let mut out = String::from(
        "| Measurement | Figure | Ceiling (same run) | Ratio | Target | Result |\n|---|---:|---:|---:|---|---|\n",
    );
    for r in rows {
        let ratio = r.ratio.map(|x| format!("{x:.2}")).unwrap_or_default();
        let verdict = match r.verdict {
            Some(true) => "PASS",
            Some(false) => "MISS",
            None => "",
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            r.name, r.figure, r.ceiling, ratio, r.target, verdict
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let mut s = Samples::default();
        for i in 1..=100 {
            s.push(Duration::from_millis(i));
        }
        assert_eq!(s.percentile(50.0), Duration::from_millis(50));
        assert_eq!(s.percentile(99.0), Duration::from_millis(99));
        assert_eq!(s.percentile(100.0), Duration::from_millis(100));
    }

    #[test]
    fn numbers_print_with_thousands_separators() {
        assert_eq!(human(81234.4), "81,234");
        assert_eq!(human(12.345), "12.3");
        assert_eq!(human(1.234), "1.23");
    }
}
