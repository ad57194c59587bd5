//! Typed errors. Every message names the field, file or value at fault.

use std::path::PathBuf;

/// Everything that can go wrong in Orogen's core.
#[derive(Debug, thiserror::Error)]
pub enum OrogenError {
    /// A recipe could not be parsed (RON syntax, unknown or mistyped field).
    #[error(
        "recipe {}: {} (line {line}, column {column})",
        shorten_path(.origin),
        shorten_quoted(.message)
    )]
    RecipeSyntax {
        origin: String,
        message: String,
        line: usize,
        column: usize,
    },
    /// A recipe parsed but a value is out of its allowed range.
    #[error("invalid value for `{}`: {}", shorten_path(.field), shorten_quoted(.reason))]
    InvalidParameter { field: String, reason: String },
    /// A `--set PATH=VALUE` override could not be applied.
    #[error("cannot apply override `{}`: {}", shorten(.path), shorten_quoted(.reason))]
    Override { path: String, reason: String },
    /// A file could not be read or written.
    #[error("{action} `{}`: {source}", shorten_path(&.path.to_string_lossy()))]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file was read but its content is not usable (format, size, channels).
    #[error("`{}`: {}", shorten_path(&.path.to_string_lossy()), shorten_quoted(.reason))]
    BadFile { path: PathBuf, reason: String },
    /// Two maps that must share a shape do not.
    #[error(
        "shape mismatch for `{}`: expected {expected_w}x{expected_h}, got {got_w}x{got_h}",
        shorten_path(.what)
    )]
    ShapeMismatch {
        what: String,
        expected_w: usize,
        expected_h: usize,
        got_w: usize,
        got_h: usize,
    },
    /// A numerical scheme failed (for example a Newton iteration that did not converge).
    #[error("`{}`: {}", shorten_path(.field), shorten_quoted(.reason))]
    Numerical { field: String, reason: String },
    /// The run was cancelled through its cancel flag.
    #[error("cancelled")]
    Cancelled,
}

impl OrogenError {
    /// Shorthand for [`OrogenError::InvalidParameter`].
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        OrogenError::InvalidParameter {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// Shorthand for [`OrogenError::Io`].
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        OrogenError::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// The error with its field placed under `prefix`: a process names its own fields
    /// (`n`, `dt`, or nothing for the process itself) and the stage running it adds where
    /// it sits in the recipe (`stages[2].StreamPower`).
    pub fn in_field(self, prefix: &str) -> Self {
        let place = |field: String| {
            if field.is_empty() {
                prefix.to_string()
            } else if field.starts_with(prefix) {
                field
            } else {
                format!("{prefix}.{field}")
            }
        };
        match self {
            OrogenError::Numerical { field, reason } => OrogenError::Numerical {
                field: place(field),
                reason,
            },
            other => other,
        }
    }

    /// Shorthand for [`OrogenError::BadFile`].
    pub fn bad_file(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        OrogenError::BadFile {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

/// Result alias used across the core.
pub type Result<T> = std::result::Result<T, OrogenError>;

/// `value` for a message: plain between 1e-4 and 1e7, in exponent form beyond (Rust's
/// `Display` writes f64::MAX as 309 digits: a 394-byte message, fuzz finding #39.8).
/// A value that came from an f32 is written as that f32 (`1e-30`, not
/// `1.0000000031710769e-30`).
pub fn fmt_num(value: f64) -> String {
    let a = value.abs();
    let plain = a == 0.0 || !a.is_finite() || (1e-4..1e7).contains(&a);
    let single = value as f32;
    match (plain, single as f64 == value) {
        (true, true) => format!("{single}"),
        (true, false) => format!("{value}"),
        (false, true) => format!("{single:e}"),
        (false, false) => format!("{value:e}"),
    }
}

/// Checks that `value` is finite; names `field` otherwise.
pub fn check_finite(field: &str, value: f64) -> Result<()> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(OrogenError::invalid(
            field,
            format!("must be a finite number, got {}", fmt_num(value)),
        ))
    }
}

/// Checks that `value` is finite and strictly positive.
pub fn check_positive(field: &str, value: f64) -> Result<()> {
    check_finite(field, value)?;
    if value > 0.0 {
        Ok(())
    } else {
        Err(OrogenError::invalid(
            field,
            format!("must be > 0, got {}", fmt_num(value)),
        ))
    }
}

/// Checks that `value` is finite and within `[lo, hi]`.
pub fn check_range(field: &str, value: f64, lo: f64, hi: f64) -> Result<()> {
    check_finite(field, value)?;
    if value >= lo && value <= hi {
        Ok(())
    } else {
        Err(OrogenError::invalid(
            field,
            format!(
                "must be within [{}, {}], got {}",
                fmt_num(lo),
                fmt_num(hi),
                fmt_num(value)
            ),
        ))
    }
}

/// Checks that a count is within `1..=max` (iterations, octaves, …).
pub fn check_count(field: &str, value: u32, max: u32) -> Result<()> {
    if value == 0 || value > max {
        Err(OrogenError::invalid(
            field,
            format!("must be between 1 and {max}, got {value}"),
        ))
    } else {
        Ok(())
    }
}

/// The name of `sub` under `field` (`stages[1].Wind.fall_angle_deg`), or `sub` alone when
/// `field` is empty (a process validated on its own).
pub fn sub_field(field: &str, sub: &str) -> String {
    if field.is_empty() {
        sub.to_string()
    } else {
        format!("{field}.{sub}")
    }
}

/// Most characters of user text (a name, a value, a path) quoted in an error message.
pub const MAX_QUOTED_CHARS: usize = 40;

/// `text` cut to its first [`MAX_QUOTED_CHARS`] characters for an error message, with
/// `…(N bytes)` giving the full length, so a 10 MB name still gives a one-line error.
pub fn shorten(text: &str) -> String {
    let bytes = text.len();
    let text = escape_controls(text);
    // Already cut (a message quoting a shortened name is shortened again when shown).
    if text.ends_with(" bytes)")
        && text.contains('…')
        && text.chars().count() <= MAX_QUOTED_CHARS + 24
    {
        return text.into_owned();
    }
    match text.char_indices().nth(MAX_QUOTED_CHARS) {
        None => text.into_owned(),
        Some((cut, _)) => format!("{}…({bytes} bytes)", &text[..cut]),
    }
}

/// `text` with its control characters (a newline, a tab, …) written as escapes (`\n`), so
/// user text quoted in an error keeps the message on one line (a heightmap path holding a
/// newline gave a message of 21 lines: fuzz finding #39, second run).
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Most characters of a file path or a field path (`stages[2].Thermal.talus.min_deg`) in
/// an error message.
pub const MAX_PATH_CHARS: usize = 120;

/// A path cut to [`MAX_PATH_CHARS`] keeping its start and its end (the file or field name):
/// `/home/me/terr…/dem.png (N bytes)`.
pub fn shorten_path(text: &str) -> String {
    let bytes = text.len();
    let text = escape_controls(text);
    let count = text.chars().count();
    if count <= MAX_PATH_CHARS {
        return text.into_owned();
    }
    let half = MAX_PATH_CHARS / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(count - half).collect();
    format!("{head}…{tail} ({bytes} bytes)")
}

/// `message` with every quoted part (between backticks or double quotes) cut by
/// [`shorten`]; an unclosed quote runs to the end. Messages from parsers (RON, serde) quote
/// the name or value at fault, which can be as long as the input.
pub fn shorten_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(1024));
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest[open..].chars().next().expect("found");
        out.push_str(&rest[..open + 1]);
        let body = &rest[open + 1..];
        // A double-quoted string may escape its quote (`"a\"b"`).
        let mut close = None;
        let mut escaped = false;
        for (i, c) in body.char_indices() {
            if c == quote && !escaped {
                close = Some(i);
                break;
            }
            escaped = quote == '"' && c == '\\' && !escaped;
        }
        let end = close.unwrap_or(body.len());
        out.push_str(&shorten(&body[..end]));
        match close {
            Some(i) => {
                out.push(quote);
                rest = &body[i + 1..];
            }
            None => rest = "",
        }
    }
    out.push_str(rest);
    // A quote character inside user text ends its quoting early and leaves the rest of it
    // outside any quotes: its control characters are escaped too, so the message stays one
    // line (fuzz finding #39, second run: a path holding a backtick, then newlines).
    let out = escape_controls(&out).into_owned();
    // Quote characters inside user text can leave long stretches outside any quotes.
    match out.char_indices().nth(MAX_MESSAGE_CHARS) {
        None => out,
        Some((cut, _)) => format!("{}…({} bytes)", &out[..cut], message.len()),
    }
}

/// Most characters of a message passed through [`shorten_quoted`].
pub const MAX_MESSAGE_CHARS: usize = 500;
