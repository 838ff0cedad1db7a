//! A report page opened in headless Chromium (Debian's `chromium`, which
//! scripts/install-deps.sh installs): its DOM after loading, what it
//! logged, a screenshot; and the checks every report page must pass.

use std::path::Path;
use std::process::Command;

/// Chromium's view of a page: the DOM after loading, what it logged, and
/// the screenshot's size in bytes.
pub struct Opened {
    pub dom: String,
    pub log: String,
    pub screenshot: u64,
}

pub fn open(html: &Path, work: &Path) -> Opened {
    let profile = work.join("chromium-profile");
    let url = format!("file://{}", html.canonicalize().unwrap().display());
    let common = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0"];
    let run = |extra: &[String]| {
        let out = Command::new("chromium")
            .args(common)
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(extra)
            .arg(&url)
            .output()
            .expect("chromium runs");
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (dom, log1) = run(&["--dump-dom".into()]);
    let shot = work.join("screenshot.png");
    let (_, log2) = run(&[format!("--screenshot={}", shot.display()), "--window-size=1100,3000".into()]);
    let screenshot = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    Opened { dom, log: log1 + &log2, screenshot }
}

/// Checks every report must pass; returns the figures' ids.
pub fn check(html: &Path, work: &Path, must: &[&str]) -> Vec<String> {
    let text = std::fs::read_to_string(html).unwrap();
    assert!(text.len() < 3 << 20, "{} bytes", text.len());
    // Nothing loaded from elsewhere (a URL in the text, a step's command, is no resource).
    for outside in ["src=\"http", "href=\"http", "url(http", "<script", "<link", "@import"] {
        assert!(!text.contains(outside), "self-contained: found {outside}");
    }
    let o = open(html, work);
    assert!(o.dom.contains("</html>"), "chromium loaded the page: {}", o.log);
    for bad in ["CONSOLE", "Uncaught", "Failed to load"] {
        assert!(!o.log.lines().any(|l| l.contains(bad) && !l.contains("dbus")), "{bad} in chromium's log:\n{}", o.log);
    }
    assert!(o.screenshot > 20_000, "a screenshot of a drawn page ({} bytes)", o.screenshot);
    let figures: Vec<&str> = o.dom.split("<figure class=\"chart\"").skip(1).collect();
    let ids: Vec<String> =
        figures.iter().map(|f| f.split("id=\"").nth(1).unwrap_or("").split('"').next().unwrap_or("").to_string()).collect();
    for f in &figures {
        let body = f.split("</figure>").next().unwrap_or("");
        let drawn = ["<polyline", "<rect", "<circle", "<path"].iter().map(|t| body.matches(t).count()).sum::<usize>();
        assert!(body.contains("<svg") && drawn > 3, "an empty chart: {}", &body[..body.len().min(200)]);
    }
    for m in must {
        assert!(ids.iter().any(|i| i.contains(m)), "chart {m} missing; have {ids:?}");
    }
    let missing: String = o.dom.split("class=\"missing\"").nth(1).unwrap_or("").chars().take(200).collect();
    assert!(missing.is_empty(), "a chart could not be drawn: {missing}");
    ids
}

pub fn chromium() -> bool {
    if super::have("chromium") {
        return true;
    }
    assert!(std::env::var_os("CI").is_none(), "chromium is missing in CI: scripts/install-deps.sh installs it");
    eprintln!("SKIP: chromium is not installed (apt-get install chromium)");
    false
}
