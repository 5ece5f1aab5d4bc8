"""Every rule id the companion can cite, with the rule in plain words.

The ids are those of the project's rule set (RULES.md in the design notes). The texts
are our own short explanations, shown to players beside a verdict. Ids marked
``project`` are not in that rule set: they name a rule it states without an id.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    text: str
    project: bool = False


_RULES = [
    # Nox
    Rule("nox.place", "Placing a card",
         "A card starts a new stack in any kitty or goes on top of a stack of its own colour."),
    Rule("nox.cover_colour", "Covering a stack",
         "A card may only cover a stack whose top card has the same colour."),
    Rule("nox.merge", "Equal tops merge",
         "Two stacks in one kitty showing the same number must be merged at once."),
    Rule("nox.max_stacks", "Six stacks end the round",
         "The round ends as soon as a kitty has six stacks; more than six cannot happen."),
    Rule("nox.card_count", "The deck",
         "The deck has six copies of each number 1-15 and no other card."),
    Rule("nox.colours", "Scoring needs three colours",
         "A kitty scores the sum of its top cards only if they show blue, green and orange."),
    Rule("nox.round_end", "Round end", "A round ends when a kitty has six stacks, or the "
         "draw pile is empty and nobody holds a card.", project=True),
    Rule("nox.turn", "Whose turn", "Players play one card each, in seat order, from "
         "their own hand.", project=True),
    Rule("nox.game_end", "Game end", "The game ends after the round in which someone's "
         "total reaches the target (150; 100 in the thick-skinned variant); no round is "
         "played after that.", project=True),
    # Qwixx: Das Kartenspiel
    Rule("qwixx.one_colour", "One colour per play",
         "All cards played in one turn have the same colour (jokers take that colour)."),
    Rule("qwixx.play_size", "One to three cards", "A turn plays one, two or three cards."),
    Rule("qwixx.gap", "At most one gap",
         "Among the numbers crossed in one play, at most one number is skipped in total."),
    Rule("qwixx.foul", "Foul",
         "An active player who crosses nothing in their turn crosses a foul box (-5)."),
    Rule("qwixx.order", "Left to right",
         "A number may only be crossed to the right of every cross already in that row."),
    Rule("qwixx.lock", "Locking a row",
         "The last number of a row needs five crosses in that row first; it also crosses "
         "the lock box."),
    Rule("qwixx.end", "Game end",
         "The game ends after a turn in which someone locked a second row or crossed a "
         "fourth foul."),
    Rule("qwixx.card", "Cards in hand", "A player can only play cards they hold, and "
         "can only cross a number they played or that was announced.", project=True),
    Rule("qwixx.turn", "Turn steps", "The active player takes a display card, then each "
         "player in turn may cross the announced number, then the active player plays.",
         project=True),
    # Rox
    Rule("rox.link", "Linking cards",
         "The element most frequent on a card's edge must be at the centre of the next card."),
    Rule("rox.tie", "No single most frequent element",
         "A card whose edge has two elements equally most frequent cannot be checked: "
         "the table decides."),
    Rule("rox.rank", "Ranking rows",
         "The longest valid row takes the highest scoring card, and so on; on equal length "
         "the caller first, then seat order from the caller's left."),
    Rule("rox.short", "Too short to score", "A row shorter than two valid cards takes no "
         "scoring card."),
    Rule("rox.row_length", "At most six cards", "A row has at most six cards.", project=True),
    Rule("rox.edge", "Sixteen edge symbols", "Every element card has exactly 16 edge "
         "symbols.", project=True),
    Rule("rox.card", "Laying cards", "Each player lays cards from the middle of the table "
         "at the end of their own row, or takes back their last card, until Rox is called; "
         "a game has five rounds.", project=True),
    # Nummix
    Rule("nummix.size", "Construct size",
         "Every line of touching tiles has at least three tiles; no tile stands alone."),
    Rule("nummix.run", "Runs",
         "A run is one colour rising by one left to right or top to bottom; after 17 "
         "comes 1."),
    Rule("nummix.direction", "Runs rise", "A falling line such as 5-4-3 is not a run."),
    Rule("nummix.group", "Groups", "A group is 3 or 4 tiles of one number, all colours "
         "different."),
    Rule("nummix.joker", "Jokers",
         "A joker stands for any number in one of its two colours, the same value in every "
         "line it belongs to."),
    Rule("nummix.kept", "Table tiles stay", "Every tile that was on the table is still on "
         "the table after the turn."),
    Rule("nummix.joker_pass", "A drawn joker moves on",
         "A joker drawn must be laid or passed on during your next turn."),
    Rule("nummix.first_play", "Opening the table", "The first play on an empty table is "
         "one run or group of at least three tiles.", project=True),
    Rule("nummix.rack", "Tiles come from the rack", "Tiles added to the table must come "
         "from the player's rack.", project=True),
    Rule("nummix.tiles", "The tile set", "There are two of each colour and number 1-17 "
         "and one joker per colour pair.", project=True),
    Rule("nummix.turn", "Whose turn", "Players take turns in seat order; a player who is "
         "done, or a game that is over, plays no more.", project=True),
    # Cat in the Box
    Rule("catbox.declare", "Declaring a colour",
         "A played card is declared in a colour whose cell for that number is empty and "
         "whose X on your board is still covered."),
    Rule("catbox.occupied", "Cell taken", "The research board cell for that colour and "
         "number already holds a token."),
    Rule("catbox.barred", "Colour barred", "You did not follow that colour earlier this "
         "round, so you may not declare it any more."),
    Rule("catbox.lead_red", "Leading red",
         "The first card of a trick may be red only once red has been played or no other "
         "colour is possible."),
    Rule("catbox.paradox", "Paradox",
         "A player who cannot declare any card in hand causes a paradox and the round ends."),
    Rule("catbox.must_play", "Play if you can",
         "A player who can declare a card legally must play one."),
    Rule("catbox.card", "Cards and turns", "Each player plays a card they hold, in turn "
         "order from the trick's leader.", project=True),
    Rule("catbox.prediction", "Predictions", "Each player predicts once, in turn from the "
         "start player, a number of tricks the player count allows (5 or 4 players: 1, 2 "
         "or 3; 3 players: 1, 3 or 4; 2 players: none).", project=True),
]

RULES: dict[str, Rule] = {r.id: r for r in _RULES}


def rule_text(rule_id: str) -> str:
    """The rule in words, for a verdict; the id itself if it is unknown."""
    rule = RULES.get(rule_id)
    return rule.text if rule else rule_id
