// The run page's live part: polls /runs/ID/live (ETag, so an unchanged run
// costs a 304) while the run is active, and toggles the SPSA charts between
// θ in % of c_end and absolute θ.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) { return; }
  var etag = live.dataset.etag;
  var mode = "pct";

  function applyMode() {
    var charts = live.querySelectorAll("figure.chart");
    for (var i = 0; i < charts.length; i++) {
      var id = charts[i].dataset.chart;
      if (id.indexOf("theta-") !== 0) { continue; }
      var pct = id === "theta-pct";
      charts[i].classList.toggle("hidden", (mode === "pct") !== pct);
    }
    var button = document.getElementById("theta-toggle");
    if (button) {
      button.textContent = mode === "pct" ? "show absolute θ" : "show θ in % of c_end";
      button.onclick = function () {
        mode = mode === "pct" ? "abs" : "pct";
        applyMode();
      };
    }
  }

  function poll() {
    if (live.dataset.state !== "active") { return; }
    fetch("/runs/" + live.dataset.run + "/live", { headers: { "If-None-Match": etag } })
      .then(function (r) {
        if (r.status === 200) {
          etag = r.headers.get("ETag") || etag;
          live.dataset.state = r.headers.get("X-Run-State") || live.dataset.state;
          return r.text().then(function (html) {
            live.innerHTML = html;
            live.dataset.updates = String(Number(live.dataset.updates || "0") + 1);
            applyMode();
          });
        }
      })
      .catch(function () { /* the next poll retries */ })
      .then(function () { setTimeout(poll, 2000); });
  }

  applyMode();
  live.dataset.js = "ready";
  setTimeout(poll, 2000);
})();
