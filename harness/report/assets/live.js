/* The live part of the results site, added by `p10-tourney serve`: polls live.json and
   updates in place (no reload) whether the run is playing or stopped (from its heartbeat),
   the published ranking with games counted live, and the newest games. */
(function () {
  "use strict";
  var EVERY_MS = 1000;
  var main = document.querySelector("main") || document.body;
  var panel = document.createElement("section");
  panel.className = "panel";
  panel.id = "live";
  panel.innerHTML =
    '<h2>Live <span class="live-state" id="live-state">connecting…</span></h2>' +
    '<p id="live-progress" class="hint"></p>' +
    '<div class="table-wrap"><table id="live-board"><thead><tr><th class="num">#</th><th>Entrant</th>' +
    '<th class="num decides" id="live-decides" title="The published leaderboard\'s deciding column">rating</th>' +
    '<th class="num">Games now</th><th class="num">Wins now</th></tr></thead><tbody></tbody></table></div>' +
    '<h3>Newest games</h3><ol id="live-games" class="small"></ol>' +
    '<p class="hint" id="live-published"></p>';
  main.insertBefore(panel, main.firstChild);

  function cell(tr, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
  }
  function when(t) {
    var d = new Date(t * 1000);
    return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
  }
  function fixed(v) { return v === null || v === undefined ? "—" : (+v).toFixed(2); }

  function renderState(s) {
    var p = s.progress || {}, run = s.run || {}, state = run.state || "idle";
    var el = document.getElementById("live-state");
    var text = { playing: "playing", finished: "not running", idle: "no run yet" }[state] || state;
    if (state === "stopped") {
      text = "stopped, since " + when(run.since) + " (no heartbeat for " + Math.round(run.silent_s) + " s)";
    } else if (state === "finished" && run.since) {
      text = "not running, since " + when(run.since);
    }
    el.textContent = text;
    el.className = "live-state " + state;
    panel.setAttribute("data-state", state);
    var total = p.total ? " of " + p.total : "";
    document.getElementById("live-progress").textContent =
      s.games + total + " games" + (state === "playing" ? " · playing now" : "") +
      (p.forever ? " · league rounds until stopped" : "");
  }

  function render(s) {
    renderState(s);
    document.getElementById("live-decides").textContent = s.decides || "rating";
    var body = document.querySelector("#live-board tbody");
    body.textContent = "";
    s.board.forEach(function (r) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-entrant", r.entrant);
      tr.setAttribute("data-games", String(r.games));
      cell(tr, r.rank === null ? "" : String(r.rank), "num");
      cell(tr, r.entrant + (r.retired ? " (retired)" : "") + (r.rank === null ? " (not yet rated)" : ""), "name-cell");
      cell(tr, fixed(r.value) + (r.low !== null && r.low !== undefined ? " [" + fixed(r.low) + ", " + fixed(r.high) + "]" : ""),
           "num decides");
      cell(tr, String(r.games), "num");
      cell(tr, String(r.wins), "num");
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
    document.getElementById("live-published").textContent = s.published === null || s.published === undefined ? "" :
      "Ranks and ratings are the leaderboard's as published after " + s.published +
      " games (the same below); games and wins are counted live. Reload to see the newest publication.";
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
      var el = document.getElementById("live-state");
      el.textContent = "server unreachable";
      el.className = "live-state stopped";
      setTimeout(poll, EVERY_MS * 3);
    };
    req.send();
  }
  poll();
})();
