/*
 * A small complete p10/1 bot in C, on cJSON (Debian: libcjson-dev). Copy it and improve it.
 *
 * It draws from the deck, lays its phase when the referee's options.lay offers one, makes
 * the offered hits that cannot conflict (at most one per run), and discards a Skip if it
 * holds one (naming the first seat that may be named), else its highest-penalty card that
 * is not a Wild. stdout carries the protocol, one JSON object per line; stderr is the log.
 *
 * The two functions to make smarter first: choose_draw() and choose_discard().
 */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME "c-template"
#define VERSION "1.0"
#define MAX_HAND 128

/* R1.3: the points a card costs when it is left in hand. */
static int penalty(const char *card) {
    if (strcmp(card, "W") == 0) return 25;
    if (strcmp(card, "S") == 0) return 15;
    return atoi(card + 1) >= 10 ? 10 : 5;
}

/* Write one reply as one line and flush: the referee waits for it. */
static void send(cJSON *reply) {
    char *text = cJSON_PrintUnformatted(reply);
    if (text == NULL) {
        fprintf(stderr, NAME ": out of memory\n");
        exit(1);
    }
    fputs(text, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    cJSON_free(text);
    cJSON_Delete(reply);
}

static const char *str_field(const cJSON *obj, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(item) ? item->valuestring : "";
}

static int int_field(const cJSON *obj, const char *key, int fallback) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(item) ? item->valueint : fallback;
}

/* The hand as an array of card strings (pointers into the request). */
struct hand {
    const char *cards[MAX_HAND];
    int n;
};

/* Take one copy of `card` out of the hand; 0 if it is not there. */
static int take(struct hand *hand, const char *card) {
    for (int i = 0; i < hand->n; i++) {
        if (strcmp(hand->cards[i], card) == 0) {
            hand->cards[i] = hand->cards[--hand->n];
            return 1;
        }
    }
    return 0;
}

/* "deck" or "discard" (allowed only when state.can_take_discard is true). */
static const char *choose_draw(const cJSON *state) {
    (void)state;
    return "deck";
}

/* A Skip if we hold one, else the highest-penalty card that is not a Wild, else a Wild. */
static const char *choose_discard(const struct hand *hand) {
    const char *best = NULL;
    for (int i = 0; i < hand->n; i++) {
        const char *card = hand->cards[i];
        if (strcmp(card, "S") == 0) return card;
        if (strcmp(card, "W") != 0 && (best == NULL || penalty(card) > penalty(best))) best = card;
    }
    return best != NULL ? best : hand->cards[0];
}

/* R6: the first seat after ours that is playing this hand and has no skip pending; -1: none. */
static int skip_target(const cJSON *state) {
    const cJSON *players = cJSON_GetObjectItemCaseSensitive(state, "players");
    int n = cJSON_GetArraySize(players), me = int_field(state, "seat", 0);
    for (int k = 1; k < n; k++) {
        const cJSON *p = cJSON_GetArrayItem(players, (me + k) % n);
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "skip_pending"))) continue;
        if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(p, "active"))) continue; /* sits out a tie-break */
        return int_field(p, "seat", (me + k) % n);
    }
    return -1;
}

/* The kind ("set", "run", "color") of the table meld with this id. */
static const char *meld_kind(const cJSON *state, int id) {
    const cJSON *meld;
    cJSON_ArrayForEach(meld, cJSON_GetObjectItemCaseSensitive(state, "table")) {
        if (int_field(meld, "id", -1) == id) return str_field(meld, "kind");
    }
    return "";
}

static cJSON *play(const cJSON *msg) {
    const cJSON *state = cJSON_GetObjectItemCaseSensitive(msg, "state");
    const cJSON *options = cJSON_GetObjectItemCaseSensitive(msg, "options");
    const cJSON *lay = cJSON_GetObjectItemCaseSensitive(options, "lay");
    const cJSON *hits = cJSON_GetObjectItemCaseSensitive(options, "hits");
    cJSON *reply = cJSON_CreateObject();
    cJSON_AddNumberToObject(reply, "id", int_field(msg, "id", 0));

    struct hand hand = {.n = 0};
    const cJSON *card;
    cJSON_ArrayForEach(card, cJSON_GetObjectItemCaseSensitive(state, "cards")) {
        if (cJSON_IsString(card) && hand.n < MAX_HAND) hand.cards[hand.n++] = card->valuestring;
    }

    if (cJSON_IsArray(lay)) {
        /* options.lay is one legal way to lay the whole phase: send it as it is. */
        const cJSON *meld;
        cJSON_ArrayForEach(meld, lay) {
            cJSON_ArrayForEach(card, meld) take(&hand, card->valuestring);
        }
        cJSON_AddItemToObject(reply, "lay", cJSON_Duplicate(lay, 1));
    } else if (cJSON_IsArray(hits) && cJSON_GetArraySize(hits) > 0) {
        /* Each offered hit is legal alone; two on one run may conflict, so one per run. */
        cJSON *chosen = cJSON_AddArrayToObject(reply, "hits");
        int runs_hit[MAX_HAND], nruns = 0;
        const cJSON *hit;
        cJSON_ArrayForEach(hit, hits) {
            int id = int_field(hit, "meld", -1), is_run = strcmp(meld_kind(state, id), "run") == 0, seen = 0;
            for (int i = 0; i < nruns; i++) seen |= runs_hit[i] == id;
            if (seen || hand.n == 0 || !take(&hand, str_field(hit, "card"))) continue;
            if (is_run && nruns < MAX_HAND) runs_hit[nruns++] = id;
            cJSON_AddItemToArray(chosen, cJSON_Duplicate(hit, 1)); /* keeps "end" where it is needed */
        }
    }

    if (hand.n > 0) { /* an empty hand went out without a discard (R3.5) */
        const char *discard = choose_discard(&hand);
        cJSON_AddStringToObject(reply, "discard", discard);
        if (strcmp(discard, "S") == 0) {
            int seat = skip_target(state);
            if (seat >= 0) cJSON_AddNumberToObject(reply, "skip", seat);
            else cJSON_AddNullToObject(reply, "skip");
        }
    }
    return reply;
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) != -1) {
        cJSON *msg = cJSON_Parse(line);
        if (msg == NULL) {
            fprintf(stderr, NAME ": ignoring a line that is not JSON\n");
            continue;
        }
        const char *type = str_field(msg, "type");
        if (strcmp(type, "hello") == 0) {
            cJSON *reply = cJSON_CreateObject();
            cJSON_AddStringToObject(reply, "type", "hello");
            cJSON_AddStringToObject(reply, "name", NAME);
            cJSON_AddStringToObject(reply, "version", VERSION);
            send(reply);
        } else if (strcmp(type, "request") == 0) {
            const cJSON *state = cJSON_GetObjectItemCaseSensitive(msg, "state");
            if (strcmp(str_field(msg, "decision"), "draw") == 0) {
                cJSON *reply = cJSON_CreateObject();
                cJSON_AddNumberToObject(reply, "id", int_field(msg, "id", 0));
                cJSON_AddStringToObject(reply, "draw", choose_draw(state));
                send(reply);
            } else {
                send(play(msg));
            }
        } else if (strcmp(type, "game_start") == 0) {
            fprintf(stderr, NAME ": game %s, seat %d\n", str_field(msg, "game"), int_field(msg, "seat", -1));
        } else if (strcmp(type, "error") == 0) {
            /* The referee refused our last reply: the reason names the rule. */
            fprintf(stderr, NAME ": error on request %d: %s\n", int_field(msg, "id", -1), str_field(msg, "reason"));
        } else if (strcmp(type, "bye") == 0) {
            cJSON_Delete(msg);
            break;
        }
        /* hand_end, game_end and unknown types need no answer. */
        cJSON_Delete(msg);
    }
    free(line);
    return 0;
}
