/* Leaderboard page: sortable, searchable, paged leaderboard (its rows from data/board.js,
   loaded by games.js's P10.load); the rating chart (top N and chosen entrants); the
   head-to-head heat map on a canvas, with the entrants' names. */
(function () {
  'use strict';

  function readJSON(id) {
    var el = document.getElementById(id);
    if (!el) return null;
    try { return JSON.parse(el.textContent); } catch (e) { window.p10NoteError && window.p10NoteError(id + ': ' + e); return null; }
  }

  /* Leaderboard: every row in data/board.js; the page asked for (sorted, searched) is
     rendered into the table, so a thousand entrants cost one page of rows. */
  var lb = document.getElementById('leaderboard-table');
  var lbSearch = document.getElementById('lb-search');
  var lbSize = document.getElementById('lb-size');
  var frame = readJSON('board-frame') || {};
  var lbPage = 0, board = null, sortCol = 0, sortDir = 'ascending';
  var ths = lb ? lb.tHead.rows[0].cells : [];
  var svgHolder = document.createElement('div');
  svgHolder.innerHTML = '<svg></svg>';
  var SVG = svgHolder.firstChild.namespaceURI;  // (the SVG namespace, as the parser gives it)
  function svgEl(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    return e;
  }
  function whiskerSvg(w, color) {
    var s = svgEl('svg', { 'class': 'whisker', width: frame.width, height: frame.height,
                           viewBox: '0 0 ' + frame.width + ' ' + frame.height, role: 'img', 'aria-label': w[3] });
    var t = svgEl('title', {}); t.textContent = w[3]; s.appendChild(t);
    s.appendChild(svgEl('line', { x1: w[0], x2: w[1], y1: frame.y, y2: frame.y, stroke: color, 'stroke-width': 2 }));
    s.appendChild(svgEl('circle', { cx: w[2], cy: frame.y, r: 4.5, fill: color, stroke: '#fff', 'stroke-width': 1.5 }));
    return s;
  }
  function boardRow(r) {
    var tr = document.createElement('tr');
    tr.setAttribute('data-entrant', r.n);
    for (var j = 0; j < ths.length; j++) {
      var td = document.createElement('td');
      if (j === 1) {
        td.className = 'name-cell';
        var sw = document.createElement('span'); sw.className = 'swatch'; sw.style.background = r.c;
        td.appendChild(sw); td.appendChild(document.createTextNode(' '));
        var a = document.createElement('a'); a.className = 'entrant'; a.textContent = r.n;
        a.href = 'entrants/' + encodeURIComponent(r.s) + '.html';
        td.appendChild(a);
        r.tags.forEach(function (t) {
          var h = document.createElement('span');
          h.className = 'hint ' + (t[0] === 'disqualified' ? 'bad' : t[0]);
          h.title = t[1]; h.textContent = ' (' + t[0] + ')';
          td.appendChild(h);
        });
      } else {
        var c = r.cells[j === 0 ? 0 : j - 1];
        td.className = ths[j].className;
        td.setAttribute('data-v', c[0] === null ? '' : String(c[0]));
        if (ths[j].classList.contains('whisker') && r.w) td.appendChild(whiskerSvg(r.w, r.c));
        else {
          td.textContent = c[1];
          if (c[2]) { var b = document.createElement('span'); b.className = 'band'; b.textContent = c[2]; td.appendChild(document.createTextNode(' ')); td.appendChild(b); }
        }
      }
      tr.appendChild(td);
    }
    return tr;
  }
  function sortedBoard() {
    var k = sortCol === 0 ? 0 : sortCol - 1, sign = sortDir === 'ascending' ? 1 : -1;
    var rows = board.map(function (r, i) {
      var v = sortCol === 1 ? r.n.toLowerCase() : r.cells[k][0];
      if (typeof v === 'string' && sortCol !== 1) v = v.toLowerCase();
      return { r: r, i: i, v: v };
    });
    rows.sort(function (a, b) {
      if (a.v === null && b.v === null) return a.i - b.i;
      if (a.v === null || a.v === '') return 1;
      if (b.v === null || b.v === '') return -1;
      if (a.v < b.v) return -sign;
      if (a.v > b.v) return sign;
      return a.i - b.i;
    });
    return rows.map(function (x) { return x.r; });
  }
  function pageLeaderboard() {
    if (!lb || !board) return;
    var q = lbSearch ? lbSearch.value.trim().toLowerCase() : '';
    var size = lbSize ? +lbSize.value : 0;
    var hits = sortedBoard().filter(function (r) { return !q || r.n.toLowerCase().indexOf(q) >= 0; });
    var pages = size > 0 ? Math.max(1, Math.ceil(hits.length / size)) : 1;
    lbPage = Math.min(Math.max(lbPage, 0), pages - 1);
    var from = size > 0 ? lbPage * size : 0, to = size > 0 ? from + size : hits.length;
    var body = document.createElement('tbody');
    hits.slice(from, to).forEach(function (r) { body.appendChild(boardRow(r)); });
    lb.replaceChild(body, lb.tBodies[0]);
    var label = document.getElementById('lb-page');
    if (label) label.textContent = 'page ' + (lbPage + 1) + ' of ' + pages;
    var prev = document.getElementById('lb-prev'), next = document.getElementById('lb-next');
    if (prev) prev.disabled = lbPage === 0;
    if (next) next.disabled = lbPage >= pages - 1;
    var pager = document.getElementById('lb-pager');
    if (pager) pager.classList.toggle('hidden', pages <= 1);
    var count = document.getElementById('lb-count');
    if (count) count.textContent = (q ? hits.length + ' of ' : '') + board.length + ' entrants';
    lb.setAttribute('data-matches', String(hits.length));
    lb.setAttribute('data-page', String(lbPage + 1));
    lb.setAttribute('data-pages', String(pages));
  }
  if (lb) {
    Array.prototype.forEach.call(ths, function (th, col) {
      th.tabIndex = 0;
      th.setAttribute('role', 'columnheader button');
      function sort() {
        var current = th.getAttribute('aria-sort');
        var first = th.getAttribute('data-first') || (th.getAttribute('data-type') === 'num' ? 'descending' : 'ascending');
        sortDir = current ? (current === 'ascending' ? 'descending' : 'ascending') : first;
        sortCol = col;
        Array.prototype.forEach.call(ths, function (o) { o.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', sortDir);
        lbPage = 0;
        pageLeaderboard();
      }
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (ev) {
        if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); sort(); }
      });
    });
    lb.setAttribute('data-sortable', '1');
    if (lbSearch) lbSearch.addEventListener('input', function () { lbPage = 0; pageLeaderboard(); });
    if (lbSize) lbSize.addEventListener('change', function () { lbPage = 0; pageLeaderboard(); });
    var prevBtn = document.getElementById('lb-prev'), nextBtn = document.getElementById('lb-next');
    if (prevBtn) prevBtn.addEventListener('click', function () { lbPage -= 1; pageLeaderboard(); });
    if (nextBtn) nextBtn.addEventListener('click', function () { lbPage += 1; pageLeaderboard(); });
    window.P10.load('', 'board', function (rows) {
      board = rows;
      if (!board) { window.p10NoteError && window.p10NoteError('data/board.js could not be loaded'); return; }
      pageLeaderboard();
      lb.setAttribute('data-ready', '1');
      window.P10.boardReadyAt = performance.now();  // the first view answers from here on
      done('board');
    });
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
  var loaded = { board: !lb, history: false, h2h: false };
  function done(what) {  // the page is whole once its data files are in
    loaded[what] = true;
    if (loaded.board && loaded.history && loaded.h2h) document.body.setAttribute('data-rendered', '1');
  }
  function historyChart(hist) {
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
  done('history');
  }

  /* Head to head: one cell per pair on a canvas, sorted and filtered in the page. */
  var canvas = document.getElementById('h2h-canvas');
  function heatMap(heat) {
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
    for (var k = 0; pos < raw.length; k++) {  // the pairs that met: pairs skipped, then ahead, behind, tied
      k += readVarint();
      A[k] = readVarint(); B[k] = readVarint(); T[k] = readVarint();
    }
    var pairAt = function (i, j) { return i * n - i * (i + 1) / 2 + (j - i - 1); };
    var counts = function (i, j) {  // row i against column j
      if (i < j) { var a = pairAt(i, j); return [A[a], B[a], T[a]]; }
      var b = pairAt(j, i); return [B[b], A[b], T[b]];
    };
    var STOPS = [[178, 24, 43], [240, 226, 160], [33, 102, 172]];  // 50 %: sand, not the page's white
    var colorOf = function (t) {
      var p = Math.min(Math.max(t, 0), 1) * 2, s = Math.min(Math.floor(p), 1), f = p - s;
      return [0, 1, 2].map(function (c) { return Math.round(STOPS[s][c] + (STOPS[s + 1][c] - STOPS[s][c]) * f); });
    };
    var sortSel = document.getElementById('h2h-sort');
    var filterIn = document.getElementById('h2h-filter');
    var tip = document.getElementById('h2h-tip');
    var shownLabel = document.getElementById('h2h-shown');
    var order = [], cell = 1, labels = 0, MAX_LABELLED = 40;
    if (filterIn && !filterIn.value && n > MAX_LABELLED) filterIn.value = '1-30';  // a big field: the top, with names
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
      var ctx = canvas.getContext('2d');
      labels = k <= MAX_LABELLED ? Math.ceil(Math.min(140, 12 + Math.max.apply(null, order.map(function (i) {
        ctx.font = '11px sans-serif'; return ctx.measureText(heat.names[i]).width; }).concat([0])))) : 0;
      cell = labels ? Math.max(cell, 12) : cell;
      canvas.width = Math.max(1, labels + k * cell);
      canvas.height = Math.max(1, labels + k * cell);
      ctx = canvas.getContext('2d');
      var img = ctx.createImageData(canvas.width, canvas.height);
      var px = img.data, W = canvas.width;
      for (var q = 0; q < px.length; q += 4) { px[q] = 255; px[q + 1] = 255; px[q + 2] = 255; px[q + 3] = 255; }
      for (var r = 0; r < k; r++) {
        for (var c = 0; c < k; c++) {
          var rgb;
          if (r === c) rgb = [60, 68, 84];
          else {
            var v = counts(order[r], order[c]), g = v[0] + v[1] + v[2];
            rgb = g ? colorOf(v[0] / g) : [196, 201, 210];
          }
          var gap = cell >= 6 ? 1 : 0;
          for (var y = labels + r * cell; y < labels + (r + 1) * cell - gap; y++) {
            for (var x = labels + c * cell, o = (y * W + x) * 4; x < labels + (c + 1) * cell - gap; x++, o += 4) {
              px[o] = rgb[0]; px[o + 1] = rgb[1]; px[o + 2] = rgb[2]; px[o + 3] = 255;
            }
          }
        }
      }
      ctx.putImageData(img, 0, 0);
      if (labels) {  // the names: rows at the left, columns above (turned)
        ctx.fillStyle = '#1d2330';
        ctx.font = '11px sans-serif';
        ctx.textBaseline = 'middle';
        ctx.textAlign = 'right';
        order.forEach(function (i, r) { ctx.fillText(heat.names[i], labels - 4, labels + r * cell + cell / 2, labels - 6); });
        ctx.save();
        ctx.rotate(-Math.PI / 2);
        ctx.textAlign = 'left';
        order.forEach(function (i, c) { ctx.fillText(heat.names[i], -labels + 4, labels + c * cell + cell / 2, labels - 6); });
        ctx.restore();
      }
      canvas.setAttribute('data-cells', String(k));
      canvas.setAttribute('data-labels', labels ? '1' : '0');
      if (shownLabel) shownLabel.textContent = k + ' of ' + n + ' entrants · ' + cell + ' px a cell';
    };
    var cellAt = function (ev) {
      var rect = canvas.getBoundingClientRect();
      var x = (ev.clientX - rect.left) * canvas.width / rect.width, y = (ev.clientY - rect.top) * canvas.height / rect.height;
      var c = Math.floor((x - labels) / cell), r = Math.floor((y - labels) / cell);
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
  done('h2h');
  }
  // After the leaderboard: the chart's and the heat map's data (a big field's are large).
  window.P10.load('', 'history', historyChart);
  window.P10.load('', 'h2h', heatMap);

})();
