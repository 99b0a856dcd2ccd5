// A small complete p10/1 bot in Go, on the standard library's encoding/json. Copy it and
// improve it.
//
// It draws from the deck, lays its phase when the referee's options.lay offers one, makes
// the offered hits that cannot conflict (at most one per run), and discards a Skip if it
// holds one (naming the first seat that may be named), else its highest-penalty card that
// is not a Wild. stdout carries the protocol, one JSON object per line; stderr is the log.
//
// The two functions to make smarter first: chooseDraw and chooseDiscard.
package main

import (
	"bufio"
	"encoding/json"
	"io"
	"log"
	"os"
	"strconv"
)

const (
	name    = "go-template"
	version = "1.0"
)

// Message is any message from the referee; fields a type does not use stay zero.
type Message struct {
	Type     string   `json:"type"`
	ID       int      `json:"id"`
	Decision string   `json:"decision"`
	State    State    `json:"state"`
	Options  *Options `json:"options"` // nil when absent (opted out with "options": false)
	Game     string   `json:"game"`
	Seat     int      `json:"seat"`
	Reason   string   `json:"reason"`
}

// State is this seat's whole view of the game (SPEC.md, "The state"); add fields as you need them.
type State struct {
	Seat           int      `json:"seat"`
	Cards          []string `json:"cards"`
	Laid           bool     `json:"laid"`
	DiscardTop     *string  `json:"discard_top"`
	CanTakeDiscard bool     `json:"can_take_discard"`
	Players        []Player `json:"players"`
	Table          []Meld   `json:"table"`
}

// Player is what everyone knows of a seat.
type Player struct {
	Seat        int   `json:"seat"`
	Phase       int   `json:"phase"`
	Cards       int   `json:"cards"`
	SkipPending bool  `json:"skip_pending"`
	Active      *bool `json:"active"` // false: sits out a tie-break hand; absent means true
}

// Meld is a meld on the table.
type Meld struct {
	ID    int      `json:"id"`
	Kind  string   `json:"kind"` // "set", "run" or "color"
	Cards []string `json:"cards"`
}

// Hit adds one card to a table meld; End ("low"/"high") is set where a run needs it.
type Hit struct {
	Card string  `json:"card"`
	Meld int     `json:"meld"`
	End  *string `json:"end,omitempty"`
}

// Options is the referee's help: one legal lay (or nil) and every hit legal on its own.
type Options struct {
	Lay  [][]string `json:"lay"`
	Hits []Hit      `json:"hits"`
}

// penalty is what a card costs when it is left in hand (R1.3).
func penalty(card string) int {
	switch card {
	case "W":
		return 25
	case "S":
		return 15
	}
	if n, _ := strconv.Atoi(card[1:]); n >= 10 {
		return 10
	}
	return 5
}

// send writes one reply as one line; os.Stdout is not buffered, so it leaves at once.
func send(reply any) {
	b, err := json.Marshal(reply)
	if err != nil {
		log.Fatalf("cannot encode %v: %v", reply, err)
	}
	if _, err := os.Stdout.Write(append(b, '\n')); err != nil {
		os.Exit(0) // the referee is gone
	}
}

// take removes one copy of card from hand; false if it is not there.
func take(hand *[]string, card string) bool {
	for i, c := range *hand {
		if c == card {
			*hand = append((*hand)[:i], (*hand)[i+1:]...)
			return true
		}
	}
	return false
}

// chooseDraw returns "deck" or "discard" (allowed only when state.CanTakeDiscard).
func chooseDraw(state State) string {
	return "deck"
}

// chooseDiscard picks a Skip if we hold one, else the highest-penalty card that is not a Wild.
func chooseDiscard(hand []string) string {
	best := ""
	for _, card := range hand {
		if card == "S" {
			return card
		}
		if card != "W" && (best == "" || penalty(card) > penalty(best)) {
			best = card
		}
	}
	if best == "" {
		return hand[0]
	}
	return best
}

// skipTarget is the first seat after ours that is playing this hand and has no skip
// pending (R6), or nil (JSON null) if there is none.
func skipTarget(state State) *int {
	n := len(state.Players)
	for k := 1; k < n; k++ {
		p := state.Players[(state.Seat+k)%n]
		if p.SkipPending || (p.Active != nil && !*p.Active) {
			continue
		}
		seat := p.Seat
		return &seat
	}
	return nil
}

func play(msg Message) map[string]any {
	state := msg.State
	hand := append([]string(nil), state.Cards...)
	reply := map[string]any{"id": msg.ID}

	if opts := msg.Options; opts != nil && opts.Lay != nil {
		// options.lay is one legal way to lay the whole phase: send it as it is.
		reply["lay"] = opts.Lay
		for _, meld := range opts.Lay {
			for _, card := range meld {
				take(&hand, card)
			}
		}
	} else if opts != nil && len(opts.Hits) > 0 {
		// Each offered hit is legal alone; two on one run may conflict, so one per run.
		kind := map[int]string{}
		for _, m := range state.Table {
			kind[m.ID] = m.Kind
		}
		runsHit := map[int]bool{}
		var chosen []Hit
		for _, hit := range opts.Hits {
			isRun := kind[hit.Meld] == "run"
			if (isRun && runsHit[hit.Meld]) || !take(&hand, hit.Card) {
				continue
			}
			runsHit[hit.Meld] = isRun
			chosen = append(chosen, hit) // keeps "end" where it is needed
		}
		if len(chosen) > 0 {
			reply["hits"] = chosen
		}
	}

	if len(hand) > 0 { // an empty hand went out without a discard (R3.5)
		discard := chooseDiscard(hand)
		reply["discard"] = discard
		if discard == "S" {
			reply["skip"] = skipTarget(state)
		}
	}
	return reply
}

func main() {
	log.SetFlags(0)
	log.SetPrefix(name + ": ") // the log goes to stderr
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var msg Message
			if jerr := json.Unmarshal(line, &msg); jerr != nil {
				log.Printf("ignoring a line that is not a message: %v", jerr)
			} else if handle(msg) {
				return
			}
		}
		if err == io.EOF {
			return
		} else if err != nil {
			log.Fatalf("reading stdin: %v", err)
		}
	}
}

// handle answers one message; true means exit (bye).
func handle(msg Message) bool {
	switch msg.Type {
	case "hello":
		send(map[string]any{"type": "hello", "name": name, "version": version})
	case "request":
		if msg.Decision == "draw" {
			send(map[string]any{"id": msg.ID, "draw": chooseDraw(msg.State)})
		} else {
			send(play(msg))
		}
	case "game_start":
		log.Printf("game %s, seat %d", msg.Game, msg.Seat)
	case "error":
		log.Printf("error on request %d: %s", msg.ID, msg.Reason) // names the rule broken
	case "bye":
		return true
	}
	// hand_end, game_end and unknown types need no answer.
	return false
}
