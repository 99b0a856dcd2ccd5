#!/usr/bin/env node
// The smallest complete p10/1 bot in JavaScript (Node 18+, no dependencies).
// It draws from the deck, lays its phase when the referee's options show a way,
// and discards its highest-penalty card. Copy it and make it smarter.
"use strict";

const readline = require("readline");

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n"); // one JSON object per line
}

// R1.3: points a card costs when left in hand.
function penalty(card) {
  if (card === "W") return 25;
  if (card === "S") return 15;
  return Number(card.slice(1)) >= 10 ? 10 : 5;
}

function play(msg) {
  const state = msg.state;
  let hand = state.cards.slice();
  const reply = { id: msg.id };

  // Lay the phase the referee found for us, if any (null once laid).
  const lay = msg.options && msg.options.lay;
  if (lay) {
    reply.lay = lay;
    for (const meld of lay) {
      for (const card of meld) hand.splice(hand.indexOf(card), 1);
    }
  }

  if (hand.length === 0) return reply; // went out by laying: no discard

  let worst = hand[0];
  for (const card of hand) if (penalty(card) > penalty(worst)) worst = card;
  reply.discard = worst;
  if (worst === "S") {
    // Name the first other player in this hand (not "active": false) with no skip
    // pending, or no one.
    const target = state.players.find((p) => p.seat !== state.seat && !p.skip_pending && p.active !== false);
    reply.skip = target ? target.seat : null;
  }
  return reply;
}

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    return; // not JSON: ignore
  }
  if (msg.type === "hello") {
    send({ type: "hello", name: "js-template", version: "1.0" });
  } else if (msg.type === "request") {
    if (msg.decision === "draw") send({ id: msg.id, draw: "deck" });
    else send(play(msg));
  } else if (msg.type === "game_start") {
    process.stderr.write(`js-template: game ${msg.game}, seat ${msg.seat}\n`);
  } else if (msg.type === "error") {
    process.stderr.write(`referee: ${msg.reason}\n`); // stderr is the bot's log
  } else if (msg.type === "bye") {
    process.exit(0);
  }
  // game_start, hand_end, game_end: nothing to answer.
});
rl.on("close", () => process.exit(0));
