"""The CHAT reader: fixtures for each rule, and every real transcript in ../shared/data/chat."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from povstim.sources import chat
from povstim.sources.clean import clean_source
from povstim.sources.normalize import CleanStats

FIXTURES = Path(__file__).parent / "fixtures" / "sources"
# Anything left of CHAT's markup in a cleaned line is a bug.
CODE_RE = re.compile(r"[\[\]<>&@()_+\x15:=%*^~{}\u2191\u2193\u2248\u21d7\u2197]|\bxxx\b|\byyy\b|\bwww\b")


@pytest.mark.parametrize(
    "tier, words, terminator",
    [
        ("I [/] I want that .", "I want that", "."),
        # Without <...> a retrace scopes one word only (CHAT manual): "the" stays.
        ("the dog [//] the cat ran .", "the the cat ran", "."),
        ("<the dog> [//] the cat ran .", "the cat ran", "."),
        ("<I want> [>] [/] I want the [///] give me that .", "I want give me that", "."),
        ("&-uh where did you go ?", "where did you go", "?"),
        ("&=laughs that's funny !", "that's funny", "!"),
        ("you &+fr find it +...", "you find it", "."),
        ("is it (be)cause you're tired +/?", "is it because you're tired", "?"),
        ("look at the doggy@c running .", "look at the doggy running", "."),
        ("a@l b@l c@l are letters .", "a b c are letters", "."),
        ("0she want her toy .", "want her toy", "."),
        ("we go (.) to the (..) park (2.5) now .", "we go to the park now", "."),
        ("ice_cream and hot+dog please .", "ice cream and hot dog please", "."),
        ("that's a ba:d idea .", "that's a bad idea", "."),
        ("gonna [: going to] eat [x 3] now .", "gonna eat now", "."),
        ("tika@u [: kitty] is nice .", "kitty is nice", "."),
        ("he said [% whisper] [+ IMP] no .", "he said no", "."),
        ('+" this is a quote .', "this is a quote", "."),
        ("where is it \x15123_456\x15 ?", "where is it", "?"),
        ("the boy , who is here , smiled .", "the boy, who is here, smiled", "."),
        ("yes↑ we ↓can .", "yes we can", "."),
        ("you done?", "you done", "?"),
        ("you coming \u21d7", "you coming", "?"),  # CA rising final intonation
    ],
)
def test_main_tier_codes_are_stripped(tier, words, terminator):
    got_words, got_term, reason = chat.clean_main_tier(tier)
    assert reason is None
    assert (got_words, got_term) == (words, terminator)


@pytest.mark.parametrize("tier", ["xxx .", "I want yyy .", "www .", "the xxx@a dog ."])
def test_untranscribed_material_drops_the_utterance(tier):
    assert chat.clean_main_tier(tier)[2] == "untranscribed"


def _clean_file(tmp_path, name, **spec):
    out, stats = tmp_path / "out.txt", tmp_path / "out.stats.json"
    result = clean_source("c", {"kind": "local", "format": "chat", "path": str(FIXTURES / name), **spec}, out, stats)
    return out.read_text().splitlines(), result


def test_fixture_keeps_adults_drops_children_and_reports_malformed(tmp_path):
    lines, stats = _clean_file(tmp_path, "mini.cha")
    assert lines == [
        "Do you want another cookie?",
        "The cat is sleeping on the big red couch.",  # tab-continued line joined, bullet gone
        "Where did you put your shoes?",
        "The ball is under the table.",  # the 25-year-old brother is an adult
        "I think it is time for bed.",
        "Look at the doggy running, sweetie.",
        "We are gonna have ice cream later.",
        "Is that your ball?",
        "You wanna play?",
    ]
    # Target child and the 5-year-old sister.
    assert stats["dropped"]["child_speaker"] == 2
    assert stats["dropped"]["untranscribed"] == 1
    assert stats["dropped"]["undeclared_speaker"] == 1
    # Non-CHAT line, tier without ':', undeclared speaker: counted and shown, not fatal.
    assert stats["malformed_lines"] == 3
    whys = {m["why"] for m in stats["malformed_examples"]}
    assert "main tier without ':'" in whys and "line is not a header, tier or continuation" in whys
    assert any("GRA" in w for w in whys)
    assert stats["lines_in"] == 13
    assert stats["question_share"] == pytest.approx(4 / 9, abs=1e-4)


def test_older_chat_participants_and_continuations(tmp_path):
    lines, stats = _clean_file(tmp_path, "older.cha")
    assert lines == ["The puppy sleeps under the kitchen table every afternoon.", "Does he ever chase the red ball?"]
    assert stats["dropped"] == {"child_speaker": 1}


def test_roles_are_configurable_and_babyberta_style(tmp_path):
    lines, _ = _clean_file(tmp_path, "older.cha", drop_roles=[], style="babyberta", min_words=1)
    assert lines[-1] == "ball ball ball ."
    assert lines[0] == "the puppy sleeps under the kitchen table every afternoon ."


def test_participant_role_and_age():
    stats = CleanStats()
    tr = chat.read_transcript((FIXTURES / "mini.cha").read_text().splitlines(), "mini.cha", stats)
    assert tr.participants["CHI"].role == "Target_Child"
    assert tr.participants["SIS"].age_years == 5 and tr.participants["SIS"].is_child(chat.CHILD_ROLES)
    assert tr.participants["BRO"].age_years == 25 and not tr.participants["BRO"].is_child(chat.CHILD_ROLES)
    assert tr.languages == ["eng"]


def test_eve_counts_child_speech_and_codes_gone(shared_data, tmp_path):
    eve = shared_data / "chat" / "pylangacq" / "eve.cha"
    raw = eve.read_text(encoding="utf-8").splitlines()
    main_tiers = [line for line in raw if line.startswith("*")]
    child_tiers = [line for line in main_tiers if line.startswith("*CHI:")]
    assert (len(main_tiers), len(child_tiers)) == (1588, 741)
    lines, stats = _clean_file(tmp_path, str(eve))
    assert stats["lines_in"] == 1588
    assert stats["dropped"]["child_speaker"] == 741
    assert stats["malformed_lines"] == 0
    # Of the 847 adult utterances, the 11 with xxx/yyy/www (grep count) and those
    # under 3 words go; every drop has a reason.
    untranscribed = [t for t in main_tiers if not t.startswith("*CHI:") and re.search(r"\b(xxx|yyy|www)\b", t)]
    assert stats["dropped"]["untranscribed"] == len(untranscribed) == 11
    assert stats["lines_out"] + stats["dropped_total"] == 1588
    assert stats["lines_out"] == len(lines) == 553
    assert stats["dropped"]["under_3_words"] == 282
    assert lines[:4] == [
        "You more cookies?",  # '&=0v' gone
        "How about another graham cracker?",  # compounds split
        "Would that do just as well?",
        "Here you go.",
    ]
    bad = [line for line in lines if CODE_RE.search(line)]
    assert bad == []
    # Eve's own words never come through: utterances only she says are absent.
    assert "More cookie." not in lines and "Eve more cookie." not in lines


def test_every_shared_chat_file_parses(shared_data, tmp_path):
    files = sorted((shared_data / "chat").rglob("*.cha"))
    assert len(files) >= 280
    total_in = total_malformed = 0
    for path in files:
        stats = CleanStats()
        tr = chat.read_transcript(path.read_text(encoding="utf-8", errors="replace").splitlines(), str(path), stats)
        utts = list(chat.adult_utterances(tr, stats))
        total_in += stats.lines_in
        total_malformed += stats.malformed
        for words, terminator in utts:
            assert terminator in ".?!"
            # The chatter reference files exercise CA and phonology notation on purpose;
            # the English corpora must come out clean.
            if "talkbank_chatter_reference" not in str(path):
                assert not CODE_RE.search(words), (path, words)
    assert total_in > 30000


def test_whole_chat_folder_through_clean(shared_data, tmp_path):
    lines, stats = _clean_file(
        tmp_path, str(shared_data / "chat"), include=["pylangacq/*.cha", "aadah_childes/*.cha"], languages=["eng"]
    )
    assert stats["files"] == 168
    assert stats["lines_out"] == len(lines) > 10000
    assert all(line[0].isupper() or not line[0].isalpha() for line in lines)
    assert all(line[-1] in ".?!" and len(line.split()) >= 3 for line in lines)
    assert not [line for line in lines if CODE_RE.search(line)]


def test_age_order_and_max_age_for_transcripts(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name, age, words in [("a.cha", "4;02.", "the oldest child hears this"), ("b.cha", "1;06.10", "the baby hears this"),
                             ("c.cha", "2;00.", "the toddler hears this"), ("d.cha", "", "nobody knows the age")]:
        (folder / name).write_text(
            "@Begin\n@Participants:\tCHI Target_Child, MOT Mother\n"
            f"@ID:\teng|T|CHI|{age}||||Target_Child|||\n@ID:\teng|T|MOT|||||Mother|||\n*MOT:\t{words} .\n@End\n"
        )
    assert chat.age_in_days("1;06.10") == pytest.approx(365.25 + 6 * 30.4375 + 10)
    lines, ordered = _clean_file(tmp_path, str(folder), age_order=True)
    assert lines == ["The baby hears this.", "The toddler hears this.", "The oldest child hears this.",
                     "Nobody knows the age."]
    # The statistics record the order and its ages (days, by hand: 1;06.10 and 4;02.), one unknown
    rec = ordered["age_order"]
    assert rec["applied"] is True and rec["by"] == "the target child's age in days (@ID)"
    assert rec["youngest"] == pytest.approx(365.25 + 6 * 30.4375 + 10)
    assert rec["oldest"] == pytest.approx(4 * 365.25 + 2 * 30.4375) and rec["without_age"] == 1
    lines, stats = _clean_file(tmp_path, str(folder), max_age_days=1000)
    assert lines == ["The baby hears this.", "The toddler hears this.", "Nobody knows the age."]
    assert stats["dropped"]["child_too_old"] == 1


def test_bom_and_crlf_are_not_malformed(tmp_path):
    path = tmp_path / "win.cha"
    text = (FIXTURES / "older.cha").read_text().replace("\n", "\r\n")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    lines, stats = _clean_file(tmp_path, str(path))
    assert stats["malformed_lines"] == 0
    assert lines == ["The puppy sleeps under the kitchen table every afternoon.", "Does he ever chase the red ball?"]


def test_header_without_colon_is_read_counted_and_warned_with_file_and_line(tmp_path, caplog):
    # '@Languages eng' once dropped the whole transcript as another language's, silently.
    lines, stats = _clean_file(tmp_path, "colonless_header.cha", languages=["eng"])
    assert lines == ["Where did the little dog go?", "The dog is under the table."]
    assert "other_language_transcript" not in stats["dropped"] and "dropped_transcripts" not in stats
    where = {m["where"].rsplit("/", 1)[-1]: m["why"] for m in stats["malformed_examples"]}
    assert where == {
        "colonless_header.cha:3": "header @Languages without ':'; read as '@Languages:\\teng'",
        "colonless_header.cha:7": "header without ':'; skipped",
        "colonless_header.cha:9": "dependent tier without ':'; skipped",
        "colonless_header.cha:13": "line after @End (line 12); skipped",
    }
    assert stats["malformed_lines"] == 4
    assert any("colonless_header.cha:3" in r.getMessage() and r.levelname == "WARNING" for r in caplog.records)
    # The tier after @End is not an utterance: not read, not kept.
    assert stats["lines_in"] == 3 and stats["dropped"] == {"child_speaker": 1}


def test_file_cut_mid_utterance_drops_the_cut_utterance_and_says_so(tmp_path):
    lines, stats = _clean_file(tmp_path, "cut_off.cha")
    assert lines == ["Where did the little dog go?"]
    assert stats["dropped"] == {"cut_off_utterance": 1}
    [m] = stats["malformed_examples"]
    assert m["where"].endswith("cut_off.cha:8") and "without @End" in m["why"] and "cut off" in m["why"]


def test_transcript_dropped_for_its_header_is_named(tmp_path, caplog):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in ("no_languages.cha", "mini.cha", "italian.cha"):
        (folder / name).write_text((FIXTURES / name).read_text())
    _, stats = _clean_file(tmp_path, str(folder), languages=["eng"])
    dropped = {d["file"].rsplit("/", 1)[-1]: d for d in stats["dropped_transcripts"]}
    assert set(dropped) == {"no_languages.cha", "italian.cha"}
    assert dropped["no_languages.cha"]["why"].startswith("no @Languages header")
    assert dropped["no_languages.cha"]["utterances"] == 1
    assert dropped["italian.cha"]["why"].startswith("line 3: @Languages: ita")
    assert sum(d["utterances"] for d in dropped.values()) == stats["dropped"]["other_language_transcript"]
    assert any("no_languages.cha" in r.getMessage() and r.levelname == "WARNING" for r in caplog.records)


def test_real_transcript_with_damaged_header_end_and_tail(shared_data, tmp_path):
    real = shared_data / "chat" / "aadah_childes" / "Bernstein" / "Interview" / "anne2.cha"
    text = real.read_text(encoding="utf-8")
    assert "@Languages:\teng\n" in text and text.rstrip().endswith("@End")
    intact, intact_stats = _clean_file(tmp_path, str(real), languages=["eng"])
    assert intact_stats["malformed_lines"] == 0 and len(intact) > 50

    damaged = tmp_path / "anne2.cha"
    damaged.write_text(text.replace("@Languages:\teng", "@Languages eng") + "*MOT:\tone more after the end .\n")
    lines, stats = _clean_file(tmp_path, str(damaged), languages=["eng"])
    assert lines == intact  # recovered, not dropped; the tier after @End not kept
    whys = [(m["where"], m["why"]) for m in stats["malformed_examples"]]
    n = len(text.splitlines())
    assert whys == [("anne2.cha:4", "header @Languages without ':'; read as '@Languages:\\teng'"),
                    (f"anne2.cha:{n + 1}", f"line after @End (line {n}); skipped")]

    # Cut in the middle of the last adult utterance: the file has no @End and the utterance no terminator.
    body = text[: text.rindex("\n*MOT:")]
    last = text[text.rindex("\n*MOT:"):].split("\n")[1]
    cut = tmp_path / "cut.cha"
    cut.write_text(body + "\n" + last.rsplit(" ", 2)[0] + "\n")
    lines, stats = _clean_file(tmp_path, str(cut), languages=["eng"])
    assert stats["dropped"].get("cut_off_utterance") == 1
    assert "without @End" in stats["malformed_examples"][-1]["why"]
