/* Leaderboard page: sortable, searchable, paged leaderboard; the rating chart (top N and chosen
   entrants); the head-to-head heat map on a canvas; the games filter. */
(function () {
  'use strict';

  function cellValue(td, type) {
    var v = td.getAttribute('data-v');
    if (v === null) v = td.textContent.trim();
    if (type === 'num') {
      var n = parseFloat(v);
      return isNaN(n) ? null : n;
    }
    return v.toLowerCase();
  }

  function makeSortable(table) {
    var ths = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(ths, function (th, col) {
      var type = th.getAttribute('data-type');
      if (!type) return;
      th.tabIndex = 0;
      th.setAttribute('role', 'columnheader button');
      function sort() {
        var current = th.getAttribute('aria-sort');
        var first = th.getAttribute('data-first') || (type === 'num' ? 'descending' : 'ascending');
        var dir = current ? (current === 'ascending' ? 'descending' : 'ascending') : first;
        Array.prototype.forEach.call(ths, function (o) { o.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', dir);
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows).map(function (row, i) {
          return { row: row, i: i, v: cellValue(row.cells[col], type) };
        });
        var sign = dir === 'ascending' ? 1 : -1;
        rows.sort(function (a, b) {
          if (a.v === null && b.v === null) return a.i - b.i;
          if (a.v === null) return 1;
          if (b.v === null) return -1;
          if (a.v < b.v) return -sign;
          if (a.v > b.v) return sign;
          return a.i - b.i;
        });
        rows.forEach(function (r) { body.appendChild(r.row); });
        table.dispatchEvent(new Event('p10-sorted'));
      }
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (ev) {
        if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); sort(); }
      });
    });
    table.setAttribute('data-sortable', '1');
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), makeSortable);

  /* Leaderboard: find an entrant, one page of rows at a time. */
  var lb = document.getElementById('leaderboard-table');
  var lbSearch = document.getElementById('lb-search');
  var lbSize = document.getElementById('lb-size');
  var lbPage = 0;
  function pageLeaderboard() {
    if (!lb) return;
    var q = lbSearch ? lbSearch.value.trim().toLowerCase() : '';
    var size = lbSize ? +lbSize.value : 0;
    var rows = Array.prototype.slice.call(lb.tBodies[0].rows);
    var hits = rows.filter(function (r) { return !q || (r.getAttribute('data-entrant') || '').toLowerCase().indexOf(q) >= 0; });
    var pages = size > 0 ? Math.max(1, Math.ceil(hits.length / size)) : 1;
    lbPage = Math.min(Math.max(lbPage, 0), pages - 1);
    var from = size > 0 ? lbPage * size : 0, to = size > 0 ? from + size : hits.length;
    rows.forEach(function (r) { r.classList.add('hidden'); });
    hits.slice(from, to).forEach(function (r) { r.classList.remove('hidden'); });
    var label = document.getElementById('lb-page');
    if (label) label.textContent = 'page ' + (lbPage + 1) + ' of ' + pages;
    var prev = document.getElementById('lb-prev'), next = document.getElementById('lb-next');
    if (prev) prev.disabled = lbPage === 0;
    if (next) next.disabled = lbPage >= pages - 1;
    var pager = document.getElementById('lb-pager');
    if (pager) pager.classList.toggle('hidden', pages <= 1);
    var count = document.getElementById('lb-count');
    if (count) count.textContent = (q ? hits.length + ' of ' : '') + rows.length + ' entrants';
    lb.setAttribute('data-matches', String(hits.length));
    lb.setAttribute('data-page', String(lbPage + 1));
    lb.setAttribute('data-pages', String(pages));
  }
  if (lb) {
    lb.addEventListener('p10-sorted', function () { lbPage = 0; pageLeaderboard(); });
    if (lbSearch) lbSearch.addEventListener('input', function () { lbPage = 0; pageLeaderboard(); });
    if (lbSize) lbSize.addEventListener('change', function () { lbPage = 0; pageLeaderboard(); });
    var prevBtn = document.getElementById('lb-prev'), nextBtn = document.getElementById('lb-next');
    if (prevBtn) prevBtn.addEventListener('click', function () { lbPage -= 1; pageLeaderboard(); });
    if (nextBtn) nextBtn.addEventListener('click', function () { lbPage += 1; pageLeaderboard(); });
    pageLeaderboard();
  }

  function readJSON(id) {
    var el = document.getElementById(id);
    if (!el) return null;
    try { return JSON.parse(el.textContent); } catch (e) { window.p10NoteError && window.p10NoteError(id + ': ' + e); return null; }
  }
  function svg(tag, attrs, text) {  // in the namespace of the chart's own <svg>
    var el = document.createElementNS(document.getElementById('history-chart').namespaceURI, tag);
    Object.keys(attrs).forEach(function (k) { el.setAttribute(k, attrs[k]); });
    if (text !== undefined) el.textContent = text;
    return el;
  }
  function niceTicks(lo, hi, target) {
    if (!(isFinite(lo) && isFinite(hi))) return [];
    if (hi <= lo) hi = lo + 1;
    var raw = (hi - lo) / Math.max(target, 1);
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * mag; }).filter(function (v) { return v >= raw; })[0];
    var out = [];
    for (var v = Math.ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 && out.length < 50; v += step) out.push(Math.round(v * 1e10) / 1e10);
    return out;
  }
  function tickLabel(v) { return (Math.abs(v) >= 1 || v === 0) ? String(+v.toPrecision(12)) : String(+v.toPrecision(2)); }

  /* Rating history: the top N by rank and any entrants chosen, one colour each. */
  var chart = document.getElementById('history-chart');
  var legend = document.getElementById('history-legend');
  var hist = readJSON('history-data');
  if (chart && legend && hist) {
    var chosen = [];
    var topInput = document.getElementById('history-top');
    var addInput = document.getElementById('history-add');
    var chips = document.getElementById('history-chosen');
    var maxLines = hist.colors.length;
    var indexOf = {};
    hist.names.forEach(function (n, i) { indexOf[n] = i; });
    var drawHistory = function () {
      var top = topInput ? Math.max(0, Math.min(maxLines, parseInt(topInput.value, 10) || 0)) : hist.top;
      var shown = hist.names.slice(0, top);
      chosen.forEach(function (n) { if (shown.indexOf(n) < 0) shown.push(n); });
      shown = shown.slice(0, maxLines);
      var W = 1000, H = 320, ml = 46, mr = 18, mt = 14, mb = 36;
      var series = shown.map(function (n) {
        var flat = hist.points[indexOf[n]], pts = [];
        for (var k = 0; k < flat.length; k += 2) pts.push([flat[k], flat[k + 1]]);
        return { name: n, pts: pts };
      });
      while (chart.firstChild) chart.removeChild(chart.firstChild);
      while (legend.firstChild) legend.removeChild(legend.firstChild);
      if (series.length) {
        var maxX = 0, yLo = Infinity, yHi = -Infinity;
        series.forEach(function (s) {
          maxX = Math.max(maxX, s.pts[s.pts.length - 1][0]);
          s.pts.forEach(function (p) { yLo = Math.min(yLo, p[1]); yHi = Math.max(yHi, p[1]); });
        });
        if (yHi - yLo < 1) { yLo -= 1; yHi += 1; }
        var pad = (yHi - yLo) * 0.06; yLo -= pad; yHi += pad;
        var xLo = maxX > 1 ? 1 : 0, xHi = Math.max(maxX, xLo + 1);
        var sx = function (x) { return ml + (x - xLo) / (xHi - xLo) * (W - ml - mr); };
        var sy = function (y) { return mt + (yHi - y) / (yHi - yLo) * (H - mt - mb); };
        niceTicks(yLo, yHi, 5).forEach(function (t) {
          chart.appendChild(svg('line', { 'class': 'grid', x1: ml, x2: W - mr, y1: sy(t).toFixed(1), y2: sy(t).toFixed(1) }));
          chart.appendChild(svg('text', { x: ml - 6, y: (sy(t) + 4).toFixed(1), 'text-anchor': 'end' }, tickLabel(t)));
        });
        niceTicks(xLo, xHi, 8).forEach(function (t) {
          if (t !== Math.floor(t)) return;
          chart.appendChild(svg('line', { 'class': 'grid', x1: sx(t).toFixed(1), x2: sx(t).toFixed(1), y1: mt, y2: H - mb }));
          chart.appendChild(svg('text', { x: sx(t).toFixed(1), y: H - mb + 15, 'text-anchor': 'middle' }, tickLabel(t)));
        });
        chart.appendChild(svg('line', { 'class': 'axis', x1: ml, x2: W - mr, y1: H - mb, y2: H - mb }));
        chart.appendChild(svg('line', { 'class': 'axis', x1: ml, x2: ml, y1: mt, y2: H - mb }));
        chart.appendChild(svg('text', { x: Math.round((ml + W - mr) / 2), y: H - 4, 'text-anchor': 'middle' }, 'games played'));
        var mid = Math.round((mt + H - mb) / 2);
        chart.appendChild(svg('text', { x: 12, y: mid, 'text-anchor': 'middle', transform: 'rotate(-90 12 ' + mid + ')' }, 'rating μ'));
        series.forEach(function (s, i) {
          var color = hist.colors[i];
          var d = s.pts.map(function (p, k) { return (k ? 'L' : 'M') + sx(p[0]).toFixed(1) + ',' + sy(p[1]).toFixed(1); }).join(' ');
          var last = s.pts[s.pts.length - 1];
          var title = s.name + ': μ ' + last[1].toFixed(2) + ' after ' + last[0] + ' games';
          var path = svg('path', { 'class': 'series', 'data-i': i, d: d, stroke: color });
          path.appendChild(svg('title', {}, title));
          chart.appendChild(path);
          var dot = svg('circle', { 'class': 'series-dot', 'data-i': i, cx: sx(last[0]).toFixed(1), cy: sy(last[1]).toFixed(1), r: 3.5, fill: color });
          dot.appendChild(svg('title', {}, title));
          chart.appendChild(dot);
          var item = document.createElement('span');
          item.className = 'item';
          item.setAttribute('data-i', i);
          var sw = document.createElement('span');
          sw.className = 'swatch';
          sw.style.background = color;
          item.appendChild(sw);
          item.appendChild(document.createTextNode(s.name));
          legend.appendChild(item);
        });
      }
      if (chips) {
        while (chips.firstChild) chips.removeChild(chips.firstChild);
        chosen.forEach(function (n) {
          var b = document.createElement('button');
          b.type = 'button';
          b.className = 'chip';
          b.title = 'Take ' + n + ' off the chart';
          b.textContent = n + ' ×';
          b.addEventListener('click', function () { chosen.splice(chosen.indexOf(n), 1); drawHistory(); });
          chips.appendChild(b);
        });
      }
      chart.setAttribute('data-lines', String(series.length));
    };
    window.p10ChartEntrant = function (name) {
      if (indexOf[name] === undefined || chosen.indexOf(name) >= 0) return;
      chosen.push(name);
      if (chosen.length > maxLines) chosen.shift();
      drawHistory();
    };
    if (topInput) topInput.addEventListener('input', drawHistory);
    if (addInput) addInput.addEventListener('change', function () {
      window.p10ChartEntrant(addInput.value.trim());
      addInput.value = '';
    });
    var highlight = function (i) {
      chart.classList.toggle('dim', i !== null);
      Array.prototype.forEach.call(chart.querySelectorAll('.on'), function (s) { s.classList.remove('on'); });
      if (i !== null) Array.prototype.forEach.call(chart.querySelectorAll('[data-i="' + i + '"]'), function (s) { s.classList.add('on'); });
    };
    legend.addEventListener('mouseover', function (ev) {
      var item = ev.target.closest && ev.target.closest('.item');
      highlight(item ? item.getAttribute('data-i') : null);
    });
    legend.addEventListener('mouseleave', function () { highlight(null); });
    drawHistory();
    chart.setAttribute('data-rendered', '1');
  }

  /* Head to head: one cell per pair on a canvas, sorted and filtered in the page. */
  var heat = readJSON('h2h-data');
  var canvas = document.getElementById('h2h-canvas');
  if (heat && canvas && canvas.getContext) {
    var n = heat.names.length;
    var raw = atob(heat.pairs);
    var P = n * (n - 1) / 2;
    var A = new Uint32Array(P), B = new Uint32Array(P), T = new Uint32Array(P);
    var pos = 0;
    var readVarint = function () {
      var v = 0, mul = 1, b;
      do { b = raw.charCodeAt(pos++); v += (b & 127) * mul; mul *= 128; } while (b & 128);
      return v;
    };
    for (var k = 0; k < P; k++) { A[k] = readVarint(); B[k] = readVarint(); T[k] = readVarint(); }
    var pairAt = function (i, j) { return i * n - i * (i + 1) / 2 + (j - i - 1); };
    var counts = function (i, j) {  // row i against column j
      if (i < j) { var a = pairAt(i, j); return [A[a], B[a], T[a]]; }
      var b = pairAt(j, i); return [B[b], A[b], T[b]];
    };
    var STOPS = [[178, 24, 43], [247, 247, 247], [33, 102, 172]];
    var colorOf = function (t) {
      var p = Math.min(Math.max(t, 0), 1) * 2, s = Math.min(Math.floor(p), 1), f = p - s;
      return [0, 1, 2].map(function (c) { return Math.round(STOPS[s][c] + (STOPS[s + 1][c] - STOPS[s][c]) * f); });
    };
    var sortSel = document.getElementById('h2h-sort');
    var filterIn = document.getElementById('h2h-filter');
    var tip = document.getElementById('h2h-tip');
    var shownLabel = document.getElementById('h2h-shown');
    var order = [], cell = 1;
    var drawHeat = function () {
      var mode = sortSel ? sortSel.value : 'rank';
      var idx = heat.names.map(function (_, i) { return i; });
      if (mode === 'name') idx.sort(function (a, b) { return heat.names[a] < heat.names[b] ? -1 : heat.names[a] > heat.names[b] ? 1 : 0; });
      else if (mode === 'pl') idx.sort(function (a, b) { return (heat.pl[b] === null ? -1e9 : heat.pl[b]) - (heat.pl[a] === null ? -1e9 : heat.pl[a]) || a - b; });
      var terms = filterIn ? filterIn.value.toLowerCase().split(/[,\s]+/).filter(Boolean) : [];
      if (terms.length && !(terms.length === 1 && terms[0] === 'all')) {
        idx = idx.filter(function (i) {
          var name = heat.names[i].toLowerCase(), rank = heat.rank[i];
          return terms.some(function (t) {
            var m = /^(\d+)-(\d+)$/.exec(t);
            if (m) return rank >= +m[1] && rank <= +m[2];
            return name.indexOf(t) >= 0 || String(rank) === t;
          });
        });
      }
      order = idx;
      var k = order.length;
      cell = k ? Math.max(1, Math.min(28, Math.floor(720 / k))) : 1;
      canvas.width = Math.max(1, k * cell);
      canvas.height = Math.max(1, k * cell);
      var ctx = canvas.getContext('2d');
      var img = ctx.createImageData(canvas.width, canvas.height);
      var px = img.data, W = canvas.width;
      for (var r = 0; r < k; r++) {
        for (var c = 0; c < k; c++) {
          var rgb;
          if (r === c) rgb = [60, 68, 84];
          else {
            var v = counts(order[r], order[c]), g = v[0] + v[1] + v[2];
            rgb = g ? colorOf(v[0] / g) : [196, 201, 210];
          }
          var gap = cell >= 6 ? 1 : 0;
          for (var y = r * cell; y < (r + 1) * cell - gap; y++) {
            for (var x = c * cell, o = (y * W + x) * 4; x < (c + 1) * cell - gap; x++, o += 4) {
              px[o] = rgb[0]; px[o + 1] = rgb[1]; px[o + 2] = rgb[2]; px[o + 3] = 255;
            }
          }
        }
      }
      ctx.putImageData(img, 0, 0);
      canvas.setAttribute('data-cells', String(k));
      if (shownLabel) shownLabel.textContent = k + ' of ' + n + ' entrants · ' + cell + ' px a cell';
    };
    var cellAt = function (ev) {
      var rect = canvas.getBoundingClientRect();
      var x = (ev.clientX - rect.left) * canvas.width / rect.width, y = (ev.clientY - rect.top) * canvas.height / rect.height;
      var c = Math.floor(x / cell), r = Math.floor(y / cell);
      return (r >= 0 && c >= 0 && r < order.length && c < order.length) ? [r, c] : null;
    };
    window.p10HeatText = function (r, c) {
      var a = heat.names[order[r]], b = heat.names[order[c]];
      if (r === c) return a + ' (rank ' + heat.rank[order[r]] + ')';
      var v = counts(order[r], order[c]), g = v[0] + v[1] + v[2];
      if (!g) return a + ' never met ' + b;
      return a + ' placed ahead of ' + b + ' in ' + v[0] + ' of ' + g + ' games (' + v[1] + ' behind, ' + v[2] + ' tied)';
    };
    canvas.addEventListener('mousemove', function (ev) {
      var at = cellAt(ev);
      if (!at || !tip) { if (tip) tip.classList.add('hidden'); return; }
      tip.textContent = window.p10HeatText(at[0], at[1]);
      tip.style.left = (ev.offsetX + 14) + 'px';
      tip.style.top = (ev.offsetY + 14) + 'px';
      tip.classList.remove('hidden');
    });
    canvas.addEventListener('mouseleave', function () { if (tip) tip.classList.add('hidden'); });
    canvas.addEventListener('click', function (ev) {  // a pair: their ratings on the chart
      var at = cellAt(ev);
      if (!at || !window.p10ChartEntrant) return;
      window.p10ChartEntrant(heat.names[order[at[0]]]);
      if (at[0] !== at[1]) window.p10ChartEntrant(heat.names[order[at[1]]]);
    });
    if (sortSel) sortSel.addEventListener('change', drawHeat);
    if (filterIn) filterIn.addEventListener('input', drawHeat);
    drawHeat();
    canvas.setAttribute('data-rendered', '1');
  }

  var games = document.getElementById('games-table');
  var pick = document.getElementById('filter-entrant');
  var onlyFaults = document.getElementById('filter-faults');
  var onlyReplays = document.getElementById('filter-replays');
  var count = document.getElementById('games-count');
  function filterGames() {
    if (!games) return;
    var who = pick ? pick.value : '';
    var shown = 0, total = 0;
    Array.prototype.forEach.call(games.tBodies[0].rows, function (row) {
      total += 1;
      var ok = true;
      if (who) {
        var names = [];
        try { names = JSON.parse(row.getAttribute('data-entrants') || '[]'); } catch (e) { names = []; }
        ok = names.indexOf(who) >= 0;
      }
      if (ok && onlyFaults && onlyFaults.checked) ok = row.getAttribute('data-faults') !== '0';
      if (ok && onlyReplays && onlyReplays.checked) ok = row.getAttribute('data-replay') === '1';
      row.classList.toggle('hidden', !ok);
      if (ok) shown += 1;
    });
    if (count) count.textContent = shown === total ? total + ' games' : shown + ' of ' + total + ' games';
  }
  [pick, onlyFaults, onlyReplays].forEach(function (c) { if (c) c.addEventListener('change', filterGames); });
  Array.prototype.forEach.call(document.querySelectorAll('.show-games'), function (btn) {
    btn.addEventListener('click', function () {
      if (!pick) return;
      pick.value = btn.getAttribute('data-entrant');
      filterGames();
      var section = document.getElementById('games');
      if (section && section.scrollIntoView) section.scrollIntoView({ behavior: 'smooth' });
    });
  });
  filterGames();

  document.body.setAttribute('data-rendered', '1');
})();
