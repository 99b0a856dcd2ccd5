//! A small complete p10/1 bot in Rust, on the standard library alone (its JSON reader is
//! `json.rs`): it builds with no crates and no network. Copy it and improve it.
//!
//! It draws from the deck, lays its phase when the referee's options.lay offers one, makes
//! the offered hits that cannot conflict (at most one per run), and discards a Skip if it
//! holds one (naming the first seat that may be named), else its highest-penalty card that
//! is not a Wild. stdout carries the protocol, one JSON object per line; stderr is the log.
//!
//! The two functions to make smarter first: `choose_draw` and `choose_discard`.

mod json;

use json::Value;
use std::collections::HashSet;
use std::io::{self, BufRead, Write};

const NAME: &str = "rust-template";
const VERSION: &str = "1.0";

/// R1.3: the points a card costs when it is left in hand.
fn penalty(card: &str) -> u32 {
    match card {
        "W" => 25,
        "S" => 15,
        _ if card[1..].parse::<u32>().unwrap_or(0) >= 10 => 10,
        _ => 5,
    }
}

/// Write one reply as one line and flush: the referee waits for it.
fn send(out: &mut impl Write, reply: &Value) {
    if writeln!(out, "{}", reply).and_then(|_| out.flush()).is_err() {
        std::process::exit(0); // the referee is gone
    }
}

/// Take one copy of `card` out of the hand; false if it is not there.
fn take(hand: &mut Vec<String>, card: &str) -> bool {
    match hand.iter().position(|c| c == card) {
        Some(i) => {
            hand.swap_remove(i);
            true
        }
        None => false,
    }
}

/// "deck" or "discard" (allowed only when state["can_take_discard"] is true).
fn choose_draw(_state: &Value) -> &'static str {
    "deck"
}

/// A Skip if we hold one, else the highest-penalty card that is not a Wild, else a Wild.
fn choose_discard(hand: &[String]) -> String {
    if hand.iter().any(|c| c == "S") {
        return "S".to_string();
    }
    let mut best: Option<&String> = None;
    for card in hand.iter().filter(|c| *c != "W") {
        if best.map_or(true, |b| penalty(card) > penalty(b)) {
            best = Some(card);
        }
    }
    best.unwrap_or(&hand[0]).clone()
}

/// R6: the first seat after ours that is playing this hand and has no skip pending; null: none.
fn skip_target(state: &Value) -> Value {
    let players = state["players"].as_array().cloned().unwrap_or_default();
    let n = players.len();
    let me = state["seat"].as_u64().unwrap_or(0) as usize;
    for k in 1..n {
        let p = &players[(me + k) % n];
        let pending = p["skip_pending"].as_bool().unwrap_or(false);
        let active = p["active"].as_bool().unwrap_or(true); // false: sits out a tie-break hand
        if !pending && active {
            return p["seat"].clone();
        }
    }
    Value::Null
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(|c| c.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

fn play(msg: &Value) -> Value {
    let state = &msg["state"];
    let options = &msg["options"]; // Null when absent: indexing a Value never panics
    let mut hand = strings(&state["cards"]);
    let mut reply = Value::object(vec![("id", msg["id"].clone())]);

    if let Some(lay) = options["lay"].as_array() {
        // options.lay is one legal way to lay the whole phase: send it as it is.
        for meld in lay {
            for card in strings(meld) {
                take(&mut hand, &card);
            }
        }
        reply.set("lay", options["lay"].clone());
    } else if let Some(hits) = options["hits"].as_array() {
        // Each offered hit is legal alone; two on one run may conflict, so one per run.
        let runs: HashSet<u64> = state["table"]
            .as_array()
            .map(|t| t.iter().filter(|m| m["kind"] == "run").filter_map(|m| m["id"].as_u64()).collect())
            .unwrap_or_default();
        let mut runs_hit = HashSet::new();
        let mut chosen = Vec::new();
        for hit in hits {
            let meld = hit["meld"].as_u64().unwrap_or(u64::MAX);
            let is_run = runs.contains(&meld);
            if (is_run && runs_hit.contains(&meld)) || !take(&mut hand, hit["card"].as_str().unwrap_or("")) {
                continue;
            }
            if is_run {
                runs_hit.insert(meld);
            }
            chosen.push(hit.clone()); // keeps "end" where it is needed
        }
        if !chosen.is_empty() {
            reply.set("hits", Value::Array(chosen));
        }
    }

    if !hand.is_empty() {
        // an empty hand went out without a discard (R3.5)
        let discard = choose_discard(&hand);
        if discard == "S" {
            reply.set("skip", skip_target(state));
        }
        reply.set("discard", Value::String(discard));
    }
    reply
}

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(line) => line,
            Err(_) => break,
        };
        let msg = match Value::parse(&line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("{NAME}: ignoring a line that is not JSON: {e}");
                continue;
            }
        };
        match msg["type"].as_str().unwrap_or("") {
            "hello" => send(
                &mut out,
                &Value::object(vec![("type", Value::str("hello")), ("name", Value::str(NAME)), ("version", Value::str(VERSION))]),
            ),
            "request" if msg["decision"] == "draw" => send(
                &mut out,
                &Value::object(vec![("id", msg["id"].clone()), ("draw", Value::str(choose_draw(&msg["state"])))]),
            ),
            "request" => send(&mut out, &play(&msg)),
            // as_str: the game id as text (Display would print it as JSON, in quotes)
            "game_start" => eprintln!("{NAME}: game {}, seat {}", msg["game"].as_str().unwrap_or("?"), msg["seat"]),
            // The referee refused our last reply: the reason names the rule.
            "error" => eprintln!("{NAME}: error on request {}: {}", msg["id"], msg["reason"].as_str().unwrap_or("")),
            "bye" => break,
            _ => {} // hand_end, game_end and unknown types need no answer
        }
    }
}
