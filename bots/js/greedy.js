#!/usr/bin/env node
// js-greedy: a greedy Phase 10 bot speaking the p10/1 protocol (JSON lines on
// stdin/stdout). Node 18+ and no dependencies: run it as `node bots/js/greedy.js`.
//
// How it plays:
//   draw  - takes the discard when it is a Wild, when it brings the current phase
//           closer (fewer missing cards), or, once laid, when it can be hit at once;
//           otherwise draws from the deck.
//   play  - lays its phase as soon as it can (its own finder, fewest Wilds, melds
//           lengthened with spare natural cards), hits every card it can onto melds
//           already on the table, then discards: a Skip first (naming the leading
//           player who may be named), else the card its best partial layout needs
//           least, the highest penalty first among equals. Never a Wild while it
//           holds anything else.
// It never crashes on a message: any internal error falls back to drawing from the
// deck or discarding the first card. It writes its log to stderr.
"use strict";

const readline = require("readline");

const NAME = "js-greedy";
const VERSION = "1.0";

const LETTERS = ["R", "B", "G", "Y"];
const COLOR_NAMES = { R: "red", B: "blue", G: "green", Y: "yellow" };
const NAME_TO_LETTER = { red: "R", blue: "B", green: "G", yellow: "Y" };

function log(...parts) {
  try {
    process.stderr.write(`[${NAME}] ${parts.join(" ")}\n`);
  } catch (_) {
    // stderr gone: nothing to do.
  }
}

// ---------------------------------------------------------------- cards (R1)

// "R5" -> {kind:"n", c:"R", n:5}; "W" -> {kind:"W"}; "S" -> {kind:"S"}; junk -> null.
function parseCard(s) {
  if (s === "W") return { kind: "W" };
  if (s === "S") return { kind: "S" };
  if (typeof s !== "string") return null;
  const m = /^([RBGY])(\d{1,2})$/.exec(s);
  if (!m) return null;
  const n = Number(m[2]);
  if (n < 1 || n > 12) return null;
  return { kind: "n", c: m[1], n };
}

function cardName(c, n) {
  return c + String(n);
}

// R1.3 penalty points.
function penalty(s) {
  if (s === "W") return 25;
  if (s === "S") return 15;
  const p = parseCard(s);
  if (!p) return 0;
  return p.n >= 10 ? 10 : 5;
}

// Remove one copy of each card in `cards` from `hand` (a new array is returned).
function removeCards(hand, cards) {
  const out = hand.slice();
  for (const c of cards) {
    const i = out.indexOf(c);
    if (i >= 0) out.splice(i, 1);
  }
  return out;
}

// Counts of natural cards: counts[colourIndex][number], plus Wilds and Skips.
function countHand(hand) {
  const counts = LETTERS.map(() => new Array(13).fill(0));
  let wilds = 0;
  let skips = 0;
  for (const s of hand) {
    const p = parseCard(s);
    if (!p) continue;
    if (p.kind === "W") wilds++;
    else if (p.kind === "S") skips++;
    else counts[LETTERS.indexOf(p.c)][p.n]++;
  }
  return { counts, wilds, skips };
}

// ---------------------------------------------------------------- phase finder (R4, R5)
//
// A layout assigns natural cards to each meld the phase names; a meld's "gap" is the
// number of cards it still lacks (filled by Wilds when there are enough). Identical
// cards are interchangeable (R1.2), so the search works on counts, not on cards.

const KIND_ORDER = { run: 0, set: 1, color: 2 };

function normaliseReqs(phase) {
  const melds = phase && Array.isArray(phase.melds) ? phase.melds : [];
  const reqs = [];
  for (const m of melds) {
    if (!m || !(m.kind in KIND_ORDER)) continue;
    const size = Number(m.size);
    if (!Number.isInteger(size) || size < 1) continue;
    reqs.push({ kind: m.kind, size });
  }
  // Runs first (one card per number), then sets, then colours (which take whatever of
  // their colour is left); larger melds first within a kind.
  reqs.sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || b.size - a.size);
  return reqs;
}

// Pick one natural of number n, preferring colours not reserved for a colour meld.
function pickColour(counts, n, avoid) {
  let fallback = -1;
  for (let ci = 0; ci < 4; ci++) {
    if (counts[ci][n] > 0) {
      if (!avoid[ci]) return ci;
      if (fallback < 0) fallback = ci;
    }
  }
  return fallback;
}

// Candidate melds for one requirement given the cards left. Each candidate is
// {key, picks:[[ci,n],...], gap, ...params}. `partial` adds an empty candidate when
// no candidate holds a natural card (the layout then just counts the meld as missing).
function candidates(req, counts, avoid, partial) {
  const out = [];
  const size = req.size;
  if (req.kind === "set") {
    for (let n = 1; n <= 12; n++) {
      const picks = [];
      const local = counts.map((row) => row[n]);
      // Non-reserved colours first.
      for (let pass = 0; pass < 2 && picks.length < size; pass++) {
        for (let ci = 0; ci < 4 && picks.length < size; ci++) {
          if (!!avoid[ci] !== (pass === 1)) continue;
          while (local[ci] > 0 && picks.length < size) {
            local[ci]--;
            picks.push([ci, n]);
          }
        }
      }
      if (picks.length > 0) out.push({ key: n, kind: "set", number: n, picks, gap: size - picks.length });
    }
  } else if (req.kind === "run") {
    for (let low = 1; low + size - 1 <= 12; low++) {
      const picks = [];
      const slots = [];
      for (let n = low; n < low + size; n++) {
        const ci = pickColour(counts, n, avoid);
        if (ci >= 0) {
          picks.push([ci, n]);
          slots.push(ci);
        } else {
          slots.push(-1);
        }
      }
      if (picks.length > 0) {
        out.push({ key: low, kind: "run", low, high: low + size - 1, picks, slots, gap: size - picks.length });
      }
    }
  } else if (req.kind === "color") {
    for (let ci = 0; ci < 4; ci++) {
      const picks = [];
      // Low numbers first: they cost the fewest points, so the high ones are the
      // spare cards that get discarded.
      for (let n = 1; n <= 12 && picks.length < size; n++) {
        for (let k = 0; k < counts[ci][n] && picks.length < size; k++) picks.push([ci, n]);
      }
      if (picks.length > 0) out.push({ key: ci, kind: "color", ci, picks, gap: size - picks.length });
    }
  }
  if (partial && out.length === 0) out.push({ key: 0, kind: req.kind, empty: true, picks: [], gap: size });
  return out;
}

// Best layout of `reqs` from the hand counts. In "lay" mode every meld must hold a
// natural and the total gap must be covered by Wilds; otherwise the layout with the
// fewest missing cards is returned. Result: {missing, gap, melds, counts} or null.
function bestLayout(hand, phase, mode) {
  const reqs = normaliseReqs(phase);
  if (reqs.length === 0) return null;
  const base = countHand(hand);
  const wilds = base.wilds;
  const partial = mode !== "lay";
  const colourReqs = reqs.filter((r) => r.kind === "color").length;

  let best = null;
  // Try each assignment of target colours to the colour melds, so that sets and runs
  // leave those colours alone when they can (4 ** k assignments, k is 0..2 in practice).
  const assignments = [];
  const total = Math.pow(4, Math.min(colourReqs, 3));
  for (let a = 0; a < total; a++) {
    const avoid = [false, false, false, false];
    let x = a;
    for (let k = 0; k < Math.min(colourReqs, 3); k++) {
      avoid[x % 4] = true;
      x = Math.floor(x / 4);
    }
    assignments.push(avoid);
  }

  for (const avoid of assignments) {
    const counts = base.counts.map((row) => row.slice());
    const chosen = [];
    const rec = (i, gap, empties, prevKey) => {
      const missingNow = Math.max(0, gap - wilds);
      if (best && (missingNow > best.missing || (missingNow === best.missing && gap >= best.gap))) return;
      if (i === reqs.length) {
        const missing = Math.max(missingNow, empties);
        if (!partial && (gap > wilds || empties > 0)) return;
        if (!best || missing < best.missing || (missing === best.missing && gap < best.gap)) {
          best = {
            missing,
            gap,
            melds: chosen.map((c) => c),
            counts: counts.map((row) => row.slice()),
          };
        }
        return;
      }
      const req = reqs[i];
      const same = i > 0 && reqs[i - 1].kind === req.kind && reqs[i - 1].size === req.size;
      for (const cand of candidates(req, counts, avoid, partial)) {
        if (same && cand.key < prevKey) continue; // identical melds: one order only
        if (!partial && cand.picks.length === 0) continue;
        for (const [ci, n] of cand.picks) counts[ci][n]--;
        chosen.push(Object.assign({ size: req.size }, cand));
        rec(i + 1, gap + cand.gap, empties + (cand.picks.length === 0 ? 1 : 0), cand.key);
        chosen.pop();
        for (const [ci, n] of cand.picks) counts[ci][n]++;
      }
    };
    rec(0, 0, 0, -1);
  }
  if (best) best.wilds = wilds;
  return best;
}

// Cards missing to complete the phase (0: it can be laid now).
function missingCards(hand, phase) {
  const b = bestLayout(hand, phase, "partial");
  return b ? b.missing : 99;
}

// Turn a complete layout into the cards of a lay, lengthening the melds with spare
// natural cards (R5.4). Returns {lay: [[cards]...], used: [cards]}.
function buildLay(layout) {
  const counts = layout.counts.map((row) => row.slice());
  const melds = [];
  for (const m of layout.melds) {
    if (m.kind === "run") {
      const cards = [];
      for (let k = 0; k < m.slots.length; k++) {
        const ci = m.slots[k];
        cards.push(ci >= 0 ? cardName(LETTERS[ci], m.low + k) : "W");
      }
      melds.push({ kind: "run", low: m.low, high: m.high, cards });
    } else if (m.kind === "set") {
      const cards = m.picks.map(([ci, n]) => cardName(LETTERS[ci], n));
      for (let k = 0; k < m.gap; k++) cards.push("W");
      melds.push({ kind: "set", number: m.number, cards });
    } else {
      const cards = m.picks.map(([ci, n]) => cardName(LETTERS[ci], n));
      for (let k = 0; k < m.gap; k++) cards.push("W");
      melds.push({ kind: "color", ci: m.ci, cards });
    }
  }
  // Spare naturals: run ends first (each may open the next), then sets, then colours.
  for (const m of melds) {
    if (m.kind !== "run") continue;
    let grown = true;
    while (grown) {
      grown = false;
      if (m.low > 1) {
        const ci = pickColour(counts, m.low - 1, [false, false, false, false]);
        if (ci >= 0) {
          counts[ci][m.low - 1]--;
          m.low--;
          m.cards.unshift(cardName(LETTERS[ci], m.low));
          grown = true;
        }
      }
      if (m.high < 12) {
        const ci = pickColour(counts, m.high + 1, [false, false, false, false]);
        if (ci >= 0) {
          counts[ci][m.high + 1]--;
          m.high++;
          m.cards.push(cardName(LETTERS[ci], m.high));
          grown = true;
        }
      }
    }
  }
  for (const m of melds) {
    if (m.kind !== "set") continue;
    for (let ci = 0; ci < 4; ci++) {
      while (counts[ci][m.number] > 0) {
        counts[ci][m.number]--;
        m.cards.push(cardName(LETTERS[ci], m.number));
      }
    }
  }
  for (const m of melds) {
    if (m.kind !== "color") continue;
    for (let n = 1; n <= 12; n++) {
      while (counts[m.ci][n] > 0) {
        counts[m.ci][n]--;
        m.cards.push(cardName(LETTERS[m.ci], n));
      }
    }
  }
  return melds;
}

// ---------------------------------------------------------------- hits (R7)

function tableMelds(table) {
  const out = [];
  if (!Array.isArray(table)) return out;
  for (const t of table) {
    if (!t || typeof t !== "object" || t.id === undefined || t.id === null) continue;
    const cards = Array.isArray(t.cards) ? t.cards : [];
    const naturals = cards.map(parseCard).filter((p) => p && p.kind === "n");
    if (t.kind === "set") {
      let number = Number(t.number);
      if (!(number >= 1 && number <= 12) && naturals.length) number = naturals[0].n;
      if (number >= 1 && number <= 12) out.push({ id: t.id, kind: "set", number });
    } else if (t.kind === "run") {
      let low = Number(t.low);
      let high = Number(t.high);
      if (!(low >= 1 && high <= 12 && low <= high)) {
        // Derive the ends from the first natural and its place (cards are low to high).
        const i = cards.findIndex((s) => {
          const p = parseCard(s);
          return p && p.kind === "n";
        });
        if (i < 0) continue;
        low = parseCard(cards[i]).n - i;
        high = low + cards.length - 1;
      }
      out.push({ id: t.id, kind: "run", low, high });
    } else if (t.kind === "color") {
      let letter = NAME_TO_LETTER[t.color];
      if (!letter && naturals.length) letter = naturals[0].c;
      if (letter) out.push({ id: t.id, kind: "color", c: letter });
    }
  }
  return out;
}

// Does natural card p fit meld m? Returns false, or true (and for runs the end).
function naturalFits(p, m) {
  if (m.kind === "set") return p.n === m.number;
  if (m.kind === "color") return p.c === m.c;
  if (m.kind === "run") return (m.low > 1 && p.n === m.low - 1) || (m.high < 12 && p.n === m.high + 1);
  return false;
}

function applyNatural(p, m) {
  if (m.kind === "run") {
    if (m.low > 1 && p.n === m.low - 1) m.low--;
    else m.high++;
  }
}

function canHit(card, table) {
  const p = parseCard(card);
  if (!p || p.kind === "S") return false;
  const melds = tableMelds(table);
  if (p.kind === "W") return melds.some((m) => m.kind !== "run" || m.low > 1 || m.high < 12);
  return melds.some((m) => naturalFits(p, m));
}

// Every hit that can be made, in order, onto the melds already on the table. Returns
// {hits, hand} where hand is what is left. Naturals go first; a Wild goes where it lets
// a natural follow it on a run, else anywhere it fits.
function planHits(hand, table) {
  const melds = tableMelds(table);
  let left = hand.slice();
  const hits = [];
  if (melds.length === 0) return { hits, hand: left };
  for (let guard = 0; guard < 200; guard++) {
    let done = false;
    for (let i = 0; i < left.length && !done; i++) {
      const p = parseCard(left[i]);
      if (!p || p.kind !== "n") continue;
      for (const m of melds) {
        if (naturalFits(p, m)) {
          applyNatural(p, m);
          hits.push({ card: left[i], meld: m.id });
          left.splice(i, 1);
          done = true;
          break;
        }
      }
    }
    if (done) continue;
    if (!left.includes("W")) break;
    // A Wild that bridges a gap to a natural card in hand.
    let place = null;
    const nums = new Set(left.map(parseCard).filter((p) => p && p.kind === "n").map((p) => p.n));
    for (const m of melds) {
      if (m.kind !== "run") continue;
      if (m.high <= 10 && nums.has(m.high + 2)) {
        place = { m, end: "high" };
        break;
      }
      if (m.low >= 3 && nums.has(m.low - 2)) {
        place = { m, end: "low" };
        break;
      }
    }
    if (!place) {
      const m = melds.find((x) => x.kind !== "run");
      if (m) place = { m, end: null };
    }
    if (!place) {
      const m = melds.find((x) => x.kind === "run" && (x.high < 12 || x.low > 1));
      if (m) place = { m, end: m.high < 12 ? "high" : "low" };
    }
    if (!place) break;
    const hit = { card: "W", meld: place.m.id };
    if (place.m.kind === "run") {
      hit.end = place.end;
      if (place.end === "high") place.m.high++;
      else place.m.low--;
    }
    hits.push(hit);
    left.splice(left.indexOf("W"), 1);
  }
  return { hits, hand: left };
}

// ---------------------------------------------------------------- discard and Skip (R6)

function otherSeats(state) {
  const me = state.seat;
  const players = Array.isArray(state.players) ? state.players : [];
  return players.filter((p) => p && typeof p.seat === "number" && p.seat !== me);
}

// The seats a Skip may name: other seats in this hand (not "active": false, as in a
// tie-break hand, R10.6) with no skip pending (R6.2).
function nameable(state) {
  return otherSeats(state).filter((p) => !p.skip_pending && p.active !== false);
}

// The leading player among those who may be named, or null (R6.2, R6.3).
function skipTarget(state) {
  const candidates = nameable(state);
  if (candidates.length === 0) return null;
  candidates.sort(
    (a, b) =>
      (Number(b.phase) || 0) - (Number(a.phase) || 0) ||
      (b.laid ? 1 : 0) - (a.laid ? 1 : 0) ||
      (Number(a.cards) || 0) - (Number(b.cards) || 0) ||
      (Number(a.score) || 0) - (Number(b.score) || 0) ||
      a.seat - b.seat
  );
  return candidates[0].seat;
}

// How close a natural card is to being useful for the phase's meld kinds (used only
// to break ties; lower means discard first).
function closeness(card, hand, reqs) {
  const p = parseCard(card);
  if (!p || p.kind !== "n") return 0;
  let score = 0;
  const others = removeCards(hand, [card]).map(parseCard).filter((q) => q && q.kind === "n");
  for (const r of reqs) {
    if (r.kind === "set") score += others.filter((q) => q.n === p.n).length * 2;
    if (r.kind === "run") score += new Set(others.filter((q) => q.n !== p.n && Math.abs(q.n - p.n) <= 3).map((q) => q.n)).size;
    if (r.kind === "color") score += others.filter((q) => q.c === p.c).length;
  }
  return score;
}

// The card to throw away from `hand` (non-empty). `laid`: the phase is on the table,
// so only hits matter now.
function chooseDiscard(hand, phase, laid) {
  if (hand.includes("S")) return "S";
  const naturals = Array.from(new Set(hand.filter((s) => s !== "W" && parseCard(s))));
  if (naturals.length === 0) {
    // Only Wilds (or junk) left.
    const junk = hand.find((s) => s !== "W");
    return junk !== undefined ? junk : hand[0];
  }
  const reqs = normaliseReqs(phase);
  let scored;
  if (laid || reqs.length === 0) {
    scored = naturals.map((s) => ({ s, missing: 0, gap: 0 }));
  } else {
    scored = naturals.map((s) => {
      const b = bestLayout(removeCards(hand, [s]), phase, "partial");
      return { s, missing: b ? b.missing : 99, gap: b ? b.gap : 99 };
    });
  }
  for (const x of scored) {
    x.pen = penalty(x.s);
    x.close = laid ? 0 : closeness(x.s, hand, reqs);
    const p = parseCard(x.s);
    x.n = p && p.kind === "n" ? p.n : 0;
  }
  scored.sort(
    (a, b) =>
      a.missing - b.missing || // keep what the best layout needs
      a.gap - b.gap ||
      b.pen - a.pen || // then shed the most points
      a.close - b.close ||
      b.n - a.n ||
      (a.s < b.s ? -1 : a.s > b.s ? 1 : 0)
  );
  return scored[0].s;
}

// ---------------------------------------------------------------- decisions

function decideDraw(state) {
  const top = state.discard_top;
  if (!state.can_take_discard || typeof top !== "string" || top === "S") return "deck";
  const p = parseCard(top);
  if (!p) return "deck";
  if (p.kind === "W") return "discard";
  const hand = Array.isArray(state.cards) ? state.cards : [];
  if (state.laid) return canHit(top, state.table) ? "discard" : "deck";
  const before = missingCards(hand, state.phase);
  const after = missingCards(hand.concat([top]), state.phase);
  return after < before ? "discard" : "deck";
}

function validLayShape(lay, hand) {
  if (!Array.isArray(lay) || lay.length === 0) return false;
  const flat = [];
  for (const m of lay) {
    if (!Array.isArray(m) || m.length === 0) return false;
    for (const c of m) flat.push(c);
  }
  // Every card must come from the hand.
  const left = hand.slice();
  for (const c of flat) {
    const i = left.indexOf(c);
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}

function decidePlay(state, options) {
  let hand = Array.isArray(state.cards) ? state.cards.filter((c) => typeof c === "string") : [];
  const reply = {};
  let laid = !!state.laid;
  let built = null; // the melds of our own lay, with their kinds, when we found it

  if (!laid) {
    const layout = bestLayout(hand, state.phase, "lay");
    if (layout) {
      built = buildLay(layout);
      if (!validLayShape(built.map((m) => m.cards), hand)) built = null;
    }
    let lay = built ? built.map((m) => m.cards) : null;
    if (!lay && options && Array.isArray(options.lay) && validLayShape(options.lay, hand)) {
      lay = options.lay;
    }
    if (lay) {
      for (const m of lay) hand = removeCards(hand, m);
      reply.lay = lay;
      laid = true;
    }
  }

  if (laid) {
    const plan = planHits(hand, state.table);
    if (plan.hits.length) reply.hits = plan.hits;
    hand = plan.hand;
    // Wilds that no table meld took go into the melds laid now: they shed 25 points
    // each at once instead of waiting in hand.
    if (built) {
      while (hand.includes("W")) {
        const m = built.find((x) => x.kind !== "run") || built.find((x) => x.low > 1 || x.high < 12);
        if (!m) break;
        if (m.kind !== "run") m.cards.push("W");
        else if (m.high < 12) {
          m.high++;
          m.cards.push("W");
        } else {
          m.low--;
          m.cards.unshift("W");
        }
        hand = removeCards(hand, ["W"]);
      }
      reply.lay = built.map((m) => m.cards);
    }
  }

  if (hand.length > 0) {
    const d = chooseDiscard(hand, state.phase, laid);
    reply.discard = d;
    if (d === "S") reply.skip = skipTarget(state);
  }
  return reply;
}

// ---------------------------------------------------------------- protocol loop

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function fallbackPlay(state) {
  const reply = {};
  const hand = state && Array.isArray(state.cards) ? state.cards : [];
  if (hand.length > 0) {
    reply.discard = hand[0];
    if (hand[0] === "S") {
      let seat = null;
      try {
        const free = nameable(state);
        seat = free.length ? free[0].seat : null;
      } catch (_) {
        seat = null;
      }
      reply.skip = seat;
    }
  }
  return reply;
}

function handle(msg) {
  if (!msg || typeof msg !== "object") return;
  switch (msg.type) {
    case "hello":
      send({ type: "hello", name: NAME, version: VERSION });
      return;
    case "request": {
      const id = msg.id;
      const state = msg.state && typeof msg.state === "object" ? msg.state : {};
      if (msg.decision === "draw") {
        let draw = "deck";
        try {
          draw = decideDraw(state);
        } catch (e) {
          log("draw failed:", e && e.stack ? e.stack : e);
        }
        send({ id, draw });
      } else {
        let reply;
        try {
          reply = decidePlay(state, msg.options);
        } catch (e) {
          log("play failed:", e && e.stack ? e.stack : e);
          reply = fallbackPlay(state);
        }
        send(Object.assign({ id }, reply));
      }
      return;
    }
    case "error":
      log("referee error on", msg.id, msg.fault || "", msg.reason || "");
      return;
    case "bye":
      stop();
      return;
    default:
      // game_start, hand_end, game_end and anything unknown: nothing to answer.
      return;
  }
}

let rl = null;

// Stop reading; Node exits (code 0) once pending output is written. The timer only
// matters if something unexpected keeps the process alive.
function stop() {
  if (rl) rl.close();
  setTimeout(() => process.exit(0), 2000).unref();
}

function main() {
  rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  rl.on("line", (line) => {
    if (!line.trim()) return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      log("not JSON, ignored:", line.slice(0, 200));
      return;
    }
    try {
      handle(msg);
    } catch (e) {
      // Last resort: answer a request rather than leave the referee waiting.
      log("handler failed:", e && e.stack ? e.stack : e);
      try {
        if (msg && msg.type === "request") {
          send(msg.decision === "draw" ? { id: msg.id, draw: "deck" } : Object.assign({ id: msg.id }, fallbackPlay(msg.state)));
        }
      } catch (_) {
        // nothing more to do
      }
    }
  });
  rl.on("close", () => {
    process.stdin.destroy();
    stop();
  });
}

if (require.main === module) {
  main();
}

module.exports = {
  parseCard,
  penalty,
  bestLayout,
  missingCards,
  buildLay,
  planHits,
  chooseDiscard,
  skipTarget,
  nameable,
  decideDraw,
  decidePlay,
};
