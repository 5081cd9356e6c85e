//! The dashboard as one self-contained HTML page: the style, the chart specs as JSON, Chart.js
//! and the page's own script all inline, so the page needs no network and opens from
//! `file://`.

use std::fmt::Write;

use super::charts::{Section, sections};
use crate::history::{BenchRecord, History, Spread};

const STYLE: &str = include_str!("page.css");
const CHART_JS: &str = include_str!("vendor/chart.umd.js");
const SCRIPT: &str = include_str!("page.js");

/// The page of `history`.
pub fn render(history: &History) -> String {
    let sections = sections(history);
    let mut body = String::new();
    body.push_str("<h1>tephra benchmark history</h1>\n");
    let _ = writeln!(body, "<p class=\"meta\">{}</p>", escape(&describe(history)));
    body.push_str(&latest_table(&history.bench));
    for s in &sections {
        body.push_str(&section_html(s));
    }
    let data = serde_json::to_string(&sections)
        .expect("chart specs are plain data")
        .replace("</", "<\\/");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>tephra benchmark history</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         {body}<pre id=\"dashboard-summary\"></pre>\n\
         <script id=\"dashboard-data\" type=\"application/json\">{data}</script>\n\
         <script>\n{CHART_JS}\n</script>\n<script>\n{SCRIPT}</script>\n</body>\n</html>\n"
    )
}

/// How many records of each kind, and the machine of the newest bench record.
fn describe(history: &History) -> String {
    let mut text = format!(
        "{} bench, {} e2e and {} peer records",
        history.bench.len(),
        history.e2e.len(),
        history.peer.len()
    );
    if let Some(r) = history.bench.last() {
        let m = &r.provenance.machine;
        let _ = write!(
            text,
            "; newest bench record {} on {} cores",
            r.provenance.date, m.nproc
        );
        if let Some(cpu) = &m.cpu_model {
            let _ = write!(text, " ({cpu})");
        }
        if let Some(bytes) = m.memory_bytes {
            let _ = write!(text, ", {:.0} GiB", bytes as f64 / f64::from(1 << 30));
        }
    }
    text.push_str(". Commits marked * were measured with uncommitted changes.");
    text
}

/// The newest record of each workload as a table.
fn latest_table(bench: &[BenchRecord]) -> String {
    let mut workloads: Vec<&str> = Vec::new();
    for r in bench.iter().rev() {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    if workloads.is_empty() {
        return String::new();
    }
    workloads.reverse();
    let mut html = String::from(
        "<h2>Newest figures</h2>\n<table>\n<tr><th>workload</th><th>commit</th><th>threads × runs</th>\
         <th>first cycle ms</th><th>steady cycle ms</th><th>first cycle placements/s</th>\
         <th>peak RSS MiB</th></tr>\n",
    );
    for w in workloads {
        let Some(r) = bench.iter().rev().find(|r| r.workload == w) else {
            continue;
        };
        let mib = |s: Spread| Spread {
            median: s.median / f64::from(1 << 20),
            min: s.min / f64::from(1 << 20),
            max: s.max / f64::from(1 << 20),
            n: s.n,
        };
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}{}</td><td>{} × {}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td></tr>",
            escape(w),
            escape(&r.provenance.commit),
            if r.provenance.dirty { "*" } else { "" },
            r.threads,
            r.runs,
            spread(Some(r.first_cycle.total_ms)),
            spread(r.steady_cycle.as_ref().map(|c| c.total_ms)),
            r.first_cycle.placements_per_s.median,
            spread(r.peak_rss_bytes.map(mib)),
        );
    }
    html.push_str("</table>\n");
    html
}

/// `median (min–max)`, or a dash.
fn spread(s: Option<Spread>) -> String {
    s.map_or("–".into(), |s| {
        format!("{:.1} ({:.1}–{:.1})", s.median, s.min, s.max)
    })
}

fn section_html(s: &Section) -> String {
    let mut html = format!("<h2>{}</h2>\n", escape(&s.title));
    if let Some(note) = &s.note {
        let _ = writeln!(html, "<p class=\"note\">{}</p>", escape(note));
    }
    if !s.charts.is_empty() {
        html.push_str("<div class=\"charts\">\n");
        for c in &s.charts {
            let _ = writeln!(
                html,
                "<div class=\"chart\"><canvas id=\"{}\"></canvas></div>",
                escape(&c.id)
            );
        }
        html.push_str("</div>\n");
    }
    html
}

/// `text` safe inside HTML text and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
