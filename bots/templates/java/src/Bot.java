// A small complete p10/1 bot in Java (17+), on Gson (Debian: libgoogle-gson-java).
// Copy it and improve it.
//
// It draws from the deck, lays its phase when the referee's options.lay offers one, makes
// the offered hits that cannot conflict (at most one per run), and discards a Skip if it
// holds one (naming the first seat that may be named), else its highest-penalty card that
// is not a Wild. stdout carries the protocol, one JSON object per line; stderr is the log.
//
// The two methods to make smarter first: chooseDraw and chooseDiscard.

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

public final class Bot {
    static final String NAME = "java-template";
    static final String VERSION = "1.0";

    // serializeNulls: a Skip discard with no seat to name must send "skip": null.
    static final Gson GSON = new GsonBuilder().serializeNulls().disableHtmlEscaping().create();
    static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);

    /** R1.3: the points a card costs when it is left in hand. */
    static int penalty(String card) {
        if (card.equals("W")) return 25;
        if (card.equals("S")) return 15;
        return Integer.parseInt(card.substring(1)) >= 10 ? 10 : 5;
    }

    /** Write one reply as one line and flush: the referee waits for it. */
    static void send(JsonObject reply) {
        OUT.print(GSON.toJson(reply) + "\n");
        OUT.flush();
    }

    static List<String> strings(JsonElement array) {
        List<String> out = new ArrayList<>();
        if (array != null && array.isJsonArray()) {
            for (JsonElement e : array.getAsJsonArray()) out.add(e.getAsString());
        }
        return out;
    }

    static boolean isTrue(JsonObject obj, String key, boolean absent) {
        JsonElement e = obj.get(key);
        return e == null || e.isJsonNull() ? absent : e.getAsBoolean();
    }

    /** "deck" or "discard" (allowed only when state.can_take_discard is true). */
    /** A string field as text ("" where missing or not a string). */
    static String text(JsonObject msg, String key) {
        JsonElement e = msg.get(key);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }

    static String chooseDraw(JsonObject state) {
        return "deck";
    }

    /** A Skip if we hold one, else the highest-penalty card that is not a Wild, else a Wild. */
    static String chooseDiscard(List<String> hand) {
        if (hand.contains("S")) return "S";
        String best = null;
        for (String card : hand) {
            if (!card.equals("W") && (best == null || penalty(card) > penalty(best))) best = card;
        }
        return best != null ? best : hand.get(0);
    }

    /** R6: the first seat after ours that is playing this hand and has no skip pending; null: none. */
    static JsonElement skipTarget(JsonObject state) {
        JsonArray players = state.getAsJsonArray("players");
        int n = players.size(), me = state.get("seat").getAsInt();
        for (int k = 1; k < n; k++) {
            JsonObject p = players.get((me + k) % n).getAsJsonObject();
            // "active" false: the seat sits out a tie-break hand.
            if (!isTrue(p, "skip_pending", false) && isTrue(p, "active", true)) return p.get("seat");
        }
        return JsonNull.INSTANCE;
    }

    static JsonObject play(JsonObject msg) {
        JsonObject state = msg.getAsJsonObject("state");
        JsonElement opts = msg.get("options");
        JsonObject options = opts != null && opts.isJsonObject() ? opts.getAsJsonObject() : new JsonObject();
        List<String> hand = strings(state.get("cards"));
        JsonObject reply = new JsonObject();
        reply.add("id", msg.get("id"));

        JsonElement lay = options.get("lay");
        JsonElement hits = options.get("hits");
        if (lay != null && lay.isJsonArray()) {
            // options.lay is one legal way to lay the whole phase: send it as it is.
            for (JsonElement meld : lay.getAsJsonArray()) {
                for (String card : strings(meld)) hand.remove(card);
            }
            reply.add("lay", lay);
        } else if (hits != null && hits.isJsonArray() && hits.getAsJsonArray().size() > 0) {
            // Each offered hit is legal alone; two on one run may conflict, so one per run.
            Set<Integer> runs = new HashSet<>();
            for (JsonElement m : state.getAsJsonArray("table")) {
                JsonObject meld = m.getAsJsonObject();
                if (meld.get("kind").getAsString().equals("run")) runs.add(meld.get("id").getAsInt());
            }
            Set<Integer> runsHit = new HashSet<>();
            JsonArray chosen = new JsonArray();
            for (JsonElement h : hits.getAsJsonArray()) {
                JsonObject hit = h.getAsJsonObject();
                int meld = hit.get("meld").getAsInt();
                boolean isRun = runs.contains(meld);
                if ((isRun && runsHit.contains(meld)) || !hand.remove(hit.get("card").getAsString())) continue;
                if (isRun) runsHit.add(meld);
                chosen.add(hit); // keeps "end" where it is needed
            }
            if (chosen.size() > 0) reply.add("hits", chosen);
        }

        if (!hand.isEmpty()) { // an empty hand went out without a discard (R3.5)
            String discard = chooseDiscard(hand);
            reply.addProperty("discard", discard);
            if (discard.equals("S")) reply.add("skip", skipTarget(state));
        }
        return reply;
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            JsonObject msg;
            try {
                msg = JsonParser.parseString(line).getAsJsonObject();
            } catch (JsonParseException | IllegalStateException e) {
                System.err.println(NAME + ": ignoring a line that is not a JSON object: " + e.getMessage());
                continue;
            }
            String type = msg.has("type") ? msg.get("type").getAsString() : "";
            switch (type) {
                case "hello" -> {
                    JsonObject reply = new JsonObject();
                    reply.addProperty("type", "hello");
                    reply.addProperty("name", NAME);
                    reply.addProperty("version", VERSION);
                    send(reply);
                }
                case "request" -> {
                    if (msg.get("decision").getAsString().equals("draw")) {
                        JsonObject reply = new JsonObject();
                        reply.add("id", msg.get("id"));
                        reply.addProperty("draw", chooseDraw(msg.getAsJsonObject("state")));
                        send(reply);
                    } else {
                        send(play(msg));
                    }
                }
                // text(): the string itself (a JsonElement prints as JSON, in quotes)
                case "game_start" -> System.err.println(NAME + ": game " + text(msg, "game") + ", seat " + msg.get("seat"));
                // The referee refused our last reply: the reason names the rule.
                case "error" -> System.err.println(NAME + ": error on request " + msg.get("id") + ": " + text(msg, "reason"));
                case "bye" -> {
                    return;
                }
                default -> {} // hand_end, game_end and unknown types need no answer
            }
        }
    }
}
