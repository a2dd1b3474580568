//! Helpers for the web view's tests: a plain HTTP/1 client (hyper) and a
//! headless Chromium that loads a page, dumps the DOM after its scripts ran,
//! reports JavaScript errors, and takes screenshots.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
}

/// A GET of `url` whose body is kept as bytes (a download).
pub async fn get_bytes(url: &str) -> (StatusCode, HeaderMap, Vec<u8>) {
    let uri: http::Uri = url.parse().expect("url");
    let authority = uri.authority().expect("host:port").to_string();
    let tcp = tokio::net::TcpStream::connect(&authority)
        .await
        .expect("connect to the web view");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .expect("http handshake");
    tokio::spawn(conn);
    let request = Request::builder()
        .method(Method::GET)
        .uri(uri.path_and_query().map_or("/", |p| p.as_str()))
        .header("host", &authority)
        .body(Full::new(Bytes::new()))
        .expect("request");
    let response = sender.send_request(request).await.expect("http request");
    let (status, headers) = (response.status(), response.headers().clone());
    let body = response
        .into_body()
        .collect()
        .await
        .expect("http body")
        .to_bytes();
    (status, headers, body.to_vec())
}

/// One request to `url` (`http://host:port/path`) on a fresh connection.
pub async fn request(method: Method, url: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    request_bytes(method, url, headers, body.as_bytes().to_vec()).await
}

/// [`request`] with a body of any bytes.
pub async fn request_bytes(
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Answer {
    let uri: http::Uri = url.parse().expect("url");
    let authority = uri.authority().expect("host:port").to_string();
    let tcp = tokio::net::TcpStream::connect(&authority)
        .await
        .expect("connect to the web view");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .expect("http handshake");
    tokio::spawn(conn);
    let mut builder = Request::builder()
        .method(method)
        .uri(uri.path_and_query().map_or("/", |p| p.as_str()))
        .header("host", &authority);
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    let request = builder.body(Full::new(Bytes::from(body))).expect("request");
    let response = sender.send_request(request).await.expect("http request");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("http body")
        .to_bytes();
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

pub async fn get(url: &str) -> Answer {
    request(Method::GET, url, &[], "").await
}

/// A form POST with `body` (`a=b&c=d`) and extra headers.
pub async fn post_form(url: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut all = vec![("content-type", "application/x-www-form-urlencoded")];
    all.extend_from_slice(headers);
    request(Method::POST, url, &all, body).await
}

/// The value of cookie `name` that `answer` sets.
pub fn set_cookie(answer: &Answer, name: &str) -> String {
    answer
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| c.split(';').next()?.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} cookie in {:?}", answer.headers))
        .to_owned()
}

/// The CSRF token of the first form of `body`.
pub fn form_csrf(body: &str) -> String {
    let needle = "name=\"csrf\" value=\"";
    let at = body.find(needle).expect("a form") + needle.len();
    body[at..].split('"').next().unwrap_or_default().to_owned()
}

/// A `multipart/form-data` POST: the text `fields` in order, then the file
/// field `file` (name, file name, bytes), with extra headers.
pub async fn post_multipart(
    url: &str,
    headers: &[(&str, &str)],
    fields: &[(&str, &str)],
    file: (&str, &str, &[u8]),
) -> Answer {
    const BOUNDARY: &str = "xq-test-boundary-7d0c";
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\ncontent-disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    let (name, file_name, bytes) = file;
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\ncontent-disposition: form-data; name=\"{name}\"; \
             filename=\"{file_name}\"\r\ncontent-type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let mut all = vec![("content-type", content_type.as_str())];
    all.extend_from_slice(headers);
    request_bytes(Method::POST, url, &all, body).await
}

/// Debian's Chromium binary, or a panic that says how to install it.
pub fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in ["/usr/bin", "/usr/local/bin", "/snap/bin"] {
            let path = Path::new(dir).join(name);
            if path.exists() {
                return path;
            }
        }
    }
    panic!(
        "no headless browser found: the web view's browser test needs Chromium \
         (Debian: `apt-get update && apt-get install -y chromium`; tests/run installs it)"
    );
}

/// What the browser saw of a page.
#[derive(Debug)]
pub struct Rendered {
    /// The DOM after the page's scripts ran.
    pub dom: String,
    /// Console lines that report an error (uncaught exceptions, failed scripts).
    pub js_errors: Vec<String>,
}

/// The flags of every headless Chromium the tests start (with the profile
/// folder's `--user-data-dir`).
pub const HEADLESS: [&str; 6] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--hide-scrollbars",
];

fn headless(profile: &Path) -> Command {
    let mut cmd = Command::new(chromium());
    cmd.args(HEADLESS)
        .args(["--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

fn run(mut cmd: Command) -> std::process::Output {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start chromium");
    let out = child.wait_with_output().expect("chromium output");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Loads `url`, lets it run for `budget` of virtual time (timers fire, so the
/// live script polls), and returns the DOM and the JavaScript errors.
pub fn render(url: &str, profile: &Path, budget: Duration) -> Rendered {
    let mut cmd = headless(profile);
    cmd.arg(format!("--virtual-time-budget={}", budget.as_millis()))
        .arg("--dump-dom")
        .arg(url);
    let out = run(cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let js_errors = stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .filter(|l| l.contains("Uncaught") || l.contains("Error") || l.contains("error"))
        .map(str::to_owned)
        .collect();
    Rendered {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        js_errors,
    }
}

/// Saves a PNG of `url` at `width`×`height` to `png`.
pub fn screenshot(url: &str, profile: &Path, png: &Path, (width, height): (u32, u32)) {
    let mut cmd = headless(profile);
    cmd.arg(format!("--window-size={width},{height}"))
        .arg("--virtual-time-budget=1000")
        .arg(format!("--screenshot={}", png.display()))
        .arg(url);
    run(cmd);
    assert!(
        png.exists(),
        "chromium wrote no screenshot to {}",
        png.display()
    );
}

/// The `data-value` of the first element with `data-key="key"` in `dom`,
/// parsed by serde_json as a `report --json` number is, so that the same
/// decimal text gives the same `f64`.
pub fn data_value(dom: &str, key: &str) -> Option<f64> {
    let at = dom.find(&format!("data-key=\"{key}\""))?;
    let tag_start = dom[..at].rfind('<')?;
    let tag_end = at + dom[at..].find('>')?;
    let tag = &dom[tag_start..tag_end];
    let v = tag.find("data-value=\"")? + "data-value=\"".len();
    let end = v + tag[v..].find('"')?;
    serde_json::from_str(&tag[v..end]).ok()
}

/// Every `data-value` in `dom`, parsed as [`data_value`] does.
pub fn data_values(dom: &str) -> Vec<f64> {
    dom.split("data-value=\"")
        .skip(1)
        .filter_map(|rest| serde_json::from_str(&rest[..rest.find('"')?]).ok())
        .collect()
}

/// Point counts of every `<polyline>` inside the chart figure `id`.
pub fn chart_points(dom: &str, id: &str) -> Vec<usize> {
    let Some(start) = dom.find(&format!("id=\"chart-{id}\"")) else {
        return Vec::new();
    };
    let end = start + dom[start..].find("</figure>").unwrap_or(dom.len() - start);
    polylines(&dom[start..end])
}

/// The point count of every `<polyline>` in an SVG (or HTML) text, in order.
pub fn polylines(svg: &str) -> Vec<usize> {
    svg.split("<polyline")
        .skip(1)
        .filter_map(|p| {
            let s = p.find("points=\"")? + "points=\"".len();
            let e = s + p[s..].find('"')?;
            Some(p[s..e].split_whitespace().count())
        })
        .collect()
}
