"""Candidate words for POSH-BENCH slots beyond the project lexicon, for real corpora.

POSH samples its words from the intersection of the top-K words of WIKI-100M and
BABY-100M (~1,950 types, §3.2). The project lexicon (``povstim.lexicon``) is sized
for the synthetic corpora it generates (~300 words); with real corpora the
benchmark's word pools should be as large as the corpora allow. A template slot,
however, needs features no frequency list or parser gives: gender (binding),
humanness and animacy (who vs what), transitivity and complement selection
(islands, *wanna*), and what a verb plausibly takes as its object. So the pools are
built from *candidates* that carry those features (this module plus the project
lexicon), and the corpora decide which candidates are used
(``vocabulary: corpus``): a word must be among the top-K of every corpus AND be
used with the slot's part of speech in the parses (``words.corpus_lexicon``).

Nothing here reaches the synthetic corpora (the generator never imports this
module), so the embedded default is unaffected. Words are listed as in
``povstim.lexicon``: nouns as ``sg`` or ``sg/pl``, verbs as "base s3 past pp ger".
Every verb list was checked by hand for the property its class promises.
"""

from __future__ import annotations

from ..lexicon import Name, _nouns, _verbs

NN_M = _nouns(
    "grandfather gentleman guy nephew lord emperor duke priest monk bishop boyfriend grandson", "m", True, True
)
NN_F = _nouns(
    "grandmother lady niece empress duchess nun girlfriend granddaughter actress waitress bride", "f", True, True
)
NN_HUMAN_N = _nouns(
    "parent president officer soldier worker leader member author singer scientist lawyer judge pilot captain "
    "coach guest stranger customer citizen manager director professor engineer painter poet musician reporter "
    "hero partner owner boss cousin visitor dancer baker adult teenager toddler",
    "n", True, True,
)
NN_ANIMAL = _nouns(
    "tiger elephant wolf/wolves fox snake chicken puppy kitten bee owl whale deer/deer goat turtle dinosaur "
    "giraffe zebra penguin shark spider butterfly",
    "n", True, False,
)
# Inanimate objects, by the selectional groups words.objects_for uses.
FOOD = ("bread", "pizza", "egg", "orange", "cheese", "candy", "pie", "carrot", "potato", "cracker", "muffin")
TEXT = ("magazine", "note", "poem", "novel", "article")
LARGE = ("boat", "ship", "train", "bus", "plane", "piano", "bed", "sofa", "couch")
CLOTHES = ("coat", "shirt", "sock", "glove", "jacket", "ring", "scarf", "sweater")
CONTAINERS = ("basket", "bucket", "bowl", "jar", "cup", "bottle", "box", "bag")
PORTABLE = (
    "camera", "clock", "pen", "pencil", "brush", "plate", "knife", "fork", "hammer", "rope", "map", "flag",
    "coin", "card", "ticket", "gift", "doll", "drum", "guitar", "radio", "lamp", "pillow", "umbrella", "wallet",
    "puzzle", "kite", "balloon", "crayon", "towel", "dish", "bell", "candle", "package",
)
NN_OBJ = _nouns(" ".join(sorted(set(FOOD + TEXT + LARGE + CLOTHES + CONTAINERS + PORTABLE))), "n", False, False)

NAMES_M = tuple(Name(n, "m") for n in (
    "James Michael William Robert George Henry Charles Thomas Richard Joseph Daniel Edward Harry Frank Jim Bob "
    "Joe Adam Simon Andrew Matthew Luke Steve Tim Fred Jake Bill".split()
))
NAMES_F = tuple(Name(n, "f") for n in (
    "Elizabeth Alice Anne Margaret Catherine Helen Laura Rachel Rose Grace Julia Maria Linda Lisa Amy Ruth "
    "Ellen Sophie Hannah Nancy Betty Molly Sally Annie Jenny".split()
))

# Transitive verbs natural with a human object ("Who should the boy help without
# calling Mary?").
VB_TRANS_ANIMATE = _verbs(
    "teach teaches taught taught teaching",
    "invite invites invited invited inviting",
    "marry marries married married marrying",
    "attack attacks attacked attacked attacking",
    "protect protects protected protected protecting",
    "defend defends defended defended defending",
    "save saves saved saved saving",
    "support supports supported supported supporting",
    "trust trusts trusted trusted trusting",
    "hate hates hated hated hating",
    "kick kicks kicked kicked kicking",
    "catch catches caught caught catching",
    "feed feeds fed fed feeding",
    "pull pulls pulled pulled pulling",
    "join joins joined joined joining",
    "greet greets greeted greeted greeting",
    "forgive forgives forgave forgiven forgiving",
    "warn warns warned warned warning",
    "encourage encourages encouraged encouraged encouraging",
    "tease teases teased teased teasing",
    "touch touches touched touched touching",
    "bother bothers bothered bothered bothering",
    "ask asks asked asked asking",
    "pay pays paid paid paying",
    "hire hires hired hired hiring",
    "introduce introduces introduced introduced introducing",
    "dress dresses dressed dressed dressing",
)
# Natural with a reflexive object ("The queen thought that the boy protected himself.").
REFL = {"protect", "defend", "trust", "hate", "teach", "feed", "kick", "introduce", "dress", "touch"}
VB_REFL = tuple(v for v in VB_TRANS_ANIMATE if v.base in REFL)

# Transitive verbs taking a thing as object; restricted ones are listed in
# words.OBJECTS_OF (cook -> food, wear -> clothes, fill -> containers, ...).
VB_TRANS = _verbs(
    "close closes closed closed closing",
    "cut cuts cut cut cutting",
    "clean cleans cleaned cleaned cleaning",
    "paint paints painted painted painting",
    "cook cooks cooked cooked cooking",
    "bake bakes baked baked baking",
    "use uses used used using",
    "keep keeps kept kept keeping",
    "lose loses lost lost losing",
    "move moves moved moved moving",
    "pull pulls pulled pulled pulling",
    "catch catches caught caught catching",
    "kick kicks kicked kicked kicking",
    "fill fills filled filled filling",
    "pack packs packed packed packing",
    "send sends sent sent sending",
    "steal steals stole stolen stealing",
    "wear wears wore worn wearing",
    "grab grabs grabbed grabbed grabbing",
    "choose chooses chose chosen choosing",
    "sign signs signed signed signing",
    "hide hides hid hidden hiding",
    "lift lifts lifted lifted lifting",
    "get gets got gotten getting",
    "wash washes washed washed washing",
)
# After "wanna" with a thing as object ("When does the boy wanna cook the egg?").
VB_WANNA_TRANS = tuple(v for v in VB_TRANS if v.base in {
    "cook", "bake", "paint", "wear", "use", "keep", "cut", "wash", "clean", "catch", "kick", "get", "send",
})
# Intransitive uses of these are fine in the question-formation templates
# ("Can the boy who will see the dog arrive?").
VB_INTRANS = _verbs(
    "arrive arrives arrived arrived arriving",
    "sneeze sneezes sneezed sneezed sneezing",
    "cough coughs coughed coughed coughing",
    "yawn yawns yawned yawned yawning",
    "giggle giggles giggled giggled giggling",
    "nap naps napped napped napping",
    "snore snores snored snored snoring",
    "shout shouts shouted shouted shouting",
    "rest rests rested rested resting",
)
# Strictly intransitive (no object, no quotative or cognate use that reads as one):
# safe in the wanna template's bad member.
VB_INTRANS_STRICT = tuple(v for v in VB_INTRANS if v.base in {
    "arrive", "sneeze", "cough", "yawn", "giggle", "nap", "snore",
})
# Verbs with a that-clause complement (binding templates: "The girl realized that ...").
VB_STATE = _verbs(
    "feel feels felt felt feeling",
    "guess guesses guessed guessed guessing",
    "suppose supposes supposed supposed supposing",
    "realize realizes realized realized realizing",
    "learn learns learned learned learning",
    "discover discovers discovered discovered discovering",
    "understand understands understood understood understanding",
    "agree agrees agreed agreed agreeing",
    "admit admits admitted admitted admitting",
    "explain explains explained explained explaining",
    "announce announces announced announced announcing",
    "expect expects expected expected expecting",
    "pretend pretends pretended pretended pretending",
    "dream dreams dreamed dreamed dreaming",
    "forget forgets forgot forgotten forgetting",
    "hear hears heard heard hearing",
)
# Declarative AND interrogative complements ("What did she learn he bought?" /
# "What did she learn who bought?"): the wh-island templates' embedding verbs.
VB_WH_EMBED = tuple(v for v in VB_STATE if v.base in {"learn", "discover", "forget", "hear"})
# Object + gerund ("The boy felt himself falling.").
VB_PERCEP = _verbs("feel feels felt felt feeling")

CLASSES = {
    "nn_m": NN_M, "nn_f": NN_F, "nn_human_n": NN_HUMAN_N, "nn_animal": NN_ANIMAL, "nn_obj": NN_OBJ,
    "names_m": NAMES_M, "names_f": NAMES_F,
    "vb_trans_animate": VB_TRANS_ANIMATE, "vb_refl": VB_REFL, "vb_trans": VB_TRANS,
    "vb_intrans_animate": VB_INTRANS, "vb_intrans_strict": VB_INTRANS_STRICT, "vb_state": VB_STATE,
    "vb_wh_embed": VB_WH_EMBED, "vb_percep": VB_PERCEP, "vb_wanna_trans": VB_WANNA_TRANS,
}
