// A small complete p10/1 bot in C++17, on nlohmann/json (Debian: nlohmann-json3-dev).
// Copy it and improve it.
//
// It draws from the deck, lays its phase when the referee's options.lay offers one, makes
// the offered hits that cannot conflict (at most one per run), and discards a Skip if it
// holds one (naming the first seat that may be named), else its highest-penalty card that
// is not a Wild. stdout carries the protocol, one JSON object per line; stderr is the log.
//
// The two functions to make smarter first: choose_draw() and choose_discard().
#include <algorithm>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using json = nlohmann::json;

static const char *const NAME = "cpp-template";
static const char *const VERSION = "1.0";

// R1.3: the points a card costs when it is left in hand.
static int penalty(const std::string &card) {
    if (card == "W") return 25;
    if (card == "S") return 15;
    return std::stoi(card.substr(1)) >= 10 ? 10 : 5;
}

// Write one reply as one line and flush: the referee waits for it.
static void send(const json &reply) { std::cout << reply.dump() << std::endl; }

// Take one copy of `card` out of the hand; false if it is not there.
static bool take(std::vector<std::string> &hand, const std::string &card) {
    auto it = std::find(hand.begin(), hand.end(), card);
    if (it == hand.end()) return false;
    hand.erase(it);
    return true;
}

// "deck" or "discard" (allowed only when state["can_take_discard"] is true).
static std::string choose_draw(const json &state) {
    (void)state;
    return "deck";
}

// A Skip if we hold one, else the highest-penalty card that is not a Wild, else a Wild.
static std::string choose_discard(const std::vector<std::string> &hand) {
    if (std::count(hand.begin(), hand.end(), "S")) return "S";
    const std::string *best = nullptr;
    for (const auto &card : hand)
        if (card != "W" && (!best || penalty(card) > penalty(*best))) best = &card;
    return best ? *best : hand.front();
}

// R6: the first seat after ours that is playing this hand and has no skip pending; null: none.
static json skip_target(const json &state) {
    const json &players = state.at("players");
    const int n = static_cast<int>(players.size()), me = state.at("seat").get<int>();
    for (int k = 1; k < n; k++) {
        const json &p = players.at((me + k) % n);
        if (p.value("skip_pending", false)) continue;
        if (!p.value("active", true)) continue;  // sits out a tie-break hand
        return p.at("seat");
    }
    return nullptr;
}

// The kind ("set", "run", "color") of the table meld with this id.
static std::string meld_kind(const json &state, int id) {
    for (const auto &meld : state.at("table"))
        if (meld.at("id").get<int>() == id) return meld.at("kind").get<std::string>();
    return "";
}

static json play(const json &msg) {
    const json &state = msg.at("state");
    const json options = msg.value("options", json::object());
    std::vector<std::string> hand = state.at("cards").get<std::vector<std::string>>();
    json reply = {{"id", msg.at("id")}};

    if (options.contains("lay") && options["lay"].is_array()) {
        // options.lay is one legal way to lay the whole phase: send it as it is.
        reply["lay"] = options["lay"];
        for (const auto &meld : options["lay"])
            for (const auto &card : meld) take(hand, card.get<std::string>());
    } else if (options.contains("hits") && !options["hits"].empty()) {
        // Each offered hit is legal alone; two on one run may conflict, so one per run.
        json chosen = json::array();
        std::set<int> runs_hit;
        for (const auto &hit : options["hits"]) {
            const int id = hit.at("meld").get<int>();
            const bool is_run = meld_kind(state, id) == "run";
            if (is_run && runs_hit.count(id)) continue;
            if (!take(hand, hit.at("card").get<std::string>())) continue;
            if (is_run) runs_hit.insert(id);
            chosen.push_back(hit);  // keeps "end" where it is needed
        }
        if (!chosen.empty()) reply["hits"] = chosen;
    }

    if (!hand.empty()) {  // an empty hand went out without a discard (R3.5)
        const std::string discard = choose_discard(hand);
        reply["discard"] = discard;
        if (discard == "S") reply["skip"] = skip_target(state);
    }
    return reply;
}

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        json msg = json::parse(line, nullptr, false);
        if (msg.is_discarded() || !msg.is_object()) {
            std::cerr << NAME << ": ignoring a line that is not a JSON object" << std::endl;
            continue;
        }
        const std::string type = msg.value("type", "");
        if (type == "hello") {
            send({{"type", "hello"}, {"name", NAME}, {"version", VERSION}});
        } else if (type == "request") {
            if (msg.value("decision", "") == "draw")
                send({{"id", msg.at("id")}, {"draw", choose_draw(msg.at("state"))}});
            else
                send(play(msg));
        } else if (type == "game_start") {
            std::cerr << NAME << ": game " << msg.value("game", "?") << ", seat " << msg.value("seat", -1) << std::endl;
        } else if (type == "error") {
            // The referee refused our last reply: the reason names the rule.
            std::cerr << NAME << ": error on request " << msg.value("id", -1) << ": " << msg.value("reason", "")
                      << std::endl;
        } else if (type == "bye") {
            break;
        }
        // hand_end, game_end and unknown types need no answer.
    }
    return 0;
}
