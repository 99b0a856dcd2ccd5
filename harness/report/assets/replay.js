/* Replay viewer: step through a game hand by hand and turn by turn.
   Each game's frames are in replays/<game>.js, which sets window.P10_REPLAYS[game];
   the file is loaded with a <script> element, so this works from file:// too.
   The address may say what to show: #game=g000003&frame=12&keys=ArrowRight,ArrowDown
   (keys are pressed in order once the game is loaded). */
(function () {
  'use strict';

  var $ = function (id) { return document.getElementById(id); };
  var index = [];
  try { index = JSON.parse($('replay-index').textContent || '[]'); } catch (e) { index = []; }
  var COLOR_NAMES = { R: 'Red', B: 'Blue', G: 'Green', Y: 'Yellow' };
  var CARD_RE = /^(?:[RBGY](?:1[0-2]|[1-9])|W|S)$/;
  var TOKEN_RE = /(\b(?:[RBGY](?:1[0-2]|[1-9])|W|S)\b)/;

  var st = { game: null, data: null, frames: [], starts: [], pos: 0 };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  function card(c, small) {
    var e = el('span', 'pcard' + (small ? ' small' : ''));
    if (!CARD_RE.test(c)) { e.className += ' back'; e.textContent = c; return e; }
    var k = c.charAt(0);
    e.className += ' ' + k;
    if (c === 'W') { e.textContent = 'W'; e.title = 'Wild'; }
    else if (c === 'S') { e.textContent = 'S'; e.title = 'Skip'; }
    else { e.textContent = c.slice(1); e.title = COLOR_NAMES[k] + ' ' + c.slice(1); }
    e.setAttribute('data-card', c);
    return e;
  }
  function cardRow(str, small) {
    var row = el('div', 'cardrow');
    (str ? String(str).split(' ') : []).forEach(function (c) { if (c) row.appendChild(card(c, small)); });
    return row;
  }
  function richText(node, text) {
    String(text || '').split(TOKEN_RE).forEach(function (part, i) {
      if (i % 2 === 1) node.appendChild(card(part, true));
      else if (part) node.appendChild(document.createTextNode(part));
    });
  }

  function expand(raw) {
    var out = [];
    var cur = { hands: [], draw: null, discardN: 0, discard: '', table: [], players: [] };
    (raw.frames || []).forEach(function (c) {
      if (c.H) cur.hands = c.H.map(function (h, i) { return h === null ? cur.hands[i] : h; });
      if ('d' in c) cur.draw = c.d;
      if (c.D) { cur.discardN = c.D[0]; cur.discard = c.D[1]; }
      if (c.T) cur.table = c.T;
      if (c.P) cur.players = c.P.map(function (p, i) { return p === null ? cur.players[i] : p; });
      out.push({
        hand: c.h, turn: c.t, seat: c.s, text: c.x, hands: cur.hands, draw: cur.draw,
        discardN: cur.discardN, discard: cur.discard, table: cur.table, players: cur.players
      });
    });
    return out;
  }

  function playerName(seat) {
    var names = (st.data && st.data.players) || [];
    return seat !== null && seat !== undefined && names[seat] !== undefined ? names[seat] : 'seat ' + seat;
  }

  // Cards the mover holds now that they did not hold one frame before (same hand only).
  function drawnCards(f, prev) {
    if (!prev || prev.hand !== f.hand || f.seat === null || f.seat === undefined) return [];
    var before = {};
    (prev.hands[f.seat] || '').split(' ').forEach(function (c) { if (c) before[c] = (before[c] || 0) + 1; });
    var out = [];
    (f.hands[f.seat] || '').split(' ').forEach(function (c) {
      if (!c) return;
      if (before[c]) before[c] -= 1; else out.push(c);
    });
    return out;
  }

  function handIndex(pos) {
    var k = 0;
    for (var i = 0; i < st.starts.length; i++) if (st.starts[i] <= pos) k = i;
    return k;
  }

  function go(pos) {
    if (!st.frames.length) return;
    st.pos = Math.max(0, Math.min(st.frames.length - 1, pos | 0));
    render();
  }
  function step(d) { go(st.pos + d); }
  function nextHand() {
    var k = handIndex(st.pos);
    go(k + 1 < st.starts.length ? st.starts[k + 1] : st.frames.length - 1);
  }
  function prevHand() {
    var k = handIndex(st.pos);
    go(st.pos > st.starts[k] ? st.starts[k] : (k > 0 ? st.starts[k - 1] : 0));
  }

  function render() {
    var f = st.frames[st.pos];
    var n = st.frames.length;
    var viewer = $('viewer');
    viewer.setAttribute('data-frame', String(st.pos));
    viewer.setAttribute('data-hand', String(f.hand));
    viewer.setAttribute('data-game', st.game);

    var pos = clear($('position'));
    pos.appendChild(document.createTextNode('Hand '));
    pos.appendChild(el('b', null, f.hand));
    pos.appendChild(document.createTextNode(' · turn '));
    pos.appendChild(el('b', null, f.turn === null || f.turn === undefined ? '–' : f.turn));
    pos.appendChild(document.createTextNode(' · frame '));
    pos.appendChild(el('b', 'frame-no', st.pos + 1));
    pos.appendChild(document.createTextNode(' of ' + n));
    var scrub = $('scrub');
    scrub.max = String(n - 1);
    scrub.value = String(st.pos);
    $('btn-first').disabled = $('btn-prev').disabled = $('btn-prev-hand').disabled = st.pos === 0;
    $('btn-last').disabled = $('btn-next').disabled = $('btn-next-hand').disabled = st.pos === n - 1;

    var action = clear($('action-text'));
    var who = f.seat !== null && f.seat !== undefined ? playerName(f.seat) : null;
    if (who !== null && String(f.text || '').indexOf(who) !== 0) action.appendChild(el('b', null, who + ':'));
    richText(action, f.text || (st.pos === 0 ? 'The cards are dealt.' : ''));
    faultsAt(st.pos).forEach(function (ft) {
      var line = el('div', 'fault bad', faultText(ft));
      line.setAttribute('data-fault-frame', String(ft.frame));
      action.appendChild(line);
    });
    var gained = drawnCards(f, st.pos > 0 ? st.frames[st.pos - 1] : null);
    if (gained.length === 1 && !new RegExp('\\b' + gained[0] + '\\b').test(f.text || '')) {
      action.appendChild(el('span', 'muted', '\u00a0· card drawn:'));
      action.appendChild(card(gained[0], true));
    }

    var draw = clear($('draw-pile'));
    var back = el('span', 'pcard back', f.draw === null || f.draw === undefined ? '?' : f.draw);
    back.title = 'Cards left in the draw pile';
    draw.appendChild(back);
    draw.appendChild(el('span', 'small muted', '\u00a0' + (f.draw === null || f.draw === undefined ? '' : f.draw + ' cards')));

    $('discard-title').textContent = 'Discard pile (' + (f.discardN || 0) + ')';
    var disc = clear($('discard-pile'));
    var cards = f.discard ? f.discard.split(' ') : [];
    if (f.discardN > cards.length) disc.appendChild(el('span', 'muted', '…\u00a0'));
    cards.forEach(function (c, i) {
      var e = card(c);
      if (i === cards.length - 1) { e.style.outline = '2px solid #1d2330'; e.style.outlineOffset = '1px'; e.title += ' (top)'; }
      disc.appendChild(e);
    });
    if (!cards.length) disc.appendChild(el('span', 'empty', 'empty'));

    var melds = clear($('table-melds'));
    if (!f.table.length) melds.appendChild(el('div', 'empty', 'No melds yet this hand.'));
    f.table.forEach(function (m) {
      var box = el('div', 'meld');
      box.setAttribute('data-meld', String(m[0]));
      box.appendChild(el('span', 'label', playerName(m[1]) + ' · ' + m[2] + ' · #' + m[0]));
      box.appendChild(cardRow(m[3], true));
      melds.appendChild(box);
    });

    var players = clear($('players'));
    var count = Math.max(f.hands.length, f.players.length, (st.data.players || []).length);
    for (var s = 0; s < count; s++) {
      var p = f.players[s] || [];
      var box = el('div', 'player' + (s === f.seat ? ' active' : ''));
      box.setAttribute('data-seat', String(s));
      var head = el('div', 'head');
      head.appendChild(el('span', 'name', playerName(s)));
      head.appendChild(el('span', 'muted small', 'seat ' + s));
      if (p[1]) head.appendChild(el('span', 'badge', 'phase laid'));
      if (p[4]) head.appendChild(el('span', 'badge skip', 'skip pending'));
      box.appendChild(head);
      var meta = el('div', 'meta');
      meta.appendChild(el('span', null, 'phase ' + (p[0] === undefined || p[0] === null ? '?' : p[0])));
      meta.appendChild(el('span', null, (p[2] === undefined ? (f.hands[s] ? f.hands[s].split(' ').length : 0) : p[2]) + ' cards'));
      meta.appendChild(el('span', null, (p[3] === undefined || p[3] === null ? 0 : p[3]) + ' points'));
      box.appendChild(meta);
      var row = cardRow(f.hands[s] || '');
      if (s === f.seat && gained.length === 1) {
        var cs = row.querySelectorAll('[data-card="' + gained[0] + '"]');
        if (cs.length) cs[cs.length - 1].classList.add('new');
      }
      box.appendChild(row);
      players.appendChild(box);
    }

    renderLog(f);
    renderScores(f);
    try {
      history.replaceState(null, '', '#game=' + encodeURIComponent(st.game) + '&frame=' + st.pos);
    } catch (e) { /* some browsers refuse for file:// pages; the viewer works without it */ }
  }

  // The faults that led to frame `pos` (a replay with fault lines knows their frames).
  function faultsAt(pos) {
    return ((st.data && st.data.faults) || []).filter(function (ft) { return ft.frame === pos; });
  }
  function faultText(ft) {
    var s = 'Fault: ' + playerName(ft.seat) + ' — ' + ft.kind + (ft.strike ? ' (strike ' + ft.strike + ')' : '');
    s += ft.reason ? ': ' + ft.reason : '';
    if (ft.instead) s += ' · played instead: ' + ft.instead;
    return s;
  }

  function renderLog(f) {
    var log = clear($('hand-log'));
    var k = handIndex(st.pos);
    var start = st.starts[k];
    var first = Math.max(start, st.pos - 200);
    for (var i = first; i <= st.pos; i++) {
      var fr = st.frames[i];
      var li = el('li', (i === st.pos ? 'cur' : '') + (faultsAt(i).length ? ' fault' : ''));
      var name = fr.seat !== null && fr.seat !== undefined ? playerName(fr.seat) : null;
      if (name !== null && String(fr.text || '').indexOf(name) !== 0) li.appendChild(el('b', null, name + ': '));
      li.appendChild(document.createTextNode(fr.text || ''));
      li.setAttribute('data-i', String(i));
      li.addEventListener('click', function () { go(+this.getAttribute('data-i')); });
      log.appendChild(li);
    }
    log.scrollTop = log.scrollHeight;
  }

  function renderScores(f) {
    var table = clear($('score-table'));
    var ends = st.data.hand_ends || [];
    var names = st.data.players || [];
    var thead = el('thead');
    var hr = el('tr');
    hr.appendChild(el('th', null, 'Hand'));
    names.forEach(function (nm) { hr.appendChild(el('th', 'num', nm)); });
    thead.appendChild(hr);
    table.appendChild(thead);
    var tbody = el('tbody');
    ends.forEach(function (h) {
      if (h.start > st.pos) return;
      var done = st.pos >= h.end;
      var tr = el('tr', h.hand === f.hand ? 'cur' : '');
      tr.appendChild(el('td', null, h.hand));
      names.forEach(function (_, s) {
        var td = el('td', 'num');
        if (done) {
          td.textContent = String(h.scores[s] === undefined || h.scores[s] === null ? '–' : h.scores[s]);
          if (h.points && h.points[s] !== null && h.points[s] !== undefined) td.appendChild(el('span', 'muted', ' +' + h.points[s]));
          if (h.laid && h.laid[s]) { var ok = el('span', 'good', ' ✓'); ok.title = 'laid the phase this hand'; td.appendChild(ok); }
        } else {
          td.textContent = '…';
          td.className += ' muted';
        }
        tr.appendChild(td);
      });
      tr.addEventListener('click', function () { go(h.start); });
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
  }

  function renderInfo() {
    var info = clear($('game-info'));
    var d = st.data;
    var parts = ['seed ' + d.seed];
    if (d.rules) parts.push(d.rules);
    info.appendChild(el('div', null, parts.join(' · ')));
    if (d.result && d.result.places) {
      var order = d.result.places.map(function (p, s) { return [p, s]; }).sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
      info.appendChild(el('div', null, 'Result: ' + order.map(function (o) {
        var sc = d.result.scores ? ' (' + d.result.scores[o[1]] + ')' : '';
        return o[0] + '. ' + playerName(o[1]) + sc;
      }).join(', ')));
    }
    (d.faults || []).forEach(function (f) {
      if (f.frame === undefined || f.frame === null) {  // an older replay: the game's record, no turn
        info.appendChild(el('div', 'bad', 'Fault: ' + playerName(f.seat) + ' — ' + f.kind + (f.reason ? ': ' + f.reason : '')));
        return;
      }
      var row = el('div', 'bad');
      var link = el('a', 'fault-link', 'Hand ' + f.hand + ', turn ' + f.turn);
      link.href = '#game=' + encodeURIComponent(st.game) + '&frame=' + f.frame;
      link.setAttribute('data-frame', String(f.frame));
      link.addEventListener('click', function (ev) { ev.preventDefault(); go(f.frame); });
      row.appendChild(link);
      row.appendChild(document.createTextNode(' · ' + faultText(f)));
      info.appendChild(row);
    });
  }

  function show(id, data, after) {
    st.game = id;
    st.data = data;
    st.frames = expand(data);
    st.starts = [];
    st.frames.forEach(function (f, i) { if (i === 0 || f.hand !== st.frames[i - 1].hand) st.starts.push(i); });
    st.pos = 0;
    $('game-select').value = id;
    renderInfo();
    if (st.frames.length) render();
    if (after) after();
  }

  function load(id, after) {
    var entry = null;
    for (var i = 0; i < index.length; i++) if (index[i].game === id) entry = index[i];
    if (!entry) return;
    window.P10_REPLAYS = window.P10_REPLAYS || {};
    if (window.P10_REPLAYS[id]) { show(id, window.P10_REPLAYS[id], after); return; }
    $('action-text').textContent = 'Loading ' + id + '…';
    var s = document.createElement('script');
    s.src = entry.file;
    s.onload = function () {
      if (window.P10_REPLAYS[id]) show(id, window.P10_REPLAYS[id], after);
      else $('action-text').textContent = 'The replay of ' + id + ' is empty.';
    };
    s.onerror = function () { $('action-text').textContent = 'Could not load ' + entry.file + '.'; };
    document.head.appendChild(s);
  }

  function onKey(ev) {
    var t = ev.target;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (t && t.tagName && /^(SELECT|TEXTAREA)$/.test(t.tagName)) return;
    if (t && t.tagName === 'INPUT' && t.id !== 'scrub') return;
    switch (ev.key) {
      case 'ArrowRight': step(1); break;
      case 'ArrowLeft': step(-1); break;
      case 'ArrowDown': case 'PageDown': nextHand(); break;
      case 'ArrowUp': case 'PageUp': prevHand(); break;
      case 'Home': go(0); break;
      case 'End': go(st.frames.length - 1); break;
      default: return;
    }
    ev.preventDefault();
  }

  function params() {
    var out = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      if (!kv) return;
      var i = kv.indexOf('=');
      var k = decodeURIComponent(i < 0 ? kv : kv.slice(0, i));
      out[k] = i < 0 ? '' : decodeURIComponent(kv.slice(i + 1));
    });
    return out;
  }

  var select = $('game-select');
  index.forEach(function (r) {
    var label = r.game + ' — ' + (r.players || []).join(', ');
    if (r.faults && r.faults.length) label += ' · faults: ' + r.faults.join(', ');
    var o = el('option', null, label);
    o.value = r.game;
    select.appendChild(o);
  });
  select.addEventListener('change', function () {
    load(select.value);
    select.blur();  // so the arrow keys step through the new game instead of changing it
  });
  $('scrub').addEventListener('input', function () { go(+this.value); });
  $('btn-first').addEventListener('click', function () { go(0); });
  $('btn-prev').addEventListener('click', function () { step(-1); });
  $('btn-next').addEventListener('click', function () { step(1); });
  $('btn-prev-hand').addEventListener('click', prevHand);
  $('btn-next-hand').addEventListener('click', nextHand);
  $('btn-last').addEventListener('click', function () { go(st.frames.length - 1); });
  document.addEventListener('keydown', onKey);

  function ready() { document.body.setAttribute('data-rendered', '1'); }
  if (!index.length) {
    $('action-text').textContent = 'No replays to show.';
    ['btn-first', 'btn-prev', 'btn-next', 'btn-prev-hand', 'btn-next-hand', 'btn-last'].forEach(function (b) { $(b).disabled = true; });
    select.disabled = true;
    ready();
    return;
  }
  var p = params();
  var start = index[0].game;
  for (var i = 0; i < index.length; i++) if (index[i].game === p.game) start = p.game;
  load(start, function () {
    if (p.frame !== undefined && p.frame !== '') go(parseInt(p.frame, 10) || 0);
    if (p.keys) {
      p.keys.split(',').forEach(function (k) {
        if (k) document.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
      });
    }
    ready();
  });
})();
