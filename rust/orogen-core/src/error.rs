//! Typed errors. Every message names the field, file or value at fault.

use std::path::PathBuf;

/// Everything that can go wrong in Orogen's core.
#[derive(Debug, thiserror::Error)]
pub enum OrogenError {
    /// A recipe could not be parsed (RON syntax, unknown or mistyped field).
    #[error("recipe {origin}: {message} (line {line}, column {column})")]
    RecipeSyntax {
        origin: String,
        message: String,
        line: usize,
        column: usize,
    },
    /// A recipe parsed but a value is out of its allowed range.
    #[error("invalid value for `{field}`: {reason}")]
    InvalidParameter { field: String, reason: String },
    /// A `--set PATH=VALUE` override could not be applied.
    #[error("cannot apply override `{path}`: {reason}")]
    Override { path: String, reason: String },
    /// A file could not be read or written.
    #[error("{action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file was read but its content is not usable (format, size, channels).
    #[error("`{path}`: {reason}")]
    BadFile { path: PathBuf, reason: String },
    /// Two maps that must share a shape do not.
    #[error(
        "shape mismatch for `{what}`: expected {expected_w}x{expected_h}, got {got_w}x{got_h}"
    )]
    ShapeMismatch {
        what: String,
        expected_w: usize,
        expected_h: usize,
        got_w: usize,
        got_h: usize,
    },
    /// A numerical scheme failed (for example a Newton iteration that did not converge).
    #[error("`{field}`: {reason}")]
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

/// Checks that `value` is finite; names `field` otherwise.
pub fn check_finite(field: &str, value: f64) -> Result<()> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(OrogenError::invalid(
            field,
            format!("must be a finite number, got {value}"),
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
            format!("must be > 0, got {value}"),
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
            format!("must be within [{lo}, {hi}], got {value}"),
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

/// `text` cut to at most 80 characters for an error message (`…` marks a cut).
pub fn shorten(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(MAX).collect();
        s.push('…');
        s
    }
}
