"""The results folder's record of a tournament: games.jsonl (its one reader and one
writer, `journal`), the seed and its commitment and the env key (`seeds`),
tournament.json (`marker`) and which replays are kept (`keep`)."""
