"""The model-free 'aligned' processor (SPEC section 6): output text -> reference words.

An output sentence is turned into syntactic words the way its treebank tokenizes, without a
model, and each word is mapped to a reference word of the same sentence:

1. The text is put in Unicode NFC and split at any Unicode whitespace (``str.split()``).
   Forms are compared by ``key``: NFC, then casefold (so STRASSE = Straße).
2. Chunks that together spell a form of the reference sentence with a space inside
   (``1 000``) are joined first, when they start and end at word boundaries.
3. A chunk of the reference's own text is cut where the treebank cuts it (k-th such chunk
   like the k-th in the reference). Another chunk that is a form of the sentence (a surface
   token or a syntactic word) is one piece. Any other chunk is cut into the pieces with the
   fewest pieces not taken from the sentence, then the fewest pieces (the longest matches),
   the longest first piece on a tie. A piece is a form of the sentence, a form of the corpus
   that has a punctuation character or is a multiword token, one punctuation character, or a
   run of other characters; a run of letters is cut only next to a piece with punctuation
   (did|n't, never to|get|her). "Punctuation" is Unicode P or S here. (A corpus form without
   punctuation can never beat the single run, so only those forms are passed.)
4. Pieces become syntactic words. The k-th piece with a form reads as the k-th surface token
   of the sentence with that form: a multiword token expands into the sentence's own words
   (``du`` -> de le). Multiword readings the output already spells out (its words are
   there beyond the sentence's standalone ones: pre-tokenized output) are not expanded
   again, so ``des`` reads as the determiner in ``de les ... des``. A piece beyond the
   sentence's readings that is not a word of the sentence expands as the corpus mostly
   expands it (the corpus's most frequent expansion, when the form is a multiword token in
   most of its occurrences); anything else is one word.
5. Words map to reference words by key, k-th occurrence to k-th (as before this module); an
   unmatched word has no word_id.

Most outputs skip steps 2 to 4 (_plain_words): when every chunk is one word of the sentence, a
reference chunk cut the same way wherever it occurs, or a plain unknown word, its words are known
without the cutting and reading bookkeeping (docs/definitions.md, "The fast path").

``srlens_aligned_words`` is an arrow UDF whose rows hold about 64 outputs (int_output_words_aligned: a
block of a corpus's sentences, for a group of at most 64 of its runs) with those sentences' token
lines and the corpus vocabulary: each sentence is prepared once per row, not per output, and each
vocabulary once per call.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .collector import collector_paused

__all__ = ["key", "Sentence", "Vocabulary", "align", "register"]


def key(form: str) -> str:
    """How forms are compared: NFC, casefolded (casefold may decompose, so NFC again)."""
    if form.isascii():  # the common case, and the same result: ASCII is NFC, casefold = lower
        return form.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", form).casefold())


def nfc(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def is_punctuation(char: str) -> bool:
    """Where a chunk may be cut: punctuation and symbols (`` ` `` and $ are symbols: Sk, Sc)."""
    return unicodedata.category(char)[0] in "PS"


class Sentence:
    """One reference sentence: its text and token lines (ids and forms in file order)."""

    def __init__(self, text, token_ids, token_forms):
        # Built once per sentence for every row of outputs: written for speed (locals, the
        # ASCII key inline, the rarer structures only where the sentence needs them).
        words, word_keys = [], []  # by word_id - 1
        tokens = []  # surface tokens: (form, key, indices of its words)
        readings = {}  # key of a surface token -> its readings (word indices), in order
        word_ids = {}  # key -> word ids in order: the k-th occurrence rule
        inside_until, spaced = 0, False
        for tid, form in zip(token_ids, token_forms):
            if tid.isdigit():  # a word; ids are 1..n in order (the reader checks it)
                k = form.lower() if form.isascii() and " " not in form else _spaced_key(form)
                words.append(form)
                word_keys.append(k)
                n = len(words)
                word_ids.setdefault(k, []).append(n)
                if n > inside_until:
                    reading = (n - 1,)
                else:
                    continue
            elif "-" in tid:  # a multiword token; empty nodes (8.1) are not words
                first, inside_until = map(int, tid.split("-"))
                k = _spaced_key(form)
                reading = tuple(range(first - 1, inside_until))
            else:
                continue
            tokens.append((form, k, reading))
            readings.setdefault(k, []).append(reading)
            spaced = spaced or " " in k
        self.words, self.word_keys, self.tokens = words, word_keys, tokens
        self.readings, self.word_ids = readings, word_ids
        self.first_word_ids = {k: ids[0] for k, ids in word_ids.items()}
        self.has_multiword = len(tokens) < len(words)
        self.standalone = Counter(k for _, k, reading in tokens if len(reading) == 1) if self.has_multiword else {}
        self.forms = readings.keys() | word_ids.keys()
        # Forms with whitespace inside, as their keys' parts: ('1', '000').
        self.spaced = (
            sorted({tuple(f.split(" ")) for f in self.forms if " " in f}, key=len, reverse=True) if spaced else []
        )
        self.chunks = self._reference_chunks(nfc(text or ""))
        # What align does with a chunk whatever else the output holds (its fast path, _plain_words):
        # one_word: keys of words that stay one word (not a multiword token, not a chunk of the
        # reference text that is cut or expanded); cut_chunks: reference chunks cut and expanded
        # the same way in every occurrence: key -> its pieces (start, end, None for a piece that
        # is one word, else the (forms, keys) of the words of its multiword token).
        self.one_word, self.cut_chunks = None, {}
        if not spaced:
            multiword = {k for _, k, reading in tokens if len(reading) > 1} if self.has_multiword else set()
            for k, occurrences in self.chunks.items():
                if len(occurrences) == 1 and len(occurrences[0]) == 1 and len(occurrences[0][0][2]) == 1:
                    continue  # the common case: one chunk, one token, one word
                if any(len(pieces) > 1 or len(pieces[0][2]) > 1 for pieces in occurrences):
                    multiword.add(k)
                    recipes = [
                        [
                            (
                                i,
                                j,
                                None
                                if len(reading) == 1
                                else (tuple(words[w] for w in reading), tuple(word_keys[w] for w in reading)),
                            )
                            for i, j, reading in pieces
                        ]
                        for pieces in occurrences
                    ]
                    if all(recipe == recipes[0] for recipe in recipes):
                        self.cut_chunks[k] = recipes[0]
            self.one_word = word_ids.keys() - multiword

    def _reference_chunks(self, text):
        """How the sentence's own text splits: key of each whitespace chunk -> per occurrence,
        its pieces as (start, end, reading). Empty when the text does not spell the tokens
        (then outputs are cut like any other text)."""
        chunks = defaultdict(list)
        position, pieces, keys = 0, None, []
        for form, k, reading in self.tokens:
            if not form.isascii():
                form = unicodedata.normalize("NFC", form)
            start = position
            if text.startswith(form, start):
                pass
            else:
                while start < len(text) and text[start].isspace():
                    start += 1
                if not text.startswith(form, start):
                    return {}
            if start > position or pieces is None:  # whitespace before it: a new chunk
                if pieces:
                    chunks["".join(keys)].append(pieces)
                pieces, keys, offset = [], [], 0
            pieces.append((offset, offset + len(k), reading))
            keys.append(k)
            offset += len(k)
            position = start + len(form)
        if text[position:].strip():
            return {}
        if pieces:
            chunks["".join(keys)].append(pieces)
        return chunks


def _spaced_key(form):
    """The key of a form, any whitespace inside it written as one space ('1\u00a0000' -> '1 000')."""
    k = key(form)
    return k if k.isascii() and " " not in k else " ".join(k.split())


class Vocabulary:
    """A corpus's forms that can change a segmentation, and how it expands multiword tokens.

    ``entries``: (form, words, n) rows: n surface tokens of that form, expanded into ``words``
    (a multiword token) or not (``words`` None).
    """

    def __init__(self, entries):
        self.forms = set()
        as_mwt, as_word = Counter(), Counter()
        expansions = defaultdict(Counter)
        for form, words, n in entries:
            k = key(form)
            self.forms.add(k)
            if words:
                as_mwt[k] += n
                expansions[k][tuple(words)] += n
            else:
                as_word[k] += n
        # The most frequent expansion (ties: the first in sort order), where the form is a
        # multiword token in most of its occurrences.
        self.expansions = {
            k: min(c.items(), key=lambda item: (-item[1], item[0]))[0]
            for k, c in expansions.items()
            if as_mwt[k] > as_word[k]
        }
        self._plain = {}

    def plain(self, k):
        """Whether a chunk with key k that is no form of its sentence is one word as it stands:
        it has no punctuation to cut at and the corpus does not expand it."""
        found = self._plain.get(k)
        if found is None:
            found = self._plain[k] = k not in self.expansions and not _has_punctuation(k)
        return found


_ASCII_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")  # every ASCII character of Unicode P or S


def _has_punctuation(text):
    if text.isascii():
        return _ASCII_PUNCTUATION.search(text) is not None
    return any(is_punctuation(c) for c in text)


def _join_spaced(chunks, keys, spaced):
    """Join consecutive chunks that spell a spaced form of the sentence at word boundaries."""
    for parts in spaced:
        n = len(parts)
        i = 0
        while i + n <= len(keys):
            head, tail = keys[i], keys[i + n - 1]
            if (
                head.endswith(parts[0])
                and tail.startswith(parts[-1])
                and keys[i + 1 : i + n - 1] == list(parts[1:-1])
                and (len(head) == len(parts[0]) or is_punctuation(head[-len(parts[0]) - 1]))
                and (len(tail) == len(parts[-1]) or is_punctuation(tail[len(parts[-1])]))
            ):
                chunks[i : i + n] = [" ".join(chunks[i : i + n])]
                keys[i : i + n] = [" ".join(keys[i : i + n])]
            i += 1
    return chunks, keys


def _segment(folded, sentence_forms, corpus_forms):
    """Cut points of one chunk (its key): see the module docstring, step 3."""
    n = len(folded)
    punct = [is_punctuation(c) for c in folded]
    punct_before = [0]
    for p in punct:
        punct_before.append(punct_before[-1] + p)

    def inside_word(j):  # a cut at j would split a run of letters (or digits, symbols)
        return 0 < j < n and not punct[j - 1] and not punct[j] and folded[j - 1] != " " and folded[j] != " "

    # best[i][p]: (pieces not from the sentence, pieces, end of the first piece) for folded[i:],
    # p = whether that first piece has a punctuation character (None: no such segmentation).
    best = [[None, None] for _ in range(n + 1)]
    best[n] = [(0, 0, n), None]
    for i in range(n - 1, -1, -1):
        if folded[i] == " ":  # only inside joined spaced forms: a free boundary
            rest = min(o for o in best[i + 1] if o)
            best[i] = [(rest[0], rest[1], -(i + 1)), None]
            continue
        for j in range(n, i, -1):  # longest first: a later equal cost does not replace it
            piece = folded[i:j]
            has_punct = punct_before[j] > punct_before[i]
            if piece in sentence_forms:
                other = 0
            elif piece in corpus_forms:
                other = 1
            elif j - i == 1 or (not has_punct and " " not in piece):
                other = 1  # one punctuation character, or a run without punctuation
            else:
                continue
            # A run of letters is cut only where a piece with punctuation starts or ends (n't, l').
            nexts = [best[j][1]] if inside_word(j) and not has_punct else best[j]
            for rest in nexts:
                if rest is None:
                    continue
                cost = (rest[0] + other, rest[1] + 1, j)
                if best[i][has_punct] is None or cost[:2] < best[i][has_punct][:2]:
                    best[i][has_punct] = cost
    cuts, i = [], 0
    while i < n:
        end = min((o for o in best[i] if o), key=lambda o: o[:2])[2]
        if end < 0:  # skipped space
            i = -end
            continue
        cuts.append((i, end))
        i = end
    return cuts


def _chunks(text):
    """The NFC chunks of an output text and their keys."""
    text = nfc(text)
    chunks = text.split()
    if text.isascii():  # key() of each chunk, at once
        return chunks, text.lower().split()
    # Also at once: casefold maps character by character, and NFC composes nothing across
    # whitespace; chunk by chunk should the count ever differ.
    keys = unicodedata.normalize("NFC", text.casefold()).split()
    return chunks, keys if len(keys) == len(chunks) else [key(c) for c in chunks]


def _plain_words(chunks, keys, sentence, vocabulary):
    """The forms and keys of the words when every chunk is what it is whatever its context: a
    word of the sentence in sentence.one_word, a reference chunk in sentence.cut_chunks, or a
    chunk that is no form of the sentence and plain for its corpus; and no multiword reading
    is spelled out elsewhere in the output. Steps 2 to 4 of the module docstring then give
    these words without their bookkeeping; None when some chunk needs it."""
    one_word = sentence.one_word
    if one_word is None:
        return None
    if one_word.issuperset(keys):  # the commonest case: pre-tokenized output
        return chunks, keys
    forms, word_keys, piece_keys = [], [], []
    for chunk, k in zip(chunks, keys):
        if k in one_word:
            forms.append(chunk)
            word_keys.append(k)
            piece_keys.append(k)
            continue
        recipe = sentence.cut_chunks.get(k)
        if recipe is not None:
            source = chunk if len(k) == len(chunk) else k  # casefold kept the length: cut the original
            for i, j, multiword in recipe:
                piece_keys.append(k[i:j])
                if multiword is None:
                    forms.append(source[i:j])
                    word_keys.append(k[i:j])
                else:
                    forms.extend(multiword[0])
                    word_keys.extend(multiword[1])
        elif not (k in sentence.forms or k in sentence.chunks or not vocabulary.plain(k)):
            forms.append(chunk)
            word_keys.append(k)
            piece_keys.append(k)
        else:
            return None
    if sentence.has_multiword and _spelled_out(piece_keys, sentence):
        return None
    return forms, word_keys


def _pieces(chunks, keys, sentence, vocabulary):
    """(form, key, reading) of each piece of the output, in order; the reading (indices of the
    words of a surface token) is known for pieces of the reference's own chunks, else None."""
    if sentence.spaced:
        chunks, keys = _join_spaced(chunks, keys, sentence.spaced)
    pieces, seen = [], Counter()
    for chunk, k in zip(chunks, keys):
        reference = sentence.chunks.get(k)
        if reference:  # a chunk of the reference text: cut as the treebank does, k-th to k-th
            cuts = reference[min(seen[k], len(reference) - 1)]
            seen[k] += 1
        elif k in sentence.forms:
            cuts = [(0, len(k), None)]
        else:
            cuts = [(i, j, None) for i, j in _segment(k, sentence.forms, vocabulary.forms)]
        if len(cuts) == 1:
            pieces.append((chunk, k, cuts[0][2]))
            continue
        same_length = len(k) == len(chunk)  # casefold kept the length: cut the original too
        pieces.extend((chunk[i:j] if same_length else k[i:j], k[i:j], r) for i, j, r in cuts)
    return pieces


def _spelled_out(piece_keys, sentence):
    """Multiword readings whose words the output already has beyond the sentence's standalone
    ones (pre-tokenized output: 'de les' for 'des'); these are not expanded again."""
    counts = Counter(piece_keys)
    dropped = set()
    for k in counts:
        multiword = [r for r in sentence.readings.get(k, ()) if len(r) > 1]
        if multiword:
            spelled = min(
                max(0, counts[w] - sentence.standalone[w]) for w in {sentence.word_keys[i] for i in multiword[0]}
            )
            dropped.update(multiword[:spelled])
    return dropped


def align(text, sentence, vocabulary):
    """[(form, word_id or None)] of the syntactic words of one output text."""
    return list(zip(*_align(text, sentence, vocabulary)))


def _align(text, sentence, vocabulary, fast=True):
    """align() as two lists: the forms of the words and their word ids. fast=False leaves out
    the fast path (_plain_words), which must not change the words (tests/builds/test_aligned.py)."""
    chunks, keys = _chunks(text)
    plain = _plain_words(chunks, keys, sentence, vocabulary) if fast else None
    if plain is not None:
        forms, keys = plain
    else:
        pieces = _pieces(chunks, keys, sentence, vocabulary)
        if sentence.has_multiword:
            words = _readings(pieces, sentence, vocabulary)
        else:  # every surface token of the sentence is one word
            words = [
                (form, k) if k in sentence.word_ids or k not in vocabulary.expansions else None for form, k, _ in pieces
            ]
            if None in words:
                words = _readings(pieces, sentence, vocabulary)
        forms = [form for form, _ in words]
        keys = [k for _, k in words]
    return forms, _word_ids(keys, sentence)


def _word_ids(keys, sentence):
    """The k-th occurrence of a key is the k-th reference word with that key (None: none left)."""
    word_ids = list(map(sentence.first_word_ids.get, keys))
    if len(set(keys)) == len(keys):  # every key once (most outputs): each takes its first word
        return word_ids
    seen, ids_of = {}, sentence.word_ids
    for i, k in enumerate(keys):
        occurrence = seen.get(k, 0)
        seen[k] = occurrence + 1
        if occurrence:
            ids = ids_of.get(k)
            word_ids[i] = ids[occurrence] if ids is not None and occurrence < len(ids) else None
    return word_ids


def _readings(pieces, sentence, vocabulary):
    """(form, key) of the syntactic words of the pieces: module docstring, step 4."""
    dropped = _spelled_out([k for _, k, _ in pieces], sentence) if sentence.has_multiword else set()
    claimed = {r for _, _, r in pieces if r is not None and r not in dropped}
    available = {}  # key -> the sentence's surface tokens of that key not taken yet
    words = []
    for form, k, reading in pieces:
        if reading is None or reading in dropped:
            queue = available.get(k)
            if queue is None:
                queue = available[k] = [
                    r for r in sentence.readings.get(k, ()) if r not in claimed and r not in dropped
                ]
            reading = queue.pop(0) if queue else None  # the next surface token of that key
        if reading is not None:
            if len(reading) == 1:
                words.append((form, k))
            else:  # a multiword token: the sentence's own words
                words.extend((sentence.words[i], sentence.word_keys[i]) for i in reading)
        elif k not in sentence.word_ids and k in vocabulary.expansions:
            words.extend((w, key(w)) for w in vocabulary.expansions[k])
        else:
            words.append((form, k))
    return words


# The arrow UDF: one row per block of sentences of one corpus and group of its runs.
OUTPUT_TYPE = "STRUCT(submission_id VARCHAR, sent_idx INTEGER, output_text VARCHAR)[]"
SENTENCE_TYPE = "STRUCT(sent_idx INTEGER, text VARCHAR, token_ids VARCHAR[], token_forms VARCHAR[])[]"
VOCABULARY_TYPE = "STRUCT(form VARCHAR, words VARCHAR[], n BIGINT)[]"
WORD_FIELDS = [
    ("submission_id", pa.string()),
    ("sent_idx", pa.int32()),
    ("word_idx", pa.int32()),
    ("form", pa.string()),
    ("word_id", pa.int32()),
]
WORD_TYPE = "STRUCT(submission_id VARCHAR, sent_idx INTEGER, word_idx INTEGER, form VARCHAR, word_id INTEGER)[]"


def _udf_aligned_words(outputs: pa.Array, sentences: pa.Array, vocabularies: pa.Array) -> pa.Array:
    # The objects made here hold no reference cycles. With the collector on, the many small
    # tuples and dicts make it rescan the whole (large) heap of the dbt process again and
    # again: 6 times slower on en_ewt train.
    with collector_paused():
        return _aligned_words(outputs, sentences, vocabularies)


def _aligned_words(outputs, sentences, vocabularies):
    outputs, sentences, vocabularies = (
        a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in (outputs, sentences, vocabularies)
    )
    # Columns, not rows: to_pylist of structs would make a dict per output.
    output_counts = _list_lengths(outputs)
    output_fields = _fields(outputs)
    texts = output_fields["output_text"].to_pylist()
    output_sentences = output_fields["sent_idx"].to_pylist()
    sentence_counts = _list_lengths(sentences)
    sentence_fields = _fields(sentences)
    sentence_columns = [sentence_fields[name].to_pylist() for name in ("sent_idx", "text", "token_ids", "token_forms")]
    vocabulary_counts = _list_lengths(vocabularies)
    vocabulary_items = vocabularies.flatten()

    counts, forms, word_ids, offsets = [], [], [], [0]  # counts: words of each output
    o = s = v = 0
    # (entries, Vocabulary): every row repeats its corpus's vocabulary, in whatever order the
    # corpora come; each is compared in arrow and read into Python once per call.
    prepared = []
    for n_outputs, n_sentences, n_entries in zip(output_counts, sentence_counts, vocabulary_counts):
        entries = vocabulary_items.slice(v, n_entries)
        v += n_entries
        vocabulary = next((known for seen, known in prepared if seen.equals(entries)), None)
        if vocabulary is None:
            vocabulary = Vocabulary(zip(*(entries.field(name).to_pylist() for name in ("form", "words", "n"))))
            prepared.append((entries, vocabulary))
        by_idx = {
            idx: Sentence(text, ids, token_forms)
            for idx, text, ids, token_forms in zip(*(c[s : s + n_sentences] for c in sentence_columns))
        }
        s += n_sentences
        done = {}  # (sent_idx, text) -> words: outputs repeated across runs are aligned once
        for i in range(o, o + n_outputs):
            text = texts[i]
            if not text:
                counts.append(0)
                continue
            words = done.get((output_sentences[i], text))
            if words is None:
                words = done[output_sentences[i], text] = _align(text, by_idx[output_sentences[i]], vocabulary)
            counts.append(len(words[0]))
            forms.extend(words[0])
            word_ids.extend(words[1])
        o += n_outputs
        offsets.append(len(forms))
    # Each output's submission and sentence, once per word; word_idx 1..n within each output.
    counts = np.array(counts, dtype=np.int64)
    output_index = np.repeat(np.arange(len(counts)), counts)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    columns = {
        "submission_id": output_fields["submission_id"].take(output_index),
        "sent_idx": output_fields["sent_idx"].take(output_index),
        "word_idx": pa.array(np.arange(1, len(output_index) + 1) - starts),
        "form": pa.array(forms, type=pa.string()),
        "word_id": pa.array(word_ids, type=pa.int32()),
    }
    values = pa.StructArray.from_arrays(
        [columns[name].cast(t) for name, t in WORD_FIELDS], fields=[pa.field(name, t) for name, t in WORD_FIELDS]
    )
    return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), values)


def _fields(lists):
    """The columns of a list-of-structs array's items, all rows one after the other."""
    items = lists.flatten()
    return {field.name: column for field, column in zip(items.type, items.flatten())}


def _list_lengths(lists):
    """Items of each row of a list array, 0 for a NULL row."""
    return pc.fill_null(pc.list_value_length(lists), 0).to_pylist()


def register(con: duckdb.DuckDBPyConnection) -> None:
    """``srlens_aligned_words(outputs, sentences, vocabulary)``: the words of every output of a row.

    outputs: the row's output texts; sentences: the token lines of the row's reference
    sentences (ids and forms, in file order); vocabulary: the corpus's entries (see Vocabulary).
    Returns one struct per output word, word_idx 1..n within each output, word_id NULL when
    no reference word matches.
    """
    con.create_function(
        "srlens_aligned_words",
        _udf_aligned_words,
        [OUTPUT_TYPE, SENTENCE_TYPE, VOCABULARY_TYPE],
        WORD_TYPE,
        type="arrow",
        null_handling="special",
    )  # a corpus without vocabulary entries passes NULL
