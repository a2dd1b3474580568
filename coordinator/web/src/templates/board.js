// The game page's board: draws the position after each ply from the FENs
// the server replayed (#game-data), and steps through them with the
// buttons, the arrow keys (← →, Home, End) or a click on a move; a link
// ending in #ply=N opens at ply N. The current ply is kept in #replay's
// data-ply, its FEN in data-fen.
(function () {
  "use strict";
  var root = document.getElementById("replay");
  var source = document.getElementById("game-data");
  var svg = document.getElementById("board");
  if (!root || !source || !svg) { return; }
  var data = JSON.parse(source.textContent);
  var plies = data.plies;
  var NS = "http://www.w3.org/2000/svg";
  var STEP = 44, X0 = 34, Y0 = 32;
  var NAMES = {
    K: "帥", A: "仕", B: "相", N: "傌", R: "俥", C: "炮", P: "兵",
    k: "將", a: "士", b: "象", n: "馬", r: "車", c: "砲", p: "卒"
  };
  var ply = 0;

  function node(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  // Board coordinates of file f (0 = a) and rank r (0 = Red's back rank).
  function x(f) { return X0 + f * STEP; }
  function y(r) { return Y0 + (9 - r) * STEP; }

  function line(layer, x1, y1, x2, y2) {
    layer.appendChild(node("line", { x1: x1, y1: y1, x2: x2, y2: y2, "class": "line" }));
  }

  function drawGrid() {
    var grid = node("g", { id: "grid" });
    grid.appendChild(node("rect", { x: 0, y: 0, width: 420, height: 460, "class": "paper" }));
    for (var r = 0; r < 10; r++) { line(grid, x(0), y(r), x(8), y(r)); }
    for (var f = 0; f < 9; f++) {
      if (f === 0 || f === 8) {
        line(grid, x(f), y(0), x(f), y(9));
      } else {
        line(grid, x(f), y(0), x(f), y(4));
        line(grid, x(f), y(5), x(f), y(9));
      }
    }
    [[0, 2], [7, 9]].forEach(function (p) {
      line(grid, x(3), y(p[0]), x(5), y(p[1]));
      line(grid, x(5), y(p[0]), x(3), y(p[1]));
    });
    grid.appendChild(node("text", { x: x(1), y: (y(4) + y(5)) / 2 + 7, "class": "river" }, "楚 河"));
    grid.appendChild(node("text", { x: x(5), y: (y(4) + y(5)) / 2 + 7, "class": "river" }, "漢 界"));
    svg.appendChild(grid);
  }

  // The pieces of a FEN's board field: [{f, r, letter, converted}].
  function pieces(fen) {
    var out = [];
    var ranks = fen.split(" ")[0].split("/");
    for (var i = 0; i < ranks.length; i++) {
      var r = 9 - i, f = 0, text = ranks[i];
      for (var j = 0; j < text.length; j++) {
        var c = text.charAt(j);
        if (c >= "1" && c <= "9") {
          f += Number(c);
        } else if (c === "~") {
          if (out.length) { out[out.length - 1].converted = true; }
        } else {
          out.push({ f: f, r: r, letter: c, converted: false });
          f += 1;
        }
      }
    }
    return out;
  }

  // File and rank of an ICCS square such as "h2".
  function square(s) {
    return { f: s.charCodeAt(0) - 97, r: Number(s.charAt(1)) };
  }

  function text(id, value) {
    var e = document.getElementById(id);
    if (e) { e.textContent = value; }
  }

  function show(n) {
    ply = Math.max(0, Math.min(plies.length, n));
    var fen = ply === 0 ? data.start : plies[ply - 1].fen;
    var old = document.getElementById("pieces");
    if (old) { old.parentNode.removeChild(old); }
    var layer = node("g", { id: "pieces" });
    var p = ply === 0 ? null : plies[ply - 1];
    if (p) {
      [p.iccs.slice(0, 2), p.iccs.slice(2, 4)].forEach(function (s) {
        var q = square(s);
        layer.appendChild(node("rect", {
          x: x(q.f) - 21, y: y(q.r) - 21, width: 42, height: 42, "class": "mark"
        }));
      });
    }
    pieces(fen).forEach(function (piece) {
      var red = piece.letter === piece.letter.toUpperCase();
      var g = node("g", {
        "class": "piece " + (red ? "red" : "black") + (piece.converted ? " converted" : ""),
        "data-square": String.fromCharCode(97 + piece.f) + piece.r
      });
      g.appendChild(node("circle", { cx: x(piece.f), cy: y(piece.r), r: 19 }));
      g.appendChild(node("text", { x: x(piece.f), y: y(piece.r) }, NAMES[piece.letter] || piece.letter));
      layer.appendChild(g);
    });
    svg.appendChild(layer);

    root.dataset.ply = String(ply);
    root.dataset.fen = fen;
    text("info-fen", fen);
    if (p) {
      text("ply-label", "ply " + ply + " of " + plies.length);
      text("info-move", p.number + (p.side === "red" ? ". " : "… ") + p.text + " (" + p.iccs + ")");
      text("info-score", p.book ? "book" : (p.score || "—"));
      text("info-depth", p.depth === null ? "—" : String(p.depth));
      text("info-nodes", p.nodes === null ? "—" : String(p.nodes));
      text("info-time", p.time_ms === null ? "—" : p.time_ms + " ms");
    } else {
      text("ply-label", "start position (" + plies.length + " plies)");
      ["info-move", "info-score", "info-depth", "info-nodes", "info-time"].forEach(function (id) {
        text(id, "—");
      });
    }
    var rows = document.querySelectorAll("#moves tbody tr");
    var list = document.querySelector(".moves-side");
    for (var i = 0; i < rows.length; i++) {
      var current = Number(rows[i].dataset.ply) === ply;
      rows[i].classList.toggle("current", current);
      // Scroll the move list only, never the page.
      var top = rows[i].offsetTop, bottom = top + rows[i].offsetHeight;
      if (current && list && (top < list.scrollTop || bottom > list.scrollTop + list.clientHeight)) {
        list.scrollTop = top - list.clientHeight / 2;
      }
    }
    document.getElementById("first").disabled = ply === 0;
    document.getElementById("prev").disabled = ply === 0;
    document.getElementById("next").disabled = ply === plies.length;
    document.getElementById("last").disabled = ply === plies.length;
  }

  document.getElementById("first").addEventListener("click", function () { show(0); });
  document.getElementById("prev").addEventListener("click", function () { show(ply - 1); });
  document.getElementById("next").addEventListener("click", function () { show(ply + 1); });
  document.getElementById("last").addEventListener("click", function () { show(plies.length); });
  document.addEventListener("keydown", function (e) {
    var to = { ArrowLeft: ply - 1, ArrowRight: ply + 1, Home: 0, End: plies.length }[e.key];
    if (to === undefined || e.altKey || e.ctrlKey || e.metaKey) { return; }
    e.preventDefault();
    show(to);
  });
  document.getElementById("moves").addEventListener("click", function (e) {
    var row = e.target.closest ? e.target.closest("tr[data-ply]") : null;
    if (row) { show(Number(row.dataset.ply)); }
  });

  drawGrid();
  var linked = /^#ply=(\d+)$/.exec(window.location.hash);
  show(linked ? Number(linked[1]) : 0);
  root.dataset.js = "ready";
})();
