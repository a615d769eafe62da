//! The README's shell walkthroughs read as test steps: the code blocks of a
//! section, each command with the expectation its trailing comment states.
//!
//! The comment conventions (kept by README.md, checked by `e2e/readme.rs`):
//! - `# 201 …`: a leading three-digit number is the status the command's
//!   answer must have; without one, any 2xx. A snake_case word after it
//!   (`# 502 network_error`) is the error code the answer must carry.
//! - `# {…}`: a sketch of the answer. Each `key`, `"key": …` or `key: …`
//!   in it names a field the answer must have; a value that is a number or a
//!   quoted string (without `…`) must be the field's value.
//! - `<job-id>` in a command stands for the `job_id` of the newest earlier
//!   answer that has one.

/// One command of a walkthrough, with what its comment expects.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The line number in the file, for messages.
    pub line: usize,
    /// The command as written (continuation lines joined).
    pub command: String,
    /// The trailing comment, without the `#`.
    pub comment: String,
}

/// What a step's comment says its answer must be.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Expectation {
    /// The exact status, when the comment names one.
    pub status: Option<u16>,
    /// The error code, when the comment names one.
    pub error_code: Option<String>,
    /// Fields the answer must have, each with the value it must have when
    /// the comment gives one.
    pub fields: Vec<(String, Option<serde_json::Value>)>,
}

/// The body of the section `## <title>` (up to the next `## ` heading).
pub fn section<'a>(readme: &'a str, title: &str) -> &'a str {
    let heading = format!("## {title}\n");
    let start = readme
        .find(&heading)
        .unwrap_or_else(|| panic!("README.md has no section `## {title}`"))
        + heading.len();
    let rest = &readme[start..];
    let end = rest.find("\n## ").map_or(rest.len(), |i| i + 1);
    &rest[..end]
}

/// The commands of every ```sh block in `text`, whose first line is line
/// `first_line` of the file.
pub fn steps(text: &str, first_line: usize) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut in_block = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = first_line + i;
        let line = raw.trim_end();
        if line.trim_start().starts_with("```") {
            in_block = !in_block && line.trim_start() == "```sh";
            continue;
        }
        if !in_block {
            continue;
        }
        let (start, mut joined) = pending.take().unwrap_or((line_no, String::new()));
        if let Some(head) = line.strip_suffix('\\') {
            joined.push_str(head.trim());
            joined.push(' ');
            pending = Some((start, joined));
            continue;
        }
        joined.push_str(line.trim_start());
        let (command, comment) = split_comment(&joined);
        if command.is_empty() {
            continue;
        }
        steps.push(Step {
            line: start,
            command,
            comment,
        });
    }
    steps
}

/// A shell line split at its comment: a `#` outside quotes that starts a word.
pub fn split_comment(line: &str) -> (String, String) {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => {
                return (line[..i].trim().to_owned(), line[i + 1..].trim().to_owned());
            }
            _ => {}
        }
        prev = c;
    }
    (line.trim().to_owned(), String::new())
}

impl Expectation {
    /// Reads a step's comment by the conventions above.
    pub fn parse(comment: &str) -> Expectation {
        let mut e = Expectation::default();
        let mut rest = comment.trim();
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if digits.len() == 3 && !rest[3..].starts_with(|c: char| c.is_alphanumeric()) {
            e.status = digits.parse().ok();
            rest = rest[3..].trim_start();
            let word: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if word.contains('_') {
                e.error_code = Some(word);
            }
        }
        if let (Some(open), Some(close)) = (rest.find('{'), rest.rfind('}')) {
            e.fields = sketch_fields(&rest[open + 1..close]);
        }
        e
    }
}

/// The fields of an answer sketch's inside: `a, "b": 1, c: "x"`.
fn sketch_fields(inside: &str) -> Vec<(String, Option<serde_json::Value>)> {
    let mut items = Vec::new();
    let (mut depth, mut quoted, mut start) = (0, false, 0);
    for (i, c) in inside.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '{' | '[' if !quoted => depth += 1,
            '}' | ']' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                items.push(&inside[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inside[start..]);
    items
        .into_iter()
        .filter_map(|item| {
            let (key, value) = match item.split_once(':') {
                Some((k, v)) => (k, Some(v.trim())),
                None => (item, None),
            };
            let key = key.trim().trim_matches('"');
            if key.is_empty()
                || !key
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                return None;
            }
            let value = value
                .filter(|v| !v.contains('…'))
                .and_then(|v| serde_json::from_str::<serde_json::Value>(v).ok())
                .filter(|v| v.is_string() || v.is_number() || v.is_boolean());
            Some((key.to_owned(), value))
        })
        .collect()
}

/// The placeholders (`<job-id>`) in a command, as the answer field each
/// stands for (`job_id`).
pub fn placeholders(command: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = command;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('>') else { break };
        let name = &after[..close];
        if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            out.push((format!("<{name}>"), name.replace('-', "_")));
        }
        rest = &after[close + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_comment_outside_quotes_is_split_off_and_one_inside_is_kept() {
        let (cmd, comment) = split_comment(r##"sb -d '{"a":"#x"}' $B/s   # 201 {id}"##);
        assert_eq!(cmd, r##"sb -d '{"a":"#x"}' $B/s"##);
        assert_eq!(comment, "201 {id}");
    }

    #[test]
    fn continuation_lines_join_into_one_step_with_its_first_line_number() {
        let text =
            "x\n```sh\n# only a comment\nsb -d '{}' \\\n   $B/x   # 201\necho hi\n```\nout\n";
        let steps = steps(text, 10);
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].line, 13);
        assert_eq!(steps[0].command, "sb -d '{}' $B/x");
        assert_eq!(steps[0].comment, "201");
        assert_eq!(steps[1].command, "echo hi");
    }

    #[test]
    fn a_status_an_error_code_and_a_sketch_are_read_from_a_comment() {
        let e = Expectation::parse(r#"201 {job_id, total: 2, status: "pending", "qr":"2@…"}"#);
        assert_eq!(e.status, Some(201));
        assert_eq!(e.error_code, None);
        assert_eq!(
            e.fields,
            vec![
                ("job_id".into(), None),
                ("total".into(), Some(json!(2))),
                ("status".into(), Some(json!("pending"))),
                ("qr".into(), None),
            ]
        );
        let e = Expectation::parse("502 network_error");
        assert_eq!(
            (e.status, e.error_code.as_deref()),
            (Some(502), Some("network_error"))
        );
        assert_eq!(
            Expectation::parse("what the network received"),
            Expectation::default()
        );
    }

    #[test]
    fn a_placeholder_names_the_field_it_stands_for() {
        assert_eq!(
            placeholders("sb $B/blasts/<job-id>/recipients"),
            vec![("<job-id>".to_owned(), "job_id".to_owned())]
        );
        assert!(placeholders("echo a < b > c").is_empty());
    }
}
