/* Leaderboard page: sortable tables, chart legend highlighting, the games filter. */
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
      }
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (ev) {
        if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); sort(); }
      });
    });
    table.setAttribute('data-sortable', '1');
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), makeSortable);

  var chart = document.getElementById('history-chart');
  var legend = document.getElementById('history-legend');
  if (chart && legend) {
    Array.prototype.forEach.call(legend.querySelectorAll('.item'), function (item) {
      var i = item.getAttribute('data-i');
      item.addEventListener('mouseenter', function () {
        chart.classList.add('dim');
        Array.prototype.forEach.call(chart.querySelectorAll('[data-i="' + i + '"]'), function (s) { s.classList.add('on'); });
      });
      item.addEventListener('mouseleave', function () {
        chart.classList.remove('dim');
        Array.prototype.forEach.call(chart.querySelectorAll('.on'), function (s) { s.classList.remove('on'); });
      });
    });
    chart.setAttribute('data-rendered', '1');
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
