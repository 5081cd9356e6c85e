//! A progress bar on stderr for long runs (generating a 50,000-node cluster takes seconds). It
//! draws only when stderr is a terminal, so logs and pipes stay clean.

use std::io::{IsTerminal, Write};

const WIDTH: u64 = 30;

/// Counts work done out of a known total and redraws when the percentage changes.
#[derive(Debug)]
pub struct Progress {
    label: String,
    total: u64,
    done: u64,
    shown: Option<u64>,
    draw: bool,
}

impl Progress {
    /// A bar for `total` units of work, drawn when stderr is a terminal.
    pub fn new(label: impl Into<String>, total: u64) -> Progress {
        Progress::with_drawing(label, total, std::io::stderr().is_terminal())
    }

    fn with_drawing(label: impl Into<String>, total: u64, draw: bool) -> Progress {
        Progress {
            label: label.into(),
            total: total.max(1),
            done: 0,
            shown: None,
            draw,
        }
    }

    /// Adds `n` units done.
    pub fn add(&mut self, n: u64) {
        self.done = (self.done + n).min(self.total);
        let percent = self.done * 100 / self.total;
        if self.draw && self.shown != Some(percent) {
            self.shown = Some(percent);
            // A progress bar that cannot be drawn is not worth failing the run for.
            let _ = write!(std::io::stderr(), "\r{}", self.line());
        }
    }

    /// Erases the bar.
    pub fn finish(self) {
        if self.draw {
            let blank = " ".repeat(self.line().len());
            let _ = write!(std::io::stderr(), "\r{blank}\r");
        }
    }

    fn line(&self) -> String {
        let filled = self.done * WIDTH / self.total;
        format!(
            "{} [{}{}] {:>3}% {}/{}",
            self.label,
            "#".repeat(filled as usize),
            ".".repeat((WIDTH - filled) as usize),
            self.done * 100 / self.total,
            self.done,
            self.total
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shows_the_fraction_done() {
        let mut p = Progress::with_drawing("gen", 200, false);
        p.add(50);
        assert_eq!(
            p.line(),
            format!("gen [{}{}]  25% 50/200", "#".repeat(7), ".".repeat(23))
        );
        p.add(1_000);
        assert!(
            p.line().ends_with("100% 200/200"),
            "done is capped at the total"
        );
    }
}
