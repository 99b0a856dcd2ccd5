/* The games list: every game of the tournament, newest first, a page at a time, read from
   the site's data files (data/<stream>-<k>.js, loaded when a page needs them), filtered by
   entrant, by pair (an entrant and an opponent) and to the games with faults. A list is a
   <section class="games-list"> with data-base (the way to the site's top folder) and, on
   an entrant's page, data-entrant (the list is of its games). */
(function () {
  'use strict';
  var P10 = window.P10 = window.P10 || {};
  var cache = {}, waiting = {};
  P10.data = function (key, value) {
    cache[key] = value;
    (waiting[key] || []).forEach(function (cb) { cb(value); });
    delete waiting[key];
  };
  P10.load = function (base, key, cb) {
    if (Object.prototype.hasOwnProperty.call(cache, key)) { cb(cache[key]); return; }
    if (waiting[key]) { waiting[key].push(cb); return; }
    waiting[key] = [cb];
    var s = document.createElement('script');
    s.src = base + 'data/' + key + '.js?v=' + (P10.version || '');
    s.onerror = function () { var w = waiting[key] || []; delete waiting[key]; w.forEach(function (f) { f(null); }); };
    document.head.appendChild(s);
  };
  var PAGE = 50;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function List(root, index) {
    this.root = root;
    this.base = root.getAttribute('data-base') || '';
    this.index = index;
    this.fixed = root.getAttribute('data-entrant') || '';
    this.slugs = {};
    var self = this;
    index.entrants.forEach(function (e) { self.slugs[e[0]] = e[1]; });
    this.replays = {};
    (index.replays || []).forEach(function (g) { self.replays[g] = 1; });
    this.page = 0;
    this.q = function (sel) { return root.querySelector(sel); };
    this.who = this.q('.f-entrant');
    this.against = this.q('.f-against');
    [this.who, this.against].forEach(function (sel) {  // the names, from data/index.js
      if (!sel) return;
      var frag = document.createDocumentFragment();
      index.entrants.forEach(function (e) {
        if (e[0] === self.fixed) return;
        var o = document.createElement('option');
        o.value = e[0];
        o.textContent = e[0];
        frag.appendChild(o);
      });
      sel.appendChild(frag);
    });
    this.faults = this.q('.f-faults');
    [this.who, this.against, this.faults].forEach(function (c) {
      if (c) c.addEventListener('change', function () { self.page = 0; self.show(); });
    });
    this.q('.f-prev').addEventListener('click', function () { self.page -= 1; self.show(); });
    this.q('.f-next').addEventListener('click', function () { self.page += 1; self.show(); });
    this.serial = 0;
  }

  List.prototype.entrantHref = function (name) {
    var s = this.slugs[name];
    return s === undefined ? null : this.base + 'entrants/' + encodeURIComponent(s) + '.html';
  };

  List.prototype.source = function () {  // [stream, filter or null]
    var who = this.fixed || (this.who ? this.who.value : '');
    var against = this.against ? this.against.value : '';
    var faults = this.faults && this.faults.checked;
    if (!who) return [faults ? 'faults' : 'all', null];
    var slug = this.slugs[who];
    if (slug === undefined) return ['', function () { return false; }];
    if (!against && !faults) return ['e-' + slug, null];
    return ['e-' + slug, function (g) {
      return (!against || g[2].indexOf(against) >= 0) && (!faults || g[6].length > 0);
    }];
  };

  List.prototype.chunks = function (stream, ks, done) {
    var self = this, got = {}, left = ks.length;
    if (!left) { done(got); return; }
    ks.forEach(function (k) {
      P10.load(self.base, stream + '-' + k, function (rows) { got[k] = rows || []; if (--left === 0) done(got); });
    });
  };

  List.prototype.show = function () {
    var self = this, src = this.source(), stream = src[0], keep = src[1];
    var total = stream ? (this.index.streams[stream] || 0) : 0, C = this.index.chunk;
    var who = this.fixed || (this.who ? this.who.value : '');
    var of = who ? total : (this.index.streams.all || 0);  // what the matches are counted among
    var serial = ++this.serial;
    this.root.setAttribute('data-loading', '1');
    if (!keep) {
      var pages = Math.max(1, Math.ceil(total / PAGE));
      this.page = Math.min(Math.max(this.page, 0), pages - 1);
      var hi = total - 1 - this.page * PAGE, lo = Math.max(0, hi - PAGE + 1), ks = [];
      for (var k = Math.floor(lo / C); hi >= 0 && k <= Math.floor(hi / C); k++) ks.push(k);
      this.chunks(stream, ks, function (got) {
        if (serial !== self.serial) return;
        var rows = [];
        for (var i = hi; i >= lo; i--) { var c = got[Math.floor(i / C)]; if (c && c[i % C]) rows.push(c[i % C]); }
        self.render(rows, total, pages, of);
      });
      return;
    }
    var all = [];
    for (var j = 0; j * C < total; j++) all.push(j);
    this.chunks(stream, all, function (got) {
      if (serial !== self.serial) return;
      var hits = [];
      for (var m = all.length - 1; m >= 0; m--) {
        var c = got[all[m]];
        for (var r = c.length - 1; r >= 0; r--) if (keep(c[r])) hits.push(c[r]);
      }
      var pages = Math.max(1, Math.ceil(hits.length / PAGE));
      self.page = Math.min(Math.max(self.page, 0), pages - 1);
      self.render(hits.slice(self.page * PAGE, (self.page + 1) * PAGE), hits.length, pages, of);
    });
  };

  List.prototype.nameNode = function (name) {
    var href = this.entrantHref(name);
    if (!href) return document.createTextNode(name);
    var a = el('a', 'entrant', name);
    a.href = href;
    return a;
  };

  List.prototype.row = function (g) {
    var tr = el('tr'), self = this;
    tr.setAttribute('data-game', g[1]);
    tr.setAttribute('data-entrants', JSON.stringify(g[2]));
    tr.setAttribute('data-faults', String(g[6].length));
    var td = el('td');
    if (this.replays[g[1]]) {
      var a = el('a', '', g[1]);
      a.href = this.base + 'replay.html#game=' + encodeURIComponent(g[1]);
      a.title = 'Watch the replay';
      td.appendChild(a);
    } else {
      td.appendChild(el('span', 'mono', g[1]));
    }
    tr.appendChild(td);
    var res = el('td'), list = el('div', 'seatlist'), forfeits = g[9] || [];
    var order = g[2].map(function (_, s) { return s; });
    order.sort(function (a, b) { return ((g[3][a] || 99) - (g[3][b] || 99)) || a - b; });
    order.forEach(function (s) {
      var span = el('span', g[3][s] === 1 ? 'p1' : '');
      span.title = 'seat ' + s;
      span.appendChild(document.createTextNode((g[3][s] === undefined ? '?' : g[3][s]) + '. '));
      span.appendChild(self.nameNode(g[2][s]));
      var extra = (g[4][s] === undefined || g[4][s] === null ? '' : g[4][s]) +
        (s < g[5].length ? ' · ph ' + (g[5][s] === null ? '' : g[5][s]) : '') + (forfeits.indexOf(s) >= 0 ? ' · forfeit' : '');
      if (extra) span.appendChild(el('span', 'muted', ' ' + extra));
      list.appendChild(span);
    });
    res.appendChild(list);
    tr.appendChild(res);
    var ft = el('td');
    g[6].forEach(function (f) {
      var t = el('span', 'tag ' + f[1], f[0] + ': ' + f[1]);
      t.title = f[2];
      ft.appendChild(t);
      ft.appendChild(document.createTextNode(' '));
    });
    tr.appendChild(ft);
    tr.appendChild(el('td', 'num', typeof g[8] === 'number' ? g[8].toFixed(2) : ''));
    return tr;
  };

  List.prototype.render = function (rows, matches, pages, total) {  // `matches` of `total` games
    var body = this.q('tbody'), self = this;
    body.textContent = '';
    rows.forEach(function (g) { body.appendChild(self.row(g)); });
    this.q('.f-page').textContent = 'page ' + (this.page + 1) + ' of ' + pages;
    this.q('.f-prev').disabled = this.page === 0;
    this.q('.f-next').disabled = this.page >= pages - 1;
    var who = this.fixed || (this.who ? this.who.value : '');
    this.q('.f-count').textContent = (matches === total ? total + (total === 1 ? ' game' : ' games') :
      matches + ' of ' + total + ' games') + (who && !this.fixed ? ' of ' + who : '') + ', newest first';
    this.root.setAttribute('data-matches', String(matches));
    this.root.setAttribute('data-page', String(this.page + 1));
    this.root.removeAttribute('data-loading');
    this.root.setAttribute('data-rendered', '1');
    if (!document.getElementById('leaderboard-table')) document.body.setAttribute('data-rendered', '1');
  };

  /* An entrant's page: its results against each opponent, from the page's data block. */
  var opp = document.getElementById('opponents-data');
  var oppTable = document.getElementById('opponents-table');
  if (opp && oppTable) {
    var oppBody = oppTable.tBodies[0], base0 = '../entrants/';
    JSON.parse(opp.textContent).forEach(function (o) {
      var tr = el('tr'), td = el('td', 'name-cell'), a = el('a', 'entrant', o[0]);
      tr.setAttribute('data-opponent', o[0]);
      a.href = base0 + encodeURIComponent(o[1]) + '.html';
      td.appendChild(a);
      tr.appendChild(td);
      [[o[2], 'num'], [o[3], 'num'], [o[4], 'num opt2'], [o[5], 'num opt2'],
       [o[2] ? Math.round(100 * o[3] / o[2]) + '%' : '—', 'num']].forEach(function (c) { tr.appendChild(el('td', c[1], String(c[0]))); });
      oppBody.appendChild(tr);
    });
  }

  P10.gameLists = [];
  P10.showGamesOf = function (name) {
    P10.gameLists.forEach(function (l) {
      if (!l.who) return;
      l.who.value = name;
      l.page = 0;
      l.show();
      if (l.root.scrollIntoView) l.root.scrollIntoView();
    });
  };
  var roots = document.querySelectorAll('section.games-list');
  if (!roots.length) return;
  var base = roots[0].getAttribute('data-base') || '';
  P10.version = roots[0].getAttribute('data-version') || '';
  P10.load(base, 'index', function (index) {
    Array.prototype.forEach.call(roots, function (root) {
      if (!index) { root.querySelector('.f-count').textContent = 'The games could not be loaded.'; return; }
      var l = new List(root, index);
      P10.gameLists.push(l);
      var fromHash = /[#&]games-of=([^&]*)/.exec(location.hash);
      if (fromHash && l.who) l.who.value = decodeURIComponent(fromHash[1]);
      l.show();
    });
  });
})();
