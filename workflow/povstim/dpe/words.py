"""Closed word lists of the DPE rules and their surface pre-tests.

The rules test these lists on parsed tokens and the pre-tests on the same
tokens before parsing (both see :func:`povstim.parse.tokenize.tokenize`
output), so a sentence a pre-test spares can never satisfy its rule's
surface condition.
"""

from __future__ import annotations

from pathlib import Path

# The word lists the declarative constructions share (constructions/words/): a DPE rule that needs one reads
# the same file, so each list has one place (the filter rule's code hash names the files the rules read).
WORD_FILES = Path(__file__).resolve().parents[1] / "constructions" / "words"


def read_word_file(name: str) -> list[str]:
    """The words of ``constructions/words/<name>`` (one a line, ``#`` comments), lowercased."""
    out = []
    for line in (WORD_FILES / name).read_text(encoding="utf-8").splitlines():
        w = line.split("#", 1)[0].strip().lower()
        if w:
            out.append(w)
    return out

# App. C: "a wh-word". Interrogative and relative uses look alike on the surface.
WH_WORDS = frozenset(
    "who whom whose what which where when why how whoever whomever whatever whichever wherever whenever".split()
)

# App. C: "an auxiliary verb among the first two tokens". Every form an English
# auxiliary takes after our tokenizer (clitics split, `n't` split off), plus the
# unsplit negated forms in case a gold CoNLL-U keeps them whole.
AUX_FORMS = frozenset(
    """
    be am is are was were been being 's 're 'm ai
    have has had having 've 'd
    do does did
    will would 'll shall should can could may might must ca wo sha ought
    isn't aren't wasn't weren't ain't haven't hasn't hadn't don't doesn't didn't
    won't wouldn't shan't shouldn't can't couldn't mightn't mustn't needn't
    """.split()
)

REFLEXIVES = frozenset(
    "myself yourself himself herself itself oneself ourselves yourselves themselves themself thyself".split()
)

# Pronouns that can stand for an animate antecedent (strict binding). `it`,
# demonstratives and wh-words are left out: they cannot antecede himself/herself/
# themselves for a person, and the strict rule counts *animate* noun phrases.
ANIMATE_PRONOUNS = frozenset(
    "i me my mine you your yours he him his she her hers we us our ours they them their theirs one".split()
)

# Animate common nouns (people, kin, roles, animals) for the strict binding rule.
# Extend per corpus with the config key filter.animate_nouns.
ANIMATE_NOUNS = frozenset(
    """
    person people man men woman women boy boys girl girls child children kid kids baby babies
    lady ladies gentleman gentlemen guy guys friend friends neighbour neighbor stranger somebody someone
    anybody anyone everybody everyone nobody human adult grownup toddler infant teenager
    mother mom mommy mum mummy mama ma father dad daddy papa pa parent sister brother sibling
    son daughter grandma grandmother granny nana grandpa grandfather grandparent aunt auntie uncle
    cousin nephew niece wife husband family twin bride groom
    teacher doctor nurse farmer baker cook chef king queen prince princess knight soldier pilot
    driver police policeman policewoman officer fireman firefighter cowboy clown pirate wizard witch
    giant fairy monster ghost robot student pupil boss worker builder dentist vet painter singer
    dancer player artist writer author reader sailor captain fisherman hunter shepherd thief
    judge lawyer president mayor chief scientist professor coach nanny babysitter waiter waitress
    mailman postman hero heroine villain elf dwarf troll dragon
    animal animals dog dogs puppy puppies doggy doggie cat cats kitty kitten kittens bird birds
    fish horse horses pony cow cows pig pigs sheep lamb goat duck ducks duckie chicken hen rooster
    chick mouse mice rat rabbit bunny bunnies bear bears teddy lion lions tiger tigers elephant
    elephants monkey monkeys giraffe zebra frog frogs toad snake snakes turtle bee bees butterfly
    spider ant owl eagle penguin dolphin whale shark wolf wolves fox deer squirrel hamster
    kangaroo koala panda dinosaur donkey camel goose geese parrot crocodile alligator hippo
    """.split()
)
