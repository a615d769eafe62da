//! Plain-text tables: a header row and left-aligned columns two spaces apart.

use serde_json::Value;

/// Renders `rows` under `headers`; an empty table says so.
pub(super) fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    if rows.is_empty() {
        return "(none)\n".to_owned();
    }
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let parts: Vec<String> = cells
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(&mut headers.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
    out
}

/// A JSON field as a table cell: strings bare, null and absence as `-`.
pub(super) fn cell(v: &Value, key: &str) -> String {
    match v.get(key) {
        None | Some(Value::Null) => "-".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_as_wide_as_their_widest_cell() {
        let t = render(
            &["ID", "STATUS"],
            &[
                vec!["alice".into(), "logged_in".into()],
                vec!["bob-the-second".into(), "-".into()],
            ],
        );
        assert_eq!(
            t,
            "ID              STATUS\nalice           logged_in\nbob-the-second  -\n"
        );
    }

    #[test]
    fn an_empty_table_says_so() {
        assert_eq!(render(&["ID"], &[]), "(none)\n");
    }

    #[test]
    fn cells_show_strings_bare_lists_joined_and_nulls_as_a_dash() {
        let v = serde_json::json!({"a": "x", "b": null, "c": ["m", "n"], "d": 3});
        assert_eq!(cell(&v, "a"), "x");
        assert_eq!(cell(&v, "b"), "-");
        assert_eq!(cell(&v, "c"), "m,n");
        assert_eq!(cell(&v, "d"), "3");
        assert_eq!(cell(&v, "missing"), "-");
    }
}
