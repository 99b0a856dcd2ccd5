/* The live part of the results site, added by `p10-tourney serve`: polls live.json and
   updates the live standings, the progress and the newest games in place (no reload). */
(function () {
  "use strict";
  var EVERY_MS = 1000;
  var main = document.querySelector("main") || document.body;
  var panel = document.createElement("section");
  panel.className = "panel";
  panel.id = "live";
  panel.innerHTML =
    '<h2>Live <span class="muted small" id="live-state">connecting…</span></h2>' +
    '<p id="live-progress" class="hint"></p>' +
    '<div class="table-wrap"><table id="live-board"><thead><tr><th>#</th><th>entrant</th>' +
    '<th class="num">TrueSkill μ</th><th class="num">σ</th><th class="num">μ − 3σ</th><th class="num">games</th>' +
    '<th class="num">wins</th><th class="num">mean place</th></tr></thead><tbody></tbody></table></div>' +
    '<h3>Newest games</h3><ol id="live-games" class="small"></ol>' +
    '<p class="hint" id="live-published"></p>';
  main.insertBefore(panel, main.firstChild);

  function cell(tr, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
  }

  function render(s) {
    var p = s.progress || {};
    document.getElementById("live-state").textContent = p.running ? "playing" : "idle";
    var total = p.total ? " of " + p.total : "";
    document.getElementById("live-progress").textContent =
      s.games + total + " games" + (p.running ? " · playing now" : "") + (p.forever ? " · league rounds until stopped" : "");
    var body = document.querySelector("#live-board tbody");
    body.textContent = "";
    s.board.forEach(function (r, i) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-entrant", r.entrant);
      tr.setAttribute("data-games", String(r.games));
      cell(tr, String(i + 1), "num");
      cell(tr, r.entrant + (r.retired ? " (retired)" : ""), "name-cell");
      cell(tr, r.mu.toFixed(2), "num");
      cell(tr, r.sigma.toFixed(2), "num");
      cell(tr, r.conservative.toFixed(2), "num");
      cell(tr, String(r.games), "num");
      cell(tr, String(r.wins), "num");
      cell(tr, r.games ? r.mean_place.toFixed(2) : "—", "num");
      body.appendChild(tr);
    });
    var list = document.getElementById("live-games");
    list.textContent = "";
    s.newest.forEach(function (g) {
      var li = document.createElement("li");
      li.setAttribute("data-game", g.game);
      var order = g.seats.map(function (e, k) { return [g.places[k], e]; })
        .sort(function (a, b) { return a[0] - b[0]; })
        .map(function (x) { return x[0] + ". " + x[1]; }).join("  ");
      li.textContent = g.game + ": " + order + (g.reason && g.reason !== "finished" ? " (" + g.reason + ")" : "");
      list.appendChild(li);
    });
    panel.setAttribute("data-games", String(s.games));
    document.getElementById("live-published").textContent = s.published === null ? "" :
      "The leaderboard below (with its confidence intervals) is as published after " + s.published +
      " games; reload to see the newest publication.";
  }

  function poll() {
    var req = new XMLHttpRequest();
    req.open("GET", "live.json?t=" + Date.now());
    req.onload = function () {
      if (req.status === 200) {
        try { render(JSON.parse(req.responseText)); } catch (e) { /* a torn answer: the next poll */ }
      }
      setTimeout(poll, EVERY_MS);
    };
    req.onerror = function () {
      document.getElementById("live-state").textContent = "server unreachable";
      setTimeout(poll, EVERY_MS * 3);
    };
    req.send();
  }
  poll();
})();
