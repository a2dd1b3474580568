//! A headless Chromium driven like a person: it opens a page, presses keys
//! and clicks elements (real input events, dispatched by the browser), and
//! reads the page back, over the DevTools protocol on a pipe
//! (`--remote-debugging-pipe`: JSON messages ending in a NUL byte, the
//! browser reading fd 3 and writing fd 4). Uncaught exceptions, console
//! errors and failed loads are collected in [`Browser::errors`].

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::web::{HEADLESS, chromium};

/// How long one protocol call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A running browser with one page attached.
#[derive(Debug)]
pub struct Browser {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    next_id: u64,
    session: String,
    /// JavaScript errors seen so far, in order.
    pub errors: Vec<String>,
}

impl Browser {
    /// Starts Chromium with its profile in `profile` and a `width`×`height`
    /// window, and attaches to a new blank page.
    pub fn start(profile: &Path, size: (u32, u32)) -> Browser {
        Browser::start_with(profile, size, &[])
    }

    /// [`Browser::start`] with `extra` command-line flags.
    pub fn start_with(profile: &Path, (width, height): (u32, u32), extra: &[String]) -> Browser {
        // The shell maps our pipes onto the fds the protocol uses; no unsafe
        // fd juggling in this process.
        let mut child = Command::new("bash")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" 3<&0 4>&1 0</dev/null 1>/dev/null")
            .arg(chromium())
            .args(HEADLESS)
            .arg("--remote-debugging-pipe")
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--window-size={width},{height}"))
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        let to = child.stdin.take().expect("chromium's pipe in");
        let out = child.stdout.take().expect("chromium's pipe out");
        let (tx, from) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(out);
            let mut message = Vec::new();
            loop {
                message.clear();
                match reader.read_until(0, &mut message) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        message.pop_if(|b| *b == 0);
                        let Ok(v) = serde_json::from_slice::<Value>(&message) else {
                            continue;
                        };
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut browser = Browser {
            child,
            to,
            from,
            next_id: 0,
            session: String::new(),
            errors: Vec::new(),
        };
        let target = browser.call_browser("Target.createTarget", json!({ "url": "about:blank" }));
        let target_id = target["targetId"].as_str().expect("a target id").to_owned();
        let attached = browser.call_browser(
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        );
        browser.session = attached["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned();
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            browser.call(domain, json!({}));
        }
        browser
    }

    fn send(&mut self, method: &str, params: Value, session: bool) -> u64 {
        self.next_id += 1;
        let mut message = json!({ "id": self.next_id, "method": method, "params": params });
        if session {
            message["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&message).expect("json");
        bytes.push(0);
        self.to
            .write_all(&bytes)
            .and_then(|()| self.to.flush())
            .unwrap_or_else(|e| panic!("send {method} to chromium: {e}"));
        self.next_id
    }

    /// The next message, noting JavaScript errors among events.
    fn receive(&mut self, deadline: Instant, what: &str) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        let message = match self.from.recv_timeout(left) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => panic!("chromium did not answer {what} in time"),
            Err(RecvTimeoutError::Disconnected) => panic!("chromium exited during {what}"),
        };
        let p = &message["params"];
        match message["method"].as_str() {
            Some("Runtime.exceptionThrown") => self.errors.push(format!(
                "uncaught: {}",
                p["exceptionDetails"]["exception"]["description"]
                    .as_str()
                    .or(p["exceptionDetails"]["text"].as_str())
                    .unwrap_or("?")
            )),
            Some("Runtime.consoleAPICalled") if p["type"] == "error" => {
                self.errors.push(format!("console.error: {}", p["args"]))
            }
            Some("Log.entryAdded") if p["entry"]["level"] == "error" => self.errors.push(format!(
                "log: {}",
                p["entry"]["text"].as_str().unwrap_or("?")
            )),
            _ => {}
        }
        message
    }

    fn wait_for_answer(&mut self, id: u64, method: &str) -> Value {
        let deadline = Instant::now() + CALL_TIMEOUT;
        loop {
            let message = self.receive(deadline, method);
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    panic!("{method}: {error}");
                }
                return message["result"].clone();
            }
        }
    }

    fn call_browser(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params, false);
        self.wait_for_answer(id, method)
    }

    /// A protocol call on the page's session; its result.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params, true);
        self.wait_for_answer(id, method)
    }

    /// Loads `url` and waits for its load event (its scripts have run).
    pub fn open(&mut self, url: &str) {
        let id = self.send("Page.navigate", json!({ "url": url }), true);
        self.wait_for_answer(id, "Page.navigate");
        let deadline = Instant::now() + CALL_TIMEOUT;
        while self.receive(deadline, url)["method"] != "Page.loadEventFired" {}
    }

    /// The value of the JavaScript expression `expr` on the page.
    pub fn eval(&mut self, expr: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({ "expression": expr, "returnByValue": true }),
        );
        if let Some(e) = result.get("exceptionDetails") {
            panic!("{expr}: {e}");
        }
        result["result"]["value"].clone()
    }

    /// Presses and releases the key `key` (a DOM key name such as
    /// `ArrowRight`, with its Windows key code).
    pub fn key(&mut self, key: &str, code: u32) {
        for kind in ["keyDown", "keyUp"] {
            self.call(
                "Input.dispatchKeyEvent",
                json!({
                    "type": kind, "key": key, "code": key,
                    "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code
                }),
            );
        }
    }

    /// Clicks the middle of the first element matching `selector`, scrolled
    /// into view, with the left mouse button.
    pub fn click(&mut self, selector: &str) {
        let quoted = serde_json::to_string(selector).expect("json");
        let rect = self.eval(&format!(
            "(() => {{ const e = document.querySelector({quoted}); if (!e) return null;
               e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();
               return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ));
        let (Some(x), Some(y)) = (rect[0].as_f64(), rect[1].as_f64()) else {
            panic!("no element {selector} to click");
        };
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            );
        }
    }
}

impl Browser {
    /// Clicks `selector` (a submit button, a link) and waits for the page
    /// it leads to to load.
    pub fn click_and_load(&mut self, selector: &str) {
        self.click(selector);
        let deadline = Instant::now() + CALL_TIMEOUT;
        while self.receive(deadline, selector)["method"] != "Page.loadEventFired" {}
    }

    /// Sets the value of the form field matching `selector`.
    pub fn fill(&mut self, selector: &str, value: &str) {
        let (s, v) = (
            serde_json::to_string(selector).expect("json"),
            serde_json::to_string(value).expect("json"),
        );
        let found = self.eval(&format!(
            "(() => {{ const e = document.querySelector({s}); if (!e) return false;
               e.value = {v}; e.dispatchEvent(new Event('change', {{bubbles: true}}));
               return true; }})()"
        ));
        assert_eq!(found, true, "no field {selector} to fill");
    }

    /// The page's visible text.
    pub fn text(&mut self) -> String {
        self.eval("document.body.innerText")
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The page's address.
    pub fn location(&mut self) -> String {
        self.eval("location.pathname + location.search")
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.send("Browser.close", json!({}), false);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
