#!/usr/bin/env python
"""Two small synthetic German CSVs standing in for a user's own data (docs/own-data.md, "Your own language").

    python scripts/german_example_csvs.py [OUT_DIR]        # default: data/german-example

writes ``OUT_DIR/cds_de.csv`` (child-directed speech in the shape of a childes-db export: columns ``text``
and ``speaker_role``, with the child's own lines to be dropped) and ``OUT_DIR/wiki_de.csv`` (encyclopedic
sentences, column ``text``), the two files ``configs/german-example.yaml`` reads.

This is **synthetic stand-in data**, not a corpus: a few hundred German words written for povstim and
templates that combine them (articles, adjectives and nouns declined by gender, case and number; verbs
agreeing with their subjects), drawn with a fixed seed, so the files are byte-identical on every run.
Place and person names are invented and the "facts" of the encyclopedic side are random. Nothing is taken
from CHILDES, Wikipedia, CLAMS/FIT-CLAMS (the test suite) or ../shared/data. It exists so that the German
template runs end to end where no German corpus is at hand; models trained on it say nothing about German.
"""

from __future__ import annotations

import argparse
import csv
import io
import random
from pathlib import Path

SEED = 53            # any fixed seed: the CSVs must be the same on every run
CDS_ROWS = 3000      # ~12k words of adult speech after the child's lines are dropped
WIKI_ROWS = 1300     # ~13k words

# ---------------------------------------------------------------- declension
# (singular, gender m/f/n, plural or None)
ARTICLES = {  # definite, indefinite (ein-words: dein/mein/kein follow "ein" with their stem)
    "def": {"nom": {"m": "der", "f": "die", "n": "das", "pl": "die"},
            "acc": {"m": "den", "f": "die", "n": "das", "pl": "die"},
            "dat": {"m": "dem", "f": "der", "n": "dem", "pl": "den"}},
    "ein": {"nom": {"m": "", "f": "e", "n": "", "pl": "e"},
            "acc": {"m": "en", "f": "e", "n": "", "pl": "e"},
            "dat": {"m": "em", "f": "er", "n": "em", "pl": "en"}},
}
# attributive adjective endings after a definite article, after an ein-word, and with no article
ADJ_END = {
    "def": {"nom": {"m": "e", "f": "e", "n": "e", "pl": "en"},
            "acc": {"m": "en", "f": "e", "n": "e", "pl": "en"},
            "dat": {"m": "en", "f": "en", "n": "en", "pl": "en"}},
    "ein": {"nom": {"m": "er", "f": "e", "n": "es", "pl": "en"},
            "acc": {"m": "en", "f": "e", "n": "es", "pl": "en"},
            "dat": {"m": "en", "f": "en", "n": "en", "pl": "en"}},
    "none": {"nom": {"pl": "e"}, "acc": {"pl": "e"}, "dat": {"pl": "en"}},
}


class Noun:
    def __init__(self, sg: str, gender: str, pl: str | None = None):
        self.sg, self.gender, self.pl = sg, gender, pl

    def form(self, case: str, plural: bool) -> str:
        if not plural:
            return self.sg
        if case == "dat" and not self.pl.endswith(("n", "s")):
            return self.pl + "n"  # dative plural -n: den Bällen, den Autos
        return self.pl


def np(noun: Noun, case: str = "nom", det: str = "def", plural: bool = False, adj: str | None = None,
       stem: str = "ein") -> str:
    """A declined noun phrase: det 'def' (der), 'ein' (ein/dein/mein/kein: ``stem``) or 'none' (plural only)."""
    g = "pl" if plural else noun.gender
    if det == "def":
        words = [ARTICLES["def"][case][g]]
    elif det == "ein":
        words = [stem + ARTICLES["ein"][case][g]]
    else:
        words = []
    if adj:
        words.append(adj + ADJ_END[det][case][g])
    words.append(noun.form(case, plural))
    return " ".join(words)


def contract(text: str) -> str:
    """German's obligatory preposition + article contractions."""
    for full, short in (("in dem ", "im "), ("an dem ", "am "), ("in das ", "ins "), ("zu dem ", "zum "),
                        ("zu der ", "zur "), ("von dem ", "vom "), ("bei dem ", "beim ")):
        text = text.replace(" " + full, " " + short)
        if text.startswith(full.capitalize()):
            text = short.capitalize() + text[len(full):]
    return text


def cap(text: str) -> str:
    return text[0].upper() + text[1:]


# ---------------------------------------------------------------- child-directed speech
TOYS = [Noun(*x) for x in [
    ("Ball", "m", "Bälle"), ("Auto", "n", "Autos"), ("Buch", "n", "Bücher"), ("Teddy", "m", "Teddys"),
    ("Puppe", "f", "Puppen"), ("Bagger", "m", "Bagger"), ("Löffel", "m", "Löffel"), ("Becher", "m", "Becher"),
    ("Schuh", "m", "Schuhe"), ("Mütze", "f", "Mützen"), ("Jacke", "f", "Jacken"), ("Turm", "m", "Türme"),
    ("Zug", "m", "Züge"), ("Stein", "m", "Steine"), ("Eimer", "m", "Eimer"), ("Schaufel", "f", "Schaufeln"),
    ("Flasche", "f", "Flaschen"), ("Boot", "n", "Boote"), ("Traktor", "m", "Traktoren"), ("Klotz", "m", "Klötze"),
    ("Socke", "f", "Socken"), ("Kiste", "f", "Kisten"), ("Trommel", "f", "Trommeln"), ("Schnuller", "m", "Schnuller"),
]]
FOOD = [Noun(*x) for x in [
    ("Apfel", "m", "Äpfel"), ("Banane", "f", "Bananen"), ("Keks", "m", "Kekse"), ("Brot", "n", "Brote"),
    ("Birne", "f", "Birnen"), ("Joghurt", "m", "Joghurts"), ("Möhre", "f", "Möhren"), ("Ei", "n", "Eier"),
]]
# (noun, 3sg verbs, 3pl verbs, sound)
ANIMALS = [(Noun(*a), s) for a, s in [
    (("Hund", "m", "Hunde"), "wau wau"), (("Katze", "f", "Katzen"), "miau"), (("Kuh", "f", "Kühe"), "muh"),
    (("Ente", "f", "Enten"), "quak quak"), (("Schaf", "n", "Schafe"), "mäh"), (("Vogel", "m", "Vögel"), "piep piep"),
    (("Schwein", "n", "Schweine"), "grunz"), (("Pferd", "n", "Pferde"), "hü"), (("Frosch", "m", "Frösche"), "quak"),
    (("Maus", "f", "Mäuse"), "piep"), (("Hahn", "m", "Hähne"), "kikeriki"), (("Ziege", "f", "Ziegen"), "meck meck"),
]]
ANIMAL_VERBS = [("schläft", "schlafen"), ("läuft weg", "laufen weg"), ("frisst", "fressen"), ("springt", "springen"),
                ("spielt", "spielen"), ("rennt", "rennen"), ("sitzt da", "sitzen da"), ("hat Hunger", "haben Hunger"),
                ("ist müde", "sind müde"), ("kommt", "kommen"), ("versteckt sich", "verstecken sich"),
                ("trinkt Wasser", "trinken Wasser")]
PLACES = [Noun(*x) for x in [("Tisch", "m"), ("Stuhl", "m"), ("Bett", "n"), ("Sofa", "n"), ("Kiste", "f"),
                             ("Decke", "f"), ("Schrank", "m"), ("Korb", "m")]]
PREP_DAT = ["auf", "unter", "neben", "hinter"]
CDS_ADJ = ["groß", "klein", "rot", "blau", "gelb", "grün", "lieb", "schön", "neu", "weich", "bunt", "schwer"]
PRED_ADJ = ["heiß", "kalt", "nass", "schmutzig", "kaputt", "lecker", "weich", "groß", "klein", "schwer", "schön"]
PEOPLE = [Noun("Mama", "f"), Noun("Papa", "m"), Noun("Oma", "f"), Noun("Opa", "m")]
NAMES = ["Lena", "Max", "Emma", "Jonas", "Mia", "Paul", "Lea", "Ben", "Hannah", "Felix"]
ACTIVITIES = ["gehen jetzt raus", "spielen noch ein bisschen", "essen jetzt", "gehen baden", "räumen auf",
              "bauen einen Turm", "lesen ein Buch", "gehen schlafen", "ziehen die Schuhe an", "singen ein Lied",
              "malen ein Bild", "gehen zur Oma", "waschen die Hände", "machen Pause"]
FIXED_CDS = ["Das hast du toll gemacht.", "Ja, genau.", "Nein, das nicht.", "Komm mal her.", "Prima!",
             "Gut so.", "Fertig!", "Noch mal?", "Vorsicht!", "Oh je.", "Danke schön.", "Bitte schön.",
             "Alles weg.", "Jetzt du.", "Ich helfe dir.", "Zeig mal.", "Was ist das?", "Wer ist das?",
             "Hoppla!", "Ganz vorsichtig.", "Nicht in den Mund stecken.", "Soll ich dir helfen?",
             "Bist du müde?", "Hast du Hunger?", "Was willst du?", "Noch ein bisschen?", "So ist es gut.",
             "Schläfst du schon?", "Warte mal.", "Wo willst du hin?", "Jetzt ist Schluss.", "Auf geht's!"]
COUNT = ["zwei", "drei", "vier", "fünf"]
# the child's own lines (the childes-db export keeps them; the config's drop_speakers removes them)
CHILD = ["ball da", "auch haben", "nein", "mama", "da", "wauwau", "mehr", "auto weg", "xxx", "ich auch",
         "nochmal", "papa kommt", "heiß", "das da", "meins", "ja", "auch", "haben", "xxx da",
         "ich auch haben", "da ist ball", "mama auch essen", "nein meins da", "hund macht wauwau"]


def cds_utterance(r: random.Random) -> str:
    toy, food = r.choice(TOYS), r.choice(FOOD)
    animal, sound = r.choice(ANIMALS)
    thing = r.choice([toy, toy, food])
    k = r.randrange(24)
    if k == 0:
        s = f"{r.choice(['Schau', 'Guck'])} mal, {np(thing, det='ein')}!"
    elif k == 1:
        s = r.choice([f"Wo ist {np(thing)}?", f"Wo ist denn {np(thing, det='ein', stem='dein')}?",
                      f"Wo sind {np(toy, plural=True)}?"]) if toy.pl else f"Wo ist {np(thing)}?"
    elif k == 2:
        s = r.choice([f"Da ist {np(thing)}.", f"Da sind {np(toy, plural=True)} ja."])
    elif k == 3:
        s = r.choice([f"Willst du {np(thing, 'acc')}?", f"Möchtest du noch {np(food, 'acc', 'ein')}?",
                      f"Magst du {np(food, 'acc', plural=True)}?"])
    elif k == 4:
        s = r.choice([f"Gib mir bitte {np(thing, 'acc')}.", f"Gibst du mir mal {np(thing, 'acc')}?"])
    elif k == 5:
        adj = r.choice(PRED_ADJ)
        s = r.choice([f"{cap(np(thing))} ist aber {adj}.", f"Ist {np(thing)} {adj}?",
                      f"{cap(np(toy, plural=True))} sind {adj}."])
    elif k == 6:
        v3sg, v3pl = r.choice(ANIMAL_VERBS)
        s = r.choice([f"{cap(np(animal))} {v3sg}.", f"{cap(np(animal, plural=True))} {v3pl}.",
                      f"Guck mal, {np(animal)} {v3sg}!"])
    elif k == 7:
        s = r.choice([f"Wie macht {np(animal)}?", f"{cap(np(animal))} macht {sound}."])
    elif k == 8:
        adj = r.choice(CDS_ADJ)
        s = r.choice([f"Das ist {np(thing, det='ein', adj=adj)}.", f"Das sind {np(toy, det='none', plural=True, adj=adj)}.",
                      f"Guck mal, {np(animal, det='ein', adj=adj)}!"])
    elif k == 9:
        s = r.choice([f"Hast du {np(thing, 'acc')} gesehen?", f"Hast du {np(thing, 'acc')} schon gefunden?",
                      f"Wir suchen {np(thing, 'acc', 'ein', stem='dein')}."])
    elif k == 10:
        s = r.choice(FIXED_CDS)
    elif k == 11:
        s = f"Komm, wir {r.choice(ACTIVITIES)}."
    elif k == 12:
        place = r.choice(PLACES)
        s = r.choice([f"{cap(np(thing))} liegt {r.choice(PREP_DAT)} {np(place, 'dat')}.",
                      f"Leg {np(thing, 'acc')} {r.choice(PREP_DAT)} {np(place, 'acc')}.",
                      f"Ist {np(thing)} {r.choice(PREP_DAT)} {np(place, 'dat')}?",
                      f"{cap(np(animal))} sitzt {r.choice(PREP_DAT)} {np(place, 'dat')}."])
    elif k == 13:
        s = f"{r.choice(NAMES)}, willst du {np(thing, 'acc')} haben?"
    elif k == 14:
        person = r.choice(PEOPLE)
        s = r.choice([f"Zeig {np(person, 'dat')} mal {np(thing, 'acc', 'ein', stem='dein')}.",
                      f"Wem gehört {np(thing)}?", f"{cap(np(thing))} gehört {np(person, 'dat')}.",
                      f"Bring das mal {np(person, 'dat')}."])
    elif k == 15:
        s = r.choice([f"Was macht {np(animal)} da?", f"Was macht {np(animal)} denn?", f"Wo wohnt {np(animal)}?"])
    elif k == 16:
        other = r.choice(TOYS)
        s = r.choice([f"Ist das {np(thing, det='ein')}?", f"Nein, das ist {np(other, det='ein')}.",
                      f"Das ist {np(thing, det='ein', stem='kein')}, das ist {np(other, det='ein')}."])
    elif k == 17:
        s = r.choice([f"{cap(np(animal))} will {np(food, 'acc')} haben.", f"{cap(np(animal))} hat Hunger.",
                      f"Möchte {np(animal)} auch {np(food, 'acc', 'ein')}?"])
    elif k == 18:
        n = r.choice(COUNT)
        s = r.choice([f"Wie viele {np(toy, det='none', plural=True)} siehst du?",
                      f"Eins, zwei, {n} {np(animal, det='none', plural=True)}!", f"Da sind {n} {np(toy, det='none', plural=True)}."])
    elif k == 19:
        s = r.choice([f"Mach {np(thing, 'acc', 'ein', stem='dein')} nicht kaputt.", f"Mach mal die Tür zu.",
                      f"Pass auf, {np(thing)} fällt runter!", f"Oh, {np(thing)} ist runtergefallen."])
    elif k == 20:
        person = r.choice(PEOPLE)
        s = r.choice([f"{cap(np(person))} kommt gleich.", f"Wo ist denn {np(person)}?",
                      f"Gleich kommt {np(person)} nach Hause.", f"{cap(np(person))} hat {np(thing, 'acc', 'ein')} für dich."])
    elif k == 21:
        s = r.choice([f"Ich hab {np(thing, 'acc', 'ein')} für dich.", f"Kannst du {np(thing, 'acc')} holen?",
                      f"Kannst du {np(thing, 'acc')} tragen?", f"Soll ich {np(thing, 'acc')} holen?"])
    elif k == 22:
        adj = r.choice(CDS_ADJ)
        s = r.choice([f"Möchtest du {np(toy, 'acc', adj=adj)}?", f"Nimm {np(toy, 'acc', adj=adj)}.",
                      f"Wo ist {np(toy, adj=adj)}?"])
    else:
        s = r.choice([f"Was hörst du?", f"Hörst du {np(animal, 'acc')}?", f"{cap(np(animal))} ist draußen.",
                      f"Wir gehen {np(animal, 'acc', plural=True)} füttern."])
    if r.random() < 0.08 and not s.startswith(tuple(NAMES)):  # the child addressed by name
        s = f"{r.choice(NAMES)}, {s[0].lower()}{s[1:]}"
    return contract(s)


# ---------------------------------------------------------------- encyclopedic text
PLACE_A = ["Alten", "Neu", "Stein", "Eich", "Lind", "Wald", "Rosen", "Hoch", "Ober", "Nieder", "Kirch", "Mühl",
           "Sonnen", "Hasel", "Birken", "Wester"]
PLACE_B = ["hausen", "dorf", "bach", "burg", "heim", "feld", "berg", "stadt", "au", "brück", "rode", "hagen"]
FIRST_M = ["Johann", "Friedrich", "Karl", "Heinrich", "Wilhelm", "Ludwig", "Georg", "August", "Otto", "Ernst"]
FIRST_F = ["Anna", "Maria", "Luise", "Charlotte", "Elisabeth", "Sophie", "Clara", "Margarete", "Johanna", "Helene"]
SURNAMES = ["Berger", "Hofmann", "Lindner", "Krause", "Wagner", "Vogt", "Brandt", "Keller", "Seidel", "Albrecht",
            "Winkler", "Franke", "Lorenz", "Haas", "Roth", "Kühn"]
# (masculine, feminine) professions; nominative and "als" phrases only
PROFESSIONS = [("Maler", "Malerin"), ("Dichter", "Dichterin"), ("Politiker", "Politikerin"),
               ("Chemiker", "Chemikerin"), ("Bildhauer", "Bildhauerin"), ("Historiker", "Historikerin"),
               ("Mathematiker", "Mathematikerin"), ("Schauspieler", "Schauspielerin"), ("Unternehmer", "Unternehmerin"),
               ("Lehrer", "Lehrerin"), ("Ingenieur", "Ingenieurin"), ("Musiker", "Musikerin")]
WORKS = {"Maler": "Gemälde", "Dichter": "Gedichte", "Politiker": "Reden", "Chemiker": "Aufsätze",
         "Bildhauer": "Skulpturen", "Historiker": "Bücher", "Mathematiker": "Aufsätze", "Schauspieler": "Rollen",
         "Unternehmer": "Fabriken", "Lehrer": "Lehrbücher", "Ingenieur": "Brücken", "Musiker": "Lieder"}
NATIONALITY = ["deutsch", "österreichisch", "schweizerisch", "französisch", "italienisch", "dänisch",
               "niederländisch", "polnisch", "schwedisch", "tschechisch"]
SUBJECTS = ["Medizin", "Philosophie", "Rechtswissenschaft", "Architektur", "Geschichte", "Physik", "Chemie",
            "Musik", "Mathematik", "Theologie"]
BUILDINGS = [Noun(*x) for x in [("Kirche", "f", "Kirchen"), ("Burg", "f", "Burgen"), ("Rathaus", "n", "Rathäuser"),
                                ("Schloss", "n", "Schlösser"), ("Brücke", "f", "Brücken"), ("Kloster", "n", "Klöster"),
                                ("Turm", "m", "Türme"), ("Bahnhof", "m", "Bahnhöfe"), ("Haus", "n", "Häuser")]]
STYLES = ["gotisch", "romanisch", "barock", "klassizistisch", "neugotisch", "modern"]
CENTURIES = ["zwölften", "dreizehnten", "vierzehnten", "fünfzehnten", "sechzehnten", "siebzehnten", "achtzehnten",
             "neunzehnten"]
SPECIES = [Noun(*x) for x in [("Käfer", "m", "Käfer"), ("Schnecke", "f", "Schnecken"), ("Libelle", "f", "Libellen"),
                              ("Falter", "m", "Falter"), ("Specht", "m", "Spechte"), ("Eule", "f", "Eulen"),
                              ("Kröte", "f", "Kröten"), ("Spinne", "f", "Spinnen"), ("Fledermaus", "f", "Fledermäuse"),
                              ("Salamander", "m", "Salamander")]]
HABITATS = ["Wäldern", "Feuchtgebieten", "Gebirgen", "Flusstälern", "Wiesen", "Gärten", "Mooren", "Höhlen"]
DIETS = ["Insekten", "Samen", "Früchten", "Würmern", "Blättern", "Pilzen", "kleinen Fischen", "Gräsern"]
INDUSTRIES = ["der Landwirtschaft", "dem Tourismus", "dem Weinbau", "dem Handwerk", "der Forstwirtschaft",
              "dem Bergbau", "der Fischerei", "dem Handel"]
DIRECTIONS = ["nördlich", "südlich", "östlich", "westlich", "nordöstlich", "südwestlich"]
FIXED_WIKI = ["Während des Dreißigjährigen Krieges wurde der Ort schwer beschädigt.",
              "Nach dem Zweiten Weltkrieg wuchs die Zahl der Einwohner deutlich.",
              "Die Gemeinde gehört zum Verwaltungsverband des Landkreises.",
              "Der Ort ist über eine Landstraße an das überregionale Verkehrsnetz angebunden.",
              "Das Klima ist gemäßigt und die Niederschläge sind über das Jahr verteilt.",
              "Die Art gilt in ihrem Verbreitungsgebiet als nicht gefährdet.",
              "Der Name des Ortes geht vermutlich auf eine frühere Siedlung zurück.",
              "Seit dem Mittelalter ist der Ort ein Ziel von Pilgern.",
              "Die Schule des Ortes wurde im Jahr der Gemeindereform geschlossen.",
              "Im Zuge der Gebietsreform wurden mehrere Dörfer eingemeindet."]


def place(r: random.Random) -> str:
    return r.choice(PLACE_A) + r.choice(PLACE_B)


def year(r: random.Random, lo: int = 1650, hi: int = 1990) -> int:
    return r.randint(lo, hi)


def wiki_sentence(r: random.Random) -> str:
    female = r.random() < 0.4
    prof_m, prof_f = r.choice(PROFESSIONS)
    prof = prof_f if female else prof_m
    er, sein = ("Sie", "Ihr") if female else ("Er", "Sein")
    person = f"{r.choice(FIRST_F if female else FIRST_M)} {r.choice(SURNAMES)}"
    b, sp = r.choice(BUILDINGS), r.choice(SPECIES)
    k = r.randrange(16)
    if k == 0:
        s = f"{place(r)} ist eine Gemeinde im Landkreis {place(r)}."
    elif k == 1:
        s = (f"Die Gemeinde hat {r.randint(300, 9800)} Einwohner und liegt etwa {r.randint(3, 40)} Kilometer "
             f"{r.choice(DIRECTIONS)} von {place(r)}.")
    elif k == 2:
        s = f"{place(r)} wurde im Jahr {year(r, 780, 1400)} erstmals urkundlich erwähnt."
    elif k == 3:
        s = f"{cap(np(b))} wurde im {r.choice(CENTURIES)} Jahrhundert im {r.choice(STYLES)}en Stil erbaut."
    elif k == 4:
        nat = r.choice(NATIONALITY)
        s = f"{person} war {np(Noun(prof, 'f' if female else 'm'), det='ein', adj=nat)}."
    elif k == 5:
        y = year(r, 1700, 1930)
        s = f"{er} wurde {y} in {place(r)} geboren und starb {y + r.randint(30, 85)} in {place(r)}."
    elif k == 6:
        s = (f"{er} studierte {r.choice(SUBJECTS)} an der Universität {place(r)} und arbeitete danach als "
             f"{prof} in {place(r)}.")
    elif k == 7:
        rel = "die" if female else "der"
        s = (f"{'Die' if female else 'Der'} {prof}, {rel} lange in {place(r)} lebte, schuf zahlreiche "
             f"{WORKS[prof_m]}.")
    elif k == 8:
        s = r.choice([f"{sein}e bekanntesten {WORKS[prof_m]} entstanden zwischen {year(r, 1700, 1900)} und {year(r, 1901, 1990)}.",
                      f"{sein} Nachlass befindet sich heute im Stadtarchiv von {place(r)}."])
    elif k == 9:
        s = r.choice([f"{cap(np(sp, plural=True))} leben vor allem in {r.choice(HABITATS)} und ernähren sich von "
                      f"{r.choice(DIETS)}.",
                      f"{cap(np(sp))} ist eine Art, die in {r.choice(HABITATS)} vorkommt.",
                      f"Ausgewachsene {np(sp, det='none', plural=True)} erreichen eine Länge von bis zu "
                      f"{r.randint(2, 40)} Zentimetern."])
    elif k == 10:
        s = (f"Das Unternehmen wurde {year(r, 1850, 1990)} in {place(r)} gegründet und beschäftigt heute etwa "
             f"{r.randint(40, 4000)} Mitarbeiter.")
    elif k == 11:
        s = r.choice([f"Im Jahr {year(r, 1840, 1930)} wurde die Bahnstrecke nach {place(r)} eröffnet.",
                      f"Die Bahnstrecke zwischen {place(r)} und {place(r)} wurde {year(r, 1950, 1995)} stillgelegt."])
    elif k == 12:
        s = f"Die Bevölkerung lebt überwiegend von {r.choice(INDUSTRIES)} und {r.choice(INDUSTRIES)}."
    elif k == 13:
        s = r.choice(FIXED_WIKI)
    elif k == 14:
        s = r.choice([f"{cap(np(b, plural=True))} am Marktplatz stammen aus dem {r.choice(CENTURIES)} Jahrhundert.",
                      f"{cap(np(b))} am Marktplatz stammt aus dem {r.choice(CENTURIES)} Jahrhundert.",
                      f"{cap(np(b, plural=True))} des Ortes stehen unter Denkmalschutz."])
    else:
        s = (f"Der {place(r)}er Bach entspringt {r.choice(DIRECTIONS)} von {place(r)} und mündet nach "
             f"{r.randint(4, 60)} Kilometern in die {r.choice(['Weser', 'Donau', 'Elbe', 'Mosel', 'Saale'])}.")
    return contract(s)


# ---------------------------------------------------------------- files
def _csv(header: list[str], rows: list[list[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def generate(seed: int = SEED, cds_rows: int = CDS_ROWS, wiki_rows: int = WIKI_ROWS) -> dict[str, str]:
    """The two files' text by name: deterministic in ``seed``."""
    r = random.Random(seed)
    cds = []
    for _ in range(cds_rows):
        if r.random() < 0.15:
            cds.append([r.choice(CHILD), "Target_Child"])
        else:
            cds.append([cds_utterance(r), r.choice(["Mother", "Mother", "Father", "Grandmother"])])
    wiki = [[wiki_sentence(r)] for _ in range(wiki_rows)]
    return {"cds_de.csv": _csv(["text", "speaker_role"], cds), "wiki_de.csv": _csv(["text"], wiki)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", nargs="?", default="data/german-example", type=Path)
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in generate(args.seed).items():
        (args.out_dir / name).write_text(text, encoding="utf-8")
        print(f"{args.out_dir / name}: {text.count(chr(10)) - 1} rows, {len(text.split())} words")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
