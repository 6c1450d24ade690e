"""The model-free 'aligned' processor (SPEC section 6): real text is split the way the
treebank tokenizes it.

Hand-made sentences check each rule of udfs/aligned.py (they are the worked examples of
docs/definitions.md); the four shared test treebanks check, over every sentence and through a
real warehouse build, that the reference's own text scores 1.0, that whitespace and Unicode
normalization change nothing, and that shuffled or partly dropped text scores what the same
words already in token form score with a straightforward Python version of the old processor.
"""

import random
import unicodedata
from collections import defaultdict

import duckdb
import pytest
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu

from srlens.build import build
from srlens.loaders.conllu_reader import read_conllu
from srlens.loaders.load import load_outputs, load_treebank
from srlens.udfs.aligned import Sentence, Vocabulary, _align, _chunks, _plain_words, align
from tests.conftest import SHARED, require_shared
from tests.support.reference_metrics import read_analysis_trees
from tests.support.reference_scores import aligned_lemmas, dea, reference_words

SMOOTH = SmoothingFunction().method2
TREEBANKS = {
    lang: SHARED / "ud" / name / f"{name}-ud-test.conllu"
    for lang, name in (("en", "en_ewt"), ("fr", "fr_gsd"), ("de", "de_gsd"), ("ru", "ru_gsd"))
}
WHITESPACE = {"nbsp": "\u00a0", "nnbsp": "\u202f", "tab": "\t"}


def sentence(text, tokens):
    """A Sentence from 'id form' pairs written as 'id:form' ('3-4:du')."""
    ids, forms = zip(*(t.split(":", 1) for t in tokens))
    return Sentence(text, list(ids), list(forms))


def words(output, reference, vocabulary=()):
    return align(output, reference, Vocabulary(vocabulary))


FRENCH = sentence(
    "Il parle du chemin qu'entre-temps il a pris.",
    [
        "1:Il",
        "2:parle",
        "3-4:du",
        "3:de",
        "4:le",
        "5:chemin",
        "6:qu'",
        "7:entre-temps",
        "8:il",
        "9:a",
        "10:pris",
        "11:.",
    ],
)


def test_french_contraction_elision_and_attached_punctuation():
    assert words("Il parle du chemin qu'entre-temps il a pris.", FRENCH) == [
        ("Il", 1),
        ("parle", 2),
        ("de", 3),
        ("le", 4),
        ("chemin", 5),
        ("qu'", 6),
        ("entre-temps", 7),
        ("il", 8),
        ("a", 9),
        ("pris", 10),
        (".", 11),
    ]
    # Another text: chunks not in the reference text are cut by the sentence's forms.
    assert words("Il a pris du chemin.", FRENCH) == [
        ("Il", 1),
        ("a", 9),
        ("pris", 10),
        ("de", 3),
        ("le", 4),
        ("chemin", 5),
        (".", 11),
    ]


def test_english_mwt_and_case_insensitive_matching():
    ref = sentence("I don't know.", ["1:I", "2-3:don't", "2:do", "3:n't", "4:know", "5:."])
    assert words("i DON'T know.", ref) == [("i", 1), ("do", 2), ("n't", 3), ("know", 4), (".", 5)]
    # Pre-tokenized output keeps its tokens: the syntactic words match directly.
    assert words("I do n't know .", ref) == [("I", 1), ("do", 2), ("n't", 3), ("know", 4), (".", 5)]


def test_german_mwt_from_the_corpus_and_casefold():
    ref = sentence("Er geht zur Straße.", ["1:Er", "2:geht", "3-4:zur", "3:zu", "4:der", "5:Straße", "6:."])
    # 'zum' is not in the sentence: the corpus's multiword table expands it (zu dem); casefold
    # matches STRASSE with Straße, which lower() would not.
    vocabulary = [("zum", ["zu", "dem"], 29), ("Zum", ["Zu", "dem"], 3), (".", None, 900)]
    assert words("Er geht zum STRASSE.", ref, vocabulary) == [
        ("Er", 1),
        ("geht", 2),
        ("zu", 3),
        ("dem", None),
        ("STRASSE", 5),
        (".", 6),
    ]


def test_russian_quotes_and_symbols():
    ref = sentence("Он сказал: «Нет».", ["1:Он", "2:сказал", "3::", "4:«", "5:Нет", "6:»", "7:."])
    assert words("«Нет», сказал он.", ref) == [
        ("«", 4),
        ("Нет", 5),
        ("»", 6),
        (",", None),
        ("сказал", 2),
        ("он", 1),
        (".", 7),
    ]


def test_unicode_whitespace_nfd_and_a_form_with_a_space():
    ref = sentence("Il coûte 1 000 euros.", ["1:Il", "2:coûte", "3:1 000", "4:euros", "5:."])
    expected = [("Il", 1), ("coûte", 2), ("1 000", 3), ("euros", 4), (".", 5)]
    for space in (" ", "\u00a0", "\u202f", "\t", " \u2003 "):
        assert words(f"Il{space}coûte{space}1{space}000{space}euros.", ref) == expected
    assert words(unicodedata.normalize("NFD", "Il coûte 1 000 euros."), ref) == expected
    # Not at a word boundary: "21 000" is not the form "1 000".
    assert words("Il coûte 21 000 euros.", ref)[2:4] == [("21", None), ("000", None)]


def test_a_run_of_letters_is_cut_only_next_to_punctuation():
    ref = sentence("He can not go to her home.", ["1:He", "2:can", "3:not", "4:go", "5:to", "6:her", "7:home", "8:."])
    # 'together' is not 'to' + 'get' + 'her', and 'cannot' stays one (unknown) word ...
    assert words("He cannot go together.", ref) == [
        ("He", 1),
        ("cannot", None),
        ("go", 4),
        ("together", None),
        (".", 8),
    ]
    # ... while punctuation-bearing forms of the corpus still cut a chunk: did + n't.
    assert words("He didn't.", ref, [("n't", None, 50)]) == [("He", 1), ("did", None), ("n't", None), (".", 8)]


def test_ambiguous_des_reads_as_the_text_says():
    """'des' is de + les (a multiword token) or the determiner des, in one sentence."""
    ref = sentence(
        "Le prix des pommes et des poires.",
        ["1:Le", "2:prix", "3-4:des", "3:de", "4:les", "5:pommes", "6:et", "7:des", "8:poires", "9:."],
    )
    every_word = [
        ("Le", 1),
        ("prix", 2),
        ("de", 3),
        ("les", 4),
        ("pommes", 5),
        ("et", 6),
        ("des", 7),
        ("poires", 8),
        (".", 9),
    ]
    assert words("Le prix des pommes et des poires.", ref) == every_word
    # Already tokenized: 'de les' is spelled out, so 'des' is the determiner (as it always was).
    assert words("Le prix de les pommes et des poires .", ref) == every_word
    assert words("des poires et de les pommes", ref) == [
        ("des", 7),
        ("poires", 8),
        ("et", 6),
        ("de", 3),
        ("les", 4),
        ("pommes", 5),
    ]


# ---------------------------------------------------------------------------------------------
# Every sentence of the four test treebanks, through a real build.


def surface_groups(path):
    """Per sentence: its whitespace-separated groups of surface tokens, each as
    (text, syntactic word forms), from the token lines and SpaceAfter=No (not from '# text')."""
    tb = read_conllu(path)
    t = tb.tokens
    lines = defaultdict(list)
    for idx, tid, form, misc in zip(t["sent_idx"], t["id"], t["form"], t["misc"]):
        lines[idx].append((tid, form, misc))
    groups = {}
    for idx, sent_id in zip(tb.sentences["sent_idx"], tb.sentences["sent_id"]):
        words = {int(tid): form for tid, form, _ in lines[idx] if tid.isdigit()}
        out, glued, inside_until = [], False, 0
        for tid, form, misc in lines[idx]:
            if "." in tid or (tid.isdigit() and int(tid) <= inside_until):
                continue
            if "-" in tid:
                first, inside_until = map(int, tid.split("-"))
                token_words = [words[i] for i in range(first, inside_until + 1)]
            else:
                token_words = [form]
            if not glued:
                out.append(("", []))
            out[-1] = (out[-1][0] + form, out[-1][1] + token_words)
            glued = "SpaceAfter=No" in misc.split("|")
        groups[sent_id] = out
    return groups


def perturbed_runs(path):
    """sr run texts: 'shuffled' and 'dropped' surface text, and the same words in token form.

    Identical groups ('des' = de les, and 'des' the determiner) cannot be told apart in text,
    so the token form gives the k-th of them the words of the k-th in the reference."""
    runs = defaultdict(dict)
    for sent_id, groups in surface_groups(path).items():
        rng = random.Random(sent_id)
        shuffled = groups[:]
        rng.shuffle(shuffled)
        dropped = [g for g in groups if rng.random() > 0.2] or groups[:1]
        for name, chosen in (("shuffled", shuffled), ("dropped", dropped)):
            readings = defaultdict(list)
            for text, group_words in groups:
                readings[unicodedata.normalize("NFC", text).casefold()].append(group_words)
            tokens = [w for text, _ in chosen for w in readings[unicodedata.normalize("NFC", text).casefold()].pop(0)]
            runs[name][sent_id] = " ".join(text for text, _ in chosen)
            runs[f"{name}_tokens"][sent_id] = " ".join(tokens)
    return runs


def write_sr(path, texts):
    path.write_text("".join(f"# sent_id = {sent_id}\n# text = {text}\n\n" for sent_id, text in texts.items()))
    return path


@pytest.fixture(scope="module")
def treebank_warehouse(tmp_path_factory):
    require_shared()
    root = tmp_path_factory.mktemp("aligned")
    wh = root / "wh.duckdb"
    for lang, path in TREEBANKS.items():
        corpus = f"{lang}_test"
        load_treebank(wh, path, corpus)
        tb = read_conllu(path)
        texts = dict(zip(tb.sentences["sent_id"], tb.sentences["text"]))
        runs = {"gold": texts, "nfd": {s: unicodedata.normalize("NFD", t) for s, t in texts.items()}}
        runs |= {name: {s: t.replace(" ", char) for s, t in texts.items()} for name, char in WHITESPACE.items()}
        runs |= perturbed_runs(path)
        for run, run_texts in runs.items():
            load_outputs(wh, write_sr(root / f"{corpus}_{run}.sr", run_texts), corpus, "t", run, fmt="sr")
    build(wh, echo=False, processor="aligned")
    con = duckdb.connect(str(wh), read_only=True)
    yield con
    con.close()


@pytest.mark.slow
@pytest.mark.parametrize("lang", TREEBANKS)
def test_reference_text_scores_one(treebank_warehouse, lang):
    con = treebank_warehouse
    sentences = len(read_conllu(TREEBANKS[lang]).sentences["sent_id"])
    row = con.execute(
        "select sentences, dea, simple_string_accuracy_mean, bleu_mean, corpus_bleu "
        "from submission_scores where corpus = ? and run = 'gold'",
        [f"{lang}_test"],
    ).fetchone()
    assert row[:3] == (sentences, 1.0, 1.0)
    # Every output lemma sequence is the reference's, so BLEU is nltk's BLEU of the reference with
    # itself: 1.0 for every sentence of 4 words or more. nltk scores shorter ones below 1 (method 2
    # does not smooth unigrams) and counts a missing n-gram of them in corpus BLEU too, so the
    # corpus BLEU of a perfect run is below 1.0 wherever the treebank has such sentences
    # (docs/definitions.md).
    pairs = con.execute(
        "select ref_lemmas, out_lemmas from intermediate.int_scored_outputs o join submission_scores s "
        "using (submission_id) where s.corpus = ? and s.run = 'gold'",
        [f"{lang}_test"],
    ).fetchall()
    assert len(pairs) == sentences and all(ref == out for ref, out in pairs)
    refs = [ref for ref, _ in pairs]
    assert row[4] == corpus_bleu([[r] for r in refs], refs, smoothing_function=SMOOTH)
    assert row[4] == 1.0 or any(len(r) < 4 for r in refs)
    long_bleu = con.execute(
        "select min(bleu) from sentence_scores s join intermediate.int_scored_outputs o "
        "using (submission_id, sent_idx) where s.corpus = ? and s.run = 'gold' "
        "and len(o.ref_lemmas) >= 4",
        [f"{lang}_test"],
    ).fetchone()[0]
    assert long_bleu == 1.0
    # int_output_lemmas numbers the gold run's lemmas 1..m as the analysis tree numbers the reference's
    gold = (
        "select o.sent_idx, o.pos, o.lemma_lower from intermediate.int_output_lemmas o "
        "join submission_scores s using (submission_id) where s.corpus = $corpus and s.run = 'gold'"
    )
    reference = "select sent_idx, pos, lemma_lower from intermediate.int_analysis_words where corpus = $corpus"
    differ = con.execute(
        f"select count(*) from (({gold}) except all ({reference})) union all "
        f"select count(*) from (({reference}) except all ({gold}))",
        {"corpus": f"{lang}_test"},
    ).fetchall()
    assert differ == [(0,), (0,)]
    below = con.execute(
        "select count(*) from sentence_scores where corpus = ? and run = 'gold' "
        "and (simple_string_accuracy < 1 or dea < 1)",
        [f"{lang}_test"],
    ).fetchone()[0]
    assert below == 0
    unmatched = con.execute(
        "select count(*) from intermediate.int_output_words w join submission_scores s "
        "using (submission_id) where s.corpus = ? and s.run = 'gold' and w.upos is null",
        [f"{lang}_test"],
    ).fetchone()[0]
    assert unmatched == 0  # every word found its reference word


SCORES = (
    "bleu",
    "dea",
    "simple_string_accuracy",
    "generation_string_accuracy",
    "simple_tree_accuracy",
    "generation_tree_accuracy",
    "reorder_accuracy",
)


def run_scores(con, corpus, run):
    return dict(
        ((r[0],), r[1:])
        for r in con.execute(
            f"select sent_id, {', '.join(SCORES)} from sentence_scores where corpus = ? and run = ?", [corpus, run]
        ).fetchall()
    )


@pytest.mark.slow
@pytest.mark.parametrize("lang", TREEBANKS)
def test_whitespace_and_nfd_score_as_the_plain_text(treebank_warehouse, lang):
    gold = run_scores(treebank_warehouse, f"{lang}_test", "gold")
    assert len(gold) == len(read_conllu(TREEBANKS[lang]).sentences["sent_id"])
    for run in (*WHITESPACE, "nfd"):
        assert run_scores(treebank_warehouse, f"{lang}_test", run) == gold, run


@pytest.mark.slow
@pytest.mark.parametrize("lang", TREEBANKS)
def test_shuffled_and_dropped_text_score_as_the_same_words_in_token_form(treebank_warehouse, lang):
    con = treebank_warehouse
    corpus = f"{lang}_test"
    path = TREEBANKS[lang]
    trees = {t.sent_id: t for t in read_analysis_trees(path)}
    reference = reference_words(read_conllu(path))
    runs = perturbed_runs(path)
    for run in ("shuffled", "dropped"):
        text_scores = run_scores(con, corpus, run)
        assert text_scores == run_scores(con, corpus, f"{run}_tokens"), run
        # ... and that is what the pre-tokenized words score with the old processor.
        for sent_id, token_text in runs[f"{run}_tokens"].items():
            tree = trees[sent_id]
            ref = [lemma.lower() for lemma in tree.lemmas]
            out = aligned_lemmas(token_text, *reference[sent_id])
            matched, edges, _ = dea(ref, tree.heads, tree.deprels, out)
            bleu_sql, dea_sql = text_scores[(sent_id,)][:2]
            assert dea_sql == (matched / edges if edges else None), (run, sent_id)
            assert bleu_sql == sentence_bleu([ref], out, smoothing_function=SMOOTH), (run, sent_id)


def assert_built_words_are_aligned(con, corpus):
    """Every output of `corpus` the build processed has exactly the words that udfs/aligned.py's
    align gives it, sentence by sentence, with the lemma, tags and punctuation flag of the
    reference word it maps to. Returns the number of outputs checked."""
    entries = con.execute(
        "select vocabulary from intermediate.int_aligned_vocabulary where corpus = ?", [corpus]
    ).fetchone()[0]
    vocabulary = Vocabulary((e["form"], e["words"], e["n"]) for e in entries)
    sentences = {
        idx: Sentence(text, ids, forms)
        for idx, text, ids, forms in con.execute(
            "select sent_idx, text, token_ids, token_forms from intermediate.int_aligned_sentences where corpus = ?",
            [corpus],
        ).fetchall()
    }
    reference = {
        (idx, wid): (lemma, upos, feats, punct)
        for idx, wid, lemma, upos, feats, punct in con.execute(
            "select sent_idx, word_id, lemma, upos, feats, is_punct from intermediate.int_reference_words "
            "where corpus = ?",
            [corpus],
        ).fetchall()
    }
    built = defaultdict(list)
    for sub, idx, form, *analysis in con.execute(
        "select w.submission_id, w.sent_idx, w.form, w.lemma, w.upos, w.feats, w.is_punct "
        "from intermediate.int_output_words w join staging.stg_submissions s using (submission_id) "
        "where s.corpus = ? order by w.submission_id, w.sent_idx, w.word_idx",
        [corpus],
    ).fetchall():
        built[sub, idx].append((form, *analysis) if analysis[1] is not None else (form, None, None, None, None))
    outputs = con.execute(
        "select o.submission_id, o.sent_idx, o.output_text from staging.stg_outputs o "
        "join staging.stg_submissions s using (submission_id) where s.corpus = ? and not o.is_missing",
        [corpus],
    ).fetchall()
    aligned_outputs = 0
    for sub, idx, text in outputs:
        expected = []
        for form, word_id in align(text, sentences[idx], vocabulary):
            # A word without reference word (or one without upos) is compared by its form alone.
            analysis = reference[idx, word_id] if word_id else (None, None, None, None)
            expected.append((form, *analysis) if analysis[1] is not None else (form, None, None, None, None))
        assert built[sub, idx] == expected, (sub, idx, text)
        aligned_outputs += bool(expected)
    assert len(built) == aligned_outputs  # no words of an output that has none
    return len(outputs), len(sentences)


@pytest.mark.slow
@pytest.mark.parametrize("lang", TREEBANKS)
def test_build_gives_the_words_of_the_python_tokenizer(treebank_warehouse, lang):
    """The guard for any faster route through int_output_words; 9 runs per corpus put
    7 sentences in each UDF row."""
    outputs, sentences = assert_built_words_are_aligned(treebank_warehouse, f"{lang}_test")
    assert outputs == 9 * sentences  # gold, nfd, 3 whitespace variants, 4 perturbed


@pytest.mark.slow
def test_more_than_64_runs_of_a_corpus_give_the_words_of_the_python_tokenizer(tmp_path):
    """70 runs of one corpus: int_output_words gives the UDF one sentence per row and the runs in
    two groups (64 and 6), so the same sentence is prepared in two rows and outputs repeated
    across runs fall on both sides of the group boundary. The words are still align's, output by
    output."""
    require_shared()
    blocks = TREEBANKS["fr"].read_text().split("\n\n")
    path = tmp_path / "fr_head.conllu"
    path.write_text("\n\n".join(blocks[:25]) + "\n\n")  # du, des: multiword tokens
    wh = tmp_path / "wh.duckdb"
    load_treebank(wh, path, "fr_head")
    groups = surface_groups(path)
    for run in range(70):
        texts = {}
        for sent_id, sentence_groups in groups.items():
            rng = random.Random(f"{run % 9} {sent_id}")  # 9 variants: texts repeat across runs
            chosen = [text for text, _ in sentence_groups if rng.random() > 0.2] or [sentence_groups[0][0]]
            rng.shuffle(chosen)
            texts[sent_id] = " ".join(chosen) if run % 5 else " ".join(w for _, ws in sentence_groups for w in ws)
        load_outputs(wh, write_sr(tmp_path / f"run{run}.sr", texts), "fr_head", "t", f"run{run:02}", fmt="sr")
    build(wh, echo=False, processor="aligned")
    with duckdb.connect(str(wh), read_only=True) as con:
        outputs, sentences = assert_built_words_are_aligned(con, "fr_head")
    assert (outputs, sentences) == (70 * 25, 25)


@pytest.mark.slow
@pytest.mark.parametrize("lang", TREEBANKS)
def test_fast_path_gives_the_words_of_the_whole_tokenizer(treebank_warehouse, lang):
    """align's fast path (chunks that are what they are whatever the output holds) gives, on
    every output of the four treebanks and their variants, the words of the whole tokenizer
    (cutting, reading multiword tokens); and it is the path most outputs take."""
    con = treebank_warehouse
    corpus = f"{lang}_test"
    entries = con.execute(
        "select vocabulary from intermediate.int_aligned_vocabulary where corpus = ?", [corpus]
    ).fetchone()[0]
    vocabulary = Vocabulary((e["form"], e["words"], e["n"]) for e in entries)
    sentences = {
        idx: Sentence(text, ids, forms)
        for idx, text, ids, forms in con.execute(
            "select sent_idx, text, token_ids, token_forms from intermediate.int_aligned_sentences where corpus = ?",
            [corpus],
        ).fetchall()
    }
    outputs = con.execute(
        "select s.run, o.sent_idx, o.output_text from staging.stg_outputs o "
        "join staging.stg_submissions s using (submission_id) where s.corpus = ? "
        "and not o.is_missing",
        [corpus],
    ).fetchall()
    fast = defaultdict(int)
    for run, idx, text in outputs:
        assert _align(text, sentences[idx], vocabulary) == _align(text, sentences[idx], vocabulary, fast=False), (
            run,
            idx,
            text,
        )
        fast[run] += _plain_words(*_chunks(text), sentences[idx], vocabulary) is not None
    per_run = len(sentences)
    # Pre-tokenized output and the reference's own text nearly always take the fast path.
    assert min(fast["gold"], fast["shuffled_tokens"]) > 0.9 * per_run, dict(fast)
