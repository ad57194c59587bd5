//! Progress reporting for `orogen bake`: indicatif bars on a terminal, throttled
//! plain lines (`[1/3] StreamPower 40%`) otherwise.

use std::io::Write;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use orogen_core::Event;

/// Shortest gap between two plain progress lines of one stage.
const PLAIN_INTERVAL: Duration = Duration::from_millis(500);
/// Bar resolution: positions per stage.
const BAR_LEN: u64 = 1000;

/// Turns runner events into bars or lines on stderr.
pub enum Reporter {
    /// Interactive: one bar per stage.
    Bars {
        multi: MultiProgress,
        current: Option<ProgressBar>,
        stage_count: usize,
    },
    /// Plain lines, at most one per [`PLAIN_INTERVAL`] per stage.
    Lines {
        last: Option<Instant>,
        stage_count: usize,
    },
    /// Nothing at all (`--quiet`).
    Silent,
}

impl Reporter {
    /// Bars when `terminal`, plain lines otherwise.
    pub fn new(terminal: bool, quiet: bool) -> Self {
        if quiet {
            Reporter::Silent
        } else if terminal {
            Reporter::Bars {
                multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(10)),
                current: None,
                stage_count: 0,
            }
        } else {
            Reporter::Lines {
                last: None,
                stage_count: 0,
            }
        }
    }

    /// Handles one runner event.
    pub fn event(&mut self, event: Event<'_>) {
        match self {
            Reporter::Silent => {}
            Reporter::Bars {
                multi,
                current,
                stage_count,
            } => match event {
                Event::StageStarted {
                    index,
                    name,
                    stage_count: n,
                } => {
                    *stage_count = n;
                    let bar = multi.add(ProgressBar::new(BAR_LEN));
                    let style = ProgressStyle::with_template(
                        "{prefix:>18} [{bar:32.cyan/blue}] {percent:>3}% {msg} ({elapsed})",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> ");
                    bar.set_style(style);
                    bar.set_prefix(format!("[{}/{}] {}", index + 1, n, name));
                    *current = Some(bar);
                }
                Event::Progress {
                    fraction,
                    iteration,
                    ..
                } => {
                    if let Some(bar) = current {
                        bar.set_position((fraction as f64 * BAR_LEN as f64).round() as u64);
                        bar.set_message(format!("iteration {iteration}"));
                    }
                }
                Event::StageFinished { seconds, .. } => {
                    if let Some(bar) = current.take() {
                        bar.set_position(BAR_LEN);
                        bar.finish_with_message(format!("done in {seconds:.2} s"));
                    }
                }
                Event::Step { .. } => {}
                Event::Setup { name, fraction } => {
                    if current.is_none() {
                        let bar = multi.add(ProgressBar::new(BAR_LEN));
                        let style = ProgressStyle::with_template(
                            "{prefix:>18} [{bar:32.cyan/blue}] {percent:>3}% ({elapsed})",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> ");
                        bar.set_style(style);
                        bar.set_prefix(name.to_string());
                        *current = Some(bar);
                    }
                    if let Some(bar) = current {
                        bar.set_position((fraction as f64 * BAR_LEN as f64).round() as u64);
                        if fraction >= 1.0 {
                            bar.finish();
                            *current = None;
                        }
                    }
                }
            },
            Reporter::Lines { last, stage_count } => {
                let mut err = std::io::stderr().lock();
                match event {
                    Event::StageStarted {
                        index,
                        name,
                        stage_count: n,
                    } => {
                        *stage_count = n;
                        *last = Some(Instant::now());
                        let _ = writeln!(err, "[{}/{}] {} started", index + 1, n, name);
                    }
                    Event::Progress {
                        index,
                        name,
                        fraction,
                        iteration,
                    } => {
                        let due = last.is_none_or(|t| t.elapsed() >= PLAIN_INTERVAL);
                        if due {
                            *last = Some(Instant::now());
                            let _ = writeln!(
                                err,
                                "[{}/{}] {} {:.0}% (iteration {})",
                                index + 1,
                                stage_count,
                                name,
                                fraction * 100.0,
                                iteration
                            );
                        }
                    }
                    Event::StageFinished {
                        index,
                        name,
                        seconds,
                    } => {
                        let _ = writeln!(
                            err,
                            "[{}/{}] {} done in {:.2} s",
                            index + 1,
                            stage_count,
                            name,
                            seconds
                        );
                    }
                    Event::Step { .. } => {}
                    Event::Setup { name, fraction } => {
                        let due =
                            fraction >= 1.0 || last.is_none_or(|t| t.elapsed() >= PLAIN_INTERVAL);
                        if due {
                            *last = Some(Instant::now());
                            let _ = writeln!(err, "{name} {:.0}%", fraction * 100.0);
                        }
                    }
                }
            }
        }
    }

    /// Removes any unfinished bar (after an error or a cancel).
    pub fn abandon(&mut self) {
        if let Reporter::Bars { current, .. } = self {
            if let Some(bar) = current.take() {
                bar.abandon();
            }
        }
    }
}
