
(function () {
  var tc = document.getElementById("trends-changed");
  if (tc) {
    tc.addEventListener("change", function () {
      document.getElementById("trend-cards").classList.toggle("changed-only", tc.checked);
    });
  }
  function key(row, col) {
    var cell = row.cells[col];
    if (!cell) { return ""; }
    var v = cell.getAttribute("data-v");
    if (v !== null) { var f = parseFloat(v); return isNaN(f) ? Infinity : f; }
    return cell.textContent.trim().toLowerCase();
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        table.classList.remove("grouped");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a, col), y = key(b, col);
          if (x === y) { return 0; }
          return (x < y ? -1 : 1) * (asc ? 1 : -1);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  var table = document.getElementById("results-table");
  var q = document.getElementById("filter");
  if (!table || !q) { return; }
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var text = rows.map(function (r) { return r.textContent.toLowerCase(); });
  var status = document.getElementById("status-filter");
  var changed = document.getElementById("changed-only");
  var count = document.getElementById("filter-count");
  function apply() {
    var terms = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    var s = status.value, shown = 0;
    rows.forEach(function (r, i) {
      var ok = terms.every(function (w) {
        if (w.indexOf("model=") === 0) {
          return (r.getAttribute("data-m") || "").toLowerCase() === w.slice(6);
        }
        return text[i].indexOf(w) >= 0;
      });
      var st = r.getAttribute("data-s");
      if (ok && s === "failures") { ok = ["ok", "unstable", "contended"].indexOf(st) < 0; }
      else if (ok && s) {
        ok = st === s || (r.getAttribute("data-f") || "").split(" ").indexOf(s) >= 0;
      }
      if (ok && changed.checked) { ok = r.getAttribute("data-c") === "1"; }
      r.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " results shown";
  }
  q.addEventListener("input", apply);
  status.addEventListener("change", apply);
  changed.addEventListener("change", apply);
  document.querySelectorAll("button[data-model]").forEach(function (b) {
    b.addEventListener("click", function () {
      q.value = "model=" + b.getAttribute("data-model");
      apply();
      table.scrollIntoView();
    });
  });
  var regroup = document.getElementById("regroup");
  regroup.addEventListener("click", function () {
    var body = table.tBodies[0];
    rows.slice().sort(function (a, b) {
      return parseInt(a.getAttribute("data-i"), 10) - parseInt(b.getAttribute("data-i"), 10);
    }).forEach(function (r) { body.appendChild(r); });
    table.classList.add("grouped");
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
      h.removeAttribute("aria-sort");
    });
  });
  apply();
})();
