//! The HTML around the charts: one page, its style inline, no script and no
//! outside resource, so it opens offline (from a mail attachment) and looks
//! the same everywhere.

use crate::Chart;

const STYLE: &str = "
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1000px; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin-top: 1.2em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; }
td.text, th.text { text-align: left; }
.warnings { background: #fff4e5; border-left: 4px solid #e69f00; padding: 0.4em 1em; }
.warnings li { margin: 0.2em 0; }
.warnings summary { cursor: pointer; margin: 0.3em 0; }
.notes { color: #555; }
figure.chart { margin: 0.8em 0; }
figure.chart figcaption { font-size: 0.85em; color: #555; }
.missing { color: #a00; }
.subtitle { color: #555; margin-top: 0; }
.side { display: flex; flex-wrap: wrap; gap: 0.5em; }
.side figure.chart { flex: 1 1 48%; min-width: 0; max-width: 50%; }
.side figure.chart svg { width: 100%; height: auto; }
";

/// The page being built: sections of HTML, in order.
pub struct Page {
    title: String,
    subtitle: String,
    body: String,
}

impl Page {
    pub fn new(title: &str, subtitle: &str) -> Page {
        Page { title: title.into(), subtitle: subtitle.into(), body: String::new() }
    }

    pub fn h2(&mut self, text: &str) {
        self.body += &format!("<h2>{}</h2>\n", esc(text));
    }

    pub fn h3(&mut self, text: &str) {
        self.body += &format!("<h3>{}</h3>\n", esc(text));
    }

    pub fn para(&mut self, text: &str, class: &str) {
        self.body += &format!("<p class=\"{class}\">{}</p>\n", esc(text));
    }

    /// A heading others can link to (a study's question).
    pub fn h2_id(&mut self, text: &str, id: &str) {
        self.body += &format!("<h2 id=\"{}\">{}</h2>\n", esc(id), esc(text));
    }

    /// A study's answers: one item per question, its title in bold and its
    /// answers after it.
    pub fn answers(&mut self, items: &[(String, Vec<String>)]) {
        self.body += "<div id=\"answers\"><h2>Answers</h2><ul>\n";
        for (title, answers) in items {
            self.body += &format!("<li><strong>{}</strong>: {}</li>\n", esc(title), esc(&answers.join("; ")));
        }
        self.body += "</ul></div>\n";
    }

    /// Lines folded under a summary (a step's warnings).
    pub fn details(&mut self, summary: &str, items: &[String]) {
        self.body += &format!("<details class=\"warnings\"><summary>{}</summary><ul>\n", esc(summary));
        for w in items {
            self.body += &format!("<li>{}</li>\n", esc(w));
        }
        self.body += "</ul></details>\n";
    }

    /// Warnings first and impossible to miss.
    pub fn warnings(&mut self, items: &[String]) {
        if items.is_empty() {
            return;
        }
        self.body += "<div class=\"warnings\" id=\"warnings\"><strong>Warnings</strong><ul>\n";
        for w in items {
            self.body += &format!("<li>{}</li>\n", esc(w));
        }
        self.body += "</ul></div>\n";
    }

    /// Warnings of several sections (a comparison's sides), each folded
    /// under a line with its count: dozens of them no longer push the
    /// report's answers off the first screen, and none is hidden.
    pub fn folded_warnings(&mut self, sections: &[(String, Vec<String>)]) {
        let total: usize = sections.iter().map(|s| s.1.len()).sum();
        if total == 0 {
            return;
        }
        self.body += &format!("<div class=\"warnings\" id=\"warnings\"><strong>Warnings: {total}</strong>\n");
        for (name, items) in sections.iter().filter(|s| !s.1.is_empty()) {
            let n = items.len();
            self.body += &format!("<details><summary>{}: {n} warning{}</summary><ul>\n", esc(name), if n == 1 { "" } else { "s" });
            for w in items {
                self.body += &format!("<li>{}</li>\n", esc(w));
            }
            self.body += "</ul></details>\n";
        }
        self.body += "</div>\n";
    }

    /// A table; the first `text_cols` columns are left-aligned words.
    pub fn table(&mut self, id: &str, head: &[String], rows: &[Vec<String>], text_cols: usize) {
        let cell = |tag: &str, i: usize, s: &str| {
            let class = if i < text_cols { " class=\"text\"" } else { "" };
            format!("<{tag}{class}>{}</{tag}>", esc(s))
        };
        self.body += &format!("<table id=\"{}\">\n<tr>", esc(id));
        self.body += &head.iter().enumerate().map(|(i, h)| cell("th", i, h)).collect::<String>();
        self.body += "</tr>\n";
        for r in rows {
            self.body += "<tr>";
            self.body += &r.iter().enumerate().map(|(i, c)| cell("td", i, c)).collect::<String>();
            self.body += "</tr>\n";
        }
        self.body += "</table>\n";
    }

    /// A chart, or a line saying why it is missing.
    pub fn chart(&mut self, c: &Chart) {
        match &c.svg {
            Ok(svg) => {
                self.body += &format!(
                    "<figure class=\"chart\" id=\"{}\" data-chart=\"{}\">{svg}<figcaption>{}</figcaption></figure>\n",
                    esc(&c.name),
                    esc(&c.name),
                    esc(&c.title)
                )
            }
            Err(why) => self.body += &format!("<p class=\"missing\">{}: {}</p>\n", esc(&c.title), esc(why)),
        }
    }

    /// Charts next to each other, each scaled to its share of the width (a
    /// study's grids, one per configuration, read across).
    pub fn side_by_side(&mut self, charts: &[&Chart]) {
        self.body += "<div class=\"side\">\n";
        for c in charts {
            self.chart(c);
        }
        self.body += "</div>\n";
    }

    pub fn render(self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"generator\" content=\"storbench {}\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n<h1>{}</h1>\n\
             <p class=\"subtitle\">{}</p>\n{}</body></html>\n",
            env!("CARGO_PKG_VERSION"),
            esc(&self.title),
            esc(&self.title),
            esc(&self.subtitle),
            self.body
        )
    }
}

/// Text for HTML.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&#39;",
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
        let mut p = Page::new("t<", "s");
        p.table("x", &["a".into()], &[vec!["<script>".into()]], 1);
        let html = p.render();
        assert!(!html.contains("<script>") && html.contains("&lt;script&gt;"));
    }
}
