"use strict";
// The cluster table: rows come as inline JSON; filtering and sorting work on an array of row
// indexes, and only the rows in view (plus a margin) are in the DOM, so 10,000 clusters stay
// smooth. Everything else on the page is plain HTML.
(function () {
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var cols = data.columns, rows = data.rows, link = data.commit_url;
  var C = {};
  cols.forEach(function (name, i) { C[name] = i; });
  var LABELS = { desired: "desired", applied: "applied", applied_at: "applied at" };
  var SHA_COLS = { desired: true, applied: true };
  var ABSENT = "\u2014";
  var viewport = document.getElementById("viewport");
  var body = document.getElementById("cluster-body");
  var head = document.getElementById("cluster-head");
  var textInput = document.getElementById("filter-text");
  var stateInput = document.getElementById("filter-state");
  var shown = document.getElementById("shown");
  var rowHeight = parseFloat(getComputedStyle(document.documentElement).getPropertyValue("--row")) || 30;
  var OVERSCAN = 10;
  var haystack = rows.map(function (r) {
    return r.map(function (v) { return v == null ? "" : String(v); }).join("\u0001").toLowerCase();
  });
  var order = rows.map(function (_, i) { return i; });
  var visible = order;
  var sortCol = -1, sortDir = 1;

  function esc(value) {
    return String(value).replace(/[&<>"]/g, function (ch) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[ch];
    });
  }

  // A SHA's first 7 characters; several sources' version each source's: main=af3a9d4;addons=e481e39
  function shortVersion(value) {
    return String(value).split(";").map(function (part) {
      var eq = part.indexOf("=");
      return eq < 0 ? part.slice(0, 7) : part.slice(0, eq + 1) + part.slice(eq + 1, eq + 8);
    }).join(";");
  }

  function cell(name, value) {
    if (value == null || value === "") {
      return "<td>" + ABSENT + "</td>";
    }
    var text = esc(value);
    if (SHA_COLS[name]) {
      var short = esc(shortVersion(value));
      return "<td title=\"" + text + "\">" + (link && /^[0-9a-f]{40}$/.test(value)
        ? "<a class=\"sha\" href=\"" + esc(link + value) + "\">" + short + "</a>"
        : "<code class=\"sha\">" + short + "</code>") + "</td>";
    }
    if (name === "state") {
      return "<td class=\"state s-" + text + "\">" + text + "</td>";
    }
    return "<td title=\"" + text + "\">" + text + "</td>";
  }

  function drawHead() {
    head.innerHTML = cols.map(function (name, i) {
      var sort = i === sortCol ? (sortDir > 0 ? "ascending" : "descending") : "none";
      return "<th scope=\"col\" aria-sort=\"" + sort + "\"><button type=\"button\" data-col=\"" + i +
        "\">" + esc(LABELS[name] || name) + "</button></th>";
    }).join("");
  }

  function draw() {
    // The viewport grows with its rows up to its max-height: draw for the larger of the two.
    var height = Math.max(viewport.clientHeight, window.innerHeight);
    var first = Math.max(0, Math.floor(viewport.scrollTop / rowHeight) - OVERSCAN);
    var last = Math.min(visible.length, first + Math.ceil(height / rowHeight) + 2 * OVERSCAN);
    var html = [spacer(first * rowHeight)];
    for (var k = first; k < last; k++) {
      var r = rows[visible[k]];
      var tds = "";
      for (var c = 0; c < cols.length; c++) {
        tds += cell(cols[c], r[c]);
      }
      html.push("<tr class=\"r\" data-id=\"" + esc(r[C.id]) + "\">" + tds + "</tr>");
    }
    html.push(spacer((visible.length - last) * rowHeight));
    body.innerHTML = html.join("");
  }

  function spacer(px) {
    return px > 0 ? "<tr class=\"spacer\" aria-hidden=\"true\"><td colspan=\"" + cols.length +
      "\" style=\"height:" + px + "px\"></td></tr>" : "";
  }

  function apply() {
    var words = textInput.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    var state = stateInput.value;
    visible = order.filter(function (i) {
      if (state && rows[i][C.state] !== state) {
        return false;
      }
      for (var w = 0; w < words.length; w++) {
        if (haystack[i].indexOf(words[w]) < 0) {
          return false;
        }
      }
      return true;
    });
    shown.textContent = "Showing " + visible.length + " of " + rows.length + " cluster" +
      (rows.length === 1 ? "" : "s");
    viewport.scrollTop = 0;
    draw();
  }

  function sortBy(col) {
    sortDir = col === sortCol ? -sortDir : 1;
    sortCol = col;
    var keys = rows.map(function (r) { return r[col] == null ? "" : String(r[col]).toLowerCase(); });
    order = rows.map(function (_, i) { return i; });
    order.sort(function (a, b) {
      return (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : a - b) * sortDir;
    });
    drawHead();
    apply();
  }

  var pending = false;
  viewport.addEventListener("scroll", function () {
    if (!pending) {
      pending = true;
      requestAnimationFrame(function () { pending = false; draw(); });
    }
  });
  window.addEventListener("resize", draw);
  head.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-col]");
    if (button) {
      sortBy(Number(button.getAttribute("data-col")));
      head.querySelector("button[data-col=\"" + button.getAttribute("data-col") + "\"]").focus();
    }
  });
  textInput.addEventListener("input", apply);
  stateInput.addEventListener("change", apply);
  drawHead();
  apply();
  // For tests and the benchmark: when the first rows were drawn, and the same filter as the
  // controls, called directly.
  window.clmgitReport = {
    renderedAt: performance.now(),
    rowHeight: rowHeight,
    filter: function (text, state) {
      textInput.value = text;
      stateInput.value = state;
      apply();
      return visible.length;
    }
  };
}());
