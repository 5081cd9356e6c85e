//! Flamegraphs (inferno's SVG) of sample tables. The stacks of every thread are drawn
//! together: a phase's work is spread over the scheduling pool's threads.

use std::fmt::Write;

use pprof::flamegraph::Options;

use super::samples::{Stacks, total};

/// An SVG flamegraph of `stacks` titled `title`; a table without samples gives a small SVG
/// that says so.
pub fn flamegraph_svg(title: &str, stacks: &Stacks) -> String {
    if total(stacks) <= 0 {
        return empty_svg(title);
    }
    let lines: Vec<String> = stacks
        .iter()
        .filter(|(_, count)| **count > 0)
        .map(|(frames, count)| {
            let mut line = String::new();
            for frame in frames.frames.iter().rev() {
                for symbol in frame.iter().rev() {
                    if !line.is_empty() {
                        line.push(';');
                    }
                    line.push_str(&symbol.name().replace(';', ":"));
                }
            }
            if line.is_empty() {
                line.push_str("[unknown]");
            }
            let _ = write!(line, " {count}");
            line
        })
        .collect();
    let mut options = Options::default();
    options.title = title.to_string();
    options.count_name = "samples".to_string();
    options.hash = true;
    let mut svg = Vec::new();
    match pprof::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg) {
        Ok(()) => String::from_utf8_lossy(&svg).into_owned(),
        Err(e) => error_svg(title, &format!("cannot draw the flamegraph: {e}")),
    }
}

fn empty_svg(title: &str) -> String {
    error_svg(title, "no samples: the profiler saw no CPU time here")
}

/// A one-line SVG that carries a message instead of a graph.
fn error_svg(title: &str, message: &str) -> String {
    format!(
        "<?xml version=\"1.0\" standalone=\"no\"?>\n\
         <svg version=\"1.1\" width=\"1200\" height=\"60\" xmlns=\"http://www.w3.org/2000/svg\">\
         <text x=\"10\" y=\"24\" font-family=\"Verdana\" font-size=\"17\">{}</text>\
         <text x=\"10\" y=\"48\" font-family=\"Verdana\" font-size=\"12\">{}</text></svg>\n",
        xml_escape(title),
        xml_escape(message)
    )
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use pprof::{Frames, Symbol};

    use super::*;

    fn symbol(name: &str) -> Symbol {
        Symbol {
            name: Some(name.as_bytes().to_vec()),
            addr: None,
            lineno: None,
            filename: None,
        }
    }

    fn stack(names: &[&str]) -> Frames {
        Frames {
            frames: names.iter().map(|n| vec![symbol(n)]).collect(),
            thread_name: "t".into(),
            thread_id: 1,
            sample_timestamp: SystemTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn a_flamegraph_draws_every_function_of_the_stacks() {
        let mut stacks = Stacks::new();
        stacks.insert(stack(&["leaf_fn", "caller_fn", "main"]), 3);
        stacks.insert(stack(&["other_leaf", "main"]), 1);
        let svg = flamegraph_svg("allocate <2 cycles>", &stacks);
        assert!(svg.contains("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
        for name in ["leaf_fn", "caller_fn", "other_leaf", "main"] {
            assert!(svg.contains(name), "{name} missing");
        }
        assert!(svg.contains("allocate &lt;2 cycles&gt;"));
    }

    #[test]
    fn a_table_without_samples_gives_an_svg_that_says_so() {
        let svg = flamegraph_svg("close", &Stacks::new());
        assert!(
            svg.starts_with("<?xml") && svg.contains("no samples"),
            "{svg}"
        );
        assert!(svg.contains(">close<"));
    }
}
